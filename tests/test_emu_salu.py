"""SALU, SCC, exec manipulation and scalar control flow (including waves that branch apart)."""
from __future__ import annotations

import numpy as np
import pytest

from isalint.isa import lookup
from isalint.isa.semantics import OPS
from test_emu_support import Bench

B = Bench()
# the scalar definitions of isalint.isa.semantics: SCC-only ones are the compares
SOPC = {k for k, v in OPS.items() if k.startswith("s_") and [n for n, _ in v.outs] == ["SCC"]}
SOP = {k for k in OPS if k.startswith("s_")} - SOPC
M = 0xFFFF_FFFF
M64 = (1 << 64) - 1


def s32(x):
    x &= M
    return x - (1 << 32) if x >> 31 else x


def bfe(a, spec, wide, signed):
    # tmp = (S0 >> S1[4:0]) & ((1 << S1[22:16]) - 1), the shift arithmetic for _i32/_i64 (S0.i32 >>)
    off = spec & (63 if wide else 31)
    w = min((spec >> 16) & 0x7F, 64 if wide else 32)
    n = 64 if wide else 32
    src = a - (1 << n) if signed and a >> (n - 1) & 1 else a
    t = (src >> off) & ((1 << w) - 1)
    if signed and w and t >> (w - 1) & 1:
        t -= 1 << w
    return t & (M64 if wide else M)


# name: (python reference returning (value, scc or None))
REF = {
    "s_add_u32": lambda a, b: ((a + b) & M, (a + b) >> 32),
    "s_sub_u32": lambda a, b: ((a - b) & M, int(b > a)),
    "s_add_i32": lambda a, b: ((a + b) & M, int(not -2**31 <= s32(a) + s32(b) < 2**31)),
    "s_sub_i32": lambda a, b: ((a - b) & M, int(not -2**31 <= s32(a) - s32(b) < 2**31)),
    "s_mul_i32": lambda a, b: ((a * b) & M, None),
    "s_mul_hi_u32": lambda a, b: ((a * b) >> 32, None),
    "s_mul_hi_i32": lambda a, b: (((s32(a) * s32(b)) >> 32) & M, None),
    "s_min_i32": lambda a, b: (min(s32(a), s32(b)) & M, int(s32(a) < s32(b))),
    "s_max_i32": lambda a, b: (max(s32(a), s32(b)) & M, int(s32(a) >= s32(b))),
    "s_min_u32": lambda a, b: (min(a, b), int(a < b)),
    "s_max_u32": lambda a, b: (max(a, b), int(a >= b)),
    "s_absdiff_i32": lambda a, b: (abs(s32(a) - s32(b)) & M, int(abs(s32(a) - s32(b)) & M != 0)),
    "s_lshl_b32": lambda a, b: ((a << (b & 31)) & M, int((a << (b & 31)) & M != 0)),
    "s_lshr_b32": lambda a, b: (a >> (b & 31), int(a >> (b & 31) != 0)),
    "s_ashr_i32": lambda a, b: ((s32(a) >> (b & 31)) & M, int((s32(a) >> (b & 31)) != 0)),
    "s_and_b32": lambda a, b: (a & b, int(a & b != 0)),
    "s_or_b32": lambda a, b: (a | b, int(a | b != 0)),
    "s_xor_b32": lambda a, b: (a ^ b, int(a ^ b != 0)),
    "s_nand_b32": lambda a, b: (~(a & b) & M, int(~(a & b) & M != 0)),
    "s_nor_b32": lambda a, b: (~(a | b) & M, int(~(a | b) & M != 0)),
    "s_xnor_b32": lambda a, b: (~(a ^ b) & M, int(~(a ^ b) & M != 0)),
    "s_and_not1_b32": lambda a, b: (a & ~b & M, int(a & ~b & M != 0)),
    "s_or_not1_b32": lambda a, b: ((a | ~b) & M, int((a | ~b) & M != 0)),
    "s_bfe_u32": lambda a, b: (bfe(a, b, False, False), int(bfe(a, b, False, False) != 0)),
    "s_bfe_i32": lambda a, b: (bfe(a, b, False, True), int(bfe(a, b, False, True) != 0)),
    "s_bfm_b32": lambda a, b: ((((1 << (a & 31)) - 1) << (b & 31)) & M, None),
    "s_lshl1_add_u32": lambda a, b: (((a << 1) + b) & M, int((a << 1) + b >= 1 << 32)),
    "s_lshl2_add_u32": lambda a, b: (((a << 2) + b) & M, int((a << 2) + b >= 1 << 32)),
    "s_lshl3_add_u32": lambda a, b: (((a << 3) + b) & M, int((a << 3) + b >= 1 << 32)),
    "s_lshl4_add_u32": lambda a, b: (((a << 4) + b) & M, int((a << 4) + b >= 1 << 32)),
    "s_pack_ll_b32_b16": lambda a, b: ((a & 0xFFFF) | (b & 0xFFFF) << 16, None),
    "s_pack_lh_b32_b16": lambda a, b: ((a & 0xFFFF) | (b & 0xFFFF0000), None),
    "s_pack_hh_b32_b16": lambda a, b: ((a >> 16) | (b & 0xFFFF0000), None),
}
UNARY = {
    "s_mov_b32": lambda a: (a, None),
    "s_not_b32": lambda a: (~a & M, int(~a & M != 0)),
    "s_brev_b32": lambda a: (int(f"{a:032b}"[::-1], 2), None),
    "s_bcnt1_i32_b32": lambda a: (bin(a).count("1"), int(a != 0)),
    "s_bcnt0_i32_b32": lambda a: (32 - bin(a).count("1"), int(a != M)),
    "s_ctz_i32_b32": lambda a: (((a & -a).bit_length() - 1) & M if a else M, None),
    "s_clz_i32_u32": lambda a: (32 - a.bit_length() if a else M, None),
    "s_sext_i32_i8": lambda a: ((a & 0xFF) - (0x100 if a & 0x80 else 0) & M, None),
    "s_sext_i32_i16": lambda a: ((a & 0xFFFF) - (0x10000 if a & 0x8000 else 0) & M, None),
    "s_abs_i32": lambda a: (abs(s32(a)) & M, int(a != 0)),
}
PAIRS = [(5, 7), (M, 1), (0x8000_0000, 0x8000_0000), (0x7FFF_FFFF, 1), (3, M), (0, 0), (0x1234_5678, 0x0008_0004),
         (0xF0F0_F0F0, 0x0010_0008), (0x8765_4321, 0x0007_001F), (1, 31)]


