"""The emulator's algebra: the operations of :mod:`isalint.isa.semantics` on numpy arrays.

Integers are raw bit patterns (``uint32``, or ``uint64`` for 64-bit values), conditions ``bool``
arrays, floats ``float32``/``float64``; a signed operation views its operands as signed. Scalar
values have shape ``[W]`` (one per wave of a group), vector values ``[W, 32]``, constants are 0-d, and
numpy broadcasts them together. fp32 results are IEEE round-to-nearest-even; the fused operations are
correctly rounded (:mod:`.fp`); the transcendental ones are modelled as the correctly rounded value
(the hardware is within 1 ulp).
"""
from __future__ import annotations

import numpy as np

from ...isa.semantics.algebra import NO_CARRY, Algebra
from .errors import Unimplemented
from .fp import fma_f32
from .machine import F32, F64, I32, I64, LANES, U32, U64

_31 = U32(31)
_63 = U64(63)
_1 = U32(1)
_M32 = U64(0xFFFF_FFFF)
_2_32 = U64(1 << 32)
_THREAD_MASK = ((U64(1) << LANES.astype(U64)) - U64(1))  # (1LL << laneId) - 1LL, one per lane


def popcount(a):
    a = np.asarray(a, dtype=U32)
    return np.unpackbits(np.ascontiguousarray(a).view(np.uint8).reshape(a.shape + (4,)), axis=-1).sum(
        axis=-1, dtype=U32)


def brev(a):
    a = np.asarray(a, dtype=U32)
    bits = np.unpackbits(np.ascontiguousarray(a).view(np.uint8).reshape(a.shape + (4,)), axis=-1, bitorder="little")
    return np.packbits(bits[..., ::-1], axis=-1, bitorder="little").view(U32).reshape(a.shape)


def clz(a):
    a = np.asarray(a, dtype=U32)
    out = np.full(a.shape, 0xFFFF_FFFF, dtype=U32)
    nz = a != 0
    if nz.any():
        out[nz] = (31 - np.floor(np.log2(a[nz].astype(F64)))).astype(U32)
    return out


def ctz(a):
    a = np.asarray(a, dtype=U32)
    out = np.full(a.shape, 0xFFFF_FFFF, dtype=U32)
    nz = a != 0
    if nz.any():
        low = a[nz] & (~a[nz] + _1)
        out[nz] = np.floor(np.log2(low.astype(F64))).astype(U32)
    return out


def fmax(a, b):
    """v_max_f32 (IEEE mode): a NaN operand yields the other one; +0 > -0."""
    a, b = np.broadcast_arrays(np.asarray(a, F32), np.asarray(b, F32))
    gt = (a > b) | ((a == 0) & (b == 0) & ~np.signbit(a) & np.signbit(b))
    r = np.where(gt, a, b)
    r = np.where(np.isnan(b), a, r)
    r = np.where(np.isnan(a), b, r)
    return r.astype(F32)


def fmin(a, b):
    a, b = np.broadcast_arrays(np.asarray(a, F32), np.asarray(b, F32))
    lt = (a < b) | ((a == 0) & (b == 0) & np.signbit(a) & ~np.signbit(b))
    r = np.where(lt, a, b)
    r = np.where(np.isnan(b), a, r)
    r = np.where(np.isnan(a), b, r)
    return r.astype(F32)


def fmed3(a, b, c):
    """v_med3_f32: the median, or min3 when any input is NaN (RDNA3 ISA guide, V_MED3_F32)."""
    a, b, c = np.broadcast_arrays(np.asarray(a, F32), np.asarray(b, F32), np.asarray(c, F32))
    med = fmax(fmin(a, b), fmin(fmax(a, b), c))
    anynan = np.isnan(a) | np.isnan(b) | np.isnan(c)
    return np.where(anynan, fmin(fmin(a, b), c), med).astype(F32)


