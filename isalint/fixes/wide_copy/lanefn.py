"""Per-lane functions of the work-item id, fitted and written as VALU code.

The new copy gives each lane a different offset than the old one did; the difference is a function
of the work-item id ``t``. The mappings a GEMM's copy uses (``t >> 5``, ``t & 31``, ``t >> 1``,
``t & 7`` and their sums with constant factors) are affine in the bits of ``t``: ``f(t) = c + sum of
c_b * bit_b(t)``. :func:`fit` finds ``c`` and the ``c_b`` and checks every lane; :func:`emit` writes
the sum with one bit-field extract and one 24-bit multiply-add per run of bits whose factors double
(``(t >> 1 & 15) * 4`` is one run).
"""
from __future__ import annotations

from dataclasses import dataclass

MASK32 = (1 << 32) - 1


@dataclass(frozen=True)
class Run:
    first_bit: int
    width: int
    factor: int  # the factor of the run's lowest bit


@dataclass(frozen=True)
class LaneFunction:
    constant: int
    runs: tuple[Run, ...]

    def value(self, t: int) -> int:
        return self.constant + sum(r.factor * ((t >> r.first_bit) & ((1 << r.width) - 1)) for r in self.runs)


def _signed(v: int) -> int:
    v &= MASK32
    return v - (1 << 32) if v >> 31 else v


def fit(values: list[int]) -> LaneFunction | None:
    """The bit-affine function taking these values (mod 2**32) at t = 0, 1, ..., or None."""
    n = len(values)
    bits = max(1, (n - 1).bit_length())
    c0 = _signed(values[0])
    factors = []
    for b in range(bits):
        t = 1 << b
        factors.append(_signed(values[t] - values[0]) if t < n else 0)
    runs: list[Run] = []
    b = 0
    while b < bits:
        if factors[b] == 0:
            b += 1
            continue
        width = 1
        while b + width < bits and factors[b + width] == factors[b] << width:
            width += 1
        runs.append(Run(b, width, factors[b]))
        b += width
    f = LaneFunction(c0, tuple(runs))
    if any((f.value(t) - values[t]) & MASK32 for t in range(n)):
        return None
    return f


def emit(f: LaneFunction, dst: int, tid: int, tmp: int) -> list[str] | None:
    """VALU lines computing ``f(t)`` mod 2**32 into ``v{dst}`` from ``v{tid}`` (the work-item id), with
    ``v{tmp}`` as scratch; None when a factor does not fit a 24-bit multiply. Unsigned 24-bit
    multiplies only (a negative factor's product is subtracted), so that the lane and affine
    evaluators follow the code exactly."""
    if any(not 0 < abs(r.factor) < (1 << 24) for r in f.runs):
        return None
    out: list[str] = []
    first = True
    for r in f.runs:
        out.append(f"v_bfe_u32 v{tmp}, v{tid}, {r.first_bit}, {r.width}")
        c = abs(r.factor)
        if first:
            out.append(f"v_mul_u32_u24 v{dst}, {_lit(c)}, v{tmp}")
            if r.factor < 0:
                out.append(f"v_sub_nc_u32 v{dst}, 0, v{dst}")
            first = False
        elif r.factor > 0:
            out.append(f"v_mad_u32_u24 v{dst}, v{tmp}, {_lit(c)}, v{dst}")
        else:
            out.append(f"v_mul_u32_u24 v{tmp}, {_lit(c)}, v{tmp}")
            out.append(f"v_sub_nc_u32 v{dst}, v{dst}, v{tmp}")
    if first:
        out.append(f"v_mov_b32 v{dst}, {_lit(f.constant)}")
    elif f.constant:
        out.append(f"v_add_nc_u32 v{dst}, {_lit(f.constant)}, v{dst}")
    return out


def _lit(c: int) -> str:
    return str(c) if -16 <= c <= 64 else f"0x{c & MASK32:x}"
