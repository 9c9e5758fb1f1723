"""VALU semantics against per-lane Python integer references: integer ops, carries, compares,
lane ops, VOPD, DPP and exec masking."""
from __future__ import annotations

import numpy as np
import pytest

from isalint.validate.emu import Unimplemented
from isalint.isa.semantics import OPS
from test_emu_support import Bench, bits, lanes

B = Bench()
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
M = 0xFFFF_FFFF
rng = np.random.default_rng(11)


def s32(x):
    x &= M
    return x - (1 << 32) if x & 0x8000_0000 else x


def sx24(x):
    x &= 0xFF_FFFF
    return x - (1 << 24) if x & 0x80_0000 else x


def bfe_i(a, off, w):
    w &= 31
    if w == 0:
        return 0
    t = (s32(a) >> (off & 31)) & ((1 << w) - 1)
    return t - (1 << w) if t >> (w - 1) & 1 else t


def med3(a, b, c):
    return sorted([a, b, c])[1]


# name: (operand count, python reference on unsigned 32-bit ints)
INT_REF = {
    "v_add_nc_u32": (2, lambda a, b: a + b),
    "v_sub_nc_u32": (2, lambda a, b: a - b),
    "v_subrev_nc_u32": (2, lambda a, b: b - a),
    "v_and_b32": (2, lambda a, b: a & b),
    "v_or_b32": (2, lambda a, b: a | b),
    "v_xor_b32": (2, lambda a, b: a ^ b),
    "v_xnor_b32": (2, lambda a, b: ~(a ^ b)),
    "v_not_b32": (1, lambda a: ~a),
    "v_bfrev_b32": (1, lambda a: int(f"{a & M:032b}"[::-1], 2)),
    "v_clz_i32_u32": (1, lambda a: 32 - (a & M).bit_length() if a & M else M),
    "v_ctz_i32_b32": (1, lambda a: ((a & -a) & M).bit_length() - 1 if a & M else M),
    "v_lshlrev_b32": (2, lambda a, b: b << (a & 31)),
    "v_lshrrev_b32": (2, lambda a, b: (b & M) >> (a & 31)),
    "v_ashrrev_i32": (2, lambda a, b: s32(b) >> (a & 31)),
    "v_mul_lo_u32": (2, lambda a, b: a * b),
    "v_mul_hi_u32": (2, lambda a, b: (a * b) >> 32),
    "v_mul_hi_i32": (2, lambda a, b: (s32(a) * s32(b)) >> 32),
    "v_mul_u32_u24": (2, lambda a, b: (a & 0xFFFFFF) * (b & 0xFFFFFF)),
    "v_mul_hi_u32_u24": (2, lambda a, b: ((a & 0xFFFFFF) * (b & 0xFFFFFF)) >> 32),
    "v_mul_i32_i24": (2, lambda a, b: sx24(a) * sx24(b)),
    "v_mul_hi_i32_i24": (2, lambda a, b: (sx24(a) * sx24(b)) >> 32),
    "v_mad_u32_u24": (3, lambda a, b, c: (a & 0xFFFFFF) * (b & 0xFFFFFF) + c),
    "v_mad_i32_i24": (3, lambda a, b, c: sx24(a) * sx24(b) + s32(c)),
    "v_add3_u32": (3, lambda a, b, c: a + b + c),
    "v_lshl_add_u32": (3, lambda a, b, c: (a << (b & 31)) + c),
    "v_add_lshl_u32": (3, lambda a, b, c: ((a + b) & M) << (c & 31)),
    "v_lshl_or_b32": (3, lambda a, b, c: (a << (b & 31)) | c),
    "v_and_or_b32": (3, lambda a, b, c: (a & b) | c),
    "v_or3_b32": (3, lambda a, b, c: a | b | c),
    "v_xor3_b32": (3, lambda a, b, c: a ^ b ^ c),
    "v_xad_u32": (3, lambda a, b, c: (a ^ b) + c),
    "v_bfe_u32": (3, lambda a, b, c: (a >> (b & 31)) & ((1 << (c & 31)) - 1)),
    "v_bfe_i32": (3, lambda a, b, c: bfe_i(a, b, c)),
    "v_bfi_b32": (3, lambda a, b, c: (a & b) | (~a & c)),
    "v_bfm_b32": (2, lambda a, b: ((1 << (a & 31)) - 1) << (b & 31)),
    "v_alignbit_b32": (3, lambda a, b, c: ((a << 32 | b) >> (c & 31))),
    "v_alignbyte_b32": (3, lambda a, b, c: ((a << 32 | b) >> (8 * (c & 3)))),
    "v_max_i32": (2, lambda a, b: max(s32(a), s32(b))),
    "v_min_i32": (2, lambda a, b: min(s32(a), s32(b))),
    "v_max_u32": (2, max), "v_min_u32": (2, min),
    "v_max3_i32": (3, lambda a, b, c: max(s32(a), s32(b), s32(c))),
    "v_min3_u32": (3, lambda a, b, c: min(a, b, c)),
    "v_med3_i32": (3, lambda a, b, c: med3(s32(a), s32(b), s32(c))),
    "v_med3_u32": (3, med3),
    "v_bcnt_u32_b32": (2, lambda a, b: bin(a).count("1") + b),
    "v_mov_b32": (1, lambda a: a),
}


