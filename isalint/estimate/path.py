"""The instruction stream a simulated wave runs: the traced path with long loops shortened.

A GEMM wave runs its main loop hundreds or thousands of times, each iteration the same
instructions. Simulating a handful of them is enough to reach the steady state: every run of
identical iterations of a loop keeps its first ``keep`` iterations (at least 6, and enough to span a
few thousand instructions) and its last one; the iterations in between are *skipped* and later
charged at the period the kept ones settled to (:mod:`isalint.estimate.simd` measures it). A loop
with few iterations is not shortened itself; its inner loops are.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .costs import SKIP, CostModel

MIN_KEEP = 6
KEEP_INSTRUCTIONS = 4000


@dataclass
class Run:
    """A shortened run of identical iterations of ``loop``."""

    loop: object
    kept: int  # iterations simulated before the skip
    skipped: int  # iterations charged at the measured period
    starts: list[int] = field(default_factory=list)  # stream position where each kept iteration starts,
    # plus the position after the last kept one


@dataclass
class Stream:
    code: list[int]  # instruction indices, zero-cost hints removed
    taken: list[bool]  # code[i] is a branch that jumps
    runs: list[Run]
    executed: int  # instructions of the full path (hints included)
    refetch: list[bool] = field(default_factory=list)  # code[i] jumps out of the wave's prefetched code


def _iterations(seq: list[int], start: int, loop) -> tuple[list[tuple[int, ...]], int]:
    """Split ``seq[start:]`` (which begins at ``loop``'s header) into iterations; return them and the end."""
    its: list[tuple[int, ...]] = []
    header, body = loop.header, loop.blocks
    j = start
    n = len(seq)
    while j < n and seq[j] == header:
        k = j + 1
        while k < n and seq[k] != header and seq[k] in body:
            k += 1
        its.append(tuple(seq[j:k]))
        j = k
    return its, j


def _shorten(seq: list[int], loops: list) -> list:
    """``seq`` as items: a block id, or ``(loop, [(iteration, count), ...])``."""
    headers = {lp.header: lp for lp in loops}
    out: list = []
    i = 0
    n = len(seq)
    while i < n:
        b = seq[i]
        lp = headers.get(b)
        if lp is None:
            out.append(b)
            i += 1
            continue
        its, j = _iterations(seq, i, lp)
        groups: list[list] = []
        for it in its:
            if groups and groups[-1][0] == it:
                groups[-1][1] += 1
            else:
                groups.append([it, 1])
        inner = lp.children
        parts = []
        for it, count in groups:
            if inner and count < MIN_KEEP + 2:
                body = _shorten(list(it), inner)
                parts.extend([(body, 1)] * count)
            else:
                parts.append((list(it), count))
        out.append((lp, parts))
        i = j
    return out


def build_stream(trace_blocks: list[int], cfg, costs: CostModel) -> Stream:
    top = [lp for lp in cfg.loops if lp.parent is None]
    blocks = cfg.blocks
    size = lambda b: blocks[b].last - blocks[b].first  # noqa: E731
    items = _shorten(trace_blocks, top)
    order: list[int] = []  # blocks in stream order (for branch direction)
    code: list[int] = []
    runs: list[Run] = []
    marks: list[tuple[int, Run]] = []  # (position in ``order``) at which the stream position is recorded

    def count_instr(item) -> int:
        if isinstance(item, int):
            return size(item)
        _, parts = item
        return sum(count_instr_list(body) * c for body, c in parts)

    def count_instr_list(items) -> int:
        return sum(count_instr(x) for x in items)

    def emit(items) -> None:
        for item in items:
            if isinstance(item, int):
                order.append(item)
                continue
            lp, parts = item
            for body, count in parts:
                body_items = body
                per = max(1, count_instr_list(body_items))
                keep = max(MIN_KEEP, -(-KEEP_INSTRUCTIONS // per))
                if count <= keep + 1:
                    for _ in range(count):
                        emit(body_items)
                    continue
                run = Run(lp, keep, count - keep - 1)
                runs.append(run)
                for _ in range(keep):
                    marks.append((len(order), run))
                    emit(body_items)
                marks.append((len(order), run))
                emit(body_items)  # the last iteration (its exit branch differs)

    emit(items)
    # expand blocks into instructions
    instrs = costs.program.instrs
    taken: list[bool] = []
    refetch: list[bool] = []
    mark_at = {}
    for pos, run in marks:
        mark_at.setdefault(pos, []).append(run)
    for k, b in enumerate(order):
        for run in mark_at.get(k, ()):
            run.starts.append(len(code))
        blk = blocks[b]
        nxt = order[k + 1] if k + 1 < len(order) else None
        for i in range(blk.first, blk.last):
            if costs.cost(i).unit == SKIP:
                continue
            code.append(i)
            taken.append(False)
            refetch.append(False)
        if blk.last > blk.first and instrs[blk.last - 1].klass == "branch" and code and code[-1] == blk.last - 1:
            taken[-1] = nxt is not None and nxt != b + 1 or instrs[blk.last - 1].opcode == "s_branch"
            if taken[-1] and nxt is not None:
                refetch[-1] = costs.refetches(blk.last - 1, blocks[nxt].first)
    executed = count_instr_list(items)
    return Stream(code, taken, runs, executed, refetch)
