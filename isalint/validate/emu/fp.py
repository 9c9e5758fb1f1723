"""fp32 arithmetic with the rounding RDNA3 performs.

numpy has no fused multiply-add. ``a*b`` of two fp32 values is exact in fp64 (24+24 <= 53
significant bits), but rounding ``a*b + c`` first to fp64 and then to fp32 is a double rounding
and can be wrong by one ulp when the fp64 sum lands exactly halfway between two fp32 values
while the exact sum did not.  :func:`fma_f32` detects those (rare) lanes and redoes them with an
error-free two-sum and round-to-odd, which makes the second rounding correct (round-to-odd at
>= p+2 bits followed by round-to-nearest is exact rounding; 53 >= 24+2).

Plain add/sub/mul/div/sqrt on fp32 operands are correctly rounded by numpy's fp32 (IEEE) ops.
Denormal handling follows the kernel descriptor's ``.amdhsa_float_denorm_mode_32`` (RDNA3 ISA
guide, "MODE register": FP_DENORM): 3 keeps input and output denormals, 0 flushes both.
"""
from __future__ import annotations

import numpy as np

F32 = np.float32
F64 = np.float64
U32 = np.uint32
U64 = np.uint64

_HALF29 = U64(1 << 63)  # low 29 bits of an fp64 mantissa == 0x10000000, shifted to the top
_SH35 = U64(35)
_MIN_NORMAL32 = F32(2.0 ** -126)
_ONE64 = U64(1)


def _round_to_odd_f32(p: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Correctly rounded fp32 of p + c (fp64 inputs, p exact product), vectorized."""
    s = p + c
    bb = s - p
    e = (p - (s - bb)) + (c - bb)  # TwoSum: p + c == s + e exactly
    sb = s.view(U64).copy()
    inexact = (e != 0) & ((sb & _ONE64) == 0)
    if inexact.any():
        toward_larger_magnitude = np.signbit(e) == np.signbit(s)
        step = np.where(toward_larger_magnitude, _ONE64, U64(0xFFFF_FFFF_FFFF_FFFF))
        sb[inexact] = sb[inexact] + step[inexact]
    return sb.view(F64).astype(F32)


def fma_f32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Correctly rounded fp32 fused multiply-add (round to nearest even), broadcasting."""
    p = np.multiply(a, b, dtype=F64)
    s = p + c
    r = s.astype(F32)
    # Suspect: a sum on an fp32 midpoint, or one whose fp32 result is not normal (|r| <= 2**-126
    # holds for every |s| < 2**-126, and tested on the fp32 result it costs half as much).
    suspect = (s.view(U64) << _SH35) == _HALF29
    suspect |= np.abs(r) <= _MIN_NORMAL32
    if np.count_nonzero(suspect):
        shape = np.broadcast_shapes(np.shape(a), np.shape(b), np.shape(c))
        r = np.broadcast_to(r, shape).copy()
        idx = np.nonzero(np.broadcast_to(suspect, shape))
        pa = np.broadcast_to(p, shape)[idx]
        ca = np.broadcast_to(np.asarray(c, dtype=F64), shape)[idx]
        r[idx] = _round_to_odd_f32(pa, ca)
        # the sum of two zeros: fp64 gives the right sign (x + -x = +0 in round-to-nearest)
    return r


def flush_denormals(x: np.ndarray) -> np.ndarray:
    """fp32 array with denormals replaced by zero of the same sign."""
    bits = np.asarray(x, dtype=F32).view(U32)
    den = (bits & U32(0x7F80_0000)) == 0
    if not den.any():
        return x
    return np.where(den, bits & U32(0x8000_0000), bits).view(F32)


def f32_bits(value: float) -> int:
    """IEEE fp32 bit pattern of a Python float (rounded to nearest)."""
    return int(np.array(value, dtype=F32).view(U32))


def f64_bits(value: float) -> int:
    return int(np.array(value, dtype=F64).view(U64))


def reference_fma_f32(a: float, b: float, c: float) -> float:
    """Exact fma rounded once to fp32, computed with Python fractions (slow; for tests)."""
    from fractions import Fraction

    fa, fb, fc = (float(np.float32(v)) for v in (a, b, c))
    if any(v != v or v in (float("inf"), float("-inf")) for v in (fa, fb, fc)):
        return float(np.float32(fa * fb + fc))  # fp64: no intermediate overflow, like a fused op
    exact = Fraction(fa) * Fraction(fb) + Fraction(fc)
    return round_fraction_to_f32(exact, zero_sign=_zero_sign(fa * fb, fc))


def _zero_sign(p: float, c: float) -> bool:
    # IEEE: x + y == 0 exactly gives +0 in round-to-nearest unless both are -0
    return (p == 0 and c == 0 and np.signbit(p) and np.signbit(c))


def round_fraction_to_f32(x, zero_sign: bool = False) -> float:
    """Round an exact rational to the nearest fp32 (ties to even), with overflow to inf."""
    from fractions import Fraction

    if x == 0:
        return -0.0 if zero_sign else 0.0
    neg = x < 0
    m = -x if neg else x
    # find exponent e with 2**e <= m < 2**(e+1)
    e = m.numerator.bit_length() - m.denominator.bit_length()
    if Fraction(2) ** e > m:
        e -= 1
    e = max(e, -126)  # denormal range has a fixed quantum of 2**-149
    quantum = Fraction(2) ** (e - 23)
    q, rem = divmod(m, quantum)
    half = quantum / 2
    if rem > half or (rem == half and q % 2 == 1):
        q += 1
    val = q * quantum
    if val >= Fraction(2) ** 128:
        out = float("inf")
    else:
        out = float(val)
    return -out if neg else out