def _inputs(n):
    special = [0, 1, 31, 32, 0x7FFF_FFFF, 0x8000_0000, M, 0x00FF_FFFF, 0x0080_0000, 0x1F, 0x3F, 0x21, 0x10]
    out = []
    for k in range(n):
        v = np.array(special + list(rng.integers(0, 1 << 32, size=32 - len(special), dtype=np.uint64)), np.uint64)
        out.append(np.roll(v, 3 * k).astype(np.uint32))
    return out


@pytest.mark.parametrize("name", sorted(INT_REF))
def test_integer_op(name):
    n, ref = INT_REF[name]
    args = _inputs(n)
    srcs = ", ".join(f"v{i}" for i in range(n))
    suffix = "_e32" if n <= 2 and f"{name}_e32" in _e32_names() else ""
    st = B.run(f"{name}{suffix} v10, {srcs}", vgprs={i: a for i, a in enumerate(args)})
    want = [ref(*[int(a[lane]) for a in args]) & M for lane in range(32)]
    assert list(st.v(10)) == want


def _e32_names():
    from isalint.isa import all_mnemonics
    return set(all_mnemonics())


def test_every_table_op_has_a_reference_test():
    """Every integer VALU definition of isalint.isa.semantics has a reference here or a test of its own."""
    fp = {k for k, v in OPS.items() if v.types & {"f32", "f64"}}
    tested_elsewhere = {"v_perm_b32", "v_add_nc_i32", "v_sub_nc_i32", "v_max3_u32", "v_min3_i32", "v_lshlrev_b64",
                        "v_lshrrev_b64", "v_ashrrev_i64", "v_mad_u64_u32", "v_mad_i64_i32", "v_add_co_u32",
                        "v_sub_co_u32", "v_subrev_co_u32", "v_add_co_ci_u32", "v_sub_co_ci_u32", "v_subrev_co_ci_u32",
                        "v_cndmask_b32", "v_readfirstlane_b32", "v_readlane_b32", "v_writelane_b32",
                        "v_mbcnt_lo_u32_b32", "v_mbcnt_hi_u32_b32", "v_max3_u32", "v_min3_i32"}
    compares = {k for k in OPS if k.startswith(("v_cmp_", "v_cmpx_"))}
    vector = {k for k in OPS if k.startswith("v_")}
    missing = vector - set(INT_REF) - fp - tested_elsewhere - compares
    assert not missing, missing


