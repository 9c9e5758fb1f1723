"""The FMA block of a loop: the outer products a GEMM's inner loop accumulates.

DUAL002 asks whether a loop has one (then ``isalint fix --dual-fmac`` can rewrite it), and the
pass rewrites it. What is recognised, and why each condition is needed for the rewrite to be
provable:

* the FMAs of the loop sit in one basic block (the whole loop body, or one block of a loop
  with branches), and no instruction of the loop is unknown to the model;
* the FMA statements (``v_fmac_f32`` in any encoding, ``v_dual_fmac_f32`` halves, and
  ``v_fma_f32 d, a, b, d``) have plain VGPR operands, no modifiers;
* every accumulator is read and written in the loop only by its FMAs (so it can live in any
  register while the loop runs), each the same number of times: once per outer product;
* every FMA source is loaded in the same iteration by a plain ``ds_load_b32/b64/b96/b128``
  and is read by nothing but FMAs of one product (so the loads may be re-targeted and split);
* in each product the sources split into "A" and "B" and the FMAs are exactly the |A| x |B|
  products; later products (an unrolled k loop) update the accumulators in the same rows and
  columns as the first, and their values come in the same 64-bit pairs;
* between the first and the last FMA there are only the block's loads, waits, ALU
  instructions that touch none of its registers and change no LDS address, scheduling hints,
  ``s_setprio`` and ``s_clause`` (a hand-tuned loop's: :attr:`FmaBlock.priorities` and
  :attr:`FmaBlock.clauses`), and a barrier the compiler hoisted there with no block load after it
  (it moves after the FMAs, with the waits just before it).

Anything else raises :class:`NotAnFmaBlock` with the line and the reason.
"""
from __future__ import annotations

from ..hw.registers import VGPRS
from ..records import FrozenRecord, Record
from .cfg import NoSuchLoop
from .liveness import ignorable_reads, liveness, vgpr_number


class NotAnFmaBlock(Exception):
    """The loop holds no FMA block the model recognises; the message gives the line and the reason."""


FMA_MNEMONICS = {"v_fmac_f32", "v_fmac_f32_e32", "v_fmac_f32_e64", "v_dual_fmac_f32", "v_fma_f32", "v_fma_f32_e64"}
LOAD_DWORDS = {"ds_load_b32": 1, "ds_load_b64": 2, "ds_load_b96": 3, "ds_load_b128": 4}
# Classes that may sit between FMAs and be moved after the block (they touch none of its registers).
MOVABLE = {"salu", "valu", "waitcnt", "delay", "nop"}
DROPPED_IN_BLOCK = {"delay"}
# Wave-level hints a hand-tuned FMA block carries; a rewrite re-places them (they change no value).
PRIORITY, CLAUSE = "s_setprio", "s_clause"


class Fma(FrozenRecord):
    index: int  # instruction index
    stmt: int  # statement within the instruction (0, or 1 for the Y half)
    acc: int  # accumulator VGPR number
    srcs: tuple[int, int]  # the two source VGPR numbers as written

    _fields = ("index", "stmt", "acc", "srcs")

    def __init__(self, index: int, stmt: int, acc: int, srcs: tuple[int, int]):
        self.__dict__.update(index=index, stmt=stmt, acc=acc, srcs=srcs)


class Load(Record):
    index: int  # instruction index
    regs: list[int]  # destination VGPRs, one per dword, in LDS address order
    addr: str  # the address operand as written
    offset: int  # the byte offset modifier (0 when absent)
    side: str  # "A" or "B"
    order: int  # position among the block's loads

    _fields = ("index", "regs", "addr", "offset", "side", "order")

    def __init__(self, index: int, regs: list[int], addr: str, offset: int, side: str = "", order: int = 0):
        self.index = index
        self.regs = regs
        self.addr = addr
        self.offset = offset
        self.side = side
        self.order = order


class Value(FrozenRecord):
    """One dword loaded from LDS and read by FMAs."""

    load: int  # position of its load in FmaBlock.loads
    dword: int  # dword within that load
    reg: int  # original VGPR

    _fields = ("load", "dword", "reg")

    def __init__(self, load: int, dword: int, reg: int):
        self.__dict__.update(load=load, dword=dword, reg=reg)

    @property
    def key(self) -> tuple[int, int]:
        return (self.load, self.dword)


