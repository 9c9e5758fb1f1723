"""Parsing emitted lines, and putting the unrolled code in the place of the loop."""
from __future__ import annotations

from ..toolkit import Edits, check_understood
from ..toolkit import parse_lines as _parse


def parse_lines(texts: list[str]):
    """One understood Instr per text (each text one instruction line)."""
    from .. import FixRefused

    instrs = _parse(texts)
    if len(instrs) != len(texts):
        raise FixRefused("internal error: an emitted line is not one instruction")
    for ins in instrs:
        check_understood(ins)
    return instrs


def replace_loop(analysis, ctl, lines: list[str], exit_delays: dict[int, list[str]] | None = None) -> str:
    """The file with the loop's instructions (first to back edge) replaced by ``lines``; comment lines
    among them stay, before the new code. ``exit_delays`` ({instruction index in the exit block:
    s_delay_alu lines before it}) replaces the exit block's own s_delay_alu."""
    program = analysis.program
    edits = Edits(program)
    first, last = edits.line_of(ctl.body[0]), edits.line_of(ctl.branch)
    source = program.source
    kept = [source.lines[n].text for n in range(first, last + 1) if source.lines[n].kind != "instruction"]
    for n in range(first, last + 1):
        edits.replace_line(n, [])
    edits.replace_line(first, kept + lines)
    if exit_delays is not None:
        for i in analysis.cfg.blocks[ctl.exit_block].indices():
            if program.instrs[i].opcode == "s_delay_alu":
                edits.delete(i)
        for i, texts in exit_delays.items():
            edits.insert_before(i, texts)
    return edits.render()