@pytest.mark.parametrize("name", sorted(REF))
def test_sop2(name):
    ref = REF[name]
    body = "\n".join(f"{name} s{20 + i}, s{2 * i}, s{2 * i + 1}\ns_cselect_b32 s{40 + i}, 1, 0"
                     for i in range(len(PAIRS)))
    sg = {}
    for i, (a, b) in enumerate(PAIRS):
        sg[2 * i], sg[2 * i + 1] = a, b
    st = B.run(body, sgprs=sg, scc=True)
    for i, (a, b) in enumerate(PAIRS):
        v, scc = ref(a, b)
        assert st.s(20 + i) == v, (name, a, b)
        if scc is not None:
            assert st.s(40 + i) == scc, (name, a, b, "scc")
        else:
            assert st.s(40 + i) == 1, (name, "scc must be unchanged")


@pytest.mark.parametrize("name", sorted(UNARY))
def test_sop1(name):
    vals = [0, 1, 0x80, 0x8000, M, 0x8000_0000, 0x1234_5678, 0xFF]
    body = "\n".join(f"{name} s{20 + i}, s{i}\ns_cselect_b32 s{40 + i}, 1, 0" for i in range(len(vals)))
    st = B.run(body, sgprs=dict(enumerate(vals)), scc=True)
    for i, a in enumerate(vals):
        v, scc = UNARY[name](a)
        assert st.s(20 + i) == v, (name, a)
        assert st.s(40 + i) == (1 if scc is None else scc), (name, a, "scc")


def test_scc_effects_match_isa_data():
    """SCC written by the emulator's SALU table exactly when the ISA data says the opcode defines it."""
    for name in list(REF) + list(UNARY):
        info = lookup(name)
        assert info is not None, name
        writes = ("scc" in info.implicit_defs)
        ref = REF.get(name) or UNARY.get(name)
        sample = ref(5, 7) if name in REF else ref(5)
        assert (sample[1] is not None) == writes, name
    for name in SOP:
        assert lookup(name) is not None, name
    for name in SOPC:
        assert "scc" in lookup(name).implicit_defs, name


