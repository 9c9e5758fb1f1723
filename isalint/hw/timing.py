"""Timing of a Radeon 7900 XTX (gfx1100) as ``isalint estimate`` models it.

Every number the throughput model uses is a field of :class:`Timing`; :data:`PARAMETERS` says
where each comes from. :func:`for_gpu` gives another RDNA3 part (:mod:`.gpus`): its CUs, clock, DRAM
bandwidth and VGPR file, with the latencies and calibrated values below kept. The kinds of source:

* ``spec`` - the product's published figures (as listed in Part 1 of the GEMM worklog this project
  grew from: 48 WGPs, 96 CUs, 192 SIMDs at 2.5 GHz, 960 GB/s of GDDR6);
* ``isa`` - the RDNA3 Instruction Set Architecture reference guide (AMD, February 2023);
* ``llvm`` - LLVM's AMDGPU backend: the ``GFX11SpeedModel`` of ``SISchedule.td`` (the latencies
  the compiler schedules gfx11 code with) and ``AMDGPUInsertDelayAlu.cpp``;
* ``trace`` - SQ thread traces taken on a 7900 XTX (the SQTT examples of tinygrad's repository),
  decoded and joined to isalint's program model by ``benchmarks/bench_issue_rule.py``
  (``benchmarks/results/issue_rule.md``);
* ``calibrated`` - no public figure fits; the value was fitted to the observation named in its
  source text and then checked, not refitted, on the other kernels
  (``benchmarks/bench_estimate.py`` prints the comparison);
* ``assumption`` - a modelling choice; it is stated so that it can be challenged.

The model is deliberately small: one loaded latency per memory (no cache hierarchy), one
bandwidth per shared unit, and the program's own ``s_waitcnt``, ``s_barrier`` and dependencies
deciding when a wave waits.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from . import latency


@dataclass(frozen=True)
class Timing:
    # -- the chip ------------------------------------------------------------------------------
    clock_hz: float = 2.5e9
    compute_units: int = 96
    simds_per_cu: int = 2
    wave_slots_per_simd: int = 16
    dram_bytes_per_s: float = 960e9
    # -- VALU -----------------------------------------------------------------------------------
    valu_latency: int = latency.VALU_LATENCY
    valu64_latency: int = latency.VALU64_LATENCY
    quarter_rate_cycles: int = 4
    quarter_rate_latency: int = latency.QUARTER_RATE_LATENCY
    trans_latency: int = latency.TRANS_LATENCY
    wmma_cycles: int = latency.WMMA_CYCLES
    bank_stall_exposure: float = 0.45
    valu_memory_latency: int = 17
    issue_per_cycle: int = 5
    # -- issue, scalar unit and control flow -------------------------------------------------------------
    salu_latency: int = latency.SALU_LATENCY
    branch_taken_cycles: int = 32
    branch_simd_cycles: int = 2
    icache_line_bytes: int = 64
    prefetch_lines_behind: int = 1
    prefetch_lines_ahead: int = 2
    barrier_cycles: int = 4
    # -- memory ---------------------------------------------------------------------------------------
    smem_latency: int = 20
    lds_latency: int = 20
    lds_bytes_per_cycle_per_cu: int = 128
    lds_wgp_mode_factor: float = 1.75
    vmem_latency: int = 453
    vmem_bytes_per_cycle_per_cu: int = 128
    # -- the launch and the clock under load (fitted to rocBLAS's navi31 measurements) ----------------
    launch_overhead_us: float = 8.6
    matrix_clock_fraction: float = 0.845
    # -- the part (isalint/hw/gpus.py) ------------------------------------------------------------
    vgprs_per_lane: int = 1536  # VGPR file per SIMD lane in wave32 (1024 on gfx1102, gfx1103, gfx1150)
    gpu: str = "7900xtx"  # the --gpu key these chip figures are of

    @property
    def simds(self) -> int:
        return self.compute_units * self.simds_per_cu

    @property
    def peak_flops(self) -> float:
        """FP32 FMA peak: 2 VALUs x 32 lanes x 2 FLOP per SIMD per cycle (dual issue)."""
        return self.clock_hz * self.simds * 128

    @property
    def peak_matrix_flops(self) -> float:
        """WMMA peak: a 16x16x16 multiply-accumulate (8,192 FLOP) per ``wmma_cycles`` per SIMD."""
        return self.clock_hz * self.simds * 2 * 16 * 16 * 16 / self.wmma_cycles

    def peak(self, dtype: str = "fp32") -> float:
        """Operations per second of ``dtype`` (fp32 on the VALU; fp16, bf16, int8, int4 on WMMA)."""
        from .gpus import RATE_PER_CU

        return self.clock_hz * self.compute_units * RATE_PER_CU[dtype]

    def with_(self, **changes) -> Timing:
        return replace(self, **changes)

    def to_json(self) -> dict:
        return asdict(self)


GFX1100 = Timing()


def for_gpu(gpu) -> Timing:
    """The timing of a part of :mod:`.gpus` (a :class:`~.gpus.Gpu` or a name ``--gpu`` accepts): its
    CUs, boost clock, memory bandwidth and VGPR file; the rest is gfx1100's."""
    from .gpus import find

    g = find(gpu) if isinstance(gpu, str) else gpu
    return GFX1100.with_(clock_hz=g.boost_mhz * 1e6, compute_units=g.compute_units,
                         dram_bytes_per_s=g.memory_gb_s * 1e9, vgprs_per_lane=g.vgprs_per_lane, gpu=g.key)

