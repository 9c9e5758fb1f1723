"""Line-level reading of an assembly file: line kinds, comments, labels,
directives, the ``.amdgpu_metadata`` YAML document and instruction statements.

``SourceFile.render()`` returns the exact bytes that were read.
"""
from __future__ import annotations

import re

from ..records import Record
from .errors import InputError
from .nodes import Line, Statement
from .operands import OperandError
from .scanner import scan_statement, split_vopd

_LINE_SPLIT = re.compile(r"(\r\n|\n|\r)")
# A label is a symbol name and a colon; a name with other characters is quoted (``"non-uniform_load":``,
# as LLVM writes a symbol that is not an identifier), and the label is the name without its quotes.
_LABEL = re.compile(r'\s*(?:([.A-Za-z_$][\w.$@]*)|"((?:[^"\\]|\\.)+)"):(?!:)')
_DIRECTIVE = re.compile(r"\s*(\.[A-Za-z_][\w.]*)")
_MNEMONIC = re.compile(r"\s*[A-Za-z_][\w.]*")
_INSTRUCTION = re.compile(r"\s*[A-Za-z_][\w.]*(?:[ \t]|\Z)")


class SourceFile(Record):
    path: str
    lines: list[Line]
    encoding_errors: bool
    trailing: str  # text after the last line ending (a final line without EOL is a Line)
    _statements: list | None

    _fields = ("path", "lines", "encoding_errors", "trailing", "_statements")
    _no_repr = frozenset({"_statements"})

    def __init__(self, path: str, lines: list[Line], encoding_errors: bool = False, trailing: str = "",
                 _statements: list | None = None):
        self.path = path
        self.lines = lines
        self.encoding_errors = encoding_errors
        self.trailing = trailing
        self._statements = _statements

    def render(self) -> str:
        return "".join(line.text + line.eol for line in self.lines)

    def render_bytes(self) -> bytes:
        return self.render().encode("utf-8", "surrogateescape")

    def instruction_lines(self) -> list[Line]:
        return [line for line in self.lines if line.kind == "instruction"]


MAX_INPUT_BYTES = 64 * 1024 * 1024


def read_file(path: str, max_bytes: int = MAX_INPUT_BYTES) -> SourceFile:
    """Read and parse ``path``; raise InputError for what is not assembly text."""
    from .reading import read_bytes

    return parse_bytes(read_bytes(path, max_bytes), path)


