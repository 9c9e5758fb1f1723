"""VALU semantics (VOP1, VOP2, VOP3, VOPC, VOP3SD, VOPD halves, DPP), vectorized over lanes.

Each entry of :data:`VOP` maps a base mnemonic (no ``_e32``/``_e64``/``_dpp`` suffix) to its
destination type, source types and a numpy function of the typed sources.  Everything is
written from the RDNA3 ISA guide's instruction descriptions (chapter 6 "Vector ALU operations"
and the per-opcode pseudocode of chapter 16); fp32 results are IEEE round-to-nearest-even, the
fused ops are correctly rounded (see :mod:`.fp`).
"""
from __future__ import annotations

import numpy as np

from .fp import flush_denormals, fma_f32
from .machine import F32, F64, I32, I64, LANES, U32, U64, mask_to_bits

_M32 = U32(0xFFFF_FFFF)
_31 = U32(31)
_63 = U64(63)
_0 = U32(0)
_1 = U32(1)
_M24 = U32(0xFF_FFFF)


def _u(x):
    return np.asarray(x, dtype=U32)


def _sx24(x):
    """Low 24 bits of a uint32 array as signed int64."""
    return ((_u(x) << U32(8)).view(I32) >> 8).astype(I64)


def _bfe_u(a, off, w):
    w = (_u(w) & _31).astype(U64)
    return ((_u(a).astype(U64) >> (_u(off) & _31).astype(U64)) & ((U64(1) << w) - U64(1))).astype(U32)


def _bfe_i(a, off, w):
    w = (_u(w) & _31).astype(I64)
    t = ((_u(a).view(I32).astype(I64) >> (_u(off) & _31).astype(I64)) & ((I64(1) << w) - 1))
    sign = np.where(w > 0, (t >> np.maximum(w - 1, 0)) & 1, 0)
    return np.where(sign == 1, t - (I64(1) << w), t).astype(I32)


def _max_f32(a, b):
    """v_max_f32 (IEEE mode): a NaN operand yields the other one; +0 > -0."""
    a, b = np.broadcast_arrays(np.asarray(a, F32), np.asarray(b, F32))
    gt = (a > b) | ((a == 0) & (b == 0) & ~np.signbit(a) & np.signbit(b))
    r = np.where(gt, a, b)
    r = np.where(np.isnan(b), a, r)
    r = np.where(np.isnan(a), b, r)
    return r.astype(F32)


def _min_f32(a, b):
    a, b = np.broadcast_arrays(np.asarray(a, F32), np.asarray(b, F32))
    lt = (a < b) | ((a == 0) & (b == 0) & np.signbit(a) & ~np.signbit(b))
    r = np.where(lt, a, b)
    r = np.where(np.isnan(b), a, r)
    r = np.where(np.isnan(a), b, r)
    return r.astype(F32)


def _med3(a, b, c, mx, mn):
    return mx(mn(a, b), mn(mx(a, b), c))


def _med3_f32(a, b, c):
    """v_med3_f32: the median, or min3 when any input is NaN (RDNA3 ISA guide, V_MED3_F32)."""
    a, b, c = np.broadcast_arrays(np.asarray(a, F32), np.asarray(b, F32), np.asarray(c, F32))
    med = _med3(a, b, c, _max_f32, _min_f32)
    anynan = np.isnan(a) | np.isnan(b) | np.isnan(c)
    return np.where(anynan, _min_f32(_min_f32(a, b), c), med).astype(F32)


def _cvt_u32_f32(a):
    a = np.asarray(a, F32).astype(F64)
    t = np.trunc(np.nan_to_num(a, nan=0.0, posinf=4294967295.0, neginf=0.0))
    return np.clip(t, 0, 4294967295.0).astype(U32)


def _cvt_i32_f32(a):
    a = np.asarray(a, F32).astype(F64)
    t = np.trunc(np.nan_to_num(a, nan=0.0, posinf=2147483647.0, neginf=-2147483648.0))
    return np.clip(t, -2147483648.0, 2147483647.0).astype(I32)


def _mul_dx9(a, b):
    a, b = np.asarray(a, F32), np.asarray(b, F32)
    return np.where((a == 0) | (b == 0), F32(0), a * b).astype(F32)


def _fract(a):
    a = np.asarray(a, F32)
    r = (a - np.floor(a)).astype(F32)
    # the largest fp32 below 1.0 bounds the result (x - floor(x) can round up to 1.0)
    r = np.minimum(r, F32(np.nextafter(F32(1), F32(0))))
    return np.where(np.isinf(a), F32(np.nan), r).astype(F32)


