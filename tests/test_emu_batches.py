"""Launches run together (Kernel.run_many) give what they give alone; memory accesses gathered and
scattered a row per lane equal the byte-wise ones."""
from __future__ import annotations

import numpy as np
import pytest

from isalint.validate import equivalence as eq
from isalint.validate.emu import Kernel
from isalint.validate.emu.launch import WaveMap
from isalint.validate.emu.machine import gather, scatter
from test_emu_support import need_kernel5


def test_launches_run_together_give_their_own_results():
    path = str(need_kernel5())
    prog = eq.parse_program(path)
    cases = [(1.0, 0.0), (1.5, -0.75)]
    makers = [eq.gemm_launcher(path, 128, a, b, seed=3)[0] for a, b in cases]
    alone = [Kernel(prog).run(make(Kernel(prog)), seed=3) for make in makers]
    k = Kernel(prog)
    together = k.run_many([make(k) for make in makers], seed=3)
    for a, t in zip(alone, together):
        assert a.buffers.keys() == t.buffers.keys()
        for name in a.buffers:
            assert np.array_equal(a.buffers[name], t.buffers[name])
    # the second launch's writers are its own waves, numbered after the first launch's
    first, second = together
    assert second.wavemap.first_wave == len(first.wavemap.workgroups) * first.wavemap.waves_per_group
    w = int(second.writers["c"][0])
    assert second.wavemap.describe(w) == first.wavemap.describe(int(first.writers["c"][0]))


def test_wavemap_offset():
    m = WaveMap([(0, 0, 0), (1, 0, 0)], 4, (128, 1, 1), first_wave=8)
    assert m.describe(8 * 32 + 5) == "workgroup (0,0,0) thread 5 (wave 0, lane 5)"
    assert m.describe(12 * 32) == "workgroup (1,0,0) thread 0 (wave 0, lane 0)"


@pytest.mark.parametrize("nbytes", [4, 8, 12, 16])
@pytest.mark.parametrize("aligned", [True, False])
def test_row_gather_and_scatter_equal_bytewise(nbytes, aligned):
    rng = np.random.default_rng(nbytes)
    arr8 = rng.integers(0, 256, size=4096 + 3, dtype=np.uint8)
    arr32 = arr8[:4096].view(np.uint32)
    step = nbytes if aligned else 4
    idx = (rng.permutation(4096 // 16 - 1)[:64] * 16 + (0 if aligned else 4)).astype(np.int64)
    idx = idx - idx % step
    want = np.stack([arr8[i:i + nbytes].view(np.uint32) for i in idx])
    assert np.array_equal(gather(arr8, arr32, idx, nbytes), want)
    data = rng.integers(0, 1 << 32, size=(len(idx), nbytes // 4), dtype=np.uint64).astype(np.uint32)
    copy8 = arr8.copy()
    scatter(arr8, arr32, idx, nbytes, data)
    for i, row in zip(idx, data):
        copy8[i:i + nbytes] = row.view(np.uint8)
    assert np.array_equal(arr8, copy8)
