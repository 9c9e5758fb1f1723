"""DUAL003: a VOPD half reads the register the other half writes.

## What it finds
A `v_dual_*` instruction whose Y half reads a register its X half writes, e.g.
`v_dual_mov_b32 v0, v1 :: v_dual_mov_b32 v3, v0`. The pair is legal, but both
halves read their sources before either writes, so Y reads the value the
register held before the instruction, not X's result.

## Severity
Info: the pair may be meant that way (a swap through a VOPD is a known idiom);
read in written order it looks like Y consumes X's result, which is a bug when
two single instructions were merged by hand.

## Why it matters
Written as two single instructions, `v_mov_b32 v0, v1` then `v_mov_b32 v3, v0`
copies v1 into v3; merged into one VOPD it copies the old v0. Nothing
rejects it: the assembler accepts the pair and the kernel computes something
else.

## Example
```asm
; flagged: v3 receives the old v0, not v1
v_dual_mov_b32 v0, v1 :: v_dual_mov_b32 v3, v0
; if v3 should get v1, read it directly
v_dual_mov_b32 v0, v1 :: v_dual_mov_b32 v3, v1
```

## Fix safety
No automatic fix: only the author knows which value Y should read. Either
read the source X reads, or split the pair into two instructions.

## Reference
RDNA3 ISA guide, section 7.6 "Dual Issue VALU": both operations read their
operands before either writes its result.
"""
from __future__ import annotations

from isalint.diagnostics import Diagnostic

CODE = "DUAL003"
NAME = "vopd-stale-read"
SEVERITY = "info"
SUMMARY = "VOPD whose Y half reads the register its X half writes (it reads the old value)"
FIXABLE = None


def _span(ins, regs) -> tuple[int, int]:
    """Columns of the Y operand that reads one of ``regs``, else of the Y half."""
    y = ins.stmts[1]
    for op in y.operands[1:]:
        if op.col and any(r in regs for r in op.registers()):
            return op.col, op.col + len(op.text)
    return y.col, max(y.end_col, y.col + 1)


def check(analysis):
    program = analysis.program
    for ins in program.instrs:
        if len(ins.stmts) != 2:
            continue
        for v in analysis.vopd_violations(ins.index):
            if v.rule != "reads-other-dst":
                continue
            col, end = _span(ins, v.regs)
            yield Diagnostic(program.path, ins.lineno, col, ins.lineno, end, CODE, SEVERITY, v.message)
