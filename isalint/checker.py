"""Running rules over files: selection, configuration, suppressions, severity overrides."""
from __future__ import annotations

import os
from .diagnostics import Diagnostic
from .records import Record

# re and fnmatch are imported where they are used: a check answered from the result cache needs neither
_SUPPRESS_PATTERN = r"isalint:\s*(disable-file|disable-next-line|disable)\s*=\s*([A-Za-z0-9_, -]+)"
ASM_SUFFIXES = (".s", ".asm")
SEVERITIES = ("error", "warning", "info")


class Config(Record):
    select: list[str] | None
    ignore: list[str]
    extend_select: list[str]
    per_file_ignores: dict[str, list[str]]  # glob -> codes
    severity: dict[str, str]  # code or name -> severity
    target: str
    origin: str | None  # the pyproject.toml (or --config file) it came from

    _fields = ("select", "ignore", "extend_select", "per_file_ignores", "severity", "target", "origin")

    def __init__(self, select: list[str] | None = None, ignore: list[str] | None = None,
                 extend_select: list[str] | None = None, per_file_ignores: dict[str, list[str]] | None = None,
                 severity: dict[str, str] | None = None, target: str = "gfx1100", origin: str | None = None):
        self.select = select
        self.ignore = [] if ignore is None else ignore
        self.extend_select = [] if extend_select is None else extend_select
        self.per_file_ignores = {} if per_file_ignores is None else per_file_ignores
        self.severity = {} if severity is None else severity
        self.target = target
        self.origin = origin

    def ignored_for(self, path: str) -> list[str]:
        """The codes ``per-file-ignores`` turns off for ``path``: a glob matches the path relative to
        the configuration's directory, or the file's name."""
        if not self.per_file_ignores:
            return []
        base = os.path.dirname(os.path.abspath(self.origin)) if self.origin else os.getcwd()
        rel = os.path.relpath(os.path.abspath(path), base).replace(os.sep, "/")
        name = os.path.basename(path)
        import fnmatch

        out: list[str] = []
        for glob, codes in self.per_file_ignores.items():
            if fnmatch.fnmatchcase(rel, glob) or fnmatch.fnmatchcase(name, glob):
                out.extend(codes)
        return out


def find_config(start: str) -> Config:
    """``[tool.isalint]`` of the nearest pyproject.toml at or above ``start``."""
    directory = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    while True:
        candidate = os.path.join(directory, "pyproject.toml")
        section = _isalint_section(candidate)
        if section is not None:
            return config_from(section, candidate)
        parent = os.path.dirname(directory)
        if parent == directory:
            return Config()
        directory = parent


def load_config(path: str) -> Config:
    """The configuration in the file ``--config`` names: its ``[tool.isalint]`` table (a
    pyproject.toml), else its top-level keys (an isalint.toml)."""
    import tomllib

    with open(path, "rb") as fh:
        data = tomllib.loads(fh.read().decode("utf-8"))
    section = data.get("tool", {}).get("isalint") if isinstance(data.get("tool"), dict) else None
    return config_from(section if isinstance(section, dict) else data, path)


def config_from(section: dict, origin: str) -> Config:
    def codes(key: str) -> list[str]:
        value = section.get(key, [])
        return [str(c).strip() for c in value] if isinstance(value, list) else []

    pfi = section.get("per-file-ignores", {})
    sev = section.get("severity", {})
    return Config(
        select=codes("select") if "select" in section else None,
        ignore=codes("ignore"),
        extend_select=codes("extend-select"),
        per_file_ignores={str(k): [str(c).strip() for c in v] for k, v in pfi.items() if isinstance(v, list)}
        if isinstance(pfi, dict) else {},
        severity={str(k): str(v).lower() for k, v in sev.items()} if isinstance(sev, dict) else {},
        target=section.get("target", "gfx1100"),
        origin=origin,
    )


def _isalint_section(path: str) -> dict | None:
    """The ``[tool.isalint]`` table of the pyproject.toml at ``path``, None if there is none."""
    if not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    # the table's name holds "isalint": other projects' files need no TOML parser
    if b"isalint" not in raw:
        return None
    import tomllib

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    return data.get("tool", {}).get("isalint")


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

    chosen = [c for c in available if select is None or matches(c, select)]
    return [c for c in chosen if not matches(c, ignore)]


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
