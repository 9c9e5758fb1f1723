"""`isalint check` on rocBLAS's Tensile library for gfx1100, against `llvm-objdump -d` on the same kernels.

    python benchmarks/bench_tensile.py [LIBRARY.co] [--sample N] [--table FILE.md] [--findings FILE.json]

The library is read where it is installed (LIBRARY.co, else ``$ISALINT_TENSILE_LIBRARY``, else the usual
rocBLAS install folders); nothing is copied. Without it the benchmark says so and exits 0.

The whole library (default) or ``--sample N`` of its kernels: evenly spaced in name order, so that
every family (data types, transposes, tile sizes) has some, selected with ``--kernel NAME,NAME...``
for isalint and ``--disassemble-symbols`` for llvm-objdump. One after the other on this machine:

* ``isalint check --no-cache --format json`` (every kernel; worker processes, one per processor),
* ``llvm-objdump -d --mcpu=gfx1100`` (its output thrown away),

each timed as wall and CPU seconds (the processes' user + system time, the workers' included). The
machine's load average is printed with them: other jobs on a shared machine slow the check, which
uses every processor, more than the disassembler, which uses one.

The table (printed, and written to ``--table``, default ``benchmarks/results/tensile_library.md``
for a whole-library run) gives the kernels and instructions checked, the isalint failures (internal
errors: tracebacks; input errors), the findings per rule and severity (findings, the sites they
cover, the kernels that have one), both times and their ratio, the command and the date.
"""
from __future__ import annotations

import argparse
import datetime
import glob
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_library import count, objdump  # noqa: E402

HERE = Path(__file__).resolve().parent
NAME = "TensileLibrary_gfx1100.co"
WHERE = [  # where rocBLAS installs its Tensile libraries (distribution packages, ROCm)
    "/usr/lib/x86_64-linux-gnu/rocblas/*/library",
    "/opt/rocm*/lib/rocblas/library",
]
MAX_SELECT = 120_000  # bytes of one command-line argument (Linux allows 128 KiB)


def find_library(given: str | None) -> str | None:
    if given:
        return given if os.path.isfile(given) else None
    named = os.environ.get("ISALINT_TENSILE_LIBRARY")  # as the tests name it
    if named:
        return named if os.path.isfile(named) else None
    for pattern in WHERE:
        for folder in sorted(glob.glob(pattern), reverse=True):
            path = os.path.join(folder, NAME)
            if os.path.isfile(path):
                return path
    return None


def _shown_path(library: str) -> str:
    """The library as the table names it: from its rocBLAS folder on (``rocblas/2.47.0/library/...``)."""
    parts = Path(library).parts
    return "/".join(parts[parts.index("rocblas"):]) if "rocblas" in parts else Path(library).name


def kernels_of(library: str) -> list:
    from isalint.binary import codeobject
    from isalint.parse.reading import map_file

    kernels, _ = codeobject.read(map_file(library), library)
    return kernels


