"""What the vector ALU opcodes compute (VOP1, VOP2, VOP3, VOP3SD, VOPC; the halves of VOPD are the
same opcodes): RDNA3 ISA guide, chapter 6 "Vector ALU operations", and each opcode's pseudocode.

Names follow the guide: ``S0``/``S1``/``S2`` the sources, ``SIMM32`` the literal of ``v_fmaak``/
``v_fmamk``, ``D0`` the destination, ``VCC`` the carry or condition lane mask (the guide's
``VCC.u64[laneId]``; an operand in VOP3 forms), ``EXEC`` for ``v_cmpx``. Packed 16-bit math (VOP3P)
and WMMA are the emulator's alone (:mod:`isalint.validate.emu.packed`, :mod:`~isalint.validate.emu.wmma`).
"""
from __future__ import annotations

from .table import define, op

# -- moves ---------------------------------------------------------------------------------------


@op("v_mov_b32", "D0.b32 = S0.b32")
def _mov(A, S0):
    return (S0,)


@op("v_cndmask_b32", "D0.b32 = S0.b32, S1.b32, VCC.bit")
def _cndmask(A, S0, S1, VCC):
    # D0.u32 = VCC.u64[laneId] ? S1.u32 : S0.u32
    return (A.select(VCC, S1, S0),)


# -- fp32 / fp64 arithmetic --------------------------------------------------------------------------

_F2 = "D0.f32 = S0.f32, S1.f32"
_F3 = "D0.f32 = S0.f32, S1.f32, S2.f32"
define("v_add_f32", _F2, lambda A, S0, S1: (A.fadd(S0, S1),))
define("v_sub_f32", _F2, lambda A, S0, S1: (A.fsub(S0, S1),))
define("v_subrev_f32", _F2, lambda A, S0, S1: (A.fsub(S1, S0),))
define("v_mul_f32", _F2, lambda A, S0, S1: (A.fmul(S0, S1),))
define("v_mul_dx9_zero_f32", _F2, lambda A, S0, S1: (A.fmul_legacy(S0, S1),))
define("v_fma_f32", _F3, lambda A, S0, S1, S2: (A.fma(S0, S1, S2),))
define("v_fma_dx9_zero_f32", _F3, lambda A, S0, S1, S2: (A.fma_legacy(S0, S1, S2),))
# D0.f32 = fma(S0.f32, S1.f32, SIMM32.f32) / fma(S0.f32, SIMM32.f32, S1.f32): operands as written
define("v_fmaak_f32", "D0.f32 = S0.f32, S1.f32, SIMM32.f32", lambda A, S0, S1, K: (A.fma(S0, S1, K),))
define("v_fmamk_f32", "D0.f32 = S0.f32, SIMM32.f32, S1.f32", lambda A, S0, K, S1: (A.fma(S0, K, S1),))
define("v_fmac_f32", "D0.f32 = S0.f32, S1.f32, D0.f32", lambda A, S0, S1, D0: (A.fma(S0, S1, D0),))
define("v_max_f32", _F2, lambda A, S0, S1: (A.fmax(S0, S1),))
define("v_min_f32", _F2, lambda A, S0, S1: (A.fmin(S0, S1),))
define("v_max3_f32", _F3, lambda A, S0, S1, S2: (A.fmax(A.fmax(S0, S1), S2),))
define("v_min3_f32", _F3, lambda A, S0, S1, S2: (A.fmin(A.fmin(S0, S1), S2),))
define("v_med3_f32", _F3, lambda A, S0, S1, S2: (A.fmed3(S0, S1, S2),))
define("v_ldexp_f32", "D0.f32 = S0.f32, S1.i32", lambda A, S0, S1: (A.ldexp(S0, S1),))
for _name in ("floor", "ceil", "trunc", "rndne", "fract", "rcp", "rsq", "sqrt"):
    define(f"v_{_name}_f32", "D0.f32 = S0.f32", (lambda f: lambda A, S0: (getattr(A, f)(S0),))(_name))
