"""The server's pieces that need no protocol session: positions in the client's code units, the
diagnostics a check becomes, suppression edits, line hunks of a fix, hovers on rule codes."""
from __future__ import annotations

import random

import pytest

pytest.importorskip("lsprotocol", reason="isalint server needs the server extra (pip install 'isalint[server]')")

from conftest import KERNELS  # noqa: E402

from isalint.diagnostics import Diagnostic, Site  # noqa: E402
from isalint.server import actions  # noqa: E402
from isalint.server.engine import Checker, Outcome  # noqa: E402
from isalint.server.hover import hover  # noqa: E402
from isalint.server.positions import Positions  # noqa: E402
from isalint.server.published import diagnostics  # noqa: E402

TEXT = "a\r\nbb\rc\U0001d11ex\u00e9y\nlast"


@pytest.mark.parametrize("encoding, units", [("utf-16", 2), ("utf-8", 4), ("utf-32", 1)])
def test_positions_count_the_code_units_the_client_agreed_on(encoding, units):
    p = Positions(TEXT, encoding)
    assert p.lines == ["a", "bb", "c\U0001d11ex\u00e9y", "last"]  # \r\n, \r and \n all end a line
    # "x" is the 3rd character of line 3: after "c" (1 unit) and the clef (2 UTF-16 units, 4 UTF-8 bytes)
    assert p.to_client(3, 3) == (2, 1 + units)
    assert p.from_client(2, 1 + units) == (3, 3)
    e_acute = 2 if encoding == "utf-8" else 1
    assert p.to_client(3, 5) == (2, 1 + units + 1 + e_acute)
    assert p.to_client(3, 99) == (2, p.units(p.lines[2]))  # past the end: the end of the line
    assert p.from_client(2, 10**6) == (3, len(p.lines[2]) + 1)
    assert p.end() == (3, 4) and Positions("x\n").end() == (1, 0)
    assert p.start_of(5) == p.end()


def test_a_finding_becomes_a_diagnostic_with_its_sites_as_related_places_and_hints():
    text = "\tv_mov_b32 v0, v1 ; \u00e9\n\tv_add_f32 v2, v0, v0\n"
    out = Outcome("/k.s", text, 7)
    out.findings = [
        Diagnostic("/k.s", 1, 2, 1, 18, "DUAL002", "warning", "two singles", fix="--dual-fmac", notes=["cost: 1"],
                   sites=[Site(1, 2, 18, "with line 2"), Site(2, 2, 21, "with line 1")]),
        Diagnostic("/k.s", 2, 2, 2, 21, "WAIT001", "error", "too early"),
    ]
    out.warnings = ["/k.s:2: unknown rule code(s) in 'isalint: disable': NOPE"]
    got = diagnostics(out, Positions(text), "file:///k.s", None)
    main, site1, site2, wait, warning = got
    assert (main.code, main.severity) == ("DUAL002", 2)
    assert main.message == "two singles\ncost: 1\nfix: isalint fix --dual-fmac"
    assert [(r.location.range.start.line, r.message) for r in main.related_information] == [(0, "with line 2"),
                                                                                            (1, "with line 1")]
    assert (site1.severity, site2.severity, site2.range.start.line) == (4, 4, 1)
    assert "with line 1" in site2.message and "DUAL002" in site2.message
    assert (wait.code, wait.severity, wait.range.start.character, wait.range.end.character) == ("WAIT001", 1, 1, 20)
    assert warning.severity == 2 and "NOPE" in warning.message and warning.range.start.line == 1
    bad = Outcome("/k.s", text, 7)
    bad.problem = (2, "not checked: binary data")
    (only,) = diagnostics(bad, Positions(text), "file:///k.s", None)
    assert only.range.start.line == 1 and only.message == "not checked: binary data"


def test_suppression_edits_join_the_directive_a_line_already_has():
    text = ("\tv_mov_b32 v0, v1 ; isalint: disable=WAIT001, BANK001\n\ts_nop 0   \n"
            "\ts_nop 1 ; isalint: disable=WAIT001 (the counter is known)\n")
    assert actions._suppress_line(text, None, 1, "DUAL002") == (1, 54, 1, 54, ",DUAL002")
    assert actions._suppress_line(text, None, 2, "DUAL002") == (2, 9, 2, 12, " ; isalint: disable=DUAL002")
    # words after the codes: a directive of its own, so that neither code is taken for a word
    assert actions._suppress_line(text, None, 3, "DUAL002")[4] == " ; isalint: disable=DUAL002"
    assert actions._suppress_file(text, "OCC001") == (1, 1, 1, 1, "; isalint: disable-file=OCC001\n")
    first = "; isalint: disable-file=BANK001\r\nv_nop\r\n"
    assert actions._suppress_file(first, "OCC001") == (1, 32, 1, 32, ",OCC001")


def test_a_fix_is_offered_as_the_hunks_that_change_the_text():
    rng = random.Random(26)
    old = "".join(f"line {n}\n" for n in range(60)) + "no end of line"
    for _ in range(200):
        lines = old.splitlines(keepends=True)
        for _ in range(rng.randrange(1, 5)):
            k = rng.randrange(len(lines))
            what = rng.randrange(3)
            if what == 0:
                del lines[k]
            elif what == 1:
                lines.insert(k, f"new {rng.random()}\n")
            else:
                lines[k] = lines[k].replace("line", "LINE")
        new = "".join(lines)
        hunks = actions.line_hunks(old, new)
        assert actions.apply_hunks(old, hunks) == new
        # as edits (start of a line to the start of the line after the hunk), applied bottom up
        p = Positions(old)
        text = old
        for edit in sorted((actions._edit(old, h) for h in hunks), reverse=True):
            a = _offset(old, p, edit[0])
            b = _offset(old, p, edit[2])
            text = text[:a] + edit[4] + text[b:]
        assert text == new


def _offset(text: str, p: Positions, line: int) -> int:
    return sum(len(t) + len(e) for t, e in zip(p.lines[:line - 1], p.ends[:line - 1])) if line <= len(p.lines) \
        else len(text)


def test_hover_on_a_rule_code_or_name_in_a_comment():
    text = (KERNELS / "kernel6_style" / "kernel6_style.s").read_text()
    lines = text.splitlines()
    n = next(k for k, line in enumerate(lines) if line.strip().startswith("s_cmp_lg_u32"))
    lines[n] += " ; isalint: disable=DELAY001,missing-delay-alu"
    edited = "\n".join(lines) + "\n"
    out = Checker().check(edited, "/nowhere/k.s", 1)
    assert out.checked and "DELAY001" not in {d.code for d in out.findings}
    line = lines[n]
    for word in ("DELAY001", "missing-delay-alu"):
        h = hover(out, n + 1, line.index(word) + 2)
        assert h.startswith("**DELAY001** `missing-delay-alu` (warning, fix: `isalint fix --delay-alu`)")
    assert hover(out, n + 1, line.index("disable") + 2) is None
    assert hover(out, 10**6, 1) is None and hover(out, n + 1, 10**6) is None
