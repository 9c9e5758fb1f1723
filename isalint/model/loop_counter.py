"""A loop's counter: the SGPR its back edge compares, and its exact trip count.

A loop is counted when one SGPR (the counter) holds a constant on every way into the loop, changes by
one add of a constant per iteration (an instruction whose definition moves it by a constant:
``s_add_[iu]32``, ``s_addk_i32``, ``s_sub_[iu]32``), and the
compare whose SCC the exiting branch reads sets it against a bound (a constant, or an SGPR that holds
a constant on entry and that the loop leaves alone). The trip count is then found by running that
loop control on those constants with the compare's exact semantics: 32-bit wrap-around, signed or
unsigned, an ``s_cmpk`` immediate extended as its opcode says (sign for ``_i32``, zero for ``_u32``:
the RDNA3 ISA guide's SOPK opcode descriptions).

:mod:`isalint.model.hotness` weighs code by these counts; ``fix --unroll`` proves its loop with them and
turns the reasons given here into its refusals.
"""
from __future__ import annotations

from ..isa.semantics import BindingError, ExactAlgebra, binding
from .reaching import reaching_defs

MASK = 0xFFFFFFFF
RELATIONS = ("eq", "lg", "gt", "ge", "lt", "le")
_MIRROR = {"eq": "eq", "lg": "lg", "gt": "lt", "ge": "le", "lt": "gt", "le": "ge"}
_EXACT = ExactAlgebra()


class NotCounted(Exception):
    """Why a loop's trip count cannot be found: ``index`` the instruction at fault, ``reason`` a phrase
    that completes "'<instruction>' ..." or stands alone."""

    def __init__(self, index: int, reason: str):
        super().__init__(reason)
        self.index = index
        self.reason = reason


def read_compare(program, index: int) -> tuple[str, str, str, int | str]:
    """(relation, ``i32``/``u32``, counter SGPR, bound) of the compare at ``index``; the bound is a 32-bit
    constant or the name of the SGPR that holds it. Raises :class:`NotCounted`."""
    ins = program.instrs[index]
    parts = ins.opcode.split("_")  # s, cmp|cmpk, relation, type
    if len(parts) != 4 or parts[0] != "s" or parts[1] not in ("cmp", "cmpk"):
        raise NotCounted(index, f"'{ins.text()}' is not a compare")
    rel, kind = parts[2], parts[3]
    if rel not in RELATIONS or kind not in ("i32", "u32"):
        raise NotCounted(index, f"'{ins.text()}' is not a 32-bit integer compare")
    ops = ins.stmts[0].operands
    if len(ops) != 2:
        raise NotCounted(index, f"'{ins.text()}' is not a 32-bit integer compare")
    a, b = ops
    if a.kind == "int" and b.kind == "sgpr":
        a, b, rel = b, a, _MIRROR[rel]
    if a.kind != "sgpr" or a.count != 1:
        raise NotCounted(index, f"'{ins.text()}' does not compare an SGPR")
    if b.kind == "sgpr" and b.count == 1 and parts[1] == "cmp":
        return rel, kind, a.text, b.text
    if b.kind != "int":
        raise NotCounted(index, f"'{ins.text()}' compares {a.text} with {b.text}, which is not a constant")
    bound = int(b.value)
    if parts[1] == "cmpk":
        bound = sext16(bound) if kind == "i32" else bound & 0xFFFF
    return rel, kind, a.text, bound & MASK


def constant_step(ins, reg: str) -> int | None:
    """K when ``ins`` is ``reg = reg + K`` (K as a 32-bit word), else None."""
    return constant_add(ins, reg, reg)


_PROBES = (0, 0x12345, 0x8000_0000, 0xFFFF_FFF0)  # values of the source register the definition is run at


