"""Loop trip counts stated by the code, and executions per wave (isalint.model.hotness)."""
from __future__ import annotations

import pytest
from conftest import KERNELS

from isalint.analysis import Analysis
from isalint.model.hotness import ASSUMED_TRIPS, Hotness, trip_count
from isalint.parse.source import parse_text


def _trips(text: str) -> list[int | None]:
    program = Analysis.from_source(parse_text(text, "t.s")).program
    return [trip_count(program, lp) for lp in program.cfg().loops]


LOOP = """\ts_mov{k}_{w} s0, {start}
.LBB0_1:
\tv_add_f32_e32 v1, v2, v1
\t{update}
\t{compare}
\ts_cbranch_{branch} {target}
\ts_endpgm
"""


@pytest.mark.parametrize("start, update, compare, branch, trips", [
    ("0", "s_add_i32 s0, s0, 1", "s_cmp_lg_u32 s0, 64", "scc1", 64),
    ("0", "s_addk_i32 s0, 0x200", "s_cmpk_lg_i32 s0, 0x1000", "scc1", 8),
    ("8", "s_add_i32 s0, s0, -1", "s_cmp_lg_u32 s0, 0", "scc1", 8),
    ("8", "s_sub_u32 s0, s0, 1", "s_cmp_gt_i32 s0, 0", "scc1", 8),
    ("0", "s_add_i32 s0, 4, s0", "s_cmp_lt_i32 s0, 10", "scc1", 3),  # 4, 8, 12: leaves at 12
    ("0", "s_add_i32 s0, s0, 1", "s_cmp_gt_u32 100, s0", "scc1", 100),  # the constant first: 100 > s0
    ("0", "s_add_i32 s0, s0, 1", "s_cmp_eq_u32 s0, 5", "scc0", 5),  # loop while s0 != 5
    # the s_cmpk immediate is sign-extended for _i32 (0xfff8 = -8) and zero-extended for _u32
    ("0", "s_add_i32 s0, s0, -1", "s_cmpk_lg_i32 s0, 0xfff8", "scc1", 8),
    ("0", "s_addk_i32 s0, 0x1000", "s_cmpk_lg_u32 s0, 0xf000", "scc1", 15),
])
def test_counted_loops(start, update, compare, branch, trips):
    text = LOOP.format(k="", w="b32", start=start, update=update, compare=compare, branch=branch,
                       target=".LBB0_1")
    assert _trips(text) == [trips]


def test_a_bound_held_in_an_sgpr_counts_when_it_is_a_constant_the_loop_keeps():
    text = LOOP.format(k="", w="b32", start="0", update="s_add_i32 s0, s0, 1", compare="s_cmp_lg_u32 s0, s5",
                       branch="scc1", target=".LBB0_1")
    assert _trips("\ts_mov_b32 s5, 24\n" + text) == [24]
    assert _trips(text) == [None]  # s5 not set: a kernel argument, say
    changed = text.replace("\ts_cmp_lg_u32", "\ts_add_i32 s5, s5, 1\n\ts_cmp_lg_u32")
    assert _trips("\ts_mov_b32 s5, 24\n" + changed) == [None]


def test_a_branch_that_leaves_the_loop_counts_with_the_fall_through():
    text = """\ts_movk_i32 s0, 0x0
.LBB0_1:
\tv_add_f32_e32 v1, v2, v1
\ts_add_i32 s0, s0, 1
\ts_cmp_eq_u32 s0, 12
\ts_cbranch_scc1 .LBB0_2
\ts_branch .LBB0_1
.LBB0_2:
\ts_endpgm
"""
    program = Analysis.from_source(parse_text(text, "t.s")).program
    assert [trip_count(program, lp) for lp in program.cfg().loops] == [12]


def test_a_loop_with_two_exits_is_unknown():
    text = """\ts_mov_b32 s0, 0
.LBB0_1:
\tv_cmp_gt_f32_e32 vcc_lo, 0, v1
\ts_cbranch_vccnz .LBB0_2
\ts_add_i32 s0, s0, 1
\ts_cmp_lg_u32 s0, 64
\ts_cbranch_scc1 .LBB0_1
.LBB0_2:
\ts_endpgm
"""
    assert _trips(text) == [None]


@pytest.mark.parametrize("start, update, compare", [
    ("s4", "s_add_i32 s0, s0, 1", "s_cmp_lg_u32 s0, 64"),  # started from a kernel argument
    ("0", "s_add_i32 s0, s0, s1", "s_cmp_lg_u32 s0, 64"),  # a step that is not a constant
    ("0", "s_add_i32 s0, s0, 1", "s_cmp_lg_u32 s0, s5"),  # bounded by N
    ("0", "s_add_i32 s0, s0, 3", "s_cmp_lg_u32 s0, 64"),  # never equal: 64 is not a multiple of 3
])
def test_counts_the_code_does_not_state_are_unknown(start, update, compare):
    text = LOOP.format(k="", w="b32", start=start, update=update, compare=compare, branch="scc1",
                       target=".LBB0_1")
    assert _trips(text) == [None]


def test_kernel5_inner_loop_runs_8_times_and_the_outer_loop_is_bounded_by_n(kernel5):
    analysis = Analysis.from_path(str(kernel5))
    h = Hotness(analysis.program)
    outer, inner = analysis.cfg.find_loop(".LBB0_6"), analysis.cfg.find_loop(".LBB0_9")
    assert h.trips[inner.header] == 8 and h.trips[outer.header] is None
    execs = h.of_loop(inner)
    assert (execs.count, execs.known, execs.text()) == (8 * ASSUMED_TRIPS, False, f"~{8 * ASSUMED_TRIPS}")
    assert h.of_loop(None).count == 1 and h.of_loop(None).known
    # every VALU instruction weighted by its executions: the inner loop's 68 dominate
    issue = h.valu_issue(analysis.program.kernels[0])
    inner_valu = sum(1 for i in analysis.loop_indices(inner) if analysis.program.instrs[i].klass in
                     ("valu", "vopd", "trans"))
    assert inner_valu == 68 and issue > inner_valu * 8 * ASSUMED_TRIPS


def test_kernel6_style_fixture_loop_runs_64_times():
    analysis = Analysis.from_path(str(KERNELS / "kernel6_style" / "kernel6_style.s"))
    h = Hotness(analysis.program)
    assert list(h.trips.values()) == [64]
