"""What the scalar ALU opcodes compute (SOP1, SOP2, SOPK, SOPC): RDNA3 ISA guide, chapter 4
"Scalar ALU operations", and the pseudocode of each opcode's description.

``A`` is the :class:`~.algebra.Algebra`; names follow the guide (``S0``, ``S1``, ``SIMM16``, ``D0``,
``SCC``, ``EXEC``, ``tmp``).
"""
from __future__ import annotations

from .table import define, op

# -- moves and selects ---------------------------------------------------------------------------


@op("s_mov_b32", "D0.u32 = S0.u32")
def _mov(A, S0):
    return (S0,)


op("s_mov_b64", "D0.u64 = S0.u64")(_mov)
op("s_movk_i32", "D0.u32 = SIMM16.i16")(_mov)


@op("s_cmov_b32", "D0.u32 = S0.u32, SCC, D0.u32")
def _cmov(A, S0, SCC, D0):
    return (A.select(SCC, S0, D0),)


op("s_cmov_b64", "D0.u64 = S0.u64, SCC, D0.u64")(_cmov)
op("s_cmovk_i32", "D0.u32 = SIMM16.i16, SCC, D0.u32")(_cmov)


@op("s_cselect_b32", "D0.u32 = S0.u32, S1.u32, SCC")
def _cselect(A, S0, S1, SCC):
    return (A.select(SCC, S0, S1),)


op("s_cselect_b64", "D0.u64 = S0.u64, S1.u64, SCC")(_cselect)

# -- unary ---------------------------------------------------------------------------------------


@op("s_not_b32", "D0.u32, SCC = S0.u32")
def _not32(A, S0):
    D0 = A.not_(S0)
    return D0, A.truth(D0)


@op("s_not_b64", "D0.u64, SCC = S0.u64")
def _not64(A, S0):
    D0 = A.not_(S0, 64)
    return D0, A.truth(D0, 64)


@op("s_brev_b32", "D0.u32 = S0.u32")
def _brev(A, S0):
    return (A.brev(S0),)


@op("s_bcnt1_i32_b32", "D0.u32, SCC = S0.u32")
def _bcnt1(A, S0):
    D0 = A.popcount(S0)
    return D0, A.truth(D0)


@op("s_bcnt0_i32_b32", "D0.u32, SCC = S0.u32")
def _bcnt0(A, S0):
    D0 = A.sub(A.const(32), A.popcount(S0))
    return D0, A.truth(D0)


@op("s_ctz_i32_b32", "D0.u32 = S0.u32")
def _ctz(A, S0):
    return (A.ctz(S0),)


@op("s_clz_i32_u32", "D0.u32 = S0.u32")
def _clz(A, S0):
    return (A.clz(S0),)


def _sext(width):
    def fn(A, S0):
        return (A.sext(S0, width),)
    return fn


define("s_sext_i32_i8", "D0.u32 = S0.u32", _sext(8))
define("s_sext_i32_i16", "D0.u32 = S0.u32", _sext(16))


@op("s_abs_i32", "D0.u32, SCC = S0.u32")
def _abs(A, S0):
    # D0.i32 = S0.i32 < 0 ? -S0.i32 : S0.i32; SCC = D0.i32 != 0
    D0 = A.select(A.cmp("lt", S0, A.const(0), signed=True), A.sub(A.const(0), S0), S0)
    return D0, A.truth(D0)


# -- add, subtract, multiply ---------------------------------------------------------------------


def _signs(A, *values):
    """``x.u32[31]`` of each value, as conditions."""
    return [A.cmp("lt", x, A.const(0), signed=True) for x in values]


def add_overflow(A, S0, S1, tmp):
    """Signed overflow of ``tmp = S0 + S1``: ``S0.u32[31] == S1.u32[31] && S0.u32[31] != tmp.u32[31]``."""
    s0, s1, t = _signs(A, S0, S1, tmp)
    return A.and_(A.cmp("eq", s0, s1), A.cmp("ne", s0, t))


