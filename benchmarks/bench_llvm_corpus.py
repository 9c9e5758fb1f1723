"""`isalint check` on clang's own output for gfx1100: the HIP kernels of benchmarks/llvm_corpus.

    python benchmarks/bench_llvm_corpus.py [--out DIR] [--table FILE.md] [--clang clang-19] [--llvm-mc llvm-mc-19]

Each ``benchmarks/llvm_corpus/*.hip`` (our own small kernels: reductions, scans, atomics, softmax,
FP64, packed FP16, int8 dot products, sorts, stencils, calls, function pointers, scratch, switches,
ballots...) is compiled for gfx1100 in four variants:

* ``O3``: ``-O3``; ``O1``: ``-O1``; ``w64``: ``-O3 -mwavefrontsize64``; ``cu``: ``-O3 -mcumode``,

with ``clang -x hip --offload-arch=gfx1100 --cuda-device-only -nogpulib -S`` into ``--out`` (default
``isalint-llvm-corpus`` in the system's temporary directory, outside the repository: the assembly is
not kept). Each ``.s`` is assembled
by ``llvm-mc -triple=amdgcn-amd-amdhsa -mcpu=gfx1100`` (``-mattr=+wavefrontsize64`` for ``w64``; a
file it refuses is counted, and checked all the same), then
``isalint check --format json --exit-zero`` runs on it alone, so that an internal error (a traceback)
names its file. Without clang the benchmark says so and exits 0.

The table (printed, and written to ``--table``, default ``benchmarks/results/llvm_corpus.md``) gives
per variant the files, instructions, files llvm-mc refused, isalint tracebacks and input errors, and
the findings per rule and severity; then every error-severity finding in full. The command, the
compiler's version and the date head it. The goal is no error on this corpus: the compiler's output
is correct code.
"""
from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import re
import shutil
import tempfile
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "llvm_corpus"
VARIANTS = {
    "O3": ["-O3"],
    "O1": ["-O1"],
    "w64": ["-O3", "-mwavefrontsize64"],
    "cu": ["-O3", "-mcumode"],
}
MC_ATTRS = {"w64": ["-mattr=+wavefrontsize64"]}  # the wave size the file's target id names
SEVERITIES = ("error", "warning", "info")


def compile_one(clang: str, src: Path, out: Path, flags: list[str]) -> str | None:
    cmd = [clang, "-x", "hip", "--offload-arch=gfx1100", "--cuda-device-only", "-nogpulib", "-S",
           *flags, "-I/usr/include", str(src), "-o", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return None if r.returncode == 0 else (r.stderr.strip().splitlines() or ["failed"])[0]


def assembles(mc: str | None, path: Path, attrs: list[str]) -> bool:
    if mc is None:
        return True
    r = subprocess.run([mc, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1100", *attrs, "-filetype=obj", "-o", os.devnull,
                        str(path)],
                       capture_output=True, text=True)
    return r.returncode == 0


INSTRUCTION = re.compile(r"^\s+(?:s|v|ds|global|buffer|flat|scratch|image|exp)_\w+")


def instructions(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if INSTRUCTION.match(line))


def isalint_check(isalint: list[str], path: Path) -> tuple[list[dict], str | None]:
    r = subprocess.run([*isalint, "check", "--no-cache", "--format", "json", "--exit-zero", str(path)],
                       capture_output=True, text=True)
    if "Traceback" in r.stderr:
        return [], "traceback"
    if r.returncode == 2:
        return [], "input error: " + (r.stderr.strip().splitlines() or [""])[-1]
    return json.loads(r.stdout or "[]"), None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(Path(tempfile.gettempdir()) / "isalint-llvm-corpus"))
    ap.add_argument("--table", default=str(HERE / "results" / "llvm_corpus.md"))
    ap.add_argument("--clang", default="clang-19")
    ap.add_argument("--llvm-mc", default="llvm-mc-19")
    args = ap.parse_args(argv)
    clang = shutil.which(args.clang)
    if clang is None:
        print(f"skipped: {args.clang} is not installed (the corpus is compiled from benchmarks/llvm_corpus/*.hip)")
        return 0
    mc = shutil.which(args.llvm_mc)
    if mc is None:
        print(f"note: {args.llvm_mc} is not installed: the assembly is not checked by the LLVM assembler")
    exe = Path(sys.executable).with_name("isalint")
    isalint = [str(exe)] if exe.exists() else [sys.executable, "-m", "isalint"]
    version = subprocess.run([clang, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sources = sorted(SOURCES.glob("*.hip"))

    rows = {}
    errors: list[str] = []
    failures: list[str] = []
    rules: set[str] = set()
    for variant, flags in VARIANTS.items():
        row = {"files": 0, "instructions": 0, "compile_failed": 0, "mc_refused": 0, "tracebacks": 0,
               "input_errors": 0, "findings": collections.Counter()}
        for src in sources:
            s = out / f"{src.stem}.{variant}.s"
            why = compile_one(clang, src, s, flags)
            if why:
                row["compile_failed"] += 1
                failures.append(f"{src.name} ({variant}): clang: {why}")
                continue
            row["files"] += 1
            row["instructions"] += instructions(s)
            if not assembles(mc, s, MC_ATTRS.get(variant, [])):
                row["mc_refused"] += 1
                failures.append(f"{s.name}: refused by llvm-mc (checked all the same)")
            found, why = isalint_check(isalint, s)
            if why:
                row["tracebacks" if why == "traceback" else "input_errors"] += 1
                failures.append(f"{s.name}: isalint {why}")
            for f in found:
                row["findings"][(f["code"], f["severity"])] += 1
                rules.add((f["code"], f["severity"]))
                if f["severity"] == "error":
                    errors.append(f"{s.name}:{f['line']}: {f['code']} {f['message']}")
            print(f"{variant:4} {src.stem:16} {len(found)} findings", file=sys.stderr)
        rows[variant] = row

    columns = sorted(rules, key=lambda k: (k[0], SEVERITIES.index(k[1])))  # the (rule, severity) seen
    cmd = "python benchmarks/bench_llvm_corpus.py " + " ".join(argv if argv is not None else sys.argv[1:])
    lines = [
        "# isalint on clang's output: the HIP kernels of benchmarks/llvm_corpus",
        "",
        f"- command: `{cmd.strip()}`",
        f"- compiler: {version}; variants: "
        + ", ".join(f"`{k}` ({' '.join(v)})" for k, v in VARIANTS.items())
        + "; each with `-x hip --offload-arch=gfx1100 --cuda-device-only -nogpulib -S`",
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- sources: {len(sources)} `.hip` files",
        "",
        "| variant | files | instructions | llvm-mc refused | tracebacks | input errors | "
        + " | ".join(f"{r} {s}" for r, s in columns) + " | errors |",
        "|---|---:|---:|---:|---:|---:|" + "---:|" * len(columns) + "---:|",
    ]
    for variant, row in rows.items():
        cells = [variant, row["files"], row["instructions"], row["mc_refused"], row["tracebacks"], row["input_errors"]]
        cells += [row["findings"][key] for key in columns]
        cells.append(sum(n for (r, s), n in row["findings"].items() if s == "error"))
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    lines += ["", f"Error-severity findings: {len(errors)}"]
    lines += [f"- `{e}`" for e in errors]
    if failures:
        lines += ["", "Failures:"] + [f"- {f}" for f in failures]
    text = "\n".join(lines) + "\n"
    print(text)
    Path(args.table).parent.mkdir(parents=True, exist_ok=True)
    Path(args.table).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