def _clz(a):
    a = _u(a)
    out = np.full(a.shape, 0xFFFF_FFFF, dtype=U32)
    nz = a != 0
    if nz.any():
        out[nz] = (31 - np.floor(np.log2(a[nz].astype(F64)))).astype(U32)
    return out


def _ctz(a):
    a = _u(a)
    out = np.full(a.shape, 0xFFFF_FFFF, dtype=U32)
    nz = a != 0
    if nz.any():
        low = a[nz] & (~a[nz] + _1)
        out[nz] = np.floor(np.log2(low.astype(F64))).astype(U32)
    return out


def _popcount(a):
    a = _u(a)
    return np.unpackbits(np.ascontiguousarray(a).view(np.uint8).reshape(a.shape + (4,)), axis=-1).sum(
        axis=-1, dtype=U32)


def _brev(a):
    a = _u(a)
    bits = np.unpackbits(np.ascontiguousarray(a).view(np.uint8).reshape(a.shape + (4,)), axis=-1, bitorder="little")
    return np.packbits(bits[..., ::-1], axis=-1, bitorder="little").view(U32).reshape(a.shape)


def _perm(a, b, sel):
    """v_perm_b32: byte i of the result chosen by byte i of sel from the 8 bytes {a, b}."""
    a, b, sel = np.broadcast_arrays(_u(a), _u(b), _u(sel))
    src = (a.astype(U64) << U64(32)) | b.astype(U64)
    out = np.zeros(a.shape, dtype=U32)
    for i in range(4):
        s = (sel >> U32(8 * i)) & U32(0xFF)
        byte = ((src >> (np.minimum(s, U32(7)).astype(U64) * U64(8))) & U64(0xFF)).astype(U32)
        sign_of = lambda k: np.where(((src >> U64(k)) & U64(1)) == 1, U32(0xFF), U32(0))  # noqa: E731
        byte = np.where(s == 8, sign_of(15), byte)
        byte = np.where(s == 9, sign_of(31), byte)
        byte = np.where(s == 10, sign_of(47), byte)
        byte = np.where(s == 11, sign_of(63), byte)
        byte = np.where(s == 12, U32(0), byte)
        byte = np.where(s > 12, U32(0xFF), byte)
        out |= byte << U32(8 * i)
    return out


def _fma(a, b, c):
    return fma_f32(a, b, c)


