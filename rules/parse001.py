"""PARSE001: line isalint cannot read.

## What it finds
A line that is not a label, directive or instruction isalint can read: unknown
opcodes, malformed operands, operands of the wrong width for the opcode, text
that is not valid UTF-8.

## Severity
Error: the line is opaque to every other rule and most likely to the assembler.

## Why it matters
An instruction isalint does not understand is opaque: it is assumed to read and
write nothing known, so every analysis that crosses it (dependencies, waits,
register counts) loses precision there, and the assembler will most likely
reject the line anyway.

## Example
```asm
v_fmac_f32_e32 v[1:2], v3, v4      ; PARSE001: vdst is 32 bits, v[1:2] names 2 registers
v_fmac_f23 v1, v3, v4              ; PARSE001: unknown instruction
```

## Fix safety
No automatic fix: correct the line by hand.
"""
from __future__ import annotations

import re

from isalint.diagnostics import Diagnostic

_TOKEN = re.compile(r"[^\s,;]+")

CODE = "PARSE001"
NAME = "unreadable-line"
SEVERITY = "error"
SUMMARY = "Line isalint cannot parse or does not know (treated as opaque)"
FIXABLE = None


def check(analysis):
    program = analysis.program
    path = program.path
    for line in program.source.lines:
        if line.kind == "unknown" and line.error:
            text = line.text.rstrip()
            yield Diagnostic(path, line.number, line.error_col, line.number, max(line.error_col + 1, len(text) + 1),
                             CODE, SEVERITY, line.error)
    for ins in program.instrs:
        if ins.problem:
            text = ins.line.text.rstrip()
            yield Diagnostic(path, ins.lineno, ins.problem_col, ins.lineno, _token_end(text, ins.problem_col),
                             CODE, SEVERITY, f"{ins.problem}; treated as opaque")


def _token_end(text: str, col: int) -> int:
    """The column just past the operand or mnemonic that starts at ``col`` (the end of the line
    when it cannot be told)."""
    m = _TOKEN.match(text, col - 1)
    return col + len(m.group(0)) if m and m.group(0) else len(text) + 1
