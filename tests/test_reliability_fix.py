"""fix checks where it writes before working, writes regular files only (through symlinks), keeps
modes, leaves an up-to-date file alone, and exits as ruff does with --diff."""
from __future__ import annotations

import errno
import os
import re
import stat
import subprocess
import sys
import tempfile

import pytest
from conftest import KERNELS

from isalint.fixes.toolkit import destination as dst
from isalint.validate.toolchain import ToolchainNotFound, find_toolchain

NAIVE = KERNELS / "gemm_naive.s"


def run(*args, env=None, umask=None):
    preexec = (lambda: os.umask(umask)) if umask is not None else None
    proc = subprocess.run([sys.executable, "-m", "isalint", *map(str, args)], capture_output=True, timeout=300,
                          env={**os.environ, **(env or {})}, preexec_fn=preexec)
    return proc.returncode, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")


@pytest.fixture
def assembler():
    try:
        find_toolchain(need_linker=False)
    except ToolchainNotFound as exc:
        pytest.skip(f"fix validates with a gfx11 assembler: {exc.reason}")


def _stale(tmp_path, name="k.s"):
    """gemm_naive with a VGPR count the metadata pass rewrites."""
    path = tmp_path / name
    path.write_bytes(re.sub(rb"(\.amdhsa_next_free_vgpr) \d+", rb"\1 100", NAIVE.read_bytes()))
    return path


# -- the destination, checked before the work --------------------------------------------------

def test_missing_directory_is_refused_before_any_work(kernel5):
    code, out, err = run("fix", "--dual-fmac", kernel5, "-o", "/nonexist/dir/k6.s")
    assert code == 2 and out == ""
    # one line and nothing else: the pass never ran (it prints a summary when it does)
    assert err == "isalint: /nonexist/dir/k6.s: cannot write: no such directory /nonexist/dir\n"


def _special_files(tmp_path):
    """Files that are not regular, made here (a test never risks the machine's own /dev/null)."""
    out = []
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo.s")
        out.append((tmp_path / "fifo.s", "a FIFO"))
    if os.geteuid() == 0:
        os.mknod(tmp_path / "null.s", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        out.append((tmp_path / "null.s", "a character device"))
    return out


def test_device_node_or_fifo_is_never_replaced(tmp_path):
    special = _special_files(tmp_path)
    if not special:
        pytest.skip("cannot make a FIFO or a device node here")
    for path, kind in special:
        for args in (["fix", "--metadata", "--no-validate", _stale(tmp_path), "-o", path],
                     ["assemble", NAIVE, "-o", path]):
            code, out, err = run(*args)
            assert code == 2, args
            assert f"{path}: not a regular file ({kind}); isalint writes regular files only" in err
            assert not stat.S_ISREG(os.stat(path).st_mode)


def test_directory_as_output_is_refused(tmp_path):
    code, out, err = run("fix", "--metadata", "--no-validate", _stale(tmp_path), "-o", tmp_path)
    assert code == 2 and "not a regular file (a directory)" in err


def test_directory_without_write_permission_is_refused(tmp_path):
    if os.geteuid() == 0:
        locked = "/sys"  # even root cannot create files in sysfs
        try:
            fd, probe = tempfile.mkstemp(dir=locked)
        except OSError:
            pass
        else:
            os.close(fd)
            os.unlink(probe)
            pytest.skip("no directory here that refuses new files to this user")
    else:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o555)
    code, out, err = run("fix", "--metadata", "--no-validate", _stale(tmp_path), "-o", f"{locked}/k.s")
    assert code == 2
    assert err.startswith(f"isalint: {locked}/k.s: cannot write in {locked}: ")


@pytest.mark.parametrize("code, reason", [(errno.EROFS, "read-only file system"), (errno.EACCES, "permission denied")])
def test_unwritable_directory_reason(monkeypatch, tmp_path, code, reason):
    def refuse(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(dst.tempfile, "mkstemp", refuse)
    with pytest.raises(dst.DestinationError) as exc:
        dst.check_destination(str(tmp_path / "k.s"))
    assert str(exc.value) == f"{tmp_path / 'k.s'}: cannot write in {tmp_path}: {reason}"


def test_full_disk_leaves_the_target_untouched_and_no_temporary_file(monkeypatch, tmp_path):
    target = tmp_path / "k.s"
    target.write_bytes(b"old\n")
    d = dst.check_destination(str(target))

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(dst.os, "fsync", full)
    with pytest.raises(dst.DestinationError) as exc:
        dst.write(d, b"new contents\n")
    assert str(exc.value) == f"{target}: cannot write: no space left on the device; left untouched"
    assert target.read_bytes() == b"old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.s"]


