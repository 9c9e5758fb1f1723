"""Packed and mixed-precision fp16 VALU ops: v_pk_fma_f16, v_pk_add_f16, v_pk_mul_f16,
v_fma_mix_f32, v_fma_mixlo_f16, v_fma_mixhi_f16, v_dot2_f32_f16 and v_dot2acc_f32_f16.

Semantics are the ISA guide's pseudocode (RDNA3 ISA guide, chapter 16, VOP3P opcodes):

* ``v_pk_*_f16``: each 16-bit half computed on its own; source half selected by ``op_sel`` (low
  result) and ``op_sel_hi`` (high result, default 1 = the high half), negated by ``neg_lo`` /
  ``neg_hi``. ``fma`` rounds once to fp16.
* ``v_fma_mix*``: a source is fp32 when its ``op_sel_hi`` bit is 0, else the fp16 half picked by its
  ``op_sel`` bit; the fma is fp32 (rounded once), and mixlo/mixhi convert that fp32 to fp16 and write
  one half of the destination, keeping the other.
* ``v_dot2_f32_f16`` / ``v_dot2acc_f32_f16``: ``tmp = S2; tmp += a0*b0; tmp += a1*b1`` in fp32;
  the fp16 products are exact in fp32, so each ``+=`` rounds once.

Denormals are kept (``.amdhsa_float_denorm_mode_16_64`` and ``_32`` 3, the defaults); other modes,
constants as packed sources, clamp and DPP on these ops are not emulated (exit 2). The fp16
results are rounded once: sums and products of fp16 values are exact in fp64, and the fma's
remainder is recovered exactly (TwoSum) to break the ties of the fp64 sum.
"""
from __future__ import annotations

import numpy as np

from ...records import replace
from .errors import Unimplemented
from .fp import fma_f32
from .machine import F32, F64, U32
from .operands import vector_dest, vector_source

F16 = np.float16
U16 = np.uint16
PK = {"v_pk_fma_f16": 3, "v_pk_add_f16": 2, "v_pk_mul_f16": 2}
MIX = {"v_fma_mix_f32", "v_fma_mixlo_f16", "v_fma_mixhi_f16"}
DOT2 = {"v_dot2_f32_f16", "v_dot2acc_f32_f16"}
NAMES = set(PK) | MIX | DOT2
_MAX16 = 65504.0


def _bits(stmt, name: str, n: int, default: int) -> list[int]:
    m = stmt.modifier(name)
    if m is None or m.value is None:
        return [default] * n
    try:
        vals = [int(x, 0) for x in m.value.strip("[]").split(",")]
    except ValueError:
        raise Unimplemented(f"modifier '{m.text}' on {stmt.mnemonic}") from None
    if len(vals) < n or any(v not in (0, 1) for v in vals):
        raise Unimplemented(f"modifier '{m.text}' on {stmt.mnemonic}")
    return vals[:n]


def _half(word: np.ndarray, hi: int) -> np.ndarray:
    """fp16 half of 32-bit lanes as float64 (exact)."""
    h = (word >> U32(16)) if hi else (word & U32(0xFFFF))
    return h.astype(U16).view(F16).astype(F64)


def round_f16(s: np.ndarray, err: np.ndarray | None = None) -> np.ndarray:
    """fp16 nearest-even of ``s + err``, where ``s`` is float64 and ``err`` the exact remainder
    (|err| below half an fp64 ulp of s): ties of s broken by err's sign."""
    s = np.asarray(s, dtype=F64)
    with np.errstate(over="ignore"):
        h = s.astype(F16)
    if err is None:
        return h
    err = np.broadcast_to(np.asarray(err, dtype=F64), s.shape)
    hd = h.astype(F64)
    toward = np.where(s > hd, F16(np.inf), F16(-np.inf))
    with np.errstate(invalid="ignore", over="ignore"):
        n = np.nextafter(h, toward)
        nd = n.astype(F64)
        mid = (s != hd) & np.isfinite(hd) & np.isfinite(nd) & ((hd + nd) * 0.5 == s)
    go = mid & (err != 0) & (np.sign(err) == np.sign(nd - hd))
    out = np.where(go, n, h)
    # s exactly at the overflow threshold (65520) ties to infinity; just below it stays finite
    back = np.isinf(out) & (np.abs(s) == 65520.0) & (err != 0) & (np.sign(err) != np.sign(s))
    return np.where(back, np.copysign(F16(_MAX16), s).astype(F16), out)


