"""Generated inputs for the fuzz tests and the longer campaign (benchmarks/fuzz_campaign.py).

Inputs are mutations of real kernels (the fixtures, and kernel5 when present) and of a valid
configuration, drawn from a seeded ``random.Random``; each is run through the command line in this
process (``isalint.cli._run``), and :func:`verdict` says what is wrong with the outcome, if anything.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import random
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KERNEL5 = REPO.parent / "shared" / "corpus" / "kernel5.s"
OK_EXIT = (0, 1, 2)


def real_kernels() -> list[Path]:
    out = sorted((REPO / "fixtures" / "kernels").rglob("*.s")) + sorted((REPO / "fixtures" / "snippets").rglob("*.s"))
    if KERNEL5.is_file():
        out.append(KERNEL5)
    return out


_CORPUS: list[list[bytes]] = []
_MNEMONICS: list[str] = []


def corpus() -> list[list[bytes]]:
    """The real kernels as lists of lines (bytes, line endings kept)."""
    if not _CORPUS:
        _CORPUS.extend(p.read_bytes().splitlines(True) for p in real_kernels())
    return _CORPUS


def mnemonics() -> list[str]:
    if not _MNEMONICS:
        from isalint.isa import all_mnemonics

        _MNEMONICS.extend(sorted(all_mnemonics()))
    return _MNEMONICS


_WORDS = [b"v0", b"v255", b"v256", b"v[0:3]", b"v[4000000000:1]", b"s105", b"s106", b"s[0:1]", b"vcc", b"exec",
          b"off", b"0x7fffffff", b"-1", b"1e999", b"9" * 60, b"offset:4096", b"glc", b".LBB0_1", b"k", b"lgkmcnt(0)",
          b"vmcnt(63)", b"|v1|", b"-v2", b"neg(v3)", b"[", b"]", b"(", b")", b"::", b",", b":", b";", b"//", b"/*",
          b"*/", b"\"", b"\\", b"\t", b"\xff", b"\xc3\x28", b"\r", b"\x0b", b"\xe2\x80\xa8", b"0b102", b"08"]
_LINES = [b"s_endpgm\n", b"s_branch .LBB0_1\n", b"s_cbranch_scc1 .LBB0_1\n", b".LBB0_1:\n", b"s_waitcnt vmcnt(0)\n",
          b"ds_load_b32 v3, v2\n", b"scratch_store_b32 v1, v0, off offset:176\n",
          b"scratch_load_b32 v2, off, off offset:176\n", b"\t.amdgpu_metadata\n", b"\t.end_amdgpu_metadata\n",
          b"amdhsa.kernels: 5\n", b"  - .args: [1, {.offset: x}]\n", b".amdhsa_next_free_vgpr 100000\n",
          b".amdhsa_kernel k\n", b".end_amdhsa_kernel\n", b"\t.amdgcn_target \"amdgcn-amd-amdhsa--gfx90a\"\n",
          b"; isalint: disable\n", b"; isalint: disable=NOPE999\n", b"; isalint: disable-next-line=ALL\n",
          b"/* open comment\n", b"v_dual_fmac_f32 v0, v1, v2 :: v_dual_fmac_f32 v1, v3, v4\n",
          b"v_fmac_f32_e32 v124, v184, v192\n", b"---\n", b"...\n", b"[" * 200 + b"\n", b"\x00\n"]


def mutate(rng: random.Random, lines: list[bytes], sizes=(5, 20, 80, 300, None)) -> bytes:
    """A few random edits of a window of ``lines`` (a window of one of ``sizes`` lines; None: all)."""
    if lines and rng.random() < 0.7:
        size = rng.choice(sizes) or len(lines)
        start = rng.randrange(max(1, len(lines) - size + 1))
        lines = lines[start:start + size]
    lines = list(lines)
    for _ in range(rng.choice((1, 1, 2, 3, 6, 12))):
        op = rng.randrange(9)
        k = rng.randrange(len(lines)) if lines else 0
        if op == 0 and lines:
            del lines[k]
        elif op == 1 and lines:
            lines.insert(rng.randrange(len(lines) + 1), lines[k])
        elif op == 2:
            lines.insert(k, rng.choice(_LINES))
        elif op == 3 and lines:
            words = lines[k].split(b" ")
            words[rng.randrange(len(words))] = rng.choice(_WORDS)
            lines[k] = b" ".join(words)
        elif op == 4 and lines:
            line = lines[k]
            cut = rng.randrange(len(line) + 1)
            lines[k] = line[:cut] + rng.choice(_WORDS) + line[cut:]
        elif op == 5 and lines:
            lines[k] = lines[k].replace(lines[k].split()[0] if lines[k].split() else b"x",
                                        rng.choice(mnemonics()).encode(), 1)
        elif op == 6 and lines:
            j = rng.randrange(len(lines))
            lines[k], lines[j] = lines[j], lines[k]
        elif op == 7 and lines:
            line = lines[k]
            if line:
                pos = rng.randrange(len(line))
                lines[k] = line[:pos] + bytes([rng.randrange(256)]) + line[pos + 1:]
        elif op == 8 and lines:
            lines = lines[:k] if rng.random() < 0.5 else lines[k:]
    return b"".join(lines)


def generated_kernel(rng: random.Random, sizes=(5, 20, 80, 300, None)) -> bytes:
    """A mutation of a real kernel, or now and then of a random mix of kernels' lines."""
    pool = corpus()
    if rng.random() < 0.9:
        return mutate(rng, rng.choice(pool), sizes)
    return b"".join(rng.choice(rng.choice(pool)) for _ in range(rng.randrange(1, 60)))


