"""``isalint estimate`` against the measured times of the worklog's eight kernels (N = 4096).

    python benchmarks/bench_estimate.py [--corpus ../shared/corpus] [--format text|markdown] [--param NAME=VALUE]

Kernels 1-4 are the fixtures built from the worklog's sources (fixtures/kernels/kernel[1-4]_*.s),
kernel 5 the worklog's own kernel5.s (from the corpus, when present) and the kernel-5-style fixture
gemm_lds_padded.s, kernels 6, 7 and 8 what ``isalint optimize`` makes of kernel5.s step by step
(dual-fmac, unroll, batch-gmem; a step whose pass this isalint lacks is left out). Prints predicted
and measured time, the error, TFLOP/s and the ranking, and how long each estimate took.

The measured times of kernels 6-8 belong to the worklog's own hand-edited files, which differ from what
our passes make (the worklog's kernel 7 still adds to its LDS addresses every k step, its kernel 8 spreads
the global loads through the loop and uses ``s_setprio``). Those files are not ours to ship; given the
directory that holds them (``src/`` of the worklog's public repository: kernel6_valu_optim.s,
kernel7_unroll.s, kernel8_batched_gmem.s), ``--worklog-sources DIR`` adds them to the table, marked
"(worklog)", so that the model is also compared with the very code that was timed. The ranking and the
speed-up line keep using our own pass outputs.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

FIXTURES = REPO / "fixtures" / "kernels"
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"


@dataclass
class Case:
    kernel: int  # the worklog's kernel number
    name: str
    path: str  # where it came from (geometry is looked up beside it)
    text: str


def series(corpus: Path = DEFAULT_CORPUS) -> tuple[list[Case], list[str]]:
    """The kernels that can be built here, and a line for each that cannot."""
    from isalint.commands.optimize import STEPS, run_steps

    cases: list[Case] = []
    missing: list[str] = []
    for k, stem in enumerate(("kernel1_naive", "kernel2_lds", "kernel3_reg_tiling", "kernel4_gmem_db"), 1):
        p = FIXTURES / f"{stem}.s"
        cases.append(Case(k, p.name, str(p), p.read_text()))
    padded = FIXTURES / "gemm_lds_padded.s"
    k5 = corpus / "kernel5.s"
    if not k5.is_file():
        missing.append(f"kernels 5-8 from kernel5.s: {k5} is not present")
        cases.append(Case(5, padded.name, str(padded), padded.read_text()))
        return cases, missing
    text = k5.read_text()
    cases.append(Case(5, "kernel5.s", str(k5), text))
    cases.append(Case(5, padded.name, str(padded), padded.read_text()))
    # kernel k is kernel 5 after the first k - 5 steps, all of them applied
    for k, out in zip((6, 7, 8), run_steps(str(k5), text, STEPS[:3])):
        if not out.applied:
            missing.append(f"kernels {k}-8 ({out.step}): {out.note}")
            break
        cases.append(Case(k, f"kernel5.s + {'+'.join(STEPS[:k - 5])}", str(k5), out.text))
    return cases, missing


WORKLOG_SOURCES = {6: "kernel6_valu_optim.s", 7: "kernel7_unroll.s", 8: "kernel8_batched_gmem.s"}


def worklog_cases(directory: Path, like: str) -> tuple[list[Case], list[str]]:
    """The worklog's own kernels 6-8 found in ``directory``; geometry is that of ``like`` (kernel5.s)."""
    cases, missing = [], []
    for k, name in WORKLOG_SOURCES.items():
        p = directory / name
        if p.is_file():
            cases.append(Case(k, f"{name} (worklog)", like, p.read_text()))
        else:
            missing.append(f"the worklog's kernel {k}: {p} is not present")
    return cases, missing


