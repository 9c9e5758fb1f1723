"""Findings (:class:`isalint.diagnostics.Diagnostic`) rendered as text, JSON, SARIF or GitHub annotations."""
from __future__ import annotations

import sys

from .. import __version__

_STYLE = {"error": "\x1b[1;31m", "warning": "\x1b[1;33m", "info": "\x1b[1;36m"}
_BOLD, _DIM, _BLUE, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[1;34m", "\x1b[0m"
WIDTH = 100  # text is wrapped here when not on a terminal
SITES_SHOWN = 4  # sites of an aggregated finding printed under it (JSON lists all)
TAB = 4
SEVERITIES = ("error", "warning", "info")  # most severe first


class _Paint:
    def __init__(self, color: bool):
        self.color = color

    def __call__(self, style: str, text: str) -> str:
        return f"{style}{text}{_RESET}" if self.color and text else text


def render_text(diagnostics, sources: dict, color: bool, width: int = WIDTH) -> str:
    """Each finding: ``path:line:col: CODE severity: message`` (wrapped at ``width``), the source line
    under a line-number gutter with the offending operand underlined, then its notes, up to
    :data:`SITES_SHOWN` of its sites and its fix."""
    paint = _Paint(color)
    blocks = [_render_one(d, sources.get(d.path), paint, width) for d in diagnostics]
    return "\n\n".join(blocks)


def _render_one(d, src, paint: _Paint, width: int) -> str:
    loc = f"{d.path}:{d.line}:{d.column}:"
    head = f"{paint(_BOLD, loc)} {paint(_STYLE[d.severity], d.code + ' ' + d.severity + ':')} "
    plain = len(loc) + len(d.code) + len(d.severity) + 4
    first, *rest = _wrap(d.message, max(40, width - plain)) or [""]
    out = [head + first]
    out += ["    " + ln for ln in _wrap(" ".join(rest), width - 4)] if rest else []
    gutter = len(str(d.line)) + 1
    bar = paint(_BLUE, " " * gutter + " |")
    raw = _line_text(src, d.line)
    if raw is not None:
        raw = raw.rstrip()
        shown = raw.expandtabs(TAB)
        start = len(raw[:max(0, d.column - 1)].expandtabs(TAB))
        stop = len(raw[:max(0, d.end_column - 1)].expandtabs(TAB)) if d.end_line == d.line else len(shown)
        marks = "^" * max(1, min(stop, len(shown)) - start)
        out += [bar, paint(_BLUE, f"{d.line:>{gutter}} |") + " " + shown,
                bar + " " + " " * start + paint(_STYLE[d.severity], marks)]
    notes = list(d.notes)
    for site in d.sites[:SITES_SHOWN]:
        notes.append(f"line {site.line}: {site.message}")
    if len(d.sites) > SITES_SHOWN:
        notes.append(f"... and {len(d.sites) - SITES_SHOWN} more sites (--format json lists every one)")
    if d.fix:
        notes.append(f"fix: isalint fix {d.fix}")
    pad = " " * gutter + " = "
    for note in notes:
        lines = _wrap(note, max(40, width - len(pad))) or [""]
        out.append(paint(_BLUE, pad) + lines[0])
        out += [" " * len(pad) + ln for ln in lines[1:]]
    return "\n".join(out)


def _line_text(src, number: int) -> str | None:
    """Line ``number`` of a parsed file, or of a {line number: text} excerpt of one."""
    if src is None:
        return None
    if isinstance(src, dict):
        return src.get(number)
    return src.lines[number - 1].text if 1 <= number <= len(src.lines) else None


_WRAP_SPECIAL = frozenset("\t\n\x0b\x0c\r")


def _wrap(text: str, width: int) -> list[str]:
    """``textwrap.wrap(text, width, break_on_hyphens=False)``, computed directly for the usual text:
    words of at most ``width`` characters between single blanks (textwrap takes seven times longer,
    which a report of many findings notices)."""
    words = text.split(" ")
    if "" in words or not _WRAP_SPECIAL.isdisjoint(text) or max(map(len, words)) > width:
        import textwrap

        return textwrap.wrap(text, width, break_on_hyphens=False)
    lines, line = [], words[0]
    for word in words[1:]:
        if len(line) + 1 + len(word) <= width:
            line += " " + word
        else:
            lines.append(line)
            line = word
    lines.append(line)
    return lines


def _plural(n: int, word: str) -> str:
    if word == "info":
        return f"{n} info"
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary_line(diagnostics, files: int, skipped: int = 0, failed: int = 0, hidden: dict | None = None,
                 min_severity: str = "info", kernels: int = 0) -> str:
    """``3 files checked: 7 findings (0 errors, 3 warnings, 4 info)``, with the files skipped (not
    AMDGPU assembly) and those that could not be read; ``kernels`` of the ``files`` are kernels of
    code objects (``2 files and 4844 kernels checked``)."""
    counts = {s: sum(1 for d in diagnostics if d.severity == s) for s in ("error", "warning", "info")}
    return summary_counts(counts, files, skipped, failed, hidden, min_severity, kernels)


def summary_counts(counts: dict, files: int, skipped: int = 0, failed: int = 0, hidden: dict | None = None,
                   min_severity: str = "info", kernels: int = 0) -> str:
    """:func:`summary_line` from the number of findings of each severity; ``hidden``: the number of each
    severity below ``min_severity``, which the report leaves out and names at the end (``1 file checked:
    3 findings (0 errors, 3 warnings); 4 info hidden by --min-severity warning``)."""
    total = sum(counts.values())
    plain = files - kernels
    text = " and ".join(([_plural(plain, "file")] if plain or not kernels else [])
                        + ([_plural(kernels, "kernel")] if kernels else [])) + " checked"
    if skipped:
        text += f", {skipped} skipped (not AMDGPU assembly)"
    if failed:
        text += f", {failed} could not be read"
    shown = SEVERITIES[:SEVERITIES.index(min_severity) + 1]  # a severity --min-severity hides has no count
    if not total:
        text += ": no findings"
    else:
        text += f": {_plural(total, 'finding')} ({', '.join(_count(counts[s], s) for s in shown)})"
    left_out = [(s, n) for s, n in (hidden or {}).items() if n]
    if left_out:
        text += f"; {', '.join(_count(n, s) for s, n in left_out)} hidden by --min-severity {min_severity}"
    return text


def _count(n: int, severity: str) -> str:
    return f"{n} info" if severity == "info" else _plural(n, severity)


def render_statistics(diagnostics, rules: dict) -> str:
    """One row per code, most frequent first: findings, the sites they cover, code, name."""
    by_code: dict[str, list] = {}
    for d in diagnostics:
        by_code.setdefault(d.code, []).append(d)
    rows = sorted(by_code.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    lines = []
    for code, ds in rows:
        sites = sum(max(1, len(d.sites)) for d in ds)
        worst = min((d.severity for d in ds), key=("error", "warning", "info").index)
        name = getattr(rules.get(code), "NAME", "")
        lines.append(f"{len(ds):>5}  {f'({sites} sites)' if sites != len(ds) else '':<12} {code:<11} "
                     f"{worst:<8} {name}")
    return "\n".join(lines)


def render_statistics_json(diagnostics, rules: dict) -> str:
    """:func:`render_statistics` as a JSON array, in the same order: ``code``, ``name``, ``count``
    (findings), ``sites`` (the places they cover), ``severity`` (the worst) and ``fix`` (the fix
    option, or null)."""
    import json

    by_code: dict[str, list] = {}
    for d in diagnostics:
        by_code.setdefault(d.code, []).append(d)
    rows = []
    for code, ds in sorted(by_code.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        rule = rules.get(code)
        rows.append({"code": code, "name": getattr(rule, "NAME", ""), "count": len(ds),
                     "sites": sum(max(1, len(d.sites)) for d in ds),
                     "severity": min((d.severity for d in ds), key=("error", "warning", "info").index),
                     "fix": getattr(rule, "FIXABLE", None)})
    return json.dumps(rows, indent=2)


def render_json(diagnostics) -> str:
    import json

    return json.dumps([d.to_json() for d in diagnostics], indent=2)


def render_json_items(diagnostics) -> str:
    """The items of :func:`render_json`'s list (its lines between ``[`` and ``]``): the JSON of
    several lists of findings is ``[``, their items joined by ``,`` and a line break, ``]``.

    Byte for byte ``json.dumps(item, indent=2)`` indented by two spaces, written here rather than by
    the json module, whose indented output goes through its pure-Python encoder (a kernel of a
    library can have thousands of sites to print)."""
    out: list[str] = []
    for d in diagnostics:
        out.append("  ")
        _json_value(d.to_json(), "\n  ", out)
        out.append(",\n")
    if out:
        out.pop()
    return "".join(out)


def _json_value(value, newline: str, out: list[str]) -> None:
    """``value`` as ``json.dumps(value, indent=2)`` writes it at the indentation ``newline`` holds."""
    kind = type(value)
    if kind is str:
        out.append(_ENCODE[0](value))
    elif kind is int:
        out.append(int.__repr__(value))
    elif value is None:
        out.append("null")
    elif kind is float and value - value == 0:  # finite (json writes NaN and the infinities its own way)
        out.append(float.__repr__(value))
    elif kind is dict:
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        sep = "{" + inner
        for k, v in value.items():
            out.append(sep + (_ENCODE[0](k) if type(k) is str else _json_key(k)) + ": ")
            sep = "," + inner
            if k == "sites" and type(v) is list and v:
                _json_sites(v, inner, out)
            else:
                _json_value(v, inner, out)
        out.append(newline + "}")
    elif kind is list or kind is tuple:
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        sep = "[" + inner
        for v in value:
            out.append(sep)
            sep = "," + inner
            _json_value(v, inner, out)
        out.append(newline + "]")
    else:
        out.append(_json_scalar(value))


_SITE_KEYS = ("line", "column", "end_column", "message")


def _json_sites(sites: list, newline: str, out: list[str]) -> None:
    """A finding's list of sites (most of what a library's findings print), each written at once."""
    inner = newline + "  "
    field = inner + "  "
    encode = _ENCODE[0]
    sep = "[" + inner
    for site in sites:
        if type(site) is not dict or tuple(site) != _SITE_KEYS:
            out.append(sep)
            _json_value(site, inner, out)
        else:
            line, column, end, message = site.values()
            if type(line) is not int or type(column) is not int or type(end) is not int or type(message) is not str:
                out.append(sep)
                _json_value(site, inner, out)
            else:
                out.append(f'{sep}{{{field}"line": {line},{field}"column": {column},{field}"end_column": {end},'
                           f'{field}"message": {encode(message)}{inner}}}')
        sep = "," + inner
    out.append(newline + "]")


def _json_scalar(value) -> str:
    """A number, boolean or None (or a key that is one) as json writes it."""
    import json

    if isinstance(value, (bool, int, float)) or value is None:
        return json.dumps(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _json_key(key) -> str:
    """A key that is not a string as json writes it (a number, a boolean or None, quoted)."""
    import json

    return json.dumps({key: 0})[1:-4]


def _encoder(text: str) -> str:
    from json.encoder import encode_basestring_ascii

    _ENCODE[0] = encode_basestring_ascii
    return encode_basestring_ascii(text)


_ENCODE = [_encoder]  # a string as json writes it (imported on first use)


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
        if d.sites:
            result["relatedLocations"] = [{"id": n, "message": {"text": site.message}, "physicalLocation": {
                "artifactLocation": {"uri": d.path},
                "region": {"startLine": site.line, "startColumn": site.column, "endColumn": site.end_column},
            }} for n, site in enumerate(d.sites)]
        properties = {}
        if d.fix:
            properties["fix"] = d.fix
        if d.notes:
            properties["notes"] = list(d.notes)
        if d.cost:
            properties["cost"] = dict(d.cost)
        if properties:
            result["properties"] = properties
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
    import json

    return json.dumps(doc, indent=2)


def stdout_is_terminal() -> bool:
    return sys.stdout.isatty()


def use_color(explicit: bool | None, stream=None) -> bool:
    """Whether to colour: ``--color``/``--no-color`` when given, else ``NO_COLOR`` (any value: no),
    ``FORCE_COLOR`` (any value: yes), else whether ``stream`` (stdout) is a terminal."""
    import os

    if explicit is not None:
        return explicit
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    stream = stream or sys.stdout
    return hasattr(stream, "isatty") and stream.isatty()


def text_width(stream=None) -> int:
    """The terminal's width when ``stream`` is one (at least 60), else :data:`WIDTH`."""
    import os

    stream = stream or sys.stdout
    if hasattr(stream, "isatty") and stream.isatty():
        try:
            return max(60, min(200, os.get_terminal_size(stream.fileno()).columns))
        except (OSError, ValueError):
            pass
    return WIDTH
