"""``isalint server``: a language server for gfx11 assembly (diagnostics, hover, code actions).

The protocol side is :mod:`.app` (on pygls and lsprotocol, the optional ``server`` extra:
``pip install 'isalint[server]'``); everything it asks of the engine goes through :mod:`.engine`.
The rest is plain code on isalint's own objects, independent of the protocol library: where findings
and positions land in the editor (:mod:`.positions`, :mod:`.published`), what a hover says
(:mod:`.hover`), which actions are offered and how a fix is worked out and validated (:mod:`.actions`).
"""
from __future__ import annotations

INSTALL_HINT = "isalint server needs pygls 2 and lsprotocol: pip install 'isalint[server]'"


def missing_requirement() -> str | None:
    """Why the server cannot start here (its protocol library is missing or too old), else None."""
    import importlib.util

    for name in ("pygls", "lsprotocol"):
        try:
            if importlib.util.find_spec(name) is None:
                return INSTALL_HINT
        except (ImportError, ValueError):
            return INSTALL_HINT
    try:
        from importlib.metadata import version

        major = int(version("pygls").split(".")[0])
    except Exception:  # noqa: BLE001 - no metadata: let the import decide
        return None
    if major < 2:
        return f"{INSTALL_HINT} (pygls {version('pygls')} is installed)"
    return None
