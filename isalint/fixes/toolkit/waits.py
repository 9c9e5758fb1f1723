"""Wait counters around new code: parse lines a pass is about to emit, drop one counter from a wait,
and the counter state where a loop is entered or a block is left (:mod:`isalint.model.counters`).

With these a pass re-derives the ``s_waitcnt`` of code it rewrites instead of keeping the old ones:
:func:`isalint.model.counters.plan_waits` (straight code) and
:func:`~isalint.model.counters.plan_loop_waits` (a loop body) take the parsed lines and the state and
wait as late and as loosely as each instruction allows; :func:`plan_at_slots` (and
:func:`plan_loop_at_slots`) keep the places the original code waited at and re-derive only the values.
:func:`wait_to_cover` is the wait that leaves code no less complete than before where it rejoins
unchanged code; :func:`wait_lines` writes thresholds as instructions.
"""
from __future__ import annotations

from ...model import counters as _counters
from ...model.waitcnt import wait_thresholds, waitcnt_text


def parse_lines(lines: list[str]):
    """The program model's instructions for lines of assembly (no kernel around them)."""
    from ...model.program import build_program
    from ...parse.source import parse_text

    prog = build_program(parse_text("\n".join(lines) + "\n", "<loop>"))
    return prog.instrs


def strip_counter(ins, counter: str = "lgkmcnt") -> str:
    """The wait instruction's text without its ``counter`` part ("" if nothing is left)."""
    thr = wait_thresholds(ins) or {}
    rest = {c: n for c, n in thr.items() if c != counter}
    if not rest:
        return ""
    if ins.opcode != "s_waitcnt":
        return ins.text()
    return f"s_waitcnt {waitcnt_text(rest)}"


def state_leaving(analysis, block: int, counters=None):
    """The counter state at the end of basic block ``block`` (after its last instruction)."""
    from ...model import counters as counters_mod

    program = analysis.program
    ca = counters if counters is not None else counters_mod.analyze(program)
    state = ca.block_in[block].copy()
    for i in analysis.cfg.blocks[block].indices():
        state.step(program.instrs[i], i, "zero")
    return state


def state_entering(analysis, loop, counters=None):
    """The counter state on the edges into ``loop`` from outside it, merged (None if there are none)."""
    from ...model import counters as counters_mod

    ca = counters if counters is not None else counters_mod.analyze(analysis.program)
    state = None
    for p in analysis.cfg.blocks[loop.header].preds:
        if p in loop.blocks:
            continue
        st = state_leaving(analysis, p, ca)
        if state is None:
            state = st
        else:
            state.merge(st)
    return state


def plan_at_slots(sequence, slots: set[int], entry, counters=("lgkmcnt", "vmcnt")) -> tuple[dict, object]:
    """({position: thresholds}, the state after) for a straight-line ``sequence`` of Instr whose waits on
    ``counters`` were taken out, with ``slots`` the positions they stood at.

    Each slot gets the loosest wait that serves every instruction up to the next slot: the original
    code's choice of where to wait is kept, the values follow from the counters. An instruction that
    needs an operation issued after its slot gets its own wait, as loose as it can be; so does one
    before the first slot. Waits left in the sequence (other counters) are honoured.
    """
    cap = _counters.CAP + 1
    st = entry.copy()
    out: dict[int, dict] = {}
    bounds = sorted(set(slots) | {0, len(sequence)})
    for start, end in zip(bounds, bounds[1:]):
        slot = start in slots
        thr: dict[str, int] = {}
        while True:  # tighten the slot's wait until no instruction of the stretch needs more of it
            t = st.copy()
            t.wait(thr)
            own: dict[int, dict] = {}
            tightened = False
            for q in range(start, end):
                ins = sequence[q]
                if ins.klass == "waitcnt":
                    kept = wait_thresholds(ins)
                    if kept:
                        t.wait(kept)
                    continue
                need: dict[str, int] = {}
                for h in t.check(ins, q):
                    if h.counter not in counters:
                        continue
                    at_slot = st.pending.get((h.reg, h.counter, h.cls))
                    if slot and at_slot is not None and at_slot.origin == h.origin:
                        if at_slot.k < thr.get(h.counter, cap):
                            thr[h.counter] = at_slot.k
                            tightened = True
                    else:
                        need[h.counter] = min(need.get(h.counter, cap), h.k)
                if tightened:
                    break
                if need:
                    own[q] = need
                    t.wait(need)
                for e in _counters.events(ins):
                    t.issue(q, e)
            if not tightened:
                break
        if thr:
            first = own.get(start, {})
            own[start] = {c: min(thr.get(c, cap), first.get(c, cap)) for c in set(thr) | set(first)}
        out.update(own)
        st = t
    return out, st


def plan_loop_at_slots(sequence, slots: set[int], entry, counters=("lgkmcnt", "vmcnt"),
                       max_rounds: int = 64) -> tuple[dict, object]:
    """:func:`plan_at_slots` for a loop body (its end branches back to its start), from the join of
    ``entry`` and the state at its back edge, to a fixed point; the state is the one on its exits."""
    top = entry.copy()
    for _ in range(max_rounds):
        waits_at, out = plan_at_slots(sequence, slots, top, counters)
        nxt = top.copy()
        if not nxt.merge(out):
            break
        top = nxt
    return waits_at, out


def wait_to_cover(new, old, counters=("lgkmcnt", "vmcnt")) -> dict[str, int]:
    """The wait after which every operation in flight in state ``new`` is at least as surely complete
    as in state ``old`` (code written against ``old`` follows): {} when none is needed.

    An operation with ``k`` later operations of its counter certain to finish after it is complete
    after ``s_waitcnt counter(k)``; the code that follows waits at most what ``old`` needs, so ``new``
    must not hold a register ``old`` does not, or hold it with a smaller ``k``.
    """
    need: dict[str, int] = {}
    for key, p in new.pending.items():
        if key[1] not in counters:
            continue
        q = old.pending.get(key)
        if q is None or p.k < q.k:
            need[key[1]] = min(need.get(key[1], _counters.CAP), p.k)
    return need


def wait_lines(indent: str, thresholds: dict[str, int]) -> list[str]:
    """``s_waitcnt`` (and ``s_waitcnt_vscnt``, an instruction of its own) for ``thresholds``."""
    out = []
    main = {c: n for c, n in thresholds.items() if c != "vscnt"}
    if main:
        out.append(f"{indent}s_waitcnt {waitcnt_text(main)}")
    if "vscnt" in thresholds:
        out.append(f"{indent}s_waitcnt_vscnt null, {thresholds['vscnt']}")
    return out
