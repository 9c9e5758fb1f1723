"""Registers a rewrite may take: liveness of VGPRs and SGPRs, views with registers hidden, free-register
search under a register-count limit, and the kernel's VGPR and SGPR budgets.

Register files are named as in the program model: ``"v"`` (v0-v255) and ``"s"`` (s0-s105). VCC, EXEC,
SCC and M0 are not in the SGPR file on gfx11 (RDNA3 ISA guide, chapter 3 "Kernel State") and are never
offered as free SGPRs; :func:`special_free` tells whether one of them is dead and untouched.

Liveness is :mod:`isalint.model.liveness` (exact per register over the CFG). A register is *free* at a
set of instructions when it is not live into or out of any of them, none of them reads or writes it,
and (``exclude_pending``) no memory load still in flight there will write it. The SGPRs the hardware
initialises at launch (user and system SGPRs, :attr:`SgprBudget.initialised`) hold the kernel
arguments' address and the workgroup ids: they are live exactly while the code still reads them, so
liveness alone decides whether they may be reused.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...hw.registers import SGPRS, VGPRS, sgpr_alignment
from ...model.liveness import bit, busy_mask, liveness, sgpr_number, sgpr_numbers, vgpr_number, vgpr_numbers
from ...records import replace

FILES = ("v", "s")


def register_number(reg: str, file: str) -> int | None:
    """N for the register name ``vN`` (file ``"v"``) or ``sN`` (file ``"s"``), else None."""
    return vgpr_number(reg) if file == "v" else sgpr_number(reg)


def mask_numbers(m: int, file: str) -> list[int]:
    """The register numbers of one file in a liveness mask."""
    return vgpr_numbers(m) if file == "v" else sgpr_numbers(m)


def register_numbers(regs, file: str = "v") -> set[int]:
    """The numbers of the ``file`` registers among register names."""
    out = set()
    for r in regs:
        n = register_number(r, file)
        if n is not None:
            out.add(n)
    return out


class LiveRegisters:
    """Numbers of one file's registers holding a needed value, at block boundaries and around
    instructions (:mod:`isalint.model.liveness`)."""

    def __init__(self, program, file: str = "v"):
        self.lv = liveness(program)
        self.file = file

    def block_in(self, block: int) -> set[int]:
        return set(mask_numbers(self.lv.block_in_mask(block), self.file))

    def block_out(self, block: int) -> set[int]:
        return set(mask_numbers(self.lv.block_out_mask(block), self.file))

    def before(self, index: int) -> set[int]:
        return set(mask_numbers(self.lv.live_in_mask(index), self.file))

    def after(self, index: int) -> set[int]:
        return set(mask_numbers(self.lv.live_out_mask(index), self.file))


def hidden_view(program, hide_all: set[int], hide_defs: dict[int, set[int]], hide_uses: dict[int, set[int]],
                file: str = "v"):
    """A copy of ``program`` in which instructions ``hide_all`` read and write no ``file`` register and
    ``hide_defs``/``hide_uses`` (instruction -> register numbers) drop those writes/reads: the
    liveness of what remains once the code a pass will replace is set aside."""
    from ...model.program import Program

    instrs = []
    for ins in program.instrs:
        i = ins.index
        if i in hide_all:
            ins = replace(ins, defs=[r for r in ins.defs if register_number(r, file) is None],
                          uses=[r for r in ins.uses if register_number(r, file) is None])
        elif i in hide_defs or i in hide_uses:
            hd, hu = hide_defs.get(i, set()), hide_uses.get(i, set())
            ins = replace(ins, defs=[r for r in ins.defs if register_number(r, file) not in hd],
                          uses=[r for r in ins.uses if register_number(r, file) not in hu])
        instrs.append(ins)
    view = Program(program.source, program.target, instrs, program.labels, program.label_lines,
                   program.kernels, program.metadata_text)
    view._cfg = program.cfg()
    return view


def rewritten_view(program, removed: set[int], drop_uses: dict[int, set[str]] | None = None,
                   add_uses: dict[int, set[str]] | None = None):
    """A copy of ``program`` as a rewrite will leave it, for liveness in every register file (VGPRs,
    SGPRs, SCC, VCC): the instructions ``removed`` read and write nothing, and at an instruction
    (index -> register names) the ``drop_uses`` reads are gone and the ``add_uses`` reads are added,
    e.g. the registers new code inserted there will read."""
    from ...model.program import Program

    drop_uses, add_uses = drop_uses or {}, add_uses or {}
    instrs = []
    for ins in program.instrs:
        i = ins.index
        if i in removed:
            ins = replace(ins, defs=[], uses=[])
        elif i in drop_uses:
            ins = replace(ins, uses=[r for r in ins.uses if r not in drop_uses[i]])
        if i in add_uses:
            ins = replace(ins, uses=list(dict.fromkeys(list(ins.uses) + sorted(add_uses[i]))))
        instrs.append(ins)
    view = Program(program.source, program.target, instrs, program.labels, program.label_lines,
                   program.kernels, program.metadata_text)
    view._cfg = program.cfg()
    return view


def busy_registers(program, at, file: str = "v", *, exclude_pending: bool = False, counters=None) -> set[int]:
    """Numbers of the ``file`` registers live around, or read or written by, any instruction of ``at``
    (and, with ``exclude_pending``, written by a load still in flight there)."""
    return set(mask_numbers(busy_mask(program, at, exclude_pending=exclude_pending, counters=counters), file))


def in_flight(counters, at, file: str = "v", ignore=frozenset()) -> set[int]:
    """Numbers of the ``file`` registers a memory load still in flight before any instruction of ``at``
    will write, except loads issued by the instructions in ``ignore``.

    ``counters`` is :func:`isalint.model.counters.analyze` of the program."""
    out = set()
    for i in at:
        for reg, _counter, _cls, pending in counters.state_before(i).entries():
            n = register_number(reg, file)
            if n is not None and pending.origin not in ignore:
                out.add(n)
    return out


def free_registers(program, at, file: str = "v", *, count: int = 1, limit: int | None = None,
                   exclude_pending: bool = True, counters=None, avoid=frozenset()) -> list[int]:
    """The first registers of every run of ``count`` consecutive ``file`` registers below ``limit`` that
    are free at every instruction of ``at`` and not in ``avoid``, lowest first.

    SGPR runs start at their alignment (:func:`isalint.hw.registers.sgpr_alignment`: even for a 64-bit
    pair, a multiple of 4 beyond); VGPR runs at any register. ``limit`` defaults to the kernel's declared
    count (``.amdhsa_next_free_vgpr``/``_sgpr``: registers it already owns, so taking them changes no
    count), else the whole file."""
    at = list(at)
    if limit is None:
        kernel = program.kernel_of(at[0]) if at and program.kernels else None
        limit = declared_count(kernel, file)
    size = VGPRS if file == "v" else SGPRS
    busy = busy_registers(program, at, file, exclude_pending=exclude_pending, counters=counters) | set(avoid)
    step = sgpr_alignment(count) if file == "s" else 1
    top = min(limit, size)
    return [r for r in range(0, top - count + 1, step) if not any(r + k in busy for k in range(count))]


def declared_count(kernel, file: str = "v") -> int:
    """The registers the kernel's descriptor declares (``.amdhsa_next_free_vgpr``/``_sgpr``), or the
    whole file without a descriptor."""
    key = ".amdhsa_next_free_vgpr" if file == "v" else ".amdhsa_next_free_sgpr"
    size = VGPRS if file == "v" else SGPRS
    if kernel is not None and key in kernel.descriptor:
        return kernel.descriptor[key]
    return size


def special_free(program, at, name: str) -> bool:
    """Whether the special register ``name``, as the program model names it (``vcc_lo``, ``vcc_hi``,
    ``m0`` ...), holds nothing needed at, and is not read or written by, any instruction of ``at``."""
    return not busy_mask(program, list(at), exclude_pending=False) >> bit(name) & 1


def highest_register(program, index: int | None = None, file: str = "v") -> int:
    """The highest ``file`` register the kernel holding instruction ``index`` reads or writes (the whole
    file when ``index`` is None or outside a kernel); -1 when it names none."""
    instrs = program.instrs
    lo, hi = 0, len(instrs)
    if index is not None:
        k = program.kernel_of(index)
        if k is not None:
            lo, hi = k.first, k.last
    top = -1
    for ins in instrs[lo:hi]:
        for r in list(ins.defs) + list(ins.uses):
            n = register_number(r, file)
            if n is not None and n > top:
                top = n
    return top


@dataclass
class SgprBudget:
    """What a pass may do with a kernel's SGPRs.

    ``declared``: ``.amdhsa_next_free_sgpr`` (None without one) — s0 up to it are the kernel's already;
    above it a pass must raise the counts (:func:`isalint.fixes.toolkit.counts.refresh_counts`).
    ``used``: one past the highest SGPR the code names. ``initialised``: the user and system SGPRs the
    hardware loads at launch, s0 up to it. ``hardware``: s0-s105. ``uses_vcc``: the code reads or writes
    VCC (the counts then include 2 more SGPRs); ``reserve_vcc``: the descriptor's
    ``.amdhsa_reserve_vcc`` (None when absent: the assembler's default reserves it)."""

    declared: int | None
    used: int
    initialised: int
    uses_vcc: bool
    reserve_vcc: int | None
    hardware: int = SGPRS

    @property
    def limit(self) -> int:
        """Registers a pass may take without changing any count."""
        return min(self.declared, self.hardware) if self.declared is not None else self.hardware


def sgpr_budget(program, kernel) -> SgprBudget:
    from ...model.resources import kernel_resources

    res = kernel_resources(program, kernel)
    d = kernel.descriptor
    return SgprBudget(d.get(".amdhsa_next_free_sgpr"), res.sgprs_used, res.sgpr_floor, res.uses_vcc,
                      d.get(".amdhsa_reserve_vcc"))


def waves_with_vgprs(kernel, vgprs: int) -> int | None:
    """Waves per SIMD the kernel gets with ``vgprs`` VGPRs (:func:`isalint.model.resources.occupancy`),
    None when unknown."""
    if kernel is None:
        return None
    from ...model.resources import occupancy

    occ = occupancy(kernel, vgprs=vgprs)
    return occ.waves if occ is not None else None
