"""``isalint fix --batch-gmem``: global loads from SGPR bases with one VGPR offset (the worklog's
kernel 7 -> kernel 8 step).

The compiler rebuilds each global-load address of the loop with a chain of VALU instructions
(``v_add``, ``v_ashrrev``, ``v_lshlrev_b64``, ``v_add_co``, ``v_add_co_ci``), from the previous
load's index. This pass computes the wave-uniform part of every address once before the loop,
with SALU, in an SGPR pair, keeps one 32-bit byte offset per group of loads in a VGPR, advanced
once per iteration, and loads with ``global_load_* vD, vOFF, s[base:base+1]``.

Steps (each proves what it needs or refuses with the line and the reason; the input is never
touched):

1. :mod:`.select` picks the loop (``--loop``, else the one with most such loads) and its global
   loads with a 64-bit VGPR address (GMEM001's pattern).
2. :mod:`.plan` evaluates each address exactly (:mod:`isalint.model.affine`) and splits it into
   a uniform base and an offset affine in the loop counters; loads with the same offset share it.
3. :mod:`.guard` proves the offsets fit the 32-bit unsigned offset of the ``saddr`` form for every
   N up to the limit (the original's own, or ``--max-n``), and that the original's arithmetic is
   exact there.
4. :mod:`.rewrite` finds the registers (SGPR/VGPR liveness once the dead address computations are
   gone) and writes the setup before the loop (:mod:`.emit_salu`, :mod:`.emit_valu`), the offset
   advances at the loop header and the new loads; ``--spread`` (:mod:`.spread`) also moves the
   loads through the loop body in small groups.
5. The register counts are rewritten and :mod:`.verify` re-reads the result: every load of the
   loop uses an SGPR base, no new wait-counter hazard, at most 106 SGPRs. The waits keep their
   meaning: the loads keep their order, and ``--spread`` moves none past a wait on ``vmcnt``.
"""
from __future__ import annotations

from .. import FixResult
from ..toolkit import highest_register
from .guard import check_sizes
from .plan import make_plan
from .rewrite import layout, render
from .select import select_loop
from .spread import plan_spread
from .verify import summary, update_counts, verify

__all__ = ["apply", "VALIDATE_SIZES"]
# the bases' strides are computed from N at run time: validated at two sizes
VALIDATE_SIZES = (256, 384)


def apply(analysis, options: dict) -> FixResult:
    options = options or {}
    kernel, loop, loads = select_loop(analysis, options.get("loop"))
    plan = make_plan(analysis, kernel, loop, loads)
    limits = check_sizes(plan, options.get("max_n"))
    out = layout(analysis, plan, limits)
    spread = plan_spread(analysis, plan, out) if options.get("spread") else None
    text = render(analysis, plan, out, _note(plan, limits, out, spread), spread)
    text = update_counts(text, analysis.program.path, _highest(analysis, "v", out) + 1, _highest(analysis, "s", out) + 1)
    new = verify(analysis, plan, text)
    return FixResult(text, summary(analysis, new, plan, limits, out, spread))


def _highest(analysis, file: str, out) -> int:
    """The highest register of ``file`` the output names: the input's, or a new one it takes."""
    top = highest_register(analysis.program, out.insert_at, file)
    if file == "v":
        return max([top] + list(out.offsets))
    return max([top] + [p + 1 for p in out.bases.values()] + [n for n in out.steps.values() if n is not None])


def _note(plan, limits, out, spread) -> str:
    n = len(plan.loads)
    pairs = sorted(set(out.bases.values()))
    offs = ", ".join(f"v{v}" for v in out.offsets)
    regs = f"s[{pairs[0]}:{pairs[-1] + 1}]" if pairs == list(range(pairs[0], pairs[-1] + 1, 2)) else \
        ", ".join(f"s[{p}:{p + 1}]" for p in pairs)
    where = f", loads spread in {len(spread.points)} groups" if spread is not None else ""
    return (f"isalint fix --batch-gmem: {n} global-load bases in {regs}, byte offsets in {offs}{where} "
            f"(exact for 1 <= N <= {limits.limit})")
