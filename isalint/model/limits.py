"""Work limits of the analyses whose worst case grows faster than the file.

An analysis that reaches its limit stops, records a :class:`LimitReached` on the program and
leaves the rest unanalysed; rule LIMIT001 reports each record as a finding, so a file is never
checked only in part without saying so.
"""
from __future__ import annotations

from dataclasses import dataclass

# Loop bodies: the total number of (loop, block) memberships of a file's natural loops.
LOOP_MEMBERSHIPS = 2_000_000


@dataclass(frozen=True)
class LimitReached:
    analysis: str  # what gave up: "the loop analysis", "DUAL002's pairing search", ...
    where: str  # the part of the file it gave up on
    line: int  # where the finding points
    skipped: int  # instructions not checked
    detail: str = ""

    def message(self) -> str:
        text = f"analysis limit reached in {self.analysis} ({self.where}): {self.skipped} instructions not checked"
        return f"{text}; {self.detail}" if self.detail else text


def record(program, limit: LimitReached) -> None:
    """Remember ``limit`` on ``program`` (once)."""
    found = program.limits
    if limit not in found:
        found.append(limit)
