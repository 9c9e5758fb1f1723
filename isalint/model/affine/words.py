"""What the affine evaluator knows about one register, one register pair, one atom.

A 32-bit register is a :class:`Word`:

* ``low``: the register holds ``poly mod 2**32`` (every ring operation of the ISA, ``add``,
  ``sub``, ``mul_lo``, ``lshl``, keeps this form whatever the values, since the map from the
  integers to 32-bit words respects them);
* ``high``: the register holds bits 32..63 of ``poly mod 2**64`` (the high half of a 64-bit
  address, a sign extension ``v_ashrrev_i32 31``);
* ``carry``: the carry-out lane mask of a 32-bit add (``v_add_co_u32``, ``s_add_u32``) of two
  ``low`` words, kept so that the ``*_ci``/``addc`` that follows can be read as a 64-bit add;
* ``pred``/``mask``/``execand``: a wave-uniform condition (SCC after ``s_cmp``, ``s_cselect -1, 0``
  of it, ``exec & mask`` in VCC), for branch conditions;
* ``unknown``, with the reason.

A 64-bit value (a register pair) is a :class:`W64` of two words.

Whenever reading a word as an exact integer needs its polynomial to lie in a range (a sign or zero
extension to 64 bits, the operands of a compare or of a 24-bit multiply, two bit fields that must
not overlap) the condition is recorded as a :class:`Cond` on the result instead of being assumed.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .poly import Poly

MASK32 = (1 << 32) - 1
INT32 = (-(1 << 31), (1 << 31) - 1)
UINT32 = (0, MASK32)


@dataclass(frozen=True)
class Cond:
    """The computation at ``line`` is exact only if ``lo <= poly <= hi``.

    ``kind`` is ``index`` for a 32-bit value the original sign-extends to 64 bits (its int32
    indexing), ``range`` for everything else (zero extensions, compares, 24-bit operands, bit
    fields)."""

    poly: Poly
    lo: int
    hi: int
    line: int
    what: str
    kind: str = "range"


@dataclass(frozen=True)
class Pred:
    """``a < b`` (``op`` ``lt``), ``a <= b`` (``le``), ``a == b`` (``eq``) or ``a != b`` (``ne``),
    comparing the two 32-bit words as signed or unsigned integers."""

    op: str
    a: Poly
    b: Poly
    signed: bool

    def negate(self) -> Pred:
        flip = {"lt": ("le", True), "le": ("lt", True), "eq": ("ne", False), "ne": ("eq", False)}
        op, swap = flip[self.op]
        return Pred(op, self.b, self.a, self.signed) if swap else Pred(op, self.a, self.b, self.signed)

    def __str__(self) -> str:
        sym = {"lt": "<", "le": "<=", "eq": "==", "ne": "!="}[self.op]
        return f"{self.a} {sym} {self.b}"


@dataclass(frozen=True)
class Word:
    kind: str  # low | high | carry | pred | mask | execand | exec | unknown
    poly: Poly | None = None
    conds: frozenset = frozenset()
    reason: str = ""
    carry: tuple | None = None  # (Pa, Pb, subtract) of the 32-bit add/sub whose carry/borrow this is
    pred: Pred | None = None

    @property
    def known(self) -> bool:
        return self.kind != "unknown"

    def same(self, other: Word) -> bool:
        return (self.kind, self.poly, self.carry, self.pred) == (other.kind, other.poly, other.carry, other.pred) \
            and self.known


def low(poly: Poly | int, conds=frozenset()) -> Word:
    return Word("low", poly if isinstance(poly, Poly) else Poly.const(poly), frozenset(conds))


def high(poly: Poly, conds=frozenset()) -> Word:
    return Word("high", poly, frozenset(conds))


def unknown(reason: str) -> Word:
    return Word("unknown", reason=reason)


@dataclass(frozen=True)
class Wide:
    """A 64-bit value (register pair or address): ``poly mod 2**64`` when ``conds`` hold."""

    poly: Poly | None
    conds: frozenset = frozenset()
    reason: str = ""

    @property
    def known(self) -> bool:
        return self.poly is not None


@dataclass(frozen=True)
class W64:
    """A 64-bit value as its two words, and its :class:`Wide` when it is known how the words make one
    (a zero or sign extension, a product, a shift); else :meth:`AffineAlgebra._wide` pairs them."""

    lo: Word
    hi: Word
    wide: Wide | None = None


@dataclass
class Atom:
    """A named unknown of the polynomials.

    ``lane`` atoms differ per work-item and have a value for each (``values``), with ``expr`` the
    operation that derives them from other lane polynomials (to recompute them elsewhere);
    ``uniform`` atoms are the same in every lane of a wave (kernel arguments, workgroup ids,
    values of SGPRs isalint does not follow); ``counter`` atoms are the values of an SGPR at the
    header of the analysed loop, one per iteration.
    """

    name: str
    kind: str  # lane | uniform | counter
    origin: str  # what it is, for messages
    lo: int | None = None
    hi: int | None = None
    twos: int = 0  # known trailing zero bits
    values: tuple[int, ...] | None = None
    expr: tuple | None = None  # lane atoms: (op, Poly, int)
    reg: str | None = None  # counter atoms: the SGPR
    arg: dict = field(default_factory=dict)  # kernel arguments: offset, size, value_kind
