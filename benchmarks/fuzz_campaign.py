"""A longer fuzz campaign than the test suite's: generated inputs (tests/fuzzing.py) through every
command, in parallel worker processes, reproducers of each failure kept.

    python benchmarks/fuzz_campaign.py --inputs 200000 --jobs 8 --seed 7 --out /tmp/isalint-fuzz

Exit 0 when every input ended well (exit 0/1/2, no traceback or internal error, JSON when asked for,
within the time bound), 1 otherwise; each failure is printed with the file that reproduces it.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import fuzzing as fz  # noqa: E402


def _worker(seed: int, inputs: int, out_dir: str) -> tuple[int, list[str]]:
    rng = random.Random(seed)
    failures: list[str] = []
    seen: set[tuple[str, str]] = set()
    with tempfile.TemporaryDirectory(prefix="isalint-fuzz-") as td:
        for n in range(inputs):
            config = rng.random() < 0.05
            data = fz.generated_config(rng) if config else fz.generated_kernel(rng)
            if config:
                (Path(td) / "pyproject.toml").write_bytes(data)
                kernel = Path(td) / "k.s"
                kernel.write_bytes(b"\tv_fmac_f32_e32 v1, v2, v3\n\ts_endpgm\n")
                args = ["check", "--format", "json", str(kernel)]
            else:
                (Path(td) / "pyproject.toml").unlink(missing_ok=True)
                kernel = Path(td) / f"k{n % 32}.s"
                kernel.write_bytes(data)
                args = fz.command_line(rng, str(kernel))
            outcome = fz.run_in_process(args)
            problem = fz.verdict(outcome, len(data))
            if problem:
                key = (args[0], problem[:80])
                if key in seen:
                    continue
                seen.add(key)
                keep = Path(out_dir) / f"seed{seed}-{n}{'.toml' if config else '.s'}"
                keep.write_bytes(data)
                failures.append(f"{' '.join(args[:-1])} {keep}: {problem}")
    return inputs, failures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", type=int, default=50_000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--out", default=tempfile.gettempdir() + "/isalint-fuzz")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    chunk = 1000
    seeds = [args.seed * 100_003 + k for k in range((args.inputs + chunk - 1) // chunk)]
    t = time.perf_counter()
    done, failures = 0, []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for n, found in pool.map(_worker, seeds, [chunk] * len(seeds), [args.out] * len(seeds)):
            done += n
            failures += found
            for f in found:
                print("FAIL", f, flush=True)
    print(f"{done} inputs, seed {args.seed}, {time.perf_counter() - t:.0f}s, {len(failures)} failure(s); "
          f"reproducers in {args.out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