def fma_f16(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Correctly rounded fp16 fma of fp16 values given as float64: the product is exact in fp64
    and TwoSum gives the exact remainder of the sum."""
    p = a * b
    s = p + c
    bb = s - p
    with np.errstate(invalid="ignore"):
        err = (p - (s - bb)) + (c - bb)
    err = np.where(np.isfinite(s), err, 0.0)
    return round_f16(s, err)


def _pack(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return lo.astype(F16).view(U16).astype(U32) | (hi.astype(F16).view(U16).astype(U32) << U32(16))


def _raw_reader(op, stmt, ctx):
    """The 32 bits of a register source; the caller applies neg/abs to the fp16 half it takes."""
    if op.kind not in ("vgpr", "sgpr", "special", "ttmp"):
        raise Unimplemented(f"constant '{op.text}' as a packed fp16 source of {stmt.mnemonic}")
    return vector_source(replace(op, neg=False, abs=False), "u32", ctx.nvgpr)


def packed_parts(stmt, base: str, ctx, dpp: bool):
    """(compute, commit) of one of :data:`NAMES`."""
    if dpp:
        raise Unimplemented(f"DPP on {stmt.mnemonic}")
    if ctx.f16_denorm_mode != 3 or ctx.flush_f32:
        raise Unimplemented(f"{stmt.mnemonic} with denormal flushing (.amdhsa_float_denorm_mode_*)")
    for m in stmt.modifiers:
        if m.name not in ("op_sel", "op_sel_hi", "neg_lo", "neg_hi"):
            raise Unimplemented(f"modifier '{m.text}' on {stmt.mnemonic}")
    ops = list(stmt.operands)
    if base in PK:
        return _pk(stmt, base, ops, ctx)
    if base in MIX:
        return _mix(stmt, base, ops, ctx)
    return _dot2(stmt, base, ops, ctx)


def _pk(stmt, base, ops, ctx):
    n = PK[base]
    if len(ops) != 1 + n or any(op.neg or op.abs for op in ops[1:]):
        raise Unimplemented(f"{stmt.mnemonic} with these operands")
    readers = [_raw_reader(op, stmt, ctx) for op in ops[1:]]
    sel, sel_hi = _bits(stmt, "op_sel", n, 0), _bits(stmt, "op_sel_hi", n, 1)
    neg_lo, neg_hi = _bits(stmt, "neg_lo", n, 0), _bits(stmt, "neg_hi", n, 0)
    write = vector_dest(ops[0], "u32", ctx.nvgpr)

    def halves(words, which, negs):
        return [(-_half(w, s) if ng else _half(w, s)) for w, s, ng in zip(words, which, negs)]

    def compute(g):
        words = [np.asarray(r(g), dtype=U32) for r in readers]
        lo, hi = halves(words, sel, neg_lo), halves(words, sel_hi, neg_hi)
        if base == "v_pk_fma_f16":
            rl, rh = fma_f16(*lo), fma_f16(*hi)
        elif base == "v_pk_add_f16":
            rl, rh = round_f16(lo[0] + lo[1]), round_f16(hi[0] + hi[1])  # exact in fp64
        else:
            rl, rh = round_f16(lo[0] * lo[1]), round_f16(hi[0] * hi[1])
        return _pack(*np.broadcast_arrays(rl, rh))
    return compute, (lambda g, p: write(g, p))


def _mix(stmt, base, ops, ctx):
    if len(ops) != 4:
        raise Unimplemented(f"{stmt.mnemonic} with {len(ops)} operands")
    sel, sel_hi = _bits(stmt, "op_sel", 3, 0), _bits(stmt, "op_sel_hi", 3, 0)
    if stmt.modifier("neg_lo") or stmt.modifier("neg_hi"):
        raise Unimplemented(f"neg_lo/neg_hi on {stmt.mnemonic}")
    readers = []
    for op, s, h in zip(ops[1:], sel, sel_hi):
        if h:
            raw = _raw_reader(op, stmt, ctx)

            def read(g, raw=raw, s=s, op=op):
                v = _half(np.asarray(raw(g), dtype=U32), s).astype(F32)
                v = np.abs(v) if op.abs else v
                return -v if op.neg else v
        else:
            read = vector_source(op, "f32", ctx.nvgpr)  # neg/abs applied by the reader
        readers.append(read)
    write = vector_dest(ops[0], "u32", ctx.nvgpr)
    old = vector_source(ops[0], "u32", ctx.nvgpr) if base != "v_fma_mix_f32" else None

    def compute(g):
        a, b, c = (np.asarray(r(g), dtype=F32) for r in readers)
        r = fma_f32(a, b, c)
        if base == "v_fma_mix_f32":
            return np.asarray(r, dtype=F32).view(U32)
        h = round_f16(np.asarray(r, dtype=F32).astype(F64)).view(U16).astype(U32)
        cur = np.asarray(old(g), dtype=U32)
        if base == "v_fma_mixlo_f16":
            return (cur & U32(0xFFFF_0000)) | h
        return (cur & U32(0xFFFF)) | (h << U32(16))
    return compute, (lambda g, p: write(g, p))


def _dot2(stmt, base, ops, ctx):
    acc = base == "v_dot2acc_f32_f16"
    if len(ops) != (3 if acc else 4) or any(op.neg or op.abs for op in ops[1:3]):
        raise Unimplemented(f"{stmt.mnemonic} with these operands")
    if stmt.modifiers:
        if any(m.name != "op_sel_hi" for m in stmt.modifiers) or _bits(stmt, "op_sel_hi", 3, 1)[:2] != [1, 1]:
            raise Unimplemented(f"{stmt.mnemonic} with modifiers")
    ra, rb = (_raw_reader(op, stmt, ctx) for op in ops[1:3])
    rc = vector_source(ops[0] if acc else ops[3], "f32", ctx.nvgpr)
    write = vector_dest(ops[0], "u32", ctx.nvgpr)

    def compute(g):
        a, b = np.asarray(ra(g), dtype=U32), np.asarray(rb(g), dtype=U32)
        t = np.asarray(rc(g), dtype=F32)
        for hi in (0, 1):
            p = _half(a, hi) * _half(b, hi)  # exact: 22 significant bits
            # fp32 + fp32 in fp64 then to fp32 rounds as fp32 would (53 >= 2 * 24 + 2)
            t = (t.astype(F64) + p).astype(F32)
        return np.asarray(t, dtype=F32).view(U32)
    return compute, (lambda g, p: write(g, p))