def sub_overflow(A, S0, S1, tmp):
    """Signed overflow of ``tmp = S0 - S1``: ``S0.u32[31] != S1.u32[31] && S0.u32[31] != tmp.u32[31]``."""
    s0, s1, t = _signs(A, S0, S1, tmp)
    return A.and_(A.cmp("ne", s0, s1), A.cmp("ne", s0, t))


@op("s_add_u32", "D0.u32, SCC = S0.u32, S1.u32")
def _add_u32(A, S0, S1):
    # tmp = 64'U(S0.u32) + 64'U(S1.u32); SCC = tmp >= 0x100000000ULL; D0.u32 = tmp.u32
    return A.add_co(S0, S1)


@op("s_addc_u32", "D0.u32, SCC = S0.u32, S1.u32, SCC")
def _addc_u32(A, S0, S1, SCC):
    return A.add_co(S0, S1, SCC)


@op("s_sub_u32", "D0.u32, SCC = S0.u32, S1.u32")
def _sub_u32(A, S0, S1):
    # SCC = S1.u32 > S0.u32 (the borrow)
    return A.sub_co(S0, S1)


@op("s_subb_u32", "D0.u32, SCC = S0.u32, S1.u32, SCC")
def _subb_u32(A, S0, S1, SCC):
    return A.sub_co(S0, S1, SCC)


@op("s_add_i32", "D0.u32, SCC = S0.u32, S1.u32")
def _add_i32(A, S0, S1):
    tmp = A.add(S0, S1)
    return tmp, add_overflow(A, S0, S1, tmp)


@op("s_sub_i32", "D0.u32, SCC = S0.u32, S1.u32")
def _sub_i32(A, S0, S1):
    tmp = A.sub(S0, S1)
    return tmp, sub_overflow(A, S0, S1, tmp)


@op("s_addk_i32", "D0.u32, SCC = SIMM16.i16, D0.u32")
def _addk(A, SIMM16, D0):
    tmp = A.add(D0, SIMM16)
    return tmp, add_overflow(A, D0, SIMM16, tmp)


@op("s_mulk_i32", "D0.u32 = SIMM16.i16, D0.u32")
def _mulk(A, SIMM16, D0):
    return (A.mul(D0, SIMM16),)


@op("s_mul_i32", "D0.u32 = S0.u32, S1.u32")
def _mul(A, S0, S1):
    return (A.mul(S0, S1),)


@op("s_mul_hi_u32", "D0.u32 = S0.u32, S1.u32")
def _mul_hi_u32(A, S0, S1):
    return (A.mul_hi(S0, S1),)


@op("s_mul_hi_i32", "D0.u32 = S0.u32, S1.u32")
def _mul_hi_i32(A, S0, S1):
    return (A.mul_hi(S0, S1, signed=True),)


def _minmax(rel, signed):
    def fn(A, S0, S1):
        # SCC = S0 < S1 (min) / S0 >= S1 (max); D0 = SCC ? S0 : S1
        SCC = A.cmp(rel, S0, S1, signed=signed)
        return A.select(SCC, S0, S1), SCC
    return fn


for _name, _rel in (("min", "lt"), ("max", "ge")):
    for _t in ("i32", "u32"):
        define(f"s_{_name}_{_t}", "D0.u32, SCC = S0.u32, S1.u32", _minmax(_rel, _t == "i32"))


@op("s_absdiff_i32", "D0.u32, SCC = S0.u32, S1.u32")
def _absdiff(A, S0, S1):
    # D0.i32 = S0.i32 - S1.i32; if D0.i32 < 0 then D0.i32 = -D0.i32; SCC = D0.i32 != 0
    D0 = A.sub(S0, S1)
    D0 = A.select(A.cmp("lt", D0, A.const(0), signed=True), A.sub(A.const(0), D0), D0)
    return D0, A.truth(D0)


# -- shifts and bit fields ---------------------------------------------------------------------------


def _shift(kind, bits):
    def fn(A, S0, S1):
        D0 = getattr(A, kind)(S0, S1, bits)
        return D0, A.truth(D0, bits)
    return fn


