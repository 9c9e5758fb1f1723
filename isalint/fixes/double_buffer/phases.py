"""The LDS phases of a GEMM loop's iteration, and the proof that the first barrier can go.

Walking one iteration from the loop header (every path, back edges not followed), the loop must:
read LDS (the tile's ``ds_load``), pass a barrier (*b1*: every wave has finished reading), write LDS
(the next tile's ``ds_store``), pass a second barrier (*b2*: every wave has finished writing), and
touch LDS no more before the next iteration. With two LDS buffers, iteration ``t`` reading buffer
``t % 2`` and writing buffer ``(t + 1) % 2``, b1 has nothing left to order: the buffer iteration ``t``
writes was last read in iteration ``t - 1``, before that iteration's b2, which every wave passed
before writing; the buffer iteration ``t + 1`` reads was written before iteration ``t``'s b2. So b1
goes and b2 stays.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import FixRefused

READ, WRITE, DONE = 0, 1, 2


@dataclass
class Phases:
    b1: set[int]  # the barrier instruction(s) between the reads and the writes
    b2: set[int]
    reads: list[int]
    writes: list[int]


def _kind(ins) -> str | None:
    if ins.klass != "lds":
        return None
    op = ins.opcode
    if op.startswith(("ds_load", "ds_read")):
        return "read"
    if op.startswith(("ds_store", "ds_write")):
        return "write"
    return "other"


def lds_phases(analysis, loop) -> Phases:
    program, cfg = analysis.program, analysis.cfg
    where = lambda i: f"{program.path}:{program.instrs[i].lineno}"  # noqa: E731
    out = Phases(set(), set(), [], [])
    seen: set[tuple[int, int]] = set()
    work = [(loop.header, READ)]
    while work:
        b, phase = work.pop()
        if (b, phase) in seen:
            continue
        seen.add((b, phase))
        for i in cfg.blocks[b].indices():
            ins = program.instrs[i]
            kind = _kind(ins)
            if kind == "other":
                raise FixRefused(f"{where(i)}: '{ins.text()}' is an LDS access other than a load or a store")
            if kind == "read":
                if phase != READ:
                    raise FixRefused(f"{where(i)}: the loop reads LDS after its first barrier ('{ins.text()}'); the "
                                     "iteration must read the tile, pass a barrier, then write the next one")
                if i not in out.reads:
                    out.reads.append(i)
            elif kind == "write":
                if phase != WRITE:
                    what = "before its first barrier" if phase == READ else "after its second barrier"
                    raise FixRefused(f"{where(i)}: the loop writes LDS {what} ('{ins.text()}')")
                if i not in out.writes:
                    out.writes.append(i)
            elif ins.opcode == "s_barrier":
                if phase == DONE:
                    raise FixRefused(f"{where(i)}: a third barrier in one iteration of the loop")
                (out.b1 if phase == READ else out.b2).add(i)
                phase += 1
        for s in cfg.blocks[b].succs:
            if s in loop.blocks and s != loop.header:
                work.append((s, phase))
    if out.b1 & out.b2:
        raise FixRefused(f"{where(min(out.b1 & out.b2))}: the same barrier ends the reads on one path and the writes "
                         "on another")
    if not out.reads or not out.writes or not out.b1 or not out.b2:
        label = cfg.blocks[loop.header].label or "the loop"
        raise FixRefused(f"{program.path}: {label} does not read LDS, pass a barrier, write LDS and pass another in "
                         "each iteration: there is no tile to double-buffer")
    return out