# name -> (unit, kind of source, source)
PARAMETERS: dict[str, tuple[str, str, str]] = {
    "clock_hz": ("Hz", "spec", "7900 XTX boost clock, 2.5 GHz"),
    "compute_units": ("CUs", "spec", "48 WGPs x 2 CUs"),
    "simds_per_cu": ("SIMDs", "spec", "2 SIMD32 per CU (4 per WGP)"),
    "wave_slots_per_simd": ("waves", "isa", "a SIMD holds at most 16 waves"),
    "dram_bytes_per_s": ("B/s", "spec", "384-bit GDDR6 at 20 Gbps; a lower bound on the time to read A, B and C "
                                        "and write C once"),
    "valu_latency": ("cycles", "llvm", "GFX11SpeedModel Write32Bit = 5; AMDGPUInsertDelayAlu needs no s_delay_alu "
                                       "5 VALU instructions after a producer (VALU_MAX = 5)"),
    "valu64_latency": ("cycles", "llvm", "GFX11SpeedModel Write64Bit = 6 (64-bit results)"),
    "quarter_rate_cycles": ("cycles", "assumption", "32-bit integer multiplies and 64-bit multiply-adds keep the "
                                                    "VALU 4 cycles (quarter rate)"),
    "quarter_rate_latency": ("cycles", "llvm", "GFX11SpeedModel WriteIntMul / WriteQuarterRate32 = 8"),
    "trans_latency": ("cycles", "llvm", "GFX11SpeedModel WriteTrans32 = 10"),
    "wmma_cycles": ("cycles", "spec", "a wave32 v_wmma_* (16x16x16) keeps the SIMD's matrix path this long, its D "
                                      "readable when it ends: 'a single WMMA instruction coordinates 32 clocks' "
                                      "(AMD GPUOpen, 'How to accelerate AI applications on RDNA 3 using WMMA'); "
                                      "512 FP16 FLOP per clock per CU, 122.9 TFLOP/s on a 7900 XTX at 2.5 GHz"),
    "bank_stall_exposure": ("fraction", "calibrated",
                            "share of a VGPR-bank stall cycle (isalint/hw/vgpr_banks.py) the SIMD's VALU loses. "
                            "Fitted to an RGP observation, not to a run time: reference kernel 5's FMA block "
                            "repeated 32 times cannot pass 75% VALU utilisation; with the bank model's 49 stall "
                            "cycles per 66 instructions that is 66 / 0.75 - 66 = 22 lost cycles, 0.45 of 49"),
    "issue_per_cycle": ("instructions", "trace",
                        "instructions the SIMD issues per cycle, each from a different wave, at most one per "
                        "category - VALU (a VOPD pair is one), SALU with SMEM, LDS, vector memory, branch, other "
                        "(the rule AMD documents for its scheduler: ROCm Compute Profiler, 'Pipeline "
                        "descriptions: Scheduler'; LLVM's GFX11SpeedModel gives each category its own resource). "
                        "SQ thread traces of a 7900 XTX show it: in 2,828 issues one wave never issued twice in a "
                        "cycle, while different waves issued SALU + VALU (32 cycles), LDS + VALU, vector memory + "
                        "VALU, branch + VALU (8 each) and LDS + SALU + VALU (4) together, never two of one "
                        "category. 1 gives the single-issue rule the model used before (s_waitcnt, s_nop, "
                        "s_barrier, s_delay_alu and s_clause take no issue slot either way)"),
    "valu_memory_latency": ("cycles", "trace",
                            "cycles from a VALU instruction's issue until an LDS or vector memory instruction of "
                            "the wave may read its VGPR result: 17-18 in SQ thread traces of a 7900 XTX (42 "
                            "pairs, benchmarks/bench_issue_rule.py), where a VALU instruction reads it after 5"),
    "salu_latency": ("cycles", "llvm", "GFX11SpeedModel WriteSALU = 2"),
    "branch_taken_cycles": ("cycles", "llvm",
                            "a branch that leaves the wave's prefetched code holds the wave while the target is "
                            "fetched: GFX11SpeedModel WriteBranch = 32. A branch whose target is still buffered "
                            "(see prefetch_lines_*) costs nothing extra"),
    "branch_simd_cycles": ("cycles", "calibrated",
                           "such a branch also keeps the whole SIMD from issuing this long (six waves would "
                           "otherwise hide its cost entirely). The mechanism is not public; fitted to an RGP "
                           "observation, not to a run time: reference kernel 6, one taken branch per k step, "
                           "ran at 76.2% VALU utilisation; 2 cycles put the model at 76.3% (0: 77.8%, 3: 75.6%) under the "
                           "single-issue rule it was fitted with. Under the per-category rule of the traces the model "
                           "puts kernel 6 at 89%: the rest of the loss is not a branch's, and is not refitted here"),
    "icache_line_bytes": ("bytes", "llvm", "instruction cache line (SIISelLowering.cpp, getPrefLoopAlignment: "
                                           "'On GFX10 I$ is 4 x 64 bytes cache lines'; RGP counts 64-byte "
                                           "instruction cache requests)"),
    "prefetch_lines_behind": ("lines", "llvm", "lines a wave keeps behind its PC (getPrefLoopAlignment: 'by "
                                               "default prefetcher keeps one cache line behind and reads two "
                                               "ahead'); code offsets count .p2align padding"),
    "prefetch_lines_ahead": ("lines", "llvm", "lines a wave has read ahead of its PC (same source)"),
    "barrier_cycles": ("cycles", "assumption", "from the last wave's arrival at s_barrier to the release of all"),
    "smem_latency": ("cycles", "llvm", "GFX11SpeedModel WriteSMEM = 20 (scalar cache hit)"),
    "lds_latency": ("cycles", "llvm", "GFX11SpeedModel WriteLDS = 20, from the end of the access to the data; "
                                      "checked against RGP on reference kernel 5 (LDS waits under 30 cycles: the "
                                      "model's first wait of a k step averages 30)"),
    "lds_bytes_per_cycle_per_cu": ("B/cycle", "isa", "ISA guide, 'Local Data Share': 32 DWORD banks serve each "
                                                     "pair of SIMDs, one read or write per bank per clock; bank "
                                                     "conflicts (isalint/hw/lds_banks.py) add passes"),
    "lds_wgp_mode_factor": ("x", "calibrated", "an LDS pass in WGP mode costs this much more than in CU mode (the "
                                               "whole LDS serves all four SIMDs, which congests it; CU mode gives "
                                               "each SIMD pair its half). Fitted to reference kernels 2-4, the "
                                               "WGP-mode ones, under the per-category issue rule (1.5 fitted "
                                               "them under the single-issue rule the model had before: "
                                               "benchmarks/results/issue_rule.md). The held-out fit of "
                                               "matrix_clock_fraction and launch_overhead_us, redone with "
                                               "it, moves by less than its cross-validation spread"),
    "vmem_latency": ("cycles", "calibrated", "global load issue to data in VGPRs under load (cache levels and "
                                             "queueing in one number). Fitted to reference kernel 1, whose time is "
                                             "this latency once per K step (refitted when taken branches got their "
                                             "fetch cost). 453 cycles are 181 ns; an unloaded Infinity Cache hit "
                                             "from the vector path measures about 150 ns (chipsandcheese, 'Latency "
                                             "Testing is Hard: RDNA 3 Power Saving', 2023)"),
    "vmem_bytes_per_cycle_per_cu": ("B/cycle", "assumption", "one 128-byte cache line per clock per CU on the "
                                                             "vector memory path"),
    "launch_overhead_us": ("us", "calibrated",
                           "added once to every launch's predicted time: the time from a launch to its end that "
                           "no wave's work accounts for (dispatch, the first waves' start, the end-of-kernel "
                           "flush, the timer). Fitted to rocBLAS 5.5.1's measured navi31 GEMM efficiencies "
                           "(Tensile logic files, FP16/BF16/INT8 WMMA kernels, 64 to 8192 per side) together "
                           "with matrix_clock_fraction; cross-validated by data type and by layout "
                           "(benchmarks/bench_heldout_navi31.py --fit, benchmarks/results/heldout_navi31.md). "
                           "Their shortest launches measure about 9.3 us, whatever the size. Fitted on 1,600 "
                           "sampled points: 8.6; on one data type or one layout alone: 8.45-8.80"),
    "matrix_clock_fraction": ("x clock", "calibrated",
                              "the clock a kernel that computes with WMMA sustains, as a share of clock_hz: "
                              "its SIMD cycles are run at clock_hz x this (the peak stays at clock_hz). Fitted "
                              "to the same rocBLAS navi31 measurements (all WMMA kernels) as launch_overhead_us: "
                              "their large sizes run as if the card's clock were this share of 2.5 GHz. Whether "
                              "it is the clock (a WMMA-bound 7900 XTX at its power limit) or WMMA issuing slower "
                              "than one per 32 cycles per SIMD, these measurements cannot tell. FP32 (VALU) "
                              "kernels keep clock_hz: the worklog's measured times fit it. Fitted on 1,600 sampled "
                              "points: 0.845 (2,112 MHz); on one data type alone 0.795 (INT8) to 0.880 (BF16), "
                              "on one layout 0.813-0.863"),
}

# Measured on a Radeon 7900 XTX, 4096 x 4096 FP32 GEMM (ms): the eight kernels of the GEMM worklog this
# project grew from. The calibrated parameters above were fitted to observations named in their
# notes; benchmarks/bench_estimate.py and tests/test_estimate_worklog.py compare the model with these.
REFERENCE_N = 4096
REFERENCE_MS: dict[int, tuple[str, float]] = {
    1: ("naive: one thread per output, K loop on global memory", 136.006),
    2: ("LDS tiling, 32x32 tiles", 34.2059),
    3: ("register tiling, 8x8 per thread", 6.0341),
    4: ("global-memory double buffering", 5.3772),
    5: ("LDS padding, CU mode, 16x8 per thread", 4.0994),
    6: ("bank-conflict-free dual FMAs", 3.6368),
    7: ("inner loop unrolled", 3.3314),
    8: ("global loads from SGPR bases", 2.8032),
}
