"""OCC001: occupancy - waves per SIMD and what limits them.

## What it finds
For each kernel below the hardware maximum of 16 waves per SIMD: how many
waves each SIMD can hold at once, from its three per-kernel limits, which one
is the limit, and what it takes to reach the next step:

- **VGPRs.** A gfx1100 SIMD has 1536 VGPRs per lane in wave32 (768 in wave64),
  handed out in blocks of 24 (wave32) or 12 (wave64) registers: a wave32 kernel
  declaring `.amdhsa_next_free_vgpr 208` gets 216, and 1536 / 216 = 7 waves. At
  most 16 waves per SIMD on RDNA3.
- **LDS.** `.group_segment_fixed_size` bytes per workgroup out of 64 KiB, shared
  by the workgroups on one CU (two SIMDs) in CU mode (`-mcumode`,
  `.amdhsa_workgroup_processor_mode 0`) or on one WGP (four SIMDs) in WGP mode.
- **Workgroup size.** `.max_flat_workgroup_size` work-items make
  `ceil(size / wave size)` waves that must fit together, and a CU holds at most
  16 workgroups (32 per WGP in WGP mode).

The numbers follow the compiler's own occupancy model (LLVM's AMDGPU
`getNumWavesPerEUWithNumVGPRs`, `getOccupancyWithLocalMemSize`), so they match
the `; Occupancy:` comment clang writes; when they differ, the message says
why (LLVM releases before 16 did not know gfx1100's larger VGPR file and
computed with 1024 VGPRs in blocks of 16). The message also gives the VGPR
count to reach one more wave (`free 16 VGPRs (208 -> 192) for 8 waves`) or the
LDS budget when LDS is the limit.

## Why it matters
Waves in flight are how a SIMD hides memory latency. Register-tiled GEMMs
trade occupancy for registers on purpose (a 16x8 tile per thread takes 208
VGPRs and runs 7 waves); the finding tells how close the kernel sits to a step, since freeing a
few registers can buy a whole wave, while freeing many may buy nothing.

## Example
```
kernel: OCC001 occupancy 7 waves/SIMD (of 16), limited by VGPRs: 208 VGPRs are
allocated as 216 (blocks of 24, 1536 per SIMD); LDS allows 14 ...
```

## Fix safety
Information only.

## Reference
RDNA3 ISA guide, "Vector General-Purpose Registers" and "Local Data Share"
(register and LDS allocation per wave and workgroup); LLVM AMDGPUUsage,
"Code Object V3+ kernel descriptor" (`GRANULATED_WORKITEM_VGPR_COUNT`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from isalint.diagnostics import at_line

CODE = "OCC001"
NAME = "occupancy"
SEVERITY = "info"
SUMMARY = "Waves per SIMD allowed by VGPRs, LDS and workgroup size, and what limits them"
FIXABLE = None

MAX_WAVES_PER_SIMD = 16  # gfx10.3 and later
LDS_BYTES = 65536  # what LLVM's model gives one CU (CU mode) or one WGP (WGP mode)
_CLANG = re.compile(r"clang version (\d+)")


@dataclass(frozen=True)
class VgprModel:
    total: int  # VGPRs per SIMD lane
    granule: int  # allocation block
    note: str


def vgpr_model(wave_size: int, legacy: bool = False) -> VgprModel:
    """gfx1100's VGPR file; ``legacy`` is what LLVM before 16 assumed for gfx11."""
    if legacy:
        return VgprModel(1024 if wave_size == 32 else 512, 16 if wave_size == 32 else 8,
                         "LLVM before 16 modelled gfx11 with 1024 VGPRs in blocks of 16")
    return VgprModel(1536 if wave_size == 32 else 768, 24 if wave_size == 32 else 12, "")


def compiler_is_legacy(program) -> bool:
    """True when the file's .ident names a clang older than 16 (no gfx1100 1.5x VGPR model)."""
    for line in program.source.lines:
        if line.kind == "directive" and line.directive == ".ident":
            m = _CLANG.search(line.args)
            if m:
                return int(m.group(1)) < 16
    return False


