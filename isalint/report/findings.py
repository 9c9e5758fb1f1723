"""Findings (:class:`isalint.diagnostics.Diagnostic`) rendered as text, JSON, SARIF or GitHub annotations."""
from __future__ import annotations

import json
import sys

from .. import __version__

_STYLE = {"error": "\x1b[1;31m", "warning": "\x1b[1;33m", "info": "\x1b[1;36m"}
_BOLD, _DIM, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[0m"


def render_text(diagnostics, sources: dict, color: bool) -> str:
    out: list[str] = []
    for d in diagnostics:
        sev = f"{_STYLE[d.severity]}{d.code}{_RESET}" if color else d.code
        loc = f"{_BOLD}{d.path}:{d.line}:{d.column}:{_RESET}" if color else f"{d.path}:{d.line}:{d.column}:"
        out.append(f"{loc} {sev} {d.message}")
        if d.fix:
            out.append(f"  {_DIM if color else ''}fix: {d.fix}{_RESET if color else ''}")
        src = sources.get(d.path)
        if src is not None and 1 <= d.line <= len(src.lines):
            raw = src.lines[d.line - 1].text
            # the caret goes under the character the column names, tabs shown as one blank
            text = raw.replace("\t", " ")
            width = max(1, (d.end_column - d.column) if d.end_line == d.line else 1)
            caret = " " * (d.column - 1) + "^" + "~" * min(width - 1, max(0, len(text) - d.column))
            out.append(f"  {text.rstrip()}")
            out.append(f"  {_STYLE[d.severity] if color else ''}{caret}{_RESET if color else ''}")
    return "\n".join(out)


def summary_line(diagnostics, files: int) -> str:
    counts = {s: sum(1 for d in diagnostics if d.severity == s) for s in ("error", "warning", "info")}
    if not diagnostics:
        return f"{files} file(s) checked: no findings"
    return (f"{files} file(s) checked: {len(diagnostics)} finding(s) "
            f"({counts['error']} error, {counts['warning']} warning, {counts['info']} info)")


def render_json(diagnostics) -> str:
    return json.dumps([d.to_json() for d in diagnostics], indent=2)


def render_github(diagnostics) -> str:
    level = {"error": "error", "warning": "warning", "info": "notice"}
    lines = []
    for d in diagnostics:
        msg = d.message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        lines.append(f"::{level[d.severity]} file={d.path},line={d.line},col={d.column},"
                     f"endLine={d.end_line},endColumn={d.end_column},title={d.code}::{msg}")
    return "\n".join(lines)


def render_sarif(diagnostics, rule_modules) -> str:
    level = {"error": "error", "warning": "warning", "info": "note"}
    rules = [{
        "id": r.CODE,
        "name": r.NAME,
        "shortDescription": {"text": r.SUMMARY},
        "fullDescription": {"text": (r.__doc__ or "").strip()},
        "defaultConfiguration": {"level": level[r.SEVERITY]},
    } for r in rule_modules]
    index = {r["id"]: n for n, r in enumerate(rules)}
    results = []
    for d in diagnostics:
        result = {
            "ruleId": d.code,
            "level": level[d.severity],
            "message": {"text": d.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": d.path},
                "region": {"startLine": d.line, "startColumn": d.column,
                           "endLine": d.end_line, "endColumn": d.end_column},
            }}],
        }
        if d.code in index:
            result["ruleIndex"] = index[d.code]
        if d.fix:
            result["properties"] = {"fix": d.fix}
        results.append(result)
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "isalint", "version": __version__,
                                "informationUri": "https://pypi.org/project/isalint/", "rules": rules}},
            "results": results,
        }],
    }
    return json.dumps(doc, indent=2)


def stdout_is_terminal() -> bool:
    return sys.stdout.isatty()