# name: (dst type, source types, function of typed sources)
VOP: dict[str, tuple[str, tuple[str, ...], object]] = {
    # fp32
    "v_add_f32": ("f32", ("f32", "f32"), lambda a, b: a + b),
    "v_sub_f32": ("f32", ("f32", "f32"), lambda a, b: a - b),
    "v_subrev_f32": ("f32", ("f32", "f32"), lambda a, b: b - a),
    "v_mul_f32": ("f32", ("f32", "f32"), lambda a, b: a * b),
    "v_mul_dx9_zero_f32": ("f32", ("f32", "f32"), _mul_dx9),
    "v_fma_f32": ("f32", ("f32", "f32", "f32"), _fma),
    "v_fmaak_f32": ("f32", ("f32", "f32", "f32"), _fma),
    "v_fmamk_f32": ("f32", ("f32", "f32", "f32"), _fma),
    "v_fma_dx9_zero_f32": ("f32", ("f32", "f32", "f32"),
                           lambda a, b, c: np.where((a == 0) | (b == 0), c + F32(0), fma_f32(a, b, c)).astype(F32)),
    "v_max_f32": ("f32", ("f32", "f32"), _max_f32),
    "v_min_f32": ("f32", ("f32", "f32"), _min_f32),
    "v_max3_f32": ("f32", ("f32",) * 3, lambda a, b, c: _max_f32(_max_f32(a, b), c)),
    "v_min3_f32": ("f32", ("f32",) * 3, lambda a, b, c: _min_f32(_min_f32(a, b), c)),
    "v_med3_f32": ("f32", ("f32",) * 3, lambda a, b, c: _med3_f32(a, b, c)),
    "v_ldexp_f32": ("f32", ("f32", "i32"),
                    lambda a, b: np.ldexp(np.asarray(a, F32), np.clip(b, -1000, 1000)).astype(F32)),
    "v_floor_f32": ("f32", ("f32",), np.floor),
    "v_ceil_f32": ("f32", ("f32",), np.ceil),
    "v_trunc_f32": ("f32", ("f32",), np.trunc),
    "v_rndne_f32": ("f32", ("f32",), np.rint),
    "v_fract_f32": ("f32", ("f32",), _fract),
    # transcendental ops: modelled as the correctly rounded value (hardware is within 1 ulp)
    "v_rcp_f32": ("f32", ("f32",), lambda a: (F32(1) / np.asarray(a, F32)).astype(F32)),
    "v_rsq_f32": ("f32", ("f32",), lambda a: (1.0 / np.sqrt(np.asarray(a, F64))).astype(F32)),
    "v_sqrt_f32": ("f32", ("f32",), lambda a: np.sqrt(np.asarray(a, F32))),
    "v_exp_f32": ("f32", ("f32",), lambda a: np.exp2(np.asarray(a, F64)).astype(F32)),
    "v_log_f32": ("f32", ("f32",), lambda a: np.log2(np.asarray(a, F64)).astype(F32)),
    "v_cvt_f32_i32": ("f32", ("i32",), lambda a: np.asarray(a).astype(F32)),
    "v_cvt_f32_u32": ("f32", ("u32",), lambda a: np.asarray(a).astype(F32)),
    "v_cvt_u32_f32": ("u32", ("f32",), _cvt_u32_f32),
    "v_cvt_i32_f32": ("i32", ("f32",), _cvt_i32_f32),
    "v_cvt_f32_ubyte0": ("f32", ("u32",), lambda a: (a & U32(0xFF)).astype(F32)),
    "v_cvt_f32_ubyte1": ("f32", ("u32",), lambda a: ((a >> U32(8)) & U32(0xFF)).astype(F32)),
    "v_cvt_f32_ubyte2": ("f32", ("u32",), lambda a: ((a >> U32(16)) & U32(0xFF)).astype(F32)),
    "v_cvt_f32_ubyte3": ("f32", ("u32",), lambda a: (a >> U32(24)).astype(F32)),
    # fp64 (add/mul only: correctly rounded by numpy)
    "v_add_f64": ("f64", ("f64", "f64"), lambda a, b: a + b),
    "v_mul_f64": ("f64", ("f64", "f64"), lambda a, b: a * b),
    "v_cvt_f64_f32": ("f64", ("f32",), lambda a: np.asarray(a).astype(F64)),
    "v_cvt_f32_f64": ("f32", ("f64",), lambda a: np.asarray(a).astype(F32)),
    "v_cvt_f64_i32": ("f64", ("i32",), lambda a: np.asarray(a).astype(F64)),
    # moves
    "v_mov_b32": ("u32", ("u32",), lambda a: a),
    # 32-bit integer
    "v_add_nc_u32": ("u32", ("u32", "u32"), lambda a, b: a + b),
    "v_sub_nc_u32": ("u32", ("u32", "u32"), lambda a, b: a - b),
    "v_subrev_nc_u32": ("u32", ("u32", "u32"), lambda a, b: b - a),
    "v_add_nc_i32": ("u32", ("u32", "u32"), lambda a, b: a + b),
    "v_sub_nc_i32": ("u32", ("u32", "u32"), lambda a, b: a - b),
    "v_and_b32": ("u32", ("u32", "u32"), lambda a, b: a & b),
    "v_or_b32": ("u32", ("u32", "u32"), lambda a, b: a | b),
    "v_xor_b32": ("u32", ("u32", "u32"), lambda a, b: a ^ b),
    "v_xnor_b32": ("u32", ("u32", "u32"), lambda a, b: ~(a ^ b)),
    "v_not_b32": ("u32", ("u32",), lambda a: ~_u(a)),
    "v_bfrev_b32": ("u32", ("u32",), _brev),
    "v_clz_i32_u32": ("u32", ("u32",), _clz),
    "v_ctz_i32_b32": ("u32", ("u32",), _ctz),
    "v_lshlrev_b32": ("u32", ("u32", "u32"), lambda a, b: b << (a & _31)),
    "v_lshrrev_b32": ("u32", ("u32", "u32"), lambda a, b: b >> (a & _31)),
    "v_ashrrev_i32": ("i32", ("u32", "i32"), lambda a, b: b >> (a & _31).astype(I32)),
    "v_lshlrev_b64": ("u64", ("u32", "u64"), lambda a, b: b << (a.astype(U64) & _63)),
    "v_lshrrev_b64": ("u64", ("u32", "u64"), lambda a, b: b >> (a.astype(U64) & _63)),
    "v_ashrrev_i64": ("i64", ("u32", "i64"), lambda a, b: b >> (a.astype(I64) & 63)),
    "v_mul_lo_u32": ("u32", ("u32", "u32"), lambda a, b: a * b),
    "v_mul_hi_u32": ("u32", ("u32", "u32"), lambda a, b: ((a.astype(U64) * b.astype(U64)) >> U64(32)).astype(U32)),
    "v_mul_hi_i32": ("i32", ("i32", "i32"), lambda a, b: ((a.astype(I64) * b.astype(I64)) >> 32).astype(I32)),
    "v_mul_u32_u24": ("u32", ("u32", "u32"),
                      lambda a, b: ((a & _M24).astype(U64) * (b & _M24).astype(U64)).astype(U32)),
    "v_mul_hi_u32_u24": ("u32", ("u32", "u32"),
                         lambda a, b: (((a & _M24).astype(U64) * (b & _M24).astype(U64)) >> U64(32)).astype(U32)),
    "v_mul_i32_i24": ("u32", ("u32", "u32"), lambda a, b: (_sx24(a) * _sx24(b)).astype(U32)),
    "v_mul_hi_i32_i24": ("u32", ("u32", "u32"), lambda a, b: ((_sx24(a) * _sx24(b)) >> 32).astype(U32)),
    "v_mad_u32_u24": ("u32", ("u32", "u32", "u32"),
                      lambda a, b, c: ((a & _M24).astype(U64) * (b & _M24).astype(U64) + c).astype(U32)),
    "v_mad_i32_i24": ("u32", ("u32", "u32", "u32"),
                      lambda a, b, c: (_sx24(a) * _sx24(b) + _u(c).view(I32)).astype(U32)),
    "v_add3_u32": ("u32", ("u32",) * 3, lambda a, b, c: a + b + c),
    "v_lshl_add_u32": ("u32", ("u32",) * 3, lambda a, b, c: (a << (b & _31)) + c),
    "v_add_lshl_u32": ("u32", ("u32",) * 3, lambda a, b, c: (a + b) << (c & _31)),
    "v_lshl_or_b32": ("u32", ("u32",) * 3, lambda a, b, c: (a << (b & _31)) | c),
    "v_and_or_b32": ("u32", ("u32",) * 3, lambda a, b, c: (a & b) | c),
    "v_or3_b32": ("u32", ("u32",) * 3, lambda a, b, c: a | b | c),
    "v_xor3_b32": ("u32", ("u32",) * 3, lambda a, b, c: a ^ b ^ c),
    "v_xad_u32": ("u32", ("u32",) * 3, lambda a, b, c: (a ^ b) + c),
    "v_bfe_u32": ("u32", ("u32",) * 3, _bfe_u),
    "v_bfe_i32": ("i32", ("u32",) * 3, _bfe_i),
    "v_bfi_b32": ("u32", ("u32",) * 3, lambda a, b, c: (a & b) | (~_u(a) & c)),
    "v_bfm_b32": ("u32", ("u32", "u32"),
                  lambda a, b: (((U64(1) << (a & _31).astype(U64)) - U64(1)).astype(U32) << (b & _31))),
    "v_alignbit_b32": ("u32", ("u32",) * 3,
                       lambda a, b, c: (((a.astype(U64) << U64(32)) | b.astype(U64))
                                        >> (c & _31).astype(U64)).astype(U32)),
    "v_alignbyte_b32": ("u32", ("u32",) * 3,
                        lambda a, b, c: (((a.astype(U64) << U64(32)) | b.astype(U64))
                                         >> ((c & U32(3)).astype(U64) * U64(8))).astype(U32)),
    "v_perm_b32": ("u32", ("u32",) * 3, _perm),
    "v_max_i32": ("i32", ("i32", "i32"), np.maximum),
    "v_min_i32": ("i32", ("i32", "i32"), np.minimum),
    "v_max_u32": ("u32", ("u32", "u32"), np.maximum),
    "v_min_u32": ("u32", ("u32", "u32"), np.minimum),
    "v_max3_i32": ("i32", ("i32",) * 3, lambda a, b, c: np.maximum(np.maximum(a, b), c)),
    "v_min3_i32": ("i32", ("i32",) * 3, lambda a, b, c: np.minimum(np.minimum(a, b), c)),
    "v_max3_u32": ("u32", ("u32",) * 3, lambda a, b, c: np.maximum(np.maximum(a, b), c)),
    "v_min3_u32": ("u32", ("u32",) * 3, lambda a, b, c: np.minimum(np.minimum(a, b), c)),
    "v_med3_i32": ("i32", ("i32",) * 3, lambda a, b, c: _med3(a, b, c, np.maximum, np.minimum)),
    "v_med3_u32": ("u32", ("u32",) * 3, lambda a, b, c: _med3(a, b, c, np.maximum, np.minimum)),
    "v_bcnt_u32_b32": ("u32", ("u32", "u32"), lambda a, b: _popcount(a) + b),
}

