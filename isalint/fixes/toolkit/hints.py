"""``s_delay_alu`` hints for the ALU dependencies that lack one (:mod:`isalint.model.alu_delays`).

In every basic block where an ALU instruction reads a result still in flight with no hint naming it,
the block's hints are written again: its ``s_delay_alu`` lines are removed and each ALU instruction
that needs a wait gets one line before it with the closest dependency of each kind (two at most,
``instskip(SAME)``). Hints change no result, only which wave the SIMD issues while a result is in
flight (RDNA3 ISA guide, ``S_DELAY_ALU``), so a block whose hints are complete is left as it is.
"""
from __future__ import annotations

from ...model.alu_delays import SKIP_NAMES, encode, pending_dependencies, pending_in, strongest
from .edits import Edits, indent_of


def add_missing_delays(analysis, only=None) -> tuple[str | None, list[str]]:
    """The file with every missing ``s_delay_alu`` written, and what was done; ``(None, [])`` when
    nothing is missing. ``only(pending) -> bool`` limits the rewrite to the blocks of some of the
    missing hints (:class:`isalint.model.alu_delays.Pending`)."""
    program, cfg = analysis.program, analysis.cfg
    missing = pending_dependencies(analysis)
    if only is not None:
        missing = [p for p in missing if only(p)]
    if not missing:
        return None, []
    instrs = program.instrs
    blocks = sorted({cfg.block_of[p.consumer] for p in missing})
    chosen = set(blocks)
    needs: dict[int, list] = {}
    for p in pending_in(program, cfg, hints=False):
        if cfg.block_of[p.consumer] in chosen:
            needs.setdefault(p.consumer, []).append(p.need)
    edits = Edits(program)
    removed = 0
    for b in blocks:
        for i in cfg.blocks[b].indices():
            if instrs[i].opcode == "s_delay_alu":
                edits.delete(i)
                removed += 1
    written = 0
    for b in blocks:
        written += _write_block(edits, instrs, cfg.blocks[b], needs)
    consumers = len({p.consumer for p in missing})
    lines = sorted({instrs[p.consumer].lineno for p in missing})
    shown = ", ".join(map(str, lines[:6])) + (f" and {len(lines) - 6} more" if len(lines) > 6 else "")
    notes = [f"{consumers} ALU instruction{'s' if consumers != 1 else ''} lacked an s_delay_alu (line"
             f"{'s' if len(lines) != 1 else ''} {shown}); the hints of {len(blocks)} block"
             f"{'s' if len(blocks) != 1 else ''} written again ({removed} removed, {written} written)"]
    return edits.render(), notes


def _write_block(edits: Edits, instrs, block, needs: dict) -> int:
    """Hint lines before the block's instructions that need waits; like the compiler, a hint with one
    wait also carries the next instruction's single wait when it is at most 5 instructions on
    (``instskip``). Returns how many lines were written."""
    real = [i for i in block.indices() if instrs[i].opcode != "s_delay_alu"]
    open_hint = None  # [position in real, consumer index, its one dependency]
    lines: dict[int, str] = {}
    for pos, i in enumerate(real):
        deps = strongest(needs.get(i, []))
        if not deps:
            continue
        indent = indent_of(instrs[i].line)
        if open_hint is not None and len(deps) == 1 and pos - open_hint[0] < len(SKIP_NAMES):
            at, first, dep = open_hint
            lines[first] = encode(indent_of(instrs[first].line), [dep], pos - at, deps[0])
            open_hint = None
            continue
        lines[i] = encode(indent, deps)
        open_hint = [pos, i, deps[0]] if len(deps) == 1 else None
    for i, text in lines.items():
        edits.insert_before(i, [text])
    return len(lines)


def hint_new_code(before_text: str, after) -> tuple[str | None, list[str]]:
    """A pass's output with the hints its new code lacks: a missing hint is written (with the others
    of its block) when its instruction's block or the instruction it waits for holds a line the input
    does not have, so what was missing in code the pass left alone stays as it was (``fix
    --delay-alu`` is there for that)."""
    old_lines = set(before_text.splitlines())
    instrs, cfg = after.program.instrs, after.cfg

    changed_blocks: dict[int, bool] = {}

    def new(i: int) -> bool:
        return i >= 0 and instrs[i].line.text not in old_lines

    def involves_new_code(p) -> bool:
        b = cfg.block_of[p.consumer]
        if b not in changed_blocks:
            changed_blocks[b] = any(new(i) for i in cfg.blocks[b].indices())
        return new(p.producer) or changed_blocks[b]

    text, notes = add_missing_delays(after, only=involves_new_code)
    return text, [f"s_delay_alu for the new code: {n}" for n in notes]

