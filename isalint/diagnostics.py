"""Findings reported by rules, and the severities they carry."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

SEVERITIES = ("error", "warning", "info")


@dataclass(slots=True)
class Site:
    """One place an aggregated finding covers, with what happens there."""

    line: int
    column: int
    end_column: int
    message: str


@dataclass(slots=True)
class Diagnostic:
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    severity: str
    message: str
    fix: str | None = None
    notes: list[str] = field(default_factory=list)  # detail printed under the finding
    sites: list[Site] = field(default_factory=list)  # the places an aggregated finding covers
    cost: dict | None = None  # what a performance finding costs (see rules/cost.py)

    def to_json(self) -> dict:
        return asdict(self)

    def sort_key(self):
        return (self.path, self.line, self.column, self.code)


def at_instr(program, instr, code: str, severity: str, message: str, fix: str | None = None,
             stmt: int = 0) -> Diagnostic:
    """A diagnostic spanning one instruction (or one half of a VOPD pair)."""
    line = instr.line
    if instr.stmts:
        s = instr.stmts[min(stmt, len(instr.stmts) - 1)]
        col, end = s.col, s.end_col
    else:
        col, end = 1, len(line.text.rstrip()) + 1
    return Diagnostic(program.path, line.number, col, line.number, end, code, severity, message, fix)


def at_line(path: str, line, code: str, severity: str, message: str, column: int = 1,
            fix: str | None = None) -> Diagnostic:
    text = line.text.rstrip()
    start = column if column > 1 else (len(text) - len(text.lstrip()) + 1)
    return Diagnostic(path, line.number, start, line.number, max(start + 1, len(text) + 1), code,
                      severity, message, fix)
