"""Wait counters around new code: parse lines a pass is about to emit, drop one counter from a wait,
and the counter state where a loop is entered or a block is left (:mod:`isalint.model.counters`).

With these a pass re-derives the ``s_waitcnt`` of code it rewrites instead of keeping the old ones:
:func:`isalint.model.counters.plan_waits` (straight code) and
:func:`~isalint.model.counters.plan_loop_waits` (a loop body) take the parsed lines and the state.
"""
from __future__ import annotations

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
