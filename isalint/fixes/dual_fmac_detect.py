"""Finding the FMA block of a loop: the outer product the ``--dual-fmac`` pass rewrites.

What is recognised, and why each condition is needed for the rewrite to be provable:

* the loop body is one basic block ending in the branch back to its header, with no
  instruction the model does not know;
* the FMA statements (``v_fmac_f32`` in any encoding, ``v_dual_fmac_f32`` halves, and
  ``v_fma_f32 d, a, b, d``) have plain VGPR operands, no modifiers;
* every accumulator is read and written in the loop only by its one FMA (so it can live in
  any register while the loop runs);
* every FMA source is loaded in the same iteration by a plain ``ds_load_b32/b64/b96/b128``
  and is read by nothing but FMAs (so the loads may be re-targeted and split);
* the sources split into two sets, "A" and "B", and the FMAs are exactly the |A| x |B|
  products, each once (one outer product per iteration);
* between the first and the last FMA there are only waits, ALU instructions that touch
  none of these registers, and scheduling hints.

Anything else raises :class:`~isalint.fixes.FixRefused` with the line and the reason.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import FixRefused

FMA_MNEMONICS = {"v_fmac_f32", "v_fmac_f32_e32", "v_fmac_f32_e64", "v_dual_fmac_f32", "v_fma_f32", "v_fma_f32_e64"}
LOAD_DWORDS = {"ds_load_b32": 1, "ds_load_b64": 2, "ds_load_b96": 3, "ds_load_b128": 4}
# Classes that may sit between FMAs and be moved after the block (they touch none of its registers).
MOVABLE = {"salu", "valu", "waitcnt", "delay", "nop"}
DROPPED_IN_BLOCK = {"delay"}


@dataclass(frozen=True)
class Fma:
    index: int  # instruction index
    stmt: int  # statement within the instruction (0, or 1 for the Y half)
    acc: int  # accumulator VGPR number
    srcs: tuple[int, int]  # the two source VGPR numbers as written


@dataclass
class Load:
    index: int  # instruction index
    regs: list[int]  # destination VGPRs, one per dword, in LDS address order
    addr: str  # the address operand as written
    offset: int  # the byte offset modifier (0 when absent)
    side: str = ""  # "A" or "B"
    order: int = 0  # position among the block's loads


@dataclass(frozen=True)
class Value:
    """One dword loaded from LDS and read by FMAs."""

    load: int  # position of its load in FmaBlock.loads
    dword: int  # dword within that load
    reg: int  # original VGPR

    @property
    def key(self) -> tuple[int, int]:
        return (self.load, self.dword)


@dataclass
class FmaBlock:
    loop: object
    label: str
    body: list[int]  # instruction indices of the loop body, in order
    fmas: list[Fma]
    loads: list[Load]
    a_values: list[Value]
    b_values: list[Value]
    cells: dict[tuple[tuple[int, int], tuple[int, int]], int]  # (A value key, B value key) -> acc VGPR
    first: int  # body position of the first FMA instruction
    last: int  # body position of the last FMA instruction
    moved: list[int] = field(default_factory=list)  # instr indices inside the FMA span moved after it
    dropped: list[int] = field(default_factory=list)  # waits / hints inside the span that are re-derived
    value_regs: set[int] = field(default_factory=set)
    accs: list[int] = field(default_factory=list)

    @property
    def fma_instrs(self) -> list[int]:
        return sorted({f.index for f in self.fmas})


def vgpr_number(reg: str) -> int | None:
    if reg.startswith("v") and reg[1:].isdigit():
        return int(reg[1:])
    return None


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
    cfg = analysis.cfg
    if label:
        loop = cfg.find_loop(label)
        if loop is None:
            names = ", ".join(cfg.blocks[lp.header].label or f"block {lp.header}" for lp in cfg.loops) or "none"
            raise FixRefused(f"no loop headed by label {label} (loops: {names})")
        return loop
    loop = cfg.hottest_loop()
    if loop is None:
        raise FixRefused(f"{analysis.program.path}: the kernel has no loop to rewrite")
    return loop


def find_block(analysis, label: str | None = None) -> FmaBlock:
    """The FMA block of the chosen loop, or FixRefused saying what does not fit."""
    program, cfg = analysis.program, analysis.cfg
    loop = select_loop(analysis, label)
    name = cfg.blocks[loop.header].label or f"block{loop.header}"
    header = cfg.blocks[loop.header]
    if len(loop.blocks) != 1:
        raise FixRefused(f"{program.path}:{program.instrs[header.first].lineno}: loop {name} spans "
                         f"{len(loop.blocks)} basic blocks; the pass rewrites a loop whose body is one block")
    body = list(header.indices())
    instrs = program.instrs
    for i in body:
        if instrs[i].opaque:
            raise FixRefused(f"{where(program, i)}: {instrs[i].problem}; cannot prove the rewrite safe")
    term = instrs[body[-1]]
    if term.branch_target() is None or program.labels.get(term.branch_target()) != header.first:
        raise FixRefused(f"{where(program, body[-1])}: loop {name} does not end with its back edge")

    # FMA statements and every other access, per register, in body order.
    fmas: list[Fma] = []
    mixed: list[int] = []
    for pos, i in enumerate(body):
        ins = instrs[i]
        found = [_fma_of(ins, k) for k in range(len(ins.stmts))]
        if any(found):
            if not all(found):
                mixed.append(i)
            fmas.extend(f for f in found if f)
    if not fmas:
        raise FixRefused(f"{where(program, header.first)}: loop {name} has no fp32 FMA to rewrite")
    fma_instr = {f.index for f in fmas}
    fma_pos = [p for p, i in enumerate(body) if i in fma_instr]
    first, last = fma_pos[0], fma_pos[-1]

    # Reaching definitions inside one iteration (body order), VGPRs only.
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

    # Accumulators: each read and written in the loop by exactly one FMA and nothing else.
    acc_set = {f.acc for f in fmas}
    for i in body:
        ins = instrs[i]
        touched = {vgpr_number(r) for r in list(ins.defs) + list(ins.uses)} & acc_set
        if not touched:
            continue
        if i not in fma_instr:
            r = min(touched)
            why = " (spilled to scratch)" if ins.klass.startswith("scratch") else ""
            raise FixRefused(f"{where(program, i)}: accumulator v{r} is also used by '{ins.text()}'{why}")
        for k in range(len(ins.stmts)):
            f = _fma_of(ins, k)
            if f and set(f.srcs) & acc_set:
                r = min(set(f.srcs) & acc_set)
                raise FixRefused(f"{where(program, i)}: accumulator v{r} is also an FMA source")

    accs: dict[int, Fma] = {}
    for f in fmas:
        if f.acc in accs:
            raise FixRefused(f"{where(program, f.index)}: accumulator v{f.acc} is updated more than once per "
                             f"iteration of {name} (an unrolled k loop); the pass handles one outer product "
                             "per iteration")
        accs[f.acc] = f
    if mixed:
        raise FixRefused(f"{where(program, mixed[0])}: a VOPD pair mixes an FMA with another operation; "
                         "not supported")

    # Sources: defined in this iteration by a plain LDS load, read only by FMAs.
    loads: dict[int, Load] = {}
    for f in fmas:
        for r in f.srcs:
            d = def_of_use.get((f.index, r))
            if d is None:
                raise FixRefused(f"{where(program, f.index)}: FMA source v{r} is not loaded in the same iteration "
                                 "(a software-pipelined or loop-invariant operand); not supported")
            if d not in loads:
                ld = _plain_load(instrs[d])
                if ld is None:
                    raise FixRefused(f"{where(program, f.index)}: FMA source v{r} comes from "
                                     f"'{instrs[d].text()}', not a plain ds_load_b32/b64/b96/b128")
                loads[d] = ld
    for d, ld in loads.items():
        for reader in readers.get(d, []):
            if reader not in fma_instr:
                raise FixRefused(f"{where(program, reader)}: '{instrs[reader].text()}' reads a value loaded "
                                 f"for the FMAs at line {instrs[d].lineno}")
    order = sorted(loads)
    load_list = [loads[d] for d in order]
    for n, ld in enumerate(load_list):
        ld.order = n
    pos_of_load = {ld.index: n for n, ld in enumerate(load_list)}

    def value_of(f: Fma, r: int) -> Value:
        d = def_of_use[(f.index, r)]
        ld = loads[d]
        return Value(pos_of_load[d], ld.regs.index(r), r)

    # Every dword of every load must be read by some FMA.
    used: set[tuple[int, int]] = set()
    pairs: list[tuple[Value, Value, Fma]] = []
    for f in fmas:
        v0, v1 = value_of(f, f.srcs[0]), value_of(f, f.srcs[1])
        if v0.key == v1.key:
            raise FixRefused(f"{where(program, f.index)}: FMA squares one loaded value; not an outer product")
        used.update((v0.key, v1.key))
        pairs.append((v0, v1, f))
    for ld in load_list:
        for k in range(len(ld.regs)):
            if (ld.order, k) not in used:
                raise FixRefused(f"{where(program, ld.index)}: v{ld.regs[k]} is loaded but no FMA reads it")

    # Two-colour the value graph: A on one side, B on the other.
    adj: dict[tuple[int, int], set[tuple[int, int]]] = {}
    values: dict[tuple[int, int], Value] = {}
    for v0, v1, _ in pairs:
        adj.setdefault(v0.key, set()).add(v1.key)
        adj.setdefault(v1.key, set()).add(v0.key)
        values[v0.key], values[v1.key] = v0, v1
    colour: dict[tuple[int, int], int] = {}
    start = min(values)
    colour[start] = 0
    stack = [start]
    while stack:
        x = stack.pop()
        for y in adj[x]:
            if y not in colour:
                colour[y] = 1 - colour[x]
                stack.append(y)
            elif colour[y] == colour[x]:
                raise FixRefused(f"{where(program, body[first])}: the FMA sources do not split into a column "
                                 "and a row (not an outer product)")
    if len(colour) != len(values):
        raise FixRefused(f"{where(program, body[first])}: the FMAs form several independent products; "
                         "not supported")
    side0 = sorted(k for k, c in colour.items() if c == 0)
    side1 = sorted(k for k, c in colour.items() if c == 1)
    # "A" is the smaller side (the column of A in a GEMM); ties go to the first loaded.
    if len(side1) < len(side0) or (len(side1) == len(side0) and side1[0] < side0[0]):
        side0, side1 = side1, side0
    a_keys, b_keys = set(side0), set(side1)
    for ld in load_list:
        sides = {("A" if (ld.order, k) in a_keys else "B") for k in range(len(ld.regs))}
        if len(sides) != 1:
            raise FixRefused(f"{where(program, ld.index)}: one load feeds both FMA operands; not supported")
        ld.side = sides.pop()
    cells: dict[tuple[tuple[int, int], tuple[int, int]], int] = {}
    for v0, v1, f in pairs:
        a, b = (v0, v1) if v0.key in a_keys else (v1, v0)
        if (a.key, b.key) in cells:
            raise FixRefused(f"{where(program, f.index)}: v{a.reg} * v{b.reg} is accumulated twice")
        cells[(a.key, b.key)] = f.acc
    if len(cells) != len(a_keys) * len(b_keys):
        raise FixRefused(f"{where(program, body[first])}: {len(cells)} FMAs over {len(a_keys)} x {len(b_keys)} "
                         "values: not a complete outer product")

    # What sits between the FMAs.
    moved: list[int] = []
    dropped: list[int] = []
    value_regs = {r for ld in load_list for r in ld.regs}
    for p in range(first, last + 1):
        i = body[p]
        if i in fma_instr:
            continue
        ins = instrs[i]
        if ins.klass not in MOVABLE:
            raise FixRefused(f"{where(program, i)}: '{ins.text()}' sits inside the FMA block and cannot be moved")
        regs = {vgpr_number(r) for r in list(ins.defs) + list(ins.uses)} - {None}
        if regs & (acc_set | value_regs):
            raise FixRefused(f"{where(program, i)}: '{ins.text()}' inside the FMA block touches its registers")
        if ins.klass in DROPPED_IN_BLOCK:
            dropped.append(i)
        elif ins.klass == "waitcnt":
            dropped.append(i)  # re-derived: the lgkm part from the loads, the rest kept (see schedule)
        else:
            moved.append(i)
    # Loads must all be issued before the FMA span so the span can be reordered freely.
    for ld in load_list:
        if body.index(ld.index) > first:
            raise FixRefused(f"{where(program, ld.index)}: an LDS load is issued among the FMAs "
                             "(a software-pipelined body); not supported")
    a_vals = [values[k] for k in sorted(a_keys)]
    b_vals = [values[k] for k in sorted(b_keys)]
    return FmaBlock(loop, name, body, fmas, load_list, a_vals, b_vals, cells, first, last, moved, dropped,
                    value_regs, sorted(acc_set))