class Phase(Record):
    """One outer product of the block: every accumulator is updated once per phase."""

    index: int
    a_values: list[Value]  # in (load, dword) order: pairs are (0, 1), (2, 3), ...
    b_values: list[Value]
    cells: dict[tuple[tuple[int, int], tuple[int, int]], int]  # (A value key, B value key) -> acc VGPR
    loads: list[int]  # positions in FmaBlock.loads

    _fields = ("index", "a_values", "b_values", "cells", "loads")

    def __init__(self, index: int, a_values: list[Value], b_values: list[Value],
                 cells: dict[tuple[tuple[int, int], tuple[int, int]], int], loads: list[int] | None = None):
        self.index = index
        self.a_values = a_values
        self.b_values = b_values
        self.cells = cells
        self.loads = [] if loads is None else loads

    def acc(self, ai: int, bi: int) -> int:
        return self.cells[(self.a_values[ai].key, self.b_values[bi].key)]


class FmaBlock(Record):
    loop: object
    label: str
    block: int  # the basic block holding the FMAs
    body: list[int]  # instruction indices of that block, in order
    fmas: list[Fma]
    loads: list[Load]
    phases: list[Phase]
    first: int  # body position of the first FMA instruction
    last: int  # body position of the last FMA instruction
    moved: list[int]  # instr indices inside the FMA span moved after it
    dropped: list[int]  # waits / hints inside the span that are re-derived
    value_regs: set[int]
    accs: list[int]
    whole_loop: bool  # the block is the whole loop (its own back edge)
    kept_waits: set[int]  # waits moved whole with a barrier after the FMAs
    priorities: list[int]  # s_setprio among the FMAs, in order
    clauses: dict[int, list[int]]  # s_clause (anywhere in the body) -> the
    # block loads it covers, when it covers only block loads

    _fields = ("loop", "label", "block", "body", "fmas", "loads", "phases", "first", "last", "moved", "dropped",
               "value_regs", "accs", "whole_loop", "kept_waits", "priorities", "clauses")

    def __init__(self, loop: object, label: str, block: int, body: list[int], fmas: list[Fma], loads: list[Load],
                 phases: list[Phase], first: int, last: int, moved: list[int] | None = None,
                 dropped: list[int] | None = None, value_regs: set[int] | None = None,
                 accs: list[int] | None = None, whole_loop: bool = True, kept_waits: set[int] | None = None,
                 priorities: list[int] | None = None, clauses: dict[int, list[int]] | None = None):
        self.loop = loop
        self.label = label
        self.block = block
        self.body = body
        self.fmas = fmas
        self.loads = loads
        self.phases = phases
        self.first = first
        self.last = last
        self.moved = [] if moved is None else moved
        self.dropped = [] if dropped is None else dropped
        self.value_regs = set() if value_regs is None else value_regs
        self.accs = [] if accs is None else accs
        self.whole_loop = whole_loop
        self.kept_waits = set() if kept_waits is None else kept_waits
        self.priorities = [] if priorities is None else priorities
        self.clauses = {} if clauses is None else clauses

    @property
    def fma_instrs(self) -> list[int]:
        return sorted({f.index for f in self.fmas})

    # phase 0, for code that thinks of one outer product
    @property
    def a_values(self) -> list[Value]:
        return self.phases[0].a_values

    @property
    def b_values(self) -> list[Value]:
        return self.phases[0].b_values

    @property
    def n_fmas(self) -> int:
        return len(self.fmas)

    def old_accs(self) -> dict[tuple[int, int], int]:
        """(A index, B index) -> accumulator VGPR, from phase 0 (the same in every phase)."""
        ph = self.phases[0]
        return {(ai, bi): ph.acc(ai, bi) for ai in range(len(ph.a_values)) for bi in range(len(ph.b_values))}


def where(program, index: int) -> str:
    return f"{program.path}:{program.instrs[index].lineno}"


def _fma_of(ins, k: int) -> Fma | None:
    """The FMA a statement performs, or None when it is not a plain fp32 FMA."""
    stmt = ins.stmts[k]
    if stmt.mnemonic not in FMA_MNEMONICS:
        return None
    ops = stmt.operands
    if stmt.modifiers or any(op.kind != "vgpr" or op.count != 1 or op.neg or op.abs or op.half for op in ops):
        return None
    if stmt.mnemonic.startswith("v_fma_f32"):
        if len(ops) != 4 or ops[0].first != ops[3].first:
            return None
    elif len(ops) != 3:
        return None
    return Fma(ins.index, k, ops[0].first, (ops[1].first, ops[2].first))


