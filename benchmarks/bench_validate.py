"""Wall time of ``isalint validate kernel5.s kernel5.s --gemm N`` and where it goes.

    python benchmarks/bench_validate.py [--n 256] [--kernel PATH] [--repeat 3]

Prints one line per phase (assemble both, parse + build the program model, decode into
closures, execute both in the emulator, compare) and the total, for the best of ``--repeat``
runs. Not a test: the figure goes into the README.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def once(path: str, n: int) -> dict[str, float]:
    from isalint.validate import equivalence as eq
    from isalint.validate.emu import Kernel
    from isalint.validate.toolchain import find_toolchain

    t = {}
    t0 = time.perf_counter()
    tc = find_toolchain(need_linker=False)
    for p in (path, path):
        errs = eq.assemble(tc, p)
        assert not errs, errs
    t["assemble"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    progs = [eq.parse_program(path), eq.parse_program(path)]
    t["parse+model"] = time.perf_counter() - t0

    make, prob, geo = eq.gemm_launcher(path, n, 1.5, -0.75, seed=0)
    check = eq.gemm_check(prob)
    kernels = [Kernel(p) for p in progs]
    results = []
    t["decode"] = 0.0
    t["execute"] = 0.0
    for k in kernels:
        r = k.run(make(k), seed=0)
        t["decode"] += r.times["compile"]
        t["execute"] += r.times["execute"]
        results.append(r)
    t0 = time.perf_counter()
    equal, lines = eq.compare_runs(results[0], results[1])
    ok0, _ = check(results[0])
    ok1, _ = check(results[1])
    t["compare"] = time.perf_counter() - t0
    assert equal and ok0 and ok1, lines
    t["steps"] = results[0].steps
    return t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--kernel", default=str(REPO.parent / "shared" / "corpus" / "kernel5.s"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not os.path.isfile(args.kernel):
        print(f"bench_validate: {args.kernel} not found (needs ../shared/corpus/kernel5.s)", file=sys.stderr)
        return 2
    best = None
    t_all = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        t = once(args.kernel, args.n)
        total = time.perf_counter() - t0
        t_all.append(total)
        if best is None or total < best[0]:
            best = (total, t)
    total, t = best
    print(f"isalint validate {Path(args.kernel).name} {Path(args.kernel).name} --gemm {args.n}  "
          f"(python {platform.python_version()}, {os.cpu_count()} cpus, best of {args.repeat})")
    for phase in ("assemble", "parse+model", "decode", "execute", "compare"):
        print(f"  {phase:<12} {t[phase]:7.3f} s")
    print(f"  {'total':<12} {total:7.3f} s   (all runs: {', '.join(f'{x:.2f}' for x in t_all)} s; "
          f"{int(t['steps'])} lockstep instruction steps per kernel)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
