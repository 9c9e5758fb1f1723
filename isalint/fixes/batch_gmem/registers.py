"""Liveness after the rewrite: which address instructions die, which registers are free.

The rewrite takes the address registers away from the loads. :func:`dead_chain` finds, in a
view of the program where the loads no longer read them, the instructions of the address
computations (their backward slice, through VALU and SALU instructions) whose every result is
then dead, repeatedly, since removing one frees the inputs of the next. :func:`free_over` lists
the registers that hold nothing in that view over a range of instructions (live neither in nor
out, not read or written, not the destination of a load in flight), which is where the bases,
the steps and the offsets may live.
"""
from __future__ import annotations

from dataclasses import replace

from ...model.liveness import Liveness, busy_mask
from ...model.program import Program

SGPR_LIMIT = 106  # s0..s105 exist on gfx11; .sgpr_count adds VCC's 2 to the highest used + 1
_DELETABLE = ("valu", "salu", "trans")


def view(program, hide_all: set[int], hide_uses: dict[int, set[str]], add_uses: dict[int, set[str]] | None = None):
    """``program`` with the instructions ``hide_all`` reading and writing nothing, the
    ``hide_uses`` registers not read and the ``add_uses`` registers read as well: the liveness of
    what the rewrite leaves."""
    add_uses = add_uses or {}
    instrs = []
    for ins in program.instrs:
        if ins.index in hide_all:
            ins = replace(ins, defs=[], uses=[])
        elif ins.index in hide_uses:
            ins = replace(ins, uses=[r for r in ins.uses if r not in hide_uses[ins.index]])
        if ins.index in add_uses:
            ins = replace(ins, uses=list(dict.fromkeys(ins.uses + sorted(add_uses[ins.index]))))
        instrs.append(ins)
    out = Program(program.source, program.target, instrs, program.labels, program.label_lines,
                  program.kernels, program.metadata_text)
    out._cfg = program.cfg()
    return out


def backward_slice(program, kernel, starts: dict[int, list[str]]) -> set[int]:
    """Instructions of ``kernel`` whose results reach the given registers of the given
    instructions, through VALU and SALU instructions (memory instructions end the walk)."""
    cfg = program.cfg()
    defs = _block_defs(program)
    out: set[int] = set()
    work = [(i, r) for i, regs in starts.items() for r in regs]
    seen: set[tuple[int, str]] = set()
    while work:
        at, reg = work.pop()
        if (at, reg) in seen or reg.startswith("exec"):
            continue
        seen.add((at, reg))
        for d in _reaching(cfg, defs, at, reg):
            ins = program.instrs[d]
            if d in out or not (kernel.first <= d < kernel.last) or ins.klass not in _DELETABLE + ("vopd",):
                continue
            out.add(d)
            work.extend((d, u) for u in ins.uses)
    return out


def _block_defs(program) -> list[dict[str, list[int]]]:
    out = []
    for blk in program.cfg().blocks:
        d: dict[str, list[int]] = {}
        for i in blk.indices():
            for r in program.instrs[i].defs:
                d.setdefault(r, []).append(i)
        out.append(d)
    return out


def _reaching(cfg, defs, index: int, reg: str) -> set[int]:
    b = cfg.block_of[index]
    before = [i for i in defs[b].get(reg, ()) if i < index]
    if before:
        return {before[-1]}
    out: set[int] = set()
    seen: set[int] = set()
    stack = list(cfg.blocks[b].preds)
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        idx = defs[p].get(reg)
        if idx:
            out.add(idx[-1])
        else:
            stack.extend(cfg.blocks[p].preds)
    return out


def dead_chain(program, kernel, loads: dict[int, list[str]], add_uses: dict[int, set[str]] | None = None) -> set[int]:
    """The instructions of the loads' address computations that nothing reads once the loads take
    their address elsewhere (and the new code reads ``add_uses``)."""
    candidates = backward_slice(program, kernel, loads)
    dead: set[int] = set()
    while True:
        lv = Liveness(view(program, dead, {i: set(r) for i, r in loads.items()}, add_uses))
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


def free_over(program, indices: list[int], counters=None) -> tuple[list[int], list[int]]:
    """(SGPR numbers, VGPR numbers) that hold nothing needed at any of ``indices``."""
    busy = busy_mask(program, indices, counters=counters)
    sgprs = [n for n in range(SGPR_LIMIT) if not busy >> (256 + n) & 1]
    vgprs = [n for n in range(256) if not busy >> n & 1]
    return sgprs, vgprs


def sgpr_pairs(free: list[int], count: int, limit: int) -> list[int] | None:
    """``count`` even-aligned SGPR pairs (their first numbers) from ``free``, all below ``limit``."""
    have = set(free)
    out = [n for n in range(0, limit - 1, 2) if n in have and n + 1 in have]
    return out[:count] if len(out) >= count else None
