"""Parsing emitted lines, and putting the unrolled code in the place of the loop."""
from __future__ import annotations

from .. import FixRefused


def parse_lines(texts: list[str]):
    """One Instr per text (each text one instruction line)."""
    from ...model.program import build_program
    from ...parse.source import parse_text

    prog = build_program(parse_text("\n".join(texts) + "\n", "<unrolled>"))
    if len(prog.instrs) != len(texts):
        raise FixRefused("internal error: an emitted line is not one instruction")
    for ins in prog.instrs:
        if ins.opaque:
            raise FixRefused(f"internal error: the emitted line '{ins.text()}' is not understood: {ins.problem}")
    return prog.instrs


def replace_loop(analysis, ctl, lines: list[str], exit_delays: dict[int, list[str]] | None = None) -> str:
    """The file with the loop's instruction lines (first to back edge) replaced by ``lines``;
    comment lines among them stay, before the new code. ``exit_delays`` ({instruction index in the
    exit block: s_delay_alu lines before it}) replaces the exit block's own s_delay_alu."""
    program = analysis.program
    source = program.source
    index = {id(line): n for n, line in enumerate(source.lines)}
    first = index[id(program.instrs[ctl.body[0]].line)]
    last = index[id(program.instrs[ctl.branch].line)]
    kept = [source.lines[n].text for n in range(first, last + 1) if source.lines[n].kind != "instruction"]
    eol = source.lines[first].eol or "\n"
    out = [ln.text + ln.eol for ln in source.lines[:first]]
    out += [t + eol for t in kept + lines]
    before: dict[int, list[str]] = {}
    dropped: set[int] = set()
    if exit_delays is not None:
        for i in analysis.cfg.blocks[ctl.exit_block].indices():
            if program.instrs[i].opcode == "s_delay_alu":
                dropped.add(index[id(program.instrs[i].line)])
        for i, texts in exit_delays.items():
            before[index[id(program.instrs[i].line)]] = texts
    for n in range(last + 1, len(source.lines)):
        if n in dropped:
            continue
        out += [t + eol for t in before.get(n, [])]
        out.append(source.lines[n].text + source.lines[n].eol)
    return "".join(out)
