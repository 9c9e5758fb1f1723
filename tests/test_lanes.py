"""The per-lane evaluator (isalint.model.lanes) against independent oracles.

Oracles: a plain-integer interpreter written here from the ISA semantics of
each opcode (random programs, hypothesis), the index formulas of the HIP
sources the fixture kernels and kernel5 were compiled from, and hand-counted
bank conflicts.
"""
from __future__ import annotations

import pytest
from conftest import KERNELS, examples
from hypothesis import example, given, settings
from hypothesis import strategies as st

from isalint.analysis import Analysis
from isalint.hw.lds_banks import bank_conflicts, lanes_per_pass
from isalint.model.lanes.evaluator import LaneEvaluator
from isalint.model.lanes.lds import LdsAccess
from isalint.model.lanes.threads import thread_layout
from isalint.model.reaching import valu_slice
from isalint.parse.source import parse_text

M = 0xFFFFFFFF


def analysis_of(text: str) -> Analysis:
    return Analysis.from_source(parse_text(text, "t.s"))


def value_at_end(text: str, reg: str, layout=None):
    a = analysis_of(text + "\ts_endpgm\n")
    p = a.program
    ev = LaneEvaluator(p, p.kernels[0], layout)
    return ev, ev.value(reg, len(p.instrs) - 1)


def by_line(program, line):
    return next(i for i in program.instrs if i.lineno == line)


# --------------------------------------------------------------------------- concrete semantics


def _s32(x):
    x &= M
    return x - (1 << 32) if x >> 31 else x


ORACLE = {
    "v_add_nc_u32": lambda a, b: (a + b) & M,
    "v_sub_nc_u32": lambda a, b: (a - b) & M,
    "v_subrev_nc_u32": lambda a, b: (b - a) & M,
    "v_mul_lo_u32": lambda a, b: (a * b) & M,
    "v_mul_u32_u24": lambda a, b: ((a & 0xFFFFFF) * (b & 0xFFFFFF)) & M,
    "v_lshlrev_b32": lambda a, b: (b << (a & 31)) & M,
    "v_lshrrev_b32": lambda a, b: b >> (a & 31),
    "v_ashrrev_i32": lambda a, b: (_s32(b) >> (a & 31)) & M,
    "v_and_b32": lambda a, b: a & b,
    "v_or_b32": lambda a, b: a | b,
    "v_xor_b32": lambda a, b: a ^ b,
    "v_bfe_u32": lambda a, b, c: (a >> (b & 31)) & ((1 << (c & 31)) - 1),
    # the guide's V_BFE_I32 shifts S0.i32: arithmetically, so a field running past bit 31 takes sign bits
    "v_bfe_i32": lambda a, b, c: 0 if c & 31 == 0 else
    ((((((a - (a >> 31 << 32)) >> (b & 31)) & ((1 << (c & 31)) - 1)) ^ (1 << ((c & 31) - 1)))
      - (1 << ((c & 31) - 1))) & M),
    "v_lshl_add_u32": lambda a, b, c: ((a << (b & 31)) + c) & M,
    "v_add_lshl_u32": lambda a, b, c: ((a + b) << (c & 31)) & M,
    "v_lshl_or_b32": lambda a, b, c: ((a << (b & 31)) | c) & M,
    "v_and_or_b32": lambda a, b, c: (a & b) | c,
    "v_or3_b32": lambda a, b, c: a | b | c,
    "v_add3_u32": lambda a, b, c: (a + b + c) & M,
    "v_xad_u32": lambda a, b, c: ((a ^ b) + c) & M,
    "v_mad_u32_u24": lambda a, b, c: ((a & 0xFFFFFF) * (b & 0xFFFFFF) + c) & M,
}
VOP2 = {"v_add_nc_u32", "v_sub_nc_u32", "v_subrev_nc_u32", "v_mul_u32_u24", "v_lshlrev_b32", "v_lshrrev_b32",
        "v_ashrrev_i32", "v_and_b32", "v_or_b32", "v_xor_b32"}

