"""The RDNA3 parts ``isalint estimate --gpu`` knows: compute units, clocks, memory, and the peaks they give.

Every part's figures are from its AMD product page (the URL in ``source``), as published there:

* compute units, boost clock and (for the discrete cards) game clock; for the APUs the page gives one
  "graphics frequency" (the highest the iGPU runs at), used as both;
* memory bandwidth: for a discrete card the page's "effective memory bandwidth" (memory speed x bus
  width); for an APU, which shares system memory, the fastest memory the page lists on its full bus
  (LPDDR5x-7500 on 128 bits: 120 GB/s; Strix Halo's LPDDR5x-8000 on 256 bits: 256 GB/s);
* AMD Infinity Cache (the last-level cache in front of DRAM) where the page lists it (0: not
  listed): for reference, the model does not use it (it charges global memory one loaded latency, see :mod:`.timing`);
* the VGPR file per SIMD lane in wave32: 1536 on gfx1100, gfx1101 and gfx1151, 1024 on gfx1102,
  gfx1103 and gfx1150 (LLVM ``AMDGPU.td``: ``FeatureGFX11FullVGPRs`` is set for the former only;
  ``AMDGPUBaseInfo.cpp`` ``getTotalNumVGPRs``/``getVGPRAllocGranule``: 1536 in blocks of 24, else
  1024 in blocks of 16). It decides occupancy.

Peak throughput per data type follows from CUs x clock x the per-CU rate of one clock (RDNA3 ISA
guide; AMD's "Peak ... Performance" lines on the same pages are these products at the boost clock):

* FP32 on the VALU: 2 SIMD32 per CU, each a dual-issued FMA (2 FLOP) on 2 x 32 lanes: 256 FLOP;
* FP16 / BF16 / INT8 on the matrix path (WMMA): a 16x16x16 multiply-accumulate (8,192 operations)
  per 32 clocks per SIMD: 512 per CU (the 7900 XTX page: 122.8 TFLOP/s FP16 at 2.5 GHz x 96 CUs);
  INT4 (16x16x32): 1,024.

The latencies and the calibrated parameters of :mod:`.timing` are gfx1100's (measured on a 7900
XTX); for another part only the chip-level figures above change.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# FLOP (or integer operations) per CU per clock, by data type (see the module text)
RATE_PER_CU = {
    "fp32": 256,  # VALU, dual-issued FMA
    "fp16": 512,  # WMMA
    "bf16": 512,  # WMMA
    "int8": 512,  # WMMA
    "int4": 1024,  # WMMA
}
DTYPE_TEXT = {
    "fp32": "FP32 (VALU, dual-issue FMA)",
    "fp16": "FP16 matrix (WMMA)",
    "bf16": "BF16 matrix (WMMA)",
    "int8": "INT8 matrix (WMMA)",
    "int4": "INT4 matrix (WMMA)",
}


def rate_unit(dtype: str) -> str:
    """Operations per second of ``dtype``'s math: integer matrices count operations, not FLOPs."""
    return "TOP/s" if dtype in ("int8", "int4") else "TFLOP/s"


@dataclass(frozen=True)
class Gpu:
    key: str  # the canonical --gpu name
    name: str  # the product
    target: str  # gfx target
    compute_units: int
    boost_mhz: int
    game_mhz: int
    memory_gb_s: float
    memory: str  # what the bandwidth is made of
    infinity_cache_mb: int  # 0: none
    vgprs_per_lane: int  # VGPR file per SIMD lane, wave32
    source: str
    aliases: tuple[str, ...] = ()

    def peak(self, dtype: str = "fp32") -> float:
        """Operations per second of ``dtype`` at the boost clock."""
        return self.compute_units * self.boost_mhz * 1e6 * RATE_PER_CU[dtype]


