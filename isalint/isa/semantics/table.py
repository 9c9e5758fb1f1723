"""The table of opcode meanings and how an instruction's operands meet a definition's names.

A definition is registered with its signature in the RDNA3 ISA guide's words::

    @op("s_lshl2_add_u32", "D0.u32, SCC = S0.u32, S1.u32")
    def _(A, S0, S1): ...

Left of ``=`` what it writes, right what it reads, in the order the function returns and takes
them; each name carries its type (``u32 i32 b32 f32 u64 i64 b64 f64``, ``i16``/``u16`` for a 16-bit
immediate read sign- or zero-extended, ``bit`` for one lane's bit of a lane mask, the guide's
``VCC.u64[laneId]``). ``SCC`` and ``EXEC`` are machine state; ``D0`` among the inputs is the
destination's old value (``D0.f32 = fma(S0.f32, S1.f32, D0.f32)``); ``VCC`` is the implicit lane
mask unless the instruction writes it as an operand (the VOP3 ``sdst``/``src2`` of a carry or a
compare, or the ``vcc_lo`` LLVM spells in e32 forms).

:func:`binding` matches a definition to a line's operands, once per spelling.
"""
from __future__ import annotations

from ...records import FrozenRecord

STATE = frozenset({"SCC", "EXEC", "M0"})  # never an operand
TYPES = frozenset({"u32", "i32", "b32", "f32", "u64", "i64", "b64", "f64", "u16", "i16", "bit"})
WIDE = frozenset({"u64", "i64", "b64", "f64"})


class Op(FrozenRecord):
    """What one opcode computes: ``fn(algebra, *inputs) -> outputs`` (a tuple, in ``outs`` order)."""

    name: str
    outs: tuple[tuple[str, str], ...]  # (name, type)
    ins: tuple[tuple[str, str], ...]
    fn: object
    exec_masked: bool  # a vector result is written only in the active lanes

    _fields = ("name", "outs", "ins", "fn", "exec_masked")

    def __init__(self, name, outs, ins, fn, exec_masked=True):
        self.__dict__.update(name=name, outs=outs, ins=ins, fn=fn, exec_masked=exec_masked)

    @property
    def types(self) -> set[str]:
        return {t for _, t in self.outs + self.ins}


OPS: dict[str, Op] = {}


def _items(text: str) -> tuple[tuple[str, str], ...]:
    out = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        name, _, typ = item.partition(".")
        typ = typ or ("bit" if name in ("SCC",) else "")
        if name in ("SCC",) and typ != "bit":
            raise ValueError(f"SCC is a condition, not {typ}")
        if typ not in TYPES:
            raise ValueError(f"unknown type in {item!r}")
        out.append((name, typ))
    return tuple(out)


def op(names, signature: str, exec_masked: bool = True):
    """Register the decorated function as the meaning of ``names`` (one mnemonic or several)."""
    outs, _, ins = signature.partition("=")

    def register(fn):
        for name in ([names] if isinstance(names, str) else names):
            if name in OPS:
                raise ValueError(f"{name} is defined twice")
            OPS[name] = Op(name, _items(outs), _items(ins), fn, exec_masked)
        return fn
    return register


def define(name: str, signature: str, fn, exec_masked: bool = True) -> None:
    """:func:`op` for a generated definition (families such as the compares)."""
    op(name, signature, exec_masked)(fn)


class Slot(FrozenRecord):
    """Where one input comes from or one output goes: an operand of the line (``operand``, its
    position), the destination read back (``dest``, the position of the written operand) or machine
    state (``state``, its name)."""

    kind: str  # operand | dest | state
    ref: object  # operand position (int) or state name (str)
    name: str  # the definition's name for it (S0, D0, VCC, SCC ...)
    type: str

    _fields = ("kind", "ref", "name", "type")

    def __init__(self, kind, ref, name, type):
        self.__dict__.update(kind=kind, ref=ref, name=name, type=type)


class Binding(FrozenRecord):
    op: Op
    ins: tuple[Slot, ...]
    outs: tuple[Slot, ...]

    _fields = ("op", "ins", "outs")

    def __init__(self, op, ins, outs):
        self.__dict__.update(op=op, ins=ins, outs=outs)


class BindingError(ValueError):
    """The line's operands do not fit the opcode's signature (one line, for messages)."""


class NoDefinition(BindingError):
    """isalint has no meaning for the opcode."""


def bind(op: Op, roles: list[str]) -> Binding:
    """Match ``op``'s names to a line's operands, whose roles (``def``, ``use``, ``defuse``) are
    ``roles`` in written order. Raises :class:`BindingError`."""
    defs = [i for i, r in enumerate(roles) if r in ("def", "defuse")]
    uses = [i for i, r in enumerate(roles) if r == "use"]
    first_def = defs[0] if defs else None
    outs = []
    for name, typ in op.outs:
        if name in STATE:
            outs.append(Slot("state", name, name, typ))
        elif defs:
            outs.append(Slot("operand", defs.pop(0), name, typ))
        elif name == "VCC":
            outs.append(Slot("state", "VCC", name, typ))
        else:
            raise BindingError(f"{op.name} writes {name} but the line has no operand for it")
    ins = []
    for name, typ in op.ins:
        if name == "D0":
            if first_def is None:
                raise BindingError(f"{op.name} reads its destination but the line has none")
            ins.append(Slot("dest", first_def, name, typ))
        elif name in STATE:
            ins.append(Slot("state", name, name, typ))
        elif uses:
            ins.append(Slot("operand", uses.pop(0), name, typ))
        elif name == "VCC":
            ins.append(Slot("state", "VCC", name, typ))
        else:
            raise BindingError(f"{op.name} reads {name} but the line has no operand for it")
    if defs or uses:
        raise BindingError(f"{op.name} takes {len(op.ins)} sources and {len(op.outs)} results, "
                           f"not {len(roles)} operands")
    return Binding(op, tuple(ins), tuple(outs))
