"""Syntax nodes of a parsed assembly file.

Every node keeps the exact text it was made from and its 1-based column, so a
program can be printed back byte for byte and every diagnostic can point at
the character it is about.
"""
from __future__ import annotations

from ..records import Record

# Named scalar registers of gfx11 and the registers they expand to (wave32).
SPECIAL_REGISTERS: dict[str, tuple[str, ...]] = {
    "vcc_lo": ("vcc_lo",),
    "vcc_hi": ("vcc_hi",),
    "vcc": ("vcc_lo", "vcc_hi"),
    "exec_lo": ("exec_lo",),
    "exec_hi": ("exec_hi",),
    "exec": ("exec_lo", "exec_hi"),
    "m0": ("m0",),
    "scc": ("scc",),
    "vccz": ("vcc_lo",),
    "execz": ("exec_lo",),
    "null": (),
    "flat_scratch_lo": ("flat_scratch_lo",),
    "flat_scratch_hi": ("flat_scratch_hi",),
    "flat_scratch": ("flat_scratch_lo", "flat_scratch_hi"),
    "src_scc": ("scc",),
    "src_vccz": ("vcc_lo",),
    "src_execz": ("exec_lo",),
    "lds_direct": (),
    "src_lds_direct": (),
    "src_shared_base": (),
    "src_shared_limit": (),
    "src_private_base": (),
    "src_private_limit": (),
    "src_pops_exiting_wave_id": (),
    "pops_exiting_wave_id": (),
}


_NAMES: dict[tuple[str, int, int], tuple[str, ...]] = {}  # (file, first, count) -> register names


class Operand(Record):
    """One operand as written, e.g. ``v[184:187]``, ``-|v3|``, ``0x210``, ``.LBB0_3``.

    ``kind``: vgpr | sgpr | ttmp | special | int | float | label | off | func | expr (a VGPR list
    ``[v4, v9]`` is a vgpr operand whose ``value`` is the tuple of its indices); ``file``: "v",
    "s", "ttmp" or the special register's name; ``half``: ".l" / ".h" of a 16-bit register operand.
    """

    __slots__ = _fields = ("text", "col", "kind", "file", "first", "count", "value", "neg", "abs", "half")

    def __init__(self, text: str, col: int, kind: str, file: str | None = None, first: int = 0, count: int = 0,
                 value: int | float | None = None, neg: bool = False, abs: bool = False, half: str | None = None):
        self.text = text
        self.col = col
        self.kind = kind
        self.file = file
        self.first = first
        self.count = count
        self.value = value
        self.neg = neg
        self.abs = abs
        self.half = half

    @property
    def is_register(self) -> bool:
        return self.kind in ("vgpr", "sgpr", "ttmp", "special")

    def registers(self, count: int | None = None) -> list[str]:
        """Expanded register names (``v184``...). ``count`` overrides the written width."""
        if self.kind in ("vgpr", "sgpr", "ttmp"):
            if type(self.value) is tuple:  # a register list: [v4, v9] (image NSA address)
                return [f"v{i}" for i in self.value[:count]]
            n = self.count if count is None else count
            key = (self.file, self.first, n)
            names = _NAMES.get(key)
            if names is None:
                names = tuple(f"{self.file}{i}" for i in range(self.first, self.first + n))
                if n <= 16:
                    _NAMES[key] = names
            return list(names)
        if self.kind == "special":
            regs = SPECIAL_REGISTERS[self.file]
            if count is not None and count < len(regs):
                return list(regs[:count])
            return list(regs)
        return []


class Modifier(Record):
    """A trailing modifier such as ``offset:64``, ``glc`` or ``quad_perm:[2,2,0,1]``."""

    __slots__ = _fields = ("text", "col", "name", "value")

    def __init__(self, text: str, col: int, name: str, value: str | None = None):
        self.text = text
        self.col = col
        self.name = name
        self.value = value

    def int_value(self) -> int | None:
        if self.value is None:
            return None
        try:
            return int(self.value.strip(), 0)
        except ValueError:
            return None


class Statement(Record):
    """One machine instruction, or one half of a VOPD pair (``end_col``: the column just past its last
    character)."""

    __slots__ = _fields = ("mnemonic", "col", "operands", "modifiers", "end_col")

    def __init__(self, mnemonic: str, col: int, operands: list[Operand] | None = None,
                 modifiers: list[Modifier] | None = None, end_col: int = 0):
        self.mnemonic = mnemonic
        self.col = col
        self.operands = [] if operands is None else operands
        self.modifiers = [] if modifiers is None else modifiers
        self.end_col = end_col

    def modifier(self, name: str) -> Modifier | None:
        for m in self.modifiers:
            if m.name == name:
                return m
        return None


class Line(Record):
    """One physical line of the file. ``text`` excludes the line ending in ``eol``; ``kind``: blank |
    comment | label | directive | instruction | metadata | unknown."""

    __slots__ = _fields = ("number", "text", "eol", "kind", "statements", "label", "directive", "args", "comment",
                           "comment_col", "error", "error_col")

    def __init__(self, number: int, text: str, eol: str, kind: str, statements: list[Statement] | None = None,
                 label: str | None = None, directive: str | None = None, args: str = "", comment: str | None = None,
                 comment_col: int = 0, error: str | None = None, error_col: int = 1):
        self.number = number
        self.text = text
        self.eol = eol
        self.kind = kind
        self.statements = [] if statements is None else statements
        self.label = label
        self.directive = directive
        self.args = args
        self.comment = comment
        self.comment_col = comment_col
        self.error = error
        self.error_col = error_col

    @property
    def is_vopd(self) -> bool:
        return len(self.statements) == 2

    @property
    def code(self) -> str:
        """The line without its trailing comment or whitespace."""
        if self.comment is not None:
            return self.text[: self.comment_col - 1].rstrip()
        return self.text.rstrip()