def read_limited(path: str, max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """:func:`isalint.parse.reading.read_bytes` (regular files only, at most ``max_bytes``)."""
    from .reading import read_bytes

    return read_bytes(path, max_bytes)


def parse_bytes(data: bytes, path: str = "<input>") -> SourceFile:
    return parse_text(decode(data, path), path)


def decode(data: bytes, path: str = "<input>") -> str:
    """The text of ``data`` (invalid UTF-8 kept as surrogate escapes); InputError for binary data."""
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise InputError(path, line, "binary data (NUL byte), not an assembly text file")
    head = data[:4096]
    controls = sum(1 for b in head if b < 9 or 13 < b < 32 or b == 127)
    if head and controls * 20 > len(head):
        raise InputError(path, 1, "binary data (control bytes), not an assembly text file")
    return data.decode("utf-8", "surrogateescape")


def parse_text(text: str, path: str = "<input>", first_line: int = 1, reuse: dict | None = None) -> SourceFile:
    """Parse ``text``; its first line is line ``first_line`` of ``path`` (a piece of a larger file).

    ``reuse``: a dict the caller keeps from one parse to the next (an editor's buffer, parsed again
    after every edit): a line whose text was parsed before, outside a block comment and the metadata
    document, is copied from it with its statements (which nothing changes once made) instead of
    being read again."""
    if "\r" in text:
        parts = _LINE_SPLIT.split(text)
        bodies, eols = parts[0::2], parts[1::2]
    else:  # the common case: one kind of line ending
        bodies = text.split("\n")
        eols = ["\n"] * (len(bodies) - 1)
    eols.append("")
    lines: list[Line] = []
    in_block_comment = False
    in_metadata = False
    encoding_errors = False
    number = first_line - 1
    plain = _STATEMENTS
    maybe_surrogates = not text.isascii()
    for body, eol in zip(bodies, eols):
        if not body and not eol:
            continue  # the empty remainder after a final line ending
        number += 1
        if not in_block_comment and not in_metadata:
            known = plain.get(body)
            if known is not None:  # an instruction line without a comment, read before
                lines.append(Line(number, body, eol, "instruction", known))
                continue
        line = Line(number, body, eol, "blank")
        if maybe_surrogates and _has_surrogates(body):
            encoding_errors = True
            line.kind = "unknown"
            line.error = "line is not valid UTF-8"
            lines.append(line)
            continue
        if in_metadata:
            line.kind = "metadata"
            stripped = body.strip()
            if stripped.startswith(".end_amdgpu_metadata"):
                line.kind = "directive"
                line.directive = ".end_amdgpu_metadata"
                in_metadata = False
            lines.append(line)
            continue
        if reuse is not None and not in_block_comment:
            known = reuse.get(body)
            if known is not None:
                lines.append(Line(number, body, eol, known.kind, known.statements, known.label, known.directive,
                                  known.args, known.comment, known.comment_col, known.error, known.error_col))
                in_metadata = known.directive == ".amdgpu_metadata"
                continue
            in_block_comment = _read_line(line, False)
            if not in_block_comment:
                reuse[body] = line
        else:
            in_block_comment = _read_line(line, in_block_comment)
        if line.directive == ".amdgpu_metadata":
            in_metadata = True
        lines.append(line)
    return SourceFile(path, lines, encoding_errors)


def _has_surrogates(text: str) -> bool:
    return any("\udc80" <= c <= "\udcff" for c in text) if not text.isascii() else False


def _read_line(line: Line, in_block_comment: bool) -> bool:
    """Fill in ``line``; return whether a ``/* */`` comment is still open after it."""
    text = line.text
    start = 0
    if in_block_comment:
        close = text.find("*/")
        if close < 0:
            line.kind = "comment"
            line.comment, line.comment_col = text, 1
            return True
        start = close + 2
    if not in_block_comment and ";" not in text and "/" not in text and '"' not in text:
        # no comment: an instruction line when it starts with a mnemonic and a blank (neither a label,
        # whose name a colon follows, nor a directive, which starts with a dot)
        if _INSTRUCTION.match(text) is not None:
            line.kind = "instruction"
            known = _STATEMENTS.get(text)
            if known is not None:
                line.statements = known
                return False
            try:
                if "::" in text:
                    line.statements = parse_statements(text, 0)
                else:  # one statement: parse_statements() without the search for a VOPD pair
                    line.statements = [scan_statement(text, 0, len(text))]
                if len(_STATEMENTS) >= _STATEMENTS_MAX:
                    _STATEMENTS.clear()
                _STATEMENTS[text] = line.statements
            except OperandError as exc:
                line.kind = "unknown"
                line.statements = []
                line.error = str(exc)
                line.error_col = max(1, exc.col_offset + 1)
            return False
        code_end, comment_start, still_open = len(text), None, False
    else:
        code_end, comment_start, still_open = _find_comment(text, start)
    if comment_start is not None:
        line.comment = text[comment_start:]
        line.comment_col = comment_start + 1
    elif in_block_comment:
        line.comment, line.comment_col = text[:start], 1
    code = text[:code_end]
    pos = start
    if not code[pos:].strip():
        line.kind = "comment" if (line.comment is not None or in_block_comment) else "blank"
        return still_open
    m = _LABEL.match(code, pos) if ":" in code else None
    if m:
        line.label = m.group(1) if m.group(1) is not None else m.group(2)
        line.kind = "label"
        pos = m.end()
        if not code[pos:].strip():
            return still_open
    m = _DIRECTIVE.match(code, pos) if "." in code else None
    if m:
        line.kind = "directive"
        line.directive = m.group(1).lower()
        line.args = code[m.end():].strip()
        return still_open
    if not _MNEMONIC.match(code, pos):
        line.kind = "unknown"
        line.error = "not an instruction, label or directive"
        line.error_col = pos + len(code[pos:]) - len(code[pos:].lstrip()) + 1
        return still_open
    line.kind = "instruction"
    try:
        line.statements = parse_statements(code, pos)
    except OperandError as exc:
        line.kind = "unknown"
        line.statements = []
        line.error = str(exc)
        line.error_col = max(1, pos + exc.col_offset + 1)
    return still_open


# The statements of an instruction line without a comment, by its text: statements are never changed
# once made, and a kernel repeats its lines (a library of kernels, its whole loops): one list of
# statements serves every line of the same text.
_STATEMENTS: dict[str, list[Statement]] = {}
_STATEMENTS_MAX = 1 << 16


def parse_statements(code: str, pos: int = 0) -> list[Statement]:
    """The statements of an instruction line (the fast scanner)."""
    return [scan_statement(code, s, e) for s, e in split_vopd(code, pos)]


def _find_comment(text: str, start: int) -> tuple[int, int | None, bool]:
    """(end of code, start of comment or None, block comment left open)."""
    if '"' not in text:  # the common case: no string can hide a comment marker
        hits = [k for k in (text.find(";", start), text.find("//", start), text.find("/*", start)) if k >= 0]
        if not hits:
            return len(text), None, False
        k = min(hits)
        if text.startswith("/*", k):
            close = text.find("*/", k + 2)
            return k, k, close < 0
        return k, k, False
    i, n = start, len(text)
    quote = False
    while i < n:
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                quote = False
        elif c == '"':
            quote = True
        elif c == ";" or (c == "/" and i + 1 < n and text[i + 1] == "/"):
            return i, i, False
        elif c == "/" and i + 1 < n and text[i + 1] == "*":
            close = text.find("*/", i + 2)
            if close < 0:
                return i, i, True
            if not text[close + 2:].strip():
                return i, i, False
            # code after an inline block comment: keep scanning (rare in practice)
            return i, i, False
        i += 1
    return n, None, False
