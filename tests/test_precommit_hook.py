"""The pre-commit hook, driven by the real ``pre-commit`` tool: the README's snippet as written (a local
hook running the installed ``isalint``) and this repository as a hook repository (``try-repo``, which
builds isalint into an environment of pre-commit's own: slow)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml
from conftest import REPO

BROKEN = "\tv_mov_b32 v1, v2\n\tv_fmac_f32_e32 v[1:2], v3, v4\n\ts_endpgm\n"
# what hipcc --save-temps writes beside the device code: the host's x86-64 assembly
HOST = ("\t.text\n\t.file\t\"gemm.hip\"\n_Z4gemmPfS_S_iff:\n\t.cfi_startproc\n\tpushq\t%rbp\n\tmovq\t%rsp, %rbp\n"
        "\tpopq\t%rbp\n\tretq\n\t.cfi_endproc\n")
FIXED = "\tv_mov_b32 v1, v2\n\tv_fmac_f32_e32 v1, v3, v4\n\ts_endpgm\n"
FILES = ("kernel.s", "gemm-host-x86_64-unknown-linux-gnu.s")

needs_pre_commit = pytest.mark.skipif(shutil.which("pre-commit") is None, reason="pre-commit is not installed")


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def readme_snippets() -> list[str]:
    """The YAML blocks of the README's pre-commit section, in order."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("### pre-commit\n"):]
    section = section[:section.index("\n### ", 1)]
    return re.findall(r"```yaml\n(.*?)```", section, re.S)


def _project(tmp_path):
    project = tmp_path / "user-project"
    project.mkdir()
    _git(project, "init", "-q")
    _git(project, "config", "user.email", "dev@example.com")
    _git(project, "config", "user.name", "dev")
    (project / "kernel.s").write_text(BROKEN)
    (project / FILES[1]).write_text(HOST)
    _git(project, "add", *FILES)
    return project


def _env(tmp_path):
    # the environment's own isalint first on PATH, as for a user who installed it
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    return dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "cache"), PATH=path)


def _assert_blocks_then_passes(project, run):
    failed = run()
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "PARSE001 error" in failed.stdout and "kernel.s:2:" in failed.stdout
    # only what blocks the commit is shown; the host file is skipped, not an error
    assert "x86" not in failed.stdout and len(failed.stdout.splitlines()) < 40
    (project / "kernel.s").write_text(FIXED)
    _git(project, "add", "kernel.s")
    passed = run()
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout


def test_the_readme_snippets_name_the_declared_hook():
    local, remote = (yaml.safe_load(s) for s in readme_snippets())
    (declared,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    (hook,) = local["repos"][0]["hooks"]
    assert local["repos"][0]["repo"] == "local" and hook["language"] == "system"
    assert (hook["id"], hook["entry"], hook["files"]) == (declared["id"], declared["entry"], declared["files"])
    assert re.search(hook["files"], "k.s") and re.search(hook["files"], "k.asm") and not re.search(hook["files"], "k.c")
    assert remote["repos"][0]["hooks"] == [{"id": declared["id"]}] and declared["language"] == "python"


@needs_pre_commit
def test_the_readme_snippet_works_as_written(tmp_path):
    project = _project(tmp_path)
    (project / ".pre-commit-config.yaml").write_text(readme_snippets()[0])
    env = _env(tmp_path)

    def run():
        return subprocess.run(["pre-commit", "run", "--files", *FILES], cwd=project, capture_output=True, text=True,
                              env=env, timeout=300)

    _assert_blocks_then_passes(project, run)


@pytest.mark.slow
@needs_pre_commit
@pytest.mark.skipif(not (REPO / ".git").exists(), reason="needs this project as a git checkout")
def test_this_repository_as_a_hook_repository(tmp_path):
    project = _project(tmp_path)
    env = _env(tmp_path)

    def run():
        return subprocess.run(["pre-commit", "try-repo", str(REPO), "isalint", "--files", *FILES],
                              cwd=project, capture_output=True, text=True, env=env, timeout=900)

    _assert_blocks_then_passes(project, run)
