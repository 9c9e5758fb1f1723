"""Places in a document: isalint's (1-based line, 1-based column in characters) and the protocol's
(0-based line, 0-based offset in the code units the client and server agreed on: UTF-16 by default,
UTF-8 or UTF-32 when the client offers them).

Lines end as the protocol and isalint's parser both say: ``\\n``, ``\\r\\n`` or ``\\r``.
"""
from __future__ import annotations

import re

_EOL = re.compile(r"\r\n|\n|\r")


class Positions:
    def __init__(self, text: str, encoding: str = "utf-16"):
        self.encoding = encoding.lower()
        self.lines: list[str] = []
        self.ends: list[str] = []
        pos = 0
        for m in _EOL.finditer(text):
            self.lines.append(text[pos:m.start()])
            self.ends.append(m.group())
            pos = m.end()
        if pos < len(text) or not self.lines:
            self.lines.append(text[pos:])
            self.ends.append("")

    def line_text(self, line: int) -> str:
        """The text of 1-based ``line`` ('' past the end)."""
        return self.lines[line - 1] if 1 <= line <= len(self.lines) else ""

    def units(self, text: str) -> int:
        if text.isascii() or self.encoding == "utf-32":
            return len(text)
        if self.encoding == "utf-8":
            return len(text.encode("utf-8", "surrogatepass"))
        return len(text.encode("utf-16-le", "surrogatepass")) // 2

    def to_client(self, line: int, column: int) -> tuple[int, int]:
        """(0-based line, offset in code units) of isalint's 1-based ``line`` and ``column``; a column
        past the line's end is its end."""
        if line > len(self.lines):
            return self.end()
        line = max(line, 1)
        text = self.lines[line - 1]
        return line - 1, self.units(text[:max(column, 1) - 1])

    def from_client(self, line: int, character: int) -> tuple[int, int]:
        """isalint's (1-based line, 1-based column) of a client position."""
        text = self.line_text(line + 1)
        if text.isascii() or self.encoding == "utf-32":
            return line + 1, min(character, len(text)) + 1
        used = 0
        for k, c in enumerate(text):
            if used >= character:
                return line + 1, k + 1
            used += self.units(c)
        return line + 1, len(text) + 1

    def start_of(self, line: int) -> tuple[int, int]:
        """The client position where 1-based ``line`` starts (the end of the text past the last line)."""
        if line <= len(self.lines):
            return line - 1, 0
        return self.end()

    def end(self) -> tuple[int, int]:
        """The position after the last character of the text."""
        if self.ends[-1]:
            return len(self.lines), 0
        return len(self.lines) - 1, self.units(self.lines[-1])
