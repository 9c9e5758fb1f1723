"""Occupancy: how many waves of a kernel one SIMD holds, from its VGPRs, LDS and workgroup size.

Sources:

* LLVM's AMDGPU backend, whose occupancy model these functions reproduce so that they match the
  ``; Occupancy:`` comment clang writes (``AMDGPUBaseInfo``: ``getTotalNumVGPRs``,
  ``getVGPRAllocGranule``, ``getNumWavesPerEUWithNumVGPRs``; ``getOccupancyWithLocalMemSize``): gfx1100
  has 1536 VGPRs per SIMD lane in wave32 (768 in wave64) allocated in blocks of 24 (12), at most 16
  waves per SIMD, 64 KiB of LDS for the workgroups of one CU (two SIMDs) in CU mode and 128 KiB for those
  of one WGP (four SIMDs) in WGP mode (``GCNSubtarget``: ``LocalMemorySize`` doubled without ``cumode``),
  at most 16 workgroups per CU (32 per WGP).
* RDNA3 ISA guide, chapter 3 "Kernel State" (VGPR allocation per wave) and chapter 11 "Data Share
  Operations" (LDS allocation per workgroup, CU and WGP modes).
* LLVM releases before 16 modelled gfx11 with 1024 VGPRs in blocks of 16 (``legacy``); a file compiled
  by them carries that model's numbers in its comments.

The occupancy isalint reports (OCC001, the ``fix`` and ``optimize`` tables, ``estimate``) is the one the
hardware achieves: the dispatcher places whole workgroups, a CU (two SIMDs; a WGP, four SIMDs, in WGP
mode) taking another only while it has room for all of that workgroup's waves, VGPRs and LDS
(:func:`occupancy_for`; RDNA3 ISA guide, "Local Data Share": 64 KiB of LDS per CU, the WGP's 128 KiB in
WGP mode). A kernel whose VGPRs allow 7 waves per SIMD runs 6 of them when its workgroups put 2 waves
on each SIMD (the worklog's kernel 5: "six wavefronts per SIMD"). The VGPR-only limit stays as the
detail (``by_vgprs``), and LLVM's own count, which does not round to whole workgroups, as
``compiler_waves``: the number clang's ``; Occupancy:`` comment states (LLVM 19 gives a WGP in WGP mode
its 128 KiB of LDS too: :func:`waves_by_lds`).
"""
from __future__ import annotations

from ..records import FrozenRecord, Record

MAX_WAVES_PER_SIMD = 16  # gfx10.3 and later
LDS_BYTES = 65536  # the most one workgroup can address (LLVM's AddressableLocalMemorySize)
LDS_PER_CU = 65536  # the hardware: each CU's half of its WGP's 128 KiB
GROUPS_PER_CU = 16  # workgroups one CU holds at most (32 per WGP)
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


def lds_per_unit(wgp_mode: bool) -> int:
    """LDS bytes the workgroups of one CU (WGP in WGP mode) share."""
    return LDS_PER_CU * (2 if wgp_mode else 1)


def group_limits(by_vgprs: int, lds: int, group_size: int, wave_size: int, wgp_mode: bool) -> dict[str, int]:
    """Whole workgroups one CU (WGP in WGP mode) can hold by each limit alone: its SIMDs' wave slots,
    their VGPRs (``by_vgprs`` waves per SIMD), its LDS and its workgroup slots; in a tie the first
    named is the limit. A workgroup's waves are spread evenly over the unit's SIMDs. The workgroup
    slots are barrier resources, which a one-wave workgroup does not take (LLVM's
    ``getMaxWorkGroupsPerCU``)."""
    simds = simds_per_group(wgp_mode)
    per_group = waves_per_group(group_size, wave_size)
    slots = MAX_WAVES_PER_SIMD * simds // per_group
    return {
        "wave slots": slots,
        "VGPRs": by_vgprs * simds // per_group,
        "LDS": lds_per_unit(wgp_mode) // lds if lds > 0 else 1 << 30,
        "workgroups per unit": GROUPS_PER_CU * (2 if wgp_mode else 1) if per_group > 1 else slots,
    }


def waves_per_simd(groups: int, group_size: int, wave_size: int, wgp_mode: bool) -> int | float:
    """Waves per SIMD of ``groups`` workgroups on one unit (a whole number when they spread evenly)."""
    waves = groups * waves_per_group(group_size, wave_size)
    simds = simds_per_group(wgp_mode)
    return waves // simds if waves % simds == 0 else waves / simds


