"""Running rules over files: selection, configuration, suppressions, severity overrides."""
from __future__ import annotations

import os

from .config import Config, ConfigError, find_config, load_config  # noqa: F401  (the checker's configuration)
from .diagnostics import Diagnostic
from .records import Record

# re and fnmatch are imported where they are used: a check answered from the result cache needs neither
_SUPPRESS_PATTERN = r"isalint:\s*(disable-file|disable-next-line|disable)\s*=\s*([A-Za-z0-9_, -]+)"
ASM_SUFFIXES = (".s", ".asm")
SEVERITIES = ("error", "warning", "info")


def expand_paths(paths: list[str]) -> list[str]:
    """The files to check: directories searched for .s/.asm, each file once (the first spelling)."""
    out: list[str] = []
    seen: set[str] = set()

    def add(p: str) -> None:
        key = p if p == "-" else os.path.realpath(p)
        if key not in seen:
            seen.add(key)
            out.append(p)

    for p in paths:
        if p != "-" and os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for f in sorted(files):
                    if f.endswith(ASM_SUFFIXES):
                        add(os.path.join(root, f))
        else:
            add(p)
    return out


def resolve_codes(tokens: list[str], available: list[str]) -> tuple[list[str], list[str]]:
    """(codes or prefixes, unknown tokens) for codes, code prefixes, ALL and rule names
    (``illegal-vopd-pair``)."""
    out, unknown = [], []
    names = None
    for token in tokens:
        upper = token.strip().upper()
        if not upper:
            continue
        if upper == "ALL" or any(a.startswith(upper) for a in available):
            out.append(upper)
            continue
        if names is None:
            from . import rules as registry

            names = registry.names()
        code = names.get(token.strip().lower())
        if code is not None:
            out.append(code)
        else:
            unknown.append(token.strip())
    return out, unknown


def selected_codes(available: list[str], select: list[str] | None, ignore: list[str]) -> list[str]:
    def matches(code: str, patterns: list[str]) -> bool:
        return any(code == p or (p and code.startswith(p)) or p == "ALL" for p in patterns)

    from .rules import ALWAYS_ON

    chosen = [c for c in available if select is None or matches(c, select) or c in ALWAYS_ON]
    return [c for c in chosen if not matches(c, ignore)]


def codes_for(available: list[str], config: Config, path: str, cli: dict | None = None) -> list[str]:
    """The rules that run on ``path``. ``cli``: the command line's resolved ``select``, ``ignore`` and
    ``extend_select`` lists (None where not given). An explicit select replaces the configuration's
    select and ignore lists; ``extend-select`` (both) adds to the selection; the command line's ignore
    and the file's ``per-file-ignores`` always apply."""
    cli = cli or {}

    def resolved(tokens):
        return resolve_codes(tokens, available)[0]

    ignore = list(cli.get("ignore") or []) + resolved(config.ignored_for(path))
    if cli.get("select") is not None:
        select = cli["select"]
    else:
        select = resolved(config.select) if config.select is not None else None
        ignore += resolved(config.ignore)
    extend = list(cli.get("extend_select") or []) + resolved(config.extend_select)
    codes = selected_codes(available, select, ignore)
    if extend:
        more = selected_codes(available, extend, ignore)
        codes = [c for c in available if c in codes or c in more]
    return codes


class Directive(Record):
    """One code of one ``isalint: disable...`` comment."""

    line: int  # the comment's line
    column: int  # of the code in the comment
    token: str  # as written
    code: str  # the rule code it names (or ALL)
    kind: str  # disable | disable-next-line | disable-file
    used: bool

    _fields = ("line", "column", "token", "code", "kind", "used")

    def __init__(self, line: int, column: int, token: str, code: str, kind: str, used: bool = False):
        self.line = line
        self.column = column
        self.token = token
        self.code = code
        self.kind = kind
        self.used = used

    @property
    def target(self) -> int | None:
        """The line it silences (None: the whole file)."""
        if self.kind == "disable-file":
            return None
        return self.line + 1 if self.kind == "disable-next-line" else self.line


