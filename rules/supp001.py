"""SUPP001: a suppression comment that suppresses nothing.

## What it finds
An `; isalint: disable=CODE` (on the line it silences), `; isalint:
disable-next-line=CODE` or `; isalint: disable-file=CODE` whose code had no
finding to silence: the rule ran and found nothing there (or in the file).
Each code of a comment is judged on its own, so `disable=BANK001,DUAL002`
where only BANK001 fires reports DUAL002. Codes may be written as rule names
(`disable=vgpr-bank-conflict`).

A code is only judged when its rule ran on the file: a rule left out by
`--select`, `--ignore` or `per-file-ignores` cannot tell whether its
suppression is needed, and `ALL` is only judged when every rule ran.
(Comments naming no rule or a code no rule has are reported as configuration
problems, not by this rule.)

## Severity
Warning: the comment is harmless today, but it hides the next finding someone
introduces on that line, and it says something about the code that is no
longer true.

## Why it matters
Suppressions outlive the findings they were written for: the kernel is
rewritten (a register moved to another bank, a wait loosened), the finding
goes away, and the comment stays, silently disabling the rule on a line
nobody looks at any more.

## Example
```asm
v_dual_fmac_f32 v5, v186, v184 :: v_dual_fmac_f32 v2, v187, v185  ; isalint: disable=BANK001
```
`SUPP001 unused suppression: no BANK001 finding on this line` (this pair reads
each bank once). Good: the line without the comment.

## Fix safety
No automatic fix: delete the code from the comment (or the comment).

## Reference
isalint's own suppression comments (README, "Configuration and suppressions").
"""
from __future__ import annotations

from isalint.diagnostics import Diagnostic

CODE = "SUPP001"
NAME = "unused-suppression"
SEVERITY = "warning"
SUMMARY = "isalint: disable comment whose rule had no finding to silence"
FIXABLE = None

_WHERE = {"disable": "on this line", "disable-next-line": "on the next line", "disable-file": "in this file"}


def check_suppressions(analysis, suppressions, ran: list[str], everything_ran: bool):
    """The directives that silenced nothing, among those whose rules ran (``ran``)."""
    program = analysis.program
    for d in suppressions.directives:
        if d.used:
            continue
        if d.code == "ALL" and not everything_ran:
            continue
        if d.code != "ALL" and d.code not in ran:
            continue
        what = "finding" if d.code == "ALL" else f"{d.code} finding"
        yield Diagnostic(program.path, d.line, d.column, d.line, d.column + len(d.token), CODE, SEVERITY,
                         f"unused suppression: no {what} {_WHERE[d.kind]} to disable")
