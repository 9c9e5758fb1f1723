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

## Severity
Info: occupancy is a trade-off the kernel's author makes, not a defect.

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

from isalint.diagnostics import at_line
from isalint.hw.occupancy import (LDS_BYTES, MAX_WAVES_PER_SIMD, Occupancy, lds_for_waves, simds_per_group,
                                   vgprs_for_waves, waves_by_lds, waves_per_group)
from isalint.model.resources import comment_fields, compiler_is_legacy, occupancy

CODE = "OCC001"
NAME = "occupancy"
SEVERITY = "info"
SUMMARY = "Waves per SIMD allowed by VGPRs, LDS and workgroup size, and what limits them"
FIXABLE = None

def check(analysis):
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
        budget = lds_for_waves(target, occ)
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

