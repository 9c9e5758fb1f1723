"""Benchmark: wall time of `isalint check` on a ~2500-line kernel over the wall time of llvm-mc
assembling the same file (median of repeated runs of each, the two interleaved so that a load
change on the machine hits both alike).

    python benchmarks/bench_check.py [FILE.s] [--repeat N] [--breakdown]

Without FILE it uses the largest fixture kernel doubled to about 2500 lines (two copies of its
instructions in one kernel body is what a hand-unrolled loop looks like to both tools).
``--breakdown`` also times the stages of one check in this process: imports, parse, model and
each rule (CPU milliseconds, median of the repeats).
"""
from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _run(cmd: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of ``cmd``."""
    c, t = _child_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True)
    wall, cpu = time.perf_counter() - t, _child_cpu() - c
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[:500]}")
    return wall, cpu


def _time_interleaved(cmds: list[list[str]], repeat: int) -> list[tuple[float, float]]:
    """Median (wall, CPU) of each command, runs interleaved, after one warm-up run each."""
    for cmd in cmds:
        _run(cmd)
    runs: list[list[tuple[float, float]]] = [[] for _ in cmds]
    for _ in range(repeat):
        for k, cmd in enumerate(cmds):
            runs[k].append(_run(cmd))
    return [(statistics.median(w for w, _ in r), statistics.median(c for _, c in r)) for r in runs]


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


# what `isalint check` imports before it loads the rules
_IMPORTS = ("import isalint.cli, isalint.commands.check, isalint.rules, isalint.analysis, isalint.checker, "
            "isalint.report.findings")


def _script_python(script: str) -> str:
    """The interpreter of a console script (its #! line), else this one."""
    try:
        with open(script, "rb") as fh:
            first = fh.readline().decode(errors="replace").strip()
    except OSError:
        return sys.executable
    return first[2:].strip() if first.startswith("#!") and "python" in first else sys.executable


def breakdown(path: Path, repeat: int) -> list[tuple[str, float]]:
    """CPU ms per stage of one check, in this process (the rules' first use includes their imports)."""
    import gc

    from isalint import rules as registry
    from isalint.analysis import Analysis
    from isalint.parse.source import read_file
    stages: dict[str, list[float]] = {}
    codes = registry.available()
    gc.disable()  # as `isalint check` runs
    for n in range(repeat):
        t = time.process_time()
        source = read_file(str(path))
        stages.setdefault("parse", []).append((time.process_time() - t) * 1000)
        t = time.process_time()
        analysis = Analysis.from_source(source)
        analysis.cfg
        stages.setdefault("model", []).append((time.process_time() - t) * 1000)
        for code in codes:
            t = time.process_time()
            list(registry.load(code).check(analysis))
            stages.setdefault(code + (" (first run)" if n == 0 else ""), []).append((time.process_time() - t) * 1000)
        del analysis
        gc.collect()
    gc.enable()
    return [(name, statistics.median(v)) for name, v in stages.items()]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file", nargs="?")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--breakdown", action="store_true", help="also time the stages of one check in-process")
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
        cmds = [asm_cmd, check_cmd]
        if args.breakdown:
            python = check_cmd[0] if not isalint else _script_python(isalint)
            cmds += [[python, "-c", "pass"], [python, "-c", _IMPORTS]]
        timed = _time_interleaved(cmds, args.repeat)
        (t_asm, c_asm), (t_check, c_check) = timed[:2]
        stages = breakdown(src, args.repeat) if args.breakdown else []
    print(f"input: {src.name}, {n_lines} lines")
    print(f"assembler ({tc.describe()}): {t_asm * 1000:.1f} ms (median of {args.repeat})")
    print(f"isalint check ({' '.join(check_cmd[:-2])}): {t_check * 1000:.1f} ms (median of {args.repeat})")
    print(f"ratio isalint/assembler: {t_check / t_asm:.2f}x")
    print(f"CPU time: assembler {c_asm * 1000:.1f} ms, isalint check {c_check * 1000:.1f} ms, "
          f"ratio {c_check / c_asm:.2f}x" if c_asm > 0 else "CPU time: not measurable")
    if stages:
        (t_py, c_py), (t_imp, c_imp) = timed[2:]
        print(f"python startup: {t_py * 1000:.1f} ms wall, {c_py * 1000:.1f} ms CPU; "
              f"+ the check's imports (before any rule): {(t_imp - t_py) * 1000:.1f} ms wall, "
              f"{(c_imp - c_py) * 1000:.1f} ms CPU")
        print("breakdown (CPU ms, in-process, median):")
        for name, ms in stages:
            print(f"  {name:24s} {ms:7.1f}")


if __name__ == "__main__":
    main()
