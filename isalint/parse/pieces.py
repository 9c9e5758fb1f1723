"""Cutting a large file into pieces that are parsed and analysed one at a time.

A file of more than :data:`PIECE_LINES` lines would hold every line's model and every rule's data
at once (several KiB per instruction). It is cut where a new compilation unit starts (a
``.amdgcn_target`` line: files of concatenated compiler output) and, where a unit alone is longer
than a piece, at the last label before the limit (a basic-block boundary) or at the limit itself.
Only such inner cuts lose anything: control flow across them is not followed.
"""
from __future__ import annotations

import re

PIECE_LINES = 120_000
_EOL = re.compile(r"\r\n|\n|\r")
_TARGET = re.compile(r"[ \t]*\.amdgcn_target\b")
_LABEL = re.compile(r"[ \t]*[.A-Za-z_$][\w.$@]*:(?!:)")


class Piece:
    """``text[start:end]``, whose first line is line ``first_line`` of the file; ``cut_inside_unit``:
    it continues a compilation unit cut before it (at a label or at the limit)."""

    __slots__ = ("start", "end", "first_line", "cut_inside_unit")

    def __init__(self, start: int, end: int, first_line: int, cut_inside_unit: bool):
        self.start, self.end, self.first_line, self.cut_inside_unit = start, end, first_line, cut_inside_unit

    def __repr__(self) -> str:
        return f"Piece({self.start}, {self.end}, line {self.first_line}, cut_inside_unit={self.cut_inside_unit})"


def count_lines(text: str) -> int:
    return len(_EOL.findall(text)) + (0 if not text or _EOL.match(text, len(text) - 1) else 1)


def split_pieces(text: str, max_lines: int = PIECE_LINES) -> list[Piece]:
    """Consecutive pieces covering ``text``, each of at most ``max_lines`` lines."""
    pieces: list[Piece] = []
    start, first_line, inner = 0, 1, False
    label_cut: tuple[int, int] | None = None  # (offset, line) of the last label line seen in the piece
    line_no, pos, n = 1, 0, len(text)

    def close(at: int, next_line: int, next_inner: bool) -> None:
        nonlocal start, first_line, inner, label_cut
        pieces.append(Piece(start, at, first_line, inner))
        start, first_line, inner, label_cut = at, next_line, next_inner, None

    while pos < n:
        m = _EOL.search(text, pos)
        end = m.end() if m else n
        if line_no > first_line:
            if _TARGET.match(text, pos, end):
                close(pos, line_no, False)
            elif _LABEL.match(text, pos, end):
                label_cut = (pos, line_no)
        if line_no - first_line >= max_lines:
            if label_cut is not None and label_cut[1] - first_line >= max_lines // 2:
                cut_at, cut_line = label_cut
            else:
                cut_at, cut_line = pos, line_no
            close(cut_at, cut_line, True)
        pos = end
        line_no += 1
    if start < n or not pieces:
        pieces.append(Piece(start, n, first_line, inner))
    return pieces
