"""WMMA (wave32) in the emulator: the lane/VGPR layout of A, B, C and D, the six opcodes against numpy,
the documented rounding (fp32, one product at a time in k order), neg/op_sel/clamp modifiers,
refusals, D16 loads, and the fixture kernel gemm_wmma_f16 through ``isalint run`` / ``validate``."""
from __future__ import annotations

import re

import numpy as np
import pytest
from click.testing import CliRunner

from isalint.cli import cli
from isalint.validate.emu import EmulationError
from isalint.validate.emu.fp import reference_fma_f32
from isalint.validate.emu.harness import buffer
from isalint.validate.emu.wmma import cd_from_words, cd_to_words, pack_ab, unpack_ab
from test_emu_support import FIXTURES, Bench, need_toolchain

B = Bench()
rng = np.random.default_rng(5)
LANE = np.arange(32, dtype=np.uint32)
FIXTURE = FIXTURES / "gemm_wmma_f16.s"
F16, BF16, F32 = "f16", "bf16", np.float32


# -- helpers -------------------------------------------------------------------------------------
def _bits16(m: np.ndarray, kind: str) -> np.ndarray:
    """16-bit patterns of a float matrix whose values are exact in ``kind``."""
    if kind == F16:
        h = m.astype(np.float16)
        assert np.array_equal(h.astype(np.float64), m.astype(np.float64))
        return h.view(np.uint16)
    f = np.asarray(m, dtype=np.float32)
    assert not np.any(f.view(np.uint32) & 0xFFFF), "not exact in bf16"
    return (f.view(np.uint32) >> 16).astype(np.uint16)


def _regs(a_rows, b_cols, c_words, kind, a0=8, b0=16, c0=0):
    """VGPR dict: A at a0 (row m = lane m), B at b0 (column n = lane n), C words [8, 32] at c0."""
    aw, bw = pack_ab(a_rows, kind), pack_ab(b_cols, kind)
    vg = {a0 + j: aw[j] for j in range(aw.shape[0])}
    vg.update({b0 + j: bw[j] for j in range(bw.shape[0])})
    if c_words is not None:
        vg.update({c0 + r: c_words[r] for r in range(8)})
    return vg


def _c_words(c: np.ndarray) -> np.ndarray:
    return cd_to_words(np.ascontiguousarray(c, dtype=np.float32).view(np.uint32)[None])[0]


def _d(st, d0=24, dtype=np.float32) -> np.ndarray:
    words = np.stack([st.v(d0 + r) for r in range(8)])[None]
    return cd_from_words(words)[0].view(dtype)


def _ints(lo, hi, shape=(16, 16)):
    return rng.integers(lo, hi + 1, shape).astype(np.float64)


