"""Registers and text of the rewrite.

:func:`layout` decides where everything goes: the insertion point before the loop (the end of its
single preheader), the SGPR pairs of the bases and the SGPRs of the steps (free over the whole
loop once the dead address computations are gone), one VGPR per offset group, and scratch
registers at the insertion point. :func:`render` edits the text: SALU bases and steps and VALU
offsets before the loop, ``v_add_nc_u32`` of each offset at the top of the loop header, each load
rewritten to ``global_load_* vD, vOFF, s[base:base+1]``, and the address instructions that are
dead removed (with the ``s_delay_alu`` hints of their blocks, which described them).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...hw.registers import VGPRS
from ...model.affine.poly import Poly
from .. import FixRefused
from ..toolkit import Edits, indent_of_text, rewritten_view
from ..toolkit.loops import preheader, scc_dead
from .emit_salu import Point, Registers, SaluWriter, _lit
from .emit_valu import ValuWriter
from .registers import dead_chain, free_over, sgpr_ceiling


@dataclass
class Layout:
    insert_at: int  # index of the preheader's last instruction: the setup goes before it (a branch) or after
    insert_after: bool
    header_first: int  # index of the loop header's first instruction
    dead: set[int]
    bases: dict[Poly, int] = field(default_factory=dict)  # base polynomial -> SGPR pair
    steps: dict[Poly, int | None] = field(default_factory=dict)  # step -> SGPR (None: an inline constant)
    offsets: list[int] = field(default_factory=list)  # per group
    setup: list[str] = field(default_factory=list)  # SALU then VALU lines before the loop


def layout(analysis, plan, limits) -> Layout:
    """Registers and setup code. The setup reads registers at the insertion point, which must then
    stay alive there (their definitions are kept, no base goes in them): repeated until the
    registers it reads no longer change."""
    program = analysis.program
    at, after = preheader(analysis, plan.loop)
    scc_dead(analysis, at, after, "the bases would be computed before the loop")
    reads: set[str] = set()
    for _ in range(4):
        out, now = _attempt(analysis, plan, limits, at, after, reads)
        if now <= reads:
            return out
        reads |= now
    raise FixRefused(f"{program.path}:{program.instrs[at].lineno}: internal error: the setup code keeps "
                     "needing other registers")


def _attempt(analysis, plan, limits, at: int, after_pre: bool, reads: set[str]) -> tuple[Layout, set[str]]:
    """One allocation. ``reads``: the registers the setup read last time; their definitions stay,
    and no base, step or scratch register takes them. A VGPR the setup reads may still become the
    offset it is the first term of (``v_lshlrev_b32 vX, 2, vX``): VGPRs are counted free without them."""
    program, cfg = analysis.program, analysis.cfg
    loads = {ld.index: _address_regs(program.instrs[ld.index]) for ld in plan.loads}
    hide = {i: set(r) for i, r in loads.items()}
    dead = dead_chain(program, plan.kernel, loads, {at: reads})
    after = rewritten_view(program, dead, hide, {at: reads})
    after_v = rewritten_view(program, dead, hide, {at: {r for r in reads if not r.startswith("v")}})
    across = sorted(plan.loop.indices(cfg)) + [at]
    ceiling = sgpr_ceiling(program, plan.kernel)
    free_pairs, free_s, _ = free_over(after, across, ceiling)
    _, _, free_v = free_over(after_v, across, ceiling)
    out = Layout(at, after_pre, cfg.blocks[plan.loop.header].first, dead)
    bases = list(dict.fromkeys(ld.base for ld in plan.loads))
    steps = list(dict.fromkeys(g.step for g in plan.groups if not g.step.is_const))
    where = f"{program.path}:{program.instrs[at].lineno}"
    if len(free_pairs) < len(bases):
        raise FixRefused(f"{where}: no free SGPRs for the bases: {len(bases)} aligned SGPR pairs must stay free over "
                         f"the loop, {len(free_pairs)} are (SGPR liveness over s0-s{ceiling - 1})")
    pairs = free_pairs[:len(bases)]
    used = {n for p in pairs for n in (p, p + 1)}
    singles = [n for n in free_s if n not in used][:len(steps)]
    if len(singles) < len(steps):
        raise FixRefused(f"{where}: no free SGPRs for the per-iteration steps of the offsets")
    used |= set(singles)
    out.bases = dict(zip(bases, pairs))
    out.steps = {s: n for s, n in zip(steps, singles)}
    for g in plan.groups:
        if g.step.is_const:
            out.steps[g.step] = None
    regs = Registers(Point(plan.ev, at, after_pre), _ranges(plan, limits))
    valu = ValuWriter(regs, [], where)
    combos = [valu.combination(g.start) for g in plan.groups]
    out.offsets = _offset_registers(plan, combos, free_v, where)
    tmp_pairs, tmp_s, tmp_v = free_over(after, [at], ceiling)
    held = {n for c in combos if c for n, _ in c[0]}
    valu.temps = [n for n in tmp_v if n not in out.offsets and n not in held]
    out.setup = _setup(plan, out, regs, valu, [p for p in tmp_pairs if p not in used and p + 1 not in used],
                       [n for n in tmp_s if n not in used], where)
    return out, regs.read


def _offset_registers(plan, combos, free_v: list[int], where: str) -> list[int]:
    """One VGPR per group, free over the loop: the VGPR its setup starts from when that one is free
    (it is then rewritten in place), else one no setup reads."""
    limit_v = max(plan.kernel.descriptor.get(".amdhsa_next_free_vgpr", VGPRS), 1)
    held = {n for c in combos if c for n, _ in c[0]}
    free = [n for n in free_v if n < limit_v] or [n for n in free_v if n < VGPRS]
    out: list[int] = []
    for k, c in enumerate(combos):
        first = c[0][0][0] if c else None
        others = {n for j, o in enumerate(combos) if j != k and o for n, _ in o[0]}
        if first is not None and first in free and first not in out and first not in others:
            out.append(first)
            continue
        pick = next((n for n in free if n not in held and n not in out), None)
        if pick is None:
            raise FixRefused(f"{where}: no free VGPRs for the {len(plan.groups)} offsets")
        out.append(pick)
    return out


def _address_regs(ins) -> list[str]:
    return next(s for s in ins.slots[0] if s.name in ("addr", "vaddr")).regs


def _setup(plan, out: Layout, regs, valu, tmp_pairs: list[int], tmp_s: list[int], where: str) -> list[str]:
    scratch = tmp_pairs[:2]
    single = [n for n in tmp_s if all(n not in (p, p + 1) for p in scratch)]
    if len(scratch) < 2 or not single:
        raise FixRefused(f"{where}: not enough free SGPRs before the loop to compute the bases in")
    salu = SaluWriter(regs, scratch[0], scratch[1], single[0], where)
    cache: dict = {}
    for g in plan.groups:
        prev = None
        for ld in g.loads:
            dst = out.bases[ld.base]
            if prev is not None and prev[1] == ld.base:
                continue
            salu.base(dst, ld.base, prev, cache)
            prev = (dst, ld.base)
    for step, n in out.steps.items():
        if n is not None:
            salu.word(n, step)
    for g, v in zip(plan.groups, out.offsets):
        n = out.steps.get(g.step)
        valu.offset(v, g.start)
        if n is not None:
            valu.emit(f"v_subrev_nc_u32 v{v}, s{n}, v{v}")
        elif g.step.constant:
            valu.emit(f"v_add_nc_u32 v{v}, {_lit(-g.step.constant)}, v{v}")
    return salu.lines + valu.lines


def _ranges(plan, limits) -> dict[str, tuple[int, int]]:
    out = {}
    for name, a in plan.ev.atoms.items():
        if a.kind != "uniform":
            continue
        if name == limits.size:
            out[name] = (1, limits.limit)
        elif a.lo is not None and a.hi is not None and not a.arg.get("kind") == "by_value":
            out[name] = (a.lo, a.hi)
    return out


def render(analysis, plan, out: Layout, note: str, spread=None) -> str:
    program, cfg = analysis.program, analysis.cfg
    edits = Edits(program)
    for i in out.dead:
        edits.delete(i)
    for b in {cfg.block_of[i] for i in out.dead}:
        for i in cfg.blocks[b].indices():
            if program.instrs[i].opcode == "s_delay_alu":
                edits.delete(i)
    new_form = {}
    for k, g in enumerate(plan.groups):
        for ld in g.loads:
            ins = program.instrs[ld.index]
            new_form[ld.index] = _saddr_form(ins, out.offsets[k], out.bases[ld.base])
            edits.replace(ld.index, [new_form[ld.index]])
    if spread is not None:
        _spread_edits(program, cfg, spread, new_form, edits)
    indent = indent_of_text(program.instrs[out.insert_at].line.text)
    setup = [f"{indent}; {note}"] + [indent + t for t in out.setup]
    if out.insert_after:
        edits.insert_after(out.insert_at, setup)
    else:
        edits.insert_before(out.insert_at, setup)
    hindent = indent_of_text(program.instrs[out.header_first].line.text)
    adv = []
    for k, g in enumerate(plan.groups):
        if g.step == Poly():
            continue
        n = out.steps.get(g.step)
        src = f"s{n}" if n is not None else _lit(g.step.constant)
        adv.append(f"{hindent}v_add_nc_u32 v{out.offsets[k]}, {src}, v{out.offsets[k]}")
    edits.insert_before(out.header_first, adv)
    return edits.render()


def _spread_edits(program, cfg, spread, new_form: dict, edits) -> None:
    """The loads leave their block (with its ``s_clause``, whose count they made) for the spread points."""
    for i in new_form:
        edits.delete(i)
    for i in cfg.blocks[spread.load_block].indices():
        if program.instrs[i].opcode == "s_clause":
            edits.delete(i)
    for at, loads in spread.points.items():
        indent = indent_of_text(program.instrs[at].line.text)
        body = [indent + new_form[i].strip() for i in loads]
        if spread.mask is not None:
            body = [f"{indent}s_and_saveexec_b32 s{spread.save}, {spread.mask}"] + body + \
                [f"{indent}s_mov_b32 exec_lo, s{spread.save}"]
        edits.insert_before(at, body)


def _saddr_form(ins, offset_vgpr: int, pair: int) -> str:
    """The load's line with its VGPR pair address replaced by the offset VGPR and ``off`` by the base."""
    text = ins.line.text
    slots = ins.slots[0]
    addr = next(s for s in slots if s.name in ("addr", "vaddr")).operand
    saddr = next(s for s in slots if s.name == "saddr").operand
    for op, new in sorted(((addr, f"v{offset_vgpr}"), (saddr, f"s[{pair}:{pair + 1}]")), key=lambda t: -t[0].col):
        start = op.col - 1
        if text[start:start + len(op.text)] != op.text:
            raise FixRefused(f"internal error: cannot find operand {op.text} on line {ins.lineno}")
        text = text[:start] + new + text[start + len(op.text):]
    return text
