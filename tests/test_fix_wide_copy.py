"""``isalint fix --wide-copy``: the outer loop's global-to-LDS copy in 16-byte pieces.

On the clang-19 build of kernel 5 and on the corpus's kernel5.s (each after dual-fmac, unroll and
batch-gmem): 16 ``global_load_b32`` become 4 ``global_load_b128``, the LDS stores become 2
``ds_store_b128`` and 4 ``ds_store_2addr_b32``, no VGPR more, no LDS bank conflict, and the result
computes bit for bit what its input computes at N = 256 and 384. Hand-edited inputs are either
refused with the line and the reason or rewritten into code that computes what they compute.
"""
from __future__ import annotations

import pytest
from pass_chain import apply, edit, equal, golden_input, kernel5_before, refused_with_line, same_bits

from isalint.analysis import Analysis
from isalint.lint.engine import check_analysis
from isalint.parse.source import parse_text

STEP = "wide-copy"


def _inputs(which: str):
    return golden_input(STEP) if which == "clang-19" else kernel5_before(STEP)


def _count(text: str, opcode: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip().startswith(opcode + " "))


def _vgprs(text: str) -> int:
    return int(next(line.split()[1] for line in text.splitlines() if ".amdhsa_next_free_vgpr" in line))


@pytest.mark.parametrize("which", ["clang-19", "kernel5"])
def test_the_copy_is_four_wide_loads_and_six_stores(which):
    path, text = _inputs(which)
    out = apply(STEP, path, text)
    assert _count(text, "global_load_b32") - _count(out, "global_load_b32") == 16
    assert _count(out, "global_load_b128") - _count(text, "global_load_b128") == 4
    assert _count(out, "ds_store_b128") - _count(text, "ds_store_b128") == 2
    assert _vgprs(out) <= _vgprs(text)
    codes = ["LDS001", "WAIT001", "DELAY001", "META001"]
    assert not check_analysis(Analysis.from_source(parse_text(out, path)), codes)


@pytest.mark.parametrize("which,n", [("clang-19", 256), ("clang-19", 384), ("kernel5", 256), ("kernel5", 384)])
def test_the_copy_computes_what_it_did(which, n):
    path, text = _inputs(which)
    equal(path, text, apply(STEP, path, text), n)


def test_without_saddr_loads_it_asks_for_batch_gmem():
    path = str(golden_input("tidy")[0]).replace("wide-copy", "unroll")
    refused_with_line(STEP, path, open(path).read(), r"run fix --batch-gmem first")


# hand edits of the clang-19 input: (what, old, new)
VARIANTS = [
    ("two loads swapped", "\tglobal_load_b32 v145, v1, s[16:17]\n\tglobal_load_b32 v146, v1, s[18:19]\n",
     "\tglobal_load_b32 v146, v1, s[18:19]\n\tglobal_load_b32 v145, v1, s[16:17]\n"),
    ("two stores swapped",
     "\tds_store_2addr_b32 v140, v153, v154 offset1:16\n\tds_store_2addr_b32 v140, v155, v156 offset0:32 offset1:48\n",
     "\tds_store_2addr_b32 v140, v155, v156 offset0:32 offset1:48\n\tds_store_2addr_b32 v140, v153, v154 offset1:16\n"),
    ("one load with an offset", "global_load_b32 v155, v131, s[36:37]", "global_load_b32 v155, v131, s[36:37] offset:4"),
    ("a staged word read by a VALU instruction", "\tglobal_load_b32 v160, v131, s[46:47]\n",
     "\tglobal_load_b32 v160, v131, s[46:47]\n\ts_waitcnt vmcnt(0)\n\tv_add_f32_e32 v7, v145, v7\n"),
    ("a partial vmcnt wait", "\ts_waitcnt vmcnt(0)\n\ts_barrier", "\ts_waitcnt vmcnt(1)\n\ts_barrier"),
    ("two loads on one base", "global_load_b32 v146, v1, s[18:19]", "global_load_b32 v146, v1, s[16:17]"),
    ("a store one word off", "ds_store_2addr_b32 v140, v157, v158 offset0:64 offset1:80",
     "ds_store_2addr_b32 v140, v157, v158 offset0:65 offset1:80"),
    ("stores written as b32", "\tds_store_2addr_stride64_b32 v141, v145, v146 offset1:2\n",
     "\tds_store_b32 v141, v145\n\tds_store_b32 v141, v146 offset:512\n"),
]


@pytest.mark.parametrize("what,old,new", VARIANTS, ids=[v[0] for v in VARIANTS])
def test_a_hand_edited_copy_is_refused_with_its_line_or_rewritten_exactly(what, old, new):
    from isalint.fixes import FixRefused

    path, text = golden_input(STEP)
    variant = edit(text, old, new)
    try:
        out = apply(STEP, path, variant)
    except FixRefused as exc:
        assert f"{path}:" in str(exc) or "internal error" not in str(exc), str(exc)
        assert "internal error" not in str(exc), str(exc)
        return
    same_bits(path, variant, out)