def waves_by_lds(lds_bytes: int, group_size: int, wave_size: int, wgp_mode: bool) -> int:
    """LLVM's getOccupancyWithLocalMemSize for gfx11 (the compiler's count, :attr:`Occupancy.compiler_waves`).

    In WGP mode LLVM counts the WGP's 128 KiB: its GCNSubtarget doubles ``LocalMemorySize`` for
    gfx10+ without the ``cumode`` feature (the 64 KiB a workgroup can address stays
    ``AddressableLocalMemorySize``), and the waves spread over the WGP's four SIMDs. clang 19's
    ``; Occupancy:`` comments agree (``fixtures/kernels/probes/lds_occupancy_wgp.s``: 40000 bytes of
    LDS in workgroups of 256 work-items, 3 workgroups of 8 waves on 4 SIMDs, 6 waves; 64 KiB would
    give 2)."""
    groups = min(lds_per_unit(wgp_mode) // max(1, lds_bytes), max_groups_per_cu(group_size, wave_size, wgp_mode))
    if groups == 0:
        return 1
    waves = groups * waves_per_group(group_size, wave_size)
    return min(-(-waves // simds_per_group(wgp_mode)), MAX_WAVES_PER_SIMD)


def waves_by_group(group_size: int, wave_size: int, wgp_mode: bool) -> int:
    groups = max_groups_per_cu(group_size, wave_size, wgp_mode)
    waves = groups * waves_per_group(group_size, wave_size)
    return min(-(-waves // simds_per_group(wgp_mode)), MAX_WAVES_PER_SIMD)


class Occupancy(Record):
    waves: int | float  # waves per SIMD the hardware runs: whole workgroups per unit, spread over its SIMDs
    groups: int  # workgroups per CU (WGP in WGP mode)
    limit: str  # what stops one more workgroup (a key of ``group_limits``)
    group_limits: dict  # workgroups per unit by each limit alone
    by_vgprs: int  # waves per SIMD the VGPRs alone allow
    compiler_waves: int  # LLVM's count (the compiler's ``; Occupancy:`` comment)
    vgprs: int
    allocated: int
    lds: int
    group_size: int
    wave_size: int
    wgp_mode: bool
    model: VgprModel

    _fields = ("waves", "groups", "limit", "group_limits", "by_vgprs", "compiler_waves", "vgprs", "allocated",
               "lds", "group_size", "wave_size", "wgp_mode", "model")

    def __init__(self, waves, groups: int, limit: str, group_limits: dict, by_vgprs: int, compiler_waves: int,
                 vgprs: int, allocated: int, lds: int, group_size: int, wave_size: int, wgp_mode: bool,
                 model: VgprModel):
        self.waves = waves
        self.groups = groups
        self.limit = limit
        self.group_limits = group_limits
        self.by_vgprs = by_vgprs
        self.compiler_waves = compiler_waves
        self.vgprs = vgprs
        self.allocated = allocated
        self.lds = lds
        self.group_size = group_size
        self.wave_size = wave_size
        self.wgp_mode = wgp_mode
        self.model = model

    @property
    def waves_per_group(self) -> int:
        return waves_per_group(self.group_size, self.wave_size)

    @property
    def limits(self) -> list[str]:
        """What holds the kernel below the hardware's 16 waves per SIMD: ``VGPRs``, ``LDS`` and/or
        ``workgroup size`` (whole workgroups that do not fill the wave or workgroup slots)."""
        if self.waves >= MAX_WAVES_PER_SIMD:
            return []
        names = {"VGPRs": "VGPRs", "LDS": "LDS", "wave slots": "workgroup size", "workgroups per unit": "workgroup size"}
        out = []
        for key, groups in self.group_limits.items():
            if key == "VGPRs" and self.by_vgprs >= MAX_WAVES_PER_SIMD:
                continue  # VGPRs for every wave slot: they tie with the slots, they do not limit
            if groups == self.groups and names[key] not in out:
                out.append(names[key])
        return out


def occupancy_for(vgprs: int, lds: int, group_size: int, wave_size: int, wgp_mode: bool,
                  legacy: bool = False) -> Occupancy:
    """The occupancy of a kernel with these resources launched in workgroups of ``group_size``
    work-items: whole workgroups per CU (WGP), the waves per SIMD they make, what limits them, and
    the VGPR-only and LLVM counts. The one place isalint computes an occupancy."""
    model = vgpr_model(wave_size, legacy)
    bv = waves_by_vgprs(vgprs, model)
    llvm = min(bv, waves_by_lds(lds, group_size, wave_size, wgp_mode), waves_by_group(group_size, wave_size, wgp_mode),
               MAX_WAVES_PER_SIMD)
    limits = group_limits(bv, lds, group_size, wave_size, wgp_mode)
    limit = min(limits, key=lambda k: limits[k])
    groups = limits[limit]
    return Occupancy(waves_per_simd(groups, group_size, wave_size, wgp_mode), groups, limit, limits, bv, llvm,
                     vgprs, allocated_vgprs(vgprs, model), lds, group_size, wave_size, wgp_mode, model)


def vgprs_for_groups(groups: int, occ: Occupancy) -> int:
    """The most VGPRs a kernel may use and still fit ``groups`` workgroups per unit (0: none do)."""
    simds = simds_per_group(occ.wgp_mode)
    waves = -(-groups * occ.waves_per_group // simds)  # per SIMD, the VGPR limit's rounding undone
    return vgprs_for_waves(waves, occ.model) if waves <= MAX_WAVES_PER_SIMD else 0


def lds_for_groups(groups: int, occ: Occupancy) -> int:
    """The largest LDS size per workgroup that still fits ``groups`` workgroups per unit."""
    return lds_per_unit(occ.wgp_mode) // groups
