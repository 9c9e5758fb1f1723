"""How often code runs: loop trip counts where the code states them, and each instruction's
executions per wave.

A loop's trip count is inferred when one SGPR counts it: set to a constant before the loop,
changed by a constant step once per iteration (``s_add_*``, ``s_addk_i32``, ``s_sub_*``) and
compared with a constant (``s_cmp_*``/``s_cmpk_*``) by the compare whose SCC the back edge's
conditional branch reads; kernel 5's inner loop (``s_mov_b32 s14, 0`` ... ``s_addk_i32 s14,
0x200`` ... ``s_cmpk_lg_i32 s14, 0x1000``) runs 8 times. A loop bounded by a kernel argument
(the GEMM's N) has no count in the code: it is assumed to run :data:`ASSUMED_TRIPS` times, and
every number built on it says it is an assumption.

Every block of a loop is taken to run once per iteration (branches inside a loop are not
weighed), so an instruction's executions are the product of its enclosing loops' trips.
"""
from __future__ import annotations

from ..records import FrozenRecord

ASSUMED_TRIPS = 16  # iterations of a loop whose count the code does not state
_MAX_SIMULATED = 1 << 16
_VALU = ("valu", "trans", "vopd")
_MASK = 0xFFFFFFFF


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
    taken = cfg.block_of[program.labels[target]] if target in program.labels else None
    if taken is None:
        return None
    scc1 = branch.opcode == "s_cbranch_scc1"
    continue_when = scc1 if taken in loop.blocks else not scc1
    compare = _last_scc_def(instrs, blk.first, blk.last - 1)
    if compare is None:
        return None
    cmp_ = _compare(instrs[compare])
    if cmp_ is None:
        return None
    reg, op, limit, signed = cmp_
    steps = [i for i in loop.indices(cfg) if reg in instrs[i].defs]
    # the one update must run on every iteration: in the header, the exiting block or the latch
    if len(steps) != 1 or cfg.block_of[steps[0]] not in (loop.header, exiting[0], loop.latch):
        return None
    step = _step(instrs[steps[0]], reg)
    start = _entry_value(program, cfg, loop, reg)
    if step is None or start is None:
        return None
    if cfg.block_of[compare] == loop.header and cfg.block_of[steps[0]] != loop.header:
        before_compare = False
    else:
        before_compare = steps[0] < compare
    value, trips = start, 0
    while trips < _MAX_SIMULATED:
        trips += 1
        if before_compare:
            value = (value + step) & _MASK
        if _holds(op, value, limit, signed) != continue_when:
            return trips
        if not before_compare:
            value = (value + step) & _MASK
    return None


def _last_scc_def(instrs, first: int, last: int) -> int | None:
    for i in range(last - 1, first - 1, -1):
        if "scc" in instrs[i].defs:
            return i
    return None


_CMP = {"eq": "eq", "lg": "lg", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}
_SWAPPED = {"eq": "eq", "lg": "lg", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def _compare(ins) -> tuple[str, str, int, bool] | None:
    """(register, relation, constant, signed) of ``s_cmp[k]_REL_[iu]32 sX, C`` (or ``C, sX``)."""
    parts = ins.opcode.split("_")
    if len(parts) != 4 or parts[0] != "s" or parts[1] not in ("cmp", "cmpk") or parts[2] not in _CMP:
        return None
    if parts[3] not in ("i32", "u32"):
        return None
    ops = ins.stmts[0].operands
    if len(ops) != 2:
        return None
    rel, signed = parts[2], parts[3] == "i32"
    a, b = ops
    if a.kind == "sgpr" and a.count == 1 and b.kind == "int":
        return f"s{a.first}", rel, int(b.value) & _MASK, signed
    if b.kind == "sgpr" and b.count == 1 and a.kind == "int" and parts[1] == "cmp":
        return f"s{b.first}", _SWAPPED[rel], int(a.value) & _MASK, signed
    return None


def _step(ins, reg: str) -> int | None:
    """The constant a counter update adds to ``reg`` (negative for a subtraction)."""
    ops = ins.stmts[0].operands
    name = ins.opcode
    if name == "s_addk_i32" and len(ops) == 2 and ops[1].kind == "int":
        return _signed16(int(ops[1].value))
    if name in ("s_add_i32", "s_add_u32", "s_sub_i32", "s_sub_u32") and len(ops) == 3:
        dst, x, y = ops
        if f"s{dst.first}" != reg or dst.kind != "sgpr":
            return None
        sign = -1 if name.startswith("s_sub") else 1
        if x.kind == "sgpr" and f"s{x.first}" == reg and y.kind == "int":
            return sign * int(y.value)
        if y.kind == "sgpr" and f"s{y.first}" == reg and x.kind == "int" and sign == 1:
            return int(x.value)
    return None


def _signed16(v: int) -> int:
    v &= 0xFFFF
    return v - 0x10000 if v & 0x8000 else v


def _entry_value(program, cfg, loop, reg: str) -> int | None:
    """The constant ``reg`` holds on entering ``loop`` from outside it, when every way in agrees."""
    from .reaching import reaching_defs

    instrs = program.instrs
    values: set[int] = set()
    outside = [p for p in cfg.blocks[loop.header].preds if p not in loop.blocks]
    if not outside:
        return None
    for p in outside:
        blk = cfg.blocks[p]
        defs = [i for i in range(blk.first, blk.last) if reg in instrs[i].defs]
        found = [defs[-1]] if defs else reaching_defs(program, blk.first, reg)
        for d in found:
            value = _constant_def(instrs[d], reg) if d >= 0 else None
            if value is None:
                return None
            values.add(value)
    return values.pop() if len(values) == 1 else None


def _constant_def(ins, reg: str) -> int | None:
    ops = ins.stmts[0].operands
    if ins.opcode in ("s_mov_b32", "s_movk_i32") and len(ops) == 2 and ops[1].kind == "int":
        value = int(ops[1].value)
        return (_signed16(value) if ins.opcode == "s_movk_i32" else value) & _MASK
    return None


def _holds(op: str, value: int, limit: int, signed: bool) -> bool:
    if signed:
        value = value - (1 << 32) if value & 0x80000000 else value
        limit = limit - (1 << 32) if limit & 0x80000000 else limit
    return {"eq": value == limit, "lg": value != limit, "lt": value < limit, "le": value <= limit,
            "gt": value > limit, "ge": value >= limit}[op]


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
