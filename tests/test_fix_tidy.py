"""``isalint fix --tidy``: the outer loop without what it computes for nothing.

On the clang-19 build of kernel 5 and on kernel5.s (after dual-fmac, unroll, batch-gmem and
wide-copy): the copy guard's second branch reads SCC (the compare that set it still holds), its
SGPR copy of the condition, the inner counter's reset and the copy of the A read address go; the
result is validated bit for bit. Hand-edited loops (an SCC writer between the compare and the
branch, a reader of the copied register after the loop, a condition that differs) keep what the
edit made necessary and still compute what they compute.
"""
from __future__ import annotations

import pytest
from pass_chain import apply, edit, equal, golden_input, kernel5_before, refused_with_line, same_bits

STEP = "tidy"


def _inputs(which: str):
    return golden_input(STEP) if which == "clang-19" else kernel5_before(STEP)


def _loop_lines(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(".LBB0_6:"))
    return [ln.strip() for ln in lines[start - 12:start + 1200]]


@pytest.mark.parametrize("which", ["clang-19", "kernel5"])
def test_the_guard_branch_reads_scc_and_the_dead_work_goes(which):
    path, text = _inputs(which)
    out = apply(STEP, path, text)
    body = _loop_lines(out)
    assert not any(ln.startswith(("s_and_not1_b32 vcc_lo", "s_cselect_b32", "s_cmp_lt_i32")) for ln in body)
    assert not any(ln.startswith("s_cbranch_vcc") for ln in body)
    assert sum(1 for ln in body if ln.startswith("v_mov_b32_e32")) < \
        sum(1 for ln in _loop_lines(text) if ln.startswith("v_mov_b32_e32"))
    from isalint.analysis import Analysis
    from isalint.lint.engine import check_analysis
    from isalint.parse.source import parse_text

    # the blocks it removed instructions from get their hints written again
    assert not check_analysis(Analysis.from_source(parse_text(out, path)), ["DELAY001", "WAIT001", "META001"])
    equal(path, text, out)


def test_a_kernel_without_a_loop_is_refused():
    from conftest import SNIPPETS

    path = str(SNIPPETS / "delay001" / "good.s")
    refused_with_line(STEP, path, open(path).read(), r"has no loop")


VARIANTS = [
    ("an SCC writer before the VCC branch", "\ts_and_not1_b32 vcc_lo, exec_lo, s12\n",
     "\ts_cmp_eq_u32 s4, 0\n\ts_and_not1_b32 vcc_lo, exec_lo, s12\n", "s_cbranch_vccz"),
    ("the condition kept differs from the one SCC holds", "\ts_cmp_lt_i32 s7, s4\n", "\ts_cmp_le_i32 s7, s4\n",
     "s_cbranch_vccz"),
    ("the copied register read after the loop", "\ts_endpgm\n", "\tv_add_nc_u32_e32 v5, v161, v5\n\ts_endpgm\n",
     "v_mov_b32_e32 v161, v144"),
    ("the copy's source changed in the loop", "\tv_mov_b32_e32 v161, v144\n",
     "\tv_mov_b32_e32 v161, v144\n\tv_add_nc_u32_e32 v144, 0, v144\n",
     "v_mov_b32_e32 v161, v144"),
]


@pytest.mark.parametrize("what,old,new,kept", VARIANTS, ids=[v[0] for v in VARIANTS])
def test_a_hand_edited_loop_keeps_what_the_edit_needs(what, old, new, kept):
    from isalint.fixes import FixRefused

    path, text = golden_input(STEP)
    variant = edit(text, old, new)
    try:
        out = apply(STEP, path, variant)
    except FixRefused as exc:
        assert "internal error" not in str(exc), str(exc)
        return
    assert any(ln.strip().startswith(kept) for ln in out.splitlines()), f"{kept} should stay"
    same_bits(path, variant, out)
