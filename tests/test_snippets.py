"""Every snippet under fixtures/snippets/<rule>/ holds its own expected diagnostics, LLVM-MC style.

``; EXPECT: CODE text`` says the next code line gets a CODE finding whose message (or notes)
contains ``text``; ``; EXPECT: CODE[severity] text`` also says its severity; ``; EXPECT-NONE``
says the snippet is clean for its rule; ``; SELECT: CODE,CODE`` runs other rules beside it (an
unused-suppression snippet needs the rules its comments name). A finding that aggregates several sites (one loop's bank
conflicts) counts once per site, its text with the site's. The snippet is checked with
``--select`` of its folder's rule; findings nobody expected fail the test, and so do
expectations nobody met.
"""
from __future__ import annotations

import re

import pytest
from conftest import SNIPPETS

from isalint.analysis import Analysis
from isalint.lint.engine import check_analysis
from isalint.parse import read_file

_EXPECT = re.compile(r";\s*EXPECT:\s*([A-Z]+\d+)(?:\[(error|warning|info)\])?\s*(.*?)\s*$")


def _snippets():
    files = sorted(SNIPPETS.rglob("*.s"))
    return files or [pytest.param(None, marks=pytest.mark.skip(reason="no snippets yet"))]


def expectations(path):
    pending: list[tuple[str, str]] = []
    out: list[tuple[int, str, str]] = []
    none = False
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        stripped = raw.strip()
        if "EXPECT-NONE" in stripped:
            none = True
            continue
        m = _EXPECT.search(raw)
        if m and stripped.startswith(";"):
            pending.append((m.group(1), m.group(2), m.group(3)))
            continue
        if not stripped or stripped.startswith((";", "//")):
            continue
        out.extend((n, code, severity, text) for code, severity, text in pending)
        pending = []
    assert not pending, f"{path}: EXPECT at the end of the file applies to no line"
    return out, none


@pytest.mark.parametrize("path", _snippets(), ids=lambda p: f"{p.parent.name}/{p.name}" if p else "none")
def test_snippet_diagnostics(path):
    rule = path.parent.name.upper()
    expected, none = expectations(path)
    assert expected or none, f"{path} states no expectation (EXPECT: or EXPECT-NONE)"
    analysis = Analysis.from_source(read_file(str(path)))
    extra = re.findall(r"^;\s*SELECT:\s*([A-Z0-9, ]+)$", path.read_text(), re.M)
    codes = [rule, *(c.strip() for line in extra for c in line.split(",") if c.strip())]
    found = [site for d in check_analysis(analysis, codes) if d.code == rule for site in _sites(d)]
    unmatched = list(found)
    missing = []
    for line, code, severity, text in expected:
        hit = next((f for f in unmatched if f[0] == line and f[1] == code and text in f[3]
                    and severity in (None, f[2])), None)
        if hit is None:
            missing.append(f"line {line}: {code}{f'[{severity}]' if severity else ''} {text!r}")
        else:
            unmatched.remove(hit)
    extra = [f"line {f[0]}: {f[1]}[{f[2]}] {f[3]}" for f in unmatched]
    assert not missing and not extra, f"{path}\nmissing: {missing}\nunexpected: {extra}"


def _sites(d):
    """(line, code, severity, text) for each place a finding covers."""
    tail = " ".join([d.message, *d.notes])
    if not d.sites:
        return [(d.line, d.code, d.severity, tail)]
    return [(s.line, d.code, d.severity, f"{s.message} {tail}") for s in d.sites]
