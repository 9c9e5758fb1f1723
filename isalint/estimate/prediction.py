"""``estimate()``: the predicted run time of one GEMM launch, and where its cycles go.

1. :mod:`.scalar` follows the control flow one wave takes for this ``N`` (the loop trip counts).
2. :mod:`.path` turns it into an instruction stream with the long loops shortened.
3. :mod:`.residency` finds how many workgroups share a CU (or WGP) and in how many rounds the
   grid passes; :mod:`.simd` simulates one SIMD through a full round (and the last, partial one).
4. The kernel's time is the sum of its rounds (every CU runs the same rounds in parallel); it is
   never less than the time DRAM needs to read A, B and C and write C once.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..hw.gpus import DTYPE_TEXT
from ..hw.timing import GFX1100, PARAMETERS, Timing
from ..model.alu_delays import pending_in
from .costs import BRANCH, LDS, SALU, VALU, VMEM, CostModel
from .path import build_stream
from .residency import Residency, residency, rounds
from .scalar import Launch, gemm_launch, trace
from .simd import CAUSES, RoundResult, simulate_round

CAUSE_TEXT = {
    "valu": "VALU busy",
    "bank_stall": "VGPR bank stalls",
    "lds_wait": "waiting on LDS",
    "gmem_wait": "waiting on global memory",
    "barrier": "waiting at barriers",
    "dependency": "waiting on a result (dependency)",
    "unhinted": "stalled on ALU results no hint names",
    "salu_branch": "scalar, branch and memory issue",
    "idle": "SIMD idle (tail of the grid)",
}


@dataclass
class LoopShare:
    label: str
    line: int
    depth: int
    trips: int  # executions of the loop header by one wave
    causes: dict[str, float]  # SIMD cycles (whole launch)

    @property
    def cycles(self) -> float:
        return sum(self.causes.values())


@dataclass
class Mix:
    """What one wave executes over the whole launch (all loop trips counted)."""

    instructions: int = 0
    valu: int = 0
    fma: int = 0  # FP32 FMA operations
    fma_in_vopd: int = 0  # of which issued as a half of a v_dual_* pair
    bank_stall_cycles: int = 0  # the VGPR-bank model's stall cycles (isalint/hw/vgpr_banks.py)
    lds: int = 0
    vmem: int = 0
    salu: int = 0
    branches: int = 0

    @property
    def vopd_share(self) -> float | None:
        return self.fma_in_vopd / self.fma if self.fma else None

    def per(self, k: int) -> dict[str, float]:
        return {name: getattr(self, name) / k for name in ("instructions", "valu", "fma", "bank_stall_cycles", "lds",
                                                            "vmem", "salu", "branches")}


def _mix(blocks_run: list[int], cfg, program, costs: CostModel) -> Mix:
    visits: dict[int, int] = {}
    for b in blocks_run:
        visits[b] = visits.get(b, 0) + 1
    stalls = costs.stalls()
    m = Mix()
    for b, count in visits.items():
        blk = cfg.blocks[b]
        for i in range(blk.first, blk.last):
            ins = program.instrs[i]
            c = costs.cost(i)
            m.instructions += count
            if c.unit == VALU:
                m.valu += count
                m.fma += c.fma * count
                if ins.is_vopd:
                    m.fma_in_vopd += c.fma * count
                m.bank_stall_cycles += stalls[i] * count
            elif c.unit == LDS:
                m.lds += count
            elif c.unit == VMEM:
                m.vmem += count
            elif c.unit == SALU:
                m.salu += count
            elif c.unit == BRANCH:
                m.branches += count
    return m


@dataclass
class Work:
    """What a launch by argument bindings computes, for its rate and its DRAM floor: ``flop`` operations
    (2 per multiply-accumulate), ``nbytes`` of DRAM traffic at least (every input read once, every
    output written once), ``k`` the reduction length (the per-K-step figures divide by it)."""

    flop: float
    nbytes: float
    k: int
    text: str  # what is computed, as the user or the convention said it
    dims: dict = field(default_factory=dict)  # named sizes (M, N, K, batch ...)

    def to_json(self) -> dict:
        return {"computes": self.text, "flop": self.flop, "dram_bytes": self.nbytes, "k": self.k, **self.dims}


@dataclass
class Estimate:
    path: str
    kernel: str
    n: int
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    timing: Timing
    residency: Residency
    full_rounds: int
    last_groups: int
    cycles: float  # per SIMD for the whole launch
    causes: dict[str, float]
    loops: list[LoopShare]
    round_cycles: float
    last_round_cycles: float
    dram_ms: float
    notes: list[str] = field(default_factory=list)
    issued: dict[str, int] = field(default_factory=dict)
    instructions_per_wave: int = 0
    abi: str = "gemm"
    mix: Mix = field(default_factory=Mix)
    sgprs: int | None = None
    dtype: str = "fp32"  # what its peak is of: fp32 (VALU) or the WMMA data type it computes with
    launch_source: str = ""  # where the grid and block came from (see isalint/validate/gemm.py)
    launch_defaults: list[str] = field(default_factory=list)  # parts of the launch that are defaults
    work: Work | None = None  # the problem of a launch by argument bindings (None: the GEMM ABI's N^3)

    @property
    def matrix(self) -> bool:
        """The kernel computes with WMMA: its peak is the matrix path's."""
        return self.dtype != "fp32"

    @property
    def peak_flops(self) -> float:
        return self.timing.peak(self.dtype)

    @property
    def compute_ms(self) -> float:
        """The simulated SIMD time: ``cycles`` at the clock (a WMMA kernel's at ``matrix_clock_fraction``
        of it)."""
        clock = self.timing.clock_hz * (self.timing.matrix_clock_fraction if self.matrix else 1.0)
        return self.cycles / clock * 1e3

    @property
    def predicted_ms(self) -> float:
        """The longer of the SIMD time and the DRAM floor, plus the launch overhead."""
        return max(self.compute_ms, self.dram_ms) + self.timing.launch_overhead_us * 1e-3

    @property
    def flop(self) -> float:
        """2 N^3 for a GEMM (``abi`` "gemm"), the bound problem's count (:class:`Work`); other kernels (a
        transpose) do no counted FLOPs."""
        if self.work is not None:
            return float(self.work.flop)
        return 2.0 * self.n ** 3 if self.abi in ("gemm", "gemm_f16") else 0.0

    @property
    def efficiency(self) -> float | None:
        """Predicted throughput over the part's peak for the kernel's data type."""
        return None if self.tflops is None else self.tflops * 1e12 / self.peak_flops

    @property
    def tflops(self) -> float | None:
        if not self.flop:
            return None
        return self.flop / (self.predicted_ms * 1e-3) / 1e12

    @property
    def occupancy_waves(self) -> float:
        return self.residency.waves_per_simd

    def _k_steps(self) -> int:
        return max(1, self.work.k if self.work is not None else self.n)

    def fractions(self) -> dict[str, float]:
        total = sum(self.causes.values()) or 1.0
        return {c: v / total for c, v in self.causes.items()}

    def to_json(self) -> dict:
        r = self.residency
        total = sum(self.causes.values()) or 1.0
        return {
            "path": self.path,
            "kernel": self.kernel,
            "n": self.n,
            "grid": list(self.grid),
            "block": list(self.block),
            "predicted_ms": round(self.predicted_ms, 4),
            "tflops": None if self.tflops is None else round(self.tflops, 3),
            "efficiency": None if self.efficiency is None else round(self.efficiency, 4),
            "problem": None if self.work is None else self.work.to_json(),
            "peak_tflops": round(self.peak_flops / 1e12, 2),
            "peak": DTYPE_TEXT[self.dtype],
            "dtype": self.dtype,
            "gpu": self.timing.gpu,
            "launch": {"source": self.launch_source, "defaults": list(self.launch_defaults)},
            "occupancy_waves": r.waves_per_simd,
            "occupancy": {
                "workgroups_per_unit": r.groups_per_unit, "unit": "WGP" if r.wgp_mode else "CU",
                "waves_per_workgroup": r.waves_per_group, "limit": r.limit, "vgprs": r.vgprs,
                "allocated_vgprs": r.allocated_vgprs, "sgprs": self.sgprs, "waves_by_vgprs": r.waves_by_vgprs, "lds_bytes": r.lds_bytes,
            },
            "rounds": {"full": self.full_rounds, "last_workgroups": self.last_groups,
                       "round_cycles": round(self.round_cycles, 1),
                       "last_round_cycles": round(self.last_round_cycles, 1)},
            "cycles_per_simd": round(self.cycles, 1),
            "dram_bound_ms": round(self.dram_ms, 4),
            "breakdown": {c: {"cycles": round(v, 1), "share": round(v / total, 4)} for c, v in self.causes.items()},
            "loops": [{"label": lp.label, "line": lp.line, "depth": lp.depth, "trips_per_wave": lp.trips,
                       "cycles": round(lp.cycles, 1), "share": round(lp.cycles / total, 4),
                       "breakdown": {c: round(v, 1) for c, v in lp.causes.items()}} for lp in self.loops],
            "instructions_per_wave": self.instructions_per_wave,
            "per_k_step": {**{k: round(v, 3) for k, v in self.mix.per(self._k_steps()).items()},
                           "vopd_share": None if self.mix.vopd_share is None else round(self.mix.vopd_share, 4)},
            "notes": list(self.notes),
            "parameters": {k: {"value": getattr(self.timing, k), "unit": u, "source": kind,
                               "note": _note(self.timing, k, s)}
                           for k, (u, kind, s) in PARAMETERS.items()},
        }


