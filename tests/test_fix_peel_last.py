"""``isalint fix --peel-last``: the loop's last iteration after it, no iteration asking whether it is
the last.

On kernel5.s after the chain (double-buffered), on the clang-19 build after the chain (double-buffered,
and single-copy before double buffering): the copies end in one counter add and one branch, the
guards and exit tests are gone, the last iteration's FMAs follow the loop once per copy, and the
result is bit for bit the input's at N = 256 and 384, at odd trip counts (a copy other than the
first runs the last iteration) and at an N that is no multiple of the step (where the input's last
iteration loads and stores a tile no one reads). Hand-edited loops are refused with their line where
the proof fails (a guard that may hold before the last iteration, SCC or the counter used where the
rewrite changes them, a loaded register read after the loop), and rewritten exactly where it holds.
"""
from __future__ import annotations

import re

import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from pass_chain import GOLDEN, apply, edit, equal, equal_on_grid, kernel5_before, refused_with_line, same_bits

STEP = "peel-last"


def _inputs(which: str):
    if which == "kernel5":
        return kernel5_before(STEP)
    before = {"clang-19": "double-buffer", "clang-19 single copy": "tidy"}[which]
    path = GOLDEN / before / "gemm_lds_padded.expected.s"
    return str(path), path.read_text()


def _loop(text: str) -> list[str]:
    """The code lines from the loop header ``.LBB0_6`` to the first peeled iteration."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(".LBB0_6:"))
    end = next(i for i, ln in enumerate(lines) if ln.startswith(".Lisalint_peel_"))
    return [ln.split(";")[0].strip() for ln in lines[start:end] if ln.split(";")[0].strip()
            and not re.match(r"^[.\w$]+:", ln.strip())]


@pytest.mark.parametrize("which,copies", [("kernel5", 2), ("clang-19", 2), ("clang-19 single copy", 1)])
def test_each_copy_ends_in_one_add_and_one_branch(which, copies):
    path, text = _inputs(which)
    out = apply(STEP, path, text)
    code = _loop(out)
    scalar = [c for c in code if c.split()[0].startswith(("s_cmp", "s_cbranch", "s_branch", "s_add", "s_mov"))]
    counter = re.match(r"s_add_u32 (s\d+), \1, 8$", scalar[0]).group(1)
    assert len(scalar) == 2 * copies
    assert scalar[0::2] == [f"s_add_u32 {counter}, {counter}, 8"] * copies
    assert all(b.startswith("s_cbranch_scc1 .Lisalint_peel_LBB0_6_") for b in scalar[1:-1:2])
    assert scalar[-1] == "s_cbranch_scc0 .LBB0_6"
    # the same FMAs, loads and stores per copy as before; one peeled FMA block per copy after the loop
    # the same FMAs; the offset adds ride as the Y halves of two of them (one VOPD more for the two
    # FMAs they displace), so the loop's VALU work is one instruction over the FMAs'
    assert sum(c.count("v_dual_fmac_f32") for c in code) == 1024 * copies
    assert sum(c.startswith("v_") for c in code) == 512 * copies + 1
    assert sum("v_dual_add_nc_u32" in c for c in code) == 2
    assert sum(c.startswith("global_load") for c in code) == 4 * copies
    assert sum(c.startswith("ds_store") for c in code) == 6 * copies
    peels = re.findall(r"^\.Lisalint_peel_LBB0_6_\d+:", out, re.M)
    assert len(peels) == copies
    assert out.count("v_dual_fmac_f32") == text.count("v_dual_fmac_f32") + 2 * 512 * copies  # two halves a line


@pytest.mark.parametrize("which,n", [("kernel5", 256), ("clang-19", 384), ("clang-19 single copy", 256)])
def test_the_peeled_loop_computes_what_the_loop_did(which, n):
    path, text = _inputs(which)
    equal(path, text, apply(STEP, path, text), n)


@pytest.mark.parametrize("which,n,grid", [("clang-19", 136, (1, 1, 1)), ("kernel5", 264, (2, 2, 1)),
                                          ("clang-19", 132, (1, 1, 1))])
def test_odd_trip_counts_and_a_size_that_is_no_multiple_of_the_step(which, n, grid):
    # 17 and 33 iterations: the last one after the second copy; N = 132: the input's 17th iteration
    # loads and stores a tile past K that nothing reads, the output skips it
    path, text = _inputs(which)
    equal_on_grid(path, text, apply(STEP, path, text), n, grid)


def test_a_loop_without_a_guard_is_refused():
    path = str(GOLDEN.parent / "kernels" / "kernel4_gmem_db.s")
    refused_with_line(STEP, path, open(path).read(), r"no compare and 's_cbranch_scc1' around the next tile")


# kernel5.s's guard compares the counter with s7 = N - 1, set before the loop
GUARD = "\ts_add_i32 s7, s4, -1\n"
VARIANTS = [
    ("a guard that may hold before the last iteration", GUARD, "\ts_add_i32 s7, s4, -9\n",
     r":\d+: the guard's s7 is not s4 - d with 1 <= d <= 8"),
    ("SCC written among the FMAs", "\t; .LBB0_9 unrolled: iteration 2 of 8\n",
     "\t; .LBB0_9 unrolled: iteration 2 of 8\n\ts_cmp_eq_u32 s0, 0\n",
     r":\d+: SCC is written between the guard and the branch around the stores"),
    ("the counter read in the loop", "\t; .LBB0_9 unrolled: iteration 2 of 8\n",
     "\t; .LBB0_9 unrolled: iteration 2 of 8\n\ts_mov_b32 s105, s12\n",
     r":\d+: 's_mov_b32' reads the loop counter s12"),
    ("a loaded register read after the loop", ".LBB0_12:                               ; %Flow\n",
     ".LBB0_12:                               ; %Flow\n\tv_mov_b32_e32 v0, v137\n",
     r":\d+: v137 is read after the loop"),
]


@pytest.mark.parametrize("what,old,new,refusal", VARIANTS, ids=[v[0] for v in VARIANTS])
def test_a_hand_edited_loop_is_refused_with_its_line(what, old, new, refusal):
    path, text = _inputs("kernel5")
    refused_with_line(STEP, path, edit(text, old, new), refusal)


@settings(max_examples=examples(3), deadline=None)
@given(st.integers(-10, 0))
def test_the_guard_bound_decides_whether_the_loop_is_peeled(d):
    """A guard ``counter >= N + d``: rewritten (and bit for bit the same) exactly when -8 <= d <= -1,
    where the guard holds in the last iteration only; refused with the line otherwise."""
    path, text = _inputs("kernel5")
    variant = edit(text, GUARD, f"\ts_add_i32 s7, s4, {d}\n")
    if not -8 <= d <= -1:
        refused_with_line(STEP, path, variant, r":\d+: the guard's s7 is not s4 - d")
        return
    out = apply(STEP, path, variant)
    assert "s_cbranch_scc0 .LBB0_6" in out
    same_bits(path, variant, out)
