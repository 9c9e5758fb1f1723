"""Fix stage: rewrite passes, each proving what it needs or refusing, on a shared toolkit.

A pass is a module (``metadata``) or, when it needs several, a package (``dual_fmac``) exposing
``apply(analysis, options: dict) -> FixResult``; it raises :class:`FixRefused` with a clear reason
when it cannot prove its rewrite safe. A pass that may change metadata only sets
``ONLY_METADATA = True`` (its result is then validated by comparing machine code); one whose code
depends on the GEMM size at run time sets ``VALIDATE_SIZES`` (validated at each of those sizes).
Passes use :mod:`isalint.fixes.toolkit` and the model, never another pass. :data:`PASSES` lists them by the
name of their ``isalint fix`` option.
"""
from __future__ import annotations

from dataclasses import dataclass

PASSES = {
    "dual_fmac": "isalint.fixes.dual_fmac",
    "unroll": "isalint.fixes.unroll",
    "batch_gmem": "isalint.fixes.batch_gmem",
    "delay_alu": "isalint.fixes.delay_alu",
    "metadata": "isalint.fixes.metadata",
}


class FixRefused(Exception):
    """The pass cannot prove its rewrite safe; the message says why. Nothing is written."""


@dataclass
class FixResult:
    text: str  # the whole rewritten file
    summary: str = ""  # a before/after summary for people
