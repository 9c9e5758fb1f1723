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
