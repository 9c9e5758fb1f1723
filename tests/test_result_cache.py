"""The result cache of `isalint check`: hits, misses and what invalidates an entry."""
from __future__ import annotations

import os
import shutil

import pytest
from conftest import KERNELS

from isalint.commands import check
from isalint.lint import cache

KERNEL = KERNELS / "gemm_register_tiled.s"


def _check(*args) -> tuple[int, str]:
    """(exit code, standard output) of `isalint check ARGS` run in this process."""
    import io
    import sys

    out = io.StringIO()
    saved, sys.stdout = sys.stdout, out
    try:
        opts = check.parse_args(list(args))
        assert opts is not None, args
        with pytest.raises(SystemExit) as stop:
            check.run(**opts)
    finally:
        sys.stdout = saved
    return stop.value.code, out.getvalue()


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A kernel in a fresh directory, the cache in another; counts the files analysed."""
    src = tmp_path / "src"
    src.mkdir()
    kernel = src / "kernel.s"
    shutil.copy(KERNEL, kernel)
    monkeypatch.setenv("ISALINT_CACHE_DIR", str(tmp_path / "cache"))
    analysed: list[str] = []
    real = check._analyze

    def counting(job):
        analysed.append(job[0])
        return real(job)

    monkeypatch.setattr(check, "_analyze", counting)
    return kernel, tmp_path / "cache", analysed


def test_second_run_is_answered_from_the_cache(work):
    kernel, root, analysed = work
    first = _check(str(kernel))
    assert analysed == [str(kernel)]
    assert first[0] == 1 and "finding" in first[1]
    second = _check(str(kernel))
    assert analysed == [str(kernel)]  # not analysed again
    assert second == first
    assert (root / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (root / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")


def test_json_and_text_from_the_cache_equal_a_fresh_check(work):
    kernel, _, analysed = work
    for fmt in ("json", "text", "sarif"):
        fresh = _check("--no-cache", "--format", fmt, str(kernel))
        _check("--format", fmt, str(kernel))
        cached = _check("--format", fmt, str(kernel))
        assert cached == fresh


def test_changed_bytes_miss(work):
    kernel, _, analysed = work
    _check(str(kernel))
    kernel.write_text(kernel.read_text() + "\n; one more comment\n")
    _check(str(kernel))
    assert len(analysed) == 2


def test_changed_configuration_or_target_misses(work):
    kernel, _, analysed = work
    _check(str(kernel))
    _check("--select", "BANK001", str(kernel))
    _check("--target", "gfx1101", str(kernel))
    assert len(analysed) == 3
    (kernel.parent / "pyproject.toml").write_text('[tool.isalint]\nseverity = { "BANK001" = "error" }\n')
    code, out = _check(str(kernel))
    assert len(analysed) == 4
    assert "BANK001 error" in out
    _check(str(kernel))
    assert len(analysed) == 4


def test_another_isalint_misses(work, monkeypatch):
    kernel, _, analysed = work
    _check(str(kernel))
    monkeypatch.setattr(cache, "_FINGERPRINT", ["another version"])
    _check(str(kernel))
    assert len(analysed) == 2


def test_fingerprint_follows_the_source_files(tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "_FINGERPRINT", [])
    first = cache.fingerprint()
    monkeypatch.setattr(cache, "_FINGERPRINT", [])
    monkeypatch.setattr(cache, "_sources", lambda root: iter([(os.path.join(root, "x.py"), 1, 2)]))
    assert cache.fingerprint() != first


def test_no_cache_neither_reads_nor_writes(work):
    kernel, root, analysed = work
    _check("--no-cache", str(kernel))
    assert not root.exists()
    _check(str(kernel))
    _check("--no-cache", str(kernel))
    assert len(analysed) == 3


def test_default_place_is_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.delenv("ISALINT_CACHE_DIR")
    monkeypatch.chdir(tmp_path)
    shutil.copy(KERNEL, tmp_path / "k.s")
    _check("k.s")
    assert (tmp_path / ".isalint_cache" / ".gitignore").is_file()


def test_a_damaged_entry_is_a_miss(work):
    kernel, root, analysed = work
    _check(str(kernel))
    for entry in root.glob("??/*"):
        entry.write_bytes(b"\x00garbage")
    _check(str(kernel))
    assert len(analysed) == 2
    _check(str(kernel))  # rewritten whole
    assert len(analysed) == 2


def test_unwritable_cache_is_no_error(work, tmp_path, monkeypatch):
    kernel, _, analysed = work
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    monkeypatch.setenv("ISALINT_CACHE_DIR", str(blocker / "cache"))
    code, out = _check(str(kernel))
    assert code == 1 and "finding" in out


def test_input_errors_and_skips_are_kept_too(work):
    kernel, _, analysed = work
    kernel.write_text("nothing to see here\n")
    first = _check(str(kernel))
    second = _check(str(kernel))
    assert first == second and first[0] == 2
    assert len(analysed) == 1


def _cli(*args, env=None) -> tuple[int, str, str]:
    """(exit code, standard output, standard error) of the `isalint` command in a fresh process."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "isalint", *map(str, args)], capture_output=True, text=True,
                          env=env)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("options", [
    ["--format", "text"],
    ["--format", "json"],
    pytest.param(["--format", "github"], marks=pytest.mark.slow),
    pytest.param(["--format", "sarif"], marks=pytest.mark.slow),
    ["--statistics"],
    ["--min-severity", "warning", "--fail-on", "error"],
    pytest.param(["--format", "json", "--min-severity", "error"], marks=pytest.mark.slow),
    pytest.param(["--color", "-q"], marks=pytest.mark.slow),
])
def test_a_directory_checked_again_prints_what_a_fresh_check_prints(tmp_path, options):
    """Kernels with errors, warnings and info, one without findings, a file of another processor
    (skipped) and one that is not assembly (an input error), checked three times: without the cache,
    filling it, answered from it."""
    folder = tmp_path / "kernels"
    folder.mkdir()
    for name in ("gemm_register_tiled.s", "gemm_naive.s", "gemm_spill.s", "lds_transpose_conflict.s",
                 "kernel2_lds.s"):
        shutil.copy(KERNELS / name, folder / name)
    (folder / "host-x86_64.s").write_text("\t.text\n\t.globl main\nmain:\n\tpushq %rbp\n\tmovq %rsp, %rbp\n\tretq\n")
    (folder / "notes.s").write_text("nothing to see here\n")
    env = dict(os.environ, ISALINT_CACHE_DIR=str(tmp_path / "cache"))
    fresh = _cli("check", "--no-cache", *options, folder, env=env)
    assert not (tmp_path / "cache").exists()
    filling = _cli("check", *options, folder, env=env)
    cached = _cli("check", *options, folder, env=env)
    assert fresh[0] == 2  # the input error
    assert filling == fresh
    assert cached == fresh
    assert "notes.s" in fresh[2]


