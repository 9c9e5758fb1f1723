"""What ``isalint validate`` and ``isalint run`` share: option parsing, launches, device runs."""
from __future__ import annotations

import re
import tempfile
from pathlib import Path

import numpy as np

from .emu import Kernel, Launch
from .gemm import GemmError


class UsageError(ValueError):
    """A bad option value: reported as one line, exit code 2."""


def parse_dims(text: str | None, what: str) -> tuple[int, int, int] | None:
    if text is None:
        return None
    parts = [p for p in re.split(r"[,x ]+", text.strip()) if p]
    try:
        dims = [int(p, 0) for p in parts]
    except ValueError:
        raise UsageError(f"--{what} {text!r}: expected X[,Y[,Z]] integers") from None
    if not 1 <= len(dims) <= 3 or min(dims) < 1:
        raise UsageError(f"--{what} {text!r}: expected 1 to 3 positive integers")
    while len(dims) < 3:
        dims.append(1)
    return dims[0], dims[1], dims[2]


def parse_latency(text: str | None):
    if text is None:
        return (64, 4096)
    if text.strip().lower() in ("never", "wait"):
        return None
    m = re.fullmatch(r"\s*(\d+)\s*(?::\s*(\d+))?\s*", text)
    if not m:
        raise UsageError(f"--latency {text!r}: expected LO:HI instruction counts, a single count, or 'never'")
    lo = int(m.group(1))
    hi = int(m.group(2)) if m.group(2) else lo
    if hi < lo:
        raise UsageError(f"--latency {text!r}: HI is below LO")
    return (lo, hi)


_BUF = re.compile(r"(f32|u32|i32|bytes|zeros):(\d{1,18})\Z")
_ITEM_BYTES = {"f32": 4, "u32": 4, "i32": 4, "bytes": 1, "zeros": 1}


def parse_args(items, seed: int) -> tuple[dict, dict]:
    """--arg NAME=VALUE items -> (kernel argument values, buffers).

    VALUE is an integer, a float, or a buffer: ``f32:COUNT`` (random fp32 in [-1, 1)),
    ``u32:COUNT``/``i32:COUNT`` (random words), ``bytes:COUNT`` (random bytes), ``zeros:COUNT`` (bytes).
    """
    from .memory_budget import EMULATOR_BYTES_PER_BUFFER_BYTE, TooLarge, require

    rng = np.random.default_rng(seed + 7)
    values: dict = {}
    buffers: dict = {}
    wanted = [_BUF.match(i.split("=", 1)[1].strip()) for i in items or () if "=" in i]
    total = sum(int(m.group(2)) * _ITEM_BYTES[m.group(1)] for m in wanted if m)
    try:
        require(total * (1 + EMULATOR_BYTES_PER_BUFFER_BYTE),
                f"--arg buffers of {total} bytes (with their copies in the emulator)")
    except TooLarge as exc:
        raise UsageError(str(exc)) from None
    for item in items or ():
        if "=" not in item:
            raise UsageError(f"--arg {item!r}: expected NAME=VALUE")
        name, val = item.split("=", 1)
        name, val = name.strip(), val.strip()
        if not name:
            raise UsageError(f"--arg {item!r}: empty name")
        m = _BUF.match(val)
        if m:
            kind, count = m.group(1), int(m.group(2))
            if kind == "f32":
                arr = rng.uniform(-1, 1, size=count).astype(np.float32)
            elif kind in ("u32", "i32"):
                arr = rng.integers(0, 1 << 32, size=count, dtype=np.uint64).astype(np.uint32)
            elif kind == "bytes":
                arr = rng.integers(0, 256, size=count, dtype=np.uint8)
            else:
                arr = np.zeros(count, dtype=np.uint8)
            buffers[name] = arr
            values[name] = name
            continue
        try:
            values[name] = int(val, 0)
            continue
        except ValueError:
            pass
        try:
            values[name] = float(val)
        except ValueError:
            raise UsageError(f"--arg {item!r}: VALUE must be an integer, a float or a buffer like f32:65536") from None
    return values, buffers


def generic_launcher(grid, block, values: dict, buffers: dict):
    if grid is None or block is None:
        raise UsageError("without --gemm, give --grid, --block and every kernel argument with --arg")

    def make(kernel: Kernel) -> Launch:
        return Launch(grid, block, dict(values), {k: v.copy() for k, v in buffers.items()})
    return make


def build_hsaco(tc, path: str, text: str | None = None) -> tuple[bytes | None, list[str]]:
    with tempfile.TemporaryDirectory(prefix="isalint-") as td:
        out = Path(td) / "kernel.hsaco"
        res = tc.build(Path(path) if text is None else text, out, source_name=path)
        if not res.ok:
            return None, [d.format() for d in res.errors] or [f"{path}: error: build failed"]
        return out.read_bytes(), []


def tflops(n: int, ms: float) -> float:
    return 2.0 * n ** 3 / (ms * 1e-3) / 1e12 if ms > 0 else float("nan")


__all__ = ["UsageError", "GemmError", "parse_dims", "parse_latency", "parse_args", "generic_launcher", "build_hsaco",
           "tflops"]
