"""Registers whose value is known as another register's content plus a constant.

While the copies of a loop body are emitted, an add of a constant (``v_add_nc_u32
v183, 0x210, v183``, the induction variable's ``s_addk_i32``, or ``v_add_nc_u32 v204,
s14, v166`` once ``s14`` is a known constant) is not emitted: the register it writes is
recorded as ``(base, constant)``, meaning "the current content of ``base`` plus
``constant``" (``base`` None: the constant alone). LDS instructions take such a
register as their base address plus a larger immediate offset; any other reader gets
the value materialized first, by one move or add.

The invariant: an entry ``(base, c)`` is true as long as ``base`` is not written. So
before an emitted instruction writes a register, every entry based on it is
materialized (or, when the write adds a constant to the register itself, rebased).
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import FixRefused


def wrap(k: int) -> int:
    """``k`` as the signed 32-bit integer with the same bits (register arithmetic wraps)."""
    return ((k + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


@dataclass(frozen=True)
class Value:
    base: str | None  # a register whose current content the value adds to; None for a constant
    constant: int  # a signed 32-bit integer

    def __post_init__(self):
        object.__setattr__(self, "constant", wrap(self.constant))

    def plus(self, k: int) -> Value:
        return Value(self.base, self.constant + k)


def literal(value: int) -> str:
    """A 32-bit immediate as the assembler reads it: small values in decimal, others in hex."""
    v = value & 0xFFFFFFFF
    signed = v - (1 << 32) if v & 0x80000000 else v
    if -16 <= signed <= 64:
        return str(signed)
    return f"0x{v:x}"


def is_vgpr(reg: str) -> bool:
    return reg.startswith("v") and reg[1:].isdigit()


def is_sgpr(reg: str) -> bool:
    return reg.startswith("s") and reg[1:].isdigit()


class Deferred:
    """The registers whose content is stale, each with its true :class:`Value`.

    ``emit(text, reg)`` receives each materializing instruction and the register it writes.
    """

    def __init__(self, emit, indent: str):
        self.entries: dict[str, Value] = {}
        self._emit = emit
        self._indent = indent
        self.materialized = 0  # instructions emitted to materialize values

    def value(self, reg: str) -> Value:
        return self.entries.get(reg, Value(reg, 0))

    def set(self, reg: str, value: Value) -> None:
        if value.base == reg and value.constant == 0:
            self.entries.pop(reg, None)
        else:
            self.entries[reg] = value

    def stale(self, reg: str) -> bool:
        return reg in self.entries

    def materialize(self, reg: str, scc_free: bool, why: str) -> None:
        """Make ``reg`` hold its true value."""
        val = self.entries.get(reg)
        if val is None:
            return
        if val.base == reg:
            # reg += c: what is based on reg stays true when rebased by -c.
            self._write(reg, val, scc_free, why)
            del self.entries[reg]
            for other, v in list(self.entries.items()):
                if v.base == reg:
                    self.entries[other] = v.plus(-val.constant)
            return
        self.clobber(reg, scc_free, why)
        self._write(reg, val, scc_free, why)
        del self.entries[reg]

    def clobber(self, reg: str, scc_free: bool, why: str, _depth: int = 0) -> None:
        """``reg`` is about to be written: materialize every other value based on it."""
        if _depth > 64:
            raise FixRefused(f"{why}: the deferred address values depend on each other in a cycle")
        for other, v in list(self.entries.items()):
            if other != reg and v.base == reg and other in self.entries:
                self.clobber(other, scc_free, why, _depth + 1)
                self._write(other, v, scc_free, why)
                del self.entries[other]

    def _write(self, reg: str, val: Value, scc_free: bool, why: str) -> None:
        c = literal(val.constant)
        zero = val.constant == 0
        if is_vgpr(reg):
            if val.base is None:
                text = f"v_mov_b32 {reg}, {c}"
            elif zero:
                text = f"v_mov_b32 {reg}, {val.base}"
            else:
                text = f"v_add_nc_u32 {reg}, {c}, {val.base}"
        elif is_sgpr(reg):
            if val.base is None:
                text = f"s_mov_b32 {reg}, {c}"
            elif zero:
                text = f"s_mov_b32 {reg}, {val.base}"
            else:
                if not scc_free:
                    raise FixRefused(f"{why}: {reg} must be brought up to date with an SALU add here, which would "
                                     "overwrite an SCC that is still read")
                text = f"s_add_i32 {reg}, {val.base}, {c}"
        else:
            raise FixRefused(f"{why}: cannot write {reg} with a move or an add")
        self.materialized += 1
        self._emit(self._indent + text, reg)
