"""The operations an opcode's meaning is written in, and the values they act on.

An :class:`Algebra` is one way of computing: numbers of numpy arrays (the emulator), exact Python
integers that may be unknown (:mod:`.exact`, the estimate's scalar walk), per-lane values with
wave-uniform symbols (:mod:`isalint.model.lanes`), polynomials over kernel arguments and thread ids
(:mod:`isalint.model.affine`). The definitions of :mod:`.salu` and :mod:`.valu` only call these
methods; what a value *is* belongs to the algebra.

Conventions, as in the RDNA3 ISA guide's pseudocode:

* integer values are bit patterns of ``bits`` (32 or 64) bits; an operation that depends on the sign
  says so (``signed=True``) instead of the value carrying it. A shift amount is taken modulo the width
  (the guide's ``S1[4 : 0]``), as every shift of the ISA does.
* a *condition* (the result of a compare, SCC, one lane's bit of VCC or EXEC) is a value of its own
  kind that :meth:`select` chooses with and that the binding writes into SCC or into the lane's bit
  of a lane mask (``VCC.u64[laneId]``);
* ``f32``/``f64`` values are floats; the float operations are named after the guide's functions
  (``fma``, ``f32_to_u32``, ``pow(2.0F, x)`` as :meth:`exp2` ...).

Every method here returns :meth:`unknown`: an algebra implements what it can evaluate and leaves the
rest unknown, so that one definition serves all of them.
"""
from __future__ import annotations

# The carry-in of an add that has none (``s_add_u32``), told apart from an unknown one.
NO_CARRY = type("NoCarry", (), {"__repr__": lambda self: "NO_CARRY"})()


