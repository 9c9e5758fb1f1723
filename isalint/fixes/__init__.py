"""Fix stage: rewrite passes, each proving what it needs or refusing, on a shared toolkit.

A pass is a module (``metadata``) or, when it needs several, a package (``dual_fmac``) exposing
``apply(analysis, options: dict) -> FixResult``; it raises :class:`FixRefused` with a clear reason
when it cannot prove its rewrite safe. A pass that may change metadata only sets
``ONLY_METADATA = True`` (its result is then validated by comparing machine code); one whose code
depends on the GEMM size at run time sets ``VALIDATE_SIZES`` (validated at each of those sizes).
Passes use :mod:`isalint.fixes.toolkit` and the model, never another pass. Each is declared once in
:mod:`isalint.fixes.registry` (:data:`PASSES`: name, help, options, order), from which ``isalint fix``
and ``isalint optimize`` build their command lines.
"""
from __future__ import annotations

from dataclasses import dataclass

from .registry import PASSES, Pass, by_name

__all__ = ["PASSES", "Pass", "by_name", "FixRefused", "FixResult"]


class FixRefused(Exception):
    """The pass cannot prove its rewrite safe; the message says why. Nothing is written."""


@dataclass
class FixResult:
    text: str  # the whole rewritten file
    summary: str = ""  # a before/after summary for people
