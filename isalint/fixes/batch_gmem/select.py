"""Which loop, which loads: GMEM001's pattern, global loads whose address is a 64-bit VGPR pair."""
from __future__ import annotations

from .. import FixRefused


def vgpr_address_load(ins) -> bool:
    """A ``global_load*`` with a 64-bit VGPR address and no SGPR base (``saddr`` off)."""
    if ins.opaque or ins.is_vopd or not ins.opcode.startswith("global_load"):
        return False
    slots = ins.slots[0]
    addr = next((s for s in slots if s.name in ("addr", "vaddr")), None)
    saddr = next((s for s in slots if s.name == "saddr"), None)
    return addr is not None and len(addr.regs) == 2 and (saddr is None or saddr.operand.kind == "off")


def own_blocks(cfg, loop) -> set[int]:
    """The blocks of ``loop`` that belong to none of its inner loops."""
    inner = set()
    for child in loop.children:
        inner |= child.blocks
    return loop.blocks - inner


def loads_of(program, cfg, loop) -> list[int]:
    out = []
    for b in own_blocks(cfg, loop):
        out.extend(i for i in cfg.blocks[b].indices() if vgpr_address_load(program.instrs[i]))
    return sorted(out)


def select_loop(analysis, label: str | None):
    """(kernel, loop, load indices): the loop named ``label``, else the loop with the most such loads."""
    program, cfg = analysis.program, analysis.cfg
    if label:
        loop = cfg.find_loop(label)
        if loop is None:
            raise FixRefused(f"no loop with header label {label}")
        loads = loads_of(program, cfg, loop)
        if not loads:
            raise FixRefused(f"the loop at {label} has no global load with a 64-bit VGPR address")
    else:
        best = max(cfg.loops, key=lambda lp: len(loads_of(program, cfg, lp)), default=None)
        loads = loads_of(program, cfg, best) if best is not None else []
        if not loads:
            raise FixRefused("no loop has a global load with a 64-bit VGPR address (GMEM001's pattern)")
        loop = best
    kernel = program.kernel_of(loads[0])
    if kernel is None or not kernel.descriptor:
        raise FixRefused(f"line {program.instrs[loads[0]].lineno}: the loop is not in a kernel with a descriptor")
    return kernel, loop, loads
