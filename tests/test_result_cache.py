"""The result cache of `isalint check`: hits, misses and what invalidates an entry."""
from __future__ import annotations

import os
import shutil

import pytest
from conftest import KERNELS

from isalint import cache
from isalint.commands import check

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