def test_64bit_ops_and_carry_chain():
    a, b = 0xFFFF_FFFF_0000_0001, 0x0000_0001_FFFF_FFFF
    body = ("s_add_u32 s20, s0, s2\ns_addc_u32 s21, s1, s3\ns_cselect_b32 s30, 1, 0\n"
            "s_sub_u32 s22, s0, s2\ns_subb_u32 s23, s1, s3\ns_cselect_b32 s31, 1, 0\n"
            "s_lshl_b64 s[24:25], s[0:1], 4\ns_lshr_b64 s[26:27], s[0:1], 36\ns_ashr_i64 s[28:29], s[0:1], 36\n"
            "s_and_b64 s[32:33], s[0:1], s[2:3]\ns_not_b64 s[34:35], s[0:1]\ns_bfe_u64 s[36:37], s[0:1], 0x200020\n"
            "s_mov_b64 s[38:39], 0xffffffff\ns_mov_b64 s[40:41], -1\ns_cmp_eq_u64 s[0:1], s[0:1]\n"
            "s_cselect_b64 s[42:43], s[0:1], s[2:3]\ns_cmp_lg_u64 s[0:1], s[0:1]\n"
            "s_cselect_b64 s[44:45], s[0:1], s[2:3]")
    st = B.run(body, sgprs={0: a & M, 1: a >> 32, 2: b & M, 3: b >> 32})
    get = lambda n: st.s(n) | st.s(n + 1) << 32  # noqa: E731
    assert get(20) == (a + b) & M64 and st.s(30) == (a + b) >> 64
    assert get(22) == (a - b) & M64 and st.s(31) == int(b > a)
    assert get(24) == (a << 4) & M64 and get(26) == a >> 36
    assert get(28) == ((a - (1 << 64)) >> 36) & M64
    assert get(32) == a & b and get(34) == ~a & M64 and get(36) == (a >> 32) & M
    assert get(38) == 0xFFFF_FFFF and get(40) == M64  # literal zero-extended, inline -1 sign-extended
    assert get(42) == a and get(44) == b


def test_sopk_and_compares():
    body = ("s_movk_i32 s20, 0x8000\ns_addk_i32 s21, 0xfff0\ns_mulk_i32 s22, 3\n"
            "s_cmpk_lg_i32 s0, 0x1000\ns_cselect_b32 s23, 1, 0\n"
            "s_cmpk_lt_u32 s1, 0xffff\ns_cselect_b32 s24, 1, 0\n"
            "s_cmp_gt_i32 s1, s0\ns_cselect_b32 s25, 1, 0\n"
            "s_cmp_lt_u32 s1, s0\ns_cselect_b32 s26, 1, 0\n"
            "s_bitcmp1_b32 s0, 12\ns_cselect_b32 s27, 1, 0\ns_cmovk_i32 s28, 0x7\ns_cmov_b32 s29, s0")
    st = B.run(body, sgprs={0: 0x1000, 1: M, 21: 100, 22: 7, 28: 1, 29: 2})
    assert st.s(20) == 0xFFFF_8000 and st.s(21) == 84 and st.s(22) == 21
    assert st.s(23) == 0 and st.s(24) == 0 and st.s(25) == 0 and st.s(26) == 0 and st.s(27) == 1
    assert st.s(28) == 7 and st.s(29) == 0x1000  # SCC was 1 from s_bitcmp1


SAVEEXEC = {"and": lambda s, e: s & e, "or": lambda s, e: s | e, "xor": lambda s, e: s ^ e,
            "nand": lambda s, e: ~(s & e) & M, "nor": lambda s, e: ~(s | e) & M, "xnor": lambda s, e: ~(s ^ e) & M,
            "and_not1": lambda s, e: s & ~e & M, "and_not0": lambda s, e: ~s & e & M,
            "or_not1": lambda s, e: (s | ~e) & M, "or_not0": lambda s, e: (~s | e) & M}


@pytest.mark.parametrize("form,op", [("saveexec", op) for op in sorted(SAVEEXEC)] +
                         [("wrexec", "and_not0"), ("wrexec", "and_not1")])