def test_perm_b32():
    a, b = 0x11223344, 0x55667788
    sel = lanes([0x00010203, 0x07060504, 0x0C0C0C0C, 0x0D0E0F08, 0x0B0A0908], np.uint32)
    st = B.run("v_perm_b32 v10, v0, v1, v2", vgprs={0: a, 1: b, 2: sel})
    src = (a << 32 | b).to_bytes(8, "little")

    def ref(s):
        out = 0
        for i in range(4):
            k = (s >> (8 * i)) & 0xFF
            if k < 8:
                byte = src[k]
            elif k < 12:
                bit = [15, 31, 47, 63][k - 8]
                byte = 0xFF if ((a << 32 | b) >> bit) & 1 else 0
            elif k == 12:
                byte = 0
            else:
                byte = 0xFF
            out |= byte << (8 * i)
        return out
    assert list(st.v(10)[:5]) == [ref(int(s)) for s in sel[:5]]


def test_64bit_shifts_and_mad64():
    x = [int(v) for v in rng.integers(0, 1 << 63, size=32, dtype=np.uint64)]
    lo = np.array([v & M for v in x], np.uint32)
    hi = np.array([v >> 32 for v in x], np.uint32)
    sh = lanes([0, 1, 31, 32, 33, 63, 64, 5], np.uint32)
    st = B.run("v_lshlrev_b64 v[10:11], v4, v[0:1]\nv_lshrrev_b64 v[12:13], v4, v[0:1]\n"
               "v_ashrrev_i64 v[14:15], v4, v[0:1]", vgprs={0: lo, 1: hi | 0x8000_0000 * (np.arange(32) % 2 == 1),
                                                            4: sh})
    xs = [(int(hi[i] | (0x8000_0000 if i % 2 else 0)) << 32) | int(lo[i]) for i in range(32)]
    M64 = (1 << 64) - 1
    for i in range(32):
        s = int(sh[i]) & 63
        assert (int(st.v(11)[i]) << 32 | int(st.v(10)[i])) == (xs[i] << s) & M64
        assert (int(st.v(13)[i]) << 32 | int(st.v(12)[i])) == xs[i] >> s
        signed = xs[i] - (1 << 64) if xs[i] >> 63 else xs[i]
        assert (int(st.v(15)[i]) << 32 | int(st.v(14)[i])) == (signed >> s) & M64


@pytest.mark.parametrize("signed", [False, True])
def test_mad_64_with_carry(signed):
    a = lanes([M, 0x8000_0000, 5, 0x7FFF_FFFF, 0], np.uint32)
    b = lanes([M, 0x8000_0000, 7, 2, 9], np.uint32)
    c = [(1 << 64) - 1, 1 << 63, 12, (1 << 63) - 5, 3]
    cl = lanes([v & M for v in c], np.uint32)
    ch = lanes([v >> 32 for v in c], np.uint32)
    op = "v_mad_i64_i32" if signed else "v_mad_u64_u32"
    st = B.run(f"{op} v[10:11], s20, v0, v1, v[2:3]", vgprs={0: a, 1: b, 2: cl, 3: ch})
    for i in range(5):
        x, y, z = int(a[i]), int(b[i]), c[i]
        if signed:
            x, y = s32(x), s32(y)
            z = z - (1 << 64) if z >> 63 else z
        total = x * y + z
        assert (int(st.v(11)[i]) << 32 | int(st.v(10)[i])) == total & ((1 << 64) - 1)
        carry = (total >> 64) & 1
        assert (st.s(20) >> i) & 1 == carry, i


