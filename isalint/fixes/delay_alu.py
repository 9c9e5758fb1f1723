"""``isalint fix --delay-alu``: write the ``s_delay_alu`` hints that DELAY001 finds missing.

The work is :func:`isalint.fixes.toolkit.hints.add_missing_delays`: in each basic block holding an
ALU instruction that reads a result still in flight with no hint naming it, the hints are written
again, one line before each instruction that needs a wait. The output is re-parsed and must have no
missing hint left. Validation needs no emulation: the output must assemble, and without its
``s_delay_alu`` lines be the input's machine code byte for byte (a hint changes no result). That check
cannot see an address counted in bytes from ``s_getpc_b64`` with a number (disassembled code objects
branch that way), which any added line can move: such a file is refused.
"""
from __future__ import annotations

from . import FixRefused, FixResult
from .toolkit.edits import Edits
from .toolkit.hints import add_missing_delays
from .toolkit.verify import reparse

WRITES_HINTS = True  # the pipeline's finishing step (hints for a pass's new code) is this pass itself


def constant_pc_offset(program) -> int | None:
    """The first ``s_getpc_b64`` whose address is moved by a number, not by a symbol or label
    difference the assembler works out (``s_getpc_b64 s[66:67]; s_add_i32 s68, 0xc98, 4; s_add_u32
    s66, s66, s68; ...; s_setpc_b64``, as a disassembled code object has it): an instruction index,
    else None. A line written anywhere in such code can move the address it reaches."""
    instrs = program.instrs
    for i, ins in enumerate(instrs):
        if ins.opcode != "s_getpc_b64":
            continue
        follow = instrs[i + 1:i + 6]
        if not any(op.kind in ("expr", "label") for f in follow for st in f.stmts for op in st.operands):
            return i
    return None


def apply(analysis, options: dict | None = None) -> FixResult:
    from ..model.alu_delays import pending_dependencies

    at = constant_pc_offset(analysis.program)
    if at is not None:
        ins = analysis.program.instrs[at]
        raise FixRefused(f"{analysis.program.path}:{ins.lineno}: s_getpc_b64 with a numeric offset: a hint written "
                         f"before the address it computes would move that address (make the offset a label "
                         f"difference first)")
    text, notes = add_missing_delays(analysis)
    if text is None:
        return FixResult(Edits(analysis.program).render(),
                         "delay-alu: every ALU dependency already has its s_delay_alu")
    after = reparse(text, analysis.program.path)
    left = pending_dependencies(after)
    if left:
        ins = after.program.instrs[left[0].consumer]
        raise FixRefused(f"internal error: line {ins.lineno} still lacks {left[0].need.name} after the rewrite")
    return FixResult(text, "delay-alu: " + "; ".join(notes))
