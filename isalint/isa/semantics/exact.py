"""Exact integer semantics: values are Python ints (bit patterns), conditions 0 or 1, and ``None`` is
a value not known. One wave's scalar program walked on concrete values (:mod:`isalint.estimate.scalar`)
computes with this; so do tests, as the reference of the other algebras. Float operations and other
lanes stay unknown."""
from __future__ import annotations

from .algebra import NO_CARRY, Algebra

M32 = 0xFFFF_FFFF


def _mask(bits: int) -> int:
    return (1 << bits) - 1


def _signed(x: int, bits: int) -> int:
    return x - (1 << bits) if x >> (bits - 1) & 1 else x


def _known(fn):
    """The operation of known arguments; None as soon as one is None."""
    def op(self, *args, **kw):
        if None in args:
            return None
        return fn(self, *args, **kw)
    op.__name__ = fn.__name__
    op.__doc__ = fn.__doc__
    return op


class ExactAlgebra(Algebra):
    def unknown(self, what: str):
        return None

    def const(self, c: int, bits: int = 32):
        return c & _mask(bits)

    @_known
    def zext(self, x):
        return x

    @_known
    def sext(self, x, width: int, bits: int = 32):
        return _signed(x & _mask(width), width) & _mask(bits)

    @_known
    def lo(self, x):
        return x & M32

    @_known
    def hi(self, x):
        return (x >> 32) & M32

    @_known
    def add(self, a, b, bits: int = 32):
        return (a + b) & _mask(bits)

    @_known
    def sub(self, a, b, bits: int = 32):
        return (a - b) & _mask(bits)

    @_known
    def mul(self, a, b, bits: int = 32):
        return (a * b) & _mask(bits)

    @_known
    def mul_hi(self, a, b, signed: bool = False):
        if signed:
            return ((_signed(a, 32) * _signed(b, 32)) >> 32) & M32
        return (a * b) >> 32

    def add_co(self, a, b, carry_in=NO_CARRY, bits: int = 32, signed: bool = False):
        if a is None or b is None or carry_in is None:
            return None, None
        c = 0 if carry_in is NO_CARRY else carry_in
        if signed:
            t = _signed(a, bits) + _signed(b, bits) + c
            return t & _mask(bits), (t >> bits) & 1
        t = a + b + c
        return t & _mask(bits), int(t >> bits != 0)

    def sub_co(self, a, b, borrow_in=NO_CARRY):
        if a is None or b is None or borrow_in is None:
            return None, None
        c = 0 if borrow_in is NO_CARRY else borrow_in
        return (a - b - c) & M32, int(b + c > a)

    @_known
    def min(self, a, b, signed: bool = False):
        if signed:
            return a if _signed(a, 32) < _signed(b, 32) else b
        return min(a, b)

    @_known
    def max(self, a, b, signed: bool = False):
        if signed:
            return a if _signed(a, 32) >= _signed(b, 32) else b
        return max(a, b)

    @_known
    def and_(self, a, b, bits: int = 32):
        return a & b

    @_known
    def or_(self, a, b, bits: int = 32):
        return a | b

    @_known
    def xor(self, a, b, bits: int = 32):
        return a ^ b

    @_known
    def not_(self, a, bits: int = 32):
        return ~a & _mask(bits)

    @_known
    def shl(self, a, n, bits: int = 32):
        return (a << (n & (bits - 1))) & _mask(bits)

    @_known
    def lshr(self, a, n, bits: int = 32):
        return a >> (n & (bits - 1))

    @_known
    def ashr(self, a, n, bits: int = 32):
        return (_signed(a, bits) >> (n & (bits - 1))) & _mask(bits)

    @_known
    def bfe(self, a, offset, width, signed: bool = False, bits: int = 32):
        w = min(width, bits)
        if w == 0:
            return 0
        src = _signed(a, bits) if signed else a  # the signed forms shift S0.i32 (arithmetic)
        v = (src >> (offset & (bits - 1))) & _mask(w)
        if signed:
            v = _signed(v, w)
        return v & _mask(bits)

    @_known
    def popcount(self, a):
        return bin(a).count("1")

    @_known
    def brev(self, a):
        return int(f"{a & M32:032b}"[::-1], 2)

    @_known
    def clz(self, a):
        return 32 - a.bit_length() if a else M32

    @_known
    def ctz(self, a):
        return (a & -a).bit_length() - 1 if a else M32

    @_known
    def cmp(self, rel: str, a, b, signed: bool = False, bits: int = 32):
        if signed:
            a, b = _signed(a, bits), _signed(b, bits)
        return int({"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b,
                    "f": False, "t": True}[rel])

    def select(self, cond, t, f):
        if cond is None:
            return None
        return t if cond else f
