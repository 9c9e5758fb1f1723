"""Checks a pass runs on its own output before handing it back: it parses, every instruction is
understood, every VOPD is legal, and no wait-counter hazard appears that the input did not have.

A failure is the pass's bug, not the input's fault: each raises FixRefused with "internal error", so
nothing is written.
"""
from __future__ import annotations

from .. import FixRefused


def reparse(text: str, path: str):
    """The :class:`~isalint.analysis.Analysis` of a rewritten file."""
    from ...analysis import Analysis
    from ...parse.source import InputError, parse_text

    try:
        return Analysis.from_source(parse_text(text, path))
    except InputError as exc:
        raise FixRefused(f"internal error: the rewritten file does not parse ({exc})") from None


def check_understood(ins) -> None:
    if ins.opaque:
        raise FixRefused(f"internal error: line {ins.lineno} of the output is not understood: {ins.problem}")


def check_vopd(ins) -> None:
    """A VOPD instruction must break no pairing rule (:func:`isalint.hw.vopd.check_pair`)."""
    from ...hw.vopd import check_pair

    if ins.is_vopd:
        bad = [v for v in check_pair(ins.stmts[0], ins.stmts[1]) if v.severity == "error"]
        if bad:
            raise FixRefused(f"internal error: line {ins.lineno} is not a legal VOPD: {bad[0].message}")


def check_no_new_wait_hazards(old_program, new_program) -> None:
    """Every wait-counter hazard of the output must be one the input already had, at the same
    (unchanged) instruction text."""
    from ...model import counters

    def hazards(program) -> set[tuple[str, str, str]]:
        return {(program.instrs[h.index].text(), h.reg, h.counter) for h in counters.analyze(program).hazards}

    before = hazards(old_program)
    for h in counters.analyze(new_program).hazards:
        if (new_program.instrs[h.index].text(), h.reg, h.counter) not in before:
            raise FixRefused(f"internal error: the rewrite leaves {h.reg} used at line "
                             f"{new_program.instrs[h.index].lineno} before its {h.counter} wait")
