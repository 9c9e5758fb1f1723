"""isalint's rules: one module per code, each with its documentation.

A rule module defines ``CODE``, ``NAME``, ``SEVERITY`` (its highest), ``SUMMARY``
(one line), ``FIXABLE`` (the ``isalint fix`` flag that repairs it, or None), a
module docstring in the ruff style (what it finds, why it matters, example,
fix safety, ISA-guide reference) and ``check(analysis)`` yielding Diagnostics.
"""
from __future__ import annotations

import os

# code -> module name; listed here so `isalint rules` and `--select` need not import every rule.
REGISTRY: dict[str, str] = {
    "PARSE001": "parse001",
    "DUAL001": "dual001",
    "DUAL002": "dual002",
    "DUAL003": "dual003",
    "BANK001": "bank001",
    "LDS001": "lds001",
    "GMEM001": "gmem001",
    "SCRATCH001": "scratch001",
    "WAIT001": "wait001",
    "WAIT002": "wait002",
    "META001": "meta001",
    "OCC001": "occ001",
    "WMMA001": "wmma001",
    "DELAY001": "delay001",
    "SUPP001": "supp001",
    "LIMIT001": "limit001",  # last: it reports the limits the rules before it reached
}
# Reported whatever --select says, unless ignored: a clean result must not hide unchecked code.
ALWAYS_ON = ("LIMIT001",)


def available() -> list[str]:
    """Codes whose module exists in this installation."""
    try:  # the package's own directory, when it is one: a listing instead of a search per rule
        present = set(os.listdir(os.path.dirname(__file__)))
    except (OSError, TypeError, NameError):
        present = None
    out = []
    for code, module in REGISTRY.items():
        found = f"{module}.py" in present if present is not None else None
        if found is None:
            import importlib.util

            found = importlib.util.find_spec(f"{__name__}.{module}") is not None
        if found:
            out.append(code)
    return out


def load(code: str):
    import importlib

    return importlib.import_module(f"{__name__}.{REGISTRY[code.upper()]}")


def all_rules() -> list:
    return [load(code) for code in available()]


def names() -> dict[str, str]:
    """rule name (``illegal-vopd-pair``) -> code, for every available rule."""
    return {load(code).NAME: code for code in available()}