def constant_add(ins, dst: str, src: str) -> int | None:
    """K when ``ins`` writes ``dst = src + K`` (mod 2**32) for every value of the SGPR ``src``, else None.

    The instruction's definition (:mod:`isalint.isa.semantics`) is run on exact integers at several values
    of ``src``, every other input being a constant operand: an add, a subtract or ``s_addk_i32`` of a
    constant moves each value by the same K; anything else does not (or reads a register or SCC)."""
    if ins.is_vopd or ins.opaque or len(ins.stmts) != 1:
        return None
    stmt, info = ins.stmts[0], ins.infos[0]
    ops = stmt.operands
    try:
        b = binding(info.mnemonic if info is not None else stmt.mnemonic, len(ops))
    except BindingError:
        return None
    out = next((k for k, slot in enumerate(b.outs) if slot.kind == "operand" and slot.type in ("u32", "i32")
                and ops[slot.ref].kind == "sgpr" and ops[slot.ref].count == 1 and ops[slot.ref].text == dst), None)
    if out is None or ins.klass != "salu":
        return None
    steps = set()
    for x in _PROBES:
        args = []
        for slot in b.ins:
            op = ops[slot.ref] if slot.kind in ("operand", "dest") else None
            if op is None:
                return None  # reads SCC or EXEC
            if op.kind == "sgpr" and op.count == 1 and op.text == src:
                args.append(x)
            elif op.kind == "int" and slot.kind == "operand":
                v = int(op.value)
                if slot.type in ("i16", "u16"):
                    v = sext16(v) if slot.type == "i16" else v & 0xFFFF
                args.append(v & MASK)
            else:
                return None
        got = b.op.fn(_EXACT, *args)[out]
        if got is None:
            return None
        steps.add((got - x) & MASK)
    return steps.pop() if len(steps) == 1 else None


def constant_set(ins, reg: str) -> int | None:
    """The 32-bit constant ``ins`` writes to ``reg`` from constant operands alone (``s_mov_b32``,
    ``s_movk_i32``, any SALU opcode whose definition has only constants in: ``s_lshl_b32 s2, 1, 4``), else
    None."""
    if ins.is_vopd or ins.opaque or ins.klass != "salu" or len(ins.stmts) != 1:
        return None
    stmt, info = ins.stmts[0], ins.infos[0]
    ops = stmt.operands
    try:
        b = binding(info.mnemonic if info is not None else stmt.mnemonic, len(ops))
    except BindingError:
        return None
    out = next((k for k, slot in enumerate(b.outs) if slot.kind == "operand" and slot.type in ("u32", "i32")
                and ops[slot.ref].kind == "sgpr" and ops[slot.ref].count == 1 and ops[slot.ref].text == reg), None)
    if out is None:
        return None
    args = []
    for slot in b.ins:
        op = ops[slot.ref] if slot.kind == "operand" else None
        if op is None or op.kind != "int":
            return None
        v = int(op.value)
        if slot.type in ("i16", "u16"):
            v = sext16(v) if slot.type == "i16" else v & 0xFFFF
        args.append(v & MASK)
    return b.op.fn(_EXACT, *args)[out]


def entry_value(program, cfg, loop, reg: str, what: str | None = None) -> int:
    """The constant ``reg`` holds on every edge into ``loop`` (``what`` names it in the reason).
    Raises :class:`NotCounted`."""
    instrs = program.instrs
    header = cfg.blocks[loop.header]
    who = f"{reg} ({what})" if what else reg
    writes: set[int] = set()
    for p in header.preds:
        if p in loop.blocks:
            continue
        last = cfg.blocks[p].last - 1
        writes.update([last] if reg in instrs[last].defs else reaching_defs(program, last, reg))
    if not writes or -1 in writes:
        raise NotCounted(header.first, f"{who} enters the loop with a value the kernel does not set on every way "
                                       "in (an argument, or set elsewhere)")
    values: dict[int, int] = {}
    for i in sorted(writes):
        value = constant_set(instrs[i], reg)
        if value is None:
            raise NotCounted(i, f"{who} enters the loop with the value of '{instrs[i].text()}', not a constant")
        values[i] = value
    if len(set(values.values())) != 1:
        shown = ", ".join(f"{signed(v)} (line {instrs[i].lineno})" for i, v in values.items())
        raise NotCounted(header.first, f"{who} enters the loop with different values: {shown}")
    return next(iter(values.values()))


def holds(rel: str, kind: str, a: int, b: int) -> bool:
    """``a REL b`` as ``s_cmp_REL_KIND`` computes it on 32-bit words."""
    if kind == "i32":
        a, b = signed(a), signed(b)
    return {"eq": a == b, "lg": a != b, "gt": a > b, "ge": a >= b, "lt": a < b, "le": a <= b}[rel]


def count_trips(init: int, step: int, rel: str, kind: str, bound: int, continue_on: bool,
                step_before_compare: bool, limit: int) -> int | None:
    """Iterations until the compare stops the loop (``continue_on``: the compare result that branches
    back), or None when it runs ``limit`` times without stopping."""
    for t in range(limit):
        value = (init + step * (t + step_before_compare)) & MASK
        if holds(rel, kind, value, bound) != continue_on:
            return t + 1
    return None


def sext16(v: int) -> int:
    v &= 0xFFFF
    return v - 0x10000 if v & 0x8000 else v


def signed(v: int) -> int:
    v &= MASK
    return v - (1 << 32) if v & 0x80000000 else v
