"""Where the moved accumulators live, and which VGPRs the rewrite may take.

The accumulators of the FMA block are carried by the loop and usually by the loops around it
(kernel5's k loop over LDS tiles wraps the loop over one tile). The pass keeps them in their new
registers over the largest enclosing loop in which nothing but the FMA block touches them (the
*region*), moves them there on every edge into the region and back on every edge out of it, so
the code before and after the region — the initialisation, the epilogue and its
``global_store_b128`` of four consecutive registers — runs unchanged.

A VGPR is free for the accumulators when it is not live anywhere in the region once the FMA
block and the destinations of its loads are set aside
(:func:`isalint.fixes.toolkit.registers.busy_registers` on a
:func:`~isalint.fixes.toolkit.registers.hidden_view` of the program), no other instruction in the region names it, and no
load still in flight there will write it. The loaded values live only inside the FMA block's
loop, so for them the same test runs over that loop alone. A VALU write kills a value: the
region runs under one EXEC mask, which is checked.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...model.fma_block import FmaBlock, where
from ...model.liveness import ignorable_reads
from .. import FixRefused
from ..toolkit.moves import Edge, entry_edges, exit_edges
from ..toolkit.registers import LiveRegisters, busy_registers, hidden_view, in_flight, register_numbers


@dataclass
class Region:
    loop: object
    blocks: set[int]
    entries: list[Edge]
    exits: list[Edge]
    busy: set[int]  # VGPRs the accumulators must not take (anywhere in the region)
    live: LiveRegisters  # VGPR liveness of the original program
    busy_values: set[int] = field(default_factory=set)  # VGPRs the loaded values must not take
    entry_values: dict[int, object] | None = None  # acc -> constant at every entry, when all equal
    notes: list[str] = field(default_factory=list)


def _writes_exec(ins) -> bool:
    return any(r.startswith("exec") for r in ins.defs)


def find_region(analysis, fb: FmaBlock) -> Region:
    program, cfg = analysis.program, analysis.cfg
    instrs = program.instrs
    accs = set(fb.accs)
    fma_instrs = set(fb.fma_instrs)
    for i in fb.body:
        if _writes_exec(instrs[i]):
            raise FixRefused(f"{where(program, i)}: the loop writes EXEC; cannot prove the register moves safe")

    real = LiveRegisters(program, "v")
    ignorable: dict[int, set[int]] = {}
    for ins in instrs:
        ign = ignorable_reads(ins, real.after(ins.index))
        if ign:
            ignorable[ins.index] = ign

    def clean(loop) -> bool:
        for b in loop.blocks:
            for i in cfg.blocks[b].indices():
                if i in fma_instrs:
                    continue
                ins = instrs[i]
                if _writes_exec(ins) or ins.opaque:
                    return False
                touched = register_numbers(ins.defs) | (register_numbers(ins.uses) - ignorable.get(i, set()))
                if touched & accs:
                    return False
        return True

    loop = fb.loop
    while loop.parent is not None and clean(loop.parent):
        loop = loop.parent
    blocks = set(loop.blocks)
    header = loop.header
    entries = entry_edges(program, cfg, blocks, header)
    if not entries:
        raise FixRefused(f"{where(program, cfg.blocks[header].first)}: the loop is entered from nowhere")
    exits = exit_edges(program, cfg, blocks)
    for b in blocks:
        if not cfg.blocks[b].succs or any(instrs[i].ends_program() for i in cfg.blocks[b].indices()):
            raise FixRefused(f"{where(program, cfg.blocks[b].first)}: the program can end inside the loop")

    # Liveness with the FMA block, the loads' destinations and the ignorable reads set aside.
    hide_defs = {ld.index: set(ld.regs) for ld in fb.loads}
    view = hidden_view(program, fma_instrs, hide_defs, ignorable)
    from ...model import counters as counters_mod

    ca = counters_mod.analyze(program)
    block_loads = {ld.index for ld in fb.loads}

    def occupied(at: list[int]) -> set[int]:
        busy = busy_registers(view, at, "v", exclude_pending=False)
        # Registers a load still in flight will write (other than the block's own loads).
        busy |= in_flight(ca, at, "v", ignore=block_loads)
        return busy - accs

    region = Region(loop, blocks, entries, exits, occupied([i for b in blocks for i in cfg.blocks[b].indices()]),
                    real)
    # The loaded values live from the block's first load to its last FMA: only that stretch must
    # leave their registers alone.
    first_load = min(fb.body.index(ld.index) for ld in fb.loads)
    region.busy_values = occupied(fb.body[first_load: fb.last + 1])
    region.entry_values = _entry_constants(program, cfg, region, accs)
    return region


def _const_of(ins, reg: int):
    """The literal a plain move writes to ``reg``, or None."""
    for k, stmt in enumerate(ins.stmts):
        if stmt.mnemonic not in ("v_mov_b32", "v_mov_b32_e32", "v_dual_mov_b32"):
            continue
        if stmt.modifiers or len(stmt.operands) != 2:
            continue
        dst, src = stmt.operands
        if dst.kind == "vgpr" and dst.first == reg and dst.count == 1:
            if src.kind in ("int", "float") and not src.neg and not src.abs:
                return ("lit", src.text.lower())
            return None
    return None


def _entry_constants(program, cfg, region: Region, accs: set[int]) -> dict[int, object] | None:
    """{acc: constant} when every accumulator holds the same literal on every entry edge, else None."""
    instrs = program.instrs
    found = None
    for acc in sorted(accs):
        name = f"v{acc}"
        for e in region.entries:
            seen: set[int] = set()
            stack = [(e.src, cfg.blocks[e.src].last)]
            while stack:
                b, end = stack.pop()
                blk = cfg.blocks[b]
                hit = None
                for i in range(end - 1, blk.first - 1, -1):
                    if name in instrs[i].defs:
                        hit = i
                        break
                if hit is not None:
                    c = _const_of(instrs[hit], acc)
                    if c is None or (found is not None and c != found):
                        return None
                    found = c
                    continue
                if not blk.preds:
                    return None  # reaches the kernel entry undefined
                for p in blk.preds:
                    if p not in seen:
                        seen.add(p)
                        stack.append((p, cfg.blocks[p].last))
    return {acc: found for acc in accs} if found is not None else None
