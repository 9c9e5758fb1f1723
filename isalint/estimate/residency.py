"""How many workgroups run at once on a CU (CU mode) or WGP (WGP mode), and in how many rounds the grid passes.

The workgroups a unit holds are the kernel's occupancy (:func:`isalint.model.resources.occupancy`, which
is :func:`isalint.hw.occupancy.occupancy_for`: the one place isalint computes it, so that ``estimate``,
OCC001 and the ``fix``/``optimize`` tables give the same number) for workgroups of the launch's size:
whole workgroups, each spread evenly over the unit's SIMDs, while the SIMDs' wave slots and VGPRs, the
unit's LDS and its workgroup slots have room. Because whole workgroups are placed, a kernel whose VGPRs
allow 7 waves per SIMD runs 6 of them when its workgroups put 2 waves on each SIMD (the worklog's
kernel 5/8 observation: "six wavefronts per SIMD").
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..hw.occupancy import simds_per_group
from ..hw.timing import Timing
from ..model.resources import occupancy


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


def residency(kernel, block: tuple[int, int, int], timing: Timing) -> Residency:
    wgp = kernel.wgp_mode
    simds = simds_per_group(wgp)
    units = timing.compute_units * timing.simds_per_cu // simds
    threads = block[0] * block[1] * block[2]
    vgprs = None  # the descriptor's, which the hardware allocates; without one, the metadata's
    if ".amdhsa_next_free_vgpr" not in kernel.descriptor:
        vgprs = int((kernel.metadata or {}).get(".vgpr_count", 1))
    # a part with 1024 VGPRs per lane allocates them in blocks of 16 (isalint/hw/gpus.py): the model
    # occupancy calls "legacy" (what LLVM before 16 assumed for every gfx11)
    occ = occupancy(kernel, vgprs=vgprs, group_size=threads, legacy=timing.vgprs_per_lane == 1024)
    # a workgroup too large for the unit cannot launch; the model runs one, as if it could
    groups = max(1, occ.groups)
    return Residency(wgp, units, simds, occ.waves_per_group, groups, occ.limit, occ.vgprs, occ.allocated,
                     occ.by_vgprs, occ.lds)


@dataclass
class Rounds:
    full: int  # rounds with every unit holding groups_per_unit workgroups
    last: int  # workgroups on the busiest unit in the final, partial round (0: none)


def rounds(total_groups: int, res: Residency) -> Rounds:
    capacity = res.units * res.groups_per_unit
    full = total_groups // capacity
    rem = total_groups - full * capacity
    return Rounds(full, math.ceil(rem / res.units) if rem else 0)
