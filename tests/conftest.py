"""Shared test fixtures: paths to the repository, the fixtures and the shared corpus."""
from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
KERNELS = FIXTURES / "kernels"
SNIPPETS = FIXTURES / "snippets"
SHARED = REPO.parent / "shared"
KERNEL5 = SHARED / "corpus" / "kernel5.s"


def fixture_kernels() -> list[Path]:
    return sorted(KERNELS.rglob("*.s"))


@pytest.fixture
def kernel5() -> Path:
    if not KERNEL5.is_file():
        pytest.skip("../shared/corpus/kernel5.s is not present beside this checkout")
    return KERNEL5


def all_real_kernels() -> list[Path]:
    """The project's fixture kernels plus the shared corpus kernel when present."""
    out = fixture_kernels()
    if KERNEL5.is_file():
        out.append(KERNEL5)
    return out