def test_saveexec(form, op):
    ex, src = 0x00FF_00FF, 0x0F0F_0F0F
    st = B.run(f"s_{op}_{form}_b32 s4, s2\ns_cselect_b32 s5, 1, 0\nv_mov_b32_e32 v1, 1", sgprs={2: src},
               exec_mask=ex, vgprs={1: 0})
    new = SAVEEXEC[op](src, ex)
    assert st.s(4) == (ex if form == "saveexec" else new) and st.exec == new and st.s(5) == int(new != 0)
    assert list(st.v(1)) == [(new >> i) & 1 for i in range(32)]


@pytest.mark.parametrize("scc", [False, True])
def test_cmov_b64_and_bitset(scc):
    body = ("s_mov_b64 s[20:21], s[0:1]\ns_cmov_b64 s[20:21], s[2:3]\n"
            "s_mov_b32 s22, -1\ns_bitset0_b32 s22, s4\ns_mov_b32 s23, 0\ns_bitset1_b32 s23, s4")
    st = B.run(body, sgprs={0: 1, 1: 2, 2: 3, 3: 4, 4: 37}, scc=scc)
    assert (st.s(20), st.s(21)) == ((3, 4) if scc else (1, 2))
    assert st.s(22) == M & ~(1 << 5) and st.s(23) == 1 << 5  # the bit number is S0[4:0]


def test_uniform_loop_with_scc_branch():
    body = """s_mov_b32 s2, 0
s_mov_b32 s3, 0
.Lloop:
s_add_i32 s3, s3, s2
s_add_i32 s2, s2, 1
s_cmp_lg_u32 s2, 10
s_cbranch_scc1 .Lloop
v_mov_b32_e32 v1, s3"""
    st = B.run(body, vgprs={1: 0})
    assert st.s(3) == 45 and st.v(1)[0] == 45


def test_execz_vccz_branches():
    body = """v_cmp_gt_u32_e32 vcc_lo, 4, v0
s_and_saveexec_b32 s6, vcc_lo
s_cbranch_execz .Lskip
v_mov_b32_e32 v1, 7
.Lskip:
s_or_b32 exec_lo, exec_lo, s6
s_cbranch_vccz .Lend
v_add_nc_u32_e32 v2, 1, v2
.Lend:"""
    st = B.run(body, vgprs={0: np.arange(32), 1: 0, 2: 0})
    assert list(st.v(1)) == [7] * 4 + [0] * 28
    assert list(st.v(2)) == [1] * 32


def test_waves_that_branch_apart_split_and_merge_at_barrier():
    """Waves take different scalar paths (by wave-specific SGPR) and meet again at s_barrier."""
    body = """s_cmp_eq_u32 s8, 0
s_cbranch_scc1 .Lzero
v_mov_b32_e32 v1, 100
ds_store_b32 v0, v1
s_branch .Ljoin
.Lzero:
v_mov_b32_e32 v1, 200
v_add_nc_u32_e32 v1, v1, v1
ds_store_b32 v0, v1 offset:256
.Ljoin:
s_waitcnt lgkmcnt(0)
s_barrier
ds_load_b32 v2, v3
ds_load_b32 v4, v3 offset:256
s_waitcnt lgkmcnt(0)"""
    addr = np.arange(32, dtype=np.uint32) * 4
    # wave 0 has s8 = 0, wave 1 has s8 = 1: they split; afterwards both read what the other stored
    st = B.run(body, waves=2, sgprs={8: np.array([0, 1])}, vgprs={0: addr, 3: addr}, lds_size=512)
    assert list(st.v(2)[0]) == [100] * 32 and list(st.v(4)[0]) == [400] * 32
    assert list(st.v(2)[1]) == [100] * 32 and list(st.v(4)[1]) == [400] * 32
    assert list(st.v(1)[:, 0]) == [400, 100]


def test_endless_loop_hits_the_instruction_limit():
    from isalint.validate.emu import EmulationError

    with pytest.raises(EmulationError, match="instruction limit"):
        B.run(".Lspin:\ns_branch .Lspin", max_steps=10_000)


_CMP = {"eq": lambda a, b: a == b, "lg": lambda a, b: a != b, "gt": lambda a, b: a > b,
        "ge": lambda a, b: a >= b, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b}