define("v_exp_f32", "D0.f32 = S0.f32", lambda A, S0: (A.exp2(S0),))  # D0.f32 = pow(2.0F, S0.f32)
define("v_log_f32", "D0.f32 = S0.f32", lambda A, S0: (A.log2(S0),))
define("v_add_f64", "D0.f64 = S0.f64, S1.f64", lambda A, S0, S1: (A.fadd(S0, S1),))
define("v_mul_f64", "D0.f64 = S0.f64, S1.f64", lambda A, S0, S1: (A.fmul(S0, S1),))

# -- conversions (the guide's f32_to_u32 ...) ------------------------------------------------------------

for _to, _frm in (("f32", "i32"), ("f32", "u32"), ("u32", "f32"), ("i32", "f32"), ("f64", "f32"), ("f32", "f64"),
                  ("f64", "i32")):
    define(f"v_cvt_{_to}_{_frm}", f"D0.{_to} = S0.{_frm}",
           (lambda to, frm: lambda A, S0: (A.convert(to, frm, S0),))(_to, _frm))


def _ubyte(k):
    def fn(A, S0):
        # D0.f32 = u32_to_f32(S0[8k+7 : 8k].u32)
        return (A.convert("f32", "u32", A.and_(A.lshr(S0, A.const(8 * k)), A.const(0xFF))),)
    return fn


for _k in range(4):
    define(f"v_cvt_f32_ubyte{_k}", "D0.f32 = S0.u32", _ubyte(_k))

# -- 32-bit integer arithmetic ---------------------------------------------------------------------------

_I2 = "D0.u32 = S0.u32, S1.u32"
_I3 = "D0.u32 = S0.u32, S1.u32, S2.u32"
for _name in ("v_add_nc_u32", "v_add_nc_i32"):
    define(_name, _I2, lambda A, S0, S1: (A.add(S0, S1),))
for _name in ("v_sub_nc_u32", "v_sub_nc_i32"):
    define(_name, _I2, lambda A, S0, S1: (A.sub(S0, S1),))
define("v_subrev_nc_u32", _I2, lambda A, S0, S1: (A.sub(S1, S0),))
define("v_add3_u32", _I3, lambda A, S0, S1, S2: (A.add(A.add(S0, S1), S2),))
define("v_xad_u32", _I3, lambda A, S0, S1, S2: (A.add(A.xor(S0, S1), S2),))
define("v_mul_lo_u32", _I2, lambda A, S0, S1: (A.mul(S0, S1),))
define("v_mul_hi_u32", _I2, lambda A, S0, S1: (A.mul_hi(S0, S1),))
define("v_mul_hi_i32", "D0.i32 = S0.i32, S1.i32", lambda A, S0, S1: (A.mul_hi(S0, S1, signed=True),))


# D0.u32 = 32'U(S0.u24) * 32'U(S1.u24) ...: the operands read as 24-bit integers
define("v_mul_u32_u24", _I2, lambda A, S0, S1: (A.mul(A.u24(S0), A.u24(S1)),))
define("v_mul_hi_u32_u24", _I2, lambda A, S0, S1: (A.mul_hi(A.u24(S0), A.u24(S1)),))
define("v_mul_i32_i24", _I2, lambda A, S0, S1: (A.mul(A.i24(S0), A.i24(S1)),))
define("v_mul_hi_i32_i24", _I2, lambda A, S0, S1: (A.mul_hi(A.i24(S0), A.i24(S1), signed=True),))
define("v_mad_u32_u24", _I3, lambda A, S0, S1, S2: (A.add(A.mul(A.u24(S0), A.u24(S1)), S2),))
define("v_mad_i32_i24", _I3, lambda A, S0, S1, S2: (A.add(A.mul(A.i24(S0), A.i24(S1)), S2),))


