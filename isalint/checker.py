"""Running rules over files: selection, configuration, inline suppressions."""
from __future__ import annotations

import os
import re

from .config import Config, ConfigError, find_config  # noqa: F401  (the checker's configuration)
from .diagnostics import Diagnostic

_SUPPRESS = re.compile(r"isalint:\s*(disable|disable-next-line)\s*=\s*([A-Za-z0-9_, ]+)")
# a directive as a reader would take it, to tell what the suppression parser above does not follow
_DIRECTIVE = re.compile(r"isalint:\s*(disable-next-line|disable)(?![\w-])(\s*=)?")
ASM_SUFFIXES = (".s", ".asm")


def expand_paths(paths: list[str]) -> list[str]:
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                out.extend(os.path.join(root, f) for f in sorted(files) if f.endswith(ASM_SUFFIXES))
        else:
            out.append(p)
    return out


def selected_codes(available: list[str], select: list[str] | None, ignore: list[str]) -> list[str]:
    def matches(code: str, patterns: list[str]) -> bool:
        return any(code == p or (p and code.startswith(p)) or p == "ALL" for p in patterns)

    from .rules import ALWAYS_ON

    chosen = [c for c in available if select is None or matches(c, select) or c in ALWAYS_ON]
    return [c for c in chosen if not matches(c, ignore)]


def suppressed_codes(source) -> dict[int, set[str]]:
    """line number -> codes disabled there by inline comments."""
    out: dict[int, set[str]] = {}
    for line in source.lines:
        if not line.comment or "isalint" not in line.comment:
            continue
        for m in _SUPPRESS.finditer(line.comment):
            codes = {c.strip().upper() for c in m.group(2).split(",") if c.strip()}
            target = line.number + 1 if m.group(1) == "disable-next-line" else line.number
            out.setdefault(target, set()).update(codes)
    return out


def suppression_problems(source, available: list[str]) -> list[str]:
    """``path:line: ...`` for each inline directive that suppresses nothing it seems to: a bare
    ``isalint: disable`` without codes, or a code no rule has (suppressions name whole codes)."""
    known = set(available) | {"ALL"}
    out: list[str] = []
    for line in source.lines:
        if not line.comment or "isalint" not in line.comment:
            continue
        for m in _DIRECTIVE.finditer(line.comment):
            directive = m.group(1)
            where = f"{source.path}:{line.number}"
            if m.group(2) is None:
                out.append(f"{where}: 'isalint: {directive}' names no rule: write 'isalint: {directive}=CODE[,CODE]' "
                           "(or =ALL); nothing suppressed")
                continue
            codes = _SUPPRESS.match(line.comment, m.start())
            listed = [c.strip() for c in codes.group(2).split(",") if c.strip()] if codes else []
            if not listed:
                out.append(f"{where}: 'isalint: {directive}=' names no rule code; nothing suppressed")
            bad = [c for c in listed if c.upper() not in known]
            if bad:
                out.append(f"{where}: unknown rule code(s) in 'isalint: {directive}': {', '.join(bad)} "
                           "(suppressions name whole codes, like WAIT001); not suppressed")
    return out


def check_analysis(analysis, codes: list[str]) -> list[Diagnostic]:
    from . import rules as registry

    found: list[Diagnostic] = []
    for code in codes:
        rule = registry.load(code)
        found.extend(rule.check(analysis))
    off = suppressed_codes(analysis.program.source)
    if off:
        found = [d for d in found if not ({d.code, "ALL"} & off.get(d.line, set()))]
    found.sort(key=Diagnostic.sort_key)
    return found
