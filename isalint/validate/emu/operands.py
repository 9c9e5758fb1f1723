"""Operand access compiled once per instruction: readers and writers as small closures.

A reader is ``g -> numpy array`` of the operand's type; vector operands have shape ``[W, 32]``,
scalar ones ``[W, 1]`` (VALU context) or ``[W]`` (SALU context), constants are 0-d arrays.
Registers are stored as raw ``uint32`` bits; typed views (``float32``, ``int32``) cost nothing.

Constants follow the RDNA3 ISA guide, 3.x "Inline constants and literals": integer inline
constants (-16..64) are bit patterns, sign-extended to 64 bits; float inline constants and
float literals take the operand's float type; a 32-bit literal feeding a 64-bit operand is
sign-extended for signed integer operands, zero-extended for unsigned ones and supplies the
high half of an fp64 operand.
"""
from __future__ import annotations

import numpy as np

from ...isa.constants import ConstantError, constant_bits
from .errors import EmulationError, Unimplemented
from .machine import EXEC_HI, EXEC_LO, F32, F64, I32, I64, M0, NULL, TTMP0, U32, U64, VCC_HI, VCC_LO

WIDE = {"u64", "i64", "f64", "b64"}
VIEW = {"u32": U32, "b32": U32, "i32": I32, "f32": F32, "u64": U64, "b64": U64, "i64": I64, "f64": F64}
FLOATS = {"f32", "f64"}

SPECIAL_INDEX = {
    "vcc_lo": VCC_LO, "vcc_hi": VCC_HI, "vcc": VCC_LO, "exec_lo": EXEC_LO, "exec_hi": EXEC_HI,
    "exec": EXEC_LO, "m0": M0, "null": NULL,
}


class OperandError(EmulationError):
    pass


def width(typ: str) -> int:
    return 2 if typ in WIDE else 1


def sgpr_index(op) -> int:
    """Hardware SGPR number of a scalar register operand (s*, ttmp*, vcc_lo, exec_lo, m0, null)."""
    if op.kind == "sgpr":
        return op.first
    if op.kind == "ttmp":
        return TTMP0 + op.first
    if op.kind == "special" and op.file in SPECIAL_INDEX:
        return SPECIAL_INDEX[op.file]
    raise Unimplemented(f"operand '{op.text}' is not a scalar register the emulator models")


def const_bits(op, typ: str) -> int:
    """Bit pattern (32 or 64 bits) of a constant operand for an operand of type ``typ``
    (:func:`isalint.isa.constants.constant_bits`)."""
    try:
        return constant_bits(op.kind, op.value, typ, op.text)
    except ConstantError as exc:
        raise OperandError(str(exc)) from None


def const_array(op, typ: str) -> np.ndarray:
    bits = const_bits(op, typ)
    if typ in WIDE:
        return np.array(bits, dtype=U64).view(VIEW[typ])
    return np.array(bits, dtype=U32).view(VIEW.get(typ, U32))


def _float_mods(read, op, typ):
    if not (op.neg or op.abs):
        return read
    if typ not in FLOATS:
        if op.neg and typ in ("i32", "i64") and not op.abs:
            raise Unimplemented(f"integer negate modifier on '{op.text}'")
        raise Unimplemented(f"input modifier on non-float operand '{op.text}'")
    if op.abs and op.neg:
        return lambda g: -np.abs(read(g))
    if op.abs:
        return lambda g: np.abs(read(g))
    return lambda g: -read(g)


def vector_source(op, typ: str, nvgpr: int):
    """Reader for a VALU source operand (VGPR, SGPR, special, constant), shape-broadcastable to [W,32]."""
    view = VIEW.get(typ)
    if view is None:
        raise Unimplemented(f"operand type {typ}")
    wide = typ in WIDE
    if op.kind in ("int", "float"):
        c = const_array(op, typ)
        return _float_mods(lambda g: c, op, typ)
    if op.kind == "vgpr":
        n = op.first
        if n + width(typ) > nvgpr:
            raise OperandError(f"v{n + width(typ) - 1} is beyond the kernel's {nvgpr} VGPRs "
                               "(.amdhsa_next_free_vgpr)")
        if not wide:
            if view is U32:
                read = lambda g: g.V[n]  # noqa: E731
            else:
                read = lambda g: g.V[n].view(view)  # noqa: E731
        else:
            read = lambda g: (g.V[n].astype(U64) | (g.V[n + 1].astype(U64) << U64(32))).view(view)  # noqa: E731
        return _float_mods(read, op, typ)
    if op.kind == "special" and op.file in ("scc", "src_scc"):
        read = lambda g: g.scc.astype(U32)[:, None]  # noqa: E731
        return read
    if op.kind == "special" and op.file in ("vccz", "src_vccz"):
        return lambda g: (g.S[VCC_LO] == 0).astype(U32)[:, None]
    if op.kind == "special" and op.file in ("execz", "src_execz"):
        return lambda g: (g.S[EXEC_LO] == 0).astype(U32)[:, None]
    if op.kind in ("sgpr", "ttmp", "special"):
        idx = sgpr_index(op)
        if idx == NULL:
            zero = np.zeros((), dtype=view)
            return lambda g: zero
        if not wide:
            if view is U32:
                read = lambda g: g.S[idx][:, None]  # noqa: E731
            else:
                read = lambda g: g.S[idx].view(view)[:, None]  # noqa: E731
        else:
            def read(g):
                return (g.S[idx].astype(U64) | (g.S[idx + 1].astype(U64) << U64(32))).view(view)[:, None]
        return _float_mods(read, op, typ)
    raise Unimplemented(f"source operand '{op.text}'")


