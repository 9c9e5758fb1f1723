"""Occupancy: how many waves of a kernel one SIMD holds, from its VGPRs, LDS and workgroup size.

Sources:

* LLVM's AMDGPU backend, whose occupancy model these functions reproduce so that they match the
  ``; Occupancy:`` comment clang writes (``AMDGPUBaseInfo``: ``getTotalNumVGPRs``,
  ``getVGPRAllocGranule``, ``getNumWavesPerEUWithNumVGPRs``; ``getOccupancyWithLocalMemSize``): gfx1100
  has 1536 VGPRs per SIMD lane in wave32 (768 in wave64) allocated in blocks of 24 (12), at most 16
  waves per SIMD, 64 KiB of LDS for the workgroups of one CU (two SIMDs) in CU mode or of one WGP (four
  SIMDs) in WGP mode, at most 16 workgroups per CU (32 per WGP).
* RDNA3 ISA guide, chapter 3 "Kernel State" (VGPR allocation per wave) and chapter 11 "Data Share
  Operations" (LDS allocation per workgroup, CU and WGP modes).
* LLVM releases before 16 modelled gfx11 with 1024 VGPRs in blocks of 16 (``legacy``); a file compiled
  by them carries that model's numbers in its comments.
"""
from __future__ import annotations

from ..records import FrozenRecord, Record

MAX_WAVES_PER_SIMD = 16  # gfx10.3 and later
LDS_BYTES = 65536  # what LLVM's model gives one CU (CU mode) or one WGP (WGP mode); a workgroup's most
MAX_WORKGROUP_SIZE = 1024  # work-items of one workgroup (LLVM AMDGPUUsage: flat workgroup size 1..1024)


class VgprModel(FrozenRecord):
    total: int  # VGPRs per SIMD lane
    granule: int  # allocation block
    note: str

    _fields = ("total", "granule", "note")

    def __init__(self, total: int, granule: int, note: str):
        self.__dict__.update(total=total, granule=granule, note=note)


def vgpr_model(wave_size: int, legacy: bool = False) -> VgprModel:
    """gfx1100's VGPR file; ``legacy`` is what LLVM before 16 assumed for gfx11."""
    if legacy:
        return VgprModel(1024 if wave_size == 32 else 512, 16 if wave_size == 32 else 8,
                         "LLVM before 16 modelled gfx11 with 1024 VGPRs in blocks of 16")
    return VgprModel(1536 if wave_size == 32 else 768, 24 if wave_size == 32 else 12, "")


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


class Occupancy(Record):
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

    _fields = ("waves", "by_vgprs", "by_lds", "by_group", "vgprs", "allocated", "lds", "group_size", "wave_size",
               "wgp_mode", "model")

    def __init__(self, waves: int, by_vgprs: int, by_lds: int, by_group: int, vgprs: int, allocated: int, lds: int,
                 group_size: int, wave_size: int, wgp_mode: bool, model: VgprModel):
        self.waves = waves
        self.by_vgprs = by_vgprs
        self.by_lds = by_lds
        self.by_group = by_group
        self.vgprs = vgprs
        self.allocated = allocated
        self.lds = lds
        self.group_size = group_size
        self.wave_size = wave_size
        self.wgp_mode = wgp_mode
        self.model = model

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


def occupancy_for(vgprs: int, lds: int, group_size: int, wave_size: int, wgp_mode: bool,
                  legacy: bool = False) -> Occupancy:
    """Waves per SIMD of a kernel with these resources, and what each limit allows."""
    model = vgpr_model(wave_size, legacy)
    bv = waves_by_vgprs(vgprs, model)
    bl = waves_by_lds(lds, group_size, wave_size, wgp_mode)
    bg = waves_by_group(group_size, wave_size, wgp_mode)
    return Occupancy(min(bv, bl, bg, MAX_WAVES_PER_SIMD), bv, bl, bg, vgprs, allocated_vgprs(vgprs, model), lds,
                     group_size, wave_size, wgp_mode, model)


def lds_for_waves(target: int, occ: Occupancy) -> int | None:
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
