"""The pre-commit hook, driven by the real ``pre-commit`` tool against this checkout."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from conftest import REPO

BROKEN = "\tv_mov_b32 v1, v2\n\tv_fmac_f32_e32 v[1:2], v3, v4\n\ts_endpgm\n"
# what hipcc --save-temps writes beside the device code: the host's x86-64 assembly
HOST = ("\t.text\n\t.file\t\"gemm.hip\"\n_Z4gemmPfS_S_iff:\n\t.cfi_startproc\n\tpushq\t%rbp\n\tmovq\t%rsp, %rbp\n"
        "\tpopq\t%rbp\n\tretq\n\t.cfi_endproc\n")
FIXED = "\tv_mov_b32 v1, v2\n\tv_fmac_f32_e32 v1, v3, v4\n\ts_endpgm\n"


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("pre-commit") is None, reason="pre-commit is not installed")
@pytest.mark.skipif(not (REPO / ".git").exists(), reason="needs this project as a git checkout")
def test_hook_fails_on_error_and_passes_when_fixed(tmp_path):
    project = tmp_path / "user-project"
    project.mkdir()
    _git(project, "init", "-q")
    _git(project, "config", "user.email", "dev@example.com")
    _git(project, "config", "user.name", "dev")
    kernel = project / "kernel.s"
    kernel.write_text(BROKEN)
    (project / "gemm-host-x86_64-unknown-linux-gnu.s").write_text(HOST)
    _git(project, "add", "kernel.s", "gemm-host-x86_64-unknown-linux-gnu.s")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "cache"))

    def try_repo():
        return subprocess.run(["pre-commit", "try-repo", str(REPO), "isalint", "--files", "kernel.s",
                                "gemm-host-x86_64-unknown-linux-gnu.s"],
                               cwd=project, capture_output=True, text=True, env=env, timeout=900)

    failed = try_repo()
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "PARSE001 error" in failed.stdout and "kernel.s:2:" in failed.stdout
    # only what blocks the commit is shown; the host file is skipped, not an error
    assert "x86" not in failed.stdout and len(failed.stdout.splitlines()) < 40
    kernel.write_text(FIXED)
    _git(project, "add", "kernel.s")
    passed = try_repo()
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout
