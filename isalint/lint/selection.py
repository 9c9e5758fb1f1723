"""Choosing rules and severities: codes, prefixes, ALL and rule names resolved; the rules that run on
a file (command line, configuration, ``per-file-ignores``); configured severity overrides."""
from __future__ import annotations

SEVERITIES = ("error", "warning", "info")


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
            from .. import rules as registry

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

    from ..rules import ALWAYS_ON

    chosen = [c for c in available if select is None or matches(c, select) or c in ALWAYS_ON]
    return [c for c in chosen if not matches(c, ignore)]


def codes_for(available: list[str], config, path: str, cli: dict | None = None) -> list[str]:
    """The rules that run on ``path`` under ``config`` (a :class:`~isalint.lint.config.Config`).
    ``cli``: the command line's resolved ``select``, ``ignore`` and ``extend_select`` lists (None
    where not given). An explicit select replaces the configuration's select and ignore lists;
    ``extend-select`` (both) adds to the selection; the command line's ignore and the file's
    ``per-file-ignores`` always apply."""
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
