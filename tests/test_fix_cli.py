"""`isalint fix` driver: validation of a metadata-only rewrite, refusals, nothing written on failure."""
from __future__ import annotations

import subprocess
import sys

from conftest import assembler_or_skip


def run(*args):
    proc = subprocess.run([sys.executable, "-m", "isalint", *map(str, args)], capture_output=True, text=True,
                          timeout=600)
    return proc.returncode, proc.stdout, proc.stderr


def test_metadata_fix_is_validated_by_identical_machine_code(kernel5, tmp_path):
    assembler_or_skip()
    edited = tmp_path / "k5_v208.s"
    edited.write_text(kernel5.read_text().replace("v_fmac_f32_e32 v124, v184, v192",
                                                  "v_fmac_f32_e32 v208, v184, v192", 1))
    code, out, _ = run("check", "--select", "META001", "--format", "json", edited)
    assert code == 1 and '"error"' in out
    fixed = tmp_path / "fixed.s"
    code, _, err = run("fix", "--metadata", edited, "-o", fixed)
    assert code == 0, err
    assert "validation failed" not in err
    code, out, _ = run("check", "--select", "META001", fixed)
    assert code == 0, out


def test_fix_needs_a_destination_and_a_pass(tmp_path):
    f = tmp_path / "k.s"
    f.write_text("v_mov_b32 v1, v2\ns_endpgm\n")
    code, _, err = run("fix", "--metadata", f)
    assert code == 2 and "-o OUT.s" in err
    code, _, err = run("fix", f, "-o", tmp_path / "o.s")
    assert code == 2 and "--dual-fmac" in err
    assert not (tmp_path / "o.s").exists()


def test_refusal_leaves_everything_untouched(tmp_path):
    f = tmp_path / "k.s"
    text = "v_mov_b32 v1, v2\ns_endpgm\n"
    f.write_text(text)
    out = tmp_path / "o.s"
    code, _, err = run("fix", "--dual-fmac", f, "-o", out)
    assert code == 1 and "refused" in err
    assert not out.exists() and f.read_text() == text
