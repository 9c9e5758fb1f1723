"""The ``s_waitcnt`` of the unrolled code, derived again from the counters.

The copies are emitted without their ``lgkmcnt``/``vmcnt`` waits; :mod:`isalint.model.counters`
then places the loosest waits each instruction needs, from the state the loop is entered
with (so a wait the loop needed only because of its back edge disappears where the copies
make it unnecessary). Waits on the other counters (``vscnt``, ``expcnt``) order memory rather
than registers and are kept where they were. The code after the loop was written against
the loop's exit state: where the unrolled code leaves an operation less surely complete
than the loop did, one wait at the end restores it.
"""
from __future__ import annotations

from ...model import counters
from ...model.counters import CounterState
from ...model.waitcnt import wait_thresholds, waitcnt_text

REDERIVED = ("lgkmcnt", "vmcnt")


def strip(ins) -> str | None:
    """The wait without its re-derived counters: None when nothing is left, else the text."""
    thr = wait_thresholds(ins)
    if thr is None:
        return ins.text()  # a form isalint cannot read: kept as written
    rest = {c: n for c, n in thr.items() if c not in REDERIVED}
    if len(rest) == len(thr):
        return ins.text()
    if not rest:
        return None
    if ins.opcode != "s_waitcnt":
        return ins.text()
    return f"s_waitcnt {waitcnt_text(rest)}"


def entry_state(analysis, ctl) -> CounterState:
    """The counter state on the edges into the loop (the join over its entries)."""
    program, cfg = analysis.program, analysis.cfg
    ca = counters.analyze(program)
    state = None
    for p in cfg.blocks[ctl.block].preds:
        if p == ctl.block:
            continue
        st = ca.block_in[p].copy()
        for i in cfg.blocks[p].indices():
            st.step(program.instrs[i], i, "zero")
        if state is None:
            state = st
        else:
            state.merge(st)
    return state if state is not None else CounterState()


def exit_state(analysis, ctl) -> CounterState:
    """The state the original loop leaves on its exit edge."""
    program = analysis.program
    st = counters.analyze(program).block_in[ctl.block].copy()
    for i in ctl.body:
        st.step(program.instrs[i], i, "zero")
    return st


def plan_straight(sequence, entry: CounterState) -> tuple[dict[int, dict], CounterState]:
    """{position: thresholds} for a straight-line sequence, and the state after it."""
    plan, out = counters.plan_waits(sequence, entry, keep_existing=True, counters=REDERIVED)
    return {w.position: w.thresholds for w in plan}, out


def plan_loop(sequence, entry: CounterState, max_rounds: int = 64) -> tuple[dict[int, dict], CounterState]:
    """The same for a loop body (its end branches back to its start): to a fixed point."""
    top = entry.copy()
    for _ in range(max_rounds):
        plan, out = counters.plan_waits(sequence, top, keep_existing=True, counters=REDERIVED)
        nxt = top.copy()
        if not nxt.merge(out):
            break
        top = nxt
    return {w.position: w.thresholds for w in plan}, out


def cover(new: CounterState, old: CounterState) -> dict[str, int]:
    """The wait that leaves every operation of ``new`` at least as surely complete as in ``old``.

    An operation in flight with ``k`` later operations of its counter certain to finish after it
    is complete after ``s_waitcnt counter(k)``; code that relied on ``old`` waits at most what
    ``old`` needs, so ``new`` must not hold a register ``old`` did not, or with a smaller ``k``.
    """
    need: dict[str, int] = {}
    for key, p in new.pending.items():
        q = old.pending.get(key)
        if q is None or p.k < q.k:
            counter = key[1]
            need[counter] = min(need.get(counter, counters.CAP), p.k)
    return need


def wait_lines(indent: str, thresholds: dict[str, int]) -> list[str]:
    """``s_waitcnt`` (and ``s_waitcnt_vscnt``, which has its own instruction) for ``thresholds``."""
    out = []
    main = {c: n for c, n in thresholds.items() if c != "vscnt"}
    if main:
        out.append(f"{indent}s_waitcnt {waitcnt_text(main)}")
    if "vscnt" in thresholds:
        out.append(f"{indent}s_waitcnt_vscnt null, {thresholds['vscnt']}")
    return out
