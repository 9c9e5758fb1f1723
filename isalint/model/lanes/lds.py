"""LDS accesses: the shape of a DS load or store and the per-lane byte addresses it touches.

:func:`lds_access` evaluates the address register of a ``ds_load*``/``ds_store*`` with the lane
evaluator and adds the instruction's offsets; LDS001 hands the result to the bank arithmetic of
:mod:`isalint.hw.lds_banks`, with the banks :func:`lds_banks` says the kernel's waves see.
"""
from __future__ import annotations

import re

from ...hw.lds_banks import bank_count
from ...isa.mnemonics import base_mnemonic
from ...records import Record
from .values import MASK, Value, unknown

_DS = re.compile(r"^ds_(load|store|read|write)(_2addr)?(_stride64)?_([bui])(8|16|32|64|96|128)(_d16(_hi)?)?$")


class LdsAccess(Record):
    """The per-lane byte addresses of one DS instruction.

    ``addresses`` holds one tuple of per-lane byte addresses per address the instruction issues (two for
    the ``2addr`` forms), each already including its offset; ``width`` is the
    bytes per lane per address.
    """

    index: int
    mnemonic: str
    kind: str  # load | store
    width: int
    addresses: list[tuple[int, ...]]
    terms: tuple[tuple[str, int], ...]
    reg: str
    offsets: tuple[int, ...]

    _fields = ("index", "mnemonic", "kind", "width", "addresses", "terms", "reg", "offsets")

    def __init__(self, index: int, mnemonic: str, kind: str, width: int, addresses: list[tuple[int, ...]],
                 terms: tuple[tuple[str, int], ...], reg: str, offsets: tuple[int, ...]):
        self.index = index
        self.mnemonic = mnemonic
        self.kind = kind
        self.width = width
        self.addresses = addresses
        self.terms = terms
        self.reg = reg
        self.offsets = offsets


def ds_shape(mnemonic: str) -> tuple[str, int, int, bool] | None:
    """(load|store, bytes per address, number of addresses, stride64) of a DS
    load/store mnemonic, or None for other DS instructions."""
    try:
        return _SHAPES[mnemonic]
    except KeyError:
        pass
    m = _DS.match(base_mnemonic(mnemonic))
    if not m:
        shape = None
    else:
        kind = "load" if m.group(1) in ("load", "read") else "store"
        shape = kind, int(m.group(5)) // 8, 2 if m.group(2) else 1, bool(m.group(3))
    if len(_SHAPES) < 1 << 12:  # mnemonics: a bounded set, unless the input invents them
        _SHAPES[mnemonic] = shape
    return shape


_SHAPES: dict[str, tuple[str, int, int, bool] | None] = {}  # mnemonic -> ds_shape(mnemonic)


def lds_access(evaluator, ins) -> LdsAccess | Value | None:
    """The per-lane addresses of a ds_load*/ds_store*, or the unknown
    :class:`Value` explaining why they cannot be evaluated, or None when
    ``ins`` is not such an instruction."""
    form = _form(ins)
    if form is None:
        return None
    kind, width, reg, offs = form
    v = evaluator.value(reg, ins.index)
    if not v.known:
        return v
    if evaluator.varying(v):
        return unknown(f"{reg} changes per lane from one loop iteration to the next")
    addrs = [_offset_lanes(v.lanes, o) for o in offs]
    return LdsAccess(ins.index, ins.opcode, kind, width, addrs, v.terms, reg, offs)


def _form(ins) -> tuple[str, int, str, tuple[int, ...]] | None:
    """(load|store, bytes per address, address register, byte offset of each address) of a DS
    load/store, or None. The decoding of a line's text is shared by every instruction of that text
    (in one kernel and the next): worked out once per decoding."""
    stmts, slots = ins.stmts, ins.slots
    key = (id(stmts), id(slots), ins.opaque, ins.opcode)
    known = _FORMS.get(key)
    if known is not None and known[0] is stmts and known[1] is slots:
        return known[2]
    form = _make_form(ins)
    if len(_FORMS) >= 1 << 14:
        _FORMS.clear()
    _FORMS[key] = (stmts, slots, form)  # the entry keeps both, and so their ids, alive
    return form


_FORMS: dict[tuple, tuple] = {}


def _make_form(ins) -> tuple[str, int, str, tuple[int, ...]] | None:
    if ins.opaque or ins.is_vopd:
        return None
    shape = ds_shape(ins.opcode)
    if shape is None:
        return None
    kind, width, naddr, stride64 = shape
    addr_slot = next((s for s in ins.slots[0] if s.name == "addr"), None)
    if addr_slot is None or not addr_slot.regs:
        return None
    reg = addr_slot.regs[0]
    stmt = ins.stmts[0]
    if naddr == 1:
        mod = stmt.modifier("offset")
        offs = ((mod.int_value() or 0) if mod else 0,)
    else:
        unit = width * (64 if stride64 else 1)
        offs = tuple(((stmt.modifier(n).int_value() or 0) if stmt.modifier(n) else 0) * unit
                     for n in ("offset0", "offset1"))
    return kind, width, reg, offs


def _offset_lanes(lanes: tuple[int, ...], offset: int) -> tuple[int, ...]:
    """``lanes`` plus ``offset`` (32-bit), worked out once per lanes and offset: the kernels of a
    library (and the loads of one kernel) repeat the same addresses with the same offsets."""
    key = (lanes, offset)
    got = _OFFSET_LANES.get(key)
    if got is None:
        got = tuple([(x + offset) & MASK for x in lanes])
        if len(_OFFSET_LANES) >= 1 << 12:
            _OFFSET_LANES.clear()
        _OFFSET_LANES[key] = got
    return got


_OFFSET_LANES: dict[tuple, tuple[int, ...]] = {}


def lds_banks(kernel) -> int:
    """The LDS banks the kernel's waves see (:func:`isalint.hw.lds_banks.bank_count`); WGP mode when
    the kernel is unknown."""
    return bank_count(True if kernel is None else kernel.wgp_mode)
