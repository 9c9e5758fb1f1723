"""fp32 semantics of the emulator against IEEE references (exact rationals for the fused ops)."""
from __future__ import annotations

import numpy as np
import pytest

from isalint.validate.emu.fp import fma_f32, reference_fma_f32, round_fraction_to_f32
from test_emu_support import Bench, bits, lanes

B = Bench()
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
F = np.float32


def _ref_fma(a, b, c):
    return np.array([reference_fma_f32(x, y, z) for x, y, z in zip(a, b, c)], dtype=F)


def _double_rounding_cases():
    """(a, b, c) where fp64 sum then fp32 rounding gives the wrong answer."""
    a = F(1 + 2 ** -12)
    # a*a = 1 + 2^-11 + 2^-24: exactly halfway between two fp32 values
    cases = [(a, a, F(2.0 ** -80)), (a, a, F(-2.0 ** -80)), (-a, a, F(2.0 ** -80)), (a, -a, F(-2.0 ** -80)),
             (a, a, F(0)), (F(1 + 2 ** -23), F(1 - 2 ** -24), F(-1)),
             (F(3 * 2.0 ** -76), F(2.0 ** -76), F(2.0 ** -149)),  # denormal result
             (F(2.0 ** -75), F(2.0 ** -75), F(-2.0 ** -149)),
             (F(1e30), F(1e10), F(-np.inf)), (F(np.inf), F(0), F(1)), (F(-0.0), F(1), F(-0.0)),
             (F(-0.0), F(1), F(0.0)), (F(3.4e38), F(2), F(-3.4e38))]
    return cases


def test_fma_double_rounding_case_differs_from_naive():
    a = F(1 + 2 ** -12)
    c = F(2.0 ** -80)
    naive = F(np.float64(a) * np.float64(a) + np.float64(c))
    exact = F(reference_fma_f32(a, a, c))
    assert naive != exact  # the case really needs the correction
    assert fma_f32(np.array([a]), np.array([a]), np.array([c]))[0] == exact


def test_fma_edge_cases_match_exact_reference():
    a, b, c = (np.array(x, dtype=F) for x in zip(*_double_rounding_cases()))
    got = fma_f32(a, b, c)
    want = _ref_fma(a, b, c)
    assert np.array_equal(bits(got), bits(want)) or np.array_equal(np.isnan(got), np.isnan(want)) and \
        np.array_equal(bits(got)[~np.isnan(got)], bits(want)[~np.isnan(want)])