@op("v_mad_u64_u32", "D0.u64, D1.bit = S0.u32, S1.u32, S2.u64")
def _mad_u64(A, S0, S1, S2):
    # { D1.u1, D0.u64 } = 65'B(65'U(S0.u32) * 65'U(S1.u32) + 65'U(S2.u64))
    return A.add_co(A.mul(A.zext(S0), A.zext(S1), 64), S2, bits=64)


@op("v_mad_i64_i32", "D0.i64, D1.bit = S0.i32, S1.i32, S2.i64")
def _mad_i64(A, S0, S1, S2):
    # { D1.i1, D0.i64 } = 65'B(65'I(S0.i32) * 65'I(S1.i32) + 65'I(S2.i64))
    return A.add_co(A.mul(A.sext(S0, 32, 64), A.sext(S1, 32, 64), 64), S2, bits=64, signed=True)


# -- carries: VCC is the carry lane mask (VOP3SD: the sdst / src2 operands) ---------------------------

define("v_add_co_u32", "D0.u32, VCC.bit = S0.u32, S1.u32", lambda A, S0, S1: A.add_co(S0, S1))
define("v_sub_co_u32", "D0.u32, VCC.bit = S0.u32, S1.u32", lambda A, S0, S1: A.sub_co(S0, S1))
define("v_subrev_co_u32", "D0.u32, VCC.bit = S0.u32, S1.u32", lambda A, S0, S1: A.sub_co(S1, S0))
define("v_add_co_ci_u32", "D0.u32, VCC.bit = S0.u32, S1.u32, VCC.bit",
       lambda A, S0, S1, VCC: A.add_co(S0, S1, VCC))
define("v_sub_co_ci_u32", "D0.u32, VCC.bit = S0.u32, S1.u32, VCC.bit",
       lambda A, S0, S1, VCC: A.sub_co(S0, S1, VCC))
define("v_subrev_co_ci_u32", "D0.u32, VCC.bit = S0.u32, S1.u32, VCC.bit",
       lambda A, S0, S1, VCC: A.sub_co(S1, S0, VCC))

# -- bits ------------------------------------------------------------------------------------------------

define("v_and_b32", _I2, lambda A, S0, S1: (A.and_(S0, S1),))
define("v_or_b32", _I2, lambda A, S0, S1: (A.or_(S0, S1),))
define("v_xor_b32", _I2, lambda A, S0, S1: (A.xor(S0, S1),))
define("v_xnor_b32", _I2, lambda A, S0, S1: (A.not_(A.xor(S0, S1)),))
define("v_not_b32", "D0.u32 = S0.u32", lambda A, S0: (A.not_(S0),))
define("v_bfrev_b32", "D0.u32 = S0.u32", lambda A, S0: (A.brev(S0),))
define("v_clz_i32_u32", "D0.u32 = S0.u32", lambda A, S0: (A.clz(S0),))
define("v_ctz_i32_b32", "D0.u32 = S0.u32", lambda A, S0: (A.ctz(S0),))
define("v_bcnt_u32_b32", _I2, lambda A, S0, S1: (A.add(A.popcount(S0), S1),))
define("v_and_or_b32", _I3, lambda A, S0, S1, S2: (A.or_(A.and_(S0, S1), S2),))
define("v_or3_b32", _I3, lambda A, S0, S1, S2: (A.or_(A.or_(S0, S1), S2),))
define("v_xor3_b32", _I3, lambda A, S0, S1, S2: (A.xor(A.xor(S0, S1), S2),))
# D0.u32 = (S0.u32 & S1.u32) | (~S0.u32 & S2.u32)
define("v_bfi_b32", _I3, lambda A, S0, S1, S2: (A.or_(A.and_(S0, S1), A.and_(A.not_(S0), S2)),))
# D0.u32 = ((1U << S0[4 : 0].u32) - 1U) << S1[4 : 0].u32
define("v_bfm_b32", _I2, lambda A, S0, S1: (A.shl(A.sub(A.shl(A.const(1), S0), A.const(1)), S1),))
# D0.u32 = ((S0.u32 >> S1[4 : 0].u32) & ((1U << S2[4 : 0].u32) - 1U)), sign-extended for _i32
define("v_bfe_u32", _I3, lambda A, S0, S1, S2: (A.bfe(S0, S1, A.and_(S2, A.const(31))),))
define("v_bfe_i32", _I3, lambda A, S0, S1, S2: (A.bfe(S0, S1, A.and_(S2, A.const(31)), signed=True),))
# D0.u32 = 32'U(({ S0.u32, S1.u32 } >> S2.u32[4 : 0].u32) & 0xffffffffLL), bytes for alignbyte
define("v_alignbit_b32", _I3,
       lambda A, S0, S1, S2: (A.lo(A.lshr(A.or_(A.shl(A.zext(S0), A.const(32), 64), A.zext(S1), 64),
                                          A.and_(S2, A.const(31)), 64)),))