class Algebra:
    """Operations on values; the defaults know nothing."""

    #: lanes of a wave (32 or 64) where an operation needs it (``laneId``, ``readlane``)
    wave_size = 32

    def unknown(self, what: str):
        """A value this algebra cannot compute (``what``: the operation, for messages)."""
        raise NotImplementedError

    # -- constants and widths ------------------------------------------------------------------
    def const(self, c: int, bits: int = 32):
        return self.unknown("a constant")

    def zext(self, x):
        """32 -> 64 bits, zero-extended (the guide's ``64'U(x)``)."""
        return self.unknown("a zero extension")

    def sext(self, x, width: int, bits: int = 32):
        """The low ``width`` bits of ``x``, sign-extended to ``bits`` (``signext(x[width-1 : 0])``)."""
        return self.unknown("a sign extension")

    def u24(self, x):
        """The guide's ``S0.u24``: the low 24 bits of a multiply operand."""
        return self.and_(x, self.const(0xFF_FFFF))

    def i24(self, x):
        """The guide's ``S0.i24``: the low 24 bits, sign-extended."""
        return self.sext(x, 24)

    def lo(self, x):
        """Bits 31..0 of a 64-bit value (``x.u32``, ``x[31 : 0]``)."""
        return self.unknown("the low half of a 64-bit value")

    def hi(self, x):
        """Bits 63..32 of a 64-bit value (``x[63 : 32]``)."""
        return self.unknown("the high half of a 64-bit value")

    # -- integer arithmetic --------------------------------------------------------------------
    def add(self, a, b, bits: int = 32):
        return self.unknown("an add")

    def sub(self, a, b, bits: int = 32):
        return self.unknown("a subtract")

    def mul(self, a, b, bits: int = 32):
        """The low ``bits`` bits of the product."""
        return self.unknown("a multiply")

    def mul_hi(self, a, b, signed: bool = False):
        """Bits 63..32 of the 64-bit product of two 32-bit values."""
        return self.unknown("a high multiply")

    def add_co(self, a, b, carry_in=NO_CARRY, bits: int = 32, signed: bool = False):
        """(sum, carry-out): the guide's ``tmp = 64'U(S0) + 64'U(S1) + carry; carry = tmp >= 2**32``
        (for ``signed``: bit ``bits`` of the sum of the sign-extended values)."""
        u = self.unknown("an add with carry")
        return u, u

    def sub_co(self, a, b, borrow_in=NO_CARRY):
        """(difference, borrow-out) of 32-bit values: ``borrow = b + borrow_in > a``."""
        u = self.unknown("a subtract with borrow")
        return u, u

    def min(self, a, b, signed: bool = False):
        return self.unknown("a minimum")

    def max(self, a, b, signed: bool = False):
        return self.unknown("a maximum")

    # -- bits ------------------------------------------------------------------------------------
    def and_(self, a, b, bits: int = 32):
        return self.unknown("a bitwise and")

    def or_(self, a, b, bits: int = 32):
        return self.unknown("a bitwise or")

    def xor(self, a, b, bits: int = 32):
        return self.unknown("a bitwise xor")

    def not_(self, a, bits: int = 32):
        return self.unknown("a bitwise not")

    def shl(self, a, n, bits: int = 32):
        return self.unknown("a shift left")

    def lshr(self, a, n, bits: int = 32):
        return self.unknown("a logical shift right")

    def ashr(self, a, n, bits: int = 32):
        return self.unknown("an arithmetic shift right")

    def bfe(self, a, offset, width, signed: bool = False, bits: int = 32):
        """``width`` bits of ``a`` from bit ``offset`` (taken modulo ``bits``); a width of ``bits`` or
        more is all of them. Signed: the field sign-extended."""
        return self.unknown("a bit-field extract")

    def popcount(self, a):
        return self.unknown("a bit count")

    def brev(self, a):
        return self.unknown("a bit reverse")

    def clz(self, a):
        """Leading zeros of a 32-bit value; 0xFFFFFFFF for 0 (``S_CLZ_I32_U32``)."""
        return self.unknown("a leading-zero count")

    def ctz(self, a):
        """Trailing zeros of a 32-bit value; 0xFFFFFFFF for 0 (``S_CTZ_I32_B32``)."""
        return self.unknown("a trailing-zero count")

    # -- conditions ----------------------------------------------------------------------------------
    def cmp(self, rel: str, a, b, signed: bool = False, bits: int = 32):
        """``a REL b`` on integers: ``rel`` is eq, ne, lt, le, gt, ge, or f/t (never, always)."""
        return self.unknown("a compare")

    def select(self, cond, t, f):
        """``cond ? t : f``."""
        return self.unknown("a select")

    def truth(self, value, bits: int = 32):
        """The condition ``value != 0`` (how SCC reads a result: ``SCC = D0.u32 != 0U``)."""
        return self.cmp("ne", value, self.const(0, bits), bits=bits)

    # -- lanes ---------------------------------------------------------------------------------------
    def thread_mask(self):
        """The guide's ``ThreadMask = (1LL << laneId.u32) - 1LL``: 64 bits, one per lower lane."""
        return self.unknown("the lanes below a lane")

    def readlane(self, a, lane):
        """``VGPR[lane][a]``: lane ``lane`` (modulo the wave size) of a vector value, as a scalar."""
        return self.unknown("a read of another lane")

    def writelane(self, old, value, lane):
        """``old`` with lane ``lane`` (modulo the wave size) replaced by the scalar ``value``."""
        return self.unknown("a write of one lane")

    # -- floats -------------------------------------------------------------------------------------
    def fadd(self, a, b):
        return self.unknown("a float add")

    def fsub(self, a, b):
        return self.unknown("a float subtract")

    def fmul(self, a, b):
        return self.unknown("a float multiply")

    def fma(self, a, b, c):
        """``fma(a, b, c)``: one rounding."""
        return self.unknown("a fused multiply-add")

    def fmul_legacy(self, a, b):
        """The DX9 multiply: 0 when either factor is 0 (even times inf or NaN)."""
        return self.unknown("a DX9 multiply")

    def fma_legacy(self, a, b, c):
        """The DX9 fused multiply-add: ``c`` (+0) when either factor is 0."""
        return self.unknown("a DX9 fused multiply-add")

    def fmax(self, a, b):
        """IEEE maximum: a NaN operand yields the other one; +0 > -0."""
        return self.unknown("a float maximum")

    def fmin(self, a, b):
        return self.unknown("a float minimum")

    def fmed3(self, a, b, c):
        """The median, or the minimum when an input is NaN (``V_MED3_F32``)."""
        return self.unknown("a float median")

    def fcmp(self, rel: str, a, b):
        """A float compare by its VOPC name: lt eq le gt lg ge o u nge nlg ngt nle neq nlt f t."""
        return self.unknown("a float compare")

    def fclass(self, a, mask):
        """``V_CMP_CLASS_F32``: whether ``a``'s class (signalling/quiet NaN, -inf ... +inf) is in the
        10-bit ``mask``."""
        return self.unknown("a float class test")

    def floor(self, a):
        return self.unknown("a floor")

    def ceil(self, a):
        return self.unknown("a ceiling")

    def trunc(self, a):
        return self.unknown("a truncation")

    def rndne(self, a):
        return self.unknown("a round to nearest even")

    def fract(self, a):
        return self.unknown("a fraction")

    def rcp(self, a):
        """``1.0F / a`` (the hardware is within 1 ulp; modelled correctly rounded)."""
        return self.unknown("a reciprocal")

    def rsq(self, a):
        return self.unknown("a reciprocal square root")

    def sqrt(self, a):
        return self.unknown("a square root")

    def exp2(self, a):
        """``pow(2.0F, a)``."""
        return self.unknown("a power of two")

    def log2(self, a):
        return self.unknown("a base-2 logarithm")

    def ldexp(self, a, e):
        """``a * 2.0F ** e`` with ``e`` a signed 32-bit integer."""
        return self.unknown("a scaling by a power of two")

    def convert(self, to: str, frm: str, a):
        """The guide's ``f32_to_u32``, ``i32_to_f32``, ``f32_to_f64`` ...: ``to``/``frm`` are types."""
        return self.unknown(f"a conversion {frm}_to_{to}")
