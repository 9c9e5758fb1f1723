"""A loop's counter: the SGPR its back edge compares, and its exact trip count.

A loop is counted when one SGPR (the counter) holds a constant on every way into the loop, changes by
one add of a constant per iteration (``s_add_[iu]32``, ``s_addk_i32``, ``s_sub_[iu]32``), and the
compare whose SCC the exiting branch reads sets it against a bound (a constant, or an SGPR that holds
a constant on entry and that the loop leaves alone). The trip count is then found by running that
loop control on those constants with the compare's exact semantics: 32-bit wrap-around, signed or
unsigned, an ``s_cmpk`` immediate extended as its opcode says (sign for ``_i32``, zero for ``_u32``:
the RDNA3 ISA guide's SOPK opcode descriptions).

:mod:`isalint.model.hotness` weighs code by these counts; ``fix --unroll`` proves its loop with them and
turns the reasons given here into its refusals.
"""
from __future__ import annotations

from .reaching import reaching_defs

MASK = 0xFFFFFFFF
RELATIONS = ("eq", "lg", "gt", "ge", "lt", "le")
_MIRROR = {"eq": "eq", "lg": "lg", "gt": "lt", "ge": "le", "lt": "gt", "le": "ge"}
# Adds of a constant to an SGPR: opcode -> sign of the constant.
_SALU_ADDS = {"s_add_i32": 1, "s_add_u32": 1, "s_addk_i32": 1, "s_sub_i32": -1, "s_sub_u32": -1}


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
    sign = _SALU_ADDS.get(ins.opcode)
    if sign is None or ins.is_vopd:
        return None
    ops = ins.stmts[0].operands
    if ins.opcode == "s_addk_i32":
        if len(ops) == 2 and ops[0].text == reg and ops[1].kind == "int":
            return sext16(int(ops[1].value)) & MASK
        return None
    if len(ops) != 3 or ops[0].text != reg:
        return None
    srcs = [ops[1], ops[2]]
    if sign < 0:  # s_sub: only reg - K
        if srcs[0].text == reg and srcs[1].kind == "int":
            return (-int(srcs[1].value)) & MASK
        return None
    for x, y in (srcs, srcs[::-1]):
        if x.text == reg and y.kind == "int":
            return int(y.value) & MASK
    return None


def constant_set(ins, reg: str) -> int | None:
    """The 32-bit constant ``ins`` writes to ``reg`` (``s_mov_b32``, ``s_movk_i32``), else None."""
    if ins.is_vopd or ins.opcode not in ("s_mov_b32", "s_movk_i32"):
        return None
    ops = ins.stmts[0].operands
    if len(ops) != 2 or ops[0].text != reg or ops[1].kind != "int":
        return None
    v = int(ops[1].value)
    return (sext16(v) if ins.opcode == "s_movk_i32" else v) & MASK


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