define("v_alignbyte_b32", _I3,
       lambda A, S0, S1, S2: (A.lo(A.lshr(A.or_(A.shl(A.zext(S0), A.const(32), 64), A.zext(S1), 64),
                                          A.shl(A.and_(S2, A.const(3)), A.const(3)), 64)),))

# shifts: the *rev forms take the amount first
define("v_lshlrev_b32", _I2, lambda A, S0, S1: (A.shl(S1, S0),))
define("v_lshrrev_b32", _I2, lambda A, S0, S1: (A.lshr(S1, S0),))
define("v_ashrrev_i32", "D0.i32 = S0.u32, S1.i32", lambda A, S0, S1: (A.ashr(S1, S0),))
define("v_lshlrev_b64", "D0.u64 = S0.u32, S1.u64", lambda A, S0, S1: (A.shl(S1, S0, 64),))
define("v_lshrrev_b64", "D0.u64 = S0.u32, S1.u64", lambda A, S0, S1: (A.lshr(S1, S0, 64),))
define("v_ashrrev_i64", "D0.i64 = S0.u32, S1.i64", lambda A, S0, S1: (A.ashr(S1, S0, 64),))
define("v_lshl_add_u32", _I3, lambda A, S0, S1, S2: (A.add(A.shl(S0, S1), S2),))
define("v_add_lshl_u32", _I3, lambda A, S0, S1, S2: (A.shl(A.add(S0, S1), S2),))
define("v_lshl_or_b32", _I3, lambda A, S0, S1, S2: (A.or_(A.shl(S0, S1), S2),))

# -- min, max, median --------------------------------------------------------------------------------------

for _t, _signed in (("i32", True), ("u32", False)):
    _sig2, _sig3 = f"D0.{_t} = S0.{_t}, S1.{_t}", f"D0.{_t} = S0.{_t}, S1.{_t}, S2.{_t}"
    define(f"v_max_{_t}", _sig2, (lambda s: lambda A, S0, S1: (A.max(S0, S1, s),))(_signed))
    define(f"v_min_{_t}", _sig2, (lambda s: lambda A, S0, S1: (A.min(S0, S1, s),))(_signed))
    define(f"v_max3_{_t}", _sig3, (lambda s: lambda A, S0, S1, S2: (A.max(A.max(S0, S1, s), S2, s),))(_signed))
    define(f"v_min3_{_t}", _sig3, (lambda s: lambda A, S0, S1, S2: (A.min(A.min(S0, S1, s), S2, s),))(_signed))
    # the median: max(min(S0, S1), min(max(S0, S1), S2))
    define(f"v_med3_{_t}", _sig3, (lambda s: lambda A, S0, S1, S2: (
        A.max(A.min(S0, S1, s), A.min(A.max(S0, S1, s), S2, s), s),))(_signed))


