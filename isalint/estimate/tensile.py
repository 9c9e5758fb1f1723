"""``--tensile M,N,K[,B]``: the arguments of a Tensile GEMM kernel (rocBLAS's ``Cijk_...`` kernels) for
one problem size, set by their metadata names as Tensile's host code sets them.

A Tensile kernel's name carries what the launch needs: the transposes (``Ailk``: A is M x K with M
contiguous, the "N" layout; ``Alik``: A is stored transposed, K contiguous; ``Bljk``: B is K x N with K
contiguous; ``Bjlk``: transposed), the data types (``HHS``: fp16 in and out, fp32 compute; ``HB``: fp16
throughout; ``BBS``: bf16 in and out, fp32 compute; ``I8II``: int8 in, int32 out and compute; ``SB``:
fp32), ``_GB`` (batched by pointer arrays), the macro tile ``MT{MT0}x{MT1}x{DU}``, the workgroup
``WG{x}_{y}_{z}`` (launched flat: x*y*z work-items), ``WGM`` (workgroup mapping), ``GSU`` (global
split-U) and ``SU``/``SUS`` (stagger-U).

The values (Tensile's kernel argument list, one per metadata name):

* ``SizesFree0`` = M, ``SizesFree1`` = N, ``SizesFree2`` = B (batch), ``SizesSum0`` = K;
* strides of packed (leading dimension = rows) column-major matrices: ``strideA0`` the leading
  dimension of A (M for ``Ailk``, K for ``Alik``), ``strideA1`` its batch stride (M*K); likewise B
  (K or N; K*N), C and D (M; M*N);
* ``sizeA``/``sizeB``/``sizeC`` the elements of each tensor (batch included), ``OffsetX`` 0;
* ``alpha`` 1 and ``beta`` 0 (override with ``--arg beta=1.0``: a kernel reads C only when beta is
  not 0), packed in the compute type;
* ``NumWorkGroups0/1`` = ceil(M/MT0), ceil(N/MT1); with a workgroup mapping WGM: ``NumFullBlocks`` =
  NumWorkGroups1 // WGM, ``WgmRemainder1`` = NumWorkGroups1 % WGM (WGM when 0) and
  ``MagicNumberWgmRemainder1`` = 2^31 // WgmRemainder1 + 1 (the kernel's division by multiplication);
* ``OrigStaggerUIter``: the stagger-U mask, SU halved while the unroll loop has fewer than
  SU * 2^shift iterations (shift = log2(SUS / (DU * bytes per element))), minus one; it moves where each
  workgroup starts in K, not how many iterations it runs;
* the grid: (ceil(M/MT0) * GSU, ceil(N/MT1), B) workgroups of x*y*z work-items.

The tensors' addresses are placeholders 4 GiB apart: no address decides a Tensile kernel's control flow.
"""
from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass

from .prediction import Work


class TensileError(ValueError):
    """The kernel is no Tensile GEMM kernel this convenience understands, or the size does not fit it."""


# data-type code -> (bytes of A/B, bytes of C/D, compute type, estimate's name)
TYPES = {
    "HHS": (2, 2, "f32", "fp16"), "HB": (2, 2, "f16", "fp16"), "HSS": (2, 4, "f32", "fp16"),
    "BBS": (2, 2, "f32", "bf16"), "BSS": (2, 4, "f32", "bf16"), "I8II": (1, 4, "i32", "int8"),
    "SB": (4, 4, "f32", "fp32"), "SS": (4, 4, "f32", "fp32"),
}

_NAME = re.compile(r"Cijk_A(?P<a>ilk|lik)_B(?P<b>ljk|jlk)_(?P<types>[A-Z0-9]+)(?:_BH)?(?P<gb>_GB)?_MT(?P<mt0>\d+)x"
                   r"(?P<mt1>\d+)x(?P<du>\d+)_")


@dataclass
class TensileKernel:
    name: str
    a_transposed: bool  # Alik: A stored K-contiguous
    b_transposed: bool  # Bjlk: B stored N-contiguous
    types: str
    general_batched: bool
    mt0: int
    mt1: int
    depth_u: int
    workgroup: tuple[int, int, int]
    wgm: int
    gsu: int
    stagger_u: int
    stagger_stride: int

    @property
    def in_bytes(self) -> int:
        return TYPES[self.types][0]

    @property
    def out_bytes(self) -> int:
        return TYPES[self.types][1]

    @property
    def compute(self) -> str:
        return TYPES[self.types][2]

    @property
    def transposes(self) -> str:
        return ("T" if self.a_transposed else "N") + ("T" if self.b_transposed else "N")


def _field(name: str, key: str, default: int | None = None) -> int:
    m = re.search(rf"_{key}(n?\d+)(?=_|$)", name)
    if m is None:
        if default is None:
            raise TensileError(f"the kernel name has no {key} field")
        return default
    text = m.group(1)
    return -int(text[1:]) if text.startswith("n") else int(text)


