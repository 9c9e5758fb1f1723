"""Wave matrix multiply-accumulate (WMMA), wave32: ``D = A x B + C`` on 16 x 16 matrices.

Opcodes: ``v_wmma_f32_16x16x16_f16``, ``v_wmma_f32_16x16x16_bf16``, ``v_wmma_f16_16x16x16_f16``,
``v_wmma_bf16_16x16x16_bf16``, ``v_wmma_i32_16x16x16_iu8``, ``v_wmma_i32_16x16x16_iu4``.

Register layout (RDNA3 ISA guide, 7.9 "Wave Matrix Multiply Accumulate"; the same layout clang-19
produces for ``__builtin_amdgcn_wmma_*_w32``):

* A: lane ``l`` (0-15) holds row ``l`` of A, k = 0..15 in order from the low bits of its first VGPR
  (two fp16/bf16 values per VGPR, low half first: 8 VGPRs; four 8-bit values per VGPR, lowest byte
  first: 4 VGPRs; eight 4-bit values per VGPR, lowest nibble first: 2 VGPRs).
* B: lane ``l`` (0-15) holds column ``l`` of B in the same way.
* Lanes 16-31 of A and B must repeat lanes 0-15; the emulator reads lanes 0-15 only.
* C and D, 8 VGPRs: VGPR ``r`` of lane ``l`` holds element (row ``2*r + l // 16``, column ``l % 16``).
  For fp16/bf16 results the element is one 16-bit half of that VGPR: the low half, or the high half
  with ``op_sel:[0,0,1]`` (the form LLVM emits to pack two accumulators into one set of VGPRs); the
  other half of D keeps its value.

Modifiers: on fp16/bf16 sources ``neg_lo[i]`` / ``neg_hi[i]`` (i = 0 for A, 1 for B) negate the low /
high 16-bit halves of that source's VGPRs (read as packed VOP3P math reads them; not checked on
hardware). On the integer forms ``neg_lo[0]`` / ``neg_lo[1]`` make A / B signed (unsigned by default)
and ``clamp`` saturates the i32 result (else it wraps). Negating C, other ``op_sel`` bits, clamp on the float forms, SGPR or constant A/B, a constant C
on the 16-bit forms, denormal flushing and EXEC other than all 32 lanes are refused (exit 2) rather
than guessed.

Rounding (the hardware's internal order and precision are not documented, so this is a choice):
each product of two fp16/bf16 values is exact, and they are added onto C one at a time in k order,
``t = C; t = fma(a[k], b[k], t)`` for k = 0..15, each step rounded to fp32 (round to nearest even,
denormals kept), i.e. exactly what a chain of ``v_fma_f32`` / ``v_dot2_f32_f16`` steps computes. The
16-bit result forms convert C to fp32 (exactly), accumulate the same way and round the fp32 result
once to fp16 / bf16 (nearest even). Integer forms are exact (64-bit) before the wrap or clamp.
Two kernels compared by ``isalint validate`` run under these same semantics, so their comparison is
exact; a hardware result (or a numpy reference summed in another order) may differ in the last bits.
"""
from __future__ import annotations

import numpy as np

from .errors import EmulationError, Unimplemented
from .fp import fma_f32
from .machine import F32, I64, U32
from .operands import const_array

F16 = np.float16
U16 = np.uint16
I32 = np.int32

# name -> (input kind, result kind, VGPRs per A/B source)
OPS = {
    "v_wmma_f32_16x16x16_f16": ("f16", "f32", 8),
    "v_wmma_f32_16x16x16_bf16": ("bf16", "f32", 8),
    "v_wmma_f16_16x16x16_f16": ("f16", "f16", 8),
    "v_wmma_bf16_16x16x16_bf16": ("bf16", "bf16", 8),
    "v_wmma_i32_16x16x16_iu8": ("iu8", "i32", 4),
    "v_wmma_i32_16x16x16_iu4": ("iu4", "i32", 2),
}
NAMES = set(OPS)


def _bits(stmt, name: str) -> list[int]:
    m = stmt.modifier(name)
    if m is None or m.value is None:
        return [0, 0, 0]
    try:
        vals = [int(x, 0) for x in m.value.strip("[]").split(",")]
    except ValueError:
        raise Unimplemented(f"modifier '{m.text}' on {stmt.mnemonic}") from None
    if len(vals) != 3 or any(v not in (0, 1) for v in vals):
        raise Unimplemented(f"modifier '{m.text}' on {stmt.mnemonic}")
    return vals