_op = st.sampled_from(sorted(ORACLE))
_const = st.one_of(st.integers(0, 64), st.sampled_from([0x3FF, 0x210, 0xFF80, 0x3FFFFF80, 0xFFFFFFFF, 0x80000000]))


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(_op, st.lists(st.one_of(st.integers(0, 5), _const.map(lambda c: -1 - c)),
                                        min_size=3, max_size=3)), min_size=1, max_size=6))
# a signed field running past bit 31 of a negative value (lane 26: 0xD0000000, offset 26, width 26)
@example([("v_add3_u32", [0, 0, 0]), ("v_add_lshl_u32", [0, 0, 0]), ("v_bfe_i32", [2, 0, 0])])
def test_random_integer_programs_match_the_oracle(steps):
    """Operands are earlier results (v0..v5, indices >= 0) or constants (encoded < 0)."""
    lanes = list(range(32))
    regs = {0: lanes}
    lines = ["\tv_mov_b32_e32 v10, v0\n"]
    names = {0: "v10"}
    for n, (op, args) in enumerate(steps, start=1):
        arity = ORACLE[op].__code__.co_argcount
        ops, vals = [], []
        for a in args[:arity]:
            if a >= 0:
                k = min(a, n - 1)
                ops.append(names[k])
                vals.append(regs[k])
            else:
                c = -1 - a
                ops.append(hex(c))
                vals.append([c] * 32)
        if op in VOP2 and not ops[1].startswith("v"):  # VOP2 needs a VGPR second source: use VOP3
            suffix = "_e64"
        else:
            suffix = "_e32" if op in VOP2 else ""
        dst = f"v{10 + n}"
        lines.append(f"\t{op}{suffix} {dst}, {', '.join(ops)}\n")
        regs[n] = [ORACLE[op](*(v[i] for v in vals)) for i in range(32)]
        names[n] = dst
    _, got = value_at_end("".join(lines), names[len(steps)])
    assert got.concrete, got.reason
    assert [int(x) for x in got.lanes] == regs[len(steps)], "".join(lines)


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["v_add_nc_u32", "v_sub_nc_u32", "v_lshlrev_b32", "v_mul_lo_u32"]),
                          st.integers(0, 9)), min_size=1, max_size=5))
def test_a_uniform_term_shifts_every_lane_equally(steps):
    """The same linear program on v0 and on v0 + s4: same per-lane part, s4 only in the symbolic part."""
    def program(base):
        text = [f"\tv_add_nc_u32_e32 v1, {base}, v0\n"]
        for op, c in steps:
            if op == "v_lshlrev_b32":
                text.append(f"\t{op}_e32 v1, {c % 5}, v1\n")
            elif op == "v_mul_lo_u32":
                text.append(f"\t{op} v1, v1, {c + 1}\n")
            else:
                text.append(f"\t{op}_e32 v1, {c}, v1\n")
        return "".join(text)

    _, plain = value_at_end(program("0"), "v1")
    _, shifted = value_at_end(program("s4"), "v1")
    assert plain.concrete and shifted.known and shifted.terms
    assert list(plain.lanes) == list(shifted.lanes)


# --------------------------------------------------------------------------- symbolic and control flow


def test_product_of_lane_and_runtime_value_is_unknown_with_a_reason():
    _, v = value_at_end("\tv_mul_lo_u32 v1, v0, s4\n", "v1")
    assert not v.known and "per-lane value by a runtime uniform" in v.reason


