"""The proof of the rewrite: each load's address as ``base + offset``.

For every selected load the affine evaluator (:mod:`isalint.model.affine`) gives the exact
64-bit address as a polynomial. The monomials without a per-lane atom or a loop counter form the
*base*: the same in every lane and every iteration, computed once before the loop with SALU. The
others form the *offset*: it must be affine in the loop counters with wave-uniform factors, so
that it changes by the same uniform *step* every iteration; loads with the same offset polynomial
share one VGPR. What does not have this shape is refused with the line and the reason.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...model.affine.evaluator import AffineEvaluator
from ...model.affine.loops import Counter, counter
from ...model.affine.poly import Poly
from .. import FixRefused


@dataclass
class Load:
    index: int
    line: int
    base: Poly  # wave-uniform, exact 64-bit (the instruction keeps its own offset: field)
    offset: Poly  # per-lane and per-iteration part, bytes
    conds: frozenset


@dataclass
class Group:
    offset: Poly
    loads: list[Load] = field(default_factory=list)
    start: Poly = Poly()  # the offset in the first iteration
    step: Poly = Poly()  # what one iteration adds


@dataclass
class Plan:
    kernel: object
    loop: object
    ev: AffineEvaluator
    loads: list[Load]
    groups: list[Group]
    counters: dict[str, Counter]


def where(program, index: int) -> str:
    return f"{program.path}:{program.instrs[index].lineno}"


def display_names(ev, size: str | None = None) -> dict[str, str]:
    """Atom names for messages: loop counters by their SGPR, the size argument as N."""
    out = {name: a.reg for name, a in ev.atoms.items() if a.kind == "counter"}
    if size is not None:
        out[size] = "N"
    return out


def refuse_exec_writes(program, cfg, loop, preheader_block: int | None) -> None:
    """The proof takes every lane as active: no EXEC write in the loop or the block before it."""
    blocks = set(loop.blocks) | ({preheader_block} if preheader_block is not None else set())
    for b in sorted(blocks):
        for i in cfg.blocks[b].indices():
            ins = program.instrs[i]
            if any(r.startswith("exec") for r in ins.defs):
                raise FixRefused(f"{where(program, i)}: '{ins.text()}' writes EXEC; the address proof takes every "
                                 "lane of the loop as active")


def make_plan(analysis, kernel, loop, load_indices: list[int]) -> Plan:
    program = analysis.program
    outside = [p for p in analysis.cfg.blocks[loop.header].preds if p not in loop.blocks]
    refuse_exec_writes(program, analysis.cfg, loop, outside[0] if len(outside) == 1 else None)
    ev = AffineEvaluator(program, kernel, loop)
    counters: dict[str, Counter] = {}
    loads: list[Load] = []
    for i in load_indices:
        ins = program.instrs[i]
        addr = ev.address(i)
        if not addr.known:
            raise FixRefused(f"{where(program, i)}: the address of '{ins.text()}' is not a function of the kernel's "
                             f"arguments, ids and loop counters isalint can follow: {addr.reason}")
        mod = ins.stmts[0].modifier("offset")
        imm = (mod.int_value() or 0) if mod is not None else 0
        q = addr.poly - imm
        for atom in sorted(q.atoms()):
            if ev.atoms[atom].kind == "counter" and atom not in counters:
                c = counter(ev, loop, atom)
                if isinstance(c, str):
                    raise FixRefused(f"{where(program, i)}: the address of '{ins.text()}' depends on "
                                     f"{ev.atoms[atom].reg}, which the loop changes in a way isalint cannot "
                                     f"follow: {c}")
                counters[atom] = c
        varying = {a for a in q.atoms() if ev.atoms[a].kind in ("lane", "counter")}
        offset, base = q.split(lambda m: any(a in varying for a in m))
        _check_affine(program, i, ev, offset)
        loads.append(Load(i, ins.lineno, base, offset, addr.conds))
    groups: dict[Poly, Group] = {}
    for ld in loads:
        g = groups.setdefault(ld.offset, Group(ld.offset))
        g.loads.append(ld)
    for g in groups.values():
        step = Poly()
        start = {}
        for atom, c in counters.items():
            if atom in g.offset.atoms():
                step = step + g.offset.coefficient(atom) * c.step
                start[atom] = c.init
        g.step = step
        g.start = g.offset.substitute(start)
    return Plan(kernel, loop, ev, loads, list(groups.values()), counters)


def _check_affine(program, i: int, ev, offset: Poly) -> None:
    text = program.instrs[i].text()
    shown = offset.render(display_names(ev))
    lanes = {a for a in offset.atoms() if ev.atoms[a].kind == "lane"}
    counters = {a for a in offset.atoms() if ev.atoms[a].kind == "counter"}
    for c in sorted(counters):
        reg = ev.atoms[c].reg
        if offset.degree(c) > 1:
            raise FixRefused(f"{where(program, i)}: the address of '{text}' is not affine in the loop counter "
                             f"{reg}: its offset {shown} grows with {reg}^{offset.degree(c)}")
        coef = offset.coefficient(c)
        if coef.atoms() & lanes:
            raise FixRefused(f"{where(program, i)}: the address of '{text}' is not affine in the loop counter "
                             f"{reg} with a wave-uniform step: in {shown}, {reg} is multiplied by a per-lane value")
        if coef.atoms() & counters:
            raise FixRefused(f"{where(program, i)}: the address of '{text}' multiplies two loop counters")