# ops whose destination is also their last source (D = f(S0, S1, D))
ACCUMULATE = {"v_fmac_f32": "v_fma_f32"}

# ops with no use of the fp denormal mode (pure bit / integer ops never flush)
FP_OPS = {k for k, (d, s, _) in VOP.items() if d == "f32" or "f32" in s}

# VOPC: comparison name -> function of (a, b) on typed values
_FCMP = {
    "f": lambda a, b: np.zeros(np.broadcast_shapes(np.shape(a), np.shape(b)), bool),
    "lt": np.less, "eq": np.equal, "le": np.less_equal, "gt": np.greater,
    "lg": lambda a, b: np.less(a, b) | np.greater(a, b),
    "ge": np.greater_equal,
    "o": lambda a, b: ~(np.isnan(a) | np.isnan(b)),
    "u": lambda a, b: np.isnan(a) | np.isnan(b),
    "nge": lambda a, b: ~np.greater_equal(a, b), "nlg": lambda a, b: ~(np.less(a, b) | np.greater(a, b)),
    "ngt": lambda a, b: ~np.greater(a, b), "nle": lambda a, b: ~np.less_equal(a, b),
    "neq": lambda a, b: ~np.equal(a, b), "nlt": lambda a, b: ~np.less(a, b),
    "t": lambda a, b: np.ones(np.broadcast_shapes(np.shape(a), np.shape(b)), bool),
}
_ICMP = {
    "f": _FCMP["f"], "lt": np.less, "eq": np.equal, "le": np.less_equal, "gt": np.greater,
    "ne": np.not_equal, "ge": np.greater_equal, "t": _FCMP["t"],
}


