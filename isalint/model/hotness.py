"""How often code runs: loop trip counts where the code states them, and each instruction's
executions per wave.

A loop's trip count is inferred when one SGPR counts it (:mod:`isalint.model.loop_counter`): set
to a constant before the loop, changed by a constant step once per iteration (``s_add_*``,
``s_addk_i32``, ``s_sub_*``) in a block every iteration runs, and compared with a constant bound
(``s_cmp_*``/``s_cmpk_*``) by the compare whose SCC the loop's one exiting branch reads; kernel 5's inner loop (``s_mov_b32 s14, 0`` ... ``s_addk_i32 s14,
0x200`` ... ``s_cmpk_lg_i32 s14, 0x1000``) runs 8 times. A loop bounded by a kernel argument
(the GEMM's N) has no count in the code: it is assumed to run :data:`ASSUMED_TRIPS` times, and
every number built on it says it is an assumption.

Every block of a loop is taken to run once per iteration (branches inside a loop are not
weighed), so an instruction's executions are the product of its enclosing loops' trips.
"""
from __future__ import annotations

from ..records import FrozenRecord
from .loop_counter import NotCounted, constant_step, count_trips, entry_value, read_compare

ASSUMED_TRIPS = 16  # iterations of a loop whose count the code does not state
_MAX_SIMULATED = 1 << 16
_VALU = ("valu", "trans", "vopd")


class Executions(FrozenRecord):
    """Executions per wave of one place in the code."""

    count: int
    known: bool  # every enclosing loop's trip count was inferred

    _fields = ("count", "known")

    def __init__(self, count: int, known: bool):
        self.__dict__.update(count=count, known=known)

    def text(self) -> str:
        return f"{self.count}" if self.known else f"~{self.count}"


def trip_count(program, loop) -> int | None:
    """Iterations of ``loop`` (executions of its header per entry), or None when the code does not
    state them (see the module's docstring)."""
    cfg = program.cfg()
    instrs = program.instrs
    exiting = [b for b in loop.blocks if any(s not in loop.blocks for s in cfg.blocks[b].succs)]
    if len(exiting) != 1:
        return None
    blk = cfg.blocks[exiting[0]]
    if blk.last <= blk.first:
        return None
    branch = instrs[blk.last - 1]
    if branch.opcode not in ("s_cbranch_scc0", "s_cbranch_scc1"):
        return None
    target = branch.branch_target()
    taken = cfg.label_block(program, target)
    if taken is None:
        return None
    scc1 = branch.opcode == "s_cbranch_scc1"
    continue_on = scc1 if taken in loop.blocks else not scc1
    compare = _last_scc_def(instrs, blk.first, blk.last - 1)
    if compare is None:
        return None
    body = loop.indices(cfg)
    try:
        rel, kind, reg, bound = read_compare(program, compare)
        if isinstance(bound, str):
            if any(bound in instrs[i].defs for i in body):
                return None
            bound = entry_value(program, cfg, loop, bound)
        steps = [i for i in body if reg in instrs[i].defs]
        # the one update must run on every iteration: in the header, the exiting block or the latch
        if len(steps) != 1 or cfg.block_of[steps[0]] not in (loop.header, exiting[0], loop.latch):
            return None
        step = constant_step(instrs[steps[0]], reg)
        if step is None:
            return None
        start = entry_value(program, cfg, loop, reg)
    except NotCounted:
        return None
    if cfg.block_of[compare] == loop.header and cfg.block_of[steps[0]] != loop.header:
        step_before_compare = False
    else:
        step_before_compare = steps[0] < compare
    return count_trips(start, step, rel, kind, bound, continue_on, step_before_compare, _MAX_SIMULATED)


def _last_scc_def(instrs, first: int, last: int) -> int | None:
    for i in range(last - 1, first - 1, -1):
        if "scc" in instrs[i].defs:
            return i
    return None


class Hotness:
    """Trip counts of a program's loops and the executions per wave of its instructions."""

    def __init__(self, program):
        self.program = program
        self.cfg = program.cfg()
        self.trips: dict[int, int | None] = {lp.header: trip_count(program, lp) for lp in self.cfg.loops}

    def loop_trips(self, loop) -> Executions:
        known = self.trips.get(loop.header)
        return Executions(known, True) if known is not None else Executions(ASSUMED_TRIPS, False)

    def of_loop(self, loop) -> Executions:
        """Executions per wave of one iteration of ``loop`` (None: code outside every loop, once)."""
        count, known = 1, True
        while loop is not None:
            t = self.loop_trips(loop)
            count, known = count * t.count, known and t.known
            loop = loop.parent
        return Executions(count, known)

    def of(self, index: int) -> Executions:
        return self.of_loop(self.cfg.loop_of(index))

    def valu_issue(self, kernel) -> int:
        """The kernel's VALU instructions issued per wave: each weighted by its executions."""
        key = kernel.first if kernel is not None else -1
        cache = self.__dict__.setdefault("_issue", {})
        if key not in cache:
            cache[key] = self._valu_issue(kernel)
        return cache[key]

    def _valu_issue(self, kernel) -> int:
        instrs = self.program.instrs
        first, last = (kernel.first, kernel.last) if kernel is not None else (0, len(instrs))
        weights: dict[int, int] = {}
        total = 0
        for i in range(first, last):
            if instrs[i].klass not in _VALU:
                continue
            b = self.cfg.block_of[i]
            if b not in weights:
                weights[b] = self.of(i).count
            total += weights[b]
        return total


def hotness(analysis) -> Hotness:
    """The analysis's :class:`Hotness`, built once."""
    h = analysis.__dict__.get("_hotness")
    if h is None:
        h = analysis.__dict__["_hotness"] = Hotness(analysis.program)
    return h
