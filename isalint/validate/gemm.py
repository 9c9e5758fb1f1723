"""The GEMM ABI of the fixture and study kernels: ``kernel(float *a, float *b, float *c, int N, float alpha,
float beta)`` computing ``C = alpha*A*B + beta*C`` on row-major N x N fp32 matrices. The ``gemm_f16``
variant (kernels.json ``"abi": "gemm_f16"``) has the same parameters with fp16 A and B (``_Float16 *a,
_Float16 *b``) and an fp32 C; ``transpose`` computes ``C = alpha*transpose(A) + beta*C``.

Launch geometry comes from (in this order) explicit ``grid``/``block``, the ``kernels.json`` that
sits beside fixture kernels, the kernel's own metadata for the block (``.reqd_workgroup_size``, else a
``.max_flat_workgroup_size`` other than the compiler's default 1024: the kernel's launch bounds), or
the convention of a GEMM with 128 x 128 tiles: 128 threads per workgroup on a grid of (N/128, N/128).
What comes from that convention is listed in :attr:`Geometry.defaults`, so that the commands say so.
A block the kernel's metadata rules out (another ``.reqd_workgroup_size``, more work-items than its
``.max_flat_workgroup_size``) is refused: the hardware would not launch it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..hw.occupancy import MAX_WORKGROUP_SIZE

GEMM_ARGS = (("global_buffer", 8), ("global_buffer", 8), ("global_buffer", 8), ("by_value", 4), ("by_value", 4),
             ("by_value", 4))


class GemmError(ValueError):
    """The kernel or the requested size does not fit the GEMM ABI."""


def has_gemm_abi(kernel) -> bool:
    """True when the kernel's metadata ``.args`` are 3 global buffers then three 4-byte values."""
    from .emu import kernel_args

    args = [a for a in kernel_args(kernel) if not a.kind.startswith("hidden_")]
    return len(args) == 6 and all((a.kind, a.size) == want for a, want in zip(args, GEMM_ARGS))


@dataclass
class Geometry:
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    source: str  # where it came from
    abi: str = "gemm"  # one of ABIS
    workgroups: tuple | None = None  # the workgroups a sampled run emulates (None: all)
    defaults: tuple[str, ...] = ()  # what is the 128 x 128-tile convention, not a fact: "block", "grid"


ABIS = ("gemm", "gemm_f16", "transpose")
MAX_N = (1 << 31) - 1  # N is a 32-bit int argument
MAX_GRID = (1 << 31) - 1


def _eval_dim(expr: str, n: int, where: str) -> int:
    from .launch_expr import ExprError, evaluate

    try:
        value = evaluate(expr, n)
    except ExprError as exc:
        raise GemmError(f"{where}: grid expression {expr.strip()!r}: {exc}") from None
    if not 1 <= value <= MAX_GRID:
        raise GemmError(f"{where}: grid expression {expr.strip()!r} is {value} for N={n}; a grid dimension is "
                        f"1 to {MAX_GRID}")
    return value


def _entry_int(entry: dict, key: str, default: int, lowest: int, where: str) -> int:
    value = entry.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < lowest:
        raise GemmError(f"{where}: {key} must be an integer of at least {lowest}, not {value!r}")
    return value


def fixture_entry(path: str | Path) -> dict | None:
    """The kernels.json entry describing ``path`` when one sits beside it."""
    p = Path(path)
    meta = p.parent / "kernels.json"
    if not meta.is_file():
        return None
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    kernels = data.get("kernels") if isinstance(data, dict) else None
    entry = kernels.get(p.name) if isinstance(kernels, dict) else None
    return entry if isinstance(entry, dict) else None


def required_block(program, kernel_name: str | None = None) -> tuple[int, int, int] | None:
    """The kernel's ``.reqd_workgroup_size`` from its metadata (the first kernel by default)."""
    kernels = [k for k in program.kernels if kernel_name is None or k.name == kernel_name]
    meta = (kernels[0].metadata or {}) if kernels else {}
    dims = meta.get(".reqd_workgroup_size")
    if isinstance(dims, list) and len(dims) == 3 and all(isinstance(d, int) and d >= 1 for d in dims):
        return dims[0], dims[1], dims[2]
    return None


COMPILER_FLAT_LIMIT = MAX_WORKGROUP_SIZE  # .max_flat_workgroup_size without launch bounds


def launch_bound(program, kernel_name: str | None = None) -> int | None:
    """The kernel's ``.max_flat_workgroup_size`` (None when its metadata has none)."""
    kernels = [k for k in program.kernels if kernel_name is None or k.name == kernel_name]
    meta = (kernels[0].metadata or {}) if kernels else {}
    value = meta.get(".max_flat_workgroup_size")
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None