def _cvt_u32_f32(a):
    a = np.asarray(a, F32).astype(F64)
    t = np.trunc(np.nan_to_num(a, nan=0.0, posinf=4294967295.0, neginf=0.0))
    return np.clip(t, 0, 4294967295.0).astype(U32)


def _cvt_i32_f32(a):
    a = np.asarray(a, F32).astype(F64)
    t = np.trunc(np.nan_to_num(a, nan=0.0, posinf=2147483647.0, neginf=-2147483648.0))
    return np.clip(t, -2147483648.0, 2147483647.0).astype(I32)


def _fract(a):
    a = np.asarray(a, F32)
    r = (a - np.floor(a)).astype(F32)
    # the largest fp32 below 1.0 bounds the result (x - floor(x) can round up to 1.0)
    r = np.minimum(r, F32(np.nextafter(F32(1), F32(0))))
    return np.where(np.isinf(a), F32(np.nan), r).astype(F32)


def _fclass(a, mask):
    bits = np.asarray(a, F32).view(U32)
    m = np.asarray(mask, dtype=U32)
    expo = (bits >> U32(23)) & U32(0xFF)
    mant = bits & U32(0x7F_FFFF)
    neg = (bits >> _31) == 1
    isnan = (expo == 255) & (mant != 0)
    quiet = isnan & ((mant >> U32(22)) == 1)
    k = np.where(neg, 5, 6)  # zero
    k = np.where((expo == 0) & (mant != 0), np.where(neg, 4, 7), k)
    k = np.where((expo > 0) & (expo < 255), np.where(neg, 3, 8), k)
    k = np.where((expo == 255) & (mant == 0), np.where(neg, 2, 9), k)
    k = np.where(isnan, np.where(quiet, 1, 0), k)
    return ((m >> k.astype(U32)) & _1) == 1


def _never(a, b):
    return np.zeros(np.broadcast_shapes(np.shape(a), np.shape(b)), bool)


def _always(a, b):
    return np.ones(np.broadcast_shapes(np.shape(a), np.shape(b)), bool)


FCMP = {
    "f": _never, "t": _always,
    "lt": np.less, "eq": np.equal, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
    "lg": lambda a, b: np.less(a, b) | np.greater(a, b),
    "o": lambda a, b: ~(np.isnan(a) | np.isnan(b)),
    "u": lambda a, b: np.isnan(a) | np.isnan(b),
    "nge": lambda a, b: ~np.greater_equal(a, b), "nlg": lambda a, b: ~(np.less(a, b) | np.greater(a, b)),
    "ngt": lambda a, b: ~np.greater(a, b), "nle": lambda a, b: ~np.less_equal(a, b),
    "neq": lambda a, b: ~np.equal(a, b), "nlt": lambda a, b: ~np.less(a, b),
}
ICMP = {"f": _never, "t": _always, "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
        "gt": np.greater, "ge": np.greater_equal}
CONVERT = {
    ("f32", "i32"): lambda a: a.view(I32).astype(F32),
    ("f32", "u32"): lambda a: np.asarray(a).astype(F32),
    ("u32", "f32"): _cvt_u32_f32,
    ("i32", "f32"): _cvt_i32_f32,
    ("f64", "f32"): lambda a: np.asarray(a).astype(F64),
    ("f32", "f64"): lambda a: np.asarray(a).astype(F32),
    ("f64", "i32"): lambda a: a.view(I32).astype(F64),
}


def _signed(x, bits):
    return x.view(I64 if bits == 64 else I32)