def test_uniform_and_lane_bits_that_do_not_overlap_stay_exact():
    """(wg * 128 | t >> 3) % 128 the way clang emits it: or, add of the sign fix-up, and, sub."""
    text = """\
\ts_lshl_b32 s3, s15, 7
\tv_lshrrev_b32_e32 v4, 3, v0
\tv_or_b32_e32 v22, s3, v4
\ts_bfe_i32 s12, s15, 0x10018
\ts_lshr_b32 s12, s12, 25
\tv_add_nc_u32_e32 v9, s12, v22
\tv_and_b32_e32 v9, 0x3fffff80, v9
\tv_sub_nc_u32_e32 v9, v22, v9
\tv_lshlrev_b32_e32 v9, 2, v9
"""
    a = analysis_of(text + "\ts_endpgm\n")
    k = a.program.kernels[0]
    k.descriptor.update({".amdhsa_user_sgpr_count": 14, ".amdhsa_system_sgpr_workgroup_id_x": 1,
                         ".amdhsa_system_sgpr_workgroup_id_y": 1})
    ev = LaneEvaluator(a.program, k)
    v = ev.value("v9", len(a.program.instrs) - 1)
    assert v.known, v.reason
    assert [int(x) for x in v.lanes] == [4 * (t >> 3) for t in range(32)]


def test_loop_with_uniform_step_becomes_uniform_plus_lane_part():
    text = """\
\tv_lshlrev_b32_e32 v1, 4, v0
\ts_mov_b32 s2, 0
.LBB0_1:
\tds_load_b32 v3, v1
\tv_add_nc_u32_e32 v1, 0x210, v1
\ts_add_i32 s2, s2, 1
\ts_cmp_lg_u32 s2, 8
\ts_cbranch_scc1 .LBB0_1
\ts_endpgm
"""
    a = analysis_of(text)
    ev = LaneEvaluator(a.program)
    v = ev.value("v1", by_line(a.program, 4).index)
    assert v.known and any(name.startswith("iter(") for name, _ in v.terms)
    assert [int(x) for x in v.lanes] == [16 * t for t in range(32)]


def test_loop_with_per_lane_step_is_unknown():
    text = """\
\tv_lshlrev_b32_e32 v1, 2, v0
.LBB0_1:
\tds_load_b32 v3, v1
\tv_add_nc_u32_e32 v1, v1, v0
\ts_cbranch_scc1 .LBB0_1
\ts_endpgm
"""
    a = analysis_of(text)
    v = LaneEvaluator(a.program).value("v1", by_line(a.program, 3).index)
    assert not v.known and "iteration" in v.reason


def test_paths_differing_by_a_uniform_amount_merge_but_per_lane_differences_do_not():
    text = """\
\tv_lshlrev_b32_e32 v1, 2, v0
\tv_lshlrev_b32_e32 v2, 2, v0
\ts_cbranch_scc1 .LBB0_2
\tv_add_nc_u32_e32 v1, s5, v1
\tv_add_nc_u32_e32 v2, v0, v2
.LBB0_2:
\tds_load_b32 v3, v1
\ts_endpgm
"""
    a = analysis_of(text)
    ev = LaneEvaluator(a.program)
    at = by_line(a.program, 7).index
    v1, v2 = ev.value("v1", at), ev.value("v2", at)
    assert v1.known and [int(x) for x in v1.lanes] == [4 * t for t in range(32)] and v1.terms
    assert not v2.known and "different per-lane values" in v2.reason


def test_cndmask_with_a_per_lane_compare_and_with_a_uniform_condition():
    text = """\
\tv_cmp_gt_u32_e32 vcc_lo, 16, v0
\tv_cndmask_b32_e32 v1, 100, v0, vcc_lo
\ts_cmp_eq_u32 s4, 0
\ts_cselect_b32 s6, -1, 0
\tv_lshlrev_b32_e32 v2, 2, v0
\tv_add_nc_u32_e32 v3, 64, v2
\tv_cndmask_b32_e64 v4, v2, v3, s6
"""
    ev, v1 = value_at_end(text, "v1")
    assert [int(x) for x in v1.lanes] == [t if t < 16 else 100 for t in range(32)]
    v4 = ev.value("v4", len(ev.program.instrs) - 1)
    assert v4.known and [int(x) for x in v4.lanes] == [4 * t for t in range(32)] and v4.terms


