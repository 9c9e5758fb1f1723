"""Shared test fixtures: paths to the repository, the fixtures and the shared corpus."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parent.parent

# Property tests draw ``examples(n)`` examples: a quarter of n in the default run, all n under
# `--hypothesis-profile thorough` (the slow step of .ci/run), both derandomized so that a run is
# reproducible (the same examples each time: CI is never red by the luck of the draw); `explore`
# draws ten times n at random, to look for new failures. The plugin loads a profile named on the
# command line after this file is imported, and before the test modules are.
settings.register_profile("quick", max_examples=25, derandomize=True)
settings.register_profile("thorough", max_examples=100, derandomize=True)
settings.register_profile("explore", max_examples=1000)
settings.load_profile("quick")


def examples(n: int) -> int:
    """The examples a property test that wants ``n`` of them draws under the loaded profile."""
    return max(10, n * settings.default.max_examples // 100)
FIXTURES = REPO / "fixtures"
KERNELS = FIXTURES / "kernels"
SNIPPETS = FIXTURES / "snippets"
SHARED = REPO.parent / "shared"
KERNEL5 = SHARED / "corpus" / "kernel5.s"


def assembler_or_skip():
    """The gfx1100 toolchain (assembler only), or skip the test saying none was found."""
    from isalint.validate.toolchain import ToolchainError, find_toolchain

    try:
        return find_toolchain(need_linker=False)
    except ToolchainError as exc:
        pytest.skip(f"no gfx1100 assembler: {exc}")


@pytest.fixture(autouse=True)
def _own_result_cache(tmp_path_factory, monkeypatch):
    """Each test checks with an empty result cache of its own (not the repository's
    ``.isalint_cache``): what one test finds never answers another's check."""
    monkeypatch.setenv("ISALINT_CACHE_DIR", str(tmp_path_factory.mktemp("isalint_cache")))


def split_slow(items, fast, name=lambda item: item):
    """``items`` as pytest parameters: those whose name is in ``fast`` run by default, the others only
    in the slow run (``-m slow``)."""
    return [item if name(item) in fast else pytest.param(item, marks=pytest.mark.slow) for item in items]


# The kernels a per-kernel test runs on by default (the others under -m slow): the naive GEMM, the
# kernel-5-style LDS GEMM, a register-tiled one, a WGP-mode one (worklog kernel 4), an LDS transpose,
# the WMMA kernel and the real kernel5.s.
REPRESENTATIVE = {"gemm_naive.s", "gemm_lds_padded.s", "gemm_register_tiled.s", "kernel4_gmem_db.s",
                  "lds_transpose_conflict.s", "gemm_wmma_f16.s", "kernel5.s"}


def fixture_kernels() -> list[Path]:
    return sorted(KERNELS.rglob("*.s"))


def gemm_fixture_kernels() -> list[Path]:
    """The fixture kernels that are GEMMs (and kernels of the worklog's style): not the probes of
    compiler behaviour under ``probes/`` (occupancy, private arrays, parser features), which have
    other argument lists and loops whose trip counts no GEMM size sets."""
    return [p for p in fixture_kernels() if "probes" not in p.relative_to(KERNELS).parts]


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


class Place:
    """One place a finding covers: an aggregated finding (one loop's bank conflicts) has one per
    site, each with the site's own message; any other finding is its own place."""

    def __init__(self, d, line, message):
        self.finding, self.line, self.code, self.severity, self.fix = d, line, d.code, d.severity, d.fix
        self.message = message

    def __repr__(self):
        return f"{self.line}: {self.code}[{self.severity}] {self.message}"


def places(diagnostics) -> list[Place]:
    out = []
    for d in diagnostics:
        if d.sites:
            out.extend(Place(d, s.line, s.message) for s in d.sites)
        else:
            out.append(Place(d, d.line, " ".join([d.message, *d.notes])))
    return sorted(out, key=lambda p: (p.line, p.code))