def allocated_vgprs(vgprs: int, model: VgprModel) -> int:
    g = model.granule
    return max(g, -(-max(1, vgprs) // g) * g)


def waves_by_vgprs(vgprs: int, model: VgprModel) -> int:
    if vgprs < model.granule:
        return MAX_WAVES_PER_SIMD
    return min(max(model.total // allocated_vgprs(vgprs, model), 1), MAX_WAVES_PER_SIMD)


def vgprs_for_waves(waves: int, model: VgprModel) -> int:
    """The most VGPRs a kernel may use and still fit ``waves`` waves per SIMD."""
    return (model.total // waves) // model.granule * model.granule


def simds_per_group(wgp_mode: bool) -> int:
    return 4 if wgp_mode else 2


def waves_per_group(group_size: int, wave_size: int) -> int:
    return max(1, -(-group_size // wave_size))


def max_groups_per_cu(group_size: int, wave_size: int, wgp_mode: bool) -> int:
    n = waves_per_group(group_size, wave_size)
    max_waves = MAX_WAVES_PER_SIMD * simds_per_group(wgp_mode)
    if n == 1:
        return max_waves
    return min(max_waves // n, 32 if wgp_mode else 16)


def waves_by_lds(lds_bytes: int, group_size: int, wave_size: int, wgp_mode: bool) -> int:
    """LLVM's getOccupancyWithLocalMemSize for gfx11."""
    groups = min(LDS_BYTES // max(1, lds_bytes), max_groups_per_cu(group_size, wave_size, wgp_mode))
    if groups == 0:
        return 1
    waves = groups * waves_per_group(group_size, wave_size)
    return min(-(-waves // simds_per_group(wgp_mode)), MAX_WAVES_PER_SIMD)


def waves_by_group(group_size: int, wave_size: int, wgp_mode: bool) -> int:
    groups = max_groups_per_cu(group_size, wave_size, wgp_mode)
    waves = groups * waves_per_group(group_size, wave_size)
    return min(-(-waves // simds_per_group(wgp_mode)), MAX_WAVES_PER_SIMD)


@dataclass
class Occupancy:
    waves: int
    by_vgprs: int
    by_lds: int
    by_group: int
    vgprs: int
    allocated: int
    lds: int
    group_size: int
    wave_size: int
    wgp_mode: bool
    model: VgprModel

    @property
    def limits(self) -> list[str]:
        out = []
        if self.by_vgprs == self.waves and self.waves < MAX_WAVES_PER_SIMD:
            out.append("VGPRs")
        if self.by_lds == self.waves and self.waves < MAX_WAVES_PER_SIMD:
            out.append("LDS")
        if self.by_group == self.waves and self.waves < MAX_WAVES_PER_SIMD:
            out.append("workgroup size")
        return out


def occupancy(kernel, vgprs: int | None = None, legacy: bool = False) -> Occupancy | None:
    """The kernel's occupancy from its descriptor and metadata (None without a descriptor)."""
    d = kernel.descriptor
    if ".amdhsa_next_free_vgpr" not in d and vgprs is None:
        return None
    ws = kernel.wave_size
    model = vgpr_model(ws, legacy)
    n = d.get(".amdhsa_next_free_vgpr", 0) if vgprs is None else vgprs
    meta = kernel.metadata or {}
    group = meta.get(".max_flat_workgroup_size")
    if not isinstance(group, int) or group <= 0:
        group = 1024  # the compiler's default flat workgroup size range is 1..1024
    lds = d.get(".amdhsa_group_segment_fixed_size", meta.get(".group_segment_fixed_size", 0)) or 0
    wgp = kernel.wgp_mode
    bv = waves_by_vgprs(n, model)
    bl = waves_by_lds(lds, group, ws, wgp)
    bg = waves_by_group(group, ws, wgp)
    return Occupancy(min(bv, bl, bg, MAX_WAVES_PER_SIMD), bv, bl, bg, n, allocated_vgprs(n, model), lds, group, ws,
                     wgp, model)


def check(analysis):
    from isalint.rules.meta001 import comment_fields

    program = analysis.program
    comments = comment_fields(program)
    legacy = compiler_is_legacy(program)
    for kernel in program.kernels:
        occ = occupancy(kernel)
        if occ is None or occ.waves >= MAX_WAVES_PER_SIMD:
            continue  # nothing limits it: no finding
        line = kernel.descriptor_lines.get(".amdhsa_next_free_vgpr") or kernel.symbol_line
        if line is None:
            continue
        yield at_line(program.path, line, CODE, SEVERITY, _message(occ, comments.get(kernel.name, {}), kernel, legacy))


def _message(occ: Occupancy, comments: dict, kernel, legacy: bool) -> str:
    ws = occ.wave_size
    parts = [f"occupancy {occ.waves} waves/SIMD (of {MAX_WAVES_PER_SIMD})"]
    limits = occ.limits
    parts[0] += f", limited by {' and '.join(limits)}" if limits else ", the hardware maximum"
    unit = "CU (2 SIMDs)" if not occ.wgp_mode else "WGP (4 SIMDs)"
    detail = [
        f"{occ.vgprs} VGPRs are allocated as {occ.allocated} (blocks of {occ.model.granule}, "
        f"{occ.model.total} per SIMD) -> {occ.by_vgprs} waves",
        f"LDS {occ.lds} bytes/workgroup of {LDS_BYTES // 1024} KiB per {unit} -> {occ.by_lds}",
        f"workgroups of {occ.group_size} work-items ({waves_per_group(occ.group_size, ws)} waves) -> {occ.by_group}",
    ]
    msg = parts[0] + ": " + "; ".join(detail)
    if "VGPRs" in limits:
        target = occ.waves + 1
        fit = vgprs_for_waves(target, occ.model)
        if fit > 0 and min(occ.by_lds, occ.by_group) >= target:
            msg += f"; free {occ.vgprs - fit} VGPRs ({occ.vgprs} -> {fit}) for {target} waves"
        elif fit > 0:
            msg += f"; fewer VGPRs alone would not help: LDS or workgroup size caps at {min(occ.by_lds, occ.by_group)}"
    if "LDS" in limits:
        target = occ.waves + 1
        budget = _lds_for_waves(target, occ)
        if budget is not None and min(occ.by_vgprs, occ.by_group) >= target:
            reach = min(waves_by_lds(budget, occ.group_size, ws, occ.wgp_mode), occ.by_vgprs, occ.by_group)
            msg += f"; at most {budget} bytes of LDS per workgroup for {reach} waves"
    groups = occ.waves * simds_per_group(occ.wgp_mode) // waves_per_group(occ.group_size, ws)
    whole = groups * waves_per_group(occ.group_size, ws)
    per_simd = whole // simds_per_group(occ.wgp_mode)
    if 0 < per_simd < occ.waves:
        msg += (f" (whole workgroups: {groups} per {unit.split()[0]} = {whole} waves, "
                f"about {per_simd} per SIMD)")
    stated = comments.get("Occupancy")
    if stated is not None and stated.value != occ.waves:
        old = occupancy(kernel, legacy=True)
        if legacy and old is not None and old.waves == stated.value:
            msg += (f"; the compiler's comment says {stated.value}: {old.model.note}, "
                    f"gfx1100 has {occ.model.total}")
        else:
            msg += f"; the compiler's comment says {stated.value}"
    return msg


def _lds_for_waves(target: int, occ: Occupancy) -> int | None:
    """The largest LDS size per workgroup that still allows ``target`` waves per SIMD."""
    per_group = waves_per_group(occ.group_size, occ.wave_size)
    groups = -(-(target - 1) * simds_per_group(occ.wgp_mode) // per_group)
    groups = max(groups, 1)
    while groups <= max_groups_per_cu(occ.group_size, occ.wave_size, occ.wgp_mode):
        lds = LDS_BYTES // groups
        if waves_by_lds(lds, occ.group_size, occ.wave_size, occ.wgp_mode) >= target:
            return lds
        groups += 1
    return None
