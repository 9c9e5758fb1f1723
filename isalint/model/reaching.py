"""Reaching definitions and VALU slices over the CFG, on demand.

:func:`reaching_defs` finds the writes of one register that reach an instruction (optionally inside a
set of blocks and without going around a loop); :func:`valu_slice` follows them back through VALU
instructions. GMEM001 uses both, and so does the lane evaluator.
"""
from __future__ import annotations

from bisect import bisect_left


def reaching_defs(program, index: int, reg: str, blocks: set[int] | None = None,
                  stop_header: int | None = None) -> list[int]:
    """Indices of the instructions whose write of ``reg`` reaches instruction
    ``index``; ``-1`` stands for "live on entry" (the kernel entry, a block
    outside ``blocks``, or the entry of ``stop_header``: the search does not
    follow that block's predecessors, i.e. does not go around a loop)."""
    cfg = program.cfg()
    bdefs = block_defs(program)
    b = cfg.block_of[index]
    idx = bdefs[b].get(reg)
    if idx:
        k = bisect_left(idx, index)
        if k:
            return [idx[k - 1]]
    out: list[int] = []
    seen: set[int] = set()
    stack = [b]
    while stack:
        x = stack.pop()
        if x == stop_header or not cfg.blocks[x].preds:
            out.append(-1)
            continue
        for p in cfg.blocks[x].preds:
            if p in seen:
                continue
            seen.add(p)
            if blocks is not None and p not in blocks:
                out.append(-1)
                continue
            idx = bdefs[p].get(reg)
            if idx:
                out.append(idx[-1])
            else:
                stack.append(p)
    return sorted(set(out))


def block_defs(program) -> list[dict[str, list[int]]]:
    """Per CFG block: register -> indices of the block's instructions writing
    it, ascending (cached on the program)."""
    cached = program.__dict__.get("_lanes_block_defs")
    if cached is not None:
        return cached
    instrs = program.instrs
    out: list[dict[str, list[int]]] = []
    for blk in program.cfg().blocks:
        d: dict[str, list[int]] = {}
        get = d.get
        for i in range(blk.first, blk.last):
            for r in instrs[i].defs:
                at = get(r)
                if at is None:
                    d[r] = [i]
                else:
                    at.append(i)
        out.append(d)
    program.__dict__["_lanes_block_defs"] = out
    return out


def valu_slice(program, index: int, regs: list[str], blocks: set[int] | None = None,
               stop_header: int | None = None) -> set[int]:
    """The VALU instructions (VOP and VOPD) whose results flow into ``regs``
    as read by instruction ``index``, following reaching definitions inside
    ``blocks`` and not around ``stop_header``'s back edges. The walk stops at
    anything that is not VALU (SALU, memory, kernel entry)."""
    out: set[int] = set()
    work = [(index, r) for r in regs]
    seen: set[tuple[int, str]] = set()
    instrs = program.instrs
    while work:
        at, reg = work.pop()
        if (at, reg) in seen:
            continue
        seen.add((at, reg))
        for d in reaching_defs(program, at, reg, blocks, stop_header):
            if d < 0 or d in out:
                continue
            ins = instrs[d]
            if ins.klass not in ("valu", "vopd", "trans"):
                continue
            out.add(d)
            for u in ins.uses:
                if u.startswith("exec"):
                    continue
                work.append((d, u))
    return out
