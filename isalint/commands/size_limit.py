"""The largest N a GEMM kernel's own 32-bit index arithmetic addresses, for refusing a larger ``--gemm`` up front.

The loop with the most global loads from 64-bit VGPR addresses (the loop ``fix --batch-gmem``
rewrites) is evaluated exactly (:mod:`isalint.model.affine`); every 32-bit value its addresses and
counters sign-extend or compare must stay in range for every lane, every trip and every N up to
the limit (:func:`isalint.fixes.batch_gmem.guard.index_limit`), in workgroup 0 (the other
workgroups' indices are larger, so the real limit can only be lower). Past the limit the kernel
reads and writes the wrong addresses: its time means nothing and the emulator would run a garbage
launch to its step limit. A kernel whose loads the evaluator cannot follow has no known limit.
"""
from __future__ import annotations

from types import SimpleNamespace


def index_limit(program, kernel_name: str | None = None):
    """:class:`~isalint.fixes.batch_gmem.guard.IndexLimit` of the kernel, or None when none is known."""
    from ..fixes import FixRefused
    from ..fixes.batch_gmem.guard import index_limit as bound
    from ..fixes.batch_gmem.plan import make_plan
    from ..fixes.batch_gmem.select import select_loop

    analysis = SimpleNamespace(program=program, cfg=program.cfg())
    try:
        kernel, loop, loads = select_loop(analysis, None)
        if kernel_name is not None and kernel.name != kernel_name:
            return None
        found = bound(make_plan(analysis, kernel, loop, loads))
    except (FixRefused, ArithmeticError, RecursionError, ValueError, KeyError):
        return None
    if found.cond is None or found.limit < 1:
        return None
    return found


def refusal(path: str, n: int, program, kernel_name: str | None = None) -> str | None:
    """A one-line refusal of ``--gemm n`` past the kernel's index limit (None when n is within it)."""
    found = index_limit(program, kernel_name)
    if found is None or n <= found.limit:
        return None
    return (f"{path}:{found.cond.line}: --gemm {n}: the kernel's 32-bit index arithmetic is exact only for "
            f"{found.name} <= {found.limit} (the value {found.shown}, which {found.cond.what}, leaves its range "
            "past that, in workgroup 0 already), so larger sizes address the wrong elements")
