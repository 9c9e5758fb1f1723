"""OCC001: occupancy - waves per SIMD and what limits them.

## What it finds
For each kernel below the hardware maximum of 16 waves per SIMD: how many
waves each SIMD runs at once, which limit holds it there, and what it takes
to reach the next step. The hardware places whole workgroups: a CU (two
SIMDs; a WGP, four SIMDs, in WGP mode) takes another workgroup only while it
has room for all of that workgroup's waves, spread evenly over its SIMDs:

- **VGPRs.** A gfx1100 SIMD has 1536 VGPRs per lane in wave32 (768 in wave64),
  handed out in blocks of 24 (wave32) or 12 (wave64) registers: a wave32 kernel
  declaring `.amdhsa_next_free_vgpr 208` gets 216, and 1536 / 216 = 7 waves
  per SIMD by VGPRs alone. At most 16 waves per SIMD on RDNA3.
- **LDS.** `.group_segment_fixed_size` bytes per workgroup, out of the 64 KiB of
  a CU in CU mode (`-mcumode`, `.amdhsa_workgroup_processor_mode 0`) or the
  128 KiB of a WGP in WGP mode.
- **Workgroup size.** Its work-items make `ceil(size / wave size)` waves that
  must fit together, and a CU holds at most 16 workgroups (32 per WGP in WGP
  mode). The size is the metadata's `.reqd_workgroup_size`, else the launch a
  `kernels.json` beside the file records (`"block"`), else the launch bounds
  (`.max_flat_workgroup_size` below 1024); a kernel without launch bounds may
  be launched with up to 1024 work-items, and the message says that this
  1024 is an assumption.

So kernel 5 (208 VGPRs, workgroups of 4 waves, CU mode) runs 6 waves per SIMD,
not 7: the VGPRs of two SIMDs hold 14 waves, 3 whole workgroups. The message
gives the occupancy the hardware achieves, each limit in workgroups, the
VGPR-only limit as the detail, and the VGPR count (`free 16 VGPRs (208 -> 192)
for 8 waves`) or the LDS budget that reaches the next whole workgroup. Where
the compiler's `; Occupancy:` comment says otherwise, the message says why:
LLVM counts the waves the limits allow without rounding to whole workgroups,
and before release 16 computed gfx1100's VGPRs as 1024 in blocks of 16.

## Severity
Info: occupancy is a trade-off the kernel's author makes, not a defect.

## Why it matters
Waves in flight are how a SIMD hides memory latency. Register-tiled GEMMs
trade occupancy for registers on purpose (a 16x8 tile per thread takes 208
VGPRs); the finding tells how close the kernel sits to a step, since freeing a
few registers can buy a whole workgroup, while freeing many may buy nothing.

## Example
```
kernel: OCC001 occupancy 6 waves/SIMD (of 16), limited by VGPRs: 3 workgroups of
4 waves per CU (2 SIMDs); 208 VGPRs are allocated as 216 (blocks of 24, 1536
per SIMD) -> 7 waves per SIMD, 3 workgroups; LDS ...
```

## Fix safety
Information only.

## Reference
RDNA3 ISA guide, "Vector General-Purpose Registers" and "Local Data Share"
(register and LDS allocation per wave and workgroup, CU and WGP modes); LLVM
AMDGPUUsage, "Code Object V3+ kernel descriptor" (`GRANULATED_WORKITEM_VGPR_COUNT`).
"""
from __future__ import annotations

from isalint.diagnostics import at_line
from isalint.hw.occupancy import (MAX_WAVES_PER_SIMD, MAX_WORKGROUP_SIZE, Occupancy, lds_for_groups, lds_per_unit,
                                   vgprs_for_groups, waves_per_simd)
