"""The copy a GEMM's loop makes of the next tile: global loads whose words go straight to LDS.

A *copy element* is one dword: ``global_load_b32 vD, vOFF, s[S:S+1]`` (an SGPR base and a VGPR byte
offset, as ``fix --batch-gmem`` writes them) whose ``vD`` nothing reads but one DS store
(``ds_store_b32`` or a half of ``ds_store_2addr[_stride64]_b32``). The loads of one copy share their
offset register; a loop may hold several copies (one per matrix). Everything the rewrite relies on
is checked here, with the line and the reason when it does not hold.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...model.reaching import reaching_defs
from .. import FixRefused

_STORE = re.compile(r"^ds_(store|write)(_2addr(_stride64)?)?_b32$")
_ALLOWED_MODIFIERS = {"offset"}


@dataclass
class Element:
    load: int  # instruction index of the global load
    store: int  # instruction index of the DS store
    slot: int  # which data operand of the store (0, or 1 for the second of a 2addr form)
    data: str  # the staging VGPR
    base: tuple[str, str]  # the SGPR pair of the load's base
    offset: int  # the load's offset: field


@dataclass
class Copy:
    offset_reg: str  # the VGPR byte offset every load of the copy adds
    elements: list[Element] = field(default_factory=list)

    @property
    def loads(self) -> list[int]:
        return [e.load for e in self.elements]

    @property
    def stores(self) -> list[int]:
        return sorted({e.store for e in self.elements})


def where(program, index: int) -> str:
    return f"{program.path}:{program.instrs[index].lineno}"


def _copy_load(ins):
    """(data VGPR, offset VGPR, base SGPR pair, offset field) of a candidate load, else None."""
    if ins.opaque or ins.is_vopd or ins.opcode != "global_load_b32":
        return None
    stmt = ins.stmts[0]
    if any(m.name not in _ALLOWED_MODIFIERS for m in stmt.modifiers):
        return None
    slots = ins.slots[0]
    data = next((s for s in slots if s.role == "def"), None)
    addr = next((s for s in slots if s.name in ("addr", "vaddr")), None)
    saddr = next((s for s in slots if s.name == "saddr"), None)
    if data is None or addr is None or saddr is None or saddr.operand.kind == "off":
        return None
    if len(addr.regs) != 1 or len(saddr.regs) != 2 or len(data.regs) != 1:
        return None
    mod = stmt.modifier("offset")
    return data.regs[0], addr.regs[0], (saddr.regs[0], saddr.regs[1]), (mod.int_value() or 0) if mod else 0


def _store_data(ins) -> list[str] | None:
    """The data VGPRs of a 32-bit DS store, in operand order, else None."""
    if ins.opaque or ins.is_vopd or not _STORE.match(ins.opcode):
        return None
    slots = ins.slots[0]
    return [s.regs[0] for s in slots if s.role == "use" and s.name != "addr" and s.regs]


def own_blocks(cfg, loop) -> set[int]:
    inner = set()
    for child in loop.children:
        inner |= child.blocks
    return loop.blocks - inner


def find_copies(analysis, loop) -> list[Copy]:
    """The copies of ``loop`` (its own blocks, not its inner loops'), every element checked."""
    program, cfg = analysis.program, analysis.cfg
    body = sorted(i for b in own_blocks(cfg, loop) for i in cfg.blocks[b].indices())
    loads = {i: got for i in body if (got := _copy_load(program.instrs[i])) is not None}
    if not loads:
        return []
    readers: dict[int, list[tuple[int, int]]] = {i: [] for i in loads}
    staged = {got[0] for got in loads.values()}
    kernel = program.kernel_of(body[0])
    for j in range(kernel.first, kernel.last):
        ins = program.instrs[j]
        for reg in set(ins.uses) & staged:
            for d in reaching_defs(program, j, reg):
                if d in loads and loads[d][0] == reg:
                    data = _store_data(ins)
                    slot = data.index(reg) if data and reg in data and data.count(reg) == 1 else -1
                    readers[d].append((j, slot))
    copies: dict[str, Copy] = {}
    for i, (data, off, base, imm) in sorted(loads.items()):
        uses = readers[i]
        ins = program.instrs[i]
        if len(uses) != 1 or uses[0][1] < 0 or uses[0][0] not in body:
            what = "nothing" if not uses else "; ".join(f"line {program.instrs[j].lineno}" for j, _ in uses)
            raise FixRefused(f"{where(program, i)}: the word '{ins.text()}' loads into {data} is read by {what}, "
                             "not by one 32-bit DS store of the loop: this is not a global-to-LDS copy")
        store, slot = uses[0]
        copies.setdefault(off, Copy(off)).elements.append(Element(i, store, slot, data, base, imm))
    for c in copies.values():
        _check_stores(program, c, {e.data for cp in copies.values() for e in cp.elements})
    return list(copies.values())


def _check_stores(program, copy: Copy, staged: set[str]) -> None:
    """Every data operand of the copy's stores is a staged word: each store goes away whole."""
    for s in copy.stores:
        data = _store_data(program.instrs[s])
        for reg in data:
            if reg not in staged:
                raise FixRefused(f"{where(program, s)}: '{program.instrs[s].text()}' also stores {reg}, which no "
                                 "load of the copy wrote; the store cannot be rewritten whole")
