"""fix --dual-fmac on hand-tuned loops (s_setprio and s_clause among the FMAs), and the launch
geometry of the validation: --block/--grid and the kernel's .reqd_workgroup_size.

The inputs are fixture kernels edited the way a person tuning the loop would, copied away from
the fixtures' kernels.json (which would otherwise give the launch)."""
from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import KERNELS

from isalint.analysis import Analysis
from isalint.parse.source import parse_text

pytestmark = pytest.mark.skipif(
    subprocess.run([sys.executable, "-c", "import isalint.validate.toolchain as t; t.find_toolchain()"],
                   capture_output=True).returncode != 0, reason="no gfx11 assembler (install the toolchain extra)")


def fix(*args):
    proc = subprocess.run([sys.executable, "-m", "isalint", "fix", "--dual-fmac", *map(str, args)],
                          capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout, proc.stderr


def hinted_register_tiled() -> str:
    """gemm_register_tiled.s (8 products per iteration, the next product's loads among the FMAs)
    with s_clause over each pair of loads among the FMAs and s_setprio 1 ... 0 around the block."""
    lines = (KERNELS / "gemm_register_tiled.s").read_text().split("\n")
    start = next(i for i, ln in enumerate(lines) if ln.startswith(".LBB0_5:"))
    end = next(i for i, ln in enumerate(lines) if "s_cbranch_scc1 .LBB0_5" in ln)
    fmas = [i for i in range(start, end) if "fmac" in lines[i]]
    out = []
    for i, ln in enumerate(lines):
        pair = (ln.strip().startswith("ds_load_b128") and lines[i + 1].strip().startswith("ds_load_b128")
                and not lines[i - 1].strip().startswith(("ds_load", "s_clause")))
        if fmas[0] < i < end and pair:
            out.append("\ts_clause 0x1")
        if i == fmas[0] + 1:
            out.append("\ts_setprio 1")
        if i == fmas[-1]:
            out.append("\ts_setprio 0")
        out.append(ln)
    return "\n".join(out)


def clauses_hold(text: str) -> int:
    """Every s_clause N is followed by N + 1 LDS instructions; returns how many there are."""
    program = Analysis.from_source(parse_text(text, "out.s")).program
    instrs = program.instrs
    n = 0
    for i, ins in enumerate(instrs):
        if ins.opcode != "s_clause":
            continue
        n += 1
        count = int(ins.stmts[0].operands[0].value) + 1
        group = instrs[i + 1: i + 1 + count]
        kinds = {g.klass for g in group}
        assert len(group) == count and len(kinds) == 1, (ins.lineno, [g.text() for g in group])
    return n


def test_setprio_and_clauses_among_the_fmas_are_re_placed_and_validated(tmp_path):
    src = tmp_path / "hinted.s"
    src.write_text(hinted_register_tiled())
    out = tmp_path / "out.s"
    code, _, err = fix(src, "-o", out, "--block", "256", "--grid", "2,2")
    assert code == 0, err
    text = out.read_text()
    loop = text[text.index(".LBB0_5:"):text.index("s_cbranch_scc1 .LBB0_5")]
    # the 8 products' loads among the FMAs: one clause each of 8 ds_load_b64 (4 ds_load_b128 split)
    assert loop.count("s_clause 0x7") == 6
    # priority: raised for the whole FMA sequence, lowered after it
    prio = [ln.strip() for ln in loop.splitlines() if "s_setprio" in ln]
    assert prio == ["s_setprio 1", "s_setprio 0"]
    first_fma = loop.index("v_dual_fmac_f32")
    assert loop.index("s_setprio 1") < first_fma and loop.rindex("v_dual_fmac_f32") < loop.index("s_setprio 0")
    assert clauses_hold(text) >= 6


def test_a_clause_before_the_loads_grows_with_the_split(tmp_path):
    """gemm_lds_padded.s with s_clause over its A and B ds_load_b128 (split into twice as many
    ds_load_b64) and an s_setprio among the FMAs."""
    text = (KERNELS / "gemm_lds_padded.s").read_text()
    for old, new in [("Depth=2\n\tds_load_b128 v[162:165], v161\n", "Depth=2\n\ts_clause 0x1\n\tds_load_b128 v[162:165], v161\n"),
                     ("\ts_addk_i32 s13, 0x200\n\tds_load_b128", "\ts_addk_i32 s13, 0x200\n\ts_clause 0x3\n\tds_load_b128"),
                     ("\ts_waitcnt lgkmcnt(1)\n", "\ts_setprio 2\n\ts_waitcnt lgkmcnt(1)\n")]:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    src, out = tmp_path / "hinted.s", tmp_path / "out.s"
    src.write_text(text)
    code, _, err = fix(src, "-o", out)
    assert code == 0, err
    loop = out.read_text().split(".LBB0_9:")[1].split("s_cbranch_scc1 .LBB0_9")[0]
    assert "s_clause 0x3\n\tds_load_b64" in loop and "s_clause 0x7\n\tds_load_b64" in loop
    assert [ln.strip() for ln in loop.splitlines() if "s_setprio" in ln] == ["s_setprio 2"]
    assert loop.index("s_setprio 2") < loop.index("v_dual_fmac_f32")
    assert clauses_hold(out.read_text()) == text.count("s_clause")


def test_block_option_and_reqd_workgroup_size_set_the_validation_launch(tmp_path):
    """gemm_register_tiled.s runs 256 threads per workgroup: the default 128 computes garbage. Its
    launch bounds (.max_flat_workgroup_size 256), a .reqd_workgroup_size or --block give the right one."""
    text = (KERNELS / "gemm_register_tiled.s").read_text()
    src, out = tmp_path / "k.s", tmp_path / "out.s"
    marker = "    .max_flat_workgroup_size: 256\n"
    assert text.count(marker) == 1
    src.write_text(text.replace(marker, "    .max_flat_workgroup_size: 1024\n"))  # no launch bounds
    code, _, err = fix(src, "-o", out)
    assert code == 1 and not out.exists()
    assert "block 128x1x1: 128 threads by default" in err and "the original does not compute" in err
    src.write_text(text)
    code, _, err = fix(src, "-o", out)
    assert code == 0, err
    out.unlink()
    src.write_text(text.replace(marker, marker + "    .reqd_workgroup_size: [ 256, 1, 1 ]\n"))
    code, _, err = fix(src, "-o", out)
    assert code == 0, err
    out.unlink()
    code, _, err = fix(src, "-o", out, "--block", "128")  # a launch the hardware refuses: nothing validated
    assert code == 1 and not out.exists() and "is not the kernel's .reqd_workgroup_size 256x1x1" in err
    code, _, err = fix(src, "-o", out, "--block", "many")
    assert code == 2 and "--block 'many'" in err