def _plain_load(ins) -> Load | None:
    if ins.is_vopd or ins.opcode not in LOAD_DWORDS:
        return None
    stmt = ins.stmts[0]
    if len(stmt.operands) != 2:
        return None
    dst, addr = stmt.operands
    if dst.kind != "vgpr" or addr.kind != "vgpr" or addr.count != 1 or dst.count != LOAD_DWORDS[ins.opcode]:
        return None
    offset = 0
    for mod in stmt.modifiers:
        if mod.name != "offset" or mod.int_value() is None:
            return None
        offset = mod.int_value()
    return Load(ins.index, list(range(dst.first, dst.first + dst.count)), addr.text, offset)


def select_loop(analysis, label: str | None):
    """:meth:`isalint.model.cfg.CFG.select_loop`, what does not fit raised as :class:`NotAnFmaBlock`."""
    try:
        loop = analysis.cfg.select_loop(label)
    except NoSuchLoop as exc:
        raise NotAnFmaBlock(str(exc)) from None
    if loop is None:
        raise NotAnFmaBlock(f"{analysis.program.path}: the kernel has no loop to rewrite")
    return loop


class _MaskSet:
    """The VGPR numbers of a liveness mask, tested one at a time (no list of 256 made per instruction)."""

    def __init__(self, mask: int):
        self.mask = mask

    def __contains__(self, r: int) -> bool:
        return 0 <= r < VGPRS and bool((self.mask >> r) & 1)