def test_fma_random_wide_exponents_match_exact_reference():
    rng = np.random.default_rng(7)
    n = 3000
    m = rng.standard_normal((3, n)).astype(F)
    e = rng.integers(-100, 60, size=(3, n)).astype(F)
    a, b, c = (m * F(2) ** e).astype(F)
    # force many products onto fp32 midpoints: c tiny relative to a*b
    c[: n // 3] = (m[2, : n // 3] * F(2.0 ** -90)).astype(F)
    got = fma_f32(a, b, c)
    want = _ref_fma(a, b, c)
    assert np.array_equal(bits(got), bits(want))


def test_round_fraction_reference_itself():
    from fractions import Fraction
    assert round_fraction_to_f32(Fraction(1) + Fraction(1, 2 ** 24)) == 1.0  # tie to even
    assert round_fraction_to_f32(Fraction(1) + Fraction(3, 2 ** 25)) == float(F(1 + 2 ** -23))
    assert round_fraction_to_f32(Fraction(1, 2 ** 150)) == 0.0  # tie to even: zero
    assert round_fraction_to_f32(Fraction(3, 2 ** 151)) == 2.0 ** -149


@pytest.mark.parametrize("body,fn", [
    ("v_fmac_f32_e32 v2, v0, v1", lambda a, b, c: _ref_fma(a, b, c)),
    ("v_fma_f32 v2, v0, v1, v2", lambda a, b, c: _ref_fma(a, b, c)),
    ("v_dual_fmac_f32 v2, v0, v1 :: v_dual_mov_b32 v5, v3", lambda a, b, c: _ref_fma(a, b, c)),
    ("v_fma_f32 v2, -v0, v1, v2", lambda a, b, c: _ref_fma(-a, b, c)),
    ("v_fma_f32 v2, v0, |v1|, -v2", lambda a, b, c: _ref_fma(a, np.abs(b), -c)),
])
def test_fma_instructions_are_correctly_rounded(body, fn):
    vals = _double_rounding_cases()[:8] + [(F(1.5), F(-2.25), F(0.125))] * 2
    a, b, c = (lanes([v[i] for v in vals]) for i in range(3))
    st = B.run(body, vgprs={0: a, 1: b, 2: c})
    assert np.array_equal(st.v(2), bits(fn(a, b, c)))


def test_fmaak_fmamk_operand_order():
    a = lanes([1.5, -2.0, 3.25, 0.1])
    b = lanes([2.0, 0.5, -1.0, 7.0])
    st = B.run("v_fmaak_f32 v2, v0, v1, 0x40400000\nv_fmamk_f32 v3, v0, 0x40400000, v1",
               vgprs={0: a, 1: b})
    assert np.array_equal(st.v(2), bits(_ref_fma(a, b, lanes([3.0]))))
    assert np.array_equal(st.v(3), bits(_ref_fma(a, lanes([3.0]), b)))


def test_vopd_fmaak_and_mul():
    a = lanes(np.linspace(-3, 3, 32))
    b = lanes(np.linspace(1, 2, 32))
    st = B.run("v_dual_fmaak_f32 v2, v0, v1, 0x3f000000 :: v_dual_mul_f32 v3, v1, v0", vgprs={0: a, 1: b})
    assert np.array_equal(st.v(2), bits(_ref_fma(a, b, lanes([0.5]))))
    assert np.array_equal(st.v(3), bits(a * b))


SPECIALS = [0.0, -0.0, 1.0, -1.5, 3.0e38, -3.0e38, 1e-45, -1e-40, np.inf, -np.inf, np.nan, 2.0 ** -126, 0.1,
            7.0, -7.25, 1e-3]


@pytest.mark.parametrize("body,ref", [
    ("v_add_f32_e32 v2, v0, v1", lambda a, b: a + b),
    ("v_sub_f32_e32 v2, v0, v1", lambda a, b: a - b),
    ("v_subrev_f32_e32 v2, v0, v1", lambda a, b: b - a),
    ("v_mul_f32_e32 v2, v0, v1", lambda a, b: a * b),
    ("v_add_f32_e64 v2, -v0, |v1|", lambda a, b: -a + np.abs(b)),
    ("v_mul_f32_e64 v2, v0, v1 clamp", lambda a, b: np.where(np.isnan(a * b), F(0), np.clip(a * b, 0, 1))),
    ("v_add_f32_e64 v2, v0, v1 mul:2", lambda a, b: (a + b) * F(2)),
    ("v_add_f32_e64 v2, v0, v1 div:2", lambda a, b: (a + b) * F(0.5)),
    ("v_mul_dx9_zero_f32_e32 v2, v0, v1", lambda a, b: np.where((a == 0) | (b == 0), F(0), a * b)),
])
def test_binary_fp32(body, ref):
    rng = np.random.default_rng(3)
    a = lanes(SPECIALS + list(rng.standard_normal(16)))
    b = lanes(list(rng.standard_normal(16)) + SPECIALS[::-1])
    st = B.run(body, vgprs={0: a, 1: b})
    want = ref(a, b).astype(F)
    got = st.v(2, np.float32)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    assert np.array_equal(got[ok].view(np.uint32), want[ok].view(np.uint32))


def test_max_min_ieee_nan_and_signed_zero():
    a = lanes([np.nan, 1.0, -0.0, 0.0, -2.0, np.inf])
    b = lanes([3.0, np.nan, 0.0, -0.0, -3.0, 5.0])
    st = B.run("v_max_f32_e32 v2, v0, v1\nv_min_f32_e32 v3, v0, v1", vgprs={0: a, 1: b})
    mx, mn = st.v(2, np.float32), st.v(3, np.float32)
    assert list(mx[:6]) == [3.0, 1.0, 0.0, 0.0, -2.0, np.inf]
    assert not np.signbit(mx[2]) and not np.signbit(mx[3])  # +0 > -0
    assert np.signbit(mn[2]) and np.signbit(mn[3])
    assert list(mn[:6]) == [3.0, 1.0, 0.0, 0.0, -3.0, 5.0]


def test_conversions():
    x = lanes([0.0, 1.5, -1.5, 2.5, 3e9, -3e9, np.nan, 1e20, -0.7, 255.9, 4294967296.0, -1.0])
    st = B.run("v_cvt_i32_f32_e32 v2, v0\nv_cvt_u32_f32_e32 v3, v0", vgprs={0: x})
    assert list(st.v(2, np.int32)[:12]) == [0, 1, -1, 2, 2147483647, -2147483648, 0, 2147483647, 0, 255, 2147483647, -1]
    assert list(st.v(3)[:12]) == [0, 1, 0, 2, 3000000000, 0, 0, 4294967295, 0, 255, 4294967295, 0]
    i = lanes([0, 1, -1, 16777217, -16777217, 2 ** 31 - 1, -(2 ** 31)], np.int64).astype(np.int32)
    st = B.run("v_cvt_f32_i32_e32 v2, v0\nv_cvt_f32_u32_e32 v3, v0\nv_cvt_f32_ubyte0_e32 v4, v0\n"
               "v_cvt_f32_ubyte1_e32 v5, v0\nv_cvt_f32_ubyte2_e32 v6, v0\nv_cvt_f32_ubyte3_e32 v7, v0", vgprs={0: i})
    assert np.array_equal(st.v(2, np.float32), i.astype(F))
    assert np.array_equal(st.v(3, np.float32), i.view(np.uint32).astype(F))
    for k in range(4):
        assert np.array_equal(st.v(4 + k, np.float32), ((i.view(np.uint32) >> (8 * k)) & 0xFF).astype(F))


def test_inline_and_literal_float_constants():
    st = B.run("v_mul_f32_e32 v2, 0.5, v0\nv_add_f32_e32 v3, 0x3fc00000, v0\nv_mul_f32_e32 v4, 2, v0",
               vgprs={0: lanes([4.0])})
    assert st.v(2, np.float32)[0] == 2.0
    assert st.v(3, np.float32)[0] == 5.5
    # an integer inline constant is a bit pattern (2 = a denormal), not the value 2.0
    assert st.v(4, np.float32)[0] == np.array(2, np.uint32).view(np.float32) * F(4)


@pytest.mark.parametrize("mode", [0, 3])
def test_denormal_mode_from_descriptor(mode):
    tiny = lanes([1e-40, -1e-40, 2.0 ** -130, 1.0])
    st = B.run("v_mul_f32_e32 v2, 1.0, v0\nv_fma_f32 v3, v0, 1.0, 0\nv_add_f32_e32 v4, v0, v0",
               vgprs={0: tiny}, denorm=mode)
    got = st.v(2, np.float32)[:4]
    if mode == 3:
        assert np.array_equal(got, tiny[:4])
        assert st.v(4, np.float32)[0] == tiny[0] + tiny[0]
    else:
        assert list(got) == [0.0, 0.0, 0.0, 1.0]
        assert np.signbit(got[1])
        assert st.v(3, np.float32)[0] == 0.0 and st.v(4, np.float32)[0] == 0.0


def test_transcendental_approximations_close():
    x = lanes([0.25, 2.0, 9.0, 100.0])
    st = B.run("v_rcp_f32_e32 v2, v0\nv_sqrt_f32_e32 v3, v0\nv_rsq_f32_e32 v4, v0\nv_exp_f32_e32 v5, v0\n"
               "v_log_f32_e32 v6, v0", vgprs={0: x})
    np.testing.assert_allclose(st.v(2, np.float32), 1 / x, rtol=2e-7)
    np.testing.assert_allclose(st.v(3, np.float32), np.sqrt(x), rtol=2e-7)
    np.testing.assert_allclose(st.v(4, np.float32), 1 / np.sqrt(x), rtol=2e-7)
    np.testing.assert_allclose(st.v(5, np.float32), np.exp2(x.astype(np.float64)), rtol=2e-7)
    np.testing.assert_allclose(st.v(6, np.float32), np.log2(x.astype(np.float64)), rtol=2e-7)




FP_UNARY = {
    "v_floor_f32": np.floor, "v_ceil_f32": np.ceil, "v_trunc_f32": np.trunc, "v_rndne_f32": np.rint,
    "v_fract_f32": lambda a: np.where(np.isinf(a), np.nan, np.minimum(a - np.floor(a), F(0.99999994))),
}


@pytest.mark.parametrize("name", sorted(FP_UNARY))
def test_rounding_ops(name):
    x = lanes([0.5, 1.5, 2.5, -0.5, -1.5, -2.7, 1e9 + 0.5, -0.0, np.inf, -1e-8, 3.999999, 7.0])
    st = B.run(f"{name}_e32 v2, v0", vgprs={0: x})
    want = FP_UNARY[name](x).astype(F)
    got = st.v(2, np.float32)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(bits(got[~np.isnan(got)]), bits(want[~np.isnan(want)]))


def test_three_operand_min_max_med_ldexp_and_dx9_fma():
    a = lanes([1.0, np.nan, -3.0, 5.0, 0.0])
    b = lanes([2.0, 4.0, np.nan, -1.0, -0.0])
    c = lanes([0.5, 3.0, 1.0, 2.0, 1.0])
    st = B.run("v_max3_f32 v3, v0, v1, v2\nv_min3_f32 v4, v0, v1, v2\nv_med3_f32 v5, v0, v1, v2\n"
               "v_ldexp_f32 v6, v2, v7\nv_fma_dx9_zero_f32 v8, v0, v9, v2",
               vgprs={0: a, 1: b, 2: c, 7: lanes([3, -1, 200, -200, 0], np.int32).view(np.uint32), 9: lanes([0.0])})
    assert list(st.v(3, np.float32)[:5]) == [2.0, 4.0, 1.0, 5.0, 1.0]
    assert list(st.v(4, np.float32)[:5]) == [0.5, 3.0, -3.0, -1.0, -0.0]
    assert list(st.v(5, np.float32)[:5]) == [1.0, 3.0, -3.0, 2.0, 0.0]
    assert list(st.v(6, np.float32)[:5]) == [4.0, 1.5, np.inf, 0.0, 1.0]
    assert np.array_equal(st.v(8, np.float32)[:5], c[:5])  # 0 * anything (even NaN) is 0 in dx9 rules


def test_fp64_add_mul_and_conversions():
    x = np.array([1.0 / 3, 2.5, -1e300, 7.0], np.float64)
    y = np.array([3.0, 1e-300, 10.0, -0.5], np.float64)
    xr = np.resize(x, 32).view(np.uint32).reshape(32, 2)
    yr = np.resize(y, 32).view(np.uint32).reshape(32, 2)
    st = B.run("v_add_f64 v[4:5], v[0:1], v[2:3]\nv_mul_f64 v[6:7], v[0:1], v[2:3]\n"
               "v_cvt_f32_f64_e32 v8, v[0:1]\nv_cvt_f64_f32_e32 v[10:11], v8\nv_cvt_f64_i32_e32 v[12:13], v9",
               vgprs={0: xr[:, 0], 1: xr[:, 1], 2: yr[:, 0], 3: yr[:, 1], 9: lanes([-7], np.int32).view(np.uint32)})
    def f64(n):
        return (st.v(n).astype(np.uint64) | st.v(n + 1).astype(np.uint64) << np.uint64(32)).view(np.float64)
    assert np.array_equal(f64(4)[:4], x + y) and np.array_equal(f64(6)[:4], x * y)
    assert np.array_equal(st.v(8, np.float32)[:4], x.astype(np.float32))
    assert np.array_equal(f64(10)[:4], x.astype(np.float32).astype(np.float64))
    assert f64(12)[0] == -7.0


def test_every_fp_table_op_is_exercised():
    import inspect
    import test_emu_fp
    from isalint.isa.semantics import OPS
    src = inspect.getsource(test_emu_fp)
    fp = [k for k, v in OPS.items() if v.types & {"f32", "f64"} and not k.startswith(("v_cmp_", "v_cmpx_"))]
    missing = [k for k in fp if k not in src]
    assert not missing, missing


def test_snippets_assemble():
    B.assert_assembles()
