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


def plan(sequence, slots: set[int], entry: CounterState) -> tuple[dict[int, dict], CounterState]:
    """{position: thresholds} for a straight-line sequence, and the state after it.

    ``slots`` are the positions where the loop body had a wait of a re-derived counter: each
    gets the loosest wait that serves every instruction up to the next slot (the body's choice
    of where to wait is kept, the values follow from the counters). An instruction that needs
    an operation issued after its slot gets its own wait, as loose as it can be.
    """
    st = entry.copy()
    out: dict[int, dict] = {}
    bounds = sorted(slots | {0, len(sequence)})
    for start, end in zip(bounds, bounds[1:]):
        slot = start in slots
        thr: dict[str, int] = {}
        while True:
            t = st.copy()
            t.wait(thr)
            extra: dict[int, dict] = {}
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
                    if h.counter not in REDERIVED:
                        continue
                    before = st.pending.get((h.reg, h.counter, h.cls))
                    if slot and before is not None and before.origin == h.origin:
                        if before.k < thr.get(h.counter, counters.CAP + 1):
                            thr[h.counter] = before.k
                            tightened = True
                    else:
                        need[h.counter] = min(need.get(h.counter, counters.CAP + 1), h.k)
                if tightened:
                    break
                if need:
                    extra[q] = need
                    t.wait(need)
                for e in counters.events(ins):
                    t.issue(q, e)
            if not tightened:
                break
        if thr:
            extra[start] = _strictest(thr, extra.get(start, {}))
        out.update(extra)
        st = t
    return out, st


def plan_loop(sequence, slots: set[int], entry: CounterState,
              max_rounds: int = 64) -> tuple[dict[int, dict], CounterState]:
    """The same for a loop body (its end branches back to its start): to a fixed point."""
    top = entry.copy()
    for _ in range(max_rounds):
        waits_at, out = plan(sequence, slots, top)
        nxt = top.copy()
        if not nxt.merge(out):
            break
        top = nxt
    return waits_at, out


def _strictest(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {c: min(a.get(c, counters.CAP + 1), b.get(c, counters.CAP + 1)) for c in set(a) | set(b)}


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
