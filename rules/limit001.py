"""LIMIT001: analysis limit reached.

## What it finds
A part of the file that one of isalint's analyses gave up on, because the
work it needed grows faster than the file: thousands of loops nested in one
another, a single basic block of hundreds of thousands of FMAs for the
dual-issue pairing search, and the like. The message names the analysis, the
part of the file and how many instructions it did not check.

## Severity
The worst finding the part left out could have held. Warning where part of the
file was not checked (or not as fully as the rest) by an analysis that rules
of warning or error severity rely on: the loop analysis, LDS addresses, a file
cut into pieces, findings beyond the per-file cap. Info where only an info
rule lost code (DUAL002's pairing search, a missed opportunity at most), or
where nothing went unchecked and the report only lists part of a finding's
sites (its totals count them all). It is reported whatever `--select` says
(like a syntax error in other linters), unless `--ignore LIMIT001` turns it off.

## Why it matters
Every other rule's findings are complete except in the part named: a clean
result there means "not checked", not "no problem". Real kernels stay far below
the limits; a file that reaches one is usually generated or concatenated.

## Example
```
big.s:7:1: LIMIT001 analysis limit reached in the loop analysis (18586 enclosing
loop(s) from line 7): 40000 instructions not checked; those loops are checked as
straight-line code
```

## Fix safety
Information about isalint itself: nothing to fix in the kernel. Split the file,
or check the part named on its own.

"""
from __future__ import annotations

from isalint.diagnostics import Diagnostic

CODE = "LIMIT001"
NAME = "analysis-limit"
SEVERITY = "warning"
SUMMARY = "An analysis gave up on part of the file (its worst case grows faster than the file)"
FIXABLE = None


def check(analysis):
    program = analysis.program
    lines = program.source.lines
    first = lines[0].number if lines else 1  # a piece of a large file starts further down
    for limit in program.limits:
        k = limit.line - first
        line = lines[k] if 0 <= k < len(lines) else None
        end = len(line.text.rstrip()) + 1 if line is not None else 2
        yield Diagnostic(program.path, limit.line, 1, limit.line, max(2, end), CODE, limit.severity, limit.message())
