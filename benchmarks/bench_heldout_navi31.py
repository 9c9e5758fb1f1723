"""``isalint estimate`` held to AMD's own measurements: rocBLAS 5.5.1's Tensile logic files for navi31.

    python benchmarks/bench_heldout_navi31.py [--logic DIR] [--library LIB.co] [--sample N] [--jobs 2]
                                             [--dataset-only] [--out FILE.md] [--points FILE.json]
                                             [--points-in FILE.json] [--fit] [--plot FILE.png]

**The data.** rocBLAS ships, for each GPU it is tuned for, Tensile *logic files*
(``library/src/blas3/Tensile/Logic/asm_full/navi31/*.yaml`` in its source). Each is one YAML list:
``[{MinimumRequiredVersion}, schedule ("navi31"), architecture ("gfx1100"), [device ids],
problem type, [solutions], index order, exact logic, null, null, performance metric]``. A solution is a
mapping of kernel parameters (``WorkGroup``, ``MacroTile0``, ``SolutionIndex``, ``SolutionNameMin``,
...). The exact logic is a list of ``[[I, J, K, L, LDD, LDC, LDA, LDB], [solution index, value]]``: the
sizes of the free indices I (M) and J (N), of the batch index K and of the summation index L (the GEMM's
K), then the leading dimensions of D, C, A and B (Tensile's ``SizeI/J/K/L, LDD/C/A/B`` order), and the
winning solution with its measured value. The navi31 files hold 512 sizes each (M in 64..6144, N and K
in 64..8192, batch 1) for FP16 (``HB``: half accumulate, ``HHS_BH``: float accumulate), BF16
(``BBS_BH``) and INT8 (``I8II_BH``), four transposes each, every one twice: strided batched and, with
``_GB``, general batched (``StridedBatched: false``), whose tables are copies of the strided ones. The
four ``SB`` (FP32) files hold one placeholder entry of value 0.

**What the value is.** The metric is named ``DeviceEfficiency``. In Tensile's library-logic step
(``Tensile/LibraryLogic.py``, rocm-5.5.1) the value written is the winner's GFLOP/s as the benchmark
client measured it (``DeviceEfficiency`` only selects whole-device GFLOP/s over GFLOP/s per CU). The
navi31 values lie between 0.04 and 86.4, impossible as GFLOP/s for these sizes: they went through
Tensile's ``tuning/automation/ConvertToEfficiency.py``, which replaces each value by
``100 * GFLOP/s / (SCLK_MHz / 1000 * ALU * CUs)`` rounded to three decimals, SCLK being the clock the
tuning "was done at" (given by hand to the script) and ALU the FLOPs per CU per clock of the data type
(from a hardware-specification file that is not published). So a value is a percentage of a peak at a
fixed clock, not of one measured during the run. The logic files do not record that clock. This
benchmark takes the 7900 XTX's 96 CUs, 512 FLOPs (or INT8 operations) per CU per clock for FP16, BF16
and INT8 WMMA (AMD's 122.8 TFLOP/s at 2,500 MHz) and, by default, the 2,500 MHz boost clock, which is
also the clock of isalint's own peak; ``--tuning-sclk`` changes it (at the 2,300 MHz game clock every
measured efficiency in isalint's units is 8 % lower).

**Kernels.** Every solution maps to one kernel of the same release's ``TensileLibrary_gfx1100.co``: the
kernel's name starts with the solution's problem name (``Cijk_Ailk_Bjlk_HHS_BH``, with ``_GB`` appended
when the problem is not strided batched) and holds every parameter token of ``SolutionNameMin``
(``MT64x64x16``, ``MI16x16x16x1``, ``GRVW8``, ``TT2_32``, ...) among its own; the kernel's metadata is
then checked against the solution (``.max_flat_workgroup_size`` = the product of ``WorkGroup``,
``.wavefront_size`` = ``WavefrontSize``).

**Predictions.** Each (kernel, size) point is given to ``isalint estimate LIB --kernel NAME --tensile
M,N,K,B --format json``; its ``efficiency`` (vs the part's peak for the data type) is compared with the
measured one in the same units. ``--sample N`` takes N points by systematic sampling over size class, file and size (each stratum
gets its share);
``--jobs`` runs that many estimates at once. ``--dataset-only`` stops after reading and mapping.

**The two fitted parameters.** ``launch_overhead_us`` and ``matrix_clock_fraction``
(``isalint/hw/timing.py``) were fitted to these points. ``--fit`` refits them on each data type and each
layout alone and reports the error on the others (cross-validation), the fit on all, and the error
before and after. A point's prediction under any values follows from its SIMD time and DRAM floor
(kept in the ``--points`` file), so ``--points-in`` rebuilds the report from a saved run without
estimating again.

The logic files are read where they are: ``--logic`` (the navi31 folder, or a rocBLAS source tree that
holds it), else ``$ISALINT_NAVI31_LOGIC``; the library as ``--library``, else
``$ISALINT_TENSILE_LIBRARY``, else the usual rocBLAS install folders. Nothing is copied. Without them
the benchmark says so and exits 0. A logic file that is not one: a one-line error naming the file and
line, exit 2.
"""
from __future__ import annotations

import argparse
import datetime
import glob
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

LOGIC_ENV = "ISALINT_NAVI31_LOGIC"
LOGIC_SUBDIR = "library/src/blas3/Tensile/Logic/asm_full/navi31"
DEFAULT_OUT = HERE / "results" / "heldout_navi31.md"

# The 7900 XTX as the efficiency conversion counts it (see the docstring).
CUS = 96
ALU = {"HB": 512, "HHS": 512, "BBS": 512, "I8II": 512, "SB": 256}  # FLOPs (ops) per CU per clock
BOOST_MHZ = 2500

SIZE_CLASSES = ("tiny", "small", "medium", "large")  # geometric mean of M, N, K: <=128, <=512, <=2048, more


class LogicError(ValueError):
    """A file that is not a Tensile logic file of the kind read here: ``path:line: what``."""


# --------------------------------------------------------------------------------------------------------
# Reading the logic files


@dataclass(frozen=True)
class Solution:
    index: int
    name_min: str
    work_group: tuple
    wavefront: int
    macro_tile: tuple  # (MacroTile0, MacroTile1, DepthU)
    global_split_u: int
    asserts: tuple  # (AssertFree0ElementMultiple, AssertFree1ElementMultiple, AssertSummationElementMultiple)


@dataclass(frozen=True)
class Point:
    file: str  # the logic file's name
    family: str  # HB, HHS, BBS, I8II, SB
    trans: str  # NN, NT, TN, TT (A then B)
    general_batched: bool  # the _GB files
    m: int
    n: int
    batch: int
    k: int
    ld: tuple  # (LDD, LDC, LDA, LDB)
    solution: int
    efficiency: float  # as written in the file (percent of the tuning's peak)

    @property
    def flops(self) -> int:
        return 2 * self.m * self.n * self.k * self.batch

    @property
    def size_class(self) -> str:
        g = (self.m * self.n * self.k) ** (1 / 3)
        return SIZE_CLASSES[0 if g <= 128 else 1 if g <= 512 else 2 if g <= 2048 else 3]

    @property
    def group(self) -> str:
        """The measurement's family and transposes: the _GB twin shares it."""
        return f"{self.family} {self.trans}"


def stride_items(p: Point) -> list[str]:
    """``--arg`` items that give the kernel the leading dimensions the point was measured with (the logic
    file's LDD, LDC, LDA, LDB; ``--tensile`` alone assumes packed matrices), batch strides and tensor sizes
    to match."""
    ldd, ldc, lda, ldb = p.ld
    a_cols = p.m if p.trans[0] == "T" else p.k  # A stored K x M (Alik) or M x K (Ailk)
    b_cols = p.k if p.trans[1] == "T" else p.n  # B stored N x K (Bjlk) or K x N (Bljk)
    items = []
    for t, ld, cols in (("D", ldd, p.n), ("C", ldc, p.n), ("A", lda, a_cols), ("B", ldb, b_cols)):
        items += [f"stride{t}0={ld}", f"stride{t}1={ld * cols}"]
        if t != "D":
            items.append(f"size{t}={ld * cols * p.batch}")
    return items