# -- 16-bit conversions ------------------------------------------------------------------------
def half_to_f32(h: np.ndarray, kind: str) -> np.ndarray:
    """16-bit patterns (uint32 holding 0..0xFFFF) as fp32 values (exact)."""
    if kind == "bf16":
        return (h.astype(U32) << U32(16)).view(F32)
    return h.astype(U16).view(F16).astype(F32)


def f32_to_half(x: np.ndarray, kind: str) -> np.ndarray:
    """fp32 values rounded to nearest even as 16-bit patterns in uint32."""
    x = np.asarray(x, dtype=F32)
    if kind == "f16":
        with np.errstate(over="ignore"):
            return x.astype(F16).view(U16).astype(U32)
    b = x.view(U32)
    nan = np.isnan(x)
    rounded = (b + U32(0x7FFF) + ((b >> U32(16)) & U32(1))) >> U32(16)
    quiet = (b >> U32(16)) | U32(0x40)  # keep sign and payload, set the quiet bit
    return np.where(nan, quiet, rounded).astype(U32)


# -- operand layout ----------------------------------------------------------------------------
def _words(g, first: int, count: int) -> np.ndarray:
    """[W, count, 16]: lanes 0-15 of VGPRs first .. first+count-1."""
    return np.stack([g.V[first + j][:, :16] for j in range(count)], axis=1)


def unpack_ab(words: np.ndarray, kind: str) -> np.ndarray:
    """[W, count, 16] words of lanes 0-15 -> [W, 16 (lane), 16 (k)] element values.

    fp16/bf16 as 16-bit patterns (uint32), iu8/iu4 as unsigned integers (int64)."""
    per = {"f16": 2, "bf16": 2, "iu8": 4, "iu4": 8}[kind]
    width = 32 // per
    mask = U32((1 << width) - 1)
    parts = [(words >> U32(width * t)) & mask for t in range(per)]  # each [W, count, 16]
    e = np.stack(parts, axis=-1)  # [W, count (j), 16 (lane), per (t)] -> k = j*per + t
    e = e.transpose(0, 2, 1, 3).reshape(words.shape[0], 16, 16)
    return e if kind in ("f16", "bf16") else e.astype(I64)


