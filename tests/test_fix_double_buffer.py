"""``isalint fix --double-buffer``: two LDS tiles, one barrier per iteration.

On kernel5.s after the chain, on the clang-19 build after the chain and as compiled, and on the
worklog's kernel 4 as compiled: one ``s_barrier`` per iteration in each of the two copies of the loop,
the LDS size doubled, the result bit for bit equal at N = 256 and 384 and at trip counts whose parity
is odd (a launch of one workgroup at N = 136, whose 17 iterations end in the second copy). The LDS and
occupancy budget is checked (``--keep-occupancy``), and hand-edited loops whose LDS phases do not have
the order the proof needs are refused with the line.
"""
from __future__ import annotations

import re

import pytest
from conftest import KERNELS
from pass_chain import apply, edit, equal, equal_on_grid, golden_input, kernel5_before, refused_with_line, same_bits

STEP = "double-buffer"


def _inputs(which: str):
    if which == "clang-19":
        return golden_input(STEP)
    if which == "kernel5":
        return kernel5_before(STEP)
    path = KERNELS / which
    return str(path), path.read_text()


def _loop_barriers(text: str) -> int:
    return sum(1 for ln in text.splitlines() if ln.strip() == "s_barrier")


def _lds(text: str) -> int:
    return int(re.search(r"\.amdhsa_group_segment_fixed_size\s+(\d+)", text).group(1))


@pytest.mark.parametrize("which", ["clang-19", "kernel5", "gemm_lds_padded.s", "kernel4_gmem_db.s"])
def test_one_barrier_per_iteration_in_each_copy_and_two_tiles(which):
    path, text = _inputs(which)
    out = apply(STEP, path, text)
    # the prologue's barrier, then one per copy where the loop had two
    assert _loop_barriers(out) == _loop_barriers(text)
    assert _lds(out) == -(-_lds(text) // 16) * 16 + _lds(text)  # the second tile starts 16-byte aligned
    assert "isalint fix --double-buffer: the loop again" in out


@pytest.mark.parametrize("which,n", [("clang-19", 256), ("kernel5", 384), ("gemm_lds_padded.s", 384),
                                     ("kernel4_gmem_db.s", 256)])
def test_the_two_tiles_compute_what_one_did(which, n):
    path, text = _inputs(which)
    equal(path, text, apply(STEP, path, text), n)


@pytest.mark.parametrize("which,n,grid", [("clang-19", 136, (1, 1, 1)), ("kernel5", 264, (2, 2, 1))])
def test_an_odd_trip_count_ends_in_the_second_copy(which, n, grid):
    path, text = _inputs(which)
    equal_on_grid(path, text, apply(STEP, path, text), n, grid)


def test_keep_occupancy_refuses_a_tile_that_costs_workgroups():
    path, text = golden_input(STEP)  # 187 VGPRs: 4 workgroups of 4 waves per CU, 3 with 16,640 bytes of LDS
    from isalint.fixes import FixRefused

    with pytest.raises(FixRefused, match=r"from 4 to 3 .*--keep-occupancy"):
        apply(STEP, path, text, keep_occupancy=True)


def test_a_loop_without_a_barrier_is_refused():
    path = str(KERNELS / "kernel1_naive.s")
    refused_with_line(STEP, path, open(path).read(), r"no loop holds a barrier")


VARIANTS = [
    ("an LDS read after the first barrier", "\ts_waitcnt vmcnt(0)\n\ts_barrier\n\ts_cbranch",
     "\ts_waitcnt vmcnt(0)\n\ts_barrier\n\tds_load_b32 v161, v141\n\ts_cbranch", r":\d+: the loop reads LDS after"),
    ("a third barrier", "\ts_waitcnt vmcnt(0)\n\ts_barrier\n\ts_cbranch",
     "\ts_waitcnt vmcnt(0)\n\ts_barrier\n\ts_barrier\n\ts_barrier\n\ts_cbranch", r":\d+: a third barrier"),
    ("a store before the first barrier", "\ts_waitcnt vmcnt(0)\n\ts_barrier\n\ts_cbranch",
     "\ts_waitcnt vmcnt(0)\n\tds_store_b32 v141, v145\n\ts_barrier\n\ts_cbranch", r":\d+: the loop writes LDS before"),
    ("an LDS size that is no multiple of 16", ".amdhsa_group_segment_fixed_size 8320",
     ".amdhsa_group_segment_fixed_size 8324", None),
]


@pytest.mark.parametrize("what,old,new,refusal", VARIANTS, ids=[v[0] for v in VARIANTS])
def test_a_hand_edited_loop_is_refused_with_its_line_or_rewritten_exactly(what, old, new, refusal):
    path, text = _inputs("gemm_lds_padded.s")
    variant = edit(text, old, new)
    if refusal is not None:
        refused_with_line(STEP, path, variant, refusal)
        return
    out = apply(STEP, path, variant)
    assert _lds(out) == 8336 + 8324
    same_bits(path, variant, out)