def scalar_source(op, typ: str):
    """Reader for a SALU source: shape [W] (or a 0-d constant)."""
    view = VIEW.get(typ)
    if view is None:
        raise Unimplemented(f"operand type {typ}")
    wide = typ in WIDE
    if op.kind in ("int", "float"):
        c = const_array(op, typ)
        return lambda g: c
    if op.kind == "special" and op.file in ("scc", "src_scc"):
        return lambda g: g.scc.astype(view)
    if op.kind == "special" and op.file in ("vccz", "src_vccz"):
        return lambda g: (g.S[VCC_LO] == 0).astype(view)
    if op.kind == "special" and op.file in ("execz", "src_execz"):
        return lambda g: (g.S[EXEC_LO] == 0).astype(view)
    if op.kind in ("sgpr", "ttmp", "special"):
        idx = sgpr_index(op)
        if idx == NULL:
            zero = np.zeros((), dtype=view)
            return lambda g: zero
        if not wide:
            return (lambda g: g.S[idx]) if view is U32 else (lambda g: g.S[idx].view(view))
        return lambda g: (g.S[idx].astype(U64) | (g.S[idx + 1].astype(U64) << U64(32))).view(view)
    if op.kind == "vgpr":
        raise OperandError(f"VGPR '{op.text}' where a scalar operand is required")
    raise Unimplemented(f"scalar operand '{op.text}'")


def _to_u32(value, typ):
    a = np.asarray(value)
    want = VIEW[typ]
    if a.dtype != want:
        a = a.astype(want)
    return a.view(U32) if want is not U32 else a


def _split64(value, typ):
    a = np.asarray(value)
    want = VIEW[typ]
    if a.dtype != want:
        a = a.astype(want)
    u = a.view(U64)
    return (u & U64(0xFFFF_FFFF)).astype(U32), (u >> U64(32)).astype(U32)


def vector_dest(op, typ: str, nvgpr: int):
    """Writer ``(g, value, mask_or_None)`` for a VGPR destination; lanes outside exec keep their value."""
    if op.kind != "vgpr":
        raise OperandError(f"'{op.text}' must be a VGPR")
    n = op.first
    if n + width(typ) > nvgpr:
        raise OperandError(f"v{n + width(typ) - 1} is beyond the kernel's {nvgpr} VGPRs (.amdhsa_next_free_vgpr)")
    if typ not in WIDE:
        def write(g, value, mask=None):
            v = _to_u32(value, typ)
            if mask is None:
                if g.full:
                    g.V[n] = v
                    return
                mask = g.mask
            np.copyto(g.V[n], v, where=mask)
        return write

    def write64(g, value, mask=None):
        lo, hi = _split64(value, typ)
        if mask is None:
            if g.full:
                g.V[n] = lo
                g.V[n + 1] = hi
                return
            mask = g.mask
        np.copyto(g.V[n], lo, where=mask)
        np.copyto(g.V[n + 1], hi, where=mask)
    return write64


def scalar_dest(op, typ: str):
    """Writer ``(g, value[W])`` for an SGPR destination. Writing EXEC refreshes the lane mask."""
    if op.kind == "special" and op.file in ("scc", "src_scc"):
        raise Unimplemented("SCC as an explicit destination")
    idx = sgpr_index(op)
    wide = typ in WIDE
    touches_exec = idx in (EXEC_LO, EXEC_HI) or (wide and idx + 1 in (EXEC_LO, EXEC_HI))
    if idx == NULL:
        return lambda g, value: None
    if not wide:
        if touches_exec:
            def wexec(g, value):
                g.S[idx] = _to_u32(value, typ)
                g.update_exec()
            return wexec

        def w(g, value):
            g.S[idx] = _to_u32(value, typ)
        return w

    def w64(g, value):
        lo, hi = _split64(value, typ)
        g.S[idx] = lo
        g.S[idx + 1] = hi
        if touches_exec:
            g.update_exec()
    return w64