def test_mbcnt_readfirstlane_and_mad_u64_low_half():
    text = """\
\tv_mbcnt_lo_u32_b32 v1, -1, 0
\tv_mbcnt_hi_u32_b32 v1, -1, v1
\tv_readfirstlane_b32 s2, v0
\tv_add_nc_u32_e32 v2, s2, v1
\tv_mov_b32_e32 v6, 3
\tv_mov_b32_e32 v7, 0
\tv_mad_u64_u32 v[4:5], null, v0, 12, v[6:7]
"""
    ev, v2 = value_at_end(text, "v2")
    assert [int(x) for x in v2.lanes] == list(range(32))
    v4 = ev.value("v4", len(ev.program.instrs) - 1)
    assert [int(x) for x in v4.lanes] == [12 * t + 3 for t in range(32)]


def test_spilled_address_is_followed_through_its_scratch_slot():
    text = """\
\tv_lshlrev_b32_e32 v1, 3, v0
\tscratch_store_b32 off, v1, off offset:16
\tv_mov_b32_e32 v1, 0
\tscratch_load_b32 v2, off, off offset:16
"""
    _, v2 = value_at_end(text, "v2")
    assert [int(x) for x in v2.lanes] == [8 * t for t in range(32)]


def test_packed_workitem_ids_with_a_known_workgroup_shape():
    a = analysis_of("\tv_bfe_u32 v1, v0, 10, 10\n\tv_and_b32_e32 v2, 0x3ff, v0\n\ts_endpgm\n")
    k = a.program.kernels[0]
    ev = LaneEvaluator(a.program, k, thread_layout(k, (16, 16, 1)))
    end = len(a.program.instrs) - 1
    assert ev.layout.threads == 256
    assert [int(x) for x in ev.value("v1", end).lanes] == [t // 16 for t in range(256)]
    assert [int(x) for x in ev.value("v2", end).lanes] == [t % 16 for t in range(256)]


# --------------------------------------------------------------------------- real compiler output


def _lds_addresses(path):
    a = Analysis.from_path(str(path))
    ev = LaneEvaluator(a.program)
    out = {}
    for ins in a.program.instrs:
        acc = ev.lds_access(ins)
        if acc is not None:
            out[ins.lineno] = acc
    return a, ev, out


def test_transpose_fixture_addresses_match_the_hip_source():
    """As[k][m] = A[..], k = t % 8, m = t / 8 + 16 i, rows of 128 floats (lds_transpose_conflict.hip)."""
    path = KERNELS / "lds_transpose_conflict.s"
    if not path.is_file():
        pytest.skip("fixture kernel lds_transpose_conflict.s not built")
    _, ev, acc = _lds_addresses(path)
    stores = [x for x in acc.values() if not isinstance(x, type(None)) and getattr(x, "kind", "") == "store"]
    assert len(stores) == 4
    for n, s in enumerate(stores):
        for half, addr in enumerate(s.addresses):
            i = 2 * n + half
            expect = [4 * (128 * (t % 8) + t // 8 + 16 * i) for t in range(128)]
            assert [a - addr[0] for a in addr] == [e - expect[0] for e in expect]


def test_kernel5_every_lds_address_is_evaluated_and_matches_its_source(kernel5):
    a, ev, acc = _lds_addresses(kernel5)
    assert len(acc) == 34
    assert all(isinstance(x, LdsAccess) for x in acc.values()), {k: v.reason for k, v in acc.items()
                                                                 if not isinstance(v, LdsAccess)}
    def rel(line, formula):
        addr = acc[line].addresses[0]
        expect = [formula(t, t % 32, t // 32) for t in range(128)]
        assert [a - addr[0] for a in addr] == [e - expect[0] for e in expect], line

    # As[t % 8][t / 8 + 16 i] with rows of BM + 4 = 132 floats
    rel(199, lambda t, lane, wave: 4 * (132 * (t % 8) + t // 8))
    rel(648, lambda t, lane, wave: 4 * (132 * (t % 8) + t // 8))
    # Bs[i][t] (rows of 128 floats)
    rel(647, lambda t, lane, wave: 4 * t)
    # A_col: As[k][waveIdy * 32 + iter * 16 + 4 * idyInWave], idyInWave = lane / 8
    rel(559, lambda t, lane, wave: 4 * (32 * wave + 4 * (lane // 8)))
    # B_row: Bs[k][iter * 32 + 4 * idxInWave], idxInWave = lane % 8
    rel(563, lambda t, lane, wave: 4 * (4 * (lane % 8)))
    assert acc[560].addresses[0][0] - acc[559].addresses[0][0] == 64


def test_bank_conflict_counts_for_known_strides():
    def access(width, stride_bytes, n=32, second=None):
        addrs = [tuple(t * stride_bytes for t in range(n))]
        if second is not None:
            addrs.append(tuple(a + second for a in addrs[0]))
        return LdsAccess(0, "ds_load", "load", width, addrs, (), "v1", (0,))

    assert lanes_per_pass(4) == 32 and lanes_per_pass(8) == 16 and lanes_per_pass(16) == 8
    # b32: 8-dword stride, 64 banks -> 8 banks used by 32 lanes
    assert bank_conflicts(access(4, 32), 64).degree == 4
    assert bank_conflicts(access(4, 32), 32).degree == 8
    assert bank_conflicts(access(4, 4), 64) is None
    assert bank_conflicts(access(4, 132), 64) is None
    # b64: 16 lanes per pass
    c = bank_conflicts(access(8, 64), 64)
    assert (c.degree, c.cycles, c.ideal, c.lane_stride) == (4, 8, 2, 64)
    assert bank_conflicts(access(8, 8), 64) is None and bank_conflicts(access(8, 72), 64) is None
    # b128: 8 lanes per pass
    c = bank_conflicts(access(16, 128), 64)
    assert (c.degree, c.pad, c.row_bytes) == (4, 4, 128)
    assert bank_conflicts(access(16, 16), 32) is None and bank_conflicts(access(16, 144), 64) is None
    # broadcast: every lane reads the same dword
    assert bank_conflicts(access(4, 0), 32) is None
    # 2addr: each address is its own access
    assert bank_conflicts(access(4, 4, second=64), 32) is None


def test_valu_slice_of_kernel5_first_chained_load(kernel5):
    a = Analysis.from_path(str(kernel5))
    p, cfg = a.program, a.cfg
    load = by_line(p, 435)
    loop = cfg.loop_of(load.index)
    sl = valu_slice(p, load.index, ["v169", "v170"], loop.blocks, loop.header)
    assert sorted(p.instrs[i].opcode for i in sl) == sorted([
        "v_add_nc_u32_e64", "v_mad_u64_u32", "v_ashrrev_i32_e32", "v_lshlrev_b64", "v_add_co_u32",
        "v_add_co_ci_u32_e32"])


def test_the_same_uniform_value_masked_alike_is_one_symbol_wherever_it_is_masked():
    """kernel 5's A stores compute (128*wg_y + row) % 128 in eight places; the uniform part of each is
    the same symbol, so the stores' addresses differ by known amounts (fix --wide-copy pairs them)."""
    from conftest import KERNEL5
    from isalint.analysis import Analysis
    from isalint.model.lanes.evaluator import LaneEvaluator

    if not KERNEL5.is_file():
        pytest.skip("../shared/corpus/kernel5.s is not present")
    analysis = Analysis.from_path(str(KERNEL5))
    ev = LaneEvaluator(analysis.program)
    stores = [ev.lds_access(ins) for ins in analysis.program.instrs if ins.opcode == "ds_store_b32"]
    terms = {acc.terms for acc in stores if hasattr(acc, "terms")}
    assert len(stores) == 24 and len(terms) == 2  # one set of uniform terms per tile
