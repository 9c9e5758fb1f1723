"""Findings reported by rules, and the severities they carry."""
from __future__ import annotations

from .records import Record

SEVERITIES = ("error", "warning", "info")


class Site(Record):
    """One place an aggregated finding covers, with what happens there."""

    line: int
    column: int
    end_column: int
    message: str

    __slots__ = _fields = ("line", "column", "end_column", "message")

    def __init__(self, line: int, column: int, end_column: int, message: str):
        self.line = line
        self.column = column
        self.end_column = end_column
        self.message = message


class Diagnostic(Record):
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    severity: str
    message: str
    fix: str | None
    notes: list[str]  # detail printed under the finding
    sites: list[Site]  # the places an aggregated finding covers
    cost: dict | None  # what a performance finding costs (see rules/cost.py)
    kernel: str | None  # the kernel of a code object it is about (``path`` is then ``FILE:KERNEL``)

    __slots__ = _fields = ("path", "line", "column", "end_line", "end_column", "code", "severity", "message",
                           "fix", "notes", "sites", "cost", "kernel")

    def __init__(self, path: str, line: int, column: int, end_line: int, end_column: int, code: str, severity: str,
                 message: str, fix: str | None = None, notes: list[str] | None = None,
                 sites: list[Site] | None = None, cost: dict | None = None, kernel: str | None = None):
        self.path = path
        self.line = line
        self.column = column
        self.end_line = end_line
        self.end_column = end_column
        self.code = code
        self.severity = severity
        self.message = message
        self.fix = fix
        self.notes = [] if notes is None else notes
        self.sites = [] if sites is None else sites
        self.cost = cost
        self.kernel = kernel

    def to_json(self) -> dict:
        """The finding as JSON; one in a kernel of a code object names the file as ``path`` and the
        kernel as ``kernel``."""
        if self.kernel is not None:
            path = self.path[:-len(self.kernel) - 1] if self.path.endswith(":" + self.kernel) else self.path
            return {"path": path, "kernel": self.kernel, **self._json_body()}
        return {"path": self.path, **self._json_body()}

    def _json_body(self) -> dict:
        return {"line": self.line, "column": self.column, "end_line": self.end_line,
                "end_column": self.end_column, "code": self.code, "severity": self.severity, "message": self.message,
                "fix": self.fix, "notes": list(self.notes),
                "sites": [{"line": s.line, "column": s.column, "end_column": s.end_column, "message": s.message}
                          for s in self.sites],
                "cost": dict(self.cost) if self.cost is not None else None}

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
