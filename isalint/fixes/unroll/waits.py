"""The ``s_waitcnt`` of the unrolled code, derived again from the counters.

The copies are emitted without their ``lgkmcnt``/``vmcnt`` waits, each copy remembering where
the body waited; :func:`isalint.fixes.toolkit.plan_at_slots` then gives each of those places
the loosest wait the instructions up to the next one need, from the state the loop is
entered with (so a wait the loop needed only because of its back edge loosens where the
copies make it unnecessary). Waits on the other counters (``vscnt``, ``expcnt``) order memory
rather than registers and are kept where they were. The code after the loop was written
against the loop's exit state: where the unrolled code leaves an operation less surely
complete than the loop did, one wait at the end restores it
(:func:`~isalint.fixes.toolkit.wait_to_cover`).
"""
from __future__ import annotations

from ...model.counters import CounterState
from ...model.waitcnt import wait_thresholds, waitcnt_text
from ..toolkit import state_entering, state_leaving

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
    return state_entering(analysis, ctl.loop) or CounterState()


def exit_state(analysis, ctl) -> CounterState:
    """The state the original loop leaves on its exit edge."""
    return state_leaving(analysis, ctl.block)
