"""Loop counters of the analysed loop and the branch conditions that bound them.

A *counter* is an SGPR the loop carries from one iteration to the next as ``value + step`` (a
positive constant), starting from a constant. Its bound comes from the conditions under which
control goes around the loop: for every back edge, the conditions of the branches that must
have been taken to reach it (a must-analysis over the loop's blocks, from the header) include
``next < X`` or ``next <= X``, where ``next`` is the counter's value for the next iteration and
``X`` does not change in the loop. Conditions are read from SCC (``s_cmp*`` then
``s_cbranch_scc0/1``) and from VCC holding ``exec & mask`` of such a compare
(``s_cselect_b32 -1, 0`` then ``s_and_not1_b32 vcc, exec, ...`` and ``s_cbranch_vccz/vccnz``),
taking EXEC as non-zero (``s_cbranch_execz`` is never taken), as the evaluator does.
"""
from __future__ import annotations

from dataclasses import dataclass

from .poly import Poly
from .words import Pred


@dataclass
class Counter:
    atom: str
    reg: str
    init: int
    step: int
    bound: Poly  # the value at the header is at most max(init, bound)
    conds: frozenset  # exactness conditions of the compares that give the bound


def edge_condition(ev, b: int, succ: int) -> tuple[Pred | bool | None, frozenset]:
    """What holds when control goes from block ``b`` to ``succ``: a :class:`Pred`, True (always
    taken, nothing learnt), False (never taken) or None (a condition isalint cannot read)."""
    blk = ev.cfg.blocks[b]
    if blk.last == blk.first:
        return True, frozenset()
    term = ev.program.instrs[blk.last - 1]
    if term.klass != "branch" or term.opcode == "s_branch":
        return True, frozenset()
    target = term.branch_target()
    tb = ev.cfg.label_block(ev.program, target)
    taken = succ == tb
    if taken and succ == b + 1:
        return True, frozenset()
    op = term.opcode
    if op == "s_cbranch_execz":
        return (not taken), frozenset()
    if op == "s_cbranch_execnz":
        return taken, frozenset()
    if op in ("s_cbranch_scc0", "s_cbranch_scc1"):
        w = ev.word("scc", term.index)
        if w.kind != "pred":
            return None, frozenset()
        holds = w.pred if (op == "s_cbranch_scc1") == taken else w.pred.negate()
        return holds, w.conds
    if op in ("s_cbranch_vccz", "s_cbranch_vccnz"):
        w = ev.word("vcc_lo", term.index)
        if w.kind not in ("execand", "mask"):
            return None, frozenset()
        # vcc == 0 exactly when the condition is false (EXEC is not zero)
        holds = w.pred if (op == "s_cbranch_vccnz") == taken else w.pred.negate()
        return holds, w.conds
    return None, frozenset()


def block_facts(ev, loop) -> dict[int, dict[Pred, frozenset]]:
    """Per block of ``loop``: the conditions that hold on every path from the header to it (each
    with the conditions under which its compare is exact)."""
    blocks = sorted(loop.blocks, key=lambda b: ev.cfg.blocks[b].first)
    facts: dict[int, dict | None] = {b: None for b in blocks}
    facts[loop.header] = {}
    changed = True
    while changed:
        changed = False
        for b in blocks:
            if b == loop.header:
                continue
            new = None
            for p in ev.cfg.blocks[b].preds:
                if p not in loop.blocks or facts[p] is None:
                    continue
                out = _out(ev, p, b, facts[p])
                if out is None:
                    continue
                new = out if new is None else {k: v | out[k] for k, v in new.items() if k in out}
            if new is not None and new != facts[b]:
                facts[b] = new
                changed = True
    return {b: f or {} for b, f in facts.items()}


def _out(ev, p: int, b: int, before: dict) -> dict | None:
    cond, conds = edge_condition(ev, p, b)
    if cond is False:
        return None
    out = dict(before)
    if isinstance(cond, Pred):
        out[cond] = out.get(cond, frozenset()) | conds
    return out


def entry_word(ev, loop, reg: str):
    """The value of ``reg`` on entry to ``loop`` (the same on every edge from outside, else unknown)."""
    preds = [p for p in ev.cfg.blocks[loop.header].preds if p not in loop.blocks]
    return ev._merge(loop.header, reg, [ev.exit_word(p, reg) for p in preds])


def induction(ev, loop, atom: str) -> tuple[int, int] | str:
    """(start, step) of the counter behind ``atom``: a constant on entry, the same positive constant
    added on every back edge; or why it is not one."""
    reg = ev.atoms[atom].reg
    start = entry_word(ev, loop, reg)
    if start.kind != "low" or not start.poly.is_const:
        return f"{reg} does not start the loop at a constant"
    me = Poly.atom(atom)
    step = None
    for latch in (p for p in ev.cfg.blocks[loop.header].preds if p in loop.blocks):
        nxt = ev.exit_word(latch, reg)
        if nxt.kind != "low" or not (nxt.poly - me).is_const:
            return f"{reg} does not change by a constant from one iteration to the next"
        d = (nxt.poly - me).constant
        if d <= 0 or (step is not None and d != step):
            return f"{reg} does not grow by one positive constant per iteration"
        step = d
    if step is None:
        return f"{reg} has no back edge"
    return start.poly.constant, step


def counter(ev, loop, atom: str) -> Counter | str:
    """The counter behind ``atom`` (a counter atom of ``ev``), or why it is not one: its
    :func:`induction` and the bound the branches around the loop put on it."""
    got = induction(ev, loop, atom)
    if isinstance(got, str):
        return got
    start, step = got
    reg = ev.atoms[atom].reg
    facts = block_facts(ev, loop)
    me = Poly.atom(atom)
    bound = None
    conds: frozenset = frozenset()
    for latch in (p for p in ev.cfg.blocks[loop.header].preds if p in loop.blocks):
        around = _out(ev, latch, loop.header, facts[latch]) or {}
        found = _bound_from(ev, me + step, around, me)
        if found is None:
            return f"no branch bounds {reg} on the way around the loop"
        b, c = found
        if bound is not None and b != bound:
            return f"the back edges bound {reg} differently"
        bound, conds = b, conds | c
    return Counter(atom, reg, start, step, bound, conds)


def _bound_from(ev, nxt: Poly, facts: dict, me: Poly) -> tuple[Poly, frozenset] | None:
    """A bound of ``nxt`` (= ``me + step``) from a condition on ``me + e``: ``me + e < X`` gives
    ``nxt <= X - 1 - e + step``."""
    step = (nxt - me).constant
    for pred, conds in facts.items():
        diff = pred.a - me
        if not diff.is_const or pred.op not in ("lt", "le"):
            continue
        if any(ev.atoms[x].kind != "uniform" for x in pred.b.atoms()):
            continue
        e = diff.constant
        return (pred.b - (1 if pred.op == "lt" else 0) - e + step), conds
    return None