for _kind, _name in (("shl", "lshl"), ("lshr", "lshr"), ("ashr", "ashr")):
    _t = "i" if _kind == "ashr" else "b"
    define(f"s_{_name}_{_t}32", "D0.u32, SCC = S0.u32, S1.u32", _shift(_kind, 32))
    define(f"s_{_name}_{_t}64", "D0.u64, SCC = S0.u64, S1.u32", _shift(_kind, 64))


def _lshl_add(n):
    def fn(A, S0, S1):
        # tmp = (64'U(S0.u32) << nU) + 64'U(S1.u32); SCC = tmp >= 0x100000000ULL; D0.u32 = tmp.u32
        tmp = A.add(A.shl(A.zext(S0), A.const(n), 64), A.zext(S1), 64)
        return A.lo(tmp), A.cmp("ge", tmp, A.const(1 << 32, 64), bits=64)
    return fn


for _n in (1, 2, 3, 4):
    define(f"s_lshl{_n}_add_u32", "D0.u32, SCC = S0.u32, S1.u32", _lshl_add(_n))


def _bfe(signed, bits):
    def fn(A, S0, S1):
        # D0 = (S0 >> S1[4 : 0]) & ((1 << S1[22 : 16]) - 1), sign-extended for _i32; SCC = D0 != 0
        width = A.and_(A.lshr(S1, A.const(16)), A.const(0x7F))
        D0 = A.bfe(S0, S1, width, signed, bits)
        return D0, A.truth(D0, bits)
    return fn


define("s_bfe_u32", "D0.u32, SCC = S0.u32, S1.u32", _bfe(False, 32))
define("s_bfe_i32", "D0.u32, SCC = S0.u32, S1.u32", _bfe(True, 32))
define("s_bfe_u64", "D0.u64, SCC = S0.u64, S1.u32", _bfe(False, 64))
define("s_bfe_i64", "D0.u64, SCC = S0.u64, S1.u32", _bfe(True, 64))


@op("s_bfm_b32", "D0.u32 = S0.u32, S1.u32")
def _bfm(A, S0, S1):
    # D0.u32 = ((1U << S0[4 : 0].u32) - 1U) << S1[4 : 0].u32
    return (A.shl(A.sub(A.shl(A.const(1), S0), A.const(1)), S1),)


@op("s_pack_ll_b32_b16", "D0.u32 = S0.u32, S1.u32")
def _pack_ll(A, S0, S1):
    return (A.or_(A.and_(S0, A.const(0xFFFF)), A.shl(S1, A.const(16))),)


@op("s_pack_lh_b32_b16", "D0.u32 = S0.u32, S1.u32")
def _pack_lh(A, S0, S1):
    return (A.or_(A.and_(S0, A.const(0xFFFF)), A.and_(S1, A.const(0xFFFF0000))),)


@op("s_pack_hh_b32_b16", "D0.u32 = S0.u32, S1.u32")
def _pack_hh(A, S0, S1):
    return (A.or_(A.lshr(S0, A.const(16)), A.and_(S1, A.const(0xFFFF0000))),)


@op("s_bitset0_b32", "D0.u32 = S0.u32, D0.u32")
def _bitset0(A, S0, D0):
    return (A.and_(D0, A.not_(A.shl(A.const(1), S0))),)


@op("s_bitset1_b32", "D0.u32 = S0.u32, D0.u32")
def _bitset1(A, S0, D0):
    return (A.or_(D0, A.shl(A.const(1), S0)),)


# -- bitwise logic ---------------------------------------------------------------------------------

