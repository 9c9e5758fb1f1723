"""Registers and text of the re-tiled copy.

Before the loop (its single preheader): the wave's index (``v_readfirstlane_b32`` of ``t >> 5``),
each new load's base chosen per wave among the old bases (``s_cmp_eq_u32`` / ``s_cselect_b64`` in
place of the first: the others then die), the offset VGPR moved by ``mu(t)`` in place (its loop
advance is unchanged), the store address VGPR moved by ``nu(t)`` in place, and one more address VGPR
per further 1 KiB window of ``ds_store_2addr_b32`` offsets. In the loop: the first old load of each
copy becomes its ``global_load_b128``s, the first old store its new stores; the other old loads and
stores, and the ``s_clause`` that grouped them, go.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .. import FixRefused
from ..toolkit import Edits, free_registers, indent_of_text, rewritten_view
from ..toolkit.loops import preheader, scc_dead
from . import lanefn
from .copies import where
from .mapping import WAVE, WAVES, CopyPlan


@dataclass
class Registers:
    tid: str = ""
    wave: int = -1  # SGPR of the wave's index
    temps: list[int] = field(default_factory=list)  # VGPR scratch at the preheader
    dst: dict[tuple[int, int], int] = field(default_factory=dict)  # (copy, q) -> first VGPR of the quad
    windows: dict[tuple[int, int], int] = field(default_factory=dict)  # (copy, window) -> address VGPR


def _vnum(reg: str) -> int:
    return int(reg[1:])


def _removed(plans: list[CopyPlan]) -> set[int]:
    return {i for p in plans for i in p.copy.loads + p.copy.stores}


def _clauses(program, cfg, removed: set[int]) -> set[int]:
    """The s_clause instructions whose clause holds a removed load or store."""
    out = set()
    for i in range(len(program.instrs)):
        ins = program.instrs[i]
        if ins.opcode != "s_clause":
            continue
        ops = ins.stmts[0].operands
        n = int(ops[0].value) + 1 if ops and ops[0].kind == "int" else 1
        b = cfg.block_of[i]
        following = [j for j in cfg.blocks[b].indices() if j > i][:n]
        if removed & set(following):
            out.add(i)
    return out


def allocate(analysis, loop, plans: list[CopyPlan], at: int) -> Registers:
    program = analysis.program
    removed = _removed(plans)
    keep_at = {at: set()}
    for p in plans:
        keep_at[at] |= {p.copy.offset_reg, p.addr_reg} | {r for e in p.copy.elements for r in e.base}
        keep_at[at] |= set(p.mu_sgpr.values())
    view = rewritten_view(program, removed)
    _check_dead_after(analysis, view, loop, plans, at)
    regs = Registers()
    regs.tid = _tid_register(analysis, at)
    keep_at[at].add(regs.tid)
    uses = dict(keep_at)
    for p in plans:
        uses.setdefault(p.copy.loads[0], set()).update({p.copy.offset_reg} | {r for e in p.copy.elements
                                                                              for r in e.base})
        uses.setdefault(p.copy.stores[0], set()).add(p.addr_reg)
    view = rewritten_view(program, removed, None, uses)
    body = sorted(loop.indices(analysis.cfg))
    # registers other memory loads of the loop write: busy whatever liveness says (a load may land late)
    landing = {int(r[1:]) for i in body if i not in removed and program.instrs[i].is_memory()
               for r in program.instrs[i].defs if r.startswith("v") and r[1:].isdigit()}

    def free(count=1):
        return free_registers(view, body, "v", count=count, limit=256, exclude_pending=False, avoid=landing)
    taken: set[int] = set()
    for k, p in enumerate(plans):
        for q in range(p.loads):
            quads = [r for r in free(4) if not taken & set(range(r, r + 4))]
            if not quads:
                raise FixRefused(f"{where(program, p.copy.loads[0])}: no 4 consecutive VGPRs free over the loop for "
                                 "a 16-byte load")
            regs.dst[(k, q)] = quads[0]
            taken |= set(range(quads[0], quads[0] + 4))
        for window in sorted({op.window for op in p.stores if op.window}):
            singles = [r for r in free() if r not in taken]
            if not singles:
                raise FixRefused(f"{where(program, p.copy.stores[0])}: no VGPR free over the loop for a store address")
            regs.windows[(k, window)] = singles[0]
            taken.add(singles[0])
    temps = [r for r in free_registers(view, [at], "v", limit=256) if r not in taken]
    sgprs = free_registers(view, [at], "s", limit=106)
    if len(temps) < 2 or not sgprs:
        raise FixRefused(f"{where(program, at)}: no free registers before the loop for the setup")
    regs.temps = temps[:2]
    regs.wave = sgprs[0]
    return regs


def _check_dead_after(analysis, view, loop, plans: list[CopyPlan], at: int) -> None:
    """Registers rewritten in place hold nothing else anyone reads: the first base of each new load,
    the store address (nothing reads them once the old loads and stores are gone), and the offset
    (only its own advance in the loop reads it, and nothing after the loop)."""
    from ...model.liveness import Liveness

    program, cfg = analysis.program, analysis.cfg
    live = Liveness(view)
    out_at = live.live_out(at)
    for p in plans:
        firsts = [p.copy.elements[[e.load for e in p.copy.elements].index(p.order[q * WAVES])].base
                  for q in range(p.loads)]
        for reg in [r for pair in firsts for r in pair] + [p.addr_reg]:
            if reg in out_at:
                raise FixRefused(f"{where(program, at)}: {reg} is read after the loop's setup by more than the copy; "
                                 "it cannot be rewritten in place")
        exits = {s for b in loop.blocks for s in cfg.blocks[b].succs if s not in loop.blocks}
        for b in exits:
            first = cfg.blocks[b].first
            if first < len(program.instrs) and p.copy.offset_reg in live.live_in(first):
                raise FixRefused(f"{where(program, first)}: the copy's offset {p.copy.offset_reg} is read after the "
                                 "loop; it cannot be moved in place")


def _tid_register(analysis, at: int) -> str:
    from ...model.lanes.evaluator import LaneEvaluator

    program = analysis.program
    lanes = LaneEvaluator(program)
    for n in range(256):
        v = lanes.value(f"v{n}", at)
        if v.known and not v.terms and list(v.lanes) == list(range(len(v.lanes))):
            if f"v{n}" not in program.instrs[at].defs:
                return f"v{n}"
    raise FixRefused(f"{where(program, at)}: no VGPR holds the work-item id before the loop")


def setup_lines(plans: list[CopyPlan], regs: Registers) -> list[str]:
    t0, t1 = regs.temps
    out = [f"v_lshrrev_b32 v{t0}, 5, {regs.tid}", f"v_readfirstlane_b32 s{regs.wave}, v{t0}"]
    for k, p in enumerate(plans):
        by_load = {e.load: e for e in p.copy.elements}
        for q in range(p.loads):
            first = by_load[p.order[q * WAVES]].base
            for w in range(1, WAVES):
                src = by_load[p.order[q * WAVES + w]].base
                out.append(f"s_cmp_eq_u32 s{regs.wave}, {w}")
                out.append(f"s_cselect_b64 s[{first[0][1:]}:{first[1][1:]}], s[{src[0][1:]}:{src[1][1:]}], "
                           f"s[{first[0][1:]}:{first[1][1:]}]")
        for m, f in p.mu.items():
            if f.constant == 0 and not f.runs:
                continue
            out += _lane_lines(f, t0, regs.tid, t1)
            if m:
                out.append(f"v_mul_lo_u32 v{t0}, {p.mu_sgpr[m]}, v{t0}")
            out.append(f"v_add_nc_u32 {p.copy.offset_reg}, v{t0}, {p.copy.offset_reg}")
        if p.nu.constant or p.nu.runs:
            out += _lane_lines(p.nu, t0, regs.tid, t1)
            out.append(f"v_add_nc_u32 {p.addr_reg}, v{t0}, {p.addr_reg}")
        for (kk, window), reg in regs.windows.items():
            if kk == k:
                out.append(f"v_add_nc_u32 v{reg}, {lanefn._lit(window)}, {p.addr_reg}")
    return out


def _lane_lines(f, dst: int, tid: str, tmp: int) -> list[str]:
    got = lanefn.emit(f, dst, _vnum(tid), tmp)
    if got is None:
        raise FixRefused("a per-lane factor of the new offsets does not fit a 24-bit multiply")
    return got


def load_lines(plan: CopyPlan, k: int, regs: Registers) -> list[str]:
    by_load = {e.load: e for e in plan.copy.elements}
    out = []
    for q in range(plan.loads):
        base = by_load[plan.order[q * WAVES]].base
        d = regs.dst[(k, q)]
        off = f" offset:{plan.imm}" if plan.imm else ""
        out.append(f"global_load_b128 v[{d}:{d + 3}], {plan.copy.offset_reg}, s[{base[0][1:]}:{base[1][1:]}]{off}")
    return out


def store_lines(plan: CopyPlan, k: int, regs: Registers) -> list[str]:
    out = []
    for op in plan.stores:
        addr = plan.addr_reg if not op.window else f"v{regs.windows[(k, op.window)]}"
        data = [f"v{regs.dst[(k, q)] + e}" for q, e in op.words]
        if op.kind == "b128":
            q = op.words[0][0]
            d = regs.dst[(k, q)]
            off = f" offset:{op.offsets[0]}" if op.offsets[0] else ""
            out.append(f"ds_store_b128 {addr}, v[{d}:{d + 3}]{off}")
        elif op.kind == "2addr":
            o0, o1 = (o // 4 for o in op.offsets)
            mods = (f" offset0:{o0}" if o0 else "") + (f" offset1:{o1}" if o1 else "")
            out.append(f"ds_store_2addr_b32 {addr}, {data[0]}, {data[1]}{mods}")
        else:
            off = f" offset:{op.offsets[0]}" if op.offsets[0] else ""
            out.append(f"ds_store_b32 {addr}, {data[0]}{off}")
    return out


def render(analysis, loop, plans: list[CopyPlan], regs: Registers, note: str) -> str:
    program, cfg = analysis.program, analysis.cfg
    at, after = preheader(analysis, loop)
    edits = Edits(program)
    removed = _removed(plans)
    for i in removed | _clauses(program, cfg, removed):
        edits.delete(i)
    for k, p in enumerate(plans):
        first_load, first_store = p.copy.loads[0], p.copy.stores[0]
        indent = indent_of_text(program.instrs[first_load].line.text)
        edits.replace(first_load, [indent + t for t in load_lines(p, k, regs)])
        indent = indent_of_text(program.instrs[first_store].line.text)
        edits.replace(first_store, [indent + t for t in store_lines(p, k, regs)])
    indent = indent_of_text(program.instrs[at].line.text)
    setup = [f"{indent}; {note}"] + [indent + t for t in setup_lines(plans, regs)]
    if after:
        edits.insert_after(at, setup)
    else:
        edits.insert_before(at, setup)
    return edits.render()


def setup_point(analysis, loop) -> tuple[int, bool]:
    at, after = preheader(analysis, loop)
    scc_dead(analysis, at, after, "the new loads' bases would be chosen before the loop")
    return at, after


__all__ = ["Registers", "allocate", "render", "setup_point", "WAVE"]
