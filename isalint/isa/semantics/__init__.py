"""What each ALU opcode computes, written once, for every way isalint computes.

:mod:`.salu` and :mod:`.valu` define each opcode's meaning in the RDNA3 ISA guide's terms, as a
function of an :class:`~.algebra.Algebra` and the opcode's inputs; :data:`OPS` holds them by opcode
name. The algebras are the emulator's numpy arrays (:mod:`isalint.validate.emu.algebra`), exact
integers that may be unknown (:mod:`.exact`, the estimate's scalar walk), per-lane values with
uniform symbols (:mod:`isalint.model.lanes.values`) and polynomials (:mod:`isalint.model.affine`).

    >>> b = binding("s_lshl2_add_u32", 3)   # which operand is S0, S1, D0; SCC is state
    >>> d0, scc = b.op.fn(ExactAlgebra(), 5, 7)
    >>> d0, scc
    (27, 0)

The lane count is the algebra's: a definition reads one lane's bit of VCC or EXEC (``bit``) and the
binding packs the lanes into a 32- or 64-bit mask, so wave64 needs no definition of its own
(``s_*_saveexec_b64`` and the ``_b64`` logic are the wave64 lane-mask opcodes).
"""
from __future__ import annotations

from .. import lookup as _isa_lookup
from ..mnemonics import base_mnemonic
from . import salu as _salu  # noqa: F401  (registers the scalar definitions)
from . import valu as _valu  # noqa: F401  (registers the vector definitions)
from .algebra import Algebra
from .exact import ExactAlgebra
from .table import OPS, Binding, BindingError, NoDefinition, Op, Slot, bind

__all__ = ["Algebra", "Binding", "BindingError", "ExactAlgebra", "NoDefinition", "OPS", "Op", "Slot", "binding",
           "definition"]

_BINDINGS: dict[tuple[str, int], Binding | BindingError] = {}


def definition(mnemonic: str) -> Op | None:
    """The meaning of the opcode ``mnemonic`` spells (any encoding suffix, a VOPD half or an alias
    LLVM accepts), or None when isalint has none."""
    info = _isa_lookup(mnemonic)
    name = info.mnemonic if info is not None else mnemonic
    return OPS.get(base_mnemonic(name))


def binding(mnemonic: str, count: int) -> Binding:
    """The definition of ``mnemonic`` bound to a line of ``count`` operands. Raises
    :class:`BindingError` (no definition, or operands that do not fit it)."""
    key = (mnemonic, count)
    got = _BINDINGS.get(key)
    if got is None:
        try:
            got = _bind(mnemonic, count)
        except BindingError as exc:
            got = exc
        _BINDINGS[key] = got
    if isinstance(got, BindingError):
        raise got
    return got


def _bind(mnemonic: str, count: int) -> Binding:
    info = _isa_lookup(mnemonic)
    if info is None:
        raise NoDefinition(f"opcode '{mnemonic}' is not a gfx11 opcode")
    op = OPS.get(base_mnemonic(info.mnemonic))
    if op is None:
        raise NoDefinition(f"isalint has no semantics for '{mnemonic}'")
    specs = info.operands_for(count)
    if specs is None:
        raise BindingError(f"{mnemonic} with {count} operands")
    return bind(op, [s.role for s in specs])