def find_block(analysis, label: str | None = None) -> FmaBlock:
    """The FMA block of the chosen loop (the hottest when ``label`` is None); NotAnFmaBlock saying what
    does not fit."""
    program, cfg = analysis.program, analysis.cfg
    instrs = program.instrs
    loop = select_loop(analysis, label)
    name = cfg.loop_name(loop)
    for b in sorted(loop.blocks):
        for i in cfg.blocks[b].indices():
            if instrs[i].opaque:
                raise NotAnFmaBlock(f"{where(program, i)}: {instrs[i].problem}; cannot prove the rewrite safe")

    # The FMAs: all in one basic block of the loop.
    found_in: dict[int, list[tuple[int, list]]] = {}
    for b in sorted(loop.blocks):
        for i in cfg.blocks[b].indices():
            ins = instrs[i]
            found = [_fma_of(ins, k) for k in range(len(ins.stmts))]
            if any(found):
                found_in.setdefault(b, []).append((i, found))
    if not found_in:
        raise NotAnFmaBlock(f"{where(program, cfg.blocks[loop.header].first)}: loop {name} has no fp32 FMA to rewrite")
    block = max(found_in, key=lambda b: sum(len([f for f in fs if f]) for _, fs in found_in[b]))
    body = list(cfg.blocks[block].indices())
    whole_loop = loop.blocks == {block}
    if whole_loop:
        term = instrs[body[-1]]
        if term.branch_target() is None or program.labels.get(term.branch_target()) != body[0]:
            raise NotAnFmaBlock(f"{where(program, body[-1])}: loop {name} does not end with its back edge")
    fmas: list[Fma] = []
    mixed: list[int] = []
    for i, found in found_in[block]:
        if not all(found):
            mixed.append(i)
        fmas.extend(f for f in found if f)
    fma_instr = {f.index for f in fmas}
    fma_pos = [p for p, i in enumerate(body) if i in fma_instr]
    first, last = fma_pos[0], fma_pos[-1]

    # Reaching definitions inside the block (body order), VGPRs only.
    last_def: dict[int, int] = {}
    readers: dict[int, list[int]] = {}  # load instr -> instrs reading one of its dwords
    def_of_use: dict[tuple[int, int], int | None] = {}
    for i in body:
        ins = instrs[i]
        for reg in ins.uses:
            r = vgpr_number(reg)
            if r is None:
                continue
            d = last_def.get(r)
            def_of_use[(i, r)] = d
            if d is not None:
                readers.setdefault(d, []).append(i)
        for reg in ins.defs:
            r = vgpr_number(reg)
            if r is not None:
                last_def[r] = i

    # Accumulators: read and written in the loop only by their FMAs.
    live = liveness(program)
    acc_set = {f.acc for f in fmas}
    for b in sorted(loop.blocks):
        for i in cfg.blocks[b].indices():
            ins = instrs[i]
            ignored = ignorable_reads(ins, _MaskSet(live.live_out_mask(i)))
            touched = ({vgpr_number(r) for r in ins.defs}
                       | ({vgpr_number(r) for r in ins.uses} - ignored)) & acc_set
            if not touched:
                continue
            if i not in fma_instr:
                r = min(touched)
                why = " (spilled to scratch)" if ins.klass.startswith("scratch") else ""
                raise NotAnFmaBlock(f"{where(program, i)}: accumulator v{r} is also used by '{ins.text()}'{why}")
            for k in range(len(ins.stmts)):
                f = _fma_of(ins, k)
                if f and set(f.srcs) & acc_set:
                    r = min(set(f.srcs) & acc_set)
                    raise NotAnFmaBlock(f"{where(program, i)}: accumulator v{r} is also an FMA source")
    chain: dict[int, list[Fma]] = {}
    for f in fmas:
        chain.setdefault(f.acc, []).append(f)
    counts = {len(c) for c in chain.values()}
    if len(counts) != 1:
        raise NotAnFmaBlock(f"{where(program, body[first])}: the accumulators are updated {min(counts)} to "
                         f"{max(counts)} times per iteration of {name}; not a sequence of outer products")
    n_phases = counts.pop()
    phase_of = {(f.index, f.stmt): n for c in chain.values() for n, f in enumerate(c)}
    if mixed:
        raise NotAnFmaBlock(f"{where(program, mixed[0])}: a VOPD pair mixes an FMA with another operation; "
                         "not supported")

    # Sources: defined in this block by a plain LDS load, read only by FMAs of one phase.
    loads: dict[int, Load] = {}
    for f in fmas:
        for r in f.srcs:
            d = def_of_use.get((f.index, r))
            if d is None:
                raise NotAnFmaBlock(f"{where(program, f.index)}: FMA source v{r} is not loaded in the same iteration "
                                 "(a software-pipelined or loop-invariant operand); not supported")
            if d not in loads:
                ld = _plain_load(instrs[d])
                if ld is None:
                    raise NotAnFmaBlock(f"{where(program, f.index)}: FMA source v{r} comes from "
                                     f"'{instrs[d].text()}', not a plain ds_load_b32/b64/b96/b128")
                loads[d] = ld
    load_phase: dict[int, int] = {}
    for f in fmas:
        for r in f.srcs:
            d = def_of_use[(f.index, r)]
            ph = phase_of[(f.index, f.stmt)]
            if load_phase.setdefault(d, ph) != ph:
                raise NotAnFmaBlock(f"{where(program, d)}: a value loaded at this line feeds FMAs of two different "
                                 "outer products; not supported")
    for d, ld in loads.items():
        for reader in readers.get(d, []):
            if reader not in fma_instr:
                raise NotAnFmaBlock(f"{where(program, reader)}: '{instrs[reader].text()}' reads a value loaded "
                                 f"for the FMAs at line {instrs[d].lineno}")
    order = sorted(loads, key=body.index)
    load_list = [loads[d] for d in order]
    for n, ld in enumerate(load_list):
        ld.order = n
    pos_of_load = {ld.index: n for n, ld in enumerate(load_list)}

    def value_of(f: Fma, r: int) -> Value:
        d = def_of_use[(f.index, r)]
        return Value(pos_of_load[d], loads[d].regs.index(r), r)

    used: set[tuple[int, int]] = set()
    per_phase: list[list[tuple[Value, Value, Fma]]] = [[] for _ in range(n_phases)]
    for f in fmas:
        v0, v1 = value_of(f, f.srcs[0]), value_of(f, f.srcs[1])
        if v0.key == v1.key:
            raise NotAnFmaBlock(f"{where(program, f.index)}: FMA squares one loaded value; not an outer product")
        used.update((v0.key, v1.key))
        per_phase[phase_of[(f.index, f.stmt)]].append((v0, v1, f))
    for ld in load_list:
        for k in range(len(ld.regs)):
            if (ld.order, k) not in used:
                raise NotAnFmaBlock(f"{where(program, ld.index)}: v{ld.regs[k]} is loaded but no FMA reads it")

    phases: list[Phase] = []
    rows0: set[frozenset] | None = None
    for n, pairs in enumerate(per_phase):
        sides = _split(program, body[first], pairs)
        side0, side1 = sides
        if rows0 is None:
            # "A" is the smaller side (the column of A in a GEMM); ties go to the first loaded.
            if len(side1) < len(side0) or (len(side1) == len(side0) and min(side1) < min(side0)):
                side0, side1 = side1, side0
            rows0 = _rows(pairs, set(side0))
        else:
            if _rows(pairs, set(side0)) != rows0:
                side0, side1 = side1, side0
            if _rows(pairs, set(side0)) != rows0:
                raise NotAnFmaBlock(f"{where(program, pairs[0][2].index)}: outer product {n + 1} of {n_phases} does "
                                 "not update the accumulators in the same rows and columns as the first")
        a_keys = set(side0)
        values = {v.key: v for v0, v1, _ in pairs for v in (v0, v1)}
        cells: dict[tuple[tuple[int, int], tuple[int, int]], int] = {}
        for v0, v1, f in pairs:
            a, b = (v0, v1) if v0.key in a_keys else (v1, v0)
            if (a.key, b.key) in cells:
                raise NotAnFmaBlock(f"{where(program, f.index)}: v{a.reg} * v{b.reg} is accumulated twice")
            cells[(a.key, b.key)] = f.acc
        if len(cells) != len(side0) * len(side1) or len(cells) != len(chain):
            raise NotAnFmaBlock(f"{where(program, pairs[0][2].index)}: {len(cells)} FMAs over {len(side0)} x "
                             f"{len(side1)} values: not a complete outer product")
        phase = Phase(n, [values[k] for k in sorted(side0)], [values[k] for k in sorted(side1)], cells)
        if phases:
            _align(program, phase, phases[0])
        _check_pairs(program, phase, load_list)
        if phases and (len(phase.a_values), len(phase.b_values)) != (len(phases[0].a_values),
                                                                      len(phases[0].b_values)):
            raise NotAnFmaBlock(f"{where(program, pairs[0][2].index)}: the outer products differ in shape")
        phases.append(phase)
        for ld in load_list:
            if load_phase[ld.index] == n:
                ld.side = "A" if (ld.order, 0) in a_keys else "B"
                phase.loads.append(ld.order)
                if any(((ld.order, k) in a_keys) != (ld.side == "A") for k in range(len(ld.regs))):
                    raise NotAnFmaBlock(f"{where(program, ld.index)}: one load feeds both FMA operands; "
                                     "not supported")

    # What sits between the FMAs.
    moved: list[int] = []
    dropped: list[int] = []
    value_regs = {r for ld in load_list for r in ld.regs}
    block_loads = {ld.index for ld in load_list}
    addr_regs = {vgpr_number(ld.addr) for ld in load_list}
    kept_waits: list[int] = []
    priorities: list[int] = []
    clauses = _clauses(instrs, body, block_loads)
    for p in range(first, last + 1):
        i = body[p]
        if i in fma_instr or i in block_loads:
            continue
        ins = instrs[i]
        if ins.opcode == PRIORITY:
            priorities.append(i)
            continue
        if ins.opcode == CLAUSE and i in clauses:
            continue
        if ins.klass == "barrier" and not any(j in block_loads for j in body[p + 1: last + 1]):
            # A barrier the compiler hoisted among the FMAs (for the next iteration's LDS writes)
            # may move after them: FMAs touch no memory, and no load of the block follows it.
            # The waits right before it move with it, whole.
            q = p - 1
            while q >= first and instrs[body[q]].klass == "waitcnt":
                kept_waits.append(body[q])
                q -= 1
            moved.append(i)
            continue
        if ins.klass not in MOVABLE:
            raise NotAnFmaBlock(f"{where(program, i)}: '{ins.text()}' sits inside the FMA block and cannot be moved")
        regs = {vgpr_number(r) for r in list(ins.defs) + list(ins.uses)} - {None}
        if regs & (acc_set | value_regs):
            raise NotAnFmaBlock(f"{where(program, i)}: '{ins.text()}' inside the FMA block touches its registers")
        if {vgpr_number(r) for r in ins.defs} & addr_regs:
            raise NotAnFmaBlock(f"{where(program, i)}: '{ins.text()}' inside the FMA block changes an LDS address")
        if ins.klass in DROPPED_IN_BLOCK or ins.klass == "waitcnt":
            dropped.append(i)  # hints go; waits are re-derived (the lgkm part from the loads, the rest kept)
        else:
            moved.append(i)
    fb = FmaBlock(loop, name, block, body, fmas, load_list, phases, first, last, moved, dropped, value_regs,
                  sorted(acc_set), whole_loop)
    fb.kept_waits = set(kept_waits)
    fb.priorities = priorities
    fb.clauses = clauses
    return fb


