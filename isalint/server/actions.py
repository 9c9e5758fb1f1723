"""Code actions on a checked document, and the edits they make.

For each finding (or site of an aggregated finding) in the requested range:

- **suppress** it on its line (``; isalint: disable=CODE``, added to the line's directive when it has
  one) or in the whole file (``; isalint: disable-file=CODE`` at the top);
- a **quick fix** where the rule states the exact change (:data:`EXACT`): META001's counts (the
  ``--metadata`` pass's change of that line) and DELAY001's missing ``s_delay_alu`` hints (the
  ``--delay-alu`` pass's change of that site's basic block);
- **the fix pass the rule names** (``isalint fix --dual-fmac`` for DUAL002/BANK001, ...).

And, as source actions, every fix pass :data:`isalint.fixes.PASSES` lists.

Suppressions are plain edits. A fix is worked out only when it is chosen (``codeAction/resolve``,
or the ``isalint.applyFix`` command for a client that cannot resolve), because it is validated as
``isalint fix`` validates before the edit is offered: the rewrite assembles and computes what the
original computes (in the emulator; for metadata and hints, the same machine code). A pass that
refuses, a validation that fails and a machine without an assembler are said, and nothing is edited.
"""
from __future__ import annotations

import re

SUPPRESS = "quickfix"
COMMAND = "isalint.applyFix"
# rule code -> the pass whose change of the finding's lines is exactly the rule's fix
EXACT = {"META001": "metadata", "DELAY001": "delay-alu"}
_EOL = re.compile(r"\r\n|\n|\r")
_DIRECTIVE = re.compile(r"isalint:\s*(disable-file|disable-next-line|disable)\s*=\s*"
                        r"[A-Za-z0-9_-]+(?:\s*,\s*[A-Za-z0-9_-]+)*")


def pass_flag(name: str) -> str:
    return "--" + name


def pass_of_fix(fix: str | None) -> str | None:
    """The :data:`isalint.fixes.PASSES` name of a rule's ``FIXABLE`` flag (``--dual-fmac``)."""
    from ..fixes import by_name

    if not fix:
        return None
    found = by_name(fix.strip().lstrip("-"))
    return found.name if found is not None else None


# ----------------------------------------------------------------------------- what is offered


class Offer:
    """One action, before it becomes the protocol's CodeAction: ``edits`` (line, column, end_line,
    end_column, new text) in isalint's coordinates, or ``fix`` (the data that works the edit out)."""

    def __init__(self, title: str, kind: str, code: str | None = None, line: int | None = None,
                 edits: list[tuple] | None = None, fix: dict | None = None, preferred: bool = False):
        self.title, self.kind, self.code, self.line = title, kind, code, line
        self.edits, self.fix, self.preferred = edits, fix, preferred