VALID_CONFIG = b'[tool.isalint]\nselect = ["DUAL", "WAIT001"]\nignore = ["BANK001"]\ntarget = "gfx1100"\n'
_CONFIG_PARTS = [b"select = 5\n", b"ignore = [1, 2]\n", b'select = ["XYZ9"]\n', b"[tool]\nisalint = 5\n",
                 b"target = 7\n", b"[[[\n", b'selct = ["WAIT"]\n', b'select = ["ALL"]\n', b"\xff\n",
                 b'ignore = ["LIMIT001"]\n', b"[tool.isalint.x]\ny = 1\n", b'target = "gfx90a"\n']


def generated_config(rng: random.Random) -> bytes:
    lines = VALID_CONFIG.splitlines(True)
    for _ in range(rng.randrange(1, 4)):
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(_CONFIG_PARTS))
    if rng.random() < 0.3:
        return mutate(rng, lines)
    return b"".join(lines)


def command_line(rng: random.Random, path: str) -> list[str]:
    """Arguments of one in-process run on ``path`` (commands that need no assembler)."""
    fmt = rng.choice(("text", "json", "sarif", "github"))
    return rng.choice((
        ["check", "--format", fmt, path],
        ["check", "--format", "json", "--select", rng.choice(("ALL", "DUAL", "LDS001", "WAIT,BANK", "DELAY001")), path],
        ["check", "--format", "json", "--fail-on", "error", path],
        ["dump", "--format", "json", path],
        ["dump", path],
        ["graph", "--format", "json", path],
        ["graph", "--hot", "--format", "dot", path],
        ["report", path],
        ["fix", "--metadata", "--no-validate", "--diff", path],
        ["fix", "--dual-fmac", "--no-validate", "--diff", path],
        ["fix", rng.choice(("--unroll", "--batch-gmem", "--delay-alu")), "--no-validate", "--diff", path],
        ["estimate", "--format", "json", path],
        ["estimate", "--gemm", rng.choice(("64", "4096", "99968", "2147483648", "0", "-5")), path],
        ["optimize", "--no-validate", "--format", "json", path],
        ["explain", rng.choice(("DUAL001", "nope", "LIMIT001", "parse001", ""))],
    ))


@dataclass
class Outcome:
    args: list[str]
    code: int
    out: str
    err: str
    seconds: float


def run_in_process(args: list[str]) -> Outcome:
    from isalint.cli import _run

    out, err = io.StringIO(), io.StringIO()
    saved = os.environ.pop("ISALINT_TRACEBACK", None)
    t = time.perf_counter()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = _run(list(args), hard_exit=False)
    finally:
        if saved is not None:
            os.environ["ISALINT_TRACEBACK"] = saved
    return Outcome(list(args), code, out.getvalue(), err.getvalue(), time.perf_counter() - t)


def seconds_allowed(nbytes: int) -> float:
    """The time bound of one run: linear in the input (a few milliseconds a KiB, generously), above
    the fixed caps of some analyses (estimate follows the scalar program for at most 20,000,000
    instructions: about 20 s on a loaded machine)."""
    return 60.0 + nbytes * 5e-5


def verdict(o: Outcome, nbytes: int) -> str | None:
    """What is wrong with an outcome, or None."""
    if o.code not in OK_EXIT:
        return f"exit code {o.code}"
    # (a pass's own "refused: internal error" is a safe refusal: exit 1, nothing written)
    for bad in ("Traceback (most recent call last)", "(a bug in isalint", "out of memory"):
        if bad in o.err or bad in o.out:
            return f"{bad!r} in the output: {o.err.strip()[-400:]}"
    if "--format" in o.args and o.args[o.args.index("--format") + 1] in ("json", "sarif"):
        # JSON on stdout, except after an error (exit 2) that printed nothing there
        if o.code != 2 or o.out.strip():
            try:
                json.loads(o.out)
            except ValueError:
                return f"--format json gave no JSON: {o.out[:200]!r}"
    if o.seconds > seconds_allowed(nbytes):
        return f"{o.seconds:.1f}s for {nbytes} bytes"
    return None
