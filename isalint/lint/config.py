"""``[tool.isalint]`` in pyproject.toml (or the file ``--config`` names): found, read and checked.

A configuration isalint cannot follow is an input error (exit 2) naming the file and line: a
malformed pyproject.toml that mentions isalint, a key of the wrong type, an unknown rule code or
name, a severity that is not one. Unknown keys are warnings, so that a newer configuration still
runs on an older isalint.
"""
from __future__ import annotations

import os

from ..records import Record
from .selection import SEVERITIES, resolve_codes

KNOWN_KEYS = ("select", "ignore", "extend-select", "per-file-ignores", "severity", "target")
_MAX_BYTES = 4 * 1024 * 1024


class ConfigError(Exception):
    """A configuration isalint cannot follow; reported as one line (``path:line: message``), exit 2."""

    def __init__(self, path: str, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}")
        self.path, self.line, self.message = path, line, message


class Config(Record):
    """The settings; code lists hold the tokens as written (codes, prefixes or rule names)."""

    select: list[str] | None
    ignore: list[str]
    extend_select: list[str]
    per_file_ignores: dict[str, list[str]]  # glob -> codes
    severity: dict[str, str]  # code or name -> severity
    target: str
    origin: str | None  # the pyproject.toml (or --config file) it came from
    warnings: list[str]  # what was ignored in it (not a field)

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
        self.warnings = []

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
    """``[tool.isalint]`` of the nearest pyproject.toml at or above ``start`` (ConfigError if invalid)."""
    directory = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    while True:
        candidate = os.path.join(directory, "pyproject.toml")
        found = _isalint_section(candidate)
        if found is not None:
            return _config(*found, candidate)
        parent = os.path.dirname(directory)
        if parent == directory:
            return Config()
        directory = parent


def load_config(path: str) -> Config:
    """The configuration in the file ``--config`` names: its ``[tool.isalint]`` table (a
    pyproject.toml), else its top-level keys (an isalint.toml). ConfigError when it cannot be read."""
    from ..parse.errors import InputError
    from ..parse.reading import read_bytes

    try:
        raw = read_bytes(path, _MAX_BYTES)
    except InputError as exc:
        raise ConfigError(path, 1, f"cannot read the configuration: {exc.message}") from None
    data, text = _toml(raw, path)
    tool = data.get("tool")
    section = tool.get("isalint") if isinstance(tool, dict) else None
    if section is not None and not isinstance(section, dict):
        raise ConfigError(path, _line_of(text, "isalint"), "[tool.isalint] must be a table of settings")
    return _config(section if section is not None else data, text, path)


def _isalint_section(path: str) -> tuple[dict, str] | None:
    """(the ``[tool.isalint]`` table, the file's text) of the pyproject.toml at ``path``, or None."""
    if not os.path.isfile(path):
        return None
    from ..parse.reading import read_bytes

    try:
        raw = read_bytes(path, _MAX_BYTES)
    except Exception:  # noqa: BLE001 - InputError (not imported for nothing): an unreadable file is no configuration
        return None
    # the table's name holds "isalint": other projects' files need no TOML parser
    if b"isalint" not in raw:
        return None
    data, text = _toml(raw, path)
    tool = data.get("tool")
    if not isinstance(tool, dict) or "isalint" not in tool:
        return None
    section = tool["isalint"]
    if not isinstance(section, dict):
        raise ConfigError(path, _line_of(text, "isalint"), "[tool.isalint] must be a table of settings")
    return section, text


def _toml(raw: bytes, path: str) -> tuple[dict, str]:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib
        except ImportError:
            raise ConfigError(path, 1, "reading [tool.isalint] needs Python 3.11 or the tomli package") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(path, raw.count(b"\n", 0, exc.start) + 1, "not UTF-8 text") from None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None) or _line_in_message(str(exc), text)
        raise ConfigError(path, line, f"invalid TOML: {str(exc).split(' (at ')[0]}") from None


def _config(section: dict, text: str, origin: str) -> Config:
    from .. import rules as registry

    available = registry.available()

    def checked(key: str, value, where: str) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
            raise ConfigError(origin, _line_of(text, key),
                              f'{where} must be a list of rule codes or names, like ["DUAL001", "WAIT"]')
        _codes, unknown = resolve_codes(value, available)
        if unknown:
            raise ConfigError(origin, _line_of(text, key), f"unknown rule code(s) or name(s) in {where}: "
                                                          f"{', '.join(unknown)}")
        return [c.strip() for c in value]

    def table(key: str) -> dict:
        value = section[key]
        if not isinstance(value, dict):
            raise ConfigError(origin, _line_of(text, key), f"[tool.isalint] {key} must be a table")
        return value

    config = Config(origin=origin)
    if "select" in section:
        config.select = checked("select", section["select"], "[tool.isalint] select")
    if "ignore" in section:
        config.ignore = checked("ignore", section["ignore"], "[tool.isalint] ignore")
    if "extend-select" in section:
        config.extend_select = checked("extend-select", section["extend-select"], "[tool.isalint] extend-select")
    if "per-file-ignores" in section:
        config.per_file_ignores = {str(glob): checked(str(glob), codes, f"[tool.isalint] per-file-ignores {glob!r}")
                                   for glob, codes in table("per-file-ignores").items()}
    if "severity" in section:
        for key, severity in table("severity").items():
            checked(str(key), [str(key)], "[tool.isalint] severity")
            if not isinstance(severity, str) or severity.lower() not in SEVERITIES:
                raise ConfigError(origin, _line_of(text, str(key)), f"[tool.isalint] severity of {key}: "
                                  f"{severity!r} is not one of {', '.join(SEVERITIES)}")
            config.severity[str(key)] = severity.lower()
    if "target" in section:
        target = section["target"]
        if not (isinstance(target, str) and target.startswith("gfx") and target[3:].isalnum()):
            raise ConfigError(origin, _line_of(text, "target"), '[tool.isalint] target must be a name like "gfx1100"')
        config.target = target
    for key in section:
        if key not in KNOWN_KEYS:
            config.warnings.append(f"{origin}:{_line_of(text, key)}: unknown key '{key}' in [tool.isalint] "
                                   f"(known: {', '.join(KNOWN_KEYS)}); ignored")
    return config


def _line_of(text: str, key: str) -> int:
    """The line of ``key = ...`` in the TOML text (1 when it cannot be told)."""
    import re

    m = re.search(rf"^[ \t]*(?:tool\.isalint\.)?[\"']?{re.escape(key)}[\"']?[ \t]*[=\]]", text, re.M)
    if m is None:
        m = re.search(rf"^.*\b{re.escape(key)}\b", text, re.M)
    return text.count("\n", 0, m.start()) + 1 if m else 1


def _line_in_message(message: str, text: str) -> int:
    import re

    m = re.search(r"line (\d{1,9})", message)
    if m:
        return int(m.group(1))
    if "end of document" in message:
        return max(1, len(text.splitlines()))
    return 1
