"""Every snippet under fixtures/snippets/<rule>/ holds its own expected diagnostics, LLVM-MC style.

``; EXPECT: CODE text`` says the next code line gets a CODE finding whose message
contains ``text``; ``; EXPECT-NONE`` says the snippet is clean for its rule. The
snippet is checked with ``--select`` of its folder's rule; findings nobody
expected fail the test, and so do expectations nobody met.
"""
from __future__ import annotations

import re

import pytest
from conftest import SNIPPETS

from isalint.analysis import Analysis
from isalint.checker import check_analysis
from isalint.parse import read_file

_EXPECT = re.compile(r";\s*EXPECT:\s*([A-Z]+\d+)\s*(.*?)\s*$")


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
            pending.append((m.group(1), m.group(2)))
            continue
        if not stripped or stripped.startswith((";", "//")):
            continue
        out.extend((n, code, text) for code, text in pending)
        pending = []
    assert not pending, f"{path}: EXPECT at the end of the file applies to no line"
    return out, none


@pytest.mark.parametrize("path", _snippets(), ids=lambda p: f"{p.parent.name}/{p.name}" if p else "none")
def test_snippet_diagnostics(path):
    rule = path.parent.name.upper()
    expected, none = expectations(path)
    assert expected or none, f"{path} states no expectation (EXPECT: or EXPECT-NONE)"
    analysis = Analysis.from_source(read_file(str(path)))
    found = [d for d in check_analysis(analysis, [rule]) if d.code == rule]
    unmatched = list(found)
    missing = []
    for line, code, text in expected:
        hit = next((d for d in unmatched if d.line == line and d.code == code and text in d.message), None)
        if hit is None:
            missing.append(f"line {line}: {code} {text!r}")
        else:
            unmatched.remove(hit)
    extra = [f"line {d.line}: {d.code} {d.message}" for d in unmatched]
    assert not missing and not extra, f"{path}\nmissing: {missing}\nunexpected: {extra}"
