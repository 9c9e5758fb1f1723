"""Fix stage: one rewrite pass per module; each proves what it needs or refuses."""
from __future__ import annotations

from dataclasses import dataclass


class FixRefused(Exception):
    """The pass cannot prove its rewrite safe; the message says why. Nothing is written."""


@dataclass
class FixResult:
    text: str  # the whole rewritten file
    summary: str = ""  # a before/after summary for people
