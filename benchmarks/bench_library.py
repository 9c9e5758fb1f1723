"""`isalint check` on a whole code object (rocBLAS's Tensile library) against `llvm-objdump -d` alone.

    python benchmarks/bench_library.py LIBRARY.co [--repeat N] [--table FILE.md] [--findings FILE.json]

Times `isalint check --no-cache --format json LIBRARY.co` (every kernel, in worker processes, one per
processor) and `llvm-objdump -d LIBRARY.co` (its output thrown away), one after the other, N times
each (default 1: each takes minutes), and prints the medians: wall and CPU seconds (CPU: the
processes' user + system time, the workers' included). A machine that other jobs share makes the
wall times noisy; the CPU times are steadier.

The findings of the last check are counted per rule and severity (findings, the sites they cover,
the kernels that have one), with the tracebacks and input errors isalint reported; `--table` writes
that and the timings as a Markdown table, `--findings` keeps the JSON.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd: list[str], out_path: str | None) -> tuple[float, float, int]:
    """(wall, CPU) seconds and exit code of ``cmd``, its standard output to ``out_path`` (or dropped)."""
    before, start = _children_cpu(), time.perf_counter()
    with open(out_path or os.devnull, "wb") as out:
        p = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE)
    wall, cpu = time.perf_counter() - start, _children_cpu() - before
    if p.returncode not in (0, 1):
        sys.stderr.write(p.stderr.decode(errors="replace")[-2000:])
    return wall, cpu, p.returncode


def objdump() -> str:
    for name in [f"llvm-objdump-{v}" for v in range(22, 15, -1)] + ["llvm-objdump"]:
        if shutil.which(name):
            return shutil.which(name)
    sys.exit("no llvm-objdump found (apt-get install llvm-19)")


def count(findings: list[dict]) -> dict:
    rows: dict[tuple[str, str], list] = collections.defaultdict(lambda: [0, 0, set()])
    for d in findings:
        row = rows[(d["code"], d["severity"])]
        row[0] += 1
        row[1] += max(1, len(d.get("sites") or []))
        row[2].add(d.get("kernel") or d["path"])
    return {k: (v[0], v[1], len(v[2])) for k, v in sorted(rows.items())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("library")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--table", help="write the counts and timings as Markdown to this file")
    ap.add_argument("--findings", default=None, help="keep the check's JSON findings in this file")
    args = ap.parse_args()
    isalint = shutil.which("isalint")
    check = ([isalint] if isalint else [sys.executable, "-m", "isalint"]) + \
        ["check", "--no-cache", "--format", "json", args.library]
    dump = [objdump(), "-d", args.library]
    findings_path = args.findings or os.path.join(os.environ.get("TMPDIR", "/tmp"), "isalint_library.json")
    runs: dict[str, list] = {"check": [], "objdump": []}
    for _ in range(args.repeat):
        runs["check"].append(timed(check, findings_path))
        runs["objdump"].append(timed(dump, None))
    med = {k: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v)) for k, v in runs.items()}
    with open(findings_path, encoding="utf-8") as fh:
        findings = json.load(fh)
    rows = count(findings)
    lines = [f"`isalint check {Path(args.library).name}` ({os.cpu_count()} processors, median of {args.repeat}):",
             "",
             "| command | wall s | CPU s |",
             "| --- | --- | --- |",
             f"| `isalint check --no-cache` | {med['check'][0]:.0f} | {med['check'][1]:.0f} |",
             f"| `{Path(dump[0]).name} -d` | {med['objdump'][0]:.0f} | {med['objdump'][1]:.0f} |",
             f"| ratio | **{med['check'][0] / med['objdump'][0]:.2f}x** | {med['check'][1] / med['objdump'][1]:.2f}x |",
             "",
             f"Exit code of the check: {runs['check'][-1][2]}; {len(findings)} findings.",
             "",
             "| rule | severity | findings | sites | kernels |",
             "| --- | --- | --- | --- | --- |"]
    lines += [f"| {code} | {sev} | {n} | {sites} | {kernels} |" for (code, sev), (n, sites, kernels) in rows.items()]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.table:
        Path(args.table).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
