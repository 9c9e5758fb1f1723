"""How many workgroups run at once on a CU (CU mode) or WGP (WGP mode), and in how many rounds the grid passes.

A workgroup's waves are spread evenly over the SIMDs of its CU (2 SIMDs, ``-mcumode``) or of its
WGP (4 SIMDs); the RDNA3 ISA guide's description of the two LDS modes ("Local Data Share"). A unit
takes another workgroup only if every SIMD has room for that workgroup's waves:

* VGPRs: the per-SIMD wave count of :mod:`isalint.hw.occupancy` (1536 VGPRs per lane in wave32,
  allocated in blocks of 24; at most 16 waves);
* LDS: 64 KiB per CU (128 KiB per WGP), ``.group_segment_fixed_size`` per workgroup;
* at most 16 workgroups per CU (32 per WGP).

Because whole workgroups are placed, a kernel whose VGPRs allow 7 waves per SIMD runs 6 of them
when its workgroups put 2 waves on each SIMD (the worklog's kernel 5/8 observation: "six
wavefronts per SIMD").
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..hw.occupancy import LDS_BYTES, MAX_WAVES_PER_SIMD, allocated_vgprs, simds_per_group, vgpr_model, waves_by_vgprs
from ..hw.timing import Timing


@dataclass
class Residency:
    wgp_mode: bool
    units: int  # CUs or WGPs
    simds_per_unit: int
    waves_per_group: int
    groups_per_unit: int
    limit: str  # what stops one more workgroup
    vgprs: int
    allocated_vgprs: int
    waves_by_vgprs: int
    lds_bytes: int

    @property
    def waves_per_simd(self) -> float:
        return self.groups_per_unit * self.waves_per_group / self.simds_per_unit

    def local_waves(self) -> int:
        """Waves of one workgroup on one SIMD."""
        return max(1, self.waves_per_group // self.simds_per_unit)

    def groups_on_simd(self, groups_per_unit: int) -> int:
        return max(1, round(groups_per_unit * self.waves_per_group / self.simds_per_unit / self.local_waves()))


def kernel_vgprs(kernel) -> int:
    md = kernel.metadata or {}
    if ".vgpr_count" in md:
        return int(md[".vgpr_count"])
    return int(kernel.descriptor.get(".amdhsa_next_free_vgpr", 1))


def residency(kernel, block: tuple[int, int, int], timing: Timing) -> Residency:
    wave = kernel.wave_size
    wgp = kernel.wgp_mode
    simds = simds_per_group(wgp)
    units = timing.compute_units * timing.simds_per_cu // simds
    threads = block[0] * block[1] * block[2]
    wpg = max(1, math.ceil(threads / wave))
    vgprs = kernel_vgprs(kernel)
    model = vgpr_model(wave)
    alloc = allocated_vgprs(vgprs, model)
    by_vgpr_waves = waves_by_vgprs(vgprs, model)
    lds = int((kernel.metadata or {}).get(".group_segment_fixed_size",
                                          kernel.descriptor.get(".amdhsa_group_segment_fixed_size", 0)))
    lds_total = LDS_BYTES * (2 if wgp else 1)
    limits = {  # in a tie the first one is named
        "wave slots": MAX_WAVES_PER_SIMD * simds // wpg,
        "VGPRs": by_vgpr_waves * simds // wpg,
        "LDS": lds_total // lds if lds else 1 << 30,
        "workgroups per unit": 32 if wgp else 16,
    }
    limit = min(limits, key=lambda k: limits[k])
    groups = max(1, limits[limit])
    return Residency(wgp, units, simds, wpg, groups, limit, vgprs, alloc, by_vgpr_waves, lds)


@dataclass
class Rounds:
    full: int  # rounds with every unit holding groups_per_unit workgroups
    last: int  # workgroups on the busiest unit in the final, partial round (0: none)


def rounds(total_groups: int, res: Residency) -> Rounds:
    capacity = res.units * res.groups_per_unit
    full = total_groups // capacity
    rem = total_groups - full * capacity
    return Rounds(full, math.ceil(rem / res.units) if rem else 0)