from isalint.model.resources import comment_fields, compiler_is_legacy, launch_size, occupancy

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
        size, source = launch_size(kernel, program.path)
        occ = occupancy(kernel, group_size=size)
        if occ is None or occ.waves >= MAX_WAVES_PER_SIMD:
            continue  # nothing limits it: no finding
        line = kernel.descriptor_lines.get(".amdhsa_next_free_vgpr") or kernel.symbol_line
        if line is None:
            continue
        yield at_line(program.path, line, CODE, SEVERITY,
                      _message(occ, comments.get(kernel.name, {}), kernel, legacy, source))


def _message(occ: Occupancy, comments: dict, kernel, legacy: bool, source: str = "") -> str:
    ws, wpg, groups, limits = occ.wave_size, occ.waves_per_group, occ.groups, occ.group_limits
    unit = "CU (2 SIMDs)" if not occ.wgp_mode else "WGP (4 SIMDs)"
    named = occ.limits
    msg = f"occupancy {occ.waves:g} waves/SIMD (of {MAX_WAVES_PER_SIMD})"
    msg += f", limited by {' and '.join(named)}" if named else ", the hardware maximum"
    if groups:
        msg += f": {_n(groups, 'workgroup')} of {_n(wpg, 'wave')} per {unit}"
    else:
        msg += f": no workgroup of {_n(wpg, 'wave')} fits a {unit}, so the kernel cannot launch with it"
    lds = (f"LDS {occ.lds} bytes/workgroup of {lds_per_unit(occ.wgp_mode) // 1024} KiB per {unit.split()[0]} -> "
           f"{_n(limits['LDS'], 'workgroup')}" if occ.lds > 0 else "no LDS")
    slots = min(limits["wave slots"], limits["workgroups per unit"])
    detail = [
        f"{occ.vgprs} VGPRs are allocated as {occ.allocated} (blocks of {occ.model.granule}, "
        f"{occ.model.total} per SIMD) -> {occ.by_vgprs} waves per SIMD, {_n(limits['VGPRs'], 'workgroup')}",
        lds,
        f"workgroups of {occ.group_size} work-items ({_n(wpg, 'wave')}"
        + (f", from {source}" if source else f", assumed: the kernel has no launch bounds and the metadata allows "
           f"up to {MAX_WORKGROUP_SIZE}; __launch_bounds__ or a kernels.json launch gives the real size")
        + f") -> {slots}",
    ]
    msg += "; " + "; ".join(detail)
    target = groups + 1
    if "VGPRs" in named:
        others = min(v for k, v in limits.items() if k != "VGPRs")
        fit = vgprs_for_groups(target, occ)
        if fit > 0 and others >= target:
            msg += (f"; free {occ.vgprs - fit} VGPRs ({occ.vgprs} -> {fit}) for "
                    f"{waves_per_simd(target, occ.group_size, ws, occ.wgp_mode):g} waves ({target} workgroups)")
        elif fit > 0:
            msg += f"; fewer VGPRs alone would not help: LDS or workgroup size caps at {_n(others, 'workgroup')}"
    if "LDS" in named:
        others = min(v for k, v in limits.items() if k != "LDS")
        budget = lds_for_groups(target, occ)
        if budget > 0 and others >= target:
            reach = min(lds_per_unit(occ.wgp_mode) // budget, others)
            msg += (f"; at most {budget} bytes of LDS per workgroup for "
                    f"{waves_per_simd(reach, occ.group_size, ws, occ.wgp_mode):g} waves")
    stated = comments.get("Occupancy")
    planned = occupancy(kernel)  # the workgroup size the compiler planned for, as its comment counts
    if stated is not None and stated.value != occ.waves:
        old = occupancy(kernel, legacy=True)
        if planned is not None and stated.value == planned.compiler_waves:
            msg += (f"; the compiler's comment says {stated.value}: LLVM counts the waves the limits allow, "
                    "not whole workgroups")
        elif legacy and old is not None and old.compiler_waves == stated.value:
            msg += (f"; the compiler's comment says {stated.value}: {old.model.note}, "
                    f"gfx1100 has {occ.model.total}")
        else:
            msg += f"; the compiler's comment says {stated.value}"
    return msg


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
