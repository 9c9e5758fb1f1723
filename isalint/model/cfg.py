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
    innermost: list[Loop | None]  # block id -> its innermost loop

    _fields = ("blocks", "block_of", "loops", "innermost")

    def __init__(self, blocks: list[Block], block_of: list[int], loops: list[Loop],
                 innermost: list[Loop | None] | None = None):
        self.blocks = blocks
        self.block_of = block_of
        self.loops = loops
        self.innermost = [None] * len(blocks) if innermost is None else innermost

    def label_block(self, program, label: str | None) -> int | None:
        """The block a branch to ``label`` enters: None for an unknown label, or for one after the
        last instruction (a branch there leaves the code: no block follows it)."""
        index = program.labels.get(label) if label is not None else None
        if index is None or not 0 <= index < len(self.block_of):
            return None
        return self.block_of[index]

    def loop_of(self, index: int) -> Loop | None:
        """The innermost loop containing instruction ``index``."""
        if not 0 <= index < len(self.block_of):
            return None
        return self.innermost[self.block_of[index]]

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

    def loop_name(self, loop: Loop) -> str:
        """The label of the loop's header, else ``block<N>``."""
        return self.blocks[loop.header].label or f"block{loop.header}"

    def select_loop(self, label: str | None) -> Loop | None:
        """The loop ``label`` names (its header's label), else the hottest loop (None when there is no loop).
        Raises :class:`NoSuchLoop` for a label that heads no loop."""
        if not label:
            return self.hottest_loop()
        loop = self.find_loop(label)
        if loop is None:
            names = ", ".join(self.blocks[lp.header].label or f"block {lp.header}" for lp in self.loops) or "none"
            raise NoSuchLoop(f"no loop headed by label {label} (loops: {names})")
        return loop


class NoSuchLoop(ValueError):
    """A loop label that heads no loop of the program (one line, for messages)."""


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
    loops, innermost, dropped = _natural_loops(blocks)
    if dropped:
        _record_dropped_loops(program, blocks, innermost, dropped)
    return CFG(blocks, block_of, loops, innermost)


def _immediate_dominators(blocks: list[Block]) -> list[int]:
    """Immediate dominator of each block, and of the virtual root ``len(blocks)`` (itself).

    Block 0 and blocks without predecessors are entries, children of the virtual root; a block
    no entry reaches becomes an entry too. Lengauer and Tarjan's algorithm with path compression:
    O(edges log blocks) time, O(blocks + edges) memory, no recursion.
    """
    n = len(blocks)
    root = n
    entries = [b for b in range(n) if b == 0 or not blocks[b].preds]
    is_entry = bytearray(n + 1)
    number = [-1] * (n + 1)  # depth-first preorder number
    vertex: list[int] = []
    parent = [-1] * (n + 1)

    def walk(start: int) -> None:
        number[start] = len(vertex)
        vertex.append(start)
        parent[start] = root
        stack = [iter(blocks[start].succs)]
        nodes = [start]
        while stack:
            for s in stack[-1]:
                if number[s] < 0:
                    number[s] = len(vertex)
                    vertex.append(s)
                    parent[s] = nodes[-1]
                    stack.append(iter(blocks[s].succs))
                    nodes.append(s)
                    break
            else:
                stack.pop()
                nodes.pop()

    number[root] = 0
    vertex.append(root)
    for e in entries:
        if number[e] < 0:
            is_entry[e] = 1
            walk(e)
    for b in range(n):
        if number[b] < 0:
            is_entry[b] = 1
            walk(b)
    semi = list(range(n + 1))
    for v in range(n + 1):
        semi[v] = number[v]
    label = list(range(n + 1))
    ancestor = [-1] * (n + 1)
    idom = [-1] * (n + 1)
    bucket: list[list[int]] = [[] for _ in range(n + 1)]

    def evaluate(v: int) -> int:
        if ancestor[v] < 0:
            return v
        path = []
        u = v
        while ancestor[ancestor[u]] >= 0:
            path.append(u)
            u = ancestor[u]
        for u in reversed(path):
            a = ancestor[u]
            if semi[label[a]] < semi[label[u]]:
                label[u] = label[a]
            ancestor[u] = ancestor[a]
        return label[v]

    for i in range(len(vertex) - 1, 0, -1):
        w = vertex[i]
        preds = blocks[w].preds
        for v in (preds + [root]) if is_entry[w] else preds:
            u = evaluate(v)
            if semi[u] < semi[w]:
                semi[w] = semi[u]
        bucket[vertex[semi[w]]].append(w)
        p = parent[w]
        ancestor[w] = p
        for v in bucket[p]:
            u = evaluate(v)
            idom[v] = u if semi[u] < semi[v] else p
        bucket[p] = []
    for i in range(1, len(vertex)):
        w = vertex[i]
        if idom[w] != vertex[semi[w]]:
            idom[w] = idom[idom[w]]
    idom[root] = root
    return idom


