"""Folding a constant into the immediate offset of an LDS instruction.

An LDS access goes to the address VGPR plus the instruction's unsigned offset field(s)
(:mod:`isalint.hw.encoding`), so ``ds_load v, (a + c) offset:o`` is the same access as
``ds_load v, a offset:(o + c)`` whenever ``o + c`` fits the field: both sums are the same
32-bit address.
"""
from __future__ import annotations

from ...hw.encoding import DS_OFFSET2_MAX, DS_OFFSET_MAX, ds_offset2_scale


def foldable(ins) -> bool:
    """An LDS load or store whose address operand may take a folded constant."""
    if ins.is_vopd or ins.klass != "lds" or ins.opaque:
        return False
    name = ins.opcode
    parts = name.split("_")
    if len(parts) < 3 or parts[1] not in ("load", "store", "read", "write") or "addtid" in parts:
        return False
    if ins.stmts[0].modifier("gds") is not None:
        return False
    return address_operand(ins) is not None


def address_operand(ins):
    for slot in ins.slots[0]:
        if slot.name == "addr" and slot.operand.kind == "vgpr" and slot.operand.count == 1:
            return slot.operand
    return None


def offsets(ins) -> dict[str, int]:
    """The instruction's offset fields in bytes added to the address, by modifier name."""
    stmt = ins.stmts[0]
    if "2addr" in ins.opcode:
        scale = ds_offset2_scale(ins.opcode) or 0
        return {name: scale * ((m.int_value() or 0) if (m := stmt.modifier(name)) else 0)
                for name in ("offset0", "offset1")}
    m = stmt.modifier("offset")
    return {"offset": (m.int_value() or 0) if m else 0}


def folded_fields(ins, constant: int) -> dict[str, int] | None:
    """The new offset fields (in the units the instruction writes them) that add ``constant``
    bytes to every address of ``ins``, or None when they do not fit."""
    if "2addr" in ins.opcode:
        scale = ds_offset2_scale(ins.opcode)
        if not scale or constant % scale:
            return None
        out = {}
        for name, byte_offset in offsets(ins).items():
            value = (byte_offset + constant) // scale
            if not 0 <= value <= DS_OFFSET2_MAX:
                return None
            out[name] = value
        return out
    value = offsets(ins)["offset"] + constant
    if not 0 <= value <= DS_OFFSET_MAX:
        return None
    return {"offset": value}


def rewrite(ins, text: str, base: str, fields: dict[str, int]) -> str:
    """``text`` (the instruction's line) with the address register ``base`` and the offset fields
    ``fields`` (written in the order the assembler expects, a field of 0 left out)."""
    stmt = ins.stmts[0]
    addr = address_operand(ins)
    edits: list[tuple[int, int, str]] = [(addr.col - 1, addr.col - 1 + len(addr.text), base)]
    for name in fields:
        m = stmt.modifier(name)
        if m is not None:  # removed with the blank before it; written again below
            start = m.col - 1
            while start > 0 and text[start - 1] in " \t":
                start -= 1
            edits.append((start, m.col - 1 + len(m.text), ""))
    new = " ".join(f"{name}:{value}" for name, value in fields.items() if value)
    if new:
        at = stmt.end_col - 1
        edits.append((at, at, " " + new))
    for start, end, repl in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        text = text[:start] + repl + text[end:]
    return text
