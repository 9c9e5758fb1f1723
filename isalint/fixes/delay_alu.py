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
from .toolkit.pcrel import refusal
from .toolkit.verify import reparse

WRITES_HINTS = True  # the pipeline's finishing step (hints for a pass's new code) is this pass itself


def apply(analysis, options: dict | None = None) -> FixResult:
    from ..model.alu_delays import pending_dependencies

    refused = refusal(analysis.program, "writes s_delay_alu hints")
    if refused is not None:  # before any work: a hint written anywhere in such code may move the target
        raise refused
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