def parse_name(name: str) -> TensileKernel:
    """What the kernel's name says of its launch; TensileError when it is no Tensile GEMM name."""
    m = _NAME.match(name)
    if m is None:
        raise TensileError("the kernel name is not a Tensile GEMM name (Cijk_Ailk|Alik_Bljk|Bjlk_TYPES_..._MT"
                           "AxBxC_...)")
    types = m.group("types")
    if types not in TYPES:
        raise TensileError(f"data types {types} are not one --tensile knows ({', '.join(TYPES)})")
    wg = re.search(r"_WG(\d+)_(\d+)_(\d+)(?=_|$)", name)
    if wg is None:
        raise TensileError("the kernel name has no WG{x}_{y}_{z} field")
    return TensileKernel(name, m.group("a") == "lik", m.group("b") == "jlk", types, bool(m.group("gb")),
                         int(m.group("mt0")), int(m.group("mt1")), int(m.group("du")),
                         (int(wg.group(1)), int(wg.group(2)), int(wg.group(3))), abs(_field(name, "WGM", 1)),
                         _field(name, "GSU", 1), _field(name, "SU", 0), _field(name, "SUS", 0))


def parse_size(text: str) -> tuple[int, int, int, int]:
    parts = [p.strip() for p in text.split(",")]
    try:
        vals = [int(p, 0) for p in parts]
    except ValueError:
        raise TensileError(f"--tensile {text!r}: expected M,N,K[,B] positive integers") from None
    if len(vals) not in (3, 4) or min(vals) < 1:
        raise TensileError(f"--tensile {text!r}: expected M,N,K[,B] positive integers")
    if len(vals) == 3:
        vals.append(1)
    m, n, k, b = vals
    if max(m, n, k, b) >= 1 << 32:
        raise TensileError(f"--tensile {text!r}: Tensile passes sizes as 32-bit integers")
    return m, n, k, b


def _scalar(value: float, compute: str, size: int) -> bytes | int | float:
    if compute == "i32":
        return int(value)
    if compute == "f16":
        return struct.pack("<e", value).ljust(size, b"\0")
    return float(value)


def small_magic(x: int) -> int:
    return (1 << 31) // x + 1


def stagger_iter(tk: TensileKernel, k: int) -> int:
    su = tk.stagger_u
    if su <= 0:
        return 0
    unit = tk.depth_u * tk.in_bytes
    shift = max(0, math.ceil(math.log2(tk.stagger_stride / unit))) if tk.stagger_stride > unit else 0
    loops = k // tk.depth_u // max(1, tk.gsu)
    while su > 1 and loops < su * (1 << shift):
        su //= 2
    return su - 1 if su >= 1 else 0


@dataclass
class TensileLaunch:
    values: dict  # argument name -> value
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    work: Work
    kernel: TensileKernel


def launch(name: str, size: tuple[int, int, int, int], alpha: float = 1.0, beta: float = 0.0) -> TensileLaunch:
    tk = parse_name(name)
    m, n, k, b = size
    if tk.gsu != 1:
        raise TensileError(f"GSU{tk.gsu}: a split-K kernel needs its beta pre-pass and workspace, which --tensile "
                           "does not set up")
    a_rows, a_cols = (k, m) if tk.a_transposed else (m, k)  # column-major: leading dimension first
    b_rows, b_cols = (n, k) if tk.b_transposed else (k, n)
    tiles0, tiles1 = -(-m // tk.mt0), -(-n // tk.mt1)
    v: dict = {
        "sizeA": a_rows * a_cols * b, "sizeB": b_rows * b_cols * b, "sizeC": m * n * b, "sizeD": m * n * b,
        "OffsetA": 0, "OffsetB": 0, "OffsetC": 0, "OffsetD": 0,
        "alpha": _scalar(alpha, tk.compute, 4), "beta": _scalar(beta, tk.compute, 4),
        "strideA0": a_rows, "strideA1": a_rows * a_cols, "strideB0": b_rows, "strideB1": b_rows * b_cols,
        "strideC0": m, "strideC1": m * n, "strideD0": m, "strideD1": m * n,
        "SizesFree0": m, "SizesFree1": n, "SizesFree2": b, "SizesSum0": k,
        "OrigStaggerUIter": stagger_iter(tk, k),
        "NumWorkGroups0": tiles0, "NumWorkGroups1": tiles1, "padding": 0,
    }
    if tk.wgm > 1:
        rem = tiles1 % tk.wgm or tk.wgm
        v.update(NumFullBlocks=tiles1 // tk.wgm, WgmRemainder1=rem, MagicNumberWgmRemainder1=small_magic(rem))
    else:
        v.update(NumFullBlocks=tiles1, WgmRemainder1=1, MagicNumberWgmRemainder1=small_magic(1))
    for pos, t in enumerate("DCAB"):
        v[t] = (pos + 1) << 32
    flop = 2.0 * m * n * k * b
    nbytes = float((m * k + k * n) * tk.in_bytes * b + m * n * tk.out_bytes * b * (2 if beta else 1))
    dims = {"M": m, "N": n, "K": k, "batch": b, "transposes": tk.transposes, "types": tk.types}
    text = (f"D = alpha*{'A^T' if tk.a_transposed else 'A'}*{'B^T' if tk.b_transposed else 'B'} + beta*C "
            f"(Tensile {tk.types}{', batched by pointer arrays' if tk.general_batched else ''})")
    wx, wy, wz = tk.workgroup
    return TensileLaunch(v, (tiles0 * tk.gsu, tiles1, b), (wx * wy * wz, 1, 1), Work(flop, nbytes, k, text, dims), tk)
