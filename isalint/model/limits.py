"""Work limits of the analyses whose worst case grows faster than the file.

An analysis that reaches its limit stops, records a :class:`LimitReached` on the program and
leaves the rest unanalysed; rule LIMIT001 reports each record as a finding, so a file is never
checked only in part without saying so.
"""
from __future__ import annotations

# Loop bodies: the total number of (loop, block) memberships of a file's natural loops.
LOOP_MEMBERSHIPS = 2_000_000
# The lane evaluator (LDS001): instructions and block entries evaluated per kernel, per instruction
# of the kernel (real kernels need less than one), and at least.
LANE_STEPS_PER_INSTRUCTION = 10
LANE_STEPS_MIN = 50_000
# DUAL002: single VALU instructions whose pairings are searched, per file.
DUAL002_CANDIDATES = 4_096
# Findings reported per file (a finding on every line of a 64 MiB file would not fit in memory), and
# sites listed per aggregated finding (one loop's finding may cover every line of such a file).
FINDINGS_PER_FILE = 50_000
SITES_PER_FINDING = 2_000


class LimitReached:
    """What gave up (``analysis``: "the loop analysis", ...), on which part of the file (``where``,
    the finding at ``line``), how much it left (``skipped`` ``unit``: an analysis may raise it as it
    goes on refusing) and what that means (``detail``). ``severity`` is the worst finding the part
    left out could have held: a warning where a rule that warns or errs lost code, info where only
    an info rule did, or where nothing went unchecked and only the report was shortened."""

    __slots__ = ("analysis", "where", "line", "skipped", "detail", "unit", "severity")

    def __init__(self, analysis: str, where: str, line: int, skipped: int, detail: str = "",
                 unit: str = "instructions not checked", severity: str = "warning"):
        self.analysis, self.where, self.line, self.skipped = analysis, where, line, skipped
        self.detail, self.unit, self.severity = detail, unit, severity

    def message(self) -> str:
        text = f"analysis limit reached in {self.analysis} ({self.where}): {self.skipped} {self.unit}"
        return f"{text}; {self.detail}" if self.detail else text


def record(program, limit: LimitReached) -> None:
    """Remember ``limit`` on ``program`` (once)."""
    found = program.limits
    if not any(f.analysis == limit.analysis and f.where == limit.where for f in found):
        found.append(limit)