def test_no_assembler_is_exit_2_before_any_work(tmp_path):
    out_file = tmp_path / "out.s"
    code, out, err = run("fix", "--metadata", _stale(tmp_path), "-o", out_file, env={"ISALINT_ASSEMBLER": "none"})
    assert code == 2
    assert err.startswith("isalint: cannot validate without an assembler: ")
    assert err.rstrip().endswith("--no-validate writes the result unvalidated") and err.count("\n") == 1
    assert not out_file.exists()


# -- what is written ------------------------------------------------------------------------------

def test_in_place_on_a_symlink_writes_the_file_it_points_to(tmp_path):
    real = _stale(tmp_path, "real.s")
    real.chmod(0o640)
    link = tmp_path / "link.s"
    link.symlink_to(real.name)
    code, out, err = run("fix", "--metadata", "--no-validate", "--in-place", link)
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == "real.s"
    assert b".amdhsa_next_free_vgpr 100" not in real.read_bytes()
    assert stat.S_IMODE(real.stat().st_mode) == 0o640  # mode kept


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o027, 0o640)])
def test_new_file_follows_the_umask(tmp_path, umask, mode):
    out_file = tmp_path / "new.s"
    code, out, err = run("fix", "--metadata", "--no-validate", _stale(tmp_path), "-o", out_file, umask=umask)
    assert code == 0, err
    assert stat.S_IMODE(out_file.stat().st_mode) == mode


def test_up_to_date_file_is_not_rewritten(tmp_path):
    path = _stale(tmp_path)
    assert run("fix", "--metadata", "--no-validate", "--in-place", path)[0] == 0
    before = path.stat()
    code, out, err = run("fix", "--metadata", "--no-validate", "--in-place", path)
    assert code == 0
    assert err.splitlines()[-2:] == ["isalint: nothing to change", f"isalint: {path} already holds the result; "
                                     "left untouched"]
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_diff_exits_1_when_there_is_a_change_and_0_when_not(tmp_path, assembler):
    path = _stale(tmp_path)
    code, out, err = run("fix", "--metadata", "--diff", path)
    assert code == 1
    assert out.startswith(f"--- {path}\n+++ {path}\n") and "-\t\t.amdhsa_next_free_vgpr 100" in out
    assert b".amdhsa_next_free_vgpr 100" in path.read_bytes()  # --diff alone writes nothing
    code, out, err = run("fix", "--metadata", "--diff", NAIVE)
    assert (code, out) == (0, "")


# -- the other commands that write or read files beside the kernel ------------------------------------

def test_optimize_checks_its_output_before_working(tmp_path):
    for path, kind in _special_files(tmp_path):
        code, out, err = run("optimize", NAIVE, "-o", path)
        assert code == 2 and f"{path}: not a regular file ({kind})" in err
    code, out, err = run("optimize", NAIVE, "-o", "/nonexist/dir/k.s")
    assert code == 2 and err == "isalint: /nonexist/dir/k.s: cannot write: no such directory /nonexist/dir\n"


def test_run_checks_save_before_running_and_refuses_a_fifo_as_input(tmp_path):
    code, out, err = run("run", NAIVE, "--gemm", 16, "--save", "/nonexist/dir/c.npy")
    assert code == 2 and err == "isalint: /nonexist/dir/c.npy: cannot write: no such directory /nonexist/dir\n"
    if not hasattr(os, "mkfifo"):
        return
    fifo = tmp_path / "a.npy"
    os.mkfifo(fifo)
    code, out, err = run("run", NAIVE, "--gemm", 16, "--inputs", f"{fifo},{fifo},{fifo}")
    assert code == 2 and err == f"isalint: {fifo}: not a regular file\n"