def test_carry_chain_64bit_add_and_sub():
    x = [int(v) for v in rng.integers(0, 1 << 64, size=32, dtype=np.uint64)]
    y = [int(v) for v in rng.integers(0, 1 << 64, size=32, dtype=np.uint64)]
    x[0], y[0] = (1 << 64) - 1, 1  # full carry propagation
    x[1], y[1] = 0, 1  # full borrow
    reg = lambda vals, hi: np.array([(v >> 32 if hi else v & M) for v in vals], np.uint32)  # noqa: E731
    body = ("v_add_co_u32 v10, vcc_lo, v0, v2\nv_add_co_ci_u32_e32 v11, vcc_lo, v1, v3, vcc_lo\n"
            "v_mov_b32_e32 v20, vcc_lo\n"
            "v_sub_co_u32 v12, s4, v0, v2\nv_sub_co_ci_u32_e64 v13, s5, v1, v3, s4\n"
            "v_subrev_co_u32 v14, s6, v0, v2\nv_subrev_co_ci_u32_e64 v15, null, v1, v3, s6")
    st = B.run(body, vgprs={0: reg(x, 0), 1: reg(x, 1), 2: reg(y, 0), 3: reg(y, 1)})
    M64 = (1 << 64) - 1
    for i in range(32):
        assert (int(st.v(11)[i]) << 32 | int(st.v(10)[i])) == (x[i] + y[i]) & M64
        assert (int(st.v(20)[i]) >> i) & 1 == (x[i] + y[i]) >> 64
        assert (int(st.v(13)[i]) << 32 | int(st.v(12)[i])) == (x[i] - y[i]) & M64
        assert (st.s(5) >> i) & 1 == int(x[i] < y[i])
        assert (int(st.v(15)[i]) << 32 | int(st.v(14)[i])) == (y[i] - x[i]) & M64


def test_carry_out_is_zero_for_inactive_lanes_and_dest_kept():
    st = B.run("v_add_co_u32 v10, s4, v0, v1", vgprs={0: M, 1: 1, 10: 77}, exec_mask=0x0000_FFFF)
    assert st.s(4) == 0x0000_FFFF
    assert list(st.v(10)[:16]) == [0] * 16 and list(st.v(10)[16:]) == [77] * 16


CMP = [("eq", lambda a, b: a == b), ("ne", lambda a, b: a != b), ("lt", lambda a, b: a < b),
       ("le", lambda a, b: a <= b), ("gt", lambda a, b: a > b), ("ge", lambda a, b: a >= b)]


@pytest.mark.parametrize("op,ref", CMP)
@pytest.mark.parametrize("typ", ["i32", "u32"])
def test_vopc_integer(op, ref, typ):
    a, b = _inputs(2)
    b[:8] = a[:8]
    conv = s32 if typ == "i32" else (lambda v: v)
    st = B.run(f"v_cmp_{op}_{typ}_e32 vcc_lo, v0, v1\nv_cmp_{op}_{typ}_e64 s8, v0, v1\nv_cmp_{op}_{typ}_e64 s9, s2, v1",
               vgprs={0: a, 1: b}, sgprs={2: int(a[5])}, exec_mask=0xFFFF_FF7F)
    want = sum(1 << i for i in range(32) if ref(conv(int(a[i])), conv(int(b[i]))) and i != 7)
    assert st.s(106) == want and st.s(8) == want
    want_s = sum(1 << i for i in range(32) if ref(conv(int(a[5])), conv(int(b[i]))) and i != 7)
    assert st.s(9) == want_s


def test_vopc_float_ordered_unordered_and_class():
    a = lanes([1.0, np.nan, 2.0, -0.0, np.inf, 3.0])
    b = lanes([1.0, 1.0, np.nan, 0.0, np.inf, 2.0])
    st = B.run("v_cmp_eq_f32_e64 s10, v0, v1\nv_cmp_neq_f32_e64 s11, v0, v1\nv_cmp_lg_f32_e64 s12, v0, v1\n"
               "v_cmp_u_f32_e64 s13, v0, v1\nv_cmp_nlt_f32_e64 s14, v0, v1\n"
               "v_cmp_class_f32_e64 s15, v0, 0x3", vgprs={0: a, 1: b})
    fa, fb = a.astype(np.float64), b.astype(np.float64)
    mask = lambda c: sum(1 << i for i in range(32) if c[i])  # noqa: E731
    assert st.s(10) == mask(fa == fb)
    assert st.s(11) == mask(~(fa == fb))
    assert st.s(12) == mask((fa < fb) | (fa > fb))
    assert st.s(13) == mask(np.isnan(fa) | np.isnan(fb))
    assert st.s(14) == mask(~(fa < fb))
    assert st.s(15) == mask(np.isnan(fa))  # class bits 0|1: signaling or quiet NaN