def _check_launch_block(block, required, bound, where: str) -> None:
    threads = block[0] * block[1] * block[2]
    if required is not None and tuple(block) != tuple(required):
        raise GemmError(f"{where}: block {'x'.join(map(str, block))} is not the kernel's .reqd_workgroup_size "
                        f"{'x'.join(map(str, required))}; the hardware would not launch it")
    if bound is not None and threads > bound:
        raise GemmError(f"{where}: block {'x'.join(map(str, block))} has {threads} work-items, more than the "
                        f"kernel's .max_flat_workgroup_size {bound} (its launch bounds); the hardware would not "
                        "launch it")


def geometry(path: str | Path, n: int, grid=None, block=None, required=None, bound=None) -> Geometry:
    """Launch geometry for size ``n``; raises :class:`GemmError` when ``n`` does not fit.
    ``required``: the kernel's ``.reqd_workgroup_size`` (see :func:`required_block`); ``bound``: its
    ``.max_flat_workgroup_size`` (see :func:`launch_bound`)."""
    if n < 1:
        raise GemmError(f"--gemm {n}: N must be positive")
    if n > MAX_N:
        raise GemmError(f"--gemm {n}: N is passed as a 32-bit int: at most {MAX_N}")
    entry = fixture_entry(path)
    abi = "gemm"
    if grid is None and block is None and entry is not None:
        where = f"kernels.json, {Path(path).name}"
        mult = _entry_int(entry, "n_multiple", 1, 1, where)
        lo = _entry_int(entry, "min_n", 1, 1, where)
        hi = _entry_int(entry, "max_n", 1 << 30, 1, where)
        if n % mult or n < lo or n > hi:
            raise GemmError(f"{Path(path).name} needs N a multiple of {mult} in [{lo}, {hi}] (kernels.json)")
        dims = str(entry.get("grid", "")).split(",")
        if len(dims) != 2:
            raise GemmError(f"{where}: grid must be two expressions 'X,Y', not {entry.get('grid')!r}")
        gx, gy = (_eval_dim(e, n, where) for e in dims)
        b = entry.get("block")
        if not (isinstance(b, list) and len(b) == 3 and all(isinstance(x, int) and not isinstance(x, bool)
                                                            and 1 <= x <= MAX_WORKGROUP_SIZE for x in b)):
            raise GemmError(f"{where}: block must be [X, Y, Z], each 1 to {MAX_WORKGROUP_SIZE}, not {b!r}")
        abi = entry.get("abi", "gemm")
        if abi not in ABIS:
            raise GemmError(f"{where}: abi must be one of {', '.join(ABIS)}, not {abi!r}")
        _check_launch_block(b, required, bound, where)
        return Geometry((gx, gy, 1), (b[0], b[1], b[2]), "kernels.json", abi)
    sources = []
    defaults = []
    if block is not None:
        _check_launch_block(block, required, bound, "--block")
        sources.append("block from --block")
    elif required is not None:
        block = tuple(required)
        sources.append("block from .reqd_workgroup_size")
    elif bound is not None and bound != COMPILER_FLAT_LIMIT:
        block = (bound, 1, 1)
        sources.append("block from .max_flat_workgroup_size (the kernel's launch bounds)")
    else:
        block = (128, 1, 1)
        sources.append("128 threads by default")
        defaults.append("block")
    if grid is None:
        if n % 128:
            raise GemmError(f"--gemm {n}: the default grid (N/128 x N/128, one workgroup per 128 x 128 tile of C) "
                            "needs N a multiple of 128; give --grid for other launches")
        grid = (n // 128, n // 128, 1)
        sources.append("grid N/128 x N/128 (128 x 128 tiles) by default")
        defaults.append("grid")
    else:
        sources.append("grid from --grid")
    return Geometry(tuple(grid), tuple(block), ", ".join(sources), abi, defaults=tuple(defaults))


@dataclass
class GemmProblem:
    n: int
    alpha: float
    beta: float
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    abi: str = "gemm"

    def buffers(self) -> dict[str, np.ndarray]:
        return {"a": self.a, "b": self.b, "c": self.c}

    def args(self, kernel) -> dict:
        from .emu import kernel_args

        names = [a.name for a in kernel_args(kernel) if not a.kind.startswith("hidden_")]
        vals = ["a", "b", "c", int(self.n), float(self.alpha), float(self.beta)]
        return dict(zip(names, vals))

    def reference(self, rows=slice(None), cols=slice(None)) -> np.ndarray:
        """alpha*A*B + beta*C in float64 (of the block ``rows`` x ``cols`` only, when given)."""
        a = self.a.astype(np.float64)
        if self.abi == "transpose":
            prod = a.T[rows, cols]
        else:
            prod = a[rows] @ self.b[:, cols].astype(np.float64)
        return self.alpha * prod + self.beta * self.c[rows, cols].astype(np.float64)

    def tolerance(self, rows=slice(None), cols=slice(None)) -> np.ndarray:
        """Per-element bound on fp32 rounding error (|alpha| |A||B| + |beta C|) * (N + 2) * 2^-24."""
        u = 2.0 ** -24
        if self.abi == "transpose":
            mag = abs(self.alpha) * np.abs(self.a.astype(np.float64)).T[rows, cols]
            k = 2
        else:
            mag = abs(self.alpha) * (np.abs(self.a[rows].astype(np.float64)) @ np.abs(self.b[:, cols].astype(np.float64)))
            k = self.n + 2
        return (mag + abs(self.beta) * np.abs(self.c[rows, cols].astype(np.float64))) * k * u + 1e-30


def problem(n: int, alpha: float = 1.0, beta: float = 0.0, seed: int = 0, abi: str = "gemm") -> GemmProblem:
    from .memory_budget import TooLarge, gemm_bytes, require

    try:
        require(gemm_bytes(n), f"--gemm {n} (three {n} x {n} fp32 matrices, their copies in the emulator and "
                               "the float64 reference)")
    except TooLarge as exc:
        raise GemmError(str(exc)) from None
    rng = np.random.default_rng(seed)
    mk = lambda: rng.uniform(-1.0, 1.0, size=(n, n)).astype(np.float32)  # noqa: E731
    a, b, c = mk(), mk(), mk()
    if abi == "gemm_f16":
        a, b = a.astype(np.float16), b.astype(np.float16)
    return GemmProblem(n, alpha, beta, a, b, c, abi)


def input_dtypes(abi: str) -> tuple:
    """numpy element types of A, B, C for ``abi``."""
    f16 = abi == "gemm_f16"
    return (np.float16 if f16 else np.float32, np.float16 if f16 else np.float32, np.float32)


@dataclass
class Check:
    ok: bool
    max_error: float
    worst: tuple[int, int]
    got: float
    want: float
    bad: int
    stray: str = ""  # set when C changed where no workgroup run owns it

    def describe(self) -> str:
        i, j = self.worst
        if self.ok:
            return f"matches numpy (max |error| {self.max_error:.3g})"
        if self.stray:
            return (f"{self.bad} element(s) of C changed {self.stray}; first C[{i},{j}] = {self.got!r}, "
                    f"was {self.want!r}")
        return (f"{self.bad} element(s) differ from numpy beyond fp32 rounding; worst C[{i},{j}] = {self.got!r}, "
                f"numpy {self.want!r}")


def check_against_numpy(prob: GemmProblem, c_bytes: np.ndarray, tiles=None) -> Check:
    """C against numpy: all of it, or (``tiles``: the (row0, row1, col0, col1) blocks a sampled run's
    workgroups own) those blocks, the rest of C left as it was given."""
    n = prob.n
    c = np.frombuffer(c_bytes.tobytes(), dtype=np.float32)[: n * n].reshape(n, n)
    if tiles is None:
        return _check_block(prob, c, slice(None), slice(None), 0, 0)
    owned = np.zeros((n, n), bool)
    checks = []
    for r0, r1, c0, c1 in tiles:
        owned[r0:r1, c0:c1] = True
        checks.append(_check_block(prob, c, slice(r0, r1), slice(c0, c1), r0, c0))
    stray = np.nonzero((c.view(np.uint32) != prob.c.view(np.uint32)) & ~owned)
    if stray[0].size:
        i, j = int(stray[0][0]), int(stray[1][0])
        return Check(False, float("inf"), (i, j), float(c[i, j]), float(prob.c[i, j]), int(stray[0].size),
                     "outside the tiles of the workgroups run")
    bad = [ch for ch in checks if not ch.ok]
    worst = max(bad or checks, key=lambda ch: ch.max_error)
    return Check(not bad, max(ch.max_error for ch in checks), worst.worst, worst.got, worst.want,
                 sum(ch.bad for ch in checks))


def _check_block(prob: GemmProblem, c: np.ndarray, rows, cols, r0: int, c0: int) -> Check:
    got = c[rows, cols].astype(np.float64)
    ref = prob.reference(rows, cols)
    err = np.abs(got - ref)
    err = np.where(np.isnan(got), np.inf, err)
    tol = prob.tolerance(rows, cols)
    over = err > tol
    worst = np.unravel_index(int(np.argmax(err / tol)), err.shape)
    return Check(not over.any(), float(np.max(err)) if err.size else 0.0,
                 (r0 + int(worst[0]), c0 + int(worst[1])), float(got[worst]), float(ref[worst]), int(over.sum()))
