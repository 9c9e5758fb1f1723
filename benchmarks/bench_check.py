"""Benchmark: wall time of `isalint check` on a ~2500-line kernel over the wall time of llvm-mc
assembling the same file, measured in one run (median of repeated runs of each).

    python benchmarks/bench_check.py [FILE.s] [--repeat N]

Without FILE it uses the largest fixture kernel doubled to about 2500 lines (two copies of its
instructions in one kernel body is what a hand-unrolled loop looks like to both tools).
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _time(cmd: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True)
        times.append(time.perf_counter() - t)
        if proc.returncode not in (0, 1):
            sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[:500]}")
    return statistics.median(times)


def default_input(tmp: Path) -> Path:
    """kernel5.s (or the largest fixture) with its instruction lines repeated once before s_endpgm."""
    from isalint.parse import read_file

    kernel5 = REPO.parent / "shared" / "corpus" / "kernel5.s"
    base = kernel5 if kernel5.is_file() else max((REPO / "fixtures" / "kernels").glob("*.s"),
                                                   key=lambda p: p.stat().st_size)
    lines = read_file(str(base)).lines
    end = next(n for n, line in enumerate(lines) if line.kind == "instruction" and "s_endpgm" in line.text)
    again = [line for line in lines[:end] if line.kind == "instruction"
             and line.statements[0].mnemonic not in ("s_branch",) and not line.statements[0].mnemonic.startswith("s_cbranch")]
    out = [line.text + line.eol for line in lines[:end]] + [line.text + line.eol for line in again]
    out += [line.text + line.eol for line in lines[end:]]
    path = tmp / "bench_2500.s"
    path.write_text("".join(out))
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file", nargs="?")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    from isalint.validate.toolchain import find_toolchain

    tc = find_toolchain(need_linker=False)
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        src = Path(args.file) if args.file else default_input(tmp)
        n_lines = len(src.read_text().splitlines())
        isalint = shutil.which("isalint") or None
        check_cmd = [isalint] if isalint else [sys.executable, "-m", "isalint"]
        check_cmd += ["check", str(src)]
        asm_cmd = [*tc.assembler, *(["-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1100", "-filetype=obj"]
                                    if tc.flavor == "llvm-mc" else
                                    ["-triple", "amdgcn-amd-amdhsa", "-target-cpu", "gfx1100", "-filetype", "obj"]),
                   "-o", str(tmp / "k.o"), str(src)]
        t_asm = _time(asm_cmd, args.repeat)
        t_check = _time(check_cmd, args.repeat)
    print(f"input: {src.name}, {n_lines} lines")
    print(f"assembler ({tc.describe()}): {t_asm * 1000:.1f} ms (median of {args.repeat})")
    print(f"isalint check: {t_check * 1000:.1f} ms (median of {args.repeat})")
    print(f"ratio isalint/assembler: {t_check / t_asm:.2f}x")


if __name__ == "__main__":
    main()
