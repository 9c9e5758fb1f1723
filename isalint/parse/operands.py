"""Classification of single operand and modifier words, shared by both parsers."""
from __future__ import annotations

import re
from functools import lru_cache

from ..hw.registers import SGPRS, TTMPS, VGPRS
from .nodes import SPECIAL_REGISTERS, Modifier, Operand

_REG_ONE = re.compile(r"(v|s|ttmp)(\d+)(\.[lh])?\Z")
_REG_RANGE = re.compile(r"(v|s|ttmp)\[(\d+)(?::(\d+))?\](\.[lh])?\Z")
_INT = re.compile(r"-?(?:0x[0-9a-fA-F]+|0b[01]+|\d+)\Z")
_FLOAT = re.compile(r"-?(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")
_SYMBOL = re.compile(r"[.A-Za-z_$][\w.$@]*\Z")
_QUOTED_SYMBOL = re.compile(r'"(?:[^"\\]|\\.)+"\Z')  # a symbol that is not an identifier: "non-uniform_load"
_FUNC = re.compile(r"([A-Za-z_]\w*)\((.*)\)\Z", re.S)
_MODIFIER = re.compile(r"([A-Za-z_]\w*)(?::(.*))?\Z", re.S)


# Instructions whose first operand is followed by a blank, not a comma: the export target
# (``exp pos0 v0, v1, v2, v3 done``, ``exp mrt0 off, off, off, off``). The word after it is the
# second operand, not a modifier.
SPACED_FIRST_OPERAND = frozenset({"exp"})

# The register files a gfx11 instruction can name (isalint.hw.registers).
REGISTER_LIMITS = {"v": VGPRS - 1, "s": SGPRS - 1, "ttmp": TTMPS - 1}


class OperandError(ValueError):
    """A word that cannot be an operand; ``col_offset`` is relative to the word."""

    def __init__(self, message: str, col_offset: int = 0):
        super().__init__(message)
        self.col_offset = col_offset


def classify_operand(text: str, col: int) -> Operand:
    """Turn the exact text of one operand into an :class:`Operand`."""
    kind, file, first, count, value, neg, absolute, half = _classify(text)
    return Operand(text, col, kind, file, first, count, value, neg, absolute, half)


@lru_cache(maxsize=4096)
def _classify(text: str) -> tuple:
    """The column-free part of an operand (operand texts repeat a lot in real kernels)."""
    op = _classify_uncached(text, 0)
    return (op.kind, op.file, op.first, op.count, op.value, op.neg, op.abs, op.half)


def _classify_uncached(text: str, col: int) -> Operand:
    body, neg, absolute = text, False, False
    if body.startswith("-") and len(body) > 1 and not _INT.match(body) and not _FLOAT.match(body):
        neg, body = True, body[1:]
    if len(body) > 2 and body.startswith("|") and body.endswith("|"):
        absolute, body = True, body[1:-1]
    elif body.startswith("abs(") and body.endswith(")"):
        absolute, body = True, body[4:-1]
    elif body.startswith("neg(") and body.endswith(")"):
        neg, body = True, body[4:-1]

    m = _REG_ONE.match(body)
    if m:
        file = m.group(1)
        _check_register_index(body, file, m.group(2))
        return Operand(text, col, _file_kind(file), file, int(m.group(2)), 1,
                       neg=neg, abs=absolute, half=m.group(3))
    m = _REG_RANGE.match(body)
    if m:
        file = m.group(1)
        _check_register_index(body, file, m.group(2))
        lo = int(m.group(2))
        hi = lo
        if m.group(3) is not None:
            _check_register_index(body, file, m.group(3))
            hi = int(m.group(3))
        if hi < lo:
            raise OperandError(f"register range {body} ends before it starts")
        return Operand(text, col, _file_kind(file), file, lo, hi - lo + 1,
                       neg=neg, abs=absolute, half=m.group(4))
    if body.startswith("[") and body.endswith("]") and "," in body:
        return _register_list(text, col, body)
    lowered = body.lower()
    if lowered in SPECIAL_REGISTERS:
        return Operand(text, col, "special", lowered, 0, len(SPECIAL_REGISTERS[lowered]),
                       neg=neg, abs=absolute)
    if lowered == "off":
        return Operand(text, col, "off")
    if _INT.match(body):
        if len(body) > 200:  # wider than any immediate; Python's int() refuses long digit strings anyway
            raise OperandError(f"number too long: '{text[:20]}...' ({len(text)} characters)")
        try:
            value = int(body, 0)
        except ValueError:  # a leading zero: C-style octal, as the LLVM assembler reads it
            try:
                value = int(body, 8)
            except ValueError:
                raise OperandError(f"invalid octal number '{text}'") from None
        return Operand(text, col, "int", value=-value if neg else value, neg=False, abs=absolute)
    if _FLOAT.match(body):
        value = float(body)
        return Operand(text, col, "float", value=-value if neg else value, abs=absolute)
    if body.startswith("{") and body.endswith("}"):
        # the structured hwreg operand of s_getreg/s_setreg: {id: 51, offset: 0, size: 32}
        return Operand(text, col, "func", "hwreg", value=None)
    m = _FUNC.match(body)
    if m:
        return Operand(text, col, "func", m.group(1).lower(), value=None, neg=neg, abs=absolute)
    if _SYMBOL.match(body) or _QUOTED_SYMBOL.match(body):
        return Operand(text, col, "label", value=None)
    if body and all(c.isalnum() or c in "._$@+-*/()<>&|~ " for c in body):
        return Operand(text, col, "expr")
    raise OperandError(f"cannot read operand '{text}'")


def _register_list(text: str, col: int, body: str) -> Operand:
    """The non-sequential address of an image instruction, ``[v4, v9, v[2:3]]`` (NSA): VGPRs in any
    order, kept as their indices in ``value`` (``first``: the first, ``count``: how many)."""
    indices: list[int] = []
    for item in body[1:-1].split(","):
        item = item.strip()
        m = _REG_ONE.match(item) or _REG_RANGE.match(item)
        if m is None or m.group(1) != "v" or m.lastindex and m.group(m.lastindex) in (".l", ".h"):
            raise OperandError(f"cannot read operand '{text}': a register list holds VGPRs only")
        lo = int(m.group(2))
        hi = int(m.group(3)) if m.re is _REG_RANGE and m.group(3) is not None else lo
        _check_register_index(item, "v", str(hi))
        if hi < lo:
            raise OperandError(f"register range {item} ends before it starts")
        indices.extend(range(lo, hi + 1))
    return Operand(text, col, "vgpr", "v", indices[0], len(indices), value=tuple(indices))


def classify_modifier(text: str, col: int) -> Modifier:
    m = _MODIFIER.match(text)
    if not m:
        raise OperandError(f"cannot read modifier '{text}'")
    value = m.group(2)
    return Modifier(text, col, m.group(1).lower(), value.strip() if value is not None else None)


def _check_register_index(body: str, file: str, digits: str) -> None:
    limit = REGISTER_LIMITS[file]
    if len(digits) > 4 or int(digits) > limit:
        raise OperandError(f"register index is out of range: {body} (gfx11 has {file}0-{file}{limit})")


def _file_kind(file: str) -> str:
    return {"v": "vgpr", "s": "sgpr", "ttmp": "ttmp"}[file]


def is_call_word(word: str) -> bool:
    """``vmcnt(0)``, ``instid0(VALU_DEP_1)``: operands written without commas."""
    return bool(_FUNC.match(word))
