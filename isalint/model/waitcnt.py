"""Decoding of the wait instructions into per-counter thresholds.

RDNA3 ISA guide, section 5.x "Data dependency resolution": ``s_waitcnt`` waits
until each named counter is at or below its value; a counter that is not named
is not waited on. ``S_WAITCNT`` packs vmcnt in bits [15:10], lgkmcnt in
[9:4] and expcnt in [2:0] on gfx11; ``s_waitcnt_vscnt`` (and the
``_vmcnt``/``_lgkmcnt``/``_expcnt`` forms) take an SGPR (or null) plus an
immediate.
"""
from __future__ import annotations

COUNTER_MAX = {"vmcnt": 63, "lgkmcnt": 63, "expcnt": 7, "vscnt": 63}
_SPLIT_FORMS = {
    "s_waitcnt_vscnt": "vscnt",
    "s_waitcnt_vmcnt": "vmcnt",
    "s_waitcnt_lgkmcnt": "lgkmcnt",
    "s_waitcnt_expcnt": "expcnt",
}


def wait_thresholds(instr) -> dict[str, int] | None:
    """{counter: value to wait down to} for a wait instruction, else None (a new dict each call)."""
    stmt = instr.stmts[0]
    known = _THRESHOLDS.get(id(stmt))
    if known is not None and known[0] is stmt:
        return dict(known[1]) if known[1] is not None else None
    out = _thresholds(stmt)
    if len(_THRESHOLDS) >= 1 << 14:
        _THRESHOLDS.clear()
    _THRESHOLDS[id(stmt)] = (stmt, out)  # the entry keeps the statement, and so its id, alive
    return dict(out) if out is not None else None


# A statement's thresholds, worked out once: the parser gives every line of one text the same
# statement, and the analyses ask about each wait again and again.
_THRESHOLDS: dict[int, tuple] = {}


def _thresholds(stmt) -> dict[str, int] | None:
    name = stmt.mnemonic
    if name == "s_waitcnt":
        out: dict[str, int] = {}
        for op in stmt.operands:
            if op.kind == "func":
                counter = op.file.removesuffix("_sat")
                inner = op.text[op.text.index("(") + 1: -1]
                try:
                    out[counter] = int(inner, 0)
                except ValueError:
                    return None
            elif op.kind == "int":
                v = int(op.value) & 0xFFFF
                out = {"vmcnt": (v >> 10) & 0x3F, "lgkmcnt": (v >> 4) & 0x3F, "expcnt": v & 0x7}
        return {c: v for c, v in out.items() if v < COUNTER_MAX.get(c, 1 << 30)}
    if name in _SPLIT_FORMS:
        counter = _SPLIT_FORMS[name]
        # An SGPR operand other than null is not statically known; the immediate alone is used.
        imm = next((op for op in reversed(stmt.operands) if op.kind == "int"), None)
        return {counter: int(imm.value)} if imm is not None else None
    return None


def waitcnt_text(thresholds: dict[str, int]) -> str:
    order = ("vmcnt", "expcnt", "lgkmcnt")
    return " ".join(f"{c}({thresholds[c]})" for c in order if c in thresholds)