# -- layout ------------------------------------------------------------------------------------
def test_element_maps_of_a_b_and_c():
    # A/B: element (lane l, k) is half k % 2 of VGPR k // 2 of lane l, and lane l + 16 repeats lane l
    vals = np.arange(256, dtype=np.uint16).reshape(16, 16)
    words = pack_ab(vals, F16)
    assert words.shape == (8, 32)
    for lane in range(32):
        for k in range(16):
            w = int(words[k // 2, lane])
            assert (w >> (16 * (k % 2))) & 0xFFFF == vals[lane % 16, k]
    assert np.array_equal(unpack_ab(words[None, :, :16], F16)[0], vals)
    # iu8: byte k % 4 of VGPR k // 4; iu4: nibble k % 8 of VGPR k // 8
    v8 = rng.integers(0, 256, (16, 16))
    w8 = pack_ab(v8, "iu8")
    assert w8.shape == (4, 32) and all((int(w8[k // 4, 3]) >> (8 * (k % 4))) & 0xFF == v8[3, k] for k in range(16))
    v4 = rng.integers(0, 16, (16, 16))
    w4 = pack_ab(v4, "iu4")
    assert w4.shape == (2, 32) and all((int(w4[k // 8, 19]) >> (4 * (k % 8))) & 0xF == v4[3, k] for k in range(16))
    assert np.array_equal(unpack_ab(w4[None, :, :16], "iu4")[0], v4)
    # C/D: VGPR r, lane l holds (row 2r + l // 16, column l % 16)
    words = np.arange(256, dtype=np.uint32).reshape(1, 8, 32)
    mat = cd_from_words(words)[0]
    for r in range(8):
        for lane in range(32):
            assert mat[2 * r + lane // 16, lane % 16] == words[0, r, lane]
    assert np.array_equal(cd_to_words(mat[None]), words)


def test_identity_operands_expose_the_layout_through_the_instruction():
    a = _ints(-100, 100)
    eye = np.eye(16)
    # B = I: D = A + C, so A's rows come back in D's layout; A = I: D = B
    st = B.run("v_wmma_f32_16x16x16_f16 v[24:31], v[8:15], v[16:23], v[0:7]\n"
               "v_wmma_f32_16x16x16_f16 v[32:39], v[16:23], v[8:15], v[0:7]",
               vgprs=_regs(_bits16(a, F16), _bits16(eye, F16), _c_words(np.full((16, 16), 0.5)), F16))
    assert np.array_equal(_d(st), (a + 0.5).astype(np.float32))
    # the operands swapped: D = I x A^T (B's lane n holds column n of B = row n of A)
    assert np.array_equal(_d(st, 32), (a.T + 0.5).astype(np.float32))


# -- the six opcodes against numpy --------------------------------------------------------------
@pytest.mark.parametrize("kind", [F16, BF16])
def test_f32_accumulate_matches_numpy_exactly_on_small_integers(kind):
    for _ in range(3):
        a, b, c = _ints(-16, 16), _ints(-16, 16), _ints(-1000, 1000)
        st = B.run(f"v_wmma_f32_16x16x16_{kind} v[24:31], v[8:15], v[16:23], v[0:7]",
                   vgprs=_regs(_bits16(a, kind), _bits16(b.T, kind), _c_words(c), kind))
        assert np.array_equal(_d(st), (a @ b + c).astype(np.float32))


def test_inline_constant_c():
    a, b = _ints(-8, 8), _ints(-8, 8)
    st = B.run("v_wmma_f32_16x16x16_f16 v[24:31], v[8:15], v[16:23], 1.0",
               vgprs=_regs(_bits16(a, F16), _bits16(b.T, F16), None, F16))
    assert np.array_equal(_d(st), (a @ b + 1.0).astype(np.float32))


def test_rounding_is_fp32_one_product_at_a_time_in_k_order():
    # k = 0 gives 2**24; the fifteen products of 1 that follow each tie and round back to 2**24.
    # Summed exactly (or in the reverse order) the result would be 2**24 + 16 (+15 rounded).
    a = np.ones((16, 16))
    b = np.ones((16, 16))
    a[:, 0], b[0, :] = 2048.0, 8192.0
    st = B.run("v_wmma_f32_16x16x16_f16 v[24:31], v[8:15], v[16:23], 0",
               vgprs=_regs(_bits16(a, F16), _bits16(b.T, F16), None, F16))
    assert np.all(_d(st) == np.float32(2.0 ** 24))
    a2, b2 = a[:, ::-1].copy(), b[::-1, :].copy()  # the big product last
    st = B.run("v_wmma_f32_16x16x16_f16 v[24:31], v[8:15], v[16:23], 0",
               vgprs=_regs(_bits16(a2, F16), _bits16(b2.T, F16), None, F16))
    assert np.all(_d(st) == np.float32(2.0 ** 24 + 16))


@pytest.mark.parametrize("kind", [F16, BF16])
def test_random_values_follow_the_documented_fma_chain(kind):
    a = rng.uniform(-4, 4, (16, 16)).astype(np.float16).astype(np.float64)
    b = rng.uniform(-4, 4, (16, 16)).astype(np.float16).astype(np.float64)
    if kind == BF16:  # keep 8 significant bits
        a, b = ((np.asarray(m, np.float32).view(np.uint32) & 0xFFFF0000).view(np.float32).astype(np.float64)
                for m in (a, b))
    c = rng.uniform(-4, 4, (16, 16)).astype(np.float32)
    st = B.run(f"v_wmma_f32_16x16x16_{kind} v[24:31], v[8:15], v[16:23], v[0:7]",
               vgprs=_regs(_bits16(a, kind), _bits16(b.T, kind), _c_words(c), kind))
    d = _d(st)
    for m in range(0, 16, 3):
        for n in range(0, 16, 5):
            t = float(c[m, n])
            for k in range(16):
                t = reference_fma_f32(a[m, k], b[k, n], t)
            assert d[m, n] == np.float32(t), (m, n)
    # and close to, but not always equal to, the exact product (rounded once)
    assert np.allclose(d, a @ b + c, rtol=0, atol=1e-4)


def test_neg_lo_and_neg_hi_negate_even_and_odd_k_of_a_and_b():
    a, b, c = _ints(-8, 8), _ints(-8, 8), _ints(-50, 50)
    st = B.run("v_wmma_f32_16x16x16_f16 v[24:31], v[8:15], v[16:23], v[0:7] neg_lo:[1,0,0]\n"
               "v_wmma_f32_16x16x16_f16 v[32:39], v[8:15], v[16:23], v[0:7] neg_hi:[0,1,0]\n"
               "v_wmma_f32_16x16x16_f16 v[40:47], v[8:15], v[16:23], v[0:7] neg_lo:[1,1,0] neg_hi:[1,0,0]",
               vgprs=_regs(_bits16(a, F16), _bits16(b.T, F16), _c_words(c), F16))
    even = np.where(np.arange(16) % 2 == 0, -1.0, 1.0)
    odd = -even
    assert np.array_equal(_d(st), ((a * even) @ b + c).astype(np.float32))
    assert np.array_equal(_d(st, 32), (a @ (b * odd[:, None]) + c).astype(np.float32))
    assert np.array_equal(_d(st, 40), ((-a) @ (b * even[:, None]) + c).astype(np.float32))


@pytest.mark.parametrize("kind", [F16, BF16])
def test_16_bit_results_use_the_half_op_sel_names_and_keep_the_other(kind):
    # |D| <= 128 (bf16) or 1124 (fp16): integers exact in the result type
    r, rc = (2, 64) if kind == BF16 else (8, 100)
    a, b, c = _ints(-r, r), _ints(-r, r), _ints(-rc, rc)
    cb = cd_to_words(_bits16(c, kind).astype(np.uint32)[None])[0]
    keep = 0xBEEF
    lo_words = cb | np.uint32(keep << 16)
    hi_words = (cb << np.uint32(16)) | np.uint32(keep)
    vg = _regs(_bits16(a, kind), _bits16(b.T, kind), lo_words, kind)
    vg.update({24 + r: lo_words[r] for r in range(8)})
    vg.update({32 + r: hi_words[r] for r in range(8)})
    st = B.run(f"v_wmma_{kind}_16x16x16_{kind} v[24:31], v[8:15], v[16:23], v[24:31]\n"
               f"v_wmma_{kind}_16x16x16_{kind} v[32:39], v[8:15], v[16:23], v[32:39] op_sel:[0,0,1]", vgprs=vg)
    want = _bits16(a @ b + c, kind).astype(np.uint32)
    lo = _d(st, 24, np.uint32)
    hi = _d(st, 32, np.uint32)
    assert np.array_equal(lo & 0xFFFF, want) and np.all(lo >> 16 == keep)
    assert np.array_equal(hi >> 16, want) and np.all(hi & 0xFFFF == keep)


def test_16_bit_result_is_rounded_once_from_fp32():
    # 1 + 2**-11 is halfway between two fp16 values: nearest even gives 1.0; 1 + 3 * 2**-11 gives 1 + 2**-9
    a = np.zeros((16, 16))
    b = np.zeros((16, 16))
    a[:, 0], b[0, :] = 1.0, 1.0
    a[:, 1], b[1, :] = 2.0 ** -6, 2.0 ** -5
    a[8:, 2], b[2, :] = 2.0 ** -6, 2.0 ** -4
    st = B.run("v_wmma_f16_16x16x16_f16 v[24:31], v[8:15], v[16:23], v[24:31]",
               vgprs=_regs(_bits16(a, F16), _bits16(b.T, F16), None, F16))
    d = (_d(st, 24, np.uint32) & 0xFFFF).astype(np.uint16).view(np.float16)
    assert np.all(d[:8] == np.float16(1.0)) and np.all(d[8:] == np.float16(1 + 2.0 ** -9))


@pytest.mark.parametrize("kind,lo,hi", [("iu8", 0, 255), ("iu4", 0, 15)])
def test_integer_forms_signedness_from_neg_lo_and_clamp(kind, lo, hi):
    bits = 8 if kind == "iu8" else 4
    a, b = rng.integers(lo, hi + 1, (16, 16)), rng.integers(lo, hi + 1, (16, 16))
    c = rng.integers(-1000, 1000, (16, 16)).astype(np.int32)
    cw = cd_to_words(c.view(np.uint32)[None])[0]
    n = 4 if kind == "iu8" else 2
    body = (f"v_wmma_i32_16x16x16_{kind} v[24:31], v[8:{8 + n - 1}], v[16:{16 + n - 1}], v[0:7]\n"
            f"v_wmma_i32_16x16x16_{kind} v[32:39], v[8:{8 + n - 1}], v[16:{16 + n - 1}], v[0:7] neg_lo:[1,0,0]\n"
            f"v_wmma_i32_16x16x16_{kind} v[40:47], v[8:{8 + n - 1}], v[16:{16 + n - 1}], v[0:7] neg_lo:[1,1,0]")
    st = B.run(body, vgprs=_regs(a, b.T, cw, kind))
    sgn = lambda x: np.where(x >= 1 << (bits - 1), x - (1 << bits), x)  # noqa: E731
    assert np.array_equal(_d(st, 24, np.int32), a @ b + c)
    assert np.array_equal(_d(st, 32, np.int32), sgn(a) @ b + c)
    assert np.array_equal(_d(st, 40, np.int32), sgn(a) @ sgn(b) + c)


def test_integer_clamp_saturates_and_plain_wraps():
    a = np.full((16, 16), 255)
    b = np.full((16, 16), 255)
    c = np.full((16, 16), 2 ** 31 - 1000, dtype=np.int64)
    cw = cd_to_words(c.astype(np.uint32)[None])[0]
    st = B.run("v_wmma_i32_16x16x16_iu8 v[24:31], v[8:11], v[16:19], v[0:7] clamp\n"
               "v_wmma_i32_16x16x16_iu8 v[32:39], v[8:11], v[16:19], v[0:7]", vgprs=_regs(a, b.T, cw, "iu8"))
    total = 16 * 255 * 255 + 2 ** 31 - 1000
    assert np.all(_d(st, 24, np.int32) == 2 ** 31 - 1)
    assert np.all(_d(st, 32, np.int32) == np.int64(total - 2 ** 32))


# -- refusals ------------------------------------------------------------------------------------
@pytest.mark.parametrize("line,why", [
    ("v_wmma_f32_16x16x16_f16 v[24:31], v[8:15], v[16:23], v[0:7] neg_lo:[0,0,1]", "negating C"),
    ("v_wmma_f32_16x16x16_f16 v[24:31], v[8:15], v[16:23], v[0:7] neg_hi:[0,0,1]", "negating C"),
    ("v_wmma_f16_16x16x16_f16 v[24:31], v[8:15], v[16:23], v[24:31] op_sel:[0,1,0]", "op_sel"),
    ("v_wmma_f16_16x16x16_f16 v[24:31], v[8:15], v[16:23], v[24:31] op_sel:[1,0,0]", "op_sel"),
    ("v_wmma_i32_16x16x16_iu8 v[24:31], v[8:11], v[16:19], v[0:7] neg_hi:[1,0,0]", "neg_hi"),
])
def test_forms_without_a_documented_meaning_are_refused(line, why):
    with pytest.raises(EmulationError, match=re.escape(why)) as exc:
        B.run(line)
    assert "<snippet>:" in str(exc.value)


def test_wmma_needs_every_lane():
    with pytest.raises(EmulationError, match="EXEC not all ones"):
        B.run("v_wmma_f32_16x16x16_f16 v[24:31], v[8:15], v[16:23], v[0:7]", exec_mask=0xFFFF)


def test_d16_loads_write_one_half_and_keep_the_other():
    a = (np.arange(128, dtype=np.uint16) * 0x0301).view(np.uint8)
    st = B.run("global_load_d16_b16 v4, v[0:1], off\nglobal_load_d16_hi_b16 v5, v[0:1], off offset:64\n"
               "global_load_d16_hi_u8 v6, v[0:1], off\nglobal_load_d16_i8 v7, v[0:1], off offset:1\n"
               "s_waitcnt vmcnt(0)\nglobal_store_d16_hi_b16 v[0:1], v5, off offset:128\ns_waitcnt_vscnt null, 0x0",
               buffers={"a": a}, vgprs={0: buffer("a", LANE * 2), 4: 0x12345678, 5: 0x12345678, 6: 0x12345678,
                                        7: 0x12345678})
    h = a.view(np.uint16).astype(np.uint32)
    lane = np.arange(32)
    assert np.array_equal(st.v(4), 0x12340000 | h[lane])
    assert np.array_equal(st.v(5), 0x5678 | (h[lane + 32] << 16))
    assert np.array_equal(st.v(6), 0x5678 | ((h[lane] & 0xFF) << 16))
    hi_byte = (h[lane] >> 8).astype(np.int64)
    assert np.array_equal(st.v(7), 0x12340000 | (np.where(hi_byte >= 128, hi_byte - 256, hi_byte) & 0xFFFF))
    assert np.array_equal(st.buffers["a"].view(np.uint16)[64:96], h[lane + 32])


def test_snippets_assemble():
    B.assert_assembles()


# -- the fixture kernel ---------------------------------------------------------------------------
def _cli(*args):
    return CliRunner().invoke(cli, [*map(str, args)])


def test_fixture_runs_against_numpy():
    res = _cli("run", FIXTURE, "--gemm", 64, "--alpha", 1.5, "--beta", -0.5)
    assert res.exit_code == 0, res.output
    assert "OK: matches numpy" in res.output and "block 32x1x1 (kernels.json)" in res.output


def test_fixture_on_exact_inputs_equals_numpy_bit_for_bit(tmp_path):
    n = 48
    a = rng.integers(-8, 9, (n, n)).astype(np.float16)
    b = rng.integers(-8, 9, (n, n)).astype(np.float16)
    c = rng.integers(-100, 101, (n, n)).astype(np.float32)
    paths = []
    for name, m in zip("abc", (a, b, c)):
        paths.append(tmp_path / f"{name}.npy")
        np.save(paths[-1], m)
    out = tmp_path / "d.npy"
    res = _cli("run", FIXTURE, "--gemm", n, "--beta", 1, "--inputs", ",".join(map(str, paths)), "--save", out)
    assert res.exit_code == 0, res.output
    want = (a.astype(np.float64) @ b.astype(np.float64) + c).astype(np.float32)
    assert np.array_equal(np.load(out), want)
    # fp32 A or B is not what this kernel reads: refused, one line, exit 2
    np.save(paths[0], a.astype(np.float32))
    res = _cli("run", FIXTURE, "--gemm", n, "--inputs", ",".join(map(str, paths)))
    assert res.exit_code == 2 and "A must be float16" in res.output and "Traceback" not in res.output


def test_fixture_validates_equal_to_itself_and_different_from_mutants(tmp_path):
    need_toolchain()
    res = _cli("validate", FIXTURE, FIXTURE, "--gemm", 32)
    assert res.exit_code == 0 and "EQUAL" in res.output, res.output
    text = FIXTURE.read_text()
    wmma = re.search(r"^\s*v_wmma_f32_16x16x16_f16 (v\[\d+:\d+\]), (v\[\d+:\d+\]), (v\[\d+:\d+\]), (v\[\d+:\d+\])$",
                     text, re.M)
    assert wmma, "the fixture has one plain v_wmma_f32_16x16x16_f16"
    d, a, b, c = wmma.groups()
    mutants = {
        "neg": wmma.group(0) + " neg_lo:[1,0,0]",
        "swap": wmma.group(0).replace(f"{a}, {b}", f"{b}, {a}"),
    }
    for name, line in mutants.items():
        mutant = tmp_path / f"{name}.s"
        mutant.write_text(text.replace(wmma.group(0), line))
        res = _cli("validate", FIXTURE, mutant, "--gemm", 32)
        assert res.exit_code == 1 and "DIFFERENT" in res.output, (name, res.output)
