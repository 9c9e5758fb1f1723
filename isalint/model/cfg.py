"""Basic blocks, control-flow edges and natural loops."""
from __future__ import annotations

from ..records import Record


class Block(Record):
    id: int
    first: int  # first instruction index
    last: int  # one past the last instruction index
    label: str | None
    succs: list[int]
    preds: list[int]

    _fields = ("id", "first", "last", "label", "succs", "preds")

    def __init__(self, id: int, first: int, last: int, label: str | None = None, succs: list[int] | None = None,
                 preds: list[int] | None = None):
        self.id = id
        self.first = first
        self.last = last
        self.label = label
        self.succs = [] if succs is None else succs
        self.preds = [] if preds is None else preds

    def indices(self) -> range:
        return range(self.first, self.last)


class Loop(Record):
    header: int  # block id
    latch: int  # block id of the back edge's source
    blocks: set[int]
    depth: int
    parent: Loop | None
    children: list[Loop]
    label: str | None

    _fields = ("header", "latch", "blocks", "depth", "parent", "children", "label")

    def __init__(self, header: int, latch: int, blocks: set[int], depth: int = 1, parent: Loop | None = None,
                 children: list[Loop] | None = None, label: str | None = None):
        self.header = header
        self.latch = latch
        self.blocks = blocks
        self.depth = depth
        self.parent = parent
        self.children = [] if children is None else children
        self.label = label

    @property
    def innermost(self) -> bool:
        return not self.children

    def indices(self, cfg: CFG) -> list[int]:
        out: list[int] = []
        for b in sorted(self.blocks, key=lambda b: cfg.blocks[b].first):
            out.extend(cfg.blocks[b].indices())
        return out


class CFG(Record):
    blocks: list[Block]
    block_of: list[int]  # instruction index -> block id
    loops: list[Loop]

    _fields = ("blocks", "block_of", "loops")

    def __init__(self, blocks: list[Block], block_of: list[int], loops: list[Loop]):
        self.blocks = blocks
        self.block_of = block_of
        self.loops = loops

    def loop_of(self, index: int) -> Loop | None:
        """The innermost loop containing instruction ``index``."""
        best = None
        b = self.block_of[index] if index < len(self.block_of) else -1
        for loop in self.loops:
            if b in loop.blocks and (best is None or loop.depth > best.depth):
                best = loop
        return best

    def hottest_loop(self) -> Loop | None:
        """The deepest innermost loop; ties go to the one with more instructions."""
        if not self.loops:
            return None
        return max(self.loops, key=lambda lp: (lp.depth, sum(len(self.blocks[b].indices()) for b in lp.blocks)))

    def find_loop(self, label: str) -> Loop | None:
        label = label.rstrip(":")
        for loop in self.loops:
            if loop.label == label or self.blocks[loop.header].label == label:
                return loop
        return None


def build_cfg(program) -> CFG:
    instrs = program.instrs
    n = len(instrs)
    leaders = {0} if n else set()
    label_at: dict[int, str] = {}
    for label, idx in program.labels.items():
        if idx < n:
            leaders.add(idx)
            if idx not in label_at or label.startswith(".L"):
                label_at[idx] = label
    for k in program.kernels:
        if k.first < n:
            leaders.add(k.first)
    for ins in instrs:
        if ins.klass == "branch" or ins.ends_program():
            if ins.index + 1 < n:
                leaders.add(ins.index + 1)
    starts = sorted(leaders)
    blocks: list[Block] = []
    block_of = [0] * n
    for b, first in enumerate(starts):
        last = starts[b + 1] if b + 1 < len(starts) else n
        blocks.append(Block(b, first, last, label_at.get(first)))
        for i in range(first, last):
            block_of[i] = b
    for blk in blocks:
        if blk.last == blk.first:
            continue
        term = instrs[blk.last - 1]
        target = term.branch_target()
        if target is not None and target in program.labels and program.labels[target] < n:
            blk.succs.append(block_of[program.labels[target]])
        falls_through = not (term.ends_program() or term.is_unconditional_branch())
        if falls_through and blk.id + 1 < len(blocks):
            blk.succs.append(blk.id + 1)
        blk.succs = list(dict.fromkeys(blk.succs))
    for blk in blocks:
        for s in blk.succs:
            blocks[s].preds.append(blk.id)
    loops = _natural_loops(blocks)
    return CFG(blocks, block_of, loops)


def _dominators(blocks: list[Block]) -> list[set[int]]:
    n = len(blocks)
    if n == 0:
        return []
    entries = {b.id for b in blocks if not b.preds} | {0}
    everything = set(range(n))
    dom = [({b} if b in entries else set(everything)) for b in range(n)]
    changed = True
    while changed:
        changed = False
        for b in range(n):
            if b in entries:
                continue
            preds = blocks[b].preds
            new = set.intersection(*(dom[p] for p in preds)) if preds else set()
            new = new | {b}
            if new != dom[b]:
                dom[b] = new
                changed = True
    return dom


def _natural_loops(blocks: list[Block]) -> list[Loop]:
    dom = _dominators(blocks)
    by_header: dict[int, Loop] = {}
    for blk in blocks:
        for s in blk.succs:
            if s in dom[blk.id]:  # back edge blk -> s
                body = {s, blk.id}
                stack = [blk.id]
                while stack:
                    x = stack.pop()
                    if x == s:
                        continue
                    for p in blocks[x].preds:
                        if p not in body:
                            body.add(p)
                            stack.append(p)
                if s in by_header:
                    by_header[s].blocks |= body
                    by_header[s].latch = max(by_header[s].latch, blk.id)
                else:
                    by_header[s] = Loop(s, blk.id, body, label=blocks[s].label)
    loops = sorted(by_header.values(), key=lambda lp: len(lp.blocks), reverse=True)
    for i, loop in enumerate(loops):
        for outer in reversed(loops[:i]):
            if loop.blocks <= outer.blocks and loop is not outer:
                loop.parent = outer
                outer.children.append(loop)
                break
    for loop in loops:
        d, p = 1, loop.parent
        while p is not None:
            d, p = d + 1, p.parent
        loop.depth = d
    return sorted(loops, key=lambda lp: blocks[lp.header].first)