def estimate_case(case: Case, n: int = 4096, timing=None):
    from isalint.analysis import Analysis
    from isalint.estimate import estimate
    from isalint.hw.timing import GFX1100
    from isalint.parse.source import parse_text
    from isalint.validate.gemm import geometry

    geo = geometry(case.path, n)
    program = Analysis.from_source(parse_text(case.text, case.path)).program
    return estimate(program, n, geo.grid, geo.block, timing or GFX1100, abi=geo.abi)


def _timing(params: list[str]):
    from isalint.hw.timing import GFX1100

    changes = {}
    for item in params:
        name, _, value = item.partition("=")
        default = getattr(GFX1100, name, None)
        if default is None or not value:
            sys.exit(f"bench_estimate: --param {item}: not NAME=VALUE with a parameter of isalint.hw.timing")
        changes[name] = type(default)(float(value)) if isinstance(default, int) else type(default)(value)
    return GFX1100.with_(**changes)


def main() -> int:
    from isalint.hw.timing import REFERENCE_MS, REFERENCE_N

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--format", choices=("text", "markdown"), default="text")
    ap.add_argument("--worklog-sources", type=Path, metavar="DIR",
                    help="also estimate the worklog's own kernel 6-8 files found in DIR")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help="a timing parameter other than the default (isalint estimate --parameters lists them)")
    args = ap.parse_args()
    timing = _timing(args.param)
    cases, missing = series(args.corpus)
    theirs: list[Case] = []
    if args.worklog_sources is not None:
        theirs, more = worklog_cases(args.worklog_sources, str(args.corpus / "kernel5.s"))
        missing += more
        cases += theirs
    rows = []
    for c in cases:
        t0 = time.perf_counter()
        est = estimate_case(c, REFERENCE_N, timing)
        rows.append((c, est, time.perf_counter() - t0))
    md = args.format == "markdown"
    if md:
        print("| kernel | file | predicted ms | measured ms | error | predicted TFLOP/s | measured TFLOP/s | waves/SIMD |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    else:
        print(f"{'k':>2s} {'kernel':40s} {'predicted':>9s} {'measured':>9s} {'error':>7s} {'TFLOP/s':>7s} "
              f"{'meas.':>6s} {'waves':>5s} {'time':>6s}")
    flop = 2.0 * REFERENCE_N ** 3
    for c, est, dt in rows:
        meas = REFERENCE_MS[c.kernel][1]
        err = 100 * (est.predicted_ms / meas - 1)
        mt = flop / (meas * 1e-3) / 1e12
        if md:
            print(f"| {c.kernel} | {c.name} | {est.predicted_ms:.3f} | {meas:.4f} | {err:+.1f}% | {est.tflops:.1f} | "
                  f"{mt:.1f} | {est.occupancy_waves:g} |")
        else:
            print(f"{c.kernel:2d} {c.name:40s} {est.predicted_ms:9.3f} {meas:9.4f} {err:+6.1f}% {est.tflops:7.1f} "
                  f"{mt:6.1f} {est.occupancy_waves:5g} {dt:5.2f}s")
    # ranking: one representative per kernel number (the worklog's own kernel 5, not the fixture)
    chosen: dict[int, float] = {}
    for c, est, _ in rows:
        if c not in theirs:
            chosen.setdefault(c.kernel, est.predicted_ms)
    order = sorted(chosen, key=lambda k: -chosen[k])
    right = order == sorted(chosen)
    print(f"ranking, slowest first: {' > '.join(map(str, order))} ({'right' if right else 'WRONG'})")
    if 5 in chosen and 8 in chosen:
        predicted = chosen[5] / chosen[8]
        measured = REFERENCE_MS[5][1] / REFERENCE_MS[8][1]
        print(f"kernel 8 / kernel 5 speed-up: predicted {predicted:.3f}x, measured {measured:.3f}x")
        for c, est, _ in rows:
            if c in theirs and c.kernel == 8:
                print(f"  with the worklog's own kernel 8: predicted {chosen[5] / est.predicted_ms:.3f}x")
    for line in missing:
        print(f"not built: {line}")
    return 0 if right else 1


if __name__ == "__main__":
    sys.exit(main())