def offers(outcome, first_line: int, last_line: int, kinds: list[str] | None = None) -> list[Offer]:
    """The actions for lines ``first_line``..``last_line`` (1-based) of a checked document; ``kinds``:
    the kinds the client asked for (None: all)."""
    from ..fixes import PASSES

    def wanted(kind: str) -> bool:
        return kinds is None or any(kind == k or kind.startswith(k + ".") for k in kinds)

    out: list[Offer] = []
    seen: set[str] = set()

    def add(offer: Offer) -> None:
        if offer.title not in seen and wanted(offer.kind):
            seen.add(offer.title)
            out.append(offer)

    lines = outcome.analysis.program.source.lines if outcome.analysis is not None else None
    for d in outcome.findings:
        main = first_line <= d.line <= last_line
        sites = sorted({s.line for s in d.sites if first_line <= s.line <= last_line})
        if not main and not sites:
            continue
        # an aggregated finding is silenced site by site: a comment on its first line alone silences
        # only the site there
        for line in sites if d.sites else [d.line]:
            suppress = _suppress_line(outcome.text, lines, line, d.code)
            if suppress is not None:
                what = "this instruction" if d.sites else "this line"
                add(Offer(f"Suppress {d.code} on {what} (isalint: disable={d.code})", SUPPRESS, d.code, line,
                          edits=[suppress]))
        if d.code in EXACT:
            name = EXACT[d.code]
            targets = ([None] if main else []) + sites if d.sites else [d.line]
            for line in targets:
                where = f"line {line}" if line is not None else "every site of this finding"
                add(Offer(f"Fix {d.code} at {where}: the {pass_flag(name)} change, validated", "quickfix",
                          d.code, line or d.line, fix={"pass": name, "code": d.code, "line": line,
                                                       "finding": d.line}, preferred=True))
        add(Offer(f"Suppress {d.code} in this file (isalint: disable-file={d.code})", SUPPRESS, d.code,
                  d.line, edits=[_suppress_file(outcome.text, d.code)]))
        name = pass_of_fix(d.fix)
        if name is not None and (d.code not in EXACT or EXACT[d.code] != name):
            add(Offer(f"Rewrite with isalint fix {pass_flag(name)} (validated before the edit)", "quickfix",
                      d.code, d.line, fix={"pass": name}))
    for name in (p.name for p in PASSES):
        add(Offer(f"isalint fix {pass_flag(name)}: rewrite the file (validated before the edit)",
                  f"source.isalint.{name}", fix={"pass": name}))
    return out


def _suppress_line(text: str, lines, line: int, code: str) -> tuple | None:
    """The edit adding ``code`` to line ``line``'s suppression comment (None where a comment cannot
    go: inside the metadata document, whose lines are YAML)."""
    if lines is not None and 1 <= line <= len(lines) and lines[line - 1].kind == "metadata":
        return None
    body = _line(text, line)
    if body is None:
        return None
    m = None
    for m in _DIRECTIVE.finditer(body):  # noqa: B007 - the last directive of the line
        pass
    end = len(body.rstrip()) + 1
    if m is not None and m.group(1) == "disable" and m.end() + 1 == end:  # the line ends with its codes
        return (line, end, line, end, f",{code}")
    return (line, end, line, len(body) + 1, f" ; isalint: disable={code}")


def _suppress_file(text: str, code: str) -> tuple:
    first = _line(text, 1) or ""
    m = _DIRECTIVE.search(first)
    if m is not None and m.group(1) == "disable-file" and m.end() == len(first.rstrip()):
        return (1, m.end() + 1, 1, m.end() + 1, f",{code}")
    eol = _EOL.search(text)
    return (1, 1, 1, 1, f"; isalint: disable-file={code}{eol.group() if eol else chr(10)}")


def _line(text: str, line: int) -> str | None:
    pos = 0
    for _ in range(line - 1):
        m = _EOL.search(text, pos)
        if m is None:
            return None
        pos = m.end()
    m = _EOL.search(text, pos)
    return text[pos:m.start() if m else len(text)]


# ----------------------------------------------------------------------------- fixes, worked out


class FixFailed(Exception):
    """Why a fix is not offered (said to the user as is)."""