def sample(kernels: list, n: int) -> list:
    """``n`` kernels evenly spaced in name order."""
    ordered = sorted(kernels, key=lambda k: k.name)
    if n >= len(ordered):
        return ordered
    return [ordered[(k * len(ordered)) // n] for k in range(n)]


def instructions(kernels: list) -> int:
    from isalint.binary import listing

    return sum(len(listing.decode_kernel(k)) for k in kernels)


def read_findings(path: str):
    """The findings of ``isalint check --format json`` one by one, without holding the whole array (the
    library's is gigabytes): each item is printed from a line ``  {`` to a line ``  }``."""
    item: list[str] = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("  {"):
                item = [line]
            elif item:
                item.append(line)
                if line.startswith("  }"):
                    yield json.loads("".join(item).rstrip().rstrip(","))
                    item = []


def run_timed(cmd: list[str], out_path: str) -> tuple[float, float, int, str]:
    """(wall s, CPU s, exit code, standard error) of ``cmd``, its standard output to ``out_path``."""
    before = os.times()
    start = time.perf_counter()
    with open(out_path, "wb") as out:
        p = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return wall, cpu, p.returncode, p.stderr.decode(errors="replace")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("library", nargs="?", help=f"the {NAME} to check (default: where rocBLAS installs it)")
    ap.add_argument("--sample", type=int, default=0, metavar="N", help="check N kernels spread over the library")
    ap.add_argument("--table", help="write the table here (default for the whole library: "
                                    "benchmarks/results/tensile_library.md)")
    ap.add_argument("--findings", help="keep the check's JSON findings in this file")
    args = ap.parse_args()
    library = find_library(args.library)
    if library is None:
        where = args.library or "give its path, set ISALINT_TENSILE_LIBRARY or install rocBLAS for gfx1100"
        print(f"bench_tensile: skipped: no {NAME} found ({where})")
        return 0
    everything = kernels_of(library)
    chosen = sample(everything, args.sample) if args.sample else everything
    isalint = shutil.which("isalint") or shutil.which("isalint", path=os.path.dirname(sys.executable))
    check = ([isalint] if isalint else [sys.executable, "-m", "isalint"]) + ["check", "--no-cache", "--format", "json"]
    dump = [objdump(), "-d", "--mcpu=gfx1100"]
    if args.sample:
        names = ",".join(k.name for k in chosen)
        if len(names) > MAX_SELECT:
            sys.exit(f"bench_tensile: --sample {args.sample}: the kernels' names are too long for one argument; "
                     "take fewer")
        check += ["--kernel", names]
        dump += [f"--disassemble-symbols={names}"]
    check.append(library)
    dump.append(library)
    findings_path = args.findings or os.path.join(os.environ.get("TMPDIR", "/tmp"), "isalint_tensile.json")
    load_before = os.getloadavg()
    c_wall, c_cpu, c_code, c_err = run_timed(check, findings_path)
    d_wall, d_cpu, d_code, d_err = run_timed(dump, os.devnull)
    load_after = os.getloadavg()
    if d_code != 0:
        sys.stderr.write(d_err[-2000:])
    findings = read_findings(findings_path)
    lines = [x for x in c_err.splitlines() if x.startswith("isalint: ") and not x.startswith("isalint: warning:")]
    internal = sum(1 for x in lines if "internal error" in x) + c_err.count("Traceback (most recent call last)")
    n_instrs = instructions(chosen)
    by_severity: dict[str, int] = {}

    def counted():
        for d in findings:
            by_severity[d["severity"]] = by_severity.get(d["severity"], 0) + 1
            yield d

    rows = count(counted())
    code_bytes = sum(len(k.code) for k in chosen)
    what = f"a sample of {len(chosen)} of its {len(everything)} kernels" if args.sample else "every kernel"
    shown = [Path(check[0]).name, *check[1:-1], Path(library).name]
    if args.sample:
        shown[shown.index("--kernel") + 1] = f"<{len(chosen)} names>"
    dump_shown = [Path(dump[0]).name, *dump[1:-1], Path(library).name]
    if args.sample:
        dump_shown[-2] = "--disassemble-symbols=<the same names>"
    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = [
        f"# `isalint check` on rocBLAS's {NAME}",
        "",
        f"{what.capitalize()} of `{_shown_path(library)}`, {today}, on {os.cpu_count()} processors ({platform.machine()}, "
        f"Python {platform.python_version()}); load average {load_before[0]:.1f} before, {load_after[0]:.1f} after.",
        f"Made by `python benchmarks/bench_tensile.py{' --sample ' + str(args.sample) if args.sample else ''} "
        f".../{_shown_path(library)}`.",
        "",
        "| | |",
        "| --- | --- |",
        f"| kernels checked | {len(chosen):,} |",
        f"| instructions | {n_instrs:,} ({code_bytes:,} bytes of code) |",
        f"| internal errors (tracebacks) | {internal} |",
        f"| other errors | {len(lines) - internal} |",
        f"| exit code of the check | {c_code} |",
        f"| findings | {sum(by_severity.values()):,} ("
        + ", ".join(f"{by_severity.get(s, 0):,} {s}" for s in ("error", "warning", "info")) + ") |",
        "",
        "| command | wall s | CPU s |",
        "| --- | --- | --- |",
        f"| `{' '.join(shown)}` | {c_wall:.1f} | {c_cpu:.1f} |",
        f"| `{' '.join(dump_shown)}` | {d_wall:.1f} | {d_cpu:.1f} |",
        f"| ratio isalint / llvm-objdump | **{c_wall / d_wall:.2f}x** | {c_cpu / d_cpu:.2f}x |",
        "",
        "| rule | severity | findings | sites | kernels |",
        "| --- | --- | --- | --- | --- |",
    ]
    out += [f"| {code} | {sev} | {n:,} | {sites:,} | {kernels:,} |" for (code, sev), (n, sites, kernels) in rows.items()]
    text = "\n".join(out) + "\n"
    print(text)
    table = args.table or (None if args.sample else str(HERE / "results" / "tensile_library.md"))
    if table:
        Path(table).parent.mkdir(parents=True, exist_ok=True)
        Path(table).write_text(text, encoding="utf-8")
        print(f"written to {table}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