class NumpyAlgebra(Algebra):
    """:class:`~isalint.isa.semantics.algebra.Algebra` on numpy arrays (one instance, stateless)."""

    wave_size = 32
    _c32: dict = {}
    _c64: dict = {}

    def unknown(self, what: str):
        raise Unimplemented(f"the emulator has no {what}")

    def const(self, c: int, bits: int = 32):
        cache = self._c64 if bits == 64 else self._c32
        v = cache.get(c)
        if v is None:
            v = cache[c] = (U64 if bits == 64 else U32)(c & ((1 << bits) - 1))
        return v

    # -- widths ---------------------------------------------------------------------------------------
    def zext(self, x):
        return x.astype(U64)

    def sext(self, x, width: int, bits: int = 32):
        if width == 32:
            return x.view(I32).astype(I64).view(U64)
        sh = U32(32 - width)
        r = ((x << sh).view(I32) >> (32 - width)).view(U32)
        return r if bits == 32 else r.view(I32).astype(I64).view(U64)

    def lo(self, x):
        return (x & _M32).astype(U32)

    def hi(self, x):
        return (x >> U64(32)).astype(U32)

    # -- arithmetic ------------------------------------------------------------------------------------
    def add(self, a, b, bits: int = 32):
        return a + b

    def sub(self, a, b, bits: int = 32):
        return a - b

    def mul(self, a, b, bits: int = 32):
        return a * b

    def mul_hi(self, a, b, signed: bool = False):
        if signed:
            return ((a.view(I32).astype(I64) * b.view(I32).astype(I64)) >> 32).astype(I32).view(U32)
        return ((a.astype(U64) * b.astype(U64)) >> U64(32)).astype(U32)

    def add_co(self, a, b, carry_in=NO_CARRY, bits: int = 32, signed: bool = False):
        if bits == 64:
            if signed:
                pa, pb = a.view(I64), b.view(I64)
                s = pa + pb
                overflow = (np.signbit(pa) == np.signbit(pb)) & (np.signbit(s) != np.signbit(pa))
                return s.view(U64), np.signbit(s) ^ overflow  # bit 64 of the 65-bit sum
            s = a + b
            return s, s < b
        t = a.astype(U64) + b.astype(U64)
        if carry_in is not NO_CARRY:
            t = t + carry_in.astype(U64)
        return (t & _M32).astype(U32), t >= _2_32

    def sub_co(self, a, b, borrow_in=NO_CARRY):
        x, y = a.astype(U64), b.astype(U64)
        if borrow_in is not NO_CARRY:
            y = y + borrow_in.astype(U64)
        return ((x - y) & _M32).astype(U32), y > x

    def min(self, a, b, signed: bool = False):
        return np.minimum(a.view(I32), b.view(I32)).view(U32) if signed else np.minimum(a, b)

    def max(self, a, b, signed: bool = False):
        return np.maximum(a.view(I32), b.view(I32)).view(U32) if signed else np.maximum(a, b)

    # -- bits ----------------------------------------------------------------------------------------------
    def and_(self, a, b, bits: int = 32):
        return a & b

    def or_(self, a, b, bits: int = 32):
        return a | b

    def xor(self, a, b, bits: int = 32):
        return a ^ b

    def not_(self, a, bits: int = 32):
        return ~a

    def shl(self, a, n, bits: int = 32):
        if bits == 64:
            return a << (n.astype(U64) & _63)
        return a << (n & _31)

    def lshr(self, a, n, bits: int = 32):
        if bits == 64:
            return a >> (n.astype(U64) & _63)
        return a >> (n & _31)

    def ashr(self, a, n, bits: int = 32):
        if bits == 64:
            return (a.view(I64) >> (n.astype(U64) & _63).astype(I64)).view(U64)
        return (a.view(I32) >> (n & _31).astype(I32)).view(U32)

    def bfe(self, a, offset, width, signed: bool = False, bits: int = 32):
        # tmp = (S0 >> offset) & ((1 << width) - 1), the shift arithmetic for the signed forms (S0.i32 >>)
        off = (offset & (_63 if bits == 64 else _31)).astype(U64)
        w = np.minimum(width.astype(U64), U64(bits))
        mask = np.where(w >= 64, U64(0xFFFF_FFFF_FFFF_FFFF), (U64(1) << np.minimum(w, U64(63))) - U64(1))
        if signed:
            wide = a.view(I64) if bits == 64 else a.view(I32).astype(I64)
            t = (wide >> off.astype(I64)).view(U64) & mask
            # signext_from_bit(tmp, width)
            sign = np.where(w > 0, (t >> np.maximum(w, U64(1)) - U64(1)) & U64(1), U64(0))
            t = t | np.where((sign == 1) & (w < bits), ~mask, U64(0))
        else:
            t = (a.astype(U64) >> off) & mask
        return t if bits == 64 else (t & _M32).astype(U32)

    def popcount(self, a):
        return popcount(a)

    def brev(self, a):
        return brev(a)

    def clz(self, a):
        return clz(a)

    def ctz(self, a):
        return ctz(a)

    # -- conditions ----------------------------------------------------------------------------------------
    def cmp(self, rel: str, a, b, signed: bool = False, bits: int = 32):
        if signed:
            a, b = _signed(a, bits), _signed(b, bits)
        return ICMP[rel](a, b)

    def select(self, cond, t, f):
        return np.where(cond, t, f)

    def truth(self, value, bits: int = 32):
        return np.asarray(value) != 0

    # -- lanes -----------------------------------------------------------------------------------------------
    def thread_mask(self):
        return _THREAD_MASK

    def readlane(self, a, lane):
        a = np.asarray(a)
        if a.ndim < 2:
            return a
        if a.shape[-1] == 1:
            return a[:, 0]
        w = a.shape[0]
        ln = np.broadcast_to(np.asarray(lane).reshape(-1) & _31, (w,)).astype(np.intp)
        return a[np.arange(w), ln]

    def writelane(self, old, value, lane):
        new = np.array(old, dtype=U32, copy=True)
        w = new.shape[0]
        ln = np.broadcast_to(np.asarray(lane).reshape(-1) & _31, (w,)).astype(np.intp)
        new[np.arange(w), ln] = np.broadcast_to(np.asarray(value).reshape(-1), (w,))
        return new

    # -- floats ------------------------------------------------------------------------------------------------
    def fadd(self, a, b):
        return a + b

    def fsub(self, a, b):
        return a - b

    def fmul(self, a, b):
        return a * b

    def fma(self, a, b, c):
        return fma_f32(a, b, c)

    def fmul_legacy(self, a, b):
        a, b = np.asarray(a, F32), np.asarray(b, F32)
        return np.where((a == 0) | (b == 0), F32(0), a * b).astype(F32)

    def fma_legacy(self, a, b, c):
        return np.where((a == 0) | (b == 0), c + F32(0), fma_f32(a, b, c)).astype(F32)

    def fmax(self, a, b):
        return fmax(a, b)

    def fmin(self, a, b):
        return fmin(a, b)

    def fmed3(self, a, b, c):
        return fmed3(a, b, c)

    def fcmp(self, rel: str, a, b):
        return FCMP[rel](a, b)

    def fclass(self, a, mask):
        return _fclass(a, mask)

    def floor(self, a):
        return np.floor(a)

    def ceil(self, a):
        return np.ceil(a)

    def trunc(self, a):
        return np.trunc(a)

    def rndne(self, a):
        return np.rint(a)

    def fract(self, a):
        return _fract(a)

    def rcp(self, a):
        return (F32(1) / np.asarray(a, F32)).astype(F32)

    def rsq(self, a):
        return (1.0 / np.sqrt(np.asarray(a, F64))).astype(F32)

    def sqrt(self, a):
        return np.sqrt(np.asarray(a, F32))

    def exp2(self, a):
        return np.exp2(np.asarray(a, F64)).astype(F32)

    def log2(self, a):
        return np.log2(np.asarray(a, F64)).astype(F32)

    def ldexp(self, a, e):
        return np.ldexp(np.asarray(a, F32), np.clip(e.view(I32), -1000, 1000)).astype(F32)

    def convert(self, to: str, frm: str, a):
        return CONVERT[(to, frm)](a)


NP = NumpyAlgebra()