def work_out(text: str, path: str, fix: dict) -> tuple[list[tuple], str]:
    """(edits, what was done) of the fix ``fix`` (an :class:`Offer`'s ``fix``) on ``text``, validated;
    FixFailed says why there is none."""
    from ..analysis import Analysis
    from ..fixes import by_name
    from ..fixes.registry import option_values
    from ..fixes.toolkit.pipeline import run_passes, validate, validator_missing
    from ..parse.source import InputError, parse_text

    name = fix.get("pass")
    if not isinstance(name, str) or by_name(name) is None:
        raise FixFailed(f"no fix pass named {name!r}")
    flag = pass_flag(name)
    missing = validator_missing()
    if missing:
        raise FixFailed(f"fix {flag} not offered: {missing}")
    try:
        analysis = Analysis.from_source(parse_text(text, path))
    except InputError as exc:
        raise FixFailed(f"fix {flag}: {exc}") from None
    outcome = run_passes(analysis, [name], option_values({}, [by_name(name)]))
    if outcome.refused is not None:
        raise FixFailed(f"fix {flag} refused: {outcome.refused[1]}")
    if not outcome.changed:
        raise FixFailed(f"fix {flag}: nothing to change")
    hunks = line_hunks(text, outcome.text)
    summary = "; ".join(s for s in outcome.summaries if s)
    if fix.get("code") in EXACT:
        hunks = _hunks_for(analysis, hunks, fix)
        if not hunks:
            raise FixFailed(f"fix {flag} changes nothing at line {fix.get('line') or fix.get('finding')}")
        candidate = apply_hunks(text, hunks)
        summary = f"{fix['code']}: the {flag} change of {len(hunks)} place{'s' if len(hunks) > 1 else ''}"
    else:
        candidate = outcome.text
    sizes = [256] if outcome.only_metadata or outcome.only_hints else list(outcome.sizes)
    for n in sizes:
        verdict = validate(path, text, candidate, n, code_unchanged=outcome.only_metadata,
                           hints_only=outcome.only_hints)
        if verdict is not None:
            raise FixFailed(f"fix {flag}: validation failed, nothing changed: {verdict}")
    if outcome.only_hints:
        how = "it assembles, and without its s_delay_alu hints is the input's machine code byte for byte"
    elif outcome.only_metadata:
        how = "the machine code is unchanged"
    else:
        how = f"it computes what the input computes (GEMM N={', '.join(map(str, sizes))}, bit-identical)"
    return [_edit(text, h) for h in hunks], f"{summary} (validated: {how})"


def line_hunks(old: str, new: str) -> list[tuple[int, int, list[str]]]:
    """(first, end, new lines): old lines ``first``..``end``-1 (0-based) become the new lines."""
    import difflib

    a, b = _lines(old), _lines(new)
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            out.append((i1, i2, b[j1:j2]))
    return out


def apply_hunks(text: str, hunks) -> str:
    lines = _lines(text)
    for first, end, new in sorted(hunks, reverse=True):
        lines[first:end] = new
    return "".join(lines)


def _lines(text: str) -> list[str]:
    out, pos = [], 0
    for m in _EOL.finditer(text):
        out.append(text[pos:m.end()])
        pos = m.end()
    if pos < len(text):
        out.append(text[pos:])
    return out


def _edit(text: str, hunk) -> tuple:
    """A hunk as an edit: from the start of its first line to the start of the line after it."""
    first, end, new = hunk
    return (first + 1, 1, end + 1, 1, "".join(new))


def _hunks_for(analysis, hunks, fix: dict) -> list:
    """The hunks that make one finding's exact fix: those on its line (META001), or in the basic
    blocks of its sites (DELAY001: hints are written block by block)."""
    line = fix.get("line")
    if fix["code"] == "META001":
        spans = [(line, line)]
    else:
        spans = _block_spans(analysis, [line] if line is not None else _site_lines(analysis, fix))
    out = []
    for h in hunks:
        first, end = h[0] + 1, h[1]  # the old lines it replaces, 1-based (end < first: an insertion)
        for lo, hi in spans:
            if (end >= first and first <= hi and end >= lo) or (end < first and lo <= first <= hi + 1):
                out.append(h)
                break
    return out


def _site_lines(analysis, fix: dict) -> list[int]:
    from ..lint.engine import check_analysis

    lines: list[int] = []
    for d in check_analysis(analysis, [fix["code"]]):
        if d.line == fix.get("finding"):
            lines += [s.line for s in d.sites] or [d.line]
    return lines


def _block_spans(analysis, lines: list[int]) -> list[tuple[int, int]]:
    """The (first, last) lines of the basic blocks holding the instructions at ``lines``."""
    instrs = analysis.program.instrs
    cfg = analysis.cfg
    at = {ins.lineno: ins.index for ins in instrs}
    spans = []
    for line in lines:
        k = at.get(line)
        if k is None:
            continue
        blk = cfg.blocks[cfg.block_of[k]]
        spans.append((instrs[blk.first].lineno, instrs[blk.last - 1].lineno))
    return spans