def clause_length(ins) -> int | None:
    """How many instructions ``s_clause N`` groups (N + 1), None when not readable."""
    ops = ins.stmts[0].operands
    if ins.opcode != CLAUSE or len(ops) != 1 or ops[0].kind != "int":
        return None
    return int(ops[0].value) + 1


def _clauses(instrs, body: list[int], block_loads: set[int]) -> dict[int, list[int]]:
    """The body's ``s_clause`` whose clause is made of the block's loads only -> those loads."""
    out: dict[int, list[int]] = {}
    for pos, i in enumerate(body):
        n = clause_length(instrs[i])
        if n is None:
            continue
        covered = body[pos + 1: pos + 1 + n]
        if len(covered) == n and all(j in block_loads for j in covered):
            out[i] = covered
    return out


def _split(program, at: int, pairs) -> tuple[list, list]:
    """Two-colour the values of one outer product: (side 0 keys, side 1 keys)."""
    adj: dict[tuple[int, int], set[tuple[int, int]]] = {}
    for v0, v1, _ in pairs:
        adj.setdefault(v0.key, set()).add(v1.key)
        adj.setdefault(v1.key, set()).add(v0.key)
    colour: dict[tuple[int, int], int] = {}
    start = min(adj)
    colour[start] = 0
    stack = [start]
    while stack:
        x = stack.pop()
        for y in adj[x]:
            if y not in colour:
                colour[y] = 1 - colour[x]
                stack.append(y)
            elif colour[y] == colour[x]:
                raise NotAnFmaBlock(f"{where(program, at)}: the FMA sources do not split into a column "
                                 "and a row (not an outer product)")
    if len(colour) != len(adj):
        raise NotAnFmaBlock(f"{where(program, at)}: the FMAs form several independent products; not supported")
    return (sorted(k for k, c in colour.items() if c == 0), sorted(k for k, c in colour.items() if c == 1))


