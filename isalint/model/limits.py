"""Work limits of the analyses whose worst case grows faster than the file.

An analysis that reaches its limit stops, records a :class:`LimitReached` on the program and
leaves the rest unanalysed; rule LIMIT001 reports each record as a finding, so a file is never
checked only in part without saying so.
"""
from __future__ import annotations

from dataclasses import dataclass

# Loop bodies: the total number of (loop, block) memberships of a file's natural loops.
LOOP_MEMBERSHIPS = 2_000_000
# The lane evaluator (LDS001): instructions and block entries evaluated per kernel, per instruction
# of the kernel (real kernels need less than one), and at least.
LANE_STEPS_PER_INSTRUCTION = 10
LANE_STEPS_MIN = 50_000
# DUAL002: single VALU instructions whose pairings are searched, per file.
DUAL002_CANDIDATES = 4_096
# Findings reported per file (a finding on every line of a 64 MiB file would not fit in memory).
FINDINGS_PER_FILE = 50_000


@dataclass(eq=False)
class LimitReached:
    analysis: str  # what gave up: "the loop analysis", "DUAL002's pairing search", ...
    where: str  # the part of the file it gave up on
    line: int  # where the finding points
    skipped: int  # instructions not checked (an analysis may raise it as it goes on refusing)
    detail: str = ""
    unit: str = "instructions not checked"

    def message(self) -> str:
        text = f"analysis limit reached in {self.analysis} ({self.where}): {self.skipped} {self.unit}"
        return f"{text}; {self.detail}" if self.detail else text


def record(program, limit: LimitReached) -> None:
    """Remember ``limit`` on ``program`` (once)."""
    found = program.limits
    if not any(f.analysis == limit.analysis and f.where == limit.where for f in found):
        found.append(limit)