def test_a_report_style_seen_before_builds_no_findings(work, monkeypatch):
    """The second check in one style prints the file's findings as kept, without building them again;
    another style (another width here) builds them from the file's entry, without the rules."""
    kernel, _, analysed = work
    built: list = []
    real = check._diagnostic
    monkeypatch.setattr(check, "_diagnostic", lambda t: built.append(t) or real(t))
    first = _check(str(kernel))
    assert built and analysed == [str(kernel)]
    built.clear()
    assert _check(str(kernel)) == first
    assert built == []
    monkeypatch.setattr("isalint.report.findings.text_width", lambda stream=None: 60)
    monkeypatch.setattr("isalint.report.findings.use_color", lambda explicit, stream=None: False)
    narrow = _check(str(kernel))
    assert built and analysed == [str(kernel)]
    assert narrow[0] == first[0] and narrow[1] != first[1]


def test_json_items_make_the_json_list():
    from isalint.diagnostics import Diagnostic, Site
    from isalint.report import findings as out

    found = [Diagnostic("a.s", 3, 1, 3, 9, "BANK001", "info", "a \"quoted\" message", notes=["n1"],
                        sites=[Site(4, 1, 2, "there")], cost={"cycles": 2}),
             Diagnostic("a.s", 7, 2, 7, 4, "WAIT001", "error", "line\nbreak", fix="--waits")]
    assert "[\n" + out.render_json_items(found) + "\n]" == out.render_json(found)
    assert "[\n" + out.render_json_items(found[:1]) + ",\n" + out.render_json_items(found[1:]) + "\n]" == \
        out.render_json(found)


@pytest.mark.parametrize("cached", [False, True])
def test_files_printed_one_by_one_make_the_report_of_all_findings(tmp_path, monkeypatch, cached):
    """The report put together from each file's printed findings is what the renderers print for
    all the findings at once (text with its source lines, JSON, GitHub annotations)."""
    from isalint.diagnostics import Diagnostic, Site
    from isalint.parse import read_file
    from isalint.report import findings as out

    monkeypatch.setenv("ISALINT_CACHE_DIR", str(tmp_path / "cache"))
    names = ("gemm_register_tiled.s", "gemm_naive.s", "gemm_spill.s", "lds_transpose_conflict.s")
    paths = [str(KERNELS / name) for name in names]
    extra = [] if cached else ["--no-cache"]
    if cached:
        for fmt in ("json", "text", "github"):
            _check("--format", fmt, *paths)
    code, text = _check(*extra, *paths)
    _, js = _check(*extra, "--format", "json", *paths)
    _, gh = _check(*extra, "--format", "github", *paths)
    import json

    found = [Diagnostic(**{**d, "sites": [Site(**s) for s in d["sites"]]}) for d in json.loads(js)]
    assert {d.path for d in found} == {paths[0], paths[2], paths[3]}  # gemm_naive has none
    sources = {p: read_file(p) for p in paths}
    assert js == out.render_json(found) + "\n"
    assert gh == out.render_github(found) + "\n"
    assert text == out.render_text(found, sources, False) + "\n" + out.summary_line(found, len(paths)) + "\n"
    assert code == 1
