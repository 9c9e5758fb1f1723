"""Checking one file for ``isalint check``, within a memory bound whatever its size.

A file of up to :data:`~isalint.parse.pieces.PIECE_LINES` lines is analysed whole. A longer one is
analysed piece by piece (:mod:`isalint.parse.pieces`), each piece's model dropped before the next is
built; a LIMIT001 finding says where a kernel had to be cut. At most
:data:`~isalint.model.limits.FINDINGS_PER_FILE` findings are kept per file, and of the file's text
only the lines they point at (for the carets of the text format).
"""
from __future__ import annotations

from ..diagnostics import Diagnostic
from ..model import limits


class FileResult:
    def __init__(self):
        self.findings: list[Diagnostic] = []
        self.lines: dict[int, str] = {}  # line number -> text, for the findings' lines
        self.warnings: list[str] = []
        self.dropped = 0  # findings beyond the cap
        self.dropped_sites = 0  # sites of aggregated findings beyond their cap
        self.analysis = None  # a file analysed whole: its analysis (the caller decides when it is freed)
        self.count = 0  # the file's number of lines


def check_text(text: str, path: str, config=None, reuse: dict | None = None) -> FileResult:
    """What ``isalint check PATH`` finds when ``text`` is the contents of PATH: the rules the
    configuration (``config``, else the one found from ``path``) selects for that path, with its
    severities and target. ``reuse``: see :func:`isalint.parse.source.parse_text` (a caller that checks
    one text again and again, edited, keeps it). Raises InputError for what is not assembly
    (OtherProcessor for another processor's) and ConfigError for a configuration it cannot follow."""
    from .. import rules as registry
    from .config import find_config
    from .selection import codes_for

    if config is None:
        config = find_config(path)
    available = registry.available()
    codes = codes_for(available, config, path)
    return check_file(path, codes, config.target, available, config, text.encode("utf-8", "surrogateescape"),
                      reuse)


def check_file(path: str, codes: list[str], target: str, available: list[str], config=None,
               data: bytes | None = None, reuse: dict | None = None) -> FileResult:
    """The findings of the rules ``codes`` on ``path`` (or on ``data``, reported as ``path``: standard
    input); raises InputError for what is not assembly (OtherProcessor for another processor's)."""
    from ..analysis import Analysis, OtherProcessor
    from ..parse import pieces as cutting
    from ..parse.source import InputError, decode, parse_text, read_limited

    text = decode(read_limited(path) if data is None else data, path)
    result = FileResult()
    result.count = cutting.count_lines(text)
    if result.count <= cutting.PIECE_LINES:
        result.analysis = Analysis.from_source(parse_text(text, path, reuse=reuse), {"target": target})
        _check_source(result.analysis, codes, available, result, config)
        return _finish(result, path, codes)
    import gc

    PIECE_LINES = cutting.PIECE_LINES  # noqa: N806 - read at call time (tests lower it)
    pieces = cutting.split_pieces(text, PIECE_LINES)
    checked = uncollected = 0
    nothing: InputError | None = None
    has_code = [False] * len(pieces)  # a cut matters where code lies on both sides of it
    for n, piece in enumerate(pieces):
        source = parse_text(text[piece.start:piece.end], path, piece.first_line)
        try:
            analysis = Analysis.from_source(source, {"target": target})
        except InputError as exc:
            if isinstance(exc, OtherProcessor) or "no RDNA3 instruction found" in exc.message:
                nothing = nothing or exc
                continue  # a piece of directives or metadata only: nothing to check there
            raise
        checked += 1
        has_code[n] = bool(analysis.program.instrs)
        _check_source(analysis, codes, available, result, config)
        del analysis, source
        # a piece's model holds reference cycles and `check` runs with the collector off: collect
        # once the models not yet collected add up to a piece
        uncollected += (pieces[n + 1].first_line if n + 1 < len(pieces) else piece.first_line) - piece.first_line
        if uncollected >= PIECE_LINES // 2:
            gc.collect()
            uncollected = 0
        _cap(result)
    if not checked:
        raise nothing or InputError(path, 1, "no RDNA3 instruction found: not a gfx11 assembly file")
    cuts = [p for n, p in enumerate(pieces) if p.cut_inside_unit and n and has_code[n] and has_code[n - 1]]
    if cuts and "LIMIT001" in codes:
        first = cuts[0].first_line
        result.findings.append(_limit_finding(path, limits.LimitReached(
            "the whole-file analysis", f"from line {first}", first, len(cuts), "the file is analysed in pieces of "
            f"{PIECE_LINES} lines; control flow across a cut is not followed", "cut(s) inside one kernel")))
        result.lines.setdefault(first, _first_line(text, cuts[0]))
    return _finish(result, path, codes)


def _check_source(analysis, codes, available, result: FileResult, config=None) -> None:
    from .engine import check_analysis
    from .suppressions import suppression_problems

    found = check_analysis(analysis, codes, config)
    result.warnings.extend(suppression_problems(analysis.program.source, available))
    lines = analysis.program.source.lines
    first = lines[0].number if lines else 1
    for d in found:
        if len(d.sites) > limits.SITES_PER_FINDING:
            result.dropped_sites += len(d.sites) - limits.SITES_PER_FINDING
            d.sites = d.sites[:limits.SITES_PER_FINDING]
        result.findings.append(d)
        k = d.line - first
        if 0 <= k < len(lines):
            result.lines[d.line] = lines[k].text
    if len(result.findings) > 2 * limits.FINDINGS_PER_FILE:
        _cap(result)


def _cap(result: FileResult) -> None:
    """Keep the first FINDINGS_PER_FILE findings (and every LIMIT001), count the others."""
    cap = limits.FINDINGS_PER_FILE
    own = [d for d in result.findings if d.code != "LIMIT001"]
    if len(own) <= cap:
        return
    own.sort(key=Diagnostic.sort_key)
    result.dropped += len(own) - cap
    result.findings = own[:cap] + [d for d in result.findings if d.code == "LIMIT001"]
    wanted = {d.line for d in result.findings}
    result.lines = {n: t for n, t in result.lines.items() if n in wanted}


def _finish(result: FileResult, path: str, codes: list[str]) -> FileResult:
    _cap(result)
    if result.dropped_sites and "LIMIT001" in codes:
        first = min((d.line for d in result.findings if len(d.sites) == limits.SITES_PER_FINDING), default=1)
        result.findings.append(_limit_finding(path, limits.LimitReached(
            "the report", f"sites of aggregated findings from line {first}", first, result.dropped_sites,
            f"a finding lists at most {limits.SITES_PER_FINDING} of its sites (its totals count them all)",
            "sites not listed", severity="info")))
    if result.dropped and "LIMIT001" in codes:
        last = max((d.line for d in result.findings if d.code != "LIMIT001"), default=1)
        result.findings.append(_limit_finding(path, limits.LimitReached(
            "the report", f"after line {last}", last, result.dropped,
            f"isalint reports at most {limits.FINDINGS_PER_FILE} per file", "findings not shown")))
    result.findings.sort(key=Diagnostic.sort_key)
    return result


def _limit_finding(path: str, limit: limits.LimitReached) -> Diagnostic:
    return Diagnostic(path, limit.line, 1, limit.line, 2, "LIMIT001", limit.severity, limit.message())


def _first_line(text: str, piece) -> str:
    end = piece.end
    for eol in ("\r", "\n"):
        k = text.find(eol, piece.start, piece.end)
        if k >= 0:
            end = min(end, k)
    return text[piece.start:end]