def pack_ab(values: np.ndarray, kind: str) -> np.ndarray:
    """Inverse of :func:`unpack_ab` for one wave: [16 (lane), 16 (k)] bit patterns -> [count, 32]
    words, lanes 16-31 repeating lanes 0-15 (for tests and callers building operands)."""
    per = {"f16": 2, "bf16": 2, "iu8": 4, "iu4": 8}[kind]
    width = 32 // per
    v = (np.asarray(values).astype(np.int64) & ((1 << width) - 1)).astype(U32).reshape(16, 16 // per, per)
    w = np.zeros((16 // per, 16), dtype=U32)
    for t in range(per):
        w |= v[:, :, t].T << U32(width * t)
    return np.concatenate([w, w], axis=1)


def cd_from_words(words: np.ndarray) -> np.ndarray:
    """[W, 8, 32] C/D words -> [W, 16, 16] matrix (VGPR r, lane l = row 2r + l//16, column l%16)."""
    return words.reshape(words.shape[0], 8, 2, 16).reshape(words.shape[0], 16, 16)


def cd_to_words(mat: np.ndarray) -> np.ndarray:
    """[W, 16, 16] matrix -> [W, 8, 32] C/D words (inverse of :func:`cd_from_words`)."""
    return np.ascontiguousarray(mat).reshape(mat.shape[0], 8, 32)


# -- compile -----------------------------------------------------------------------------------
def _vgpr_operand(op, count: int, what: str, stmt, nvgpr: int) -> int:
    if op.kind != "vgpr" or op.neg or op.abs:
        raise Unimplemented(f"{what} '{op.text}' of {stmt.mnemonic} must be a plain VGPR range")
    if op.count != count:
        raise Unimplemented(f"{what} '{op.text}' of {stmt.mnemonic} must be {count} VGPRs (wave32)")
    if op.first + count > nvgpr:
        raise EmulationError(f"v{op.first + count - 1} is beyond the kernel's {nvgpr} VGPRs "
                             "(.amdhsa_next_free_vgpr)")
    return op.first


def wmma_parts(stmt, base: str, ctx, dpp: bool):
    """(compute, commit) of one of :data:`NAMES`."""
    kind, res, nab = OPS[base]
    if dpp:
        raise Unimplemented(f"DPP on {stmt.mnemonic}")
    if kind in ("f16", "bf16") and (ctx.flush_f32 or ctx.f16_denorm_mode != 3):
        raise Unimplemented(f"{stmt.mnemonic} with denormal flushing (.amdhsa_float_denorm_mode_*)")
    for m in stmt.modifiers:
        if m.name not in ("op_sel", "neg_lo", "neg_hi", "clamp"):
            raise Unimplemented(f"modifier '{m.text}' on {stmt.mnemonic}")
    ops = list(stmt.operands)
    if len(ops) != 4:
        raise Unimplemented(f"{stmt.mnemonic} with {len(ops)} operands")
    neg_lo, neg_hi, op_sel = _bits(stmt, "neg_lo"), _bits(stmt, "neg_hi"), _bits(stmt, "op_sel")
    clamp = stmt.modifier("clamp") is not None
    if neg_lo[2] or neg_hi[2]:
        raise Unimplemented(f"negating C (neg_lo/neg_hi bit 2) on {stmt.mnemonic}")
    if kind in ("iu8", "iu4"):
        if any(neg_hi):
            raise Unimplemented(f"neg_hi on {stmt.mnemonic}")
    elif clamp:
        raise Unimplemented(f"clamp on {stmt.mnemonic}")
    sixteen = res in ("f16", "bf16")
    if op_sel[0] or op_sel[1] or (op_sel[2] and not sixteen):
        raise Unimplemented(f"op_sel:[{','.join(map(str, op_sel))}] on {stmt.mnemonic}")
    hi = bool(op_sel[2])
    d0 = _vgpr_operand(ops[0], 8, "destination", stmt, ctx.nvgpr)
    a0 = _vgpr_operand(ops[1], nab, "A", stmt, ctx.nvgpr)
    b0 = _vgpr_operand(ops[2], nab, "B", stmt, ctx.nvgpr)
    c_op = ops[3]
    if c_op.kind in ("int", "float"):
        if sixteen or c_op.neg or c_op.abs:
            raise Unimplemented(f"constant C '{c_op.text}' on {stmt.mnemonic}")
        cval = const_array(c_op, "f32" if res == "f32" else "i32").view(U32)
        c_words = lambda g: np.broadcast_to(cval, (g.waves.size, 8, 32))  # noqa: E731
    else:
        c0 = _vgpr_operand(c_op, 8, "C", stmt, ctx.nvgpr)
        c_words = lambda g: np.stack([g.V[c0 + r] for r in range(8)], axis=1)  # noqa: E731
    mnemonic = stmt.mnemonic

    def check_exec(g):
        if not g.full:
            raise EmulationError(f"{mnemonic} with EXEC not all ones (WMMA needs all 32 lanes)")

    def operands_f(g, which: int, first: int) -> np.ndarray:
        e = unpack_ab(_words(g, first, nab), kind)  # [W, 16, 16] patterns
        if neg_lo[which] or neg_hi[which]:
            flip = np.zeros(16, dtype=U32)
            flip[0::2] = 0x8000 if neg_lo[which] else 0
            flip[1::2] = 0x8000 if neg_hi[which] else 0
            e = e ^ flip
        return half_to_f32(e, kind)

    if kind in ("f16", "bf16"):
        def compute(g):
            check_exec(g)
            a = operands_f(g, 0, a0)  # [W, m, k]
            b = operands_f(g, 1, b0)  # [W, n, k]
            cw = c_words(g)
            if sixteen:
                h = (cw >> U32(16)) if hi else (cw & U32(0xFFFF))
                t = half_to_f32(cd_from_words(h), res)
            else:
                t = cd_from_words(np.ascontiguousarray(cw)).view(F32)
            for k in range(16):
                t = fma_f32(a[:, :, k, None], b[:, None, :, k], t)
            t = np.asarray(t, dtype=F32)
            if not sixteen:
                return cd_to_words(t.view(U32))
            out = cd_to_words(f32_to_half(t, res))
            old = np.stack([g.V[d0 + r] for r in range(8)], axis=1)
            if hi:
                return (old & U32(0xFFFF)) | (out << U32(16))
            return (old & U32(0xFFFF_0000)) | out
    else:
        sa, sb = bool(neg_lo[0]), bool(neg_lo[1])
        bits = 8 if kind == "iu8" else 4

        def signed(x, s):
            return np.where(x >= (1 << (bits - 1)), x - (1 << bits), x) if s else x

        def compute(g):
            check_exec(g)
            a = signed(unpack_ab(_words(g, a0, nab), kind), sa)
            b = signed(unpack_ab(_words(g, b0, nab), kind), sb)
            c = cd_from_words(np.ascontiguousarray(c_words(g))).view(I32).astype(I64)
            t = np.einsum("wmk,wnk->wmn", a, b) + c
            if clamp:
                t = np.clip(t, -(1 << 31), (1 << 31) - 1)
            return cd_to_words((t & 0xFFFF_FFFF).astype(U32))

    def commit(g, p):
        for r in range(8):
            g.V[d0 + r] = p[:, r, :]
    return compute, commit
