"""Running rules on one file's analysis: suppressions applied, configured severities set."""
from __future__ import annotations

from ..diagnostics import Diagnostic
from .selection import severity_overrides
from .suppressions import Suppressions


def check_analysis(analysis, codes: list[str], config=None) -> list[Diagnostic]:
    """The findings of the rules ``codes`` on one file: suppressions applied (an aggregated finding
    drops its silenced sites), the severities ``config`` (a :class:`~isalint.lint.config.Config`)
    sets, sorted by place."""
    from .. import rules as registry

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
