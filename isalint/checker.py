"""Running rules over files: selection, configuration, inline suppressions."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from .diagnostics import Diagnostic

_SUPPRESS = re.compile(r"isalint:\s*(disable|disable-next-line)\s*=\s*([A-Za-z0-9_, ]+)")
ASM_SUFFIXES = (".s", ".asm")


@dataclass
class Config:
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    target: str = "gfx1100"
    origin: str | None = None  # the pyproject.toml it came from


def find_config(start: str) -> Config:
    """``[tool.isalint]`` of the nearest pyproject.toml at or above ``start``."""
    directory = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    while True:
        candidate = os.path.join(directory, "pyproject.toml")
        section = _isalint_section(candidate)
        if section is not None:
            return Config(
                select=[c.upper() for c in section["select"]] if "select" in section else None,
                ignore=[c.upper() for c in section.get("ignore", [])],
                target=section.get("target", "gfx1100"),
                origin=candidate,
            )
        parent = os.path.dirname(directory)
        if parent == directory:
            return Config()
        directory = parent


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
