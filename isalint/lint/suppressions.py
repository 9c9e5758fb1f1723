"""Inline suppressions: the file's ``; isalint: disable=CODE`` comments, which findings they silence,
and the directives that cannot silence anything."""
from __future__ import annotations

from ..records import Record
from .selection import resolve_codes

# re is imported where it is used: a check answered from the result cache needs none of this
_SUPPRESS_PATTERN = r"isalint:\s*(disable-file|disable-next-line|disable)\s*=\s*([A-Za-z0-9_, -]+)"


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
    from .. import rules as registry

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
