"""Progress of long commands: a status line on a terminal's standard error, nothing when piped."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import KERNELS

pty = pytest.importorskip("pty")
pytestmark = pytest.mark.skipif(
    subprocess.run([sys.executable, "-c", "import isalint.validate.toolchain as t; t.find_toolchain()"],
                   capture_output=True).returncode != 0, reason="no gfx11 assembler (install the toolchain extra)")

KERNEL = KERNELS / "gemm_lds_padded.s"
ARGS = [sys.executable, "-m", "isalint", "validate", str(KERNEL), str(KERNEL), "--gemm", "128"]


def test_validate_shows_its_stages_on_a_terminal():
    master, slave = pty.openpty()
    proc = subprocess.Popen(ARGS, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        err += chunk
    os.close(master)
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0
    text = err.decode(errors="replace")
    assert "emulating the original (1 workgroup of 128 threads)" in text and "emulating the candidate" in text
    assert "\x1b[" not in out.decode()  # the report itself stays plain


def test_validate_piped_prints_no_progress_and_names_the_files_in_argument_order(tmp_path):
    candidate = tmp_path / "candidate.s"
    candidate.write_bytes(KERNEL.read_bytes())
    proc = subprocess.run(ARGS[:-3] + [str(candidate), "--gemm", "128"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.startswith(f"{KERNEL} vs {candidate}: EQUAL")


def test_check_progress_tells_the_time_left_once_it_can():
    from isalint.commands.check import progress_text

    assert progress_text(4844, "kernels", 10, 0.01, 2.0) == "checking 4844 kernels: 10 done"  # too early
    assert progress_text(4844, "kernels", 1000, 0.25, 100.0) == \
        "checking 4844 kernels: 1000 done, about 5 minutes left"
    assert progress_text(4844, "kernels", 4000, 0.8, 100.0) == \
        "checking 4844 kernels: 4000 done, less than a minute left"
    assert progress_text(4844, "kernels", 4800, 0.99, 100.0) == "checking 4844 kernels: 4800 done"
    assert progress_text(3, "files", 3, 1.0, 100.0) == "checking 3 files: 3 done"
    assert progress_text(100, "files", 1, 1 / 120, 30.0) == "checking 100 files: 1 done, about 60 minutes left"