_AMD = "https://www.amd.com/en/products/"
GPUS: tuple[Gpu, ...] = (
    Gpu("7900xtx", "Radeon RX 7900 XTX", "gfx1100", 96, 2500, 2300, 960.0, "20 Gbps GDDR6, 384-bit", 96, 1536,
        _AMD + "graphics/desktops/radeon/7000-series/amd-radeon-rx-7900xtx.html"),
    Gpu("7900xt", "Radeon RX 7900 XT", "gfx1100", 84, 2400, 2000, 800.0, "20 Gbps GDDR6, 320-bit", 80, 1536,
        _AMD + "graphics/desktops/radeon/7000-series/amd-radeon-rx-7900xt.html"),
    Gpu("7900gre", "Radeon RX 7900 GRE", "gfx1100", 80, 2245, 1880, 576.0, "18 Gbps GDDR6, 256-bit", 64, 1536,
        _AMD + "graphics/desktops/radeon/7000-series/amd-radeon-rx-7900-gre.html"),
    Gpu("7800xt", "Radeon RX 7800 XT", "gfx1101", 60, 2430, 2124, 624.0, "19.5 Gbps GDDR6, 256-bit", 64, 1536,
        _AMD + "graphics/desktops/radeon/7000-series/amd-radeon-rx-7800-xt.html"),
    Gpu("7700xt", "Radeon RX 7700 XT", "gfx1101", 54, 2544, 2171, 432.0, "18 Gbps GDDR6, 192-bit", 48, 1536,
        _AMD + "graphics/desktops/radeon/7000-series/amd-radeon-rx-7700-xt.html"),
    Gpu("7600", "Radeon RX 7600", "gfx1102", 32, 2655, 2250, 288.0, "18 Gbps GDDR6, 128-bit", 32, 1024,
        _AMD + "graphics/desktops/radeon/7000-series/amd-radeon-rx-7600.html"),
    Gpu("780m", "Radeon 780M (Ryzen 9 7940HS)", "gfx1103", 12, 2800, 2800, 120.0,
        "shared LPDDR5x-7500, 128-bit", 0, 1024,
        _AMD + "processors/laptop/ryzen/7000-series/amd-ryzen-9-7940hs.html", ("phoenix",)),
    Gpu("890m", "Radeon 890M (Strix Point, Ryzen AI 9 HX 370)", "gfx1150", 16, 2900, 2900, 120.0,
        "shared LPDDR5x-7500, 128-bit", 0, 1024,
        _AMD + "processors/laptop/ryzen/ai-300-series/amd-ryzen-ai-9-hx-370.html", ("strixpoint",)),
    Gpu("8060s", "Radeon 8060S (Strix Halo, Ryzen AI Max+ 395)", "gfx1151", 40, 2900, 2900, 256.0,
        "shared LPDDR5x-8000, 256-bit", 0, 1536,
        _AMD + "processors/laptop/ryzen/ai-300-series/amd-ryzen-ai-max-plus-395.html", ("strixhalo",)),
)
# a gfx target names its first (largest) part above
DEFAULT_GPU = "7900xtx"


class UnknownGpu(ValueError):
    pass


def _norm(text: str) -> str:
    t = re.sub(r"[^a-z0-9]", "", text.lower())
    for prefix in ("amd", "radeon", "rx"):
        if t.startswith(prefix):
            t = t[len(prefix):]
    return t


def targets() -> dict[str, Gpu]:
    """gfx target -> the part it stands for (the first listed of that target)."""
    out: dict[str, Gpu] = {}
    for g in GPUS:
        out.setdefault(g.target, g)
    return out


def find(name: str) -> Gpu:
    """The part ``name`` names: its key (``7900xtx``), product name (``Radeon RX 7900 XTX``,
    case, spaces and dashes ignored), alias (``strix-halo``) or gfx target (``gfx1101``)."""
    key = _norm(name)
    by_target = targets()
    if key in by_target:
        return by_target[key]
    for g in GPUS:
        if key in (g.key, _norm(g.name)) or key in g.aliases:
            return g
    known = ", ".join([g.key for g in GPUS] + sorted(by_target))
    raise UnknownGpu(f"--gpu {name!r}: unknown GPU (known: {known}; --gpu list shows them)")


def table() -> str:
    """The parts and their figures, for ``isalint estimate --gpu list``."""
    head = (f"{'--gpu':8s} {'target':8s} {'CUs':>4s} {'boost':>6s} {'game':>6s} {'GB/s':>6s} {'IC MB':>5s} "
            f"{'VGPRs':>5s} {'FP32':>6s} {'FP16':>6s} {'BF16':>6s} {'INT8':>6s}  product")
    rows = [head]
    for g in GPUS:
        peaks = " ".join(f"{g.peak(d) / 1e12:6.1f}" for d in ("fp32", "fp16", "bf16", "int8"))
        rows.append(f"{g.key:8s} {g.target:8s} {g.compute_units:4d} {g.boost_mhz:6d} {g.game_mhz:6d} "
                    f"{g.memory_gb_s:6.0f} {g.infinity_cache_mb or '-':>5} {g.vgprs_per_lane:5d} {peaks}  {g.name}")
    rows.append("")
    rows.append("clocks in MHz; peaks in TFLOP/s (TOP/s for INT8) at the boost clock: CUs x clock x "
                + ", ".join(f"{RATE_PER_CU[d]} {d.upper()}" for d in ("fp32", "fp16", "bf16", "int8"))
                + " per CU per clock")
    rows.append("a gfx target stands for its first part: " + ", ".join(f"{t} = {g.key}" for t, g in targets().items()))
    rows.append("sources (AMD product pages):")
    for g in GPUS:
        rows.append(f"  {g.key:8s} {g.source}  ({g.memory})")
    return "\n".join(rows)