class Suppressions:
    """The file's ``; isalint: disable=CODE`` (this line), ``disable-next-line=CODE`` and
    ``disable-file=CODE`` comments; codes, ALL or rule names. Each records whether it silenced a finding."""

    def __init__(self, source, available: list[str]):
        import re

        suppress = re.compile(_SUPPRESS_PATTERN)
        self.directives: list[Directive] = []
        for line in source.lines:
            if not line.comment or "isalint" not in line.comment:
                continue
            for m in suppress.finditer(line.comment):
                offset = (line.comment_col or 1) + m.start(2)
                pos = 0
                for raw in m.group(2).split(","):
                    token = raw.strip()
                    col = offset + pos + (len(raw) - len(raw.lstrip()))
                    pos += len(raw) + 1
                    if not token:
                        continue
                    codes, _unknown = resolve_codes([token], available)
                    code = codes[0] if codes else None
                    if code is not None and (code == "ALL" or code in available):
                        self.directives.append(Directive(line.number, col, token, code, m.group(1)))

    def suppresses(self, code: str, line: int) -> bool:
        """Whether a ``code`` finding at ``line`` is silenced; the directives that do are marked used."""
        hit = False
        for d in self.directives:
            if d.code in (code, "ALL") and d.target in (None, line):
                d.used = True
                hit = True
        return hit


def suppressed_codes(source) -> dict[int, set[str]]:
    """line number -> codes disabled there by inline comments (file-wide ones under line 0)."""
    from . import rules as registry

    out: dict[int, set[str]] = {}
    for d in Suppressions(source, registry.available()).directives:
        out.setdefault(d.target or 0, set()).add(d.code)
    return out


# a directive as a reader would take it, to tell what the suppression pattern above does not follow
_DIRECTIVE_PATTERN = r"isalint:\s*(disable-file|disable-next-line|disable)(?![\w-])(\s*=)?"


def suppression_problems(source, available: list[str]) -> list[str]:
    """``path:line: ...`` for each inline directive that cannot suppress anything: one without codes,
    or naming a code or rule name no rule has (SUPP001 judges the codes that exist)."""
    out: list[str] = []
    directive = suppress = None
    for line in source.lines:
        if not line.comment or "isalint" not in line.comment:
            continue
        if directive is None:
            import re

            directive, suppress = re.compile(_DIRECTIVE_PATTERN), re.compile(_SUPPRESS_PATTERN)
        for m in directive.finditer(line.comment):
            kind = m.group(1)
            where = f"{source.path}:{line.number}"
            if m.group(2) is None:
                out.append(f"{where}: 'isalint: {kind}' names no rule: write 'isalint: {kind}=CODE[,CODE]' "
                           "(or =ALL); nothing suppressed")
                continue
            codes = suppress.match(line.comment, m.start())
            listed = [c.strip() for c in codes.group(2).split(",") if c.strip()] if codes else []
            if not listed:
                out.append(f"{where}: 'isalint: {kind}=' names no rule code; nothing suppressed")
            found, bad = resolve_codes(listed, available)
            bad += [c for c in listed if c.upper() not in ("ALL", *available) and c not in bad
                    and c.upper() in found]  # a prefix: suppressions name whole codes
            if bad:
                out.append(f"{where}: unknown rule code(s) in 'isalint: {kind}': {', '.join(bad)} "
                           "(suppressions name whole codes or rule names, like WAIT001); not suppressed")
    return out


def check_analysis(analysis, codes: list[str], config: Config | None = None) -> list[Diagnostic]:
    """The findings of the rules ``codes`` on one file: suppressions applied (an aggregated finding
    drops its silenced sites), the configured severities set, sorted by place."""
    from . import rules as registry

    available = registry.available()
    suppressions = Suppressions(analysis.program.source, available)
    analysis.suppressions = suppressions
    found: list[Diagnostic] = []
    after: list = []
    for code in codes:
        rule = registry.load(code)
        if hasattr(rule, "check_suppressions"):
            after.append(rule)
            continue
        found.extend(rule.check(analysis))
    found = [d for d in found if d.sites or not suppressions.suppresses(d.code, d.line)]
    for rule in after:
        found.extend(rule.check_suppressions(analysis, suppressions, codes, set(codes) >= set(available)))
    if config is not None and config.severity:
        overrides = severity_overrides(config.severity, available)
        for d in found:
            d.severity = overrides.get(d.code, d.severity)
    found.sort(key=Diagnostic.sort_key)
    return found


def severity_overrides(table: dict[str, str], available: list[str]) -> dict[str, str]:
    """code -> severity from ``[tool.isalint] severity`` (keys: codes, prefixes or rule names)."""
    out: dict[str, str] = {}
    for key, severity in table.items():
        if severity not in SEVERITIES:
            continue
        codes, _unknown = resolve_codes([key], available)
        for c in codes:
            for a in available:
                if a == c or a.startswith(c) or c == "ALL":
                    out[a] = severity
    return out
