"""``isalint optimize``: passes in order, skipped steps with their reason, the end result validated."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import KERNELS, assembler_or_skip
from isalint.commands.optimize import STEPS, run_steps


def cli(*args):
    proc = subprocess.run([sys.executable, "-m", "isalint", *map(str, args)], capture_output=True, text=True,
                          timeout=600)
    return proc.returncode, proc.stdout, proc.stderr


def test_steps_run_in_order_and_a_refusing_step_keeps_the_text():
    path = KERNELS / "kernel1_naive.s"  # its FMA sources come from global memory: dual-fmac refuses
    text = path.read_text()
    out = run_steps(str(path), text, ["dual-fmac"])
    assert [o.step for o in out] == ["dual-fmac"]
    assert not out[0].applied and out[0].text == text
    assert "skipped: " in out[0].note and "global_load_b32" in out[0].note


def test_kernel5_style_fixture_is_optimized_validated_and_faster(tmp_path):
    assembler_or_skip()
    src = KERNELS / "gemm_lds_padded.s"
    dst = tmp_path / "opt.s"
    code, out, err = cli("optimize", src, "-o", dst, "--gemm", 128, "--estimate-n", 1024, "--format", "json")
    assert code == 0, err
    d = json.loads(out)
    assert d["validated"] and d["validation_error"] is None
    steps = d["steps"]
    assert [s["step"] for s in steps] == ["input", *STEPS]
    assert steps[1]["applied"]  # dual-fmac
    for s in steps[2:]:  # passes of this installation that refuse, or are missing, say why
        assert s["applied"] or s["note"].startswith("skipped: ")
    before, after = steps[0]["estimate"], steps[1]["estimate"]
    assert after["per_k_step"]["vopd_share"] == 1.0 > before["per_k_step"]["vopd_share"]
    assert after["per_k_step"]["bank_stall_cycles"] < before["per_k_step"]["bank_stall_cycles"]
    assert after["tflops"] > before["tflops"]
    assert dst.read_text() != src.read_text()
    assert "validated" in err and f"wrote {dst}" in err


def test_text_table_has_one_row_per_step():
    code, out, err = cli("optimize", KERNELS / "gemm_lds_padded.s", "--diff", "--no-validate", "--estimate-n", 512,
                         "--steps", "dual-fmac")
    assert code == 0, err
    rows = out.split("\n--- ")[0].splitlines()
    assert rows[0].split()[:4] == ["step", "VOPD", "share", "bank"]
    assert rows[2].startswith("input") and rows[3].startswith("dual-fmac")
    assert "+++ " in out and "v_dual_fmac_f32" in out  # the diff


@pytest.mark.parametrize("args,message", [
    (["--steps", "dual-fmac,fast"], "choose from " + ", ".join(STEPS)),
    ([], "-o OUT.s or --diff"),
])
def test_bad_options_exit_2(args, message):
    code, _, err = cli("optimize", KERNELS / "gemm_lds_padded.s", *args)
    assert code == 2 and message in err