def test_cmpx_and_exec_masked_writes():
    x = np.arange(32, dtype=np.uint32)
    st = B.run("v_cmpx_gt_u32_e32 16, v0\nv_mov_b32_e32 v1, 5\nv_cmpx_lt_u32_e64 v0, 4\n"
               "v_add_nc_u32_e32 v2, 1, v2", vgprs={0: x, 1: 9, 2: 100})
    assert st.exec == 0xF
    assert list(st.v(1)) == [5] * 16 + [9] * 16
    assert list(st.v(2)) == [101] * 4 + [100] * 28


def test_cndmask_forms():
    st = B.run("v_cndmask_b32_e32 v10, v0, v1, vcc_lo\nv_cndmask_b32_e64 v11, v0, v1, s4\n"
               "v_cndmask_b32_e64 v12, v0, -v1, s4", vgprs={0: 1, 1: bits(2.0)},
               sgprs={106: 0xAAAA_AAAA, 4: 0x0000_FFFF})
    assert list(st.v(10)[:4]) == [1, 0x40000000, 1, 0x40000000]
    assert list(st.v(11)[14:18]) == [0x40000000, 0x40000000, 1, 1]
    assert st.v(12, np.float32)[0] == -2.0


def test_lane_ops():
    x = np.arange(100, 132, dtype=np.uint32)
    st = B.run("v_readfirstlane_b32 s4, v0\nv_readlane_b32 s5, v0, 7\nv_readlane_b32 s6, v0, s2\n"
               "v_writelane_b32 v1, s3, 9\nv_mbcnt_lo_u32_b32 v2, -1, 0\nv_mbcnt_hi_u32_b32 v2, -1, v2\n"
               "v_mbcnt_lo_u32_b32 v3, s7, 10",
               vgprs={0: x, 1: 0}, sgprs={2: 33, 3: 0xABC, 7: 0xF0F0_0000}, exec_mask=0xFFFF_FFF0)
    assert st.s(4) == 104 and st.s(5) == 107 and st.s(6) == 101  # lane 33 & 31 = 1
    assert int(st.v(1)[9]) == 0xABC and int(st.v(1)[8]) == 0
    assert list(st.v(2)[4:8]) == [4, 5, 6, 7]
    want = [10 + bin(0xF0F0_0000 & ((1 << i) - 1)).count("1") for i in range(32)]
    assert list(st.v(3)[4:]) == want[4:]


def test_vopd_reads_both_sources_before_writing():
    st = B.run("v_dual_mov_b32 v2, v3 :: v_dual_mov_b32 v3, v2\n"
               "v_dual_mov_b32 v4, v2 :: v_dual_add_nc_u32 v3, v4, v3",
               vgprs={2: 10, 3: 30, 4: 7})
    assert st.v(2)[0] == 30 and st.v(3)[0] == 17 and st.v(4)[0] == 30


def test_vopd_cndmask_uses_vcc_and_respects_exec():
    st = B.run("v_dual_cndmask_b32 v1, v2, v3 :: v_dual_mov_b32 v4, 9", vgprs={2: 1, 3: 2, 4: 5, 1: 0},
               sgprs={106: 0x1}, exec_mask=0x3)
    assert list(st.v(1)[:3]) == [2, 1, 0] and list(st.v(4)[:3]) == [9, 9, 5]


# ----------------------------------------------------------------------------- DPP

