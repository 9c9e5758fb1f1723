"""Line edits: insert, replace or delete lines of the source by instruction or line index.

Edits are collected, then applied in one pass over the file's lines, so every line no edit names is
reproduced byte for byte (its own end of line, tabs, trailing blanks, invalid UTF-8). New lines end
with the file's first end of line. At one line the result is: the lines inserted before it (in the
order they were added), the line itself or its replacement (the last replacement wins; an empty one
deletes it), then the lines inserted after it. A span edit changes characters inside one line and
keeps that line's own end of line (unless the line is replaced).
"""
from __future__ import annotations


class Edits:
    """Pending edits of one parsed program's source."""

    def __init__(self, program):
        self.program = program
        self.source = program.source
        self._line_index = {id(line): n for n, line in enumerate(self.source.lines)}
        self.replaced: dict[int, list[str]] = {}  # line index -> new lines (may be empty)
        self.before: dict[int, list[str]] = {}  # line index -> lines inserted before it
        self.after: dict[int, list[str]] = {}  # line index -> lines inserted after it
        self.spans: dict[int, list[tuple[int, int, str]]] = {}  # line index -> (start, end, new text)

    def line_of(self, index: int) -> int:
        """The line index (0-based, in ``source.lines``) of instruction ``index``."""
        return self._line_index[id(self.program.instrs[index].line)]

    def index_of_line(self, line) -> int:
        """The line index of a :class:`~isalint.parse.nodes.Line` of this source."""
        return self._line_index[id(line)]

    # by line index
    def replace_line(self, line: int, lines: list[str]) -> None:
        self.replaced[line] = list(lines)

    def insert_before_line(self, line: int, lines: list[str]) -> None:
        self.before.setdefault(line, []).extend(lines)

    def insert_after_line(self, line: int, lines: list[str]) -> None:
        self.after.setdefault(line, []).extend(lines)

    def replace_span(self, line: int, start: int, end: int, new: str) -> None:
        """Replace characters ``start:end`` of the line's text (spans of one line must not overlap)."""
        self.spans.setdefault(line, []).append((start, end, new))

    # by instruction index
    def replace(self, index: int, lines: list[str]) -> None:
        self.replace_line(self.line_of(index), lines)

    def delete(self, index: int) -> None:
        self.replace_line(self.line_of(index), [])

    def insert_before(self, index: int, lines: list[str]) -> None:
        self.insert_before_line(self.line_of(index), lines)

    def insert_after(self, index: int, lines: list[str]) -> None:
        self.insert_after_line(self.line_of(index), lines)

    def render(self) -> str:
        """The whole file with the edits applied."""
        source = self.source
        eol = next((ln.eol for ln in source.lines if ln.eol), "\n")
        out: list[str] = []
        for n, line in enumerate(source.lines):
            for t in self.before.get(n, ()):
                out.append(t + eol)
            if n in self.replaced:
                for t in self.replaced[n]:
                    out.append(t + eol)
            elif n in self.spans:
                text = line.text
                for start, end, new in sorted(self.spans[n], reverse=True):
                    text = text[:start] + new + text[end:]
                out.append(text + line.eol)
            else:
                out.append(line.text + line.eol)
            for t in self.after.get(n, ()):
                out.append(t + eol)
        return "".join(out)


def indent_of(line) -> str:
    """The leading whitespace of a source line (a tab when it has none)."""
    return indent_of_text(line.text)


def indent_of_text(text: str) -> str:
    return text[: len(text) - len(text.lstrip())] or "\t"