def _lines_of(phase: Phase) -> tuple[dict, dict]:
    """{A key: accumulators of its row}, {B key: accumulators of its column}."""
    rows: dict = {}
    cols: dict = {}
    for (a, b), acc in phase.cells.items():
        rows.setdefault(a, set()).add(acc)
        cols.setdefault(b, set()).add(acc)
    return ({k: frozenset(v) for k, v in rows.items()}, {k: frozenset(v) for k, v in cols.items()})


def _align(program, phase: Phase, first: Phase) -> None:
    """Order a later product's values like the first's: value n multiplies the same row/column."""
    rows0, cols0 = _lines_of(first)
    rows, cols = _lines_of(phase)
    index_a = {rows0[v.key]: n for n, v in enumerate(first.a_values)}
    index_b = {cols0[v.key]: n for n, v in enumerate(first.b_values)}
    try:
        phase.a_values = sorted(phase.a_values, key=lambda v: index_a[rows[v.key]])
        phase.b_values = sorted(phase.b_values, key=lambda v: index_b[cols[v.key]])
    except KeyError:
        raise NotAnFmaBlock(f"{program.path}: outer product {phase.index + 1} does not update the accumulators in "
                         "the same rows and columns as the first") from None


def _check_pairs(program, phase: Phase, loads: list[Load]) -> None:
    """Values 2m and 2m+1 of each side must be dwords (d, d+1), d even, of one load: one ds_load_b64."""
    for values in (phase.a_values, phase.b_values):
        for m in range(0, len(values) - 1, 2):
            x, y = values[m], values[m + 1]
            if x.load != y.load or x.dword % 2 or y.dword != x.dword + 1:
                ld = loads[x.load]
                raise NotAnFmaBlock(f"{where(program, ld.index)}: the values of outer product {phase.index + 1} do "
                                 "not come in 64-bit pairs in the order of the first product; not supported")
        if len(values) % 2:
            ld = loads[values[-1].load]
            raise NotAnFmaBlock(f"{where(program, ld.index)}: an odd number of loaded values ({len(values)}) on one "
                             "side of an outer product; the FMAs cannot all pair")


def _rows(pairs, a_keys: set) -> set[frozenset]:
    """The accumulators grouped by the A value they multiply."""
    rows: dict[tuple[int, int], set[int]] = {}
    for v0, v1, f in pairs:
        a = v0 if v0.key in a_keys else v1
        rows.setdefault(a.key, set()).add(f.acc)
    return {frozenset(r) for r in rows.values()}
