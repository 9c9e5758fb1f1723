"""Packed and mixed-precision fp16 ops against exact arithmetic (Python fractions): v_pk_fma_f16
rounds once, the halves follow op_sel/op_sel_hi/neg_lo/neg_hi, the fma_mix forms mix fp32 and
fp16 sources, and v_dot2 accumulates in fp32 one product at a time (RDNA3 ISA guide, chapter 16)."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from isalint.validate.emu import EmulationError
from isalint.validate.emu.packed import fma_f16
from test_emu_support import Bench

B = Bench()
rng = np.random.default_rng(11)


def _f16_exact_round(x: Fraction) -> np.float16:
    """Nearest-even fp16 of an exact rational, by comparing against both neighbours exactly."""
    with np.errstate(over="ignore"):
        guess = np.float16(float(x))
    if not np.isfinite(guess):
        lim = Fraction(65520)
        if abs(x) < lim:
            return np.float16(65504.0 if x > 0 else -65504.0)
        return guess
    cands = {guess, np.nextafter(guess, np.float16(np.inf)), np.nextafter(guess, np.float16(-np.inf))}
    cands = [c for c in cands if np.isfinite(c)]

    def key(c):
        return (abs(Fraction(float(c)) - x), int(np.array(c).view(np.uint16)) & 1)
    return min(cands, key=key)


def _rand_f16(n, lo=-8.0, hi=8.0):
    return rng.uniform(lo, hi, n).astype(np.float16)


def _pack(lo, hi):
    return lo.view(np.uint16).astype(np.uint32) | (hi.view(np.uint16).astype(np.uint32) << 16)


def _halves(word):
    w = np.asarray(word, dtype=np.uint32)
    return (w & 0xFFFF).astype(np.uint16).view(np.float16), (w >> 16).astype(np.uint16).view(np.float16)


def test_fma_f16_rounds_once_including_ties_broken_by_the_addend():
    # a*b exactly halfway between two fp16 values; a tiny c decides the direction
    a = np.array([1 + 2 ** -10] * 4, dtype=np.float16).astype(np.float64)
    b = np.array([1 + 2 ** -1] * 4, dtype=np.float16).astype(np.float64)
    c = np.array([2.0 ** -24, -(2.0 ** -24), 0.0, 2.0 ** -20], dtype=np.float16).astype(np.float64)
    got = fma_f16(a, b, c)
    want = [_f16_exact_round(Fraction(x) * Fraction(y) + Fraction(z)) for x, y, z in zip(a, b, c)]
    assert [float(g) for g in got] == [float(w) for w in want]
    # fp64 then fp16 would double-round the first two the same way; the exact result differs
    assert got[0] != got[1]
    x = rng.uniform(-300, 300, 20000).astype(np.float16).astype(np.float64)
    y = rng.uniform(-300, 300, 20000).astype(np.float16).astype(np.float64)
    z = (rng.uniform(-1, 1, 20000) * 2.0 ** rng.integers(-24, 16, 20000)).astype(np.float16).astype(np.float64)
    got = fma_f16(x, y, z)
    for i in range(0, 20000, 97):
        assert float(got[i]) == float(_f16_exact_round(Fraction(x[i]) * Fraction(y[i]) + Fraction(z[i]))), i


def test_pk_fma_f16_halves_op_sel_and_neg():
    a_lo, a_hi, b_lo, b_hi, c_lo, c_hi = (_rand_f16(32) for _ in range(6))
    vg = {1: _pack(a_lo, a_hi), 2: _pack(b_lo, b_hi), 3: _pack(c_lo, c_hi)}
    st = B.run("v_pk_fma_f16 v4, v1, v2, v3\n"
               "v_pk_fma_f16 v5, v1, v2, v3 op_sel:[1,0,0] op_sel_hi:[0,1,1] neg_lo:[0,1,0] neg_hi:[0,0,1]\n"
               "v_pk_add_f16 v6, v1, v2\nv_pk_mul_f16 v7, v1, v2 op_sel_hi:[1,0]", vgprs=vg)
    lo, hi = _halves(st.v(4))
    lo5, hi5 = _halves(st.v(5))
    lo6, hi6 = _halves(st.v(6))
    lo7, hi7 = _halves(st.v(7))
    F = lambda v: Fraction(float(v))  # noqa: E731
    for i in range(32):
        assert lo[i] == _f16_exact_round(F(a_lo[i]) * F(b_lo[i]) + F(c_lo[i]))
        assert hi[i] == _f16_exact_round(F(a_hi[i]) * F(b_hi[i]) + F(c_hi[i]))
        assert lo5[i] == _f16_exact_round(F(a_hi[i]) * -F(b_lo[i]) + F(c_lo[i]))
        assert hi5[i] == _f16_exact_round(F(a_lo[i]) * F(b_hi[i]) - F(c_hi[i]))
        assert lo6[i] == _f16_exact_round(F(a_lo[i]) + F(b_lo[i]))
        assert hi6[i] == _f16_exact_round(F(a_hi[i]) + F(b_hi[i]))
        assert hi7[i] == _f16_exact_round(F(a_hi[i]) * F(b_lo[i]))
        assert lo7[i] == _f16_exact_round(F(a_lo[i]) * F(b_lo[i]))


def test_fma_mix_sources_and_halves():
    a32 = rng.uniform(-4, 4, 32).astype(np.float32)
    b_lo, b_hi, c_lo, c_hi = (_rand_f16(32) for _ in range(4))
    keep = np.full(32, 0xABCD_1234, dtype=np.uint32)
    vg = {1: a32, 2: _pack(b_lo, b_hi), 3: _pack(c_lo, c_hi), 5: keep, 6: keep}
    st = B.run("v_fma_mix_f32 v4, v1, v2, -v3 op_sel:[0,1,0] op_sel_hi:[0,1,1]\n"
               "v_fma_mixlo_f16 v5, v1, v2, v3 op_sel_hi:[0,1,1]\n"
               "v_fma_mixhi_f16 v6, v2, |v2|, v1 op_sel:[1,0,0] op_sel_hi:[1,1,0]", vgprs=vg)
    for i in range(32):
        exact = Fraction(float(a32[i])) * Fraction(float(b_hi[i])) - Fraction(float(c_lo[i]))
        assert st.v(4, np.float32)[i] == np.float32(float(exact)) or abs(
            Fraction(float(st.v(4, np.float32)[i])) - exact) <= abs(Fraction(float(np.float32(float(exact)))) - exact)
        f32 = np.float32(float(Fraction(float(a32[i])) * Fraction(float(b_lo[i])) + Fraction(float(c_lo[i]))))
        lo, hi = _halves(st.v(5)[i:i + 1])
        assert hi[0].view(np.uint16) == 0xABCD and lo[0] == np.float16(float(f32))  # fp32, then to fp16
        f32 = np.float32(float(Fraction(float(b_hi[i])) * abs(Fraction(float(b_lo[i]))) + Fraction(float(a32[i]))))
        lo, hi = _halves(st.v(6)[i:i + 1])
        assert lo[0].view(np.uint16) == 0x1234 and hi[0] == np.float16(float(f32))


def test_dot2_accumulates_in_fp32_one_product_at_a_time():
    a_lo, a_hi, b_lo, b_hi = (_rand_f16(32, -100, 100) for _ in range(4))
    c = rng.uniform(-1e4, 1e4, 32).astype(np.float32)
    vg = {1: _pack(a_lo, a_hi), 2: _pack(b_lo, b_hi), 3: c, 5: c}
    st = B.run("v_dot2_f32_f16 v4, v1, v2, v3\nv_dot2acc_f32_f16 v5, v1, v2\nv_dot2c_f32_f16 v3, v1, v2", vgprs=vg)
    for i in range(32):
        t = np.float32(float(Fraction(float(c[i])) + Fraction(float(a_lo[i])) * Fraction(float(b_lo[i]))))
        t = np.float32(float(Fraction(float(t)) + Fraction(float(a_hi[i])) * Fraction(float(b_hi[i]))))
        assert st.v(4, np.float32)[i] == t and st.v(5, np.float32)[i] == t and st.v(3, np.float32)[i] == t


@pytest.mark.parametrize("body,what", [
    ("v_pk_fma_f16 v4, v1, v2, 1.0", "constant"),
    ("v_pk_fma_f16 v4, v1, v2, v3 clamp", "clamp"),
    ("v_fma_mix_f32_e64_dpp v4, v1, v2, v3 quad_perm:[1,0,3,2]", "DPP"),
])
def test_what_is_not_emulated_stops(body, what):
    with pytest.raises(EmulationError, match=what):
        B.run(body)


def test_snippets_assemble():
    B.assert_assembles()
