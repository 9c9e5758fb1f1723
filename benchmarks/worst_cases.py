"""Time and peak memory of `isalint check --format json` on the worst-case shapes of the
reliability bounds, and the memory ceiling of the largest input isalint reads (64 MiB).

    python benchmarks/worst_cases.py                 # every shape at the issue's size
    python benchmarks/worst_cases.py --only fma_block --size 50000
    python benchmarks/worst_cases.py --ceiling       # the 64 MiB inputs only

Each run is a fresh process; the figures are its wall time and peak resident memory (ru_maxrss of
the child). A run passes when it exits 0 or 1 with valid JSON on stdout and stays under the
ceiling (2 GiB by default, --ceiling-mib).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import shapes  # noqa: E402

MAX_INPUT = 64 * 1024 * 1024

CASES = {  # name -> (generator, the size)
    "back_edges": (shapes.back_edges, 20_000),
    "branch_blocks": (shapes.branch_blocks, 30_000),
    "nested_loops": (shapes.nested_loops, 20_000),
    "fma_block": (shapes.fma_block, 200_000),
    "straight_lines": (shapes.straight_lines, 200_000),
    "concatenated_kernels": (shapes.concatenated_kernels, 52_000_000),
}


def _fill(generator, unit: int) -> str:
    """The largest text of ``generator`` under MAX_INPUT bytes (sizes grown by bisection)."""
    lo, hi = 1, unit
    while len(generator(hi).encode()) < MAX_INPUT:
        lo, hi = hi, hi * 2
    while hi - lo > max(1, lo // 100):
        mid = (lo + hi) // 2
        if len(generator(mid).encode()) < MAX_INPUT:
            lo = mid
        else:
            hi = mid
    return generator(lo)


CEILING_CASES = {  # the largest input, filled with the costliest shapes
    "64MiB_straight_lines": lambda: _fill(shapes.straight_lines, 1_000_000),
    "64MiB_fma_block": lambda: _fill(shapes.fma_block, 1_000_000),
    "64MiB_concatenated_kernels": lambda: shapes.concatenated_kernels(MAX_INPUT - 1_000_000),
}


def measure(path: Path) -> dict:
    """Wall seconds, peak RSS (MiB), exit code and whether stdout is JSON, of one check."""
    cmd = [sys.executable, "-m", "isalint", "check", "--format", "json", str(path)]
    t = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    try:
        findings = len(json.loads(stdout))
    except ValueError:
        findings = None
    return {"seconds": wall, "peak_mib": usage.ru_maxrss / 1024, "exit": os.waitstatus_to_exitcode(status),
            "findings": findings, "stderr": stderr.decode(errors="replace").strip()[-300:]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=sorted(CASES) + sorted(CEILING_CASES))
    ap.add_argument("--size", type=int, help="size of --only (units of its generator)")
    ap.add_argument("--ceiling", action="store_true", help="only the 64 MiB inputs")
    ap.add_argument("--ceiling-mib", type=int, default=2048)
    args = ap.parse_args()
    chosen: list[tuple[str, object]] = []
    if args.only in CASES:
        gen, size = CASES[args.only]
        chosen.append((f"{args.only}({args.size or size})", lambda: gen(args.size or size)))
    elif args.only:
        chosen.append((args.only, CEILING_CASES[args.only]))
    else:
        if not args.ceiling:
            chosen += [(f"{name}({size})", (lambda g=gen, s=size: g(s))) for name, (gen, size) in CASES.items()]
        chosen += list(CEILING_CASES.items())
    ok = True
    print(f"{'case':34} {'MB':>6} {'lines':>9} {'seconds':>8} {'peak MiB':>9} {'exit':>4} {'findings':>8}")
    with tempfile.TemporaryDirectory(prefix="isalint-worst-") as td:
        for name, make in chosen:
            text = make()
            path = Path(td) / "input.s"
            path.write_text(text, encoding="utf-8", errors="surrogateescape")
            r = measure(path)
            good = r["exit"] in (0, 1) and r["findings"] is not None and r["peak_mib"] <= args.ceiling_mib
            ok &= good
            print(f"{name:34} {path.stat().st_size / 1e6:6.1f} {text.count(chr(10)):9} {r['seconds']:8.1f} "
                  f"{r['peak_mib']:9.0f} {r['exit']:4} {r['findings'] if r['findings'] is not None else '-':>8}"
                  + ("" if good else f"  FAILED {r['stderr']}"), flush=True)
            path.unlink()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
