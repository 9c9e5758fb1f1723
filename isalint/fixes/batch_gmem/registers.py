"""Liveness after the rewrite: which address instructions die, which registers are free.

The rewrite takes the address registers away from the loads. :func:`dead_chain` finds, in a
view of the program where the loads no longer read them (:func:`isalint.fixes.toolkit.rewritten_view`),
the instructions of the address computations (their backward slice, through VALU and SALU
instructions) whose every result is then dead, repeatedly, since removing one frees the inputs of
the next. :func:`free_over` lists the registers that hold nothing in that view over a range of
instructions, which is where the bases, the steps and the offsets may live.
"""
from __future__ import annotations

from ...hw.registers import VGPRS
from ...model.liveness import Liveness
from ...model.reaching import reaching_defs
from ..toolkit import free_registers, rewritten_view, sgpr_budget

_DELETABLE = ("valu", "salu", "trans")


def backward_slice(program, kernel, starts: dict[int, list[str]]) -> set[int]:
    """Instructions of ``kernel`` whose results reach the given registers of the given
    instructions, through VALU and SALU instructions (memory instructions end the walk)."""
    out: set[int] = set()
    work = [(i, r) for i, regs in starts.items() for r in regs]
    seen: set[tuple[int, str]] = set()
    while work:
        at, reg = work.pop()
        if (at, reg) in seen or reg.startswith("exec"):
            continue
        seen.add((at, reg))
        for d in reaching_defs(program, at, reg):
            if d < 0 or d in out or not (kernel.first <= d < kernel.last):
                continue
            ins = program.instrs[d]
            if ins.klass not in _DELETABLE + ("vopd",):
                continue
            out.add(d)
            work.extend((d, u) for u in ins.uses)
    return out


def dead_chain(program, kernel, loads: dict[int, list[str]], add_uses: dict[int, set[str]] | None = None) -> set[int]:
    """The instructions of the loads' address computations that nothing reads once the loads take
    their address elsewhere (and the new code reads ``add_uses``)."""
    candidates = backward_slice(program, kernel, loads)
    drop = {i: set(r) for i, r in loads.items()}
    dead: set[int] = set()
    while True:
        lv = Liveness(rewritten_view(program, dead, drop, add_uses))
        new = set()
        for i in candidates - dead:
            ins = program.instrs[i]
            if ins.klass not in _DELETABLE or ins.is_vopd or ins.opaque:
                continue
            if any(r.startswith(("exec", "m0")) for r in ins.defs):
                continue
            if not (lv.def_mask[i] & lv.live_out_mask(i)):
                new.add(i)
        if not new:
            return dead
        dead |= new


def sgpr_ceiling(program, kernel) -> int:
    """One past the highest SGPR a pass may take: the SGPR file, less VCC's 2 when the kernel uses or
    reserves it (the counts add them), so that the kernel stays within its 106 SGPRs."""
    budget = sgpr_budget(program, kernel)
    vcc = budget.uses_vcc or budget.reserve_vcc != 0
    return budget.hardware - (2 if vcc else 0)


def free_over(program, indices: list[int], ceiling: int) -> tuple[list[int], list[int], list[int]]:
    """(SGPR pairs, single SGPRs, VGPRs) that hold nothing needed at any of ``indices``, SGPRs below
    ``ceiling``, lowest first."""
    pairs = free_registers(program, indices, "s", count=2, limit=ceiling)
    singles = free_registers(program, indices, "s", limit=ceiling)
    vgprs = free_registers(program, indices, "v", limit=VGPRS)
    return pairs, singles, vgprs
