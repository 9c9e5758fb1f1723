"""The model against the measured times of the worklog's kernels (benchmarks/bench_estimate.py builds them).

Kernels 1-4 and the kernel-5-style fixture are always here; kernel5.s and what ``optimize`` makes of
it (kernels 6, 7, 8) need ../shared/corpus and the passes. The bounds are the ones the model meets:
the issue's +-15% for kernels 5-8, +-20% for kernels 1-4 (the WGP-mode kernels, see the README).
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from isalint.hw.timing import REFERENCE_MS, REFERENCE_N

# Nine estimates at N = 4096 and the optimize steps on kernel5.s: the model's calibration, run with -m slow
# (tests/test_estimate.py keeps the model's fast checks in the default run).
pytestmark = pytest.mark.slow

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_estimate.py"
BOUND = {1: 0.20, 2: 0.20, 3: 0.20, 4: 0.20, 5: 0.15, 6: 0.15, 7: 0.15, 8: 0.15}


def _bench():
    spec = importlib.util.spec_from_file_location("bench_estimate", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def predictions():
    bench = _bench()
    cases, missing = bench.series()
    return [(c, bench.estimate_case(c, REFERENCE_N)) for c in cases], missing


def test_every_built_kernel_is_within_its_bound(predictions):
    rows, _ = predictions
    for case, est in rows:
        measured = REFERENCE_MS[case.kernel][1]
        error = est.predicted_ms / measured - 1
        assert abs(error) <= BOUND[case.kernel], f"kernel {case.kernel} ({case.name}): {100 * error:+.1f}%"


def test_the_kernels_rank_as_measured(predictions):
    rows, _ = predictions
    first: dict[int, float] = {}
    for case, est in rows:
        first.setdefault(case.kernel, est.predicted_ms)
    assert len(first) >= 5
    assert sorted(first, key=lambda k: -first[k]) == sorted(first)


def _optimized(predictions):
    rows, missing = predictions
    by_kernel = {}
    for case, est in rows:
        by_kernel.setdefault(case.kernel, (case, est))
    if "kernel5.s" not in {c.name for c, _ in rows}:
        pytest.skip("; ".join(missing))
    assert 6 in by_kernel, "fix --dual-fmac must apply to kernel5.s"
    if 8 not in by_kernel:
        pytest.skip("; ".join(missing))
    return by_kernel


def test_each_optimize_step_is_predicted_faster(predictions):
    by_kernel = _optimized(predictions)
    times = [by_kernel[k][1].predicted_ms for k in (5, 6, 7, 8)]
    assert times == sorted(times, reverse=True) and len(set(times)) == 4


def test_kernel8_is_predicted_as_much_faster_than_kernel5_as_measured(predictions):
    """optimize's promise: kernel 8's predicted TFLOP/s above kernel 5's by the measured ratio (49.0 / 33.5)."""
    by_kernel = _optimized(predictions)
    measured = REFERENCE_MS[5][1] / REFERENCE_MS[8][1]
    assert by_kernel[8][1].tflops / by_kernel[5][1].tflops >= measured


def _valu_share(case, timing):
    from isalint.analysis import Analysis
    from isalint.estimate import estimate
    from isalint.parse.source import parse_text
    from isalint.validate.gemm import geometry

    geo = geometry(case.path, REFERENCE_N)
    program = Analysis.from_source(parse_text(case.text, case.path)).program
    est = estimate(program, REFERENCE_N, geo.grid, geo.block, timing=timing, abi=geo.abi)
    return est, est.fractions()["valu"]


@pytest.mark.xfail(strict=True, reason="under the issue rule the hardware traces show, the model puts kernel 6 at 89% "
                                       "VALU utilisation where RGP measured 76.2%: the dual-FMA kernels lose cycles "
                                       "the model does not know (benchmarks/results/issue_rule.md)")
def test_kernel6_runs_at_the_valu_utilisation_rgp_measured(predictions):
    """RGP: kernel 6 at 76.2% VALU utilisation, kernel 7 over 80%."""
    by_kernel = _optimized(predictions)
    assert by_kernel[6][1].fractions()["valu"] == pytest.approx(0.762, abs=0.01)
    assert by_kernel[7][1].fractions()["valu"] > 0.79


def test_the_single_issue_rule_charges_kernel6_s_scalar_and_lds_work_to_the_valu(predictions):
    """The model before the traces (issue_per_cycle=1, memory instructions reading VALU results after
    valu_latency): branch_simd_cycles was fitted to kernel 6's 76.2% under it, and it is slower than the
    default by the LDS, SALU and branch instructions that now issue beside other waves' VALU work."""
    from isalint.hw.timing import GFX1100

    case, est = _optimized(predictions)[6]
    before = GFX1100.with_(issue_per_cycle=1, valu_memory_latency=GFX1100.valu_latency)
    single, share = _valu_share(case, before)
    assert share == pytest.approx(0.762, abs=0.01)
    assert single.predicted_ms > 1.1 * est.predicted_ms
