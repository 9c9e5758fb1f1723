"""Two copies of the loop, one per LDS buffer.

The loop's blocks (one contiguous stretch of the file) stay where they are as copy A, iterations
0, 2, 4 ...; copy B, iterations 1, 3, 5 ..., follows them, its labels renamed. Every edge back to the
header goes to the other copy's header; edges out of the loop stay; a fall-through whose target
changes gets an ``s_branch``. In copy A the loads read buffer 0 and the stores write buffer 1; in copy
B the loads read buffer 1 and the stores write buffer 0 (the tile before the loop is stored in
buffer 0). Buffer 1 is buffer 0's addresses plus ``shift`` bytes, folded into each instruction's
offset field, or, where the field has no room, read from a base register that holds the address
register plus ``shift`` (computed before the loop).
"""
from __future__ import annotations

from .. import FixRefused
from ..toolkit import dsoffset

def region_lines(analysis, loop) -> tuple[int, int]:
    """(first, last) line indices of the loop's stretch of the file, labels included."""
    program, cfg = analysis.program, analysis.cfg
    blocks = sorted(loop.blocks)
    if blocks != list(range(blocks[0], blocks[-1] + 1)):
        raise FixRefused(f"{program.path}: the loop's blocks are not one stretch of the file")
    lines = program.source.lines
    index = {id(line): n for n, line in enumerate(lines)}
    first_ins = program.instrs[cfg.blocks[blocks[0]].first]
    start = index[id(first_ins.line)]
    while start > 0 and lines[start - 1].kind in ("label", "comment", "blank"):
        start -= 1
    last_block = cfg.blocks[blocks[-1]]
    end = index[id(program.instrs[last_block.last - 1].line)]
    return start, end


def label_of_line(line) -> str | None:
    return line.label if line.kind == "label" else None


def raw_fields(ins) -> dict[str, int]:
    """The instruction's offset fields as written (in their own units), by name."""
    stmt = ins.stmts[0]
    names = ("offset0", "offset1") if "2addr" in ins.opcode else ("offset",)
    return {n: (m.int_value() or 0) for n in names if (m := stmt.modifier(n)) is not None}


def shifted(ins, text: str, shift: int, bases: dict[str, str]) -> str:
    """``text`` (the DS instruction's line) addressing ``shift`` bytes further."""
    fields = dsoffset.folded_fields(ins, shift)
    addr = dsoffset.address_operand(ins)
    if fields is not None:
        return dsoffset.rewrite(ins, text, addr.text, fields)
    base = bases.get(addr.text)
    if base is None:
        raise FixRefused(f"internal error: no shifted base for {addr.text} at line {ins.lineno}")
    return dsoffset.rewrite(ins, text, base, raw_fields(ins))


def needs_base(ins, shift: int) -> bool:
    return dsoffset.folded_fields(ins, shift) is None


def retarget(ins, text: str, new: str) -> str:
    """The branch's line with its target label replaced."""
    target = ins.branch_target()
    op = next(o for o in ins.stmts[0].operands if o.text == target)
    start = op.col - 1
    if text[start:start + len(target)] != target:
        raise FixRefused(f"internal error: cannot find the target of the branch at line {ins.lineno}")
    return text[:start] + new + text[start + len(target):]
