"""The affine algebra: the operations of :mod:`isalint.isa.semantics` on :class:`~.words.Word` values.

The evaluator (:mod:`.evaluator`) binds each statement's definition to its operands and evaluates
it on :class:`AffineAlgebra`, which holds the evaluator as its context (it reads lane values and makes
atoms). Ring operations (add, sub, mul_lo, shifts left) stay exact on ``low`` words for any values;
a carry-out is a ``carry`` word that the ``*_co_ci``/``addc`` that follows reads as a 64-bit add, so
that ``v[a:a+1]`` of an address chain becomes one polynomial. A 64-bit value is a :class:`~.words.W64`
(its two words). Anything else (bit operations whose fields could overlap, shifts right of mixed
values, selects) is evaluated only when it is exact for every lane, else the result is unknown and
says why, or, for a wave-uniform result, a fresh uniform atom.
"""
from __future__ import annotations

from ...isa.semantics.algebra import NO_CARRY, Algebra
from .poly import Poly
from .words import INT32, MASK32, UINT32, W64, Cond, Pred, Wide, Word, high, low, unknown


def conds_of(*words) -> frozenset:
    out: frozenset = frozenset()
    for w in words:
        out |= w.conds
    return out


def _const(w: Word) -> int | None:
    if w.kind == "low" and w.poly.is_const:
        return w.poly.constant & MASK32
    return None


_PREDS = {"lt": ("lt", False), "le": ("le", False), "gt": ("lt", True), "ge": ("le", True), "eq": ("eq", False),
          "ne": ("ne", False)}


