"""WMMA001 across branches: the WMMA issued last on any path before a WMMA that reads its D as A or B."""
from __future__ import annotations

from isalint.analysis import Analysis
from isalint.lint.engine import check_analysis
from isalint.parse.source import parse_text

HEAD = '\t.text\n\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"\nk:\n'
FIRST = "\tv_wmma_f16_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]\n"
READER = "\tv_wmma_f32_16x16x16_f16 v[24:31], v[0:7], v[16:23], v[24:31]\n"


def _found(text: str):
    return check_analysis(Analysis.from_source(parse_text(HEAD + text, "w.s")), ["WMMA001"])


def _diamond(left: str, right: str) -> str:
    return (FIRST + "\ts_cmp_eq_u32 s0, 0\n\ts_cbranch_scc1 .LBB0_2\n" + left + "\ts_branch .LBB0_3\n"
            ".LBB0_2:\n" + right + ".LBB0_3:\n" + READER + "\ts_endpgm\n")


def test_one_path_without_a_valu_between_is_enough():
    (d,) = _found(_diamond("\tv_nop\n", "\ts_nop 0\n"))
    assert d.severity == "error" and d.line == 12
    assert "reads v0-v7 as matrix A, which 'v_wmma_f16_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]' at line 4" \
        in d.message


def test_a_valu_on_every_path_ends_the_hazard():
    assert _found(_diamond("\tv_nop\n", "\tv_mov_b32_e32 v40, v41\n")) == []


def test_the_nearest_wmma_on_the_path_is_the_one_that_counts():
    # the second WMMA writes other registers and is the last VALU before the reader
    other = "\tv_wmma_f32_16x16x16_f16 v[32:39], v[8:15], v[16:23], v[32:39]\n"
    assert _found(FIRST + other + READER + "\ts_endpgm\n") == []


def test_many_branching_blocks_each_reported_once():
    blocks = []
    for i in range(2000):
        blocks.append(f".L{i}:\n\ts_cmp_eq_u32 s0, 1\n\ts_cbranch_scc1 .L{(i + 7) % 2000}\n")
        if i % 2 == 0:
            blocks.append("\tv_wmma_f32_16x16x16_f16 v[0:7], v[0:7], v[16:23], v[0:7]\n")
    found = _found("".join(blocks) + "\ts_endpgm\n")
    assert len(found) == 1000 and all("reads v0-v7 as matrix A" in d.message for d in found)
