"""Shared helpers of the emulator tests (imported by tests/test_emu_*.py)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from isalint.validate.emu.harness import run_snippet

REPO = Path(__file__).resolve().parent.parent
KERNEL5 = REPO.parent / "shared" / "corpus" / "kernel5.s"
FIXTURES = REPO / "fixtures" / "kernels"


class Bench:
    """Runs snippets and remembers their bodies so a final test can assemble them all with LLVM."""

    def __init__(self):
        self.bodies: list[str] = []

    def run(self, body: str, **kw):
        self.bodies.append(body)
        return run_snippet(body, **kw)

    def assert_assembles(self):
        from isalint.validate.toolchain import ToolchainNotFound, find_toolchain

        if not self.bodies:
            pytest.skip("no snippets ran in this module")
        try:
            tc = find_toolchain(need_linker=False)
        except ToolchainNotFound as exc:
            pytest.skip(str(exc))
        lines = sorted({ln.strip() for b in self.bodies for ln in b.splitlines()
                        if ln.strip() and not ln.strip().endswith(":")})
        bad = [(c.line, c.error) for c in tc.show_inst(lines) if not c.accepted]
        assert not bad, f"snippet lines LLVM rejects: {bad}"


def f32(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float32)


def bits(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).view(np.uint32)


def lanes(values, dtype=np.float32) -> np.ndarray:
    """Pad/cycle a list of values to 32 lanes."""
    v = np.asarray(values, dtype=dtype)
    return np.resize(v, 32)


def need_kernel5():
    if not KERNEL5.is_file():
        pytest.skip(f"{KERNEL5} not present (../shared is absent)")
    return KERNEL5


def need_toolchain():
    from isalint.validate.toolchain import ToolchainNotFound, find_toolchain

    try:
        return find_toolchain(need_linker=False)
    except ToolchainNotFound as exc:
        pytest.skip(str(exc))