def _dpp_ref(src, old, sel_fn, row_mask=0xF, bank_mask=0xF, bc=False, exec_mask=M, fi=False):
    out = list(old)
    for lane in range(32):
        if not (exec_mask >> lane) & 1:
            continue
        if not (row_mask >> (lane // 16)) & 1 or not (bank_mask >> ((lane % 16) // 4)) & 1:
            continue
        s = sel_fn(lane)
        valid = s is not None and (fi or (exec_mask >> s) & 1)
        if valid:
            out[lane] = int(src[s])
        elif bc:
            out[lane] = 0
    return out


def _rowsel(kind, n):
    def f(lane):
        base, pos = lane & ~15, lane & 15
        if kind == "row_shl":
            return base + pos + n if pos + n <= 15 else None
        if kind == "row_shr":
            return base + pos - n if pos - n >= 0 else None
        if kind == "row_ror":
            return base + (pos - n) % 16
        if kind == "row_mirror":
            return base + 15 - pos
        if kind == "row_half_mirror":
            return (lane & ~7) + 7 - (lane & 7)
        if kind == "row_share":
            return base + n
        if kind == "row_xmask":
            return base + (pos ^ n)
    return f


@pytest.mark.parametrize("ctrl,n", [("row_shl", 1), ("row_shl", 15), ("row_shr", 1), ("row_shr", 3),
                                    ("row_ror", 4), ("row_ror", 15), ("row_mirror", None),
                                    ("row_half_mirror", None), ("row_share", 5), ("row_xmask", 6)])
@pytest.mark.parametrize("masks", [(0xF, 0xF, False), (0x1, 0xF, False), (0xF, 0x5, False), (0xF, 0xF, True)])
def test_dpp_row_controls(ctrl, n, masks):
    rm, bm, bc = masks
    src = np.arange(1, 33, dtype=np.uint32) * 3
    old = np.full(32, 999, np.uint32)
    ctl = f"{ctrl}:{n}" if n is not None else ctrl
    tail = f" row_mask:{rm:#x} bank_mask:{bm:#x}" + (" bound_ctrl:1" if bc else "")
    st = B.run(f"v_mov_b32_dpp v1, v0 {ctl}{tail}", vgprs={0: src, 1: old})
    assert list(st.v(1)) == _dpp_ref(src, old, _rowsel(ctrl, n), rm, bm, bc)


@pytest.mark.parametrize("perm", [[0, 1, 2, 3], [1, 0, 3, 2], [3, 3, 0, 1], [2, 2, 2, 2]])
def test_dpp_quad_perm_with_alu(perm):
    a = np.arange(32, dtype=np.float32) + 0.5
    b = np.full(32, 10.0, np.float32)
    st = B.run(f"v_add_f32_dpp v2, v0, v1 quad_perm:[{','.join(map(str, perm))}] row_mask:0xf bank_mask:0xf",
               vgprs={0: a, 1: b, 2: 0})
    want = np.array([a[(i & ~3) + perm[i & 3]] for i in range(32)], np.float32) + b
    assert np.array_equal(st.v(2, np.float32), want)


@pytest.mark.parametrize("fi", [False, True])
@pytest.mark.parametrize("bc", [False, True])
def test_dpp_inactive_source_lanes(fi, bc):
    src = np.arange(32, dtype=np.uint32) + 100
    old = np.full(32, 7, np.uint32)
    ex = 0xFFFF_FFFF & ~(1 << 2) & ~(1 << 20)
    mods = " bound_ctrl:1" * bc + " fi:1" * fi
    st = B.run(f"v_mov_b32_dpp v1, v0 row_shr:1 row_mask:0xf bank_mask:0xf{mods}", vgprs={0: src, 1: old},
               exec_mask=ex)
    assert list(st.v(1)) == _dpp_ref(src, old, _rowsel("row_shr", 1), bc=bc, exec_mask=ex, fi=fi)


def test_dpp8():
    src = np.arange(32, dtype=np.uint32)
    sel = [7, 6, 5, 4, 3, 2, 1, 0]
    st = B.run("v_mov_b32_dpp v1, v0 dpp8:[7,6,5,4,3,2,1,0]", vgprs={0: src})
    assert list(st.v(1)) == [(i & ~7) + sel[i & 7] for i in range(32)]


def test_unimplemented_opcode_names_itself_and_line():
    with pytest.raises(Unimplemented) as info:
        B.run("v_mov_b32_e32 v1, 0\nv_sad_u32 v2, v0, v1, v3")
    msg = str(info.value)
    assert "v_sad_u32" in msg and "<snippet>:8:" in msg


def test_operand_beyond_allocated_vgprs_is_an_error():
    from isalint.validate.emu import EmulationError
    with pytest.raises(EmulationError, match="v20 is beyond"):
        B.run("v_mov_b32_e32 v20, 0", nvgpr=16)


def test_snippets_assemble():
    B.assert_assembles()