class AffineAlgebra(Algebra):
    """Operations on words for the evaluator ``ctx``; :meth:`begin` names the statement evaluated."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.what = ""
        self.line = 0
        self.defs: list[str] = []
        self._names: set[str] | None = None

    def begin(self, what: str, line: int, defs: list[str]) -> tuple:
        """Start evaluating a statement; returns what :meth:`end` restores (evaluating one statement can
        evaluate others: the words it reads)."""
        saved = (self.what, self.line, self.defs, self._names)
        self.what, self.line, self.defs, self._names = what, line, defs, set()
        return saved

    def end(self, saved: tuple) -> None:
        self.what, self.line, self.defs, self._names = saved

    def _atom(self, name: str, origin: str, lo=None, hi=None, twos: int = 0) -> Poly:
        """A uniform atom; each made while one statement is evaluated has its own name."""
        if self._names is not None:
            base, k = name, 1
            while name in self._names:
                k += 1
                name = f"{base}#{k}"
            self._names.add(name)
        return self.ctx.uniform_atom(name, origin, lo, hi, twos)

    # -- helpers ------------------------------------------------------------------------------
    @staticmethod
    def first_unknown(*words) -> Word | None:
        return next((w for w in words if not w.known), None)

    def lows(self, *words) -> list[Poly] | Word:
        bad = self.first_unknown(*words)
        if bad is not None:
            return bad
        for w in words:
            if w.kind != "low":
                return unknown(f"{self.what} reads a {w.kind} word as a 32-bit integer")
        return [w.poly for w in words]

    def widen(self, lo: Poly, hi: Word, line: int) -> Wide | None:
        """The 64-bit value whose low word is ``lo`` and high word ``hi``."""
        if hi.kind == "high" and hi.poly.congruent(lo, 32):
            return Wide(hi.poly, hi.conds)
        if hi.kind == "low":
            cond = self.range_cond(lo, 0, MASK32, line, "zero-extends a 32-bit value to 64 bits")
            return Wide(lo + hi.poly * (1 << 32), hi.conds | cond)
        return None

    def range_cond(self, p: Poly, lo: int, hi: int, line: int, what: str, kind: str = "range") -> frozenset:
        """No condition when the lane values already prove it, else the condition."""
        vals = self.ctx.lane_values(p)
        if vals is not None and min(vals) >= lo and max(vals) <= hi:
            return frozenset()
        return frozenset({Cond(p, lo, hi, line, what, kind)})

    def split_low(self, p: Poly) -> tuple[Poly, Poly, int]:
        """(part with a uniform atom in every monomial, lane-only part with the constant, the number
        of trailing zero bits every value of the first part has)."""
        lane = self.ctx.is_lane_atom
        a, b = p.split(lambda m: bool(m) and not all(lane(x) for x in m))
        twos = self.ctx.twos()
        k = min((_mono_twos(mono, c, twos) for mono, c in a.terms), default=32)
        return a, b, k

    def _ring(self, fn, *words) -> Word:
        ps = self.lows(*words)
        if isinstance(ps, Word):
            return ps
        return low(fn(*ps), conds_of(*words))

    def _with(self, w: Word, *words) -> Word:
        """``w`` with the conditions of ``words`` added (unknown stays as it is)."""
        return Word(w.kind, w.poly, w.conds | conds_of(*words), w.reason) if w.known else w

    def _uniform_or_unknown(self, reason: str, *words) -> Word:
        defs, line = self.defs, self.line
        if defs and defs[0].startswith("s") and not defs[0].startswith("scc"):
            return low(self._atom(f"{defs[0]}@{line}", f"{defs[0]} written at line {line}"))
        if all(w.kind == "low" and self.ctx.is_uniform(w.poly) for w in words):
            return low(self._atom(f"{defs[0] if defs else 'value'}@{line}", reason))
        return unknown(reason)

    # -- the algebra ---------------------------------------------------------------------------
    def unknown(self, what: str) -> Word:
        return unknown(f"{self.what} is not an operation isalint follows")

    def const(self, c: int, bits: int = 32):
        if bits == 64:
            return W64(low(c & MASK32), low(c >> 32))
        return low(c & MASK32)

    def add(self, a, b, bits: int = 32):
        if bits == 64:
            return self._add64(a, b, 1)
        return self._ring(lambda x, y: x + y, a, b)

    def sub(self, a, b, bits: int = 32):
        if bits == 64:
            return self._add64(a, b, -1)
        return self._ring(lambda x, y: x - y, a, b)

    def mul(self, a, b, bits: int = 32):
        if bits == 64:
            lo = self._ring(lambda x, y: x * y, a.lo, b.lo)
            wa, wb = self._wide(a), self._wide(b)
            if lo.known and wa.known and wb.known:
                w = Wide(wa.poly * wb.poly, wa.conds | wb.conds)
                return W64(lo, high(w.poly, w.conds), w)
            return W64(lo, unknown(f"high half of {self.what}"))
        return self._ring(lambda x, y: x * y, a, b)

    def _add64(self, a: W64, b: W64, sign: int) -> W64:
        lo = self._ring(lambda x, y: x + sign * y, a.lo, b.lo)
        wa, wb = self._wide(a), self._wide(b)
        if lo.known and wa.known and wb.known:
            w = Wide(wa.poly + sign * wb.poly, wa.conds | wb.conds)
            return W64(lo, high(w.poly, w.conds), w)
        return W64(lo, unknown(f"high half of {self.what}"))

    def _wide(self, x: W64) -> Wide:
        """The 64-bit value of a pair of words, with the conditions that make it exact."""
        if x.wide is not None:
            return x.wide
        for w in (x.lo, x.hi):
            if not w.known:
                return Wide(None, reason=w.reason)
        if x.lo.kind != "low":
            return Wide(None, reason=f"the low word of a 64-bit value at line {self.line} is a {x.lo.kind} word")
        w = self.widen(x.lo.poly, x.hi, self.line)
        if w is None:
            return Wide(None, reason=f"the two words of a 64-bit value at line {self.line} do not belong together")
        return Wide(w.poly, w.conds | x.lo.conds)

    def zext(self, x: Word) -> W64:
        if x.kind != "low":
            return W64(x, x)
        cond = self.range_cond(x.poly, UINT32[0], UINT32[1], self.line, "zero-extends a 32-bit value to 64 bits")
        return W64(x, low(0), Wide(x.poly, x.conds | cond))

    def sext(self, x: Word, width: int, bits: int = 32):
        if width == 32 and bits == 64:
            if x.kind != "low":
                return W64(x, x)
            cond = self.range_cond(x.poly, INT32[0], INT32[1], self.line, "sign-extends a 32-bit value to 64 bits",
                                   "index")
            return W64(x, high(x.poly, x.conds | cond), Wide(x.poly, x.conds | cond))
        ps = self.lows(x)
        if isinstance(ps, Word):
            return ps
        if self.range_cond(ps[0], 0, (1 << (width - 1)) - 1, self.line, ""):  # not proven below the sign bit
            return unknown(f"{self.what} sign-extends a {width}-bit field isalint cannot bound")
        return x

    def u24(self, x: Word) -> Word:
        ps = self.lows(x)
        if isinstance(ps, Word):
            return ps
        return low(ps[0], x.conds | self.range_cond(ps[0], 0, (1 << 24) - 1, self.line,
                                                    "is a 24-bit multiply operand"))

    def i24(self, x: Word) -> Word:
        ps = self.lows(x)
        if isinstance(ps, Word):
            return ps
        return low(ps[0], x.conds | self.range_cond(ps[0], -(1 << 23), (1 << 23) - 1, self.line,
                                                    "is a 24-bit multiply operand"))

    def lo(self, x):
        return x.lo if isinstance(x, W64) else x

    def hi(self, x):
        return x.hi if isinstance(x, W64) else unknown(f"high half of {self.what}")

    # -- carries ---------------------------------------------------------------------------------
    def add_co(self, a, b, carry_in=NO_CARRY, bits: int = 32, signed: bool = False):
        if bits == 64:
            return self._add64(a, b, 1), unknown(f"carry-out of {self.what}")
        return self._carry(a, b, carry_in, False)

    def sub_co(self, a, b, borrow_in=NO_CARRY):
        return self._carry(a, b, borrow_in, True)

    def _carry(self, a: Word, b: Word, cin, sub: bool):
        if cin is NO_CARRY:
            ps = self.lows(a, b)
            if isinstance(ps, Word):
                return ps, ps
            res = low(ps[0] - ps[1] if sub else ps[0] + ps[1], conds_of(a, b))
            return res, Word("carry", conds=conds_of(a, b), carry=(ps[0], ps[1], sub))
        return self._carry_high(a, b, cin, sub), unknown(f"carry-out of {self.what}")

    def _carry_high(self, a: Word, b: Word, cin: Word, sub: bool) -> Word:
        what, line = self.what, self.line
        if cin.kind != "carry" or cin.carry[2] != sub:
            return unknown(f"{what} adds a carry isalint cannot pair with its low half")
        pa, pb, _ = cin.carry
        for x, y in ((a, b), (b, a)) if not sub else ((a, b),):
            wa, wb = self.widen(pa, x, line), self.widen(pb, y, line)
            if wa is not None and wb is not None:
                q = wa.poly - wb.poly if sub else wa.poly + wb.poly
                return high(q, wa.conds | wb.conds | cin.conds)
        return unknown(f"{what}: the high words do not belong to the values of the low add")

    # -- bits ----------------------------------------------------------------------------------------
    def and_(self, a, b, bits: int = 32):
        if bits == 64:
            return W64(self.and_(a.lo, b.lo), self.and_(a.hi, b.hi))
        if "exec" in (a.kind, b.kind):  # exec & mask: the mask in the active lanes
            mask = b if a.kind == "exec" else a
            if mask.kind == "mask":
                return Word("execand", conds=mask.conds, pred=mask.pred)
            return unknown(f"an exec mask isalint does not follow ({self.what})")
        ps = self.lows(a, b)
        if isinstance(ps, Word):
            return ps
        conds = conds_of(a, b)
        ca, cb = _const(a), _const(b)
        if ca is None and cb is None:
            if self.ctx.lane_values(ps[0]) is not None and self.ctx.lane_values(ps[1]) is not None:
                return low(self.ctx.lane_atom("and", ps[0], ps[1], self.line), conds)
            return self._uniform_or_unknown(f"{self.what} masks with a runtime value", a, b)
        p, c = (ps[1], ca) if ca is not None else (ps[0], cb)
        return self._with(self.band(p, c, self.line), a, b)

    def or_(self, a, b, bits: int = 32):
        if bits == 64:
            return W64(self.or_(a.lo, b.lo), self.or_(a.hi, b.hi))
        return self._bitwise(a, b, "or")

    def xor(self, a, b, bits: int = 32):
        if bits == 64:
            return W64(self.xor(a.lo, b.lo), self.xor(a.hi, b.hi))
        return self._bitwise(a, b, "xor")

    def _bitwise(self, a: Word, b: Word, op: str) -> Word:
        ps = self.lows(a, b)
        if isinstance(ps, Word):
            return ps
        return self._with(self.bor(ps[0], ps[1], self.line, op), a, b)

    def not_(self, a, bits: int = 32):
        if bits == 64:
            return W64(self.not_(a.lo), self.not_(a.hi))
        if a.kind == "mask":
            return Word("mask", conds=a.conds, pred=a.pred.negate())
        return self._ring(lambda x: -x - 1, a)  # ~x = -x - 1 (mod 2**32)

    def shl(self, a, n, bits: int = 32):
        if bits == 64:
            return self._shl64(a, n)
        ps = self.lows(a)
        if isinstance(ps, Word):
            return ps
        c = _const(n)
        if c is None:
            return unknown(f"{self.what} shifts by a runtime amount")
        return low(ps[0] * (1 << (c & 31)), a.conds)

    def _shl64(self, a: W64, n: Word) -> W64:
        c = _const(n)
        why = f"{self.what} shifts by a runtime amount"
        if c is None:
            return W64(unknown(why), unknown(why))
        c &= 63
        if a.wide is not None:  # a zero- or sign-extended word: its low word stays exact
            q = a.wide.poly * (1 << c)
            lo = low(a.lo.poly * (1 << c), a.lo.conds) if c < 32 else low(0)
            return W64(lo, high(q, a.wide.conds), Wide(q, a.wide.conds))
        w = self._wide(a)
        if not w.known:
            return W64(unknown(w.reason), unknown(w.reason))
        q = w.poly * (1 << c)
        return W64(low(q, w.conds), high(q, w.conds), Wide(q, w.conds))

    def lshr(self, a, n, bits: int = 32):
        return self._shift_right(a, n, bits, False)

    def ashr(self, a, n, bits: int = 32):
        return self._shift_right(a, n, bits, True)

    def _shift_right(self, a, n, bits: int, signed: bool):
        if bits == 64:
            why = f"{self.what} shifts a 64-bit value right"
            return W64(unknown(why), unknown(why))
        ps = self.lows(a)
        if isinstance(ps, Word):
            return ps
        c = _const(n)
        if c is None:
            return self._uniform_or_unknown(f"{self.what} shifts by a runtime amount", a, n)
        c &= 31
        if signed and c == 31:
            cond = self.range_cond(ps[0], INT32[0], INT32[1], self.line, "sign-extends a 32-bit index", "index")
            return high(ps[0], a.conds | cond)
        return self._with(self.lshr_poly(ps[0], c, self.line, signed), a)

    def bfe(self, a, offset, width, signed: bool = False, bits: int = 32):
        what, line = self.what, self.line
        if bits == 64:
            return W64(unknown(f"{what} extracts a 64-bit field"), unknown(f"{what} extracts a 64-bit field"))
        off, w = _const(offset), _const(width)
        ps = self.lows(a)
        if isinstance(ps, Word):
            return ps
        if off is None or w is None:
            return self._uniform_or_unknown(f"{what} extracts a runtime field", a)
        off &= 31
        w = min(w, 32)
        if self.ctx.lane_values(ps[0]) is not None:
            return low(self.ctx.lane_atom("bfe_i" if signed else "bfe_u", ps[0], Poly.const(off | w << 8), line))
        shifted = self.lshr_poly(ps[0], off, line)
        if not shifted.known or signed:
            return self._uniform_or_unknown(f"{what} extracts a field of a mixed value", a)
        got = self.band(shifted.poly, (1 << w) - 1 if w < 32 else MASK32, line)
        return self._with(got, a) if not got.known else \
            Word(got.kind, got.poly, got.conds | shifted.conds | a.conds, got.reason)

    # -- conditions ------------------------------------------------------------------------------------
    def cmp(self, rel: str, a, b, signed: bool = False, bits: int = 32) -> Word:
        if bits == 64 or rel not in _PREDS:
            return unknown(f"{self.what} compares values isalint does not follow")
        ps = self.lows(a, b)
        if isinstance(ps, Word):
            return ps
        rng = INT32 if signed else UINT32
        conds = conds_of(a, b)
        for p in ps:
            conds |= self.range_cond(p, rng[0], rng[1], self.line, "is compared as a 32-bit integer")
        op, swap = _PREDS[rel]
        pa, pb = ps[::-1] if swap else ps
        return Word("pred", conds=conds, pred=Pred(op, pa, pb, signed))

    def select(self, cond, t, f):
        if isinstance(t, W64):
            return W64(self.select(cond, t.lo, f.lo), self.select(cond, t.hi, f.hi))
        ct, cf = _const(t), _const(f)
        if cond.kind == "pred" and {ct, cf} == {0, MASK32}:  # s_cselect_b32 -1, 0 of a compare: a mask
            p = cond.pred if ct == MASK32 else cond.pred.negate()
            return Word("mask", conds=cond.conds, pred=p)
        if t.same(f):
            return t
        scalar = self.defs and self.defs[0].startswith("s") and not self.defs[0].startswith("scc")
        if scalar or cond.kind in ("pred", "mask", "execand"):  # one condition for the whole wave
            return self._uniform_or_unknown(f"the select at line {self.line}", t, f)
        return unknown(f"{self.what} selects per lane with a condition isalint does not follow")

    # -- the bit-level helpers (on polynomials) ------------------------------------------------------------
    def bor(self, p: Poly, q: Poly, line: int, op: str = "or") -> Word:
        lane_p, lane_q = self.ctx.lane_values(p), self.ctx.lane_values(q)
        if lane_p is not None and lane_q is not None:
            if op in ("or", "xor") and all((x & y) & MASK32 == 0 for x, y in zip(lane_p, lane_q)) \
                    and min(lane_p) >= 0 and min(lane_q) >= 0:
                return low(p + q)  # no common bit in any lane: the or is a sum
            return low(self.ctx.lane_atom(op, p, q, line))
        for x, y, ly in ((p, q, lane_q), (q, p, lane_p)):
            if ly is None:
                continue
            a, b, k = self.split_low(x)
            lb = self.ctx.lane_values(b)
            if lb is None or min(ly) < 0 or min(lb) < 0:
                continue
            # x = a + b with a a multiple of 2**k; y and b below 2**k: the bit fields do not overlap
            if max(ly) < (1 << k) and max(lb) < (1 << k):
                inner = y if b == Poly() else self.ctx.lane_atom(op, b, y, line)
                return low(a + inner)
        if self.ctx.is_uniform(p) and self.ctx.is_uniform(q):
            return low(self._atom(f"{op}@{line}", f"a bitwise {op} at line {line}"))
        return unknown(f"the {op} at line {line} mixes per-lane and uniform bits that may overlap")

    def band(self, p: Poly, c: int, line: int) -> Word:
        if self.ctx.lane_values(p) is not None:
            return low(self.ctx.lane_atom("and", p, Poly.const(c), line))
        a, b, k = self.split_low(p)
        lb = self.ctx.lane_values(b)
        if lb is not None and min(lb) >= 0 and max(lb) < (1 << k):
            below = (1 << k) - 1
            if c & ~below & MASK32 == 0:
                return low(self.ctx.lane_atom("and", b, Poly.const(c), line))
            if (c | below) & MASK32 == MASK32:
                return low(a + self.ctx.lane_atom("and", b, Poly.const(c), line))
        if self.ctx.is_uniform(p):
            return low(self._atom(f"and@{line}", f"a bitwise and at line {line}", lo=0, hi=c,
                                  twos=_mono_twos((), c, {})))
        return unknown(f"the and at line {line} masks bits that mix per-lane and uniform values")

    def lshr_poly(self, p: Poly, n: int, line: int, signed: bool = False) -> Word:
        if n == 0:
            return low(p)
        if self.ctx.lane_values(p) is not None:
            return low(self.ctx.lane_atom("ashr" if signed else "lshr", p, Poly.const(n), line))
        a, b, _ = self.split_low(p)
        divisible = all(c % (1 << n) == 0 for _, c in a.terms)
        lb = self.ctx.lane_values(b)
        if divisible and lb is not None and min(lb) >= 0:
            hi = INT32[1] if signed else MASK32
            cond = Cond(p, 0, hi, line, "shifts right a value that must not wrap")
            rest = Poly() if max(lb) < (1 << n) else self.ctx.lane_atom("lshr", b, Poly.const(n), line)
            return low(Poly([(m, c >> n) for m, c in a.terms]) + rest, {cond})
        if self.ctx.is_uniform(p):
            return low(self._atom(f"shr@{line}", f"a shift right at line {line}"))
        return unknown(f"the shift right at line {line} mixes per-lane and uniform bits")


def _mono_twos(mono, c: int, twos) -> int:
    k = 64 if c == 0 else (c & -c).bit_length() - 1
    return min(32, k + sum(twos.get(a, 0) for a in mono))