def _dominator_intervals(idom: list[int]) -> tuple[list[int], list[int]]:
    """(enter, leave) times of each node in a walk of the dominator tree: a dominates b iff
    enter[a] <= enter[b] and leave[b] <= leave[a]."""
    n = len(idom)
    root = n - 1
    children: list[list[int]] = [[] for _ in range(n)]
    for b in range(n - 1):
        children[idom[b]].append(b)
    enter, leave = [0] * n, [0] * n
    clock = 0
    stack = [(root, False)]
    while stack:
        b, done = stack.pop()
        if done:
            leave[b] = clock
            clock += 1
            continue
        enter[b] = clock
        clock += 1
        stack.append((b, True))
        stack.extend((c, False) for c in reversed(children[b]))
    return enter, leave


def _natural_loops(blocks: list[Block]) -> tuple[list[Loop], list[Loop | None], list[tuple[int, list[int]]]]:
    """(loops, innermost loop of each block, [(header, latches)] of the loops left out).

    A header's loop is the union of the natural loops of its back edges. Innermost loops are
    found first; once the loop bodies reach LOOP_MEMBERSHIPS memberships in all, the remaining
    (enclosing) loops are left out.
    """
    from .limits import LOOP_MEMBERSHIPS

    n = len(blocks)
    if n == 0:
        return [], [], []
    idom = _immediate_dominators(blocks)
    enter, leave = _dominator_intervals(idom)
    latches: dict[int, list[int]] = {}
    for blk in blocks:
        b = blk.id
        for s in blk.succs:
            if enter[s] <= enter[b] and leave[b] <= leave[s]:  # s dominates b: a back edge
                latches.setdefault(s, []).append(b)
    # a header nested in another comes after it in the dominator-tree walk: innermost first
    headers = sorted(latches, key=lambda h: enter[h], reverse=True)
    budget = LOOP_MEMBERSHIPS
    by_header: dict[int, Loop] = {}
    dropped: list[tuple[int, list[int]]] = []
    for h in headers:
        body = _loop_body(blocks, h, latches[h], budget) if budget > 0 else None
        if body is None:
            dropped.append((h, latches[h]))
            budget = 0
            continue
        budget -= len(body)
        by_header[h] = Loop(h, max(latches[h]), body, label=blocks[h].label)
    loops = sorted(by_header.values(), key=lambda lp: len(lp.blocks), reverse=True)
    innermost: list[Loop | None] = [None] * n
    for loop in loops:  # outer loops first: a loop's parent is the innermost loop around its header
        parent = innermost[loop.header]
        if parent is not None:
            loop.parent = parent
            parent.children.append(loop)
            loop.depth = parent.depth + 1
        for b in loop.blocks:
            innermost[b] = loop
    return sorted(loops, key=lambda lp: blocks[lp.header].first), innermost, dropped


def _loop_body(blocks: list[Block], header: int, latches: list[int], budget: int) -> set[int] | None:
    """The blocks of the natural loop of ``header``, or None when they number more than ``budget``."""
    body = {header}
    stack = []
    for b in latches:
        if b not in body:
            body.add(b)
            stack.append(b)
    while stack:
        x = stack.pop()
        for p in blocks[x].preds:
            if p not in body:
                body.add(p)
                stack.append(p)
        if len(body) > budget:
            return None
    return body


def _record_dropped_loops(program, blocks: list[Block], innermost: list[Loop | None],
                          dropped: list[tuple[int, list[int]]]) -> None:
    """A LIMIT001 record for the loops left out: they span from their first header to their last
    latch; the instructions there outside every loop kept are the ones not checked as loop code."""
    from .limits import LimitReached, record

    first_block = min(dropped, key=lambda d: blocks[d[0]].first)[0]
    last_block = max(b for _, ls in dropped for b in ls)
    skipped = sum(len(blocks[b].indices()) for b in range(first_block, last_block + 1) if innermost[b] is None)
    instrs = program.instrs
    first = blocks[first_block].first
    line = instrs[first].lineno if first < len(instrs) else 1
    record(program, LimitReached("the loop analysis", f"{len(dropped)} enclosing loop(s) from line {line}", line,
                                 skipped, "those loops are checked as straight-line code"))