LOGIC = {  # the guide's expression of each logic opcode on S0, S1
    "and": lambda A, a, b, n: A.and_(a, b, n),
    "or": lambda A, a, b, n: A.or_(a, b, n),
    "xor": lambda A, a, b, n: A.xor(a, b, n),
    "nand": lambda A, a, b, n: A.not_(A.and_(a, b, n), n),
    "nor": lambda A, a, b, n: A.not_(A.or_(a, b, n), n),
    "xnor": lambda A, a, b, n: A.not_(A.xor(a, b, n), n),
    "and_not1": lambda A, a, b, n: A.and_(a, A.not_(b, n), n),
    "or_not1": lambda A, a, b, n: A.or_(a, A.not_(b, n), n),
    "and_not0": lambda A, a, b, n: A.and_(A.not_(a, n), b, n),
    "or_not0": lambda A, a, b, n: A.or_(A.not_(a, n), b, n),
}


def _logic(name, bits):
    f = LOGIC[name]

    def fn(A, S0, S1):
        D0 = f(A, S0, S1, bits)
        return D0, A.truth(D0, bits)
    return fn


for _name in ("and", "or", "xor", "nand", "nor", "xnor", "and_not1", "or_not1"):
    define(f"s_{_name}_b32", "D0.u32, SCC = S0.u32, S1.u32", _logic(_name, 32))
    define(f"s_{_name}_b64", "D0.u64, SCC = S0.u64, S1.u64", _logic(_name, 64))


def _saveexec(name, bits, writes_new):
    f = LOGIC[name]

    def fn(A, S0, EXEC):
        # saveexec = EXEC; EXEC = S0 OP EXEC; D0 = saveexec (the wrexec forms: D0 = EXEC); SCC = EXEC != 0
        new = f(A, S0, EXEC, bits)
        return new, (new if writes_new else EXEC), A.truth(new, bits)
    return fn


for _name in ("and", "or", "xor", "nand", "nor", "xnor", "and_not0", "and_not1", "or_not0", "or_not1"):
    for _bits, _t in ((32, "u32"), (64, "u64")):
        define(f"s_{_name}_saveexec_b{_bits}", f"EXEC.{_t}, D0.{_t}, SCC = S0.{_t}, EXEC.{_t}",
               _saveexec(_name, _bits, False))
for _name in ("and_not0", "and_not1"):
    for _bits, _t in ((32, "u32"), (64, "u64")):
        define(f"s_{_name}_wrexec_b{_bits}", f"EXEC.{_t}, D0.{_t}, SCC = S0.{_t}, EXEC.{_t}",
               _saveexec(_name, _bits, True))

# -- compares --------------------------------------------------------------------------------------


def _compare(rel, signed, bits=32):
    def fn(A, S0, S1):
        return (A.cmp(rel, S0, S1, signed=signed, bits=bits),)
    return fn


for _rel in ("eq", "lg", "gt", "ge", "lt", "le"):
    _r = "ne" if _rel == "lg" else _rel
    for _t in ("i32", "u32"):
        define(f"s_cmp_{_rel}_{_t}", "SCC = S0.u32, S1.u32", _compare(_r, _t == "i32"))
        # SCC = S0.u32 == 32'U(SIMM16.u16) / S0.i32 == 32'I(signext(SIMM16.i16))
        define(f"s_cmpk_{_rel}_{_t}", f"SCC = S0.u32, SIMM16.{'i16' if _t == 'i32' else 'u16'}",
               _compare(_r, _t == "i32"))
define("s_cmp_eq_u64", "SCC = S0.u64, S1.u64", _compare("eq", False, 64))
define("s_cmp_lg_u64", "SCC = S0.u64, S1.u64", _compare("ne", False, 64))


def _bitcmp(value, bits):
    def fn(A, S0, S1):
        # SCC = S0.u32[S1.u32[4 : 0]] == 1'0U (bitcmp0) / 1'1U (bitcmp1)
        bit = A.and_(A.lshr(S0, S1, bits), A.const(1, bits), bits)
        return (A.cmp("eq", bit, A.const(value, bits), bits=bits),)
    return fn


for _v in (0, 1):
    define(f"s_bitcmp{_v}_b32", "SCC = S0.u32, S1.u32", _bitcmp(_v, 32))
    define(f"s_bitcmp{_v}_b64", "SCC = S0.u64, S1.u32", _bitcmp(_v, 64))