PART_FIELDS = ("clock_hz", "compute_units", "dram_bytes_per_s")  # set by --gpu (isalint/hw/gpus.py)


def _note(timing: Timing, name: str, note: str) -> str:
    if timing.gpu != GFX1100.gpu and name in PART_FIELDS:
        return f"{timing.gpu}: its AMD product page (isalint/hw/gpus.py, estimate --gpu list)"
    return note


class EstimateError(ValueError):
    """The kernel cannot be estimated; ``line`` is where (or None)."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


def estimate(program, n: int, grid, block, timing: Timing = GFX1100, kernel=None,
             launch: Launch | None = None, abi: str = "gemm", work: Work | None = None) -> Estimate:
    """Predict one launch of ``kernel`` (default: the program's first) on a GEMM of size ``n``, or on
    ``launch`` (its arguments bound by name) computing ``work``."""
    from .scalar import TraceError

    if kernel is None:
        if not program.kernels:
            raise EstimateError("no kernel in the file")
        kernel = program.kernels[0]
    cfg = program.cfg()
    grid, block = tuple(grid), tuple(block)
    launch = launch or gemm_launch(grid, block, n)
    try:
        tr = trace(program, kernel, cfg, launch)
    except TraceError as exc:
        raise EstimateError(str(exc), exc.line) from None
    blocking = frozenset(p.consumer for p in pending_in(program, cfg, timing))
    costs = CostModel(program, kernel, timing, blocking)
    stream = build_stream(tr.blocks, cfg, costs)
    res = residency(kernel, block, timing)
    total_groups = grid[0] * grid[1] * grid[2]
    rd = rounds(total_groups, res)
    loop_of_index = _loop_keys(cfg)

    def run(groups_per_unit: int) -> RoundResult:
        return simulate_round(stream, costs.cost, loop_of_index, timing, res.groups_on_simd(groups_per_unit),
                              res.local_waves())

    full = run(res.groups_per_unit) if rd.full else None
    last = run(rd.last) if rd.last else None
    causes = dict.fromkeys(CAUSES, 0.0)
    by_loop: dict[object, dict[str, float]] = {}
    cycles = 0.0
    for rr, times in ((full, rd.full), (last, 1 if last else 0)):
        if rr is None:
            continue
        cycles += rr.cycles * times
        for c in CAUSES:
            causes[c] += rr.causes[c] * times
        for key, d in rr.by_loop.items():
            acc = by_loop.setdefault(key, dict.fromkeys(CAUSES, 0.0))
            for c in CAUSES:
                acc[c] += d[c] * times
    # the causes are charged per simulated cycle; scale them to the rounds' total so they add up
    charged = sum(causes.values())
    if charged > 0:
        k = cycles / charged
        causes = {c: v * k for c, v in causes.items()}
        by_loop = {key: {c: v * k for c, v in d.items()} for key, d in by_loop.items()}
    trips = {}
    for b in tr.blocks:
        trips[b] = trips.get(b, 0) + 1
    loops = []
    for key, d in by_loop.items():
        if key is None:
            loops.append(LoopShare("(outside loops)", 0, 0, 1, d))
            continue
        lp = cfg.loops[key]
        label = lp.label or cfg.blocks[lp.header].label or f"block {lp.header}"
        line = program.instrs[cfg.blocks[lp.header].first].lineno
        loops.append(LoopShare(label, line, lp.depth, trips.get(lp.header, 0), d))
    loops.sort(key=lambda s: -s.cycles)
    nbytes = work.nbytes if work is not None else 4.0 * 4 * n * n
    dram_ms = nbytes / timing.dram_bytes_per_s * 1e3
    issued = dict((full or last).issued) if (full or last) else {}
    notes = list(tr.notes)
    est = Estimate(program.path, kernel.name, n, grid, block, timing, res, rd.full, rd.last, cycles, causes, loops,
                   full.cycles if full else 0.0, last.cycles if last else 0.0, dram_ms, notes, issued,
                   tr.instructions, abi, _mix(tr.blocks, cfg, program, costs))
    est.work = work
    sgprs = (kernel.metadata or {}).get(".sgpr_count")
    est.sgprs = int(sgprs) if sgprs is not None else None
    last_index = getattr(kernel, "last", len(program.instrs))
    est.dtype = kernel_dtype(program.instrs[i].opcode for i in range(kernel.first, last_index))
    if est.compute_ms < dram_ms:
        notes.append("bound by DRAM bandwidth: reading the inputs and writing the outputs once takes longer than "
                     "the simulated SIMD time")
    return est


WMMA_DTYPE = (("_iu4", "int4"), ("_iu8", "int8"), ("_bf16", "bf16"), ("_f16", "fp16"))


def kernel_dtype(opcodes) -> str:
    """What a kernel's peak is of: the WMMA data type of highest peak among its ``v_wmma_*``
    (``v_wmma_f32_16x16x16_f16`` is fp16, ``..._bf16`` bf16, ``..._iu8`` int8, ``..._iu4`` int4),
    else fp32 (the VALU)."""
    from ..hw.gpus import RATE_PER_CU

    found = set()
    for op in opcodes:
        if op.startswith("v_wmma_"):
            found.add(next((d for suffix, d in WMMA_DTYPE if op.endswith(suffix)), "fp16"))
    return max(found, key=lambda d: RATE_PER_CU[d]) if found else "fp32"


def _loop_keys(cfg):
    """``index -> position of its innermost loop in cfg.loops`` (None outside loops)."""
    cache: dict[int, int | None] = {}
    position = {id(lp): k for k, lp in enumerate(cfg.loops)}

    def key(index: int) -> int | None:
        b = cfg.block_of[index]
        if b not in cache:
            lp = cfg.loop_of(index)
            cache[b] = None if lp is None else position[id(lp)]
        return cache[b]

    return key