@pytest.mark.parametrize("op", sorted(_CMP))
def test_scalar_compares(op):
    vals = [(5, 7), (7, 5), (6, 6), (M, 1), (1, M), (0x8000_0000, 0x7FFF_FFFF)]
    kvals = [(5, 0x7), (0xFFFF_FFF0, 0xFFF0), (0x8000, 0x8000), (0xFFFF_8000, 0x8000)]
    lines, regs = [], {}
    for i, (a, b) in enumerate(vals):
        regs[2 * i], regs[2 * i + 1] = a, b
        lines += [f"s_cmp_{op}_i32 s{2 * i}, s{2 * i + 1}", f"s_cselect_b32 s{40 + i}, 1, 0",
                  f"s_cmp_{op}_u32 s{2 * i}, s{2 * i + 1}", f"s_cselect_b32 s{50 + i}, 1, 0"]
    for i, (a, k) in enumerate(kvals):
        regs[20 + i] = a
        lines += [f"s_cmpk_{op}_i32 s{20 + i}, {k:#x}", f"s_cselect_b32 s{60 + i}, 1, 0",
                  f"s_cmpk_{op}_u32 s{20 + i}, {k:#x}", f"s_cselect_b32 s{70 + i}, 1, 0"]
    st = B.run("\n".join(lines), sgprs=regs)
    f = _CMP[op]
    for i, (a, b) in enumerate(vals):
        assert st.s(40 + i) == int(f(s32(a), s32(b))) and st.s(50 + i) == int(f(a, b)), (op, a, b)
    for i, (a, k) in enumerate(kvals):
        ks = k - 0x10000 if k & 0x8000 else k  # SOPK: sign-extended for _i32, zero-extended for _u32
        assert st.s(60 + i) == int(f(s32(a), ks)) and st.s(70 + i) == int(f(a, k)), (op, a, k)


def test_64bit_logic_bfe_i64_and_bit_compares():
    a, b = 0xF0F0_0000_1234_8765, 0x0FF0_FFFF_0000_FFFF
    body = ("s_or_b64 s[20:21], s[0:1], s[2:3]\ns_xor_b64 s[22:23], s[0:1], s[2:3]\n"
            "s_nand_b64 s[24:25], s[0:1], s[2:3]\ns_nor_b64 s[26:27], s[0:1], s[2:3]\n"
            "s_xnor_b64 s[28:29], s[0:1], s[2:3]\ns_and_not1_b64 s[30:31], s[0:1], s[2:3]\n"
            "s_or_not1_b64 s[32:33], s[0:1], s[2:3]\ns_bfe_i64 s[34:35], s[0:1], 0x80038\n"
            "s_bitcmp1_b64 s[0:1], 63\ns_cselect_b32 s40, 1, 0\ns_bitcmp0_b64 s[0:1], 2\ns_cselect_b32 s41, 1, 0\n"
            "s_bitcmp0_b32 s0, 0\ns_cselect_b32 s42, 1, 0")
    st = B.run(body, sgprs={0: a & M, 1: a >> 32, 2: b & M, 3: b >> 32})
    get = lambda n: st.s(n) | st.s(n + 1) << 32  # noqa: E731
    assert [get(n) for n in range(20, 34, 2)] == [a | b, a ^ b, ~(a & b) & M64, ~(a | b) & M64, ~(a ^ b) & M64,
                                                 a & ~b & M64, (a | ~b) & M64]
    assert get(34) == bfe(a, 0x80038, True, True)
    assert (st.s(40), st.s(41), st.s(42)) == (1, 0, 0)


def test_every_table_op_is_exercised():
    src = open(__file__).read()
    exec_forms = {f"s_{op}_{form}_b32" for op in SAVEEXEC for form in ("saveexec", "wrexec")}
    missing = [k for k in list(SOP) + list(SOPC) if k not in src and k not in exec_forms
               and not k.endswith(("saveexec_b64", "wrexec_b64"))  # the wave64 forms: wave32 only here
               and not (k.startswith(("s_cmp_", "s_cmpk_")) and k.rsplit("_", 2)[-2] in _CMP)]
    assert not missing, missing


def test_snippets_assemble():
    B.assert_assembles()