@op("v_perm_b32", _I3)
def _perm(A, S0, S1, S2):
    # byte i of D0 is selected by byte i of S2 from the bytes { S0, S1 } (BYTE_PERMUTE in the guide)
    both = A.or_(A.shl(A.zext(S0), A.const(32), 64), A.zext(S1), 64)
    D0 = A.const(0)
    for i in range(4):
        sel = A.and_(A.lshr(S2, A.const(8 * i)), A.const(0xFF))
        byte = A.lo(A.and_(A.lshr(both, A.shl(A.min(sel, A.const(7)), A.const(3)), 64), A.const(0xFF, 64), 64))
        for s, bit in ((8, 15), (9, 31), (10, 47), (11, 63)):
            sign = A.lo(A.and_(A.lshr(both, A.const(bit), 64), A.const(1, 64), 64))
            byte = A.select(A.cmp("eq", sel, A.const(s)), A.mul(sign, A.const(0xFF)), byte)
        byte = A.select(A.cmp("eq", sel, A.const(12)), A.const(0), byte)
        byte = A.select(A.cmp("gt", sel, A.const(12)), A.const(0xFF), byte)
        D0 = A.or_(D0, A.shl(byte, A.const(8 * i)))
    return (D0,)


# -- lanes -----------------------------------------------------------------------------------------------


@op("v_readfirstlane_b32", "D0.u32 = S0.u32, EXEC.u32")
def _readfirstlane(A, S0, EXEC):
    # lane = EXEC == 0 ? 0 : s_ff1_i32_b32(EXEC); D0.b32 = VGPR[lane][SRC0.u32]
    lane = A.select(A.cmp("eq", EXEC, A.const(0)), A.const(0), A.ctz(EXEC))
    return (A.readlane(S0, lane),)


@op("v_readlane_b32", "D0.u32 = S0.u32, S1.u32")
def _readlane(A, S0, S1):
    return (A.readlane(S0, S1),)


@op("v_writelane_b32", "D0.u32 = S0.u32, S1.u32, D0.u32", exec_masked=False)
def _writelane(A, S0, S1, D0):
    # VGPR[S1.u32[4 : 0]][VDST.u32] = S0.b32, whatever EXEC says
    return (A.writelane(D0, S0, S1),)


@op("v_mbcnt_lo_u32_b32", _I2)
def _mbcnt_lo(A, S0, S1):
    # ThreadMask = (1LL << laneId.u32) - 1LL; D0.u32 = S1.u32 + popcount(S0.u32 & ThreadMask[31 : 0])
    return (A.add(A.popcount(A.and_(S0, A.lo(A.thread_mask()))), S1),)


@op("v_mbcnt_hi_u32_b32", _I2)
def _mbcnt_hi(A, S0, S1):
    return (A.add(A.popcount(A.and_(S0, A.hi(A.thread_mask()))), S1),)


# -- compares: D0.u64[laneId] = S0 REL S1 (VOPC: D0 is VCC; v_cmpx writes EXEC) -----------------------------

FLOAT_RELATIONS = ("f", "lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle", "neq", "nlt", "t")
INT_RELATIONS = ("f", "lt", "eq", "le", "gt", "ne", "ge", "t")


def _fcmp(rel):
    return lambda A, S0, S1: (A.fcmp(rel, S0, S1),)


def _icmp(rel, signed, bits):
    return lambda A, S0, S1: (A.cmp(rel, S0, S1, signed=signed, bits=bits),)


for _x, _dst in (("", "VCC.bit"), ("x", "EXEC.bit")):
    for _t in ("f32", "f64"):
        for _rel in FLOAT_RELATIONS:
            define(f"v_cmp{_x}_{_rel}_{_t}", f"{_dst} = S0.{_t}, S1.{_t}", _fcmp(_rel))
    define(f"v_cmp{_x}_class_f32", f"{_dst} = S0.f32, S1.u32", lambda A, S0, S1: (A.fclass(S0, S1),))
    for _t in ("i32", "u32", "i64", "u64"):
        for _rel in INT_RELATIONS:
            define(f"v_cmp{_x}_{_rel}_{_t}", f"{_dst} = S0.{_t}, S1.{_t}", _icmp(_rel, _t[0] == "i", int(_t[1:])))
