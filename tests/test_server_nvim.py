"""A real editor session, end to end: headless Neovim opens a kernel with isalint server attached
(tests/nvim_session.lua), shows the diagnostics ``isalint check`` gives, hovers, applies a suppression
and shows the re-checked diagnostics. Skipped where Neovim is not installed (Debian: apt-get install
neovim; 0.7 has the LSP client this needs)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from conftest import KERNELS, REPO

pytest.importorskip("pygls", reason="isalint server needs the server extra (pip install 'isalint[server]')")

NVIM = shutil.which("nvim")
KERNEL6 = KERNELS / "kernel6_style" / "kernel6_style.s"


def _nvim_version() -> tuple[int, ...]:
    out = subprocess.run([NVIM, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"NVIM v(\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


@pytest.mark.skipif(NVIM is None, reason="Neovim (nvim) is not installed")
def test_neovim_shows_the_findings_hovers_and_applies_a_suppression(tmp_path):
    if _nvim_version() < (0, 7):
        pytest.skip(f"Neovim {_nvim_version()} has no LSP client with vim.diagnostic (0.7 or later)")
    kernel = tmp_path / "kernel6_style.s"
    shutil.copy(KERNEL6, kernel)
    out = tmp_path / "session.txt"
    env = {**os.environ, "ISALINT_NVIM_OUT": str(out), "ISALINT_PYTHON": sys.executable,
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_STATE_HOME": str(tmp_path / "state")}
    run = subprocess.run([NVIM, "--headless", "--clean", "-n", "-c", f"luafile {REPO / 'tests' / 'nvim_session.lua'}",
                          str(kernel)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    facts = [line.split("\t") for line in out.read_text().splitlines()] if out.exists() else []
    assert facts and not [f for f in facts if f[0] == "ERROR"], (facts, run.stderr[-2000:])
    assert [f[1] for f in facts if f[0] == "WAITED"] == ["true", "true"], facts

    check = subprocess.run([sys.executable, "-m", "isalint", "check", "--no-cache", "--format", "json", str(kernel)],
                           capture_output=True, text=True)
    expected = json.loads(check.stdout)
    severity = {"error": "1", "warning": "2", "info": "3"}
    assert [f[1:6] for f in facts if f[0] == "DIAG"] == \
           [[str(d["line"]), str(d["column"]), severity[d["severity"]], d["code"], d["message"]] for d in expected]
    (hover,) = [f[1] for f in facts if f[0] == "HOVER"]
    assert "VOPD" in hover and "Operand cache" in hover and "In loop `.LBB0_1`" in hover
    (edited,) = [f[1] for f in facts if f[0] == "EDITED"]
    assert edited.endswith("; isalint: disable=DELAY001")
    after = [f[4] for f in facts if f[0] == "AFTER"]
    assert after == [d["code"] for d in expected if d["code"] != "DELAY001"]
    assert [f[1] for f in facts if f[0] == "STOPPED"] == ["true"]