@dataclass
class Logic:
    path: str
    schedule: str
    architecture: str
    devices: list
    problem_type: dict
    solutions: list  # of Solution, in file order
    index_order: list
    metric: str
    points: list = field(default_factory=list)  # of Point

    @property
    def name(self) -> str:
        return os.path.basename(self.path)

    @property
    def problem(self) -> str:
        """The problem's name as the kernels carry it: ``Cijk_Ailk_Bjlk_HHS_BH`` (+ ``_GB``)."""
        base = self.solutions[0].name_min.partition("_MT")[0] if self.solutions else ""
        return base + ("" if self.problem_type.get("StridedBatched", True) else "_GB")

    @property
    def family(self) -> str:
        parts = self.problem.split("_")
        return parts[3] if len(parts) > 3 else "?"

    @property
    def trans(self) -> str:
        pt = self.problem_type
        return ("T" if pt.get("TransposeA") else "N") + ("T" if pt.get("TransposeB") else "N")


def _line_of(path: str, where: tuple) -> int:
    """The line (1-based) of the YAML node at index path ``where`` (the slow path, errors only)."""
    import yaml

    try:
        with open(path, encoding="utf-8") as fh:
            node = yaml.compose(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        line = node.start_mark.line
        for step in where:
            if isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
                node = node.value[step]
            elif isinstance(node, yaml.MappingNode):
                node = next((v for k, v in node.value if k.value == step), node)
            else:
                break
            line = node.start_mark.line
        return line + 1
    except Exception:  # the error is reported at line 1 rather than not at all
        return 1


def read_logic(path: str) -> Logic:
    """One navi31 logic file. Raises LogicError (``path:line: what``) on a file of another shape."""
    import yaml

    def fail(what: str, where: tuple = ()) -> LogicError:
        return LogicError(f"{path}:{_line_of(path, where)}: {what}")

    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise LogicError(f"{path}:{line}: not YAML: {getattr(e, 'problem', None) or e}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise LogicError(f"{path}:1: cannot be read: {e}") from None
    if not isinstance(data, list) or len(data) < 9:
        raise fail("not a Tensile logic file (a list of at least 9 items: version, schedule, architecture, "
                   "devices, problem type, solutions, index order, exact logic, range logic)")
    if not isinstance(data[0], dict) or "MinimumRequiredVersion" not in data[0]:
        raise fail("item 1 is not {MinimumRequiredVersion: ...}", (0,))
    if not isinstance(data[4], dict) or "OperationType" not in data[4]:
        raise fail("item 5 is not a problem type (no OperationType)", (4,))
    if data[4]["OperationType"] != "GEMM":
        raise fail(f"problem type {data[4]['OperationType']!r}: only GEMM is read", (4,))
    if not isinstance(data[5], list):
        raise fail("item 6 is not the list of solutions", (5,))
    solutions = []
    for i, s in enumerate(data[5]):
        try:
            solutions.append(Solution(
                index=int(s["SolutionIndex"]), name_min=str(s["SolutionNameMin"]),
                work_group=tuple(int(x) for x in s["WorkGroup"]), wavefront=int(s["WavefrontSize"]),
                macro_tile=(int(s["MacroTile0"]), int(s["MacroTile1"]), int(s["DepthU"])),
                global_split_u=int(s["GlobalSplitU"]),
                asserts=(int(s.get("AssertFree0ElementMultiple", 1)), int(s.get("AssertFree1ElementMultiple", 1)),
                         int(s.get("AssertSummationElementMultiple", 1)))))
        except (KeyError, TypeError, ValueError) as e:
            raise fail(f"solution {i}: {type(e).__name__} {e}", (5, i)) from None
    if [s.index for s in solutions] != list(range(len(solutions))):
        raise fail("the solutions' SolutionIndex values are not 0, 1, 2, ... in order", (5,))
    metric = data[10] if len(data) > 10 and data[10] else "DeviceEfficiency"
    logic = Logic(path=path, schedule=str(data[1]), architecture=str(data[2]), devices=list(data[3] or []),
                  problem_type=data[4], solutions=solutions, index_order=list(data[6] or []), metric=str(metric))
    table = data[7]
    if not isinstance(table, list):
        raise fail("item 8 is not the exact logic (a list of [sizes, [solution, value]])", (7,))
    family, trans, gb = logic.family, logic.trans, not data[4].get("StridedBatched", True)
    for i, entry in enumerate(table):
        try:
            sizes, (sol, value) = entry
            sizes = [int(x) for x in sizes]
            sol, value = int(sol), float(value)
        except (TypeError, ValueError):
            raise fail(f"exact-logic entry {i} is not [[I, J, K, L, LDD, LDC, LDA, LDB], [solution, value]]",
                       (7, i)) from None
        if len(sizes) != 8:
            raise fail(f"exact-logic entry {i} has {len(sizes)} sizes, not I, J, K, L and LDD, LDC, LDA, LDB",
                       (7, i))
        if not 0 <= sol < len(solutions):
            raise fail(f"exact-logic entry {i} names solution {sol}, past the {len(solutions)} listed", (7, i))
        m, n, b, k = sizes[:4]
        logic.points.append(Point(file=logic.name, family=family, trans=trans, general_batched=gb, m=m, n=n,
                                  batch=b, k=k, ld=tuple(sizes[4:]), solution=sol, efficiency=value))
    return logic


def logic_files(where: str) -> list[str]:
    """The navi31 logic files under ``where``: that folder, or a rocBLAS source tree that holds it."""
    for folder in (where, os.path.join(where, LOGIC_SUBDIR)):
        found = sorted(glob.glob(os.path.join(folder, "navi31_*.yaml")))
        if found:
            return found
    return []


def find_logic(given: str | None) -> str | None:
    where = given or os.environ.get(LOGIC_ENV)
    return where if where and os.path.isdir(where) and logic_files(where) else None


# --------------------------------------------------------------------------------------------------------
# Solutions to kernels


def name_tokens(name: str) -> tuple[str, list[str]]:
    """(problem, parameter tokens) of a Tensile kernel or solution name. A token is a parameter's
    abbreviation and value (``GRVW8``); list values continue over ``_`` (``TT2_32``, ``WG32_4_1``),
    so a piece that starts with a digit belongs to the token before it, except ``1LDSB`` (1LDSBuffer)."""
    problem, _, rest = name.partition("_MT")
    tokens: list[str] = []
    for piece in ("MT" + rest).split("_") if rest or name.endswith("_MT") else []:
        if not piece:
            continue
        if piece[0].isdigit() and not piece.startswith("1LDSB") and tokens:
            tokens[-1] += "_" + piece
        else:
            tokens.append(piece)
    return problem, tokens


@dataclass
class Mapping:
    kernel: dict  # solution index -> kernel name
    missing: dict  # solution index -> why it has no kernel
    checked: int  # kernels whose metadata agreed with the solution


def map_solutions(logic: Logic, kernels: dict) -> Mapping:
    """The kernel of each solution; ``kernels``: name -> its metadata entry (or None)."""
    by_problem: dict[str, list] = defaultdict(list)
    for name in kernels:
        problem, tokens = name_tokens(name)
        by_problem[problem].append((name, frozenset(tokens)))
    out = Mapping({}, {}, 0)
    for s in logic.solutions:
        problem, tokens = name_tokens(s.name_min)
        if logic.problem != problem + ("" if logic.problem_type.get("StridedBatched", True) else "_GB"):
            out.missing[s.index] = f"its name's problem {problem} is not the file's {logic.problem}"
            continue
        want = set(tokens)
        found = [name for name, have in by_problem.get(logic.problem, ()) if want <= have]
        if not found:
            out.missing[s.index] = f"no kernel {logic.problem}_... holds all of {s.name_min}'s tokens"
            continue
        if len(found) > 1:
            out.missing[s.index] = f"{len(found)} kernels hold all of {s.name_min}'s tokens"
            continue
        meta = kernels[found[0]]
        if meta:
            flat = meta.get(".max_flat_workgroup_size")
            wave = meta.get(".wavefront_size")
            if flat is not None and flat != math.prod(s.work_group):
                out.missing[s.index] = f"{found[0]}: .max_flat_workgroup_size {flat} != WorkGroup {s.work_group}"
                continue
            if wave is not None and wave != s.wavefront:
                out.missing[s.index] = f"{found[0]}: .wavefront_size {wave} != WavefrontSize {s.wavefront}"
                continue
            out.checked += 1
        out.kernel[s.index] = found[0]
    return out


def library_kernels(library: str) -> dict:
    """Kernel name -> its metadata entry, for every kernel of the code object."""
    from isalint.binary import codeobject
    from isalint.parse.reading import map_file

    kernels, _ = codeobject.read(map_file(library), library)
    out = {}
    for k in kernels:
        entry, _, _ = k.metadata()
        out[k.name] = entry
    return out


# --------------------------------------------------------------------------------------------------------
# The measured side


def measured_tflops(p: Point, sclk_mhz: float) -> float:
    """The GFLOP/s the efficiency stands for, in TFLOP/s, at the tuning clock ``sclk_mhz``."""
    return p.efficiency / 100 * sclk_mhz / 1000 * ALU[p.family] * CUS / 1000


def measured_us(p: Point, sclk_mhz: float) -> float | None:
    t = measured_tflops(p, sclk_mhz)
    return p.flops / (t * 1e12) * 1e6 if t > 0 else None


def sample(points: list, n: int) -> list:
    """``n`` points by systematic sampling of the points ordered by size class, then file, then size
    (each file's sizes rotated by an offset of its own, so that a file and its _GB twin do not give the
    same sizes): every stratum (size class, file) gets its share of the points, and its sizes are spread."""
    import zlib

    if n <= 0 or n >= len(points):
        return list(points)
    strata: dict[tuple, list] = defaultdict(list)
    for p in points:
        strata[(SIZE_CLASSES.index(p.size_class), p.file)].append(p)
    ordered = []
    for key in sorted(strata):
        pts = strata[key]
        shift = zlib.crc32(key[1].encode()) % len(pts)
        ordered += pts[shift:] + pts[:shift]
    return [ordered[int((j + 0.5) * len(ordered) / n)] for j in range(n)]


# --------------------------------------------------------------------------------------------------------
# The predicted side


def isalint_command() -> list[str]:
    exe = shutil.which("isalint", path=os.path.dirname(sys.executable)) or shutil.which("isalint")
    return [exe] if exe else [sys.executable, "-m", "isalint"]


def estimate_interface() -> str | None:
    """None when ``isalint estimate`` takes ``--tensile``, else why the points cannot be estimated."""
    p = subprocess.run(isalint_command() + ["estimate", "--help"], capture_output=True, text=True)
    if p.returncode != 0:
        return f"`isalint estimate --help` failed: {(p.stderr or p.stdout).strip().splitlines()[-1:]}"
    if "--tensile" not in p.stdout:
        return "`isalint estimate` has no --tensile option (a code object's kernel cannot be given its sizes)"
    return None


@dataclass
class Outcome:
    point: Point
    kernel: str
    efficiency: float | None = None  # predicted, percent of isalint's peak
    us: float | None = None  # predicted time
    refused: str | None = None  # isalint's one-line reason
    seconds: float = 0.0
    limit: str = ""  # what the prediction is bound by: "dram", or the largest share of the SIMD's cycles
    compute_us: float | None = None  # the SIMD time at the boost clock, without the two fitted parameters
    dram_us: float | None = None  # the DRAM floor


# --------------------------------------------------------------------------------------------------------
# The two fitted parameters (isalint/hw/timing.py: launch_overhead_us, matrix_clock_fraction)


def raw_us(o: Outcome) -> float:
    """The prediction without the fitted parameters: the longer of the SIMD time and the DRAM floor."""
    return max(o.compute_us, o.dram_us or 0.0)


def with_parameters(outcomes: list, fraction: float, overhead_us: float) -> list:
    """The outcomes as the model gives them with ``matrix_clock_fraction`` = ``fraction`` and
    ``launch_overhead_us`` = ``overhead_us`` (every kernel here computes with WMMA): the SIMD time runs at
    the lower clock, the DRAM floor does not, and the overhead is added once; the efficiency follows the
    time (same FLOPs, same peak: efficiency x time is the point's constant)."""
    out = []
    for o in outcomes:
        if o.efficiency is None or o.compute_us is None:
            out.append(o)
            continue
        compute = o.compute_us / fraction
        us = max(compute, o.dram_us or 0.0) + overhead_us
        limit = "dram" if (o.dram_us or 0.0) >= compute else (o.limit if o.limit != "dram" else "")
        out.append(Outcome(o.point, o.kernel, o.efficiency * o.us / us, us, None, o.seconds, limit,
                           o.compute_us, o.dram_us))
    return out


def fit_loss(outcomes: list, sclk: float, fraction: float, overhead_us: float) -> float:
    """Mean absolute log ratio of predicted to measured time: relative, so that neither the launch-bound
    points nor the large ones outweigh the rest."""
    total = 0.0
    for o in outcomes:
        us = max(o.compute_us / fraction, o.dram_us or 0.0) + overhead_us
        total += abs(math.log(us / measured_us(o.point, sclk)))
    return total / len(outcomes)


def fit(outcomes: list, sclk: float) -> tuple:
    """(matrix_clock_fraction, launch_overhead_us) of least :func:`fit_loss` on ``outcomes``: a grid over
    0.40-1.00 and 0-20 us, then a finer one around its best."""
    done = [o for o in outcomes if o.efficiency is not None and o.compute_us is not None]

    def best(fractions, overheads):
        return min(((fit_loss(done, sclk, f, u), f, u) for f in fractions for u in overheads))[1:]

    f, u = best([0.40 + 0.02 * i for i in range(31)], [0.5 * i for i in range(41)])
    return best([f + 0.0025 * i for i in range(-8, 9) if 0 < f + 0.0025 * i <= 1],
                [u + 0.05 * i for i in range(-10, 11) if u + 0.05 * i >= 0])


def _errors(os_: list, sclk: float) -> dict:
    scale = sclk / BOOST_MHZ
    err = [abs(o.efficiency - o.point.efficiency * scale) for o in os_]
    rel = [abs(o.efficiency / (o.point.efficiency * scale) - 1) for o in os_]
    return {"n": len(os_), "median": statistics.median(err), "p90": percentile(err, 0.9),
            "rel": statistics.median(rel), "rel90": percentile(rel, 0.9),
            "within": sum(1 for r in rel if r <= 0.15) / len(rel)}


def fit_section(outcomes: list, sclk: float, adopted: tuple) -> list[str]:
    """Cross-validation: the two parameters fitted on one data type (or one layout), the error on the others."""
    done = [o for o in outcomes if o.efficiency is not None and o.compute_us is not None]
    lines = ["## The two fitted parameters and their cross-validation", "",
             "The model has two parameters fitted to these measurements (`isalint/hw/timing.py`, kind "
             "`calibrated`): `launch_overhead_us`, added once to every launch's predicted time, and "
             "`matrix_clock_fraction`, the share of the 2,500 MHz clock at which a WMMA kernel's SIMD cycles run "
             "(the DRAM floor and the peak do not move). Predicted time = max(SIMD cycles / (2,500 MHz x "
             "fraction), DRAM floor) + overhead, so each point's prediction under any values follows from its "
             "SIMD time and DRAM floor without a new estimate. A fit minimises the mean absolute log ratio of "
             "predicted to measured time (a relative error, so neither the launch-bound points nor the large ones "
             "dominate), over a grid (fraction 0.40-1.00, overhead 0-20 us, then refined).", "",
             "Each row fits on one group and reports the error on all the others (held out); the `_GB` files "
             "repeat their strided twin's measurements, so a split by data type or layout keeps a measurement and "
             "its twin on the same side.", "",
             "| fitted on | points | matrix_clock_fraction | launch_overhead_us | held out | held-out median abs. "
             "error (pts) | p90 (pts) | median rel. error % | p90 rel. error % | within 15 % | worst held-out group "
             "median / p90 (pts) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    splits = [("data type", lambda o: o.point.family), ("layout", lambda o: o.point.trans)]
    for what, key in splits:
        for g in sorted({key(o) for o in done}):
            train = [o for o in done if key(o) == g]
            test = [o for o in done if key(o) != g]
            f, u = fit(train, sclk)
            held = with_parameters(test, f, u)
            e = _errors(held, sclk)
            per = {h: _errors([o for o in held if key(o) == h], sclk) for h in sorted({key(o) for o in test})}
            worst = max(per, key=lambda h: per[h]["p90"])
            lines.append(f"| {what} {g} | {len(train)} | {f:.3f} | {u:.2f} | {e['n']} | {e['median']:.1f} | "
                         f"{e['p90']:.1f} | {100 * e['rel']:.1f} | {100 * e['rel90']:.1f} | "
                         f"{100 * e['within']:.0f} | {worst}: {per[worst]['median']:.1f} / {per[worst]['p90']:.1f} |")
    f, u = fit(done, sclk)
    e = _errors(with_parameters(done, f, u), sclk)
    lines.append(f"| all (in-sample) | {len(done)} | {f:.3f} | {u:.2f} | - | {e['median']:.1f} | {e['p90']:.1f} | "
                 f"{100 * e['rel']:.1f} | {100 * e['rel90']:.1f} | {100 * e['within']:.0f} | - |")
    lines += ["", f"Adopted in `isalint/hw/timing.py`: `matrix_clock_fraction` = {adopted[0]:g} "
              f"({adopted[0] * BOOST_MHZ:,.0f} MHz), `launch_overhead_us` = {adopted[1]:g} (the fit on all points, "
              "rounded). FP32 (VALU) kernels keep the full clock: the worklog's measured FP32 times fit it "
              "(`benchmarks/bench_estimate.py`); the overhead adds 0.3 % or less to those (2.8 ms and longer)."]
    before = with_parameters(done, 1.0, 0.0)
    after = with_parameters(done, *adopted)
    lines += ["", "Before (no overhead, full clock) and after (adopted values), by data type:", "",
              "| group | points | median abs. error before / after (pts) | p90 before / after (pts) | "
              "median rel. error before / after % | within 15 % before / after |", "| --- | --- | --- | --- | --- | --- |"]
    for g in ["all"] + sorted({o.point.family for o in done}):
        b = _errors([o for o in before if g == "all" or o.point.family == g], sclk)
        a = _errors([o for o in after if g == "all" or o.point.family == g], sclk)
        lines.append(f"| {g} | {a['n']} | {b['median']:.1f} / {a['median']:.1f} | {b['p90']:.1f} / {a['p90']:.1f} | "
                     f"{100 * b['rel']:.1f} / {100 * a['rel']:.1f} | {100 * b['within']:.0f} / {100 * a['within']:.0f} |")
    return lines


def _limit(cycles_ms: float, dram_ms: float, shares: dict) -> str:
    if dram_ms >= cycles_ms:
        return "dram"
    if not shares:
        return ""
    top = max(shares, key=shares.get)
    return f"{top} {100 * shares[top]:.0f} %"


def estimate_cli(library: str, kernel: str, p: Point, packed: bool = False) -> Outcome:
    """One point through the command line (one process per point: the reference path)."""
    cmd = isalint_command() + ["estimate", library, "--kernel", kernel, "--tensile",
                               f"{p.m},{p.n},{p.k},{p.batch}", "--format", "json"]
    for item in ([] if packed else stride_items(p)):
        cmd += ["--arg", item]
    start = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    out = Outcome(p, kernel, seconds=time.perf_counter() - start)
    if r.returncode != 0:
        lines = [x for x in r.stderr.strip().splitlines() if x.strip()]
        out.refused = _reason(lines[-1] if lines else f"exit {r.returncode}", library, kernel)
        return out
    try:
        doc = json.loads(r.stdout)
        out.efficiency = 100 * float(doc["efficiency"])  # JSON: a fraction of the peak
        out.us = 1000 * float(doc["predicted_ms"])
        shares = {c: v["share"] for c, v in doc.get("breakdown", {}).items()}
        dram = float(doc.get("dram_bound_ms") or 0)
        out.limit = _limit(0.0 if dram >= out.us / 1000 else out.us / 1000, dram, shares)
        out.compute_us = float(doc["cycles_per_simd"]) / float(doc["parameters"]["clock_hz"]["value"]) * 1e6
        out.dram_us = dram * 1000
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        out.refused = f"unreadable JSON output ({type(exc).__name__}: {exc})"
    return out


def _reason(message: str, library: str, kernel: str) -> str:
    """isalint's one-line refusal without the file and kernel it names."""
    for prefix in ("isalint: ", f"{library}: ", f"{library}:{kernel}: ", f"kernel {kernel}: "):
        if message.startswith(prefix):
            message = message[len(prefix):]
    return message.replace(f"{library}:{kernel}: ", "").replace(kernel, "KERNEL")[:400]


_WORKER: dict = {}


def _worker_init(library: str, gpu: str) -> None:
    """Each worker reads the code object once (the kernels' images; a listing is made per kernel)."""
    from isalint.binary import codeobject
    from isalint.hw.timing import for_gpu
    from isalint.parse.reading import map_file

    kernels, _ = codeobject.read(map_file(library), library)
    _WORKER.update(library=library, images={k.name: k for k in kernels}, timing=for_gpu(gpu), cache=(None, None))


def _analysis(name: str):
    from isalint.analysis import Analysis
    from isalint.binary import listing
    from isalint.parse.source import parse_text

    cached_name, cached = _WORKER["cache"]
    if cached_name == name:
        return cached
    k = _WORKER["images"][name]
    analysis = Analysis.from_source(parse_text(listing.render(k), k.display), {"target": k.target})
    _WORKER["cache"] = (name, analysis)
    return analysis


def estimate_here(kernel: str, p: Point, packed: bool = False) -> Outcome:
    """One point in this process, through the steps of ``isalint estimate --tensile`` (bound_launch,
    estimate, the peak check), the kernel's analysis kept for the next point of the same kernel."""
    from isalint.commands.bound_launch import bound_launch
    from isalint.commands.estimate import peak_problem
    from isalint.estimate import EstimateError, estimate
    from isalint.estimate.tensile import TensileError
    from isalint.model.bindings import BindingError
    from isalint.model.launch import Launch
    from isalint.validate.expect import ExpectError

    start = time.perf_counter()
    out = Outcome(p, kernel)
    library = _WORKER["library"]
    try:
        analysis = _analysis(kernel)
        program = analysis.program
        k = program.kernels[0]
        items = () if packed else stride_items(p)
        bl = bound_launch(library, k, items, None, None, None, f"{p.m},{p.n},{p.k},{p.batch}")
        values = dict(bl.values)
        for i, name in enumerate(bl.bindings.matrices):  # placeholder addresses, as the command sets them
            values[name] = (i + 1) << 32
        g = bl.grid
        launch = Launch(bl.grid, bl.block, values, group=(g[0] // 2, g[1] // 2, g[2] // 2))
        est = estimate(program, bl.work.k, bl.grid, bl.block, _WORKER["timing"], k, launch=launch,
                       abi="arguments", work=bl.work)
        problem = peak_problem(est)
        if problem:
            out.refused = problem
        else:
            out.efficiency = 100 * est.efficiency
            out.us = 1000 * est.predicted_ms
            total = sum(est.causes.values()) or 1.0
            out.limit = _limit(est.compute_ms, est.dram_ms, {c: v / total for c, v in est.causes.items()})
            out.compute_us = est.cycles / est.timing.clock_hz * 1e6
            out.dram_us = est.dram_ms * 1e3
    except (BindingError, TensileError, ExpectError) as exc:
        out.refused = _reason(str(exc), library, kernel)
    except EstimateError as exc:
        out.refused = "cannot be estimated: " + _reason(str(exc), library, kernel)
    except (ArithmeticError, ValueError, KeyError, IndexError, TypeError, RecursionError) as exc:
        out.refused = f"cannot be estimated: the model failed on it ({type(exc).__name__}: {exc})"[:400]
    out.seconds = time.perf_counter() - start
    return out


def _estimate_chunk(chunk: list, packed: bool) -> list:
    return [estimate_here(kernel, p, packed) for kernel, p in chunk]


def estimate_all(library: str, asked: list, jobs: int, via: str = "api", gpu: str = "7900xtx",
                 progress=None, packed: bool = False) -> list:
    """Outcomes of ``asked`` ((kernel, point) pairs) in their order: in ``jobs`` worker processes that each
    read the library once (``via="api"``) or one ``isalint estimate`` process per point (``via="cli"``)."""
    if via == "cli":
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            return list(pool.map(lambda kp: estimate_cli(library, kp[0], kp[1], packed), asked))
    from concurrent.futures import ProcessPoolExecutor

    order = sorted(range(len(asked)), key=lambda i: asked[i][0])  # a kernel's points together
    chunks = [order[i:i + 16] for i in range(0, len(order), 16)]
    results: list = [None] * len(asked)
    done = 0
    with ProcessPoolExecutor(max_workers=max(1, jobs), initializer=_worker_init, initargs=(library, gpu)) as pool:
        futures = {pool.submit(_estimate_chunk, [asked[i] for i in c], packed): c for c in chunks}
        from concurrent.futures import as_completed

        for f in as_completed(futures):
            for i, o in zip(futures[f], f.result()):
                results[i] = o
            done += len(futures[f])
            if progress:
                progress(done, len(asked))
    return results


# --------------------------------------------------------------------------------------------------------
# Statistics


def percentile(xs: list, q: float) -> float:
    xs = sorted(xs)
    if not xs:
        return float("nan")
    pos = (len(xs) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def pearson(xs: list, ys: list) -> float:
    if len(xs) < 3:
        return float("nan")
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sx = math.sqrt(sum((x - mx) ** 2 for x in xs))
    sy = math.sqrt(sum((y - my) ** 2 for y in ys))
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / (sx * sy) if sx and sy else float("nan")


def ranks(xs: list) -> list:
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for t in range(i, j + 1):
            r[order[t]] = (i + j) / 2
        i = j + 1
    return r


def spearman(xs: list, ys: list) -> float:
    return pearson(ranks(xs), ranks(ys))


# --------------------------------------------------------------------------------------------------------
# The report


def _fmt(x, spec=".1f") -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def dataset_section(logics: list, mappings: dict, library: str | None, sclk: float) -> list[str]:
    pts = [p for lg in logics for p in lg.points]
    real = [p for p in pts if p.efficiency > 0]
    placeholders = len(pts) - len(real)
    by_key = {(p.family, p.trans, p.general_batched, p.m, p.n, p.batch, p.k): p for p in real}
    gb = [p for p in real if p.general_batched]
    twins = sum(1 for p in gb if (q := by_key.get((p.family, p.trans, False, p.m, p.n, p.batch, p.k)))
                and q.efficiency == p.efficiency)
    sols = sum(len(lg.solutions) for lg in logics)
    mapped = sum(len(m.kernel) for m in mappings.values())
    checked = sum(m.checked for m in mappings.values())
    points_mapped = sum(1 for lg in logics for p in lg.points
                        if p.efficiency > 0 and p.solution in mappings.get(lg.name, Mapping({}, {}, 0)).kernel)
    lines = [
        "## The dataset",
        "",
        f"{len(logics)} logic files, {len(pts):,} exact-logic entries: {len(real):,} measured points and "
        f"{placeholders} placeholder{'s' if placeholders != 1 else ''} of value 0 (the FP32 `SB` files). "
        f"{len(gb):,} points belong to the general-batched `_GB` files, and {twins:,} of them repeat the value "
        f"of their strided twin (same family, transposes and size): **{len(real) - twins:,} independent "
        f"measurements**, each estimated twice (the two kernels differ in how they find a batch's matrices).",
        "",
        f"Solutions: {sols:,}; mapped to a kernel of the library: **{mapped:,}** "
        f"({100 * mapped / sols:.1f} %)" + (f", the metadata of {checked:,} checked (work-group size, wave size)"
                                           if library else " (no library given)") +
        f"; measured points whose winner has a kernel: {points_mapped:,} of {len(real):,}.",
        "",
        "| file | solutions | mapped | points | efficiency min / median / max | "
        f"implied time at {sclk:,.0f} MHz, min / max |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for lg in logics:
        effs = [p.efficiency for p in lg.points if p.efficiency > 0]
        us = [measured_us(p, sclk) for p in lg.points if p.efficiency > 0]
        m = mappings.get(lg.name)
        lines.append(
            f"| {lg.name} | {len(lg.solutions)} | {len(m.kernel) if m else '-'} | {len(effs)} "
            + (f"| {min(effs):.3f} / {statistics.median(effs):.1f} / {max(effs):.1f} "
               f"| {min(us):,.1f} us / {max(us):,.0f} us |" if effs else "| - | - |"))
    missing = [(lg.name, i, why) for lg in logics for i, why in mappings.get(lg.name, Mapping({}, {}, 0)).missing.items()]
    if missing:
        lines += ["", "Solutions without a kernel:", ""]
        lines += [f"- {f} solution {i}: {why}" for f, i, why in missing[:30]]
        if len(missing) > 30:
            lines.append(f"- ... and {len(missing) - 30} more")
    by_family = defaultdict(list)
    for p in real:
        if not p.general_batched:
            by_family[p.family].append(p)
    lines += ["", "Measured efficiency of the strided-batched points by family and size class "
              "(median, percent of the tuning peak):", "",
              "| family | points | " + " | ".join(SIZE_CLASSES) + " | best |",
              "| --- | --- | " + " | ".join("---" for _ in SIZE_CLASSES) + " | --- |"]
    for fam in sorted(by_family):
        ps = by_family[fam]
        cells = []
        for c in SIZE_CLASSES:
            e = [p.efficiency for p in ps if p.size_class == c]
            cells.append(f"{statistics.median(e):.1f} ({len(e)})" if e else "-")
        lines.append(f"| {fam} | {len(ps)} | " + " | ".join(cells) + f" | {max(p.efficiency for p in ps):.1f} |")
    tiny = min(real, key=lambda p: p.flops) if real else None
    if tiny:
        lines += ["", f"The smallest problem, {tiny.m}x{tiny.n}x{tiny.k} ({tiny.flops:,} FLOPs), measured "
                  f"{tiny.efficiency:.3f} % ({tiny.file}): {measured_us(tiny, sclk):.1f} us at the assumed peak, "
                  "a launch-bound time; the values are rounded to 3 decimals, so the smallest carry up to "
                  "1.3 % of rounding."]
    return lines


def facts_section(sclk: float, logics: list) -> list[str]:
    peak = sclk / 1000 * 512 * CUS / 1000
    real = [p for lg in logics for p in lg.points if p.efficiency > 0]
    big = max(real, key=lambda p: p.flops, default=None)
    lo, hi = min((p.efficiency for p in real), default=0), max((p.efficiency for p in real), default=0)
    as_gflops = (f" ({big.m}x{big.n}x{big.k} at {big.efficiency:g} GFLOP/s would take {big.flops / big.efficiency / 1e9:.0f} s"
                 ", where the smallest sizes take microseconds)" if big else "")
    return [
        "## What the measured number is",
        "",
        "- The logic file's last item names the metric `DeviceEfficiency`. Tensile's library-logic step "
        "(`Tensile/LibraryLogic.py` at rocm-5.5.1) writes, for each exact size, the winner's GFLOP/s read from the "
        "benchmark client's CSV (unit column `GFlops`; `DeviceEfficiency` vs `CUEfficiency` only selects "
        "whole-device GFLOP/s vs GFLOP/s per CU).",
        f"- The navi31 values run from {lo:g} to {hi:g}, impossible as GFLOP/s{as_gflops}. "
        "Tensile's `tuning/automation/ConvertToEfficiency.py` rewrites each value as "
        "`round(100 * GFLOP/s / (SCLK/1000 * ALU * CUs), 3)` with SCLK (MHz) given by hand as the clock the "
        "tuning was done at and ALU (FLOPs per CU per clock per data type) and CUs from a hardware-specification "
        "file. Other rocBLAS 5.5.1 logic files show both forms (navi21 SGEMM values up to 21,062, i.e. GFLOP/s; "
        "aldebaran DGEMM up to 99.8, i.e. percent).",
        "- So the value is a percentage of a *nominal* peak at a fixed clock, not of a peak at the clock measured "
        "during the run. The clock and ALU figures used for navi31 are not recorded in the files or published; "
        f"this report takes 96 CUs x 512 FLOPs per CU per clock (FP16, BF16, INT8 WMMA) x {sclk:,.0f} MHz = "
        f"{peak:.1f} TFLOP/s, "
        + ("AMD's figure at the boost clock, the same peak isalint's `efficiency` divides by. "
           if sclk == BOOST_MHZ else f"(isalint's own peak is at {BOOST_MHZ} MHz; measured values are rescaled). ")
        + "At the 2,300 MHz game clock every measured value would read 8 % lower in isalint's units.",
        "- FLOPs of a point: 2 x M x N x K x batch (I, J, L and K of the size list).",
    ]


def worst_reason(o: Outcome, sclk: float, floor: float) -> str:
    """Why a point is far off, as far as the numbers say."""
    meas = measured_us(o.point, sclk)
    tiles = re.search(r"_MT(\d+)x(\d+)x", o.kernel)
    groups = None
    if tiles:
        groups = -(-o.point.m // int(tiles.group(1))) * -(-o.point.n // int(tiles.group(2))) * o.point.batch
    if o.us < meas:
        why = f"optimistic: measured {meas / o.us:.1f}x the predicted time"
        if groups is not None and groups <= 2 * CUS:
            why += f"; {groups} workgroups for {CUS} CUs (the model's one-round time is its fastest)"
        elif o.limit.startswith("valu") or o.limit.startswith("dram"):
            why += "; predicted near the bound it names, not reached"
        return why
    return f"pessimistic: predicted {o.us / meas:.1f}x the measured time ({o.limit or 'no single cause'})"


def accuracy_section(outcomes: list, sclk: float, floor: float) -> list[str]:
    """``floor``: the shortest measured time of the whole dataset (us)."""
    scale = sclk / BOOST_MHZ
    done = [o for o in outcomes if o.efficiency is not None]
    refused = [o for o in outcomes if o.refused]
    lines = ["## Predicted vs measured", ""]
    lines.append(f"{len(outcomes):,} points asked, {len(done):,} estimated, {len(refused):,} refused.")
    if refused:
        why = Counter(re.sub(r"\d[\d,.]*", "N", o.refused.split(": ", 2)[-1])[:160] for o in refused)
        lines += ["", "| refusals | reason (numbers as N) |", "| --- | --- |"]
        lines += [f"| {c:,} | {r} |" for r, c in why.most_common(12)]
    if not done:
        return lines

    def row(label: str, os_: list) -> str:
        meas = [o.point.efficiency * scale for o in os_]
        pred = [o.efficiency for o in os_]
        err = [abs(p - m) for p, m in zip(pred, meas)]
        rel = [abs(p / m - 1) for p, m in zip(pred, meas) if m > 0]
        bias = [p / m for p, m in zip(pred, meas) if m > 0]
        within = sum(1 for r in rel if r <= 0.15) / len(rel) if rel else float("nan")
        return (f"| {label} | {len(os_)} | {_fmt(statistics.median(err))} | {_fmt(percentile(err, 0.9))} | "
                f"{_fmt(100 * statistics.median(rel))} | {_fmt(100 * percentile(rel, 0.9))} | {_fmt(100 * within, '.0f')} | "
                f"{_fmt(statistics.median(bias), '.2f')} | {_fmt(pearson(pred, meas), '.2f')} | "
                f"{_fmt(spearman(pred, meas), '.2f')} |")

    head = ["| group | points | median abs. error (pts) | p90 abs. error (pts) | median rel. error % | "
            "p90 rel. error % | within 15 % | median predicted / measured | Pearson r | Spearman |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    lines += ["", "Errors in efficiency points (percent of the 7900 XTX's peak for the data type), relative to the "
              "measured value, and their direction (predicted / measured efficiency, which is measured / predicted "
              "time: above 1, the model is optimistic):", ""] + head
    lines.append(row("all", done))
    groups = defaultdict(list)
    for o in done:
        groups[o.point.family].append(o)
    for g in sorted(groups):
        lines.append(row(g, groups[g]))
    groups = defaultdict(list)
    for o in done:
        groups[o.point.group].append(o)
    lines += ["", "By family and transposes:", ""] + head
    for g in sorted(groups):
        lines.append(row(g, groups[g]))
    groups = defaultdict(list)
    for o in done:
        groups[o.point.size_class].append(o)
    lines += ["", "By size class (geometric mean of M, N, K: tiny <= 128 < small <= 512 < medium <= 2048 < large):",
              ""] + head
    for g in SIZE_CLASSES:
        if groups[g]:
            lines.append(row(g, groups[g]))
    spans = ((0, 30), (30, 300), (300, 1000), (1000, 3000), (3000, math.inf))
    lines += ["", f"By measured time (at {sclk:,.0f} MHz), all sizes and then the large ones:", ""] + head
    for label, os_ in (("", done), ("large, ", [o for o in done if o.point.size_class == "large"])):
        for lo, hi in spans:
            in_span = [o for o in os_ if lo <= measured_us(o.point, sclk) < hi]
            if in_span:
                span = f"{lo:,}-{hi:,} us" if hi < math.inf else f"{lo:,} us and more"
                lines.append(row(label + span, in_span))
    worst = sorted(done, key=lambda o: -abs(o.efficiency - o.point.efficiency * scale))[:20]
    lines += ["", f"Worst 20 (absolute error; the measured times at {sclk:,.0f} MHz):", "",
              "| file | M x N x K | measured | predicted | measured us | predicted us | predicted bound by | reason | kernel |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for o in worst:
        p = o.point
        lines.append(f"| {p.file} | {p.m}x{p.n}x{p.k} | {p.efficiency * scale:.1f} | {o.efficiency:.1f} | "
                     f"{_fmt(measured_us(p, sclk))} | {_fmt(o.us)} | {o.limit} | {worst_reason(o, sclk, floor)} | "
                     f"`{o.kernel.split('_SN_')[0]}` |")
    low = [o for o in done if measured_us(o.point, sclk) <= 1.5 * floor]
    if low:
        ratio = statistics.median(measured_us(o.point, sclk) / o.us for o in low if o.us)
        lines += ["", f"Launch-bound points: {len(low)} measured within 1.5x of the shortest measured time "
                  f"({floor:.1f} us, the dataset's shortest; every file's shortest is within a few tenths of it: the "
                  "launch and timing floor of the tuning's benchmark client); measured / predicted time there: "
                  f"median {ratio:.2f}."]
    return lines


def point_rows(outcomes: list, sclk: float) -> list:
    """The ``--points`` file's rows: each point, its measured and predicted values, its SIMD time and DRAM
    floor (what :func:`with_parameters` needs)."""
    return [{"file": o.point.file, "m": o.point.m, "n": o.point.n, "k": o.point.k, "batch": o.point.batch,
             "kernel": o.kernel, "measured": o.point.efficiency, "predicted": o.efficiency,
             "measured_us": measured_us(o.point, sclk), "predicted_us": o.us, "limit": o.limit,
             "refused": o.refused, "seconds": round(o.seconds, 3), "compute_us": o.compute_us,
             "dram_us": o.dram_us} for o in outcomes]


def load_points(path: str, logics: list, sclk: float) -> list:
    """Outcomes from a ``--points`` file, each joined to its logic-file point by file and size. A file written
    before the points carried their SIMD time (``compute_us``): a point the DRAM floor did not bind has it
    equal to its predicted time, with no overhead then; one the floor bound is left unknown (None)."""
    rows = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(rows, list):
        raise ValueError("not a list of points")
    index = {(p.file, p.m, p.n, p.k, p.batch): p for lg in logics for p in lg.points}
    out = []
    for i, r in enumerate(rows):
        try:
            p = index[(r["file"], r["m"], r["n"], r["k"], r["batch"])]
        except (KeyError, TypeError):
            raise ValueError(f"point {i + 1} is not one of the logic files' points") from None
        o = Outcome(p, r["kernel"], r.get("predicted"), r.get("predicted_us"), r.get("refused"), r.get("seconds", 0.0),
                    r.get("limit") or "", r.get("compute_us"), r.get("dram_us"))
        if o.efficiency is not None and "compute_us" not in r and not o.limit.startswith("dram"):
            o.compute_us, o.dram_us = o.us, 0.0
        elif o.efficiency is not None and "compute_us" not in r:
            o.dram_us = o.us
        out.append(o)
    return out


def rank_cases(logics: list, mappings: dict, sizes_per_file: int) -> list:
    """(logic file, its winner point, [(solution, kernel)]) for ``sizes_per_file`` sizes of each strided file:
    every solution of the file is to be estimated at the size."""
    cases = []
    for lg in logics:
        if lg.problem.endswith("_GB") or not lg.points or lg.family == "SB":
            continue
        m = mappings[lg.name]
        for p in sample([p for p in lg.points if p.efficiency > 0], sizes_per_file):
            cases.append((lg, p, [(s.index, m.kernel[s.index]) for s in lg.solutions if s.index in m.kernel]))
    return cases


def rank_section(cases: list, outcomes: list) -> list[str]:
    """Does the model pick the measured winner among the file's solutions?"""
    lines = ["## Does the model pick the winner?", ""]
    it = iter(outcomes)
    rows = []
    for lg, p, sols in cases:
        got = [(idx, next(it)) for idx, _ in sols]
        pred = {idx: o.efficiency for idx, o in got if o.efficiency is not None}
        if p.solution not in pred:
            rows.append((lg, p, None, len(sols), len(pred), None, 0.0))
            continue
        w = pred[p.solution]
        better = sum(1 for i in pred if pred[i] > w)
        ties = sum(1 for i in pred if pred[i] == w) - 1
        best = max(pred.values())
        rank = 1 + better + ties / 2  # a tie broken at random: the winner's expected place
        rows.append((lg, p, rank, len(sols), len(pred), w / best if best > 0 else float("nan"),
                     1 / (1 + ties) if better == 0 else 0.0))
    ranked = [r for r in rows if r[2] is not None]
    if not ranked:
        return lines + [f"{len(rows)} sizes, none with the winner estimated."]
    top1 = sum(r[6] for r in ranked)  # a tie for first counts as the chance of picking the winner
    top5 = sum(1 for r in ranked if r[2] <= 5)
    lines += [
        f"At {len(rows)} sizes of the strided files, every solution of the file estimated "
        f"({sum(r[4] for r in rows):,} estimates, {sum(r[3] - r[4] for r in rows):,} refused). The measured "
        "winner is the fastest of the candidates tuned for that size; the file's other solutions won elsewhere "
        "and may not all have been candidates there (logic files are merged from tuning runs): a miss may "
        "name a solution that was never timed at that size.",
        "",
        f"- the model's first choice is the measured winner at **{top1:.1f} of {len(ranked)}** sizes "
        f"({100 * top1 / len(ranked):.0f} %); among its first five at {top5} ({100 * top5 / len(ranked):.0f} %); "
        f"median rank of the winner {statistics.median(r[2] for r in ranked):g} (ties at their middle) of "
        f"{statistics.median(r[4] for r in ranked):g} estimated;",
        f"- the winner's predicted efficiency is a median {100 * statistics.median(r[5] for r in ranked):.0f} % "
        "of the model's best for the size.",
        "",
        "| file | M x N x K | winner's rank | estimated | winner / model's best |",
        "| --- | --- | --- | --- | --- |",
    ]
    for lg, p, rank, n, est, share, _ in rows:
        lines.append(f"| {lg.name} | {p.m}x{p.n}x{p.k} | {f'{rank:g}' if rank else 'refused'} | {est} of {n} | "
                     f"{_fmt(100 * share if share is not None else None, '.0f')} % |")
    return lines


def plot(outcomes: list, sclk: float, path: str) -> str:
    """Predicted vs measured, one dot per (kernel, size): efficiency, and time on log axes. Returns a line
    for the report."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "No plot: matplotlib is not installed."
    scale = sclk / BOOST_MHZ
    done = [o for o in outcomes if o.efficiency is not None]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 5))
    for fam, colour in zip(("HB", "HHS", "BBS", "I8II"), ("tab:blue", "tab:orange", "tab:green", "tab:red")):
        os_ = [o for o in done if o.point.family == fam]
        if not os_:
            continue
        ax1.scatter([o.point.efficiency * scale for o in os_], [o.efficiency for o in os_], s=6, alpha=0.5,
                    color=colour, label=fam)
        ax2.scatter([measured_us(o.point, sclk) for o in os_], [o.us for o in os_], s=6, alpha=0.5, color=colour,
                    label=fam)
    ax1.plot([0, 100], [0, 100], color="grey", lw=0.8)
    ax1.set(xlabel="measured efficiency, % of peak", ylabel="predicted efficiency, % of peak", xlim=(0, 100),
            ylim=(0, 100), title="efficiency")
    lo = min([measured_us(o.point, sclk) for o in done] + [o.us for o in done if o.us]) / 2
    hi = max([measured_us(o.point, sclk) for o in done] + [o.us for o in done if o.us]) * 2
    ax2.plot([lo, hi], [lo, hi], color="grey", lw=0.8)
    ax2.set(xscale="log", yscale="log", xlabel="measured time, us", ylabel="predicted time, us", title="time")
    for ax in (ax1, ax2):
        ax.legend(loc="upper left", fontsize=8)
        ax.grid(alpha=0.3)
    fig.suptitle(f"isalint estimate vs rocBLAS 5.5.1 navi31 measurements ({len(done):,} points)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return f"Plot: `{Path(path).name}`."


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logic", help=f"the navi31 logic folder or a rocBLAS source tree (default: ${LOGIC_ENV})")
    ap.add_argument("--library", help="TensileLibrary_gfx1100.co (default: $ISALINT_TENSILE_LIBRARY, else the "
                                      "usual rocBLAS install folders)")
    ap.add_argument("--sample", type=int, default=0, metavar="N", help="estimate N points, stratified by file and "
                                                                         "size class (default: all)")
    ap.add_argument("--jobs", type=int, default=2, help="estimates at once (default 2)")
    ap.add_argument("--tuning-sclk", type=float, default=BOOST_MHZ, metavar="MHZ",
                    help=f"the clock the efficiencies are relative to (default {BOOST_MHZ})")
    ap.add_argument("--via", choices=("api", "cli"), default="api",
                    help="api: in worker processes that read the library once (default); cli: one `isalint "
                         "estimate` process per point")
    ap.add_argument("--rank-sizes", type=int, default=0, metavar="N",
                    help="also estimate every solution of each strided file at N of its sizes: does the model "
                         "pick the measured winner?")
    ap.add_argument("--packed", action="store_true",
                    help="launch with packed matrices (--tensile's strides) instead of the leading dimensions "
                         "the logic file gives")
    ap.add_argument("--dataset-only", action="store_true", help="read and map, estimate nothing")
    ap.add_argument("--out", default=None, help=f"the Markdown report (default {DEFAULT_OUT.relative_to(REPO)})")
    ap.add_argument("--plot", metavar="FILE.png", help="draw predicted vs measured (needs matplotlib)")
    ap.add_argument("--points", help="write every point with its measured and predicted values here (JSON)")
    ap.add_argument("--points-in", metavar="FILE.json",
                    help="take the predictions from a --points file instead of estimating (points without their SIMD "
                         "time that the DRAM floor bound are estimated again when the library is given)")
    ap.add_argument("--fit", action="store_true",
                    help="fit the two calibrated parameters on each data type and layout, report the error on the "
                         "others (cross-validation), and the before/after table")
    args = ap.parse_args(argv)

    logic_dir = find_logic(args.logic)
    if logic_dir is None:
        print(f"bench_heldout_navi31: skipped: no navi31 logic files "
              f"({args.logic or 'give --logic DIR or set ' + LOGIC_ENV})")
        return 0
    from bench_tensile import _shown_path, find_library

    library = find_library(args.library)
    load_before = os.getloadavg()
    start = time.perf_counter()
    try:
        logics = [read_logic(f) for f in logic_files(logic_dir)]
    except LogicError as e:
        print(f"bench_heldout_navi31: {e}", file=sys.stderr)
        return 2
    read_s = time.perf_counter() - start
    kernels = library_kernels(library) if library else {}
    mappings = {lg.name: map_solutions(lg, kernels) for lg in logics} if library else {}
    map_s = time.perf_counter() - start - read_s

    outcomes: list[Outcome] = []
    cases: list = []
    rank_outcomes: list = []
    interface = None
    asked: list = []
    if args.points_in:
        try:
            outcomes = load_points(args.points_in, logics, args.tuning_sclk)
        except (OSError, ValueError) as e:
            print(f"bench_heldout_navi31: {args.points_in}: {e}", file=sys.stderr)
            return 2
        redo = [i for i, o in enumerate(outcomes) if o.efficiency is not None and o.compute_us is None]
        if redo and library:
            print(f"bench_heldout_navi31: {len(redo)} DRAM-bound points estimated again for their SIMD time",
                  file=sys.stderr)
            again = estimate_all(library, [(outcomes[i].kernel, outcomes[i].point) for i in redo], args.jobs, args.via,
                                 packed=args.packed)
            for i, o in zip(redo, again):
                if o.compute_us is not None:
                    outcomes[i].compute_us, outcomes[i].dram_us = o.compute_us, o.dram_us
                    outcomes[i].limit = _limit(o.compute_us, o.dram_us, {}) if o.dram_us >= o.compute_us else o.limit
        for o in outcomes:  # still unknown: the SIMD time is at most the DRAM floor; taken as equal
            if o.efficiency is not None and o.compute_us is None:
                o.compute_us = o.dram_us = o.us
        asked = [(o.kernel, o.point) for o in outcomes]
        if args.rank_sizes and library:
            cases = rank_cases(logics, mappings, args.rank_sizes)
            rank_asked = [(k, Point(p.file, p.family, p.trans, p.general_batched, p.m, p.n, p.batch, p.k, p.ld,
                                    idx, p.efficiency)) for _, p, sols in cases for idx, k in sols]
            rank_outcomes = estimate_all(library, rank_asked, args.jobs, args.via, packed=args.packed)
    elif not args.dataset_only and library:
        todo = [(lg, p) for lg in logics for p in lg.points
                if p.efficiency > 0 and p.solution in mappings[lg.name].kernel]
        picked = set(id(p) for p in sample([p for _, p in todo], args.sample))
        asked = [(mappings[lg.name].kernel[p.solution], p) for lg, p in todo if id(p) in picked]
        interface = estimate_interface()
        if interface:
            outcomes = [Outcome(p, k, refused=interface) for k, p in asked]
        else:
            def progress(done: int, total: int) -> None:
                if sys.stderr.isatty() or done == total or done % 200 < 16:
                    print(f"bench_heldout_navi31: {done:,}/{total:,} points estimated", file=sys.stderr)

            outcomes = estimate_all(library, asked, args.jobs, args.via, progress=progress,
                                    packed=args.packed)
            if args.rank_sizes:
                cases = rank_cases(logics, mappings, args.rank_sizes)
                rank_asked = [(k, Point(p.file, p.family, p.trans, p.general_batched, p.m, p.n, p.batch, p.k, p.ld,
                                        idx, p.efficiency)) for _, p, sols in cases for idx, k in sols]
                rank_outcomes = estimate_all(library, rank_asked, args.jobs, args.via, progress=progress,
                                             packed=args.packed)
    total_s = time.perf_counter() - start
    load_after = os.getloadavg()

    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    cmd = "python benchmarks/bench_heldout_navi31.py" + "".join(  # paths shown from their last part on
        f" .../{Path(a).name}" if os.path.isabs(a) else f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    out = [
        "# `isalint estimate` vs rocBLAS 5.5.1's measured navi31 GEMMs",
        "",
        f"{today}, on {os.cpu_count()} processors ({platform.machine()}, Python {platform.python_version()}); "
        f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after; {total_s:,.0f} s "
        f"(reading {read_s:.0f} s, mapping {map_s:.0f} s).",
        f"Made by `{cmd}` with the logic files of rocBLAS 5.5.1's source (`{LOGIC_SUBDIR}`)"
        + (f" and `{_shown_path(library)}`." if library else "; no library given."),
        "",
    ]
    out += facts_section(args.tuning_sclk, logics) + [""]
    out += dataset_section(logics, mappings, library, args.tuning_sclk) + [""]
    if not args.points_in and (args.dataset_only or not library):
        out += ["## Predicted vs measured", "", "Not run (" + ("--dataset-only" if library else "no library") + ")."]
    else:
        if interface:
            out += ["## Predicted vs measured", "",
                    f"Not possible with this isalint: {interface}. All {len(asked):,} points asked "
                    f"({'a sample of ' + str(args.sample) if args.sample else 'every mapped point'}) are refused "
                    "for that reason."]
        else:
            floor = min(measured_us(p, args.tuning_sclk) for lg in logics for p in lg.points if p.efficiency > 0)
            from isalint.hw.timing import GFX1100

            adopted = (GFX1100.matrix_clock_fraction, GFX1100.launch_overhead_us)
            outcomes = with_parameters(outcomes, *adopted)  # as the model now gives them (the same when estimated)
            if args.fit:
                out += fit_section(outcomes, args.tuning_sclk, adopted) + [""]
            out += accuracy_section(outcomes, args.tuning_sclk, floor)
            if cases:
                out += [""] + rank_section(cases, rank_outcomes)
            if args.plot:
                out += ["", plot(outcomes, args.tuning_sclk, args.plot)]
    text = "\n".join(out) + "\n"
    print(text)
    target = Path(args.out) if args.out else DEFAULT_OUT
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    if args.points:
        Path(args.points).write_text(json.dumps(point_rows(outcomes, args.tuning_sclk), indent=1) + "\n",
                                     encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
