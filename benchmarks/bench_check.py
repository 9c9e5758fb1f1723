"""Benchmark: wall time of `isalint check` over the wall time of llvm-mc assembling the same input
(median of repeated runs of each, the two interleaved so that a load change on the machine hits both
alike), and CPU time beside it.

    python benchmarks/bench_check.py [FILE.s] [--lines N] [--repeat N] [--breakdown]
    python benchmarks/bench_check.py --files 50 [--repeat N]

Without FILE it uses kernel5.s (or the largest fixture kernel) with its instructions repeated before
``s_endpgm`` until the file has about ``--lines`` lines (default 2500: two copies of the
instructions in one kernel body, what a hand-unrolled loop looks like to both tools; 40000 is the
large input). The check runs with ``--no-cache``: it measures the work, not the result cache.
``--breakdown`` also times the stages of one check in this process: imports, parse, model and each
rule (CPU milliseconds, median of the repeats).

``--files N`` checks a directory of N kernels (the fixture kernels and kernel5.s, repeated): the
check of all of them (``--no-cache``; worker processes as the command decides) against llvm-mc
assembling each, and a second check that finds every result in the cache against ``python -c pass``.
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


def _base_kernel() -> Path:
    kernel5 = REPO.parent / "shared" / "corpus" / "kernel5.s"
    return kernel5 if kernel5.is_file() else max((REPO / "fixtures" / "kernels").glob("*.s"),
                                                  key=lambda p: p.stat().st_size)


def default_input(tmp: Path, lines: int = 2500) -> Path:
    """kernel5.s (or the largest fixture) with its instruction lines repeated before s_endpgm until the
    file has about ``lines`` lines (at least one copy)."""
    from isalint.parse import read_file

    text = read_file(str(_base_kernel())).lines
    end = next(n for n, line in enumerate(text) if line.kind == "instruction" and "s_endpgm" in line.text)
    again = [line for line in text[:end] if line.kind == "instruction"
             and line.statements[0].mnemonic not in ("s_branch",) and not line.statements[0].mnemonic.startswith("s_cbranch")]
    copies = max(1, round((lines - len(text)) / len(again)))
    out = [line.text + line.eol for line in text[:end]] + [line.text + line.eol for line in again] * copies
    out += [line.text + line.eol for line in text[end:]]
    path = tmp / f"bench_{lines}.s"
    path.write_text("".join(out))
    return path


def kernel_directory(tmp: Path, count: int) -> Path:
    """``count`` kernel files: the fixture kernels and kernel5.s, in turn."""
    import shutil

    sources = sorted((REPO / "fixtures" / "kernels").rglob("*.s"))
    kernel5 = REPO.parent / "shared" / "corpus" / "kernel5.s"
    if kernel5.is_file():
        sources.append(kernel5)
    folder = tmp / "kernels"
    folder.mkdir()
    for n in range(count):
        src = sources[n % len(sources)]
        shutil.copy(src, folder / f"k{n:03d}_{src.name}")
    return folder


# what `isalint check` imports before it loads the rules
_IMPORTS = ("import isalint.cli, isalint.commands.check, isalint.rules, isalint.analysis, isalint.lint, "
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
            rule = registry.load(code)
            if not hasattr(rule, "check"):  # SUPP001 judges the other rules' suppressions
                continue
            t = time.process_time()
            list(rule.check(analysis))
            stages.setdefault(code + (" (first run)" if n == 0 else ""), []).append((time.process_time() - t) * 1000)
        del analysis
        gc.collect()
    gc.enable()
    return [(name, statistics.median(v)) for name, v in stages.items()]


def _asm_cmd(tc, src: Path, obj: Path) -> list[str]:
    return [*tc.assembler, *(["-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1100", "-filetype=obj"]
                             if tc.flavor == "llvm-mc" else
                             ["-triple", "amdgcn-amd-amdhsa", "-target-cpu", "gfx1100", "-filetype", "obj"]),
            "-o", str(obj), str(src)]


def _isalint_cmd() -> list[str]:
    isalint = shutil.which("isalint")
    return [isalint] if isalint else [sys.executable, "-m", "isalint"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file", nargs="?")
    ap.add_argument("--lines", type=int, default=2500, help="size of the generated input (without FILE)")
    ap.add_argument("--files", type=int, help="check a directory of this many kernels instead")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--breakdown", action="store_true", help="also time the stages of one check in-process")
    args = ap.parse_args()
    if args.files:
        return many_files(args.files, args.repeat)
    from isalint.validate.toolchain import find_toolchain

    tc = find_toolchain(need_linker=False)
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        src = Path(args.file) if args.file else default_input(tmp, args.lines)
        n_lines = len(src.read_text().splitlines())
        check_cmd = _isalint_cmd() + ["check", "--no-cache", str(src)]
        asm_cmd = _asm_cmd(tc, src, tmp / "k.o")
        cmds = [asm_cmd, check_cmd]
        if args.breakdown:
            python = check_cmd[0] if len(check_cmd) > 1 and check_cmd[1] == "-m" else _script_python(check_cmd[0])
            cmds += [[python, "-c", "pass"], [python, "-c", _IMPORTS]]
        timed = _time_interleaved(cmds, args.repeat)
        (t_asm, c_asm), (t_check, c_check) = timed[:2]
        stages = breakdown(src, args.repeat) if args.breakdown else []
    print(f"input: {src.name}, {n_lines} lines")
    print(f"assembler ({tc.describe()}): {t_asm * 1000:.1f} ms (median of {args.repeat})")
    print(f"isalint check ({' '.join(check_cmd[:-1])}): {t_check * 1000:.1f} ms (median of {args.repeat})")
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


def many_files(count: int, repeat: int) -> None:
    """The check of ``count`` kernels: cold (against llvm-mc assembling each) and answered from the
    result cache (against ``python -c pass``)."""
    import os

    from isalint.validate.toolchain import find_toolchain

    tc = find_toolchain(need_linker=False)
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        folder = kernel_directory(tmp, count)
        files = sorted(folder.iterdir())
        driver = tmp / "assemble_each.py"  # one assembler process per file, as a build would run it
        driver.write_text("import subprocess, sys\n"
                          f"for cmd in {[_asm_cmd(tc, f, tmp / 'k.o') for f in files]!r}:\n"
                          "    subprocess.run(cmd, check=True)\n")
        asm_all = [sys.executable, str(driver)]
        cold = _isalint_cmd() + ["check", "--no-cache", str(folder)]
        env_dir = tmp / "cache"
        os.environ["ISALINT_CACHE_DIR"] = str(env_dir)
        warm = _isalint_cmd() + ["check", str(folder)]
        _run(warm)  # fills the cache
        python = warm[0] if len(warm) > 1 and warm[1] == "-m" else _script_python(warm[0])
        timed = _time_interleaved([asm_all, cold, warm, [python, "-c", "pass"]], repeat)
        size = sum(f.stat().st_size for f in files)
    (t_asm, c_asm), (t_cold, c_cold), (t_warm, c_warm), (t_py, c_py) = timed
    print(f"input: {count} kernels, {size / 1e6:.2f} MB; {os.cpu_count()} processors")
    print(f"llvm-mc, one process per file: {t_asm * 1000:.1f} ms wall, {c_asm * 1000:.1f} ms CPU")
    print(f"isalint check --no-cache DIR: {t_cold * 1000:.1f} ms wall, {c_cold * 1000:.1f} ms CPU "
          f"(ratio to llvm-mc {t_cold / t_asm:.2f}x wall)")
    print(f"isalint check DIR, every result cached: {t_warm * 1000:.1f} ms wall, {c_warm * 1000:.1f} ms CPU")
    print(f"python -c pass: {t_py * 1000:.1f} ms wall, {c_py * 1000:.1f} ms CPU; cached re-run / python -c pass: "
          f"{t_warm / t_py:.2f}x wall, {c_warm / c_py:.2f}x CPU" if c_py > 0 else "")


if __name__ == "__main__":
    main()
