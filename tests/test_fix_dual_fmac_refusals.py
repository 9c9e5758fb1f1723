"""``fix --dual-fmac`` refuses, with the reason and the line, whatever it cannot prove safe.

Each case starts from a small loop the pass does rewrite (checked first) and changes one thing.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from isalint.analysis import Analysis
from isalint.fixes import FixRefused
from isalint.fixes.dual_fmac import apply
from isalint.parse.source import parse_text

LOOP = """\
\tv_mov_b32_e32 v10, 0
\tv_mov_b32_e32 v11, 0
\tv_mov_b32_e32 v12, 0
\tv_mov_b32_e32 v13, 0
\ts_mov_b32 s0, 0
.LBB0_1:
\tds_load_b64 v[20:21], v1
\tds_load_b64 v[22:23], v2 offset:16
\ts_add_i32 s0, s0, 1
\ts_cmp_lg_u32 s0, 8
\ts_waitcnt lgkmcnt(0)
\tv_fmac_f32_e32 v10, v20, v22
\tv_fmac_f32_e32 v11, v20, v23
\tv_fmac_f32_e32 v12, v21, v22
\tv_fmac_f32_e32 v13, v21, v23
\ts_cbranch_scc1 .LBB0_1
\tglobal_store_b128 v[4:5], v[10:13], off
\ts_endpgm
"""


def run(text: str):
    return apply(Analysis.from_source(parse_text(text, "t.s")), {"loop": None})


def test_the_base_loop_is_rewritten():
    out = run(LOOP).text
    assert "v_fmac_f32_e32" not in out
    assert out.count("ds_load_b64") == 2


@pytest.mark.parametrize("change, reason", [
    # an accumulator read by something else in the loop
    (("\ts_cbranch_scc1", "\tv_add_f32_e32 v9, v11, v9\n\ts_cbranch_scc1"),
     r"t\.s:16: accumulator v11 is also used by 'v_add_f32_e32 v9, v11, v9'"),
    # a source from global memory
    (("ds_load_b64 v[20:21], v1", "global_load_b64 v[20:21], v[6:7], off"),
     r"t\.s:12: FMA source v20 comes from 'global_load_b64 v\[20:21\], v\[6:7\], off'"),
    # a source loaded in the previous iteration (software pipelining)
    (("\tds_load_b64 v[20:21], v1\n", ""),
     r"FMA source v20 is not loaded in the same iteration"),
    # a loaded value also read by another instruction
    (("\ts_cbranch_scc1", "\tv_mov_b32_e32 v9, v23\n\ts_cbranch_scc1"),
     r"'v_mov_b32_e32 v9, v23' reads a value loaded for the FMAs"),
    # an instruction isalint does not know, inside the loop
    (("\ts_add_i32 s0, s0, 1", "\tv_frobnicate_b32 v9, v8"),
     r"t\.s:9: unknown instruction 'v_frobnicate_b32'"),
    # EXEC written inside the loop
    (("\ts_add_i32 s0, s0, 1", "\ts_and_b32 exec_lo, exec_lo, s3"),
     r"the loop writes EXEC"),
    # not an outer product: one product twice
    (("v_fmac_f32_e32 v13, v21, v23", "v_fmac_f32_e32 v13, v21, v22"),
     r"accumulated twice|not a complete outer product"),
    # an odd number of FMAs cannot all pair
    (("\tv_fmac_f32_e32 v13, v21, v23\n", ""),
     r"not a complete outer product|cannot"),
])
def test_refusal(change, reason):
    old, new = change
    assert old in LOOP
    with pytest.raises(FixRefused, match=reason):
        run(LOOP.replace(old, new))


def test_no_free_registers():
    """Every VGPR but the block's own is live across the loop, and those sit where no 64-bit
    pair can start on the banks the layout needs (v9, v13, v17, v21 are all in bank 1)."""
    mine = (9, 10, 13, 14, 17, 18, 21, 22)
    text = LOOP
    for old, new in (("v10", "v9"), ("v11", "v10"), ("v12", "v13"), ("v13", "v14")):
        text = text.replace(f"{old}, v2", f"{new}, v2").replace(f"_e32 {old}, 0", f"_e32 {new}, 0")
    text = text.replace("v[20:21], v1", "v[17:18], v1").replace("v[22:23], v2", "v[21:22], v2")
    body = ("\tv_fmac_f32_e32 v9, v17, v21\n\tv_fmac_f32_e32 v10, v17, v22\n"
            "\tv_fmac_f32_e32 v13, v18, v21\n\tv_fmac_f32_e32 v14, v18, v22\n")
    lines = [ln for ln in text.splitlines(True) if "v_fmac" not in ln]
    text = "".join(lines).replace("\ts_cbranch_scc1", body + "\ts_cbranch_scc1")
    text = text.replace("v[10:13]", "v[9:10]")
    busy = [r for r in range(256) if r not in mine]
    defs = "".join(f"\tv_mov_b32_e32 v{r}, {r}\n" for r in busy if r not in (1, 2))
    uses = "".join(f"\tv_add_nc_u32_e32 v1, v1, v{r}\n" for r in busy if r != 1)
    uses += "\tv_add_nc_u32_e32 v1, v13, v14\n"
    text = defs + text.replace("\tglobal_store_b128", uses + "\tglobal_store_b128")
    freed = text.replace("v_add_nc_u32_e32 v1, v1, v8\n", "").replace("v_add_nc_u32_e32 v1, v1, v11\n", "")
    assert run(freed).text  # with v8 and v11 free the pairs fit again
    with pytest.raises(FixRefused, match="not enough free VGPRs"):
        run(text)


B96 = """\
\tv_mov_b32_e32 v10, 0
\tv_mov_b32_e32 v11, 0
\tv_mov_b32_e32 v12, 0
\tv_mov_b32_e32 v13, 0
\tv_mov_b32_e32 v14, 0
\tv_mov_b32_e32 v15, 0
\ts_mov_b32 s0, 0
.LBB0_1:
\tds_load_b96 v[20:22], v1
\tds_load_b64 v[24:25], v2 offset:16
\ts_add_i32 s0, s0, 1
\ts_cmp_lg_u32 s0, 8
\ts_waitcnt lgkmcnt(0)
\tv_fmac_f32_e32 v10, v20, v24
\tv_fmac_f32_e32 v11, v20, v25
\tv_fmac_f32_e32 v12, v21, v24
\tv_fmac_f32_e32 v13, v21, v25
\tv_fmac_f32_e32 v14, v22, v24
\tv_fmac_f32_e32 v15, v22, v25
\ts_cbranch_scc1 .LBB0_1
\tglobal_store_b128 v[4:5], v[10:13], off
\tglobal_store_b64 v[4:5], v[14:15], off offset:16
\ts_endpgm
"""


def test_odd_number_of_values():
    """A 3 x 2 product from a ds_load_b96: the A values cannot all sit in 64-bit pairs."""
    with pytest.raises(FixRefused, match=r"t\.s:9: an odd number of loaded values \(3\)"):
        run(B96)


def test_named_loop_and_missing_loop():
    assert run(LOOP).text  # the default: the hottest loop
    with pytest.raises(FixRefused, match=r"no loop headed by label \.LBB7_1 \(loops: \.LBB0_1\)"):
        apply(Analysis.from_source(parse_text(LOOP, "t.s")), {"loop": ".LBB7_1"})
    with pytest.raises(FixRefused, match="no loop to rewrite"):
        run(LOOP.replace("\ts_cbranch_scc1 .LBB0_1\n", ""))


def test_cli_refusal_exit_code_and_untouched_input(tmp_path):
    src = tmp_path / "k.s"
    text = LOOP.replace("\ts_cbranch_scc1", "\tv_add_f32_e32 v9, v11, v9\n\ts_cbranch_scc1")
    src.write_text(text)
    res = subprocess.run([sys.executable, "-m", "isalint", "fix", "--dual-fmac", str(src), "--in-place"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 1
    assert f"{src}:16: accumulator v11 is also used" in res.stderr
    assert src.read_text() == text
