"""A checked document's findings as the protocol's diagnostics.

Each finding is one diagnostic: its severity (error, warning, info -> Error, Warning, Information),
its rule code linked to the rule's documentation (``codeDescription``), its notes and fix under the
message. The sites of an aggregated finding (one finding for a loop, listing its instructions) are
its related locations, and each is also a diagnostic of its own with Hint severity (its message names
the finding), so that an editor marks the instruction and offers, there, to suppress the finding for
that instruction alone.

What ``isalint check`` prints beside its findings also lands where it belongs: a suppression comment
that cannot suppress anything is a warning on the comment; a text that could not be checked at all
says why on the line it names.
"""
from __future__ import annotations

import re

from lsprotocol import types as lsp

from .positions import Positions

SOURCE = "isalint"
SEVERITY = {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning,
            "info": lsp.DiagnosticSeverity.Information}
_WHERE = re.compile(r"^.*?:(\d+): (.*)$", re.S)


def diagnostics(outcome, positions: Positions, uri: str, docs) -> list[lsp.Diagnostic]:
    """The diagnostics of ``outcome`` (:class:`isalint.server.engine.Outcome`); ``docs``: a
    :class:`isalint.server.docs.RuleDocs` (None: no links)."""
    if outcome.problem is not None:
        line, message = outcome.problem
        return [_on_line(positions, line, message, lsp.DiagnosticSeverity.Warning)]
    out: list[lsp.Diagnostic] = []
    for d in outcome.findings:
        out.append(finding(d, positions, uri, docs))
        for n, site in enumerate(d.sites):
            out.append(lsp.Diagnostic(
                range=_range(positions, site.line, site.column, site.line, site.end_column),
                message=f"{site.message} (site {n + 1} of {d.code}: {d.message})",
                severity=lsp.DiagnosticSeverity.Hint, code=d.code, source=SOURCE,
                code_description=_description(docs, d.code), data={"site": n, "line": d.line}))
    for warning in outcome.warnings:
        m = _WHERE.match(warning)
        if m:
            out.append(_on_line(positions, int(m.group(1)), m.group(2), lsp.DiagnosticSeverity.Warning))
    return out


def finding(d, positions: Positions, uri: str, docs) -> lsp.Diagnostic:
    notes = list(d.notes)
    if d.fix:
        notes.append(f"fix: isalint fix {d.fix}")
    message = "\n".join([d.message, *notes])
    related = [lsp.DiagnosticRelatedInformation(
        lsp.Location(uri, _range(positions, s.line, s.column, s.line, s.end_column)), s.message) for s in d.sites]
    return lsp.Diagnostic(
        range=_range(positions, d.line, d.column, d.end_line, d.end_column), message=message,
        severity=SEVERITY.get(d.severity, lsp.DiagnosticSeverity.Information), code=d.code, source=SOURCE,
        code_description=_description(docs, d.code), related_information=related or None,
        data={"line": d.line, "fix": d.fix})


def _description(docs, code: str):
    link = docs.link(code) if docs is not None else None
    return lsp.CodeDescription(href=link) if link else None


def _on_line(positions: Positions, line: int, message: str, severity) -> lsp.Diagnostic:
    text = positions.line_text(line)
    start = len(text) - len(text.lstrip()) + 1
    return lsp.Diagnostic(range=_range(positions, line, start, line, len(text.rstrip()) + 1),
                          message=message, severity=severity, source=SOURCE)


def _range(positions: Positions, line: int, column: int, end_line: int, end_column: int) -> lsp.Range:
    a = positions.to_client(line, column)
    b = positions.to_client(end_line, end_column)
    if b < a:
        b = a
    return lsp.Range(lsp.Position(*a), lsp.Position(*b))