def _class_f32(a, mask):
    a = np.asarray(a, F32)
    bits = a.view(U32)
    m = _u(mask)
    expo = (bits >> U32(23)) & U32(0xFF)
    mant = bits & U32(0x7F_FFFF)
    neg = (bits >> _31) == 1
    isnan = (expo == 255) & (mant != 0)
    quiet = isnan & ((mant >> U32(22)) == 1)
    k = np.where(neg, 5, 6)  # zero
    k = np.where((expo == 0) & (mant != 0), np.where(neg, 4, 7), k)
    k = np.where((expo > 0) & (expo < 255), np.where(neg, 3, 8), k)
    k = np.where((expo == 255) & (mant == 0), np.where(neg, 2, 9), k)
    k = np.where(isnan, np.where(quiet, 1, 0), k)
    return ((m >> k.astype(U32)) & _1) == 1


def vopc_semantics(base: str):
    """(source type, compare function) of ``v_cmp[x]_<op>_<type>``, or None."""
    parts = base.split("_")
    if len(parts) != 4 or parts[0] != "v" or parts[1] not in ("cmp", "cmpx"):
        return None
    op, typ = parts[2], parts[3]
    if op == "class" and typ == "f32":
        return ("f32", "u32"), _class_f32
    if op == "tru":
        op = "t"
    if typ in ("f32", "f64"):
        fn = _FCMP.get(op)
        return ((typ, typ), fn) if fn else None
    if typ in ("i32", "u32", "i64", "u64"):
        if op == "lg":
            op = "ne"
        fn = _ICMP.get(op)
        return ((typ, typ), fn) if fn else None
    return None


def apply_output_mods(value, clamp: bool, omod: float | None):
    v = np.asarray(value, F32)
    if omod is not None:
        v = (v * F32(omod)).astype(F32)
    if clamp:
        v = np.where(np.isnan(v), F32(0), np.clip(v, F32(0), F32(1))).astype(F32)
    return v


def flush_in(fn, nsrc: int):
    def wrapped(*args):
        return flush_denormals(fn(*[flush_denormals(a) if getattr(a, "dtype", None) == F32 else a for a in args]))
    return wrapped


def lane_ids():
    return LANES


def pack_mask(b):
    return mask_to_bits(b)
