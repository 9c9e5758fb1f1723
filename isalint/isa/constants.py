"""Constant operands: which are inline, and the bits a constant stands for (RDNA3 ISA guide, "Inline
constants" and "Literal constants").

Integers -16..64 and the floats 0.5, 1.0, 2.0, 4.0 (either sign) and 1/(2*pi) are encoded in the
instruction (inline); anything else is a 32-bit literal. For a 64-bit operand an inline integer is
sign-extended, a literal zero-extended (sign-extended for a signed ``i64`` operand) or, for ``f64``, the
high half of the double.
"""
from __future__ import annotations

import struct

INLINE_INTS = range(-16, 65)
INLINE_FLOATS = (0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0)
INV_2PI = 0.15915494309189535  # 1 / (2 * pi), inline as a float
INV_2PI_F32 = 0x3E22F983
INV_2PI_F16 = 0x3118
WIDE_TYPES = frozenset({"u64", "i64", "f64", "b64"})


class ConstantError(ValueError):
    """A constant that no operand of its type can hold."""


def is_inline_int(value: int) -> bool:
    """Whether the 32-bit integer ``value`` (signed or not) is an inline constant."""
    v = value & 0xFFFF_FFFF
    return (v - (1 << 32) if v & 0x8000_0000 else v) in INLINE_INTS


def f32_bits(x: float, strict: bool = False) -> int:
    """The fp32 pattern of ``x``, rounded to nearest even; past the largest float infinity, or with
    ``strict`` an OverflowError (a constant the assembler rejects)."""
    try:
        return struct.unpack("<I", struct.pack("<f", x))[0]
    except OverflowError:
        if strict:
            raise
        return 0xFF80_0000 if x < 0 else 0x7F80_0000


def f16_bits(x: float) -> int:
    return struct.unpack("<H", struct.pack("<e", x))[0]


def f64_bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def constant_bits(kind: str, value, typ: str, text: str = "") -> int:
    """The bits (32, or 64 for a 64-bit ``typ``) of a constant operand (``kind`` "int" or "float") read
    as an operand of type ``typ``. Raises :class:`ConstantError`."""
    wide = typ in WIDE_TYPES
    if kind == "int":
        v = int(value)
        inline = v in INLINE_INTS
        if not wide:
            return v & 0xFFFF_FFFF
        if typ == "f64" and not inline:
            return (v & 0xFFFF_FFFF) << 32
        if inline or typ == "i64":
            if not inline and not (-(1 << 31) <= v < (1 << 32)):
                raise ConstantError(f"literal {text or v} does not fit 32 bits")
            if not inline and v >= (1 << 31) and typ == "i64":
                v -= 1 << 32
            return v & 0xFFFF_FFFF_FFFF_FFFF
        return v & 0xFFFF_FFFF  # unsigned 64-bit operand: zero-extended literal
    if kind == "float":
        v = float(value)
        if wide:
            bits = f64_bits(v)
            if v not in INLINE_FLOATS and v != 0.0 and abs(v) != INV_2PI and typ == "f64":
                bits &= 0xFFFF_FFFF_0000_0000
            return bits
        return f32_bits(v)
    raise ConstantError(f"'{text or value}' is not a constant")
