"""Validating at the real size by running a sample of the workgroups (``--workgroups K``)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import KERNELS
from isalint.validate import equivalence as eq
from isalint.validate.emu import Kernel, LaunchError


def _kernel(name="gemm_lds_padded.s"):
    path = str(KERNELS / name)
    return path, Kernel(eq.parse_program(path))


def test_a_sampled_launch_writes_exactly_the_tiles_of_its_workgroups():
    path, kernel = _kernel()
    make, prob, geo = eq.gemm_launcher(path, 256, 1.0, 0.5, seed=3)
    whole = kernel.run(make(kernel), seed=3)
    launch = make(kernel)
    launch.workgroups = ((1, 0, 0),)
    part = kernel.run(launch, seed=3)
    c_whole = whole.buffers["c"].view(np.float32).reshape(256, 256)
    c_part = part.buffers["c"].view(np.float32).reshape(256, 256)
    assert np.array_equal(c_part[0:128, 128:256], c_whole[0:128, 128:256])  # workgroup (x=1, y=0)
    untouched = np.ones((256, 256), bool)
    untouched[0:128, 128:256] = False
    assert np.array_equal(c_part[untouched], prob.c[untouched]) and not np.array_equal(c_part, c_whole)
    assert part.wavemap.describe(int(part.writers["c"][128])).startswith("workgroup (1,0,0)")


def test_a_workgroup_outside_the_grid_is_a_launch_error():
    path, kernel = _kernel()
    make, _, _ = eq.gemm_launcher(path, 256, 1.0, 0.0, seed=0)
    launch = make(kernel)
    launch.workgroups = ((2, 0, 0),)
    with pytest.raises(LaunchError, match=r"workgroup \(2, 0, 0\) is not one of the grid"):
        kernel.run(launch)


def test_the_sample_starts_at_the_corners_and_the_centre_and_is_seeded():
    from isalint.validate.sampling import describe, sample_workgroups

    picks = sample_workgroups((32, 32, 1), 8, seed=5)
    assert picks[:5] == ((0, 0, 0), (31, 0, 0), (0, 31, 0), (31, 31, 0), (16, 16, 0))
    assert len(set(picks)) == 8 and picks == sample_workgroups((32, 32, 1), 8, seed=5)
    assert picks[5:] != sample_workgroups((32, 32, 1), 8, seed=6)[5:]
    assert sample_workgroups((2, 2, 1), 4) is None  # no fewer than the grid: all of it
    assert describe(picks[:2], (32, 32, 1)) == "2 of 1024 workgroups: (0,0) (31,0)"


def test_a_write_outside_the_sampled_tiles_is_reported():
    from isalint.validate import gemm

    prob = gemm.problem(256, seed=1)
    c = prob.c.copy()
    rows, cols = slice(0, 128), slice(128, 256)
    c[rows, cols] = prob.reference(rows, cols).astype(np.float32)
    ok = gemm.check_against_numpy(prob, c.view(np.uint8).ravel(), [(0, 128, 128, 256)])
    assert ok.ok, ok.describe()
    c[200, 3] += 1.0  # a tile no workgroup of the sample owns
    bad = gemm.check_against_numpy(prob, c.view(np.uint8).ravel(), [(0, 128, 128, 256)])
    assert not bad.ok and "C[200,3]" in bad.describe() and "outside the tiles" in bad.describe()


def test_validate_with_sampled_workgroups_says_which_ran(tmp_path):
    import subprocess
    import sys

    from conftest import assembler_or_skip

    assembler_or_skip()
    src = KERNELS / "gemm_lds_padded.s"
    proc = subprocess.run([sys.executable, "-m", "isalint", "validate", str(src), str(src), "--gemm", "512",
                           "--workgroups", "2"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "EQUAL" in proc.stdout and "2 of 16 workgroups: (0,0) (3,0)" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "isalint", "run", str(src), "--workgroups", "2"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--workgroups needs --gemm N" in proc.stderr


def worklog_file(name: str) -> str | None:
    """A file of the worklog's public repository, read where ISALINT_WORKLOG_SOURCES points: its
    checkout (``src/NAME``), a directory holding NAME, or a bare clone (read with git). Never copied."""
    import os
    import subprocess
    from pathlib import Path

    where = os.environ.get("ISALINT_WORKLOG_SOURCES")
    if not where:
        return None
    for p in (Path(where) / "src" / name, Path(where) / name):
        if p.is_file():
            return p.read_text()
    got = subprocess.run(["git", "-C", where, "show", f"HEAD:src/{name}"], capture_output=True, text=True)
    return got.stdout if got.returncode == 0 else None


def test_the_worklogs_kernel8_validates_at_its_own_size_by_sampled_workgroups(kernel5):
    """Kernel 8 hard-codes N = 4096 in its SGPR bases: at N = 256 it is DIFFERENT, at 4096 (8 of the
    1,024 workgroups, each through its whole K loop) it computes what kernel5.s computes."""
    from conftest import assembler_or_skip

    text = worklog_file("kernel8_batched_gmem.s")
    if text is None:
        pytest.skip("set ISALINT_WORKLOG_SOURCES to the worklog's repository to read its kernel 8")
    assembler_or_skip()
    verdict = eq.check_rewrite(str(kernel5), kernel5.read_text(), text, gemm_n=4096, workgroups=8)
    assert verdict is None, verdict
    small = eq.check_rewrite(str(kernel5), kernel5.read_text(), text, gemm_n=256)
    assert small is not None and "faults" in small and "outside" in small  # reads past the 256 x 256 buffers


def test_a_sampled_gemm_launch_runs_only_its_sample():
    from isalint.validate.equivalence import gemm_launcher, parse_program
    from isalint.validate.emu.launch import Kernel

    src = KERNELS / "gemm_lds_padded.s"
    make, prob, geo = gemm_launcher(str(src), 512, 1.0, 0.0, 0, workgroups=2)
    program = parse_program(str(src))
    launch = make(Kernel(program))
    assert launch.workgroup_ids() == [(0, 0, 0), (3, 0, 0)] and launch.workgroup_count() == 2
    assert launch.group == (0, 0, 0)  # the walked path is not the sample
