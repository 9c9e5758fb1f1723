"""A rule's documentation as ``isalint explain`` prints it (and the editor shows it)."""
from __future__ import annotations


def explanation(rule) -> str:
    """Code, name, severity and fix of a rule module, then its documentation."""
    return (f"{rule.CODE} ({rule.NAME}), {rule.SEVERITY}{', fix: ' + rule.FIXABLE if rule.FIXABLE else ''}\n\n"
            + (rule.__doc__ or "").strip())
