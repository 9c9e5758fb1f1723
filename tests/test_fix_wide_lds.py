"""``isalint fix --wide-lds``: adjacent ``ds_load_b64`` pairs as one ``ds_load_b128`` where the bank plan
allows.

On a loop whose loaded values meet no other VGPR source, the pair merges and the kernel computes what
it did; on the dual-FMA loops of kernel5.s and of the clang-19 build no placement of a 16-byte tuple
keeps 0 bank stalls (it spans all four banks and every FMA also reads a value of another load), and the
refusal says how many stall cycles the best placement would add against the issue cycles saved.
"""
from __future__ import annotations

import pytest
from conftest import REPO, assembler_or_skip
from pass_chain import apply, edit, kernel5_before, refused_with_line

STEP = "wide-lds"
SNIPPET = REPO / "fixtures" / "fixes" / "wide-lds" / "lds_pairs.s"


def _same(original: str, candidate: str) -> None:
    from isalint.validate import equivalence as eq
    from isalint.validate.runner import generic_launcher, parse_args

    assembler_or_skip()
    values, buffers = parse_args(["out=f32:256"], 3)
    make = generic_launcher((1, 1, 1), (32, 1, 1), values, buffers)
    out = eq.validate_pair(eq.parse_program(str(SNIPPET), original), eq.parse_program(str(SNIPPET), candidate), make,
                           seed=3)
    assert out.status == "equal", out.message


def test_a_pair_whose_values_meet_no_other_load_is_merged_and_computes_the_same():
    text = SNIPPET.read_text()
    out = apply(STEP, str(SNIPPET), text, loop=".LBB0_2")
    assert "ds_load_b128" in out and out.count("ds_load_b64") == text.count("ds_load_b64") - 2
    assert "lgkmcnt(1)" not in out  # the one wait that let the second load run on now waits for the tuple
    _same(text, out)


def test_the_dual_fma_loop_of_kernel5_is_refused_with_the_stall_cost():
    path, text = kernel5_before("wide-copy")
    message = refused_with_line(STEP, path, text, r"kernel5\.s:\d+: 'ds_load_b64 v\[\d+:\d+\]' and")
    assert "more bank stall cycles per iteration" in message and "issue cycles saved" in message


VARIANTS = [
    ("the second FMA multiplies two loaded values", "v_fmac_f32_e32 v10, 2.0, v5", "v_fmac_f32_e32 v10, v4, v5"),
    ("a loaded value read after the loop", "\tv_mul_f32_e32 v10, v10, v10\n", "\tv_mul_f32_e32 v10, v10, v7\n"),
    ("a misaligned pair", "\tds_load_b64 v[6:7], v3 offset:8\n", "\tds_load_b64 v[6:7], v3 offset:24\n"),
    ("the offsets a pair apart", "\tds_load_b64 v[4:5], v3\n", "\tds_load_b64 v[4:5], v3 offset:16\n"),
]


@pytest.mark.parametrize("what,old,new", VARIANTS, ids=[v[0] for v in VARIANTS])
def test_a_hand_edited_loop_is_refused_or_merged_exactly(what, old, new):
    from isalint.fixes import FixRefused

    variant = edit(SNIPPET.read_text(), old, new)
    try:
        out = apply(STEP, str(SNIPPET), variant, loop=".LBB0_2")
    except FixRefused as exc:
        assert "internal error" not in str(exc) and "lds_pairs.s" in str(exc), str(exc)
        return
    _same(variant, out)
