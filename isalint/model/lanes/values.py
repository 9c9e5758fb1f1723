"""Per-lane symbolic values and the arithmetic on them.

A :class:`Value` is ``uniform part + per-lane part``:

* ``lanes``: a tuple of Python ints, one 32-bit value per work-item of the analysed workgroup
  (work-item ``t`` is lane ``t % wave_size`` of wave ``t // wave_size``); ``None`` when the value
  cannot be evaluated, with the reason in ``reason``;
* ``terms``: a linear combination of symbols, each a wave-uniform runtime value (a kernel argument,
  a workgroup id, an SGPR computed from them, a loop induction offset ...). A uniform term shifts
  every lane of a wave by the same amount, so it never changes which LDS bank two lanes share.

Symbols carry what is known about them (bounds, known trailing zero bits) so that the bit
operations compilers emit for ``%`` and ``/`` on ``threadIdx + blockIdx * tile`` (``and``, ``or``,
``lshr``, ``bfe``) can still be evaluated when the uniform and per-lane bits do not overlap.
:class:`LaneAlgebra` holds the symbols of one analysis and does that arithmetic.
"""
from __future__ import annotations

import operator

from ...isa.semantics.algebra import NO_CARRY, Algebra
from ...records import FrozenRecord, Record

MASK = 0xFFFFFFFF
MASK64 = (1 << 64) - 1
WORKGROUP_ID_LIMIT = 1 << 24
# A sum of more uniform symbols than this becomes one symbol with the sum's bounds and trailing
# zeros: chains of branches or loops would otherwise grow every later value by one term each.
MAX_TERMS = 24


class Value(FrozenRecord):
    lanes: tuple[int, ...] | None
    terms: tuple[tuple[str, int], ...]
    reason: str | None

    _fields = ("lanes", "terms", "reason")
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __init__(self, lanes: tuple[int, ...] | None, terms: tuple[tuple[str, int], ...] = (),
                 reason: str | None = None):
        self.__dict__.update(lanes=lanes, terms=terms, reason=reason)

    @property
    def known(self) -> bool:
        return self.lanes is not None

    @property
    def concrete(self) -> bool:
        """Known exactly, with no symbolic part."""
        return self.lanes is not None and not self.terms

    def same(self, other: Value) -> bool:
        if not self.known or not other.known:
            return False
        return self.terms == other.terms and self.lanes == other.lanes

    def term_dict(self) -> dict[str, int]:
        return dict(self.terms)


def make_terms(d: dict[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted((k, v) for k, v in d.items() if v != 0))


def unknown(reason: str) -> Value:
    return Value(None, (), reason)


class Symbol(Record):
    name: str
    lo: int
    hi: int
    tz: int  # known trailing zero bits
    varying: bool  # a placeholder for a per-lane value (loop header in progress)

    _fields = ("name", "lo", "hi", "tz", "varying")

    def __init__(self, name: str, lo: int = 0, hi: int = MASK, tz: int = 0, varying: bool = False):
        self.name = name
        self.lo = lo
        self.hi = hi
        self.tz = tz
        self.varying = varying


def trailing_zeros(n: int) -> int:
    if n == 0:
        return 64
    return (n & -n).bit_length() - 1



class LaneAlgebra(Algebra):
    """Arithmetic on :class:`Value` for the work-items of one thread layout
    (:class:`~isalint.model.lanes.threads.ThreadLayout`), with its table of symbols."""

    def __init__(self, layout):
        self.layout = layout
        self.n = layout.threads
        self.ws = layout.wave_size
        self.symbols: dict[str, Symbol] = {}
        self._consts: dict[int, tuple[int, ...]] = {}
        self._statement_names: set[str] | None = None  # fresh names made by the statement being evaluated
        self.what = ""  # the statement being evaluated, for symbol names and reasons

    def _lanes_const(self, c: int) -> tuple[int, ...]:
        c &= MASK
        lanes = self._consts.get(c)
        if lanes is None:
            lanes = self._consts[c] = (c,) * self.n
        return lanes

    def symbol(self, name: str, lo: int = 0, hi: int = MASK, tz: int = 0, varying: bool = False) -> Value:
        if name not in self.symbols:
            self.symbols[name] = Symbol(name, lo, hi, tz, varying)
        return Value(self._lanes_const(0), ((name, 1),))

    # -- symbolic facts --------------------------------------------------------
    def bounds(self, terms) -> tuple[int, int]:
        lo = hi = 0
        for name, c in terms:
            s = self.symbols[name]
            a, b = c * s.lo, c * s.hi
            lo += min(a, b)
            hi += max(a, b)
        return lo, hi

    def tz(self, terms) -> int:
        if not terms:
            return 64
        return min(trailing_zeros(c) + self.symbols[name].tz for name, c in terms)

    def varying(self, v: Value) -> bool:
        return any(self.symbols[name].varying for name, _ in v.terms)

    def wave_uniform(self, v: Value) -> bool:
        """Same value in every lane of each wave."""
        if not v.known or self.varying(v):
            return False
        lanes, ws = v.lanes, self.ws
        if self.n % ws:
            return lanes.count(lanes[0]) == len(lanes)
        for lo in range(0, self.n, ws):
            if lanes[lo:lo + ws].count(lanes[lo]) != ws:
                return False
        return True

    def uniform_everywhere(self, v: Value) -> int | None:
        """The constant when ``v`` is the same number in every work-item."""
        if not v.concrete:
            return None
        lanes = v.lanes
        first = lanes[0]
        return first if lanes.count(first) == len(lanes) else None

    def fresh(self, name: str, lo: int = 0, hi: int = MASK, tz: int = 0) -> Value:
        """A new wave-uniform symbol (deterministic name: re-evaluation reuses it). Within one
        statement every call makes its own symbol (``name``, ``name#2`` ...), so that two unknown
        parts of one computation are never taken for the same value."""
        if lo == hi:
            return self.const(lo)
        taken = self._statement_names
        if taken is not None:
            base, k = name, 1
            while name in taken:
                k += 1
                name = f"{base}#{k}"
            taken.add(name)
        if name not in self.symbols:
            self.symbols[name] = Symbol(name, max(lo, -(1 << 40)), min(hi, 1 << 40), min(tz, 32))
        return Value(self._lanes_const(0), ((name, 1),))

    def _split(self, v: Value) -> int | None:
        """``k`` such that v = S + L with S a multiple of 2**k in [0, 2**32) and
        every lane's L below 2**k (so the bits do not overlap), else None."""
        if self.varying(v):
            return None
        k = min(self.tz(v.terms), 32)
        if v.terms:
            lo, hi = self.bounds(v.terms)
            if lo < 0 or hi > MASK:
                return None
        if k >= 32:
            return 32
        if max(v.lanes) >= (1 << k):
            return None
        return k

    # -- the algebra of isalint.isa.semantics ---------------------------------------
    def unknown(self, what: str) -> Value:
        return unknown(f"{self.what} is not an integer operation isalint evaluates")

    def _opaque(self, *args) -> Value:
        for v in args:
            if isinstance(v, Value) and not v.known:
                return v
        return self.unknown("")

    def const(self, c: int, bits: int = 32):
        if bits == 64:
            return Pair(Value(self._lanes_const(c & MASK)), Value(self._lanes_const(c >> 32)))
        return Value(self._lanes_const(c))

    def _high(self, what: str = "") -> Value:
        return unknown(f"high half of {what or self.what}")

    def _pair(self, lo: Value, full) -> Pair:
        """``lo`` and the high half of ``full`` (per-lane 64-bit ints, or None when not known)."""
        if full is None:
            return Pair(lo, self._high())
        return Pair(lo, Value(tuple([(x >> 32) & MASK for x in full])))

    @staticmethod
    def _ints64(p: Pair) -> list[int] | None:
        """Per-lane 64-bit ints of a concrete pair."""
        if not (p.lo.concrete and p.hi.concrete):
            return None
        return [x | y << 32 for x, y in zip(p.lo.lanes, p.hi.lanes)]

    def _from64(self, vals) -> Pair:
        return Pair(Value(tuple([x & MASK for x in vals])), Value(tuple([(x >> 32) & MASK for x in vals])))

    def zext(self, x: Value) -> Pair:
        return Pair(x, self.const(0))

    def sext(self, x: Value, width: int, bits: int = 32):
        if not x.known:
            return Pair(x, x) if bits == 64 else x
        if width == 32:  # to 64 bits: the high half is the sign
            if x.concrete:
                hi = Value(tuple([MASK if v >> 31 else 0 for v in x.lanes]))
            else:
                lo, hi_ = self.bounds(x.terms)
                hi = self.const(0) if lo >= 0 and hi_ + max(x.lanes) < (1 << 31) and not self.varying(x) else \
                    self._high()
            return Pair(x, hi)
        if x.concrete:
            m = (1 << width) - 1
            half = 1 << (width - 1)
            return Value(tuple([((v & m) - (1 << width) if v & half else v & m) & MASK for v in x.lanes]))
        lo, hi = self.bounds(x.terms)
        if lo >= 0 and hi + max(x.lanes) < (1 << (width - 1)) and not self.varying(x):
            return x  # below the sign bit: the value itself
        return self._fallback(self.what, x)

    def lo(self, x):
        return x.lo if isinstance(x, Pair) else x

    def hi(self, x):
        return x.hi if isinstance(x, Pair) else self._high()

    def add(self, a, b, bits: int = 32):
        if bits == 64:
            full = self._ints64(a), self._ints64(b)
            return self._pair(self._add(a.lo, b.lo), None if None in full else
                              [(x + y) & MASK64 for x, y in zip(*full)])
        return self._add(a, b)

    def _add(self, a: Value, b: Value) -> Value:
        if not a.known:
            return a
        if not b.known:
            return b
        d = a.term_dict()
        for k, c in b.terms:
            d[k] = d.get(k, 0) + c
        terms = make_terms(d)
        if len(terms) > MAX_TERMS:
            terms = self._collapse(terms)
        return Value(tuple([(x + y) & MASK for x, y in zip(a.lanes, b.lanes)]), terms)

    def _collapse(self, terms: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
        """The uniform terms summed into one symbol (placeholders of loops being solved stay)."""
        keep = [t for t in terms if self.symbols[t[0]].varying]
        fold = tuple(t for t in terms if not self.symbols[t[0]].varying)
        if len(fold) < 2:
            return terms
        lo, hi = self.bounds(fold)
        name = f"sum{len(fold)}#{hash(fold) & 0xFFFFFFFF:08x}"
        return make_terms(dict(keep + list(self.fresh(name, lo, hi, self.tz(fold)).terms)))

    def neg(self, a: Value) -> Value:
        if not a.known:
            return a
        return Value(tuple([-x & MASK for x in a.lanes]), tuple((k, -c) for k, c in a.terms))

    def sub(self, a, b, bits: int = 32):
        if bits == 64:
            full = self._ints64(a), self._ints64(b)
            return self._pair(self._add(a.lo, self.neg(b.lo)), None if None in full else
                              [(x - y) & MASK64 for x, y in zip(*full)])
        return self._add(a, self.neg(b))

    def mul(self, a, b, bits: int = 32):
        if bits == 64:  # the low half of a product depends on the low halves only
            full = self._ints64(a), self._ints64(b)
            return self._pair(self._mul(a.lo, b.lo, self.what), None if None in full else
                              [(x * y) & MASK64 for x, y in zip(*full)])
        return self._mul(a, b, self.what)

    def _mul(self, a: Value, b: Value, what: str = "") -> Value:
        if not a.known:
            return a
        if not b.known:
            return b
        if a.concrete and b.concrete:
            return Value(tuple([(x * y) & MASK for x, y in zip(a.lanes, b.lanes)]))
        ca, cb = self.uniform_everywhere(a), self.uniform_everywhere(b)
        if ca is not None or cb is not None:
            c, v = (ca, b) if ca is not None else (cb, a)
            sc = c if c < (1 << 31) else c - (1 << 32)
            return Value(tuple([(x * c) & MASK for x in v.lanes]), make_terms({k: x * sc for k, x in v.terms}))
        if self.wave_uniform(a) and self.wave_uniform(b):
            return self.fresh(what or "product")
        return unknown(f"{what or 'a product'} multiplies a per-lane value by a runtime uniform value")

    def mul_hi(self, a: Value, b: Value, signed: bool = False) -> Value:
        if a.concrete and b.concrete:
            if signed:
                return Value(tuple([((_s32(x) * _s32(y)) >> 32) & MASK for x, y in zip(a.lanes, b.lanes)]))
            return Value(tuple([(x * y) >> 32 for x, y in zip(a.lanes, b.lanes)]))
        return self._fallback(self.what, a, b)

    def add_co(self, a, b, carry_in=NO_CARRY, bits: int = 32, signed: bool = False):
        what = self.what
        if bits == 64:
            lo = self._add(a.lo, b.lo)
            full = self._ints64(a), self._ints64(b)
            if None in full:
                return Pair(lo, self._high()), unknown(f"carry-out of {what}")
            out, carry = [], []
            for x, y in zip(*full):
                if signed:
                    t = (x - (1 << 64) if x >> 63 else x) + (y - (1 << 64) if y >> 63 else y)
                    carry.append((t >> 64) & 1)
                else:
                    t = x + y
                    carry.append(t >> 64)
                out.append(t & MASK64)
            return self._from64(out), Value(tuple(carry))
        cin = None
        if carry_in is not NO_CARRY:
            cin = self._bits(carry_in)
            if cin is None:
                why = unknown(f"{what} adds a carry isalint cannot evaluate")
                return why, why
        low = self._add(a, b)
        if cin is not None:
            low = self._add(low, Value(cin))
        if a.concrete and b.concrete:
            c = cin or (0,) * self.n
            return low, Value(tuple([(x + y + z) >> 32 for x, y, z in zip(a.lanes, b.lanes, c)]))
        return low, unknown(f"carry-out of {what}")

    def sub_co(self, a, b, borrow_in=NO_CARRY):
        what = self.what
        bin_ = None
        if borrow_in is not NO_CARRY:
            bin_ = self._bits(borrow_in)
            if bin_ is None:
                why = unknown(f"{what} subtracts a borrow isalint cannot evaluate")
                return why, why
        low = self.sub(a, b)
        if bin_ is not None:
            low = self.sub(low, Value(bin_))
        if a.concrete and b.concrete:
            c = bin_ or (0,) * self.n
            return low, Value(tuple([int(y + z > x) for x, y, z in zip(a.lanes, b.lanes, c)]))
        return low, unknown(f"borrow of {what}")

    def min(self, a, b, signed: bool = False):
        return self._minmax(a, b, signed, min)

    def max(self, a, b, signed: bool = False):
        return self._minmax(a, b, signed, max)

    def _minmax(self, a: Value, b: Value, signed: bool, pick) -> Value:
        if a.concrete and b.concrete:
            key = _s32 if signed else None
            return Value(tuple([pick(x, y, key=key) for x, y in zip(a.lanes, b.lanes)]))
        if a.same(b):
            return a
        return self._fallback(self.what, a, b)

    # -- bits --------------------------------------------------------------------------
    def and_(self, a, b, bits: int = 32):
        if bits == 64:
            return Pair(self._and(a.lo, b.lo, self.what), self._and(a.hi, b.hi, self.what))
        return self._and(a, b, self.what)

    def or_(self, a, b, bits: int = 32):
        if bits == 64:
            return Pair(self._or(a.lo, b.lo, self.what), self._or(a.hi, b.hi, self.what))
        return self._or(a, b, self.what)

    def xor(self, a, b, bits: int = 32):
        if bits == 64:
            return Pair(self._or(a.lo, b.lo, self.what, operator.xor), self._or(a.hi, b.hi, self.what, operator.xor))
        return self._or(a, b, self.what, operator.xor)

    def not_(self, a, bits: int = 32):
        if bits == 64:
            return Pair(self.not_(a.lo), self.not_(a.hi))
        return self._or(a, self.const(MASK), self.what, operator.xor)

    def shl(self, a, n, bits: int = 32):
        if bits == 64:
            return self._shift64(a, n, lambda x, c: x << c)
        return self._shl(a, n, self.what)

    def _shl(self, a: Value, n: Value, what: str = "") -> Value:
        c = self.uniform_everywhere(n)
        if not a.known:
            return a
        if c is not None:
            return self._mul(a, self.const(1 << (c & 31)), what)
        if a.concrete and n.concrete:
            return Value(tuple([(x << (y & 31)) & MASK for x, y in zip(a.lanes, n.lanes)]))
        return self._fallback(what, a, n)

    def lshr(self, a, n, bits: int = 32):
        if bits == 64:
            return self._shift64(a, n, lambda x, c: x >> c)
        return self._lshr(a, n, self.what)

    def _lshr(self, a: Value, n: Value, what: str = "") -> Value:
        c = self.uniform_everywhere(n)
        if not a.known:
            return a
        if a.concrete and n.known and n.concrete:
            return Value(tuple([x >> (y & 31) for x, y in zip(a.lanes, n.lanes)]))
        if c is None:
            return self._fallback(what, a, n)
        c &= 31
        k = self._split(a)
        if k is None:
            return self._fallback(what, a, n)
        lo, hi = self.bounds(a.terms)
        if all(x % (1 << c) == 0 for _, x in a.terms) and c <= k:
            terms = tuple((name, x >> c) for name, x in a.terms)
        else:
            sym = self.fresh(f"({what})>>{c}" if what else f"uniform>>{c}", lo >> c, hi >> c,
                             max(0, self.tz(a.terms) - c))
            terms = sym.terms
        low = tuple([x >> c for x in a.lanes]) if c <= k else self._lanes_const(0)
        return Value(low, terms)

    def ashr(self, a, n, bits: int = 32):
        if bits == 64:
            return self._shift64(a, n, lambda x, c: ((x - (1 << 64) if x >> 63 else x) >> c))
        what = self.what
        if not a.known:
            return a
        if a.concrete and n.known and n.concrete:
            return Value(tuple([(_s32(x) >> (y & 31)) & MASK for x, y in zip(a.lanes, n.lanes)]))
        k = self._split(a)
        if k is not None:
            lo, hi = self.bounds(a.terms)
            if hi + max(a.lanes) < (1 << 31):
                return self._lshr(a, n, what)
        return self._fallback(what, a, n)

    def _shift64(self, a: Pair, n: Value, fn) -> Pair:
        """A 64-bit shift: per lane when everything is concrete; the low half of a left shift by a
        uniform amount (it depends on the low half alone)."""
        full = self._ints64(a)
        if full is not None and n.concrete:
            return self._from64([fn(x, y & 63) & MASK64 for x, y in zip(full, n.lanes)])
        c = self.uniform_everywhere(n)
        if c is not None and fn(1, 1) == 2:  # shift left
            c &= 63
            if c == 0:
                return a
            if c >= 32:
                return Pair(self.const(0), self._shl(a.lo, self.const(c - 32), self.what))
            return Pair(self._shl(a.lo, self.const(c), self.what), self._high())
        if c == 0:
            return a
        return Pair(unknown(f"{self.what} shifts a 64-bit value isalint cannot evaluate"), self._high())

    def _and(self, a: Value, b: Value, what: str = "") -> Value:
        if not a.known:
            return a
        if not b.known:
            return b
        if a.concrete and b.concrete:
            return Value(tuple([x & y for x, y in zip(a.lanes, b.lanes)]))
        if a.concrete:
            a, b = b, a
        if b.concrete:  # a has terms, b is a per-lane mask
            if not any(b.lanes):
                return self.const(0)
            m = self.uniform_everywhere(b)
            if m is not None and m & (m + 1) == 0 and not self.varying(a):
                lo, hi = self.bounds(a.terms)
                if lo >= 0 and hi + max(a.lanes) <= m:
                    return a  # the value fits the low-bits mask: masking changes nothing
            k = self._split(a)
            if k is not None:
                lo, hi = self.bounds(a.terms)
                nb = max(hi.bit_length(), k)
                need = ((1 << nb) - 1) & ~((1 << k) - 1)
                low_mask = (1 << k) - 1
                low = tuple([x & y & low_mask for x, y in zip(a.lanes, b.lanes)])
                if all(y & need == need for y in b.lanes):
                    return Value(low, a.terms)
                if all(y & need == 0 for y in b.lanes):
                    return Value(low)
                if self.uniform_everywhere(b) is not None:
                    # S & mask depends on S only: still one value per wave, and the same value wherever
                    # the same S is masked alike (so addresses built from it differ by known amounts)
                    uniform = "+".join(f"{c}*{name}" for name, c in a.terms)
                    sym = self.fresh(f"({uniform})&{b.lanes[0]:#x}", 0, min(hi, b.lanes[0]), k)
                    return Value(low, sym.terms)
        return self._fallback(what, a, b)

    def _or(self, a: Value, b: Value, what: str = "", op=operator.or_) -> Value:
        if not a.known:
            return a
        if not b.known:
            return b
        if a.concrete and b.concrete:
            return Value(tuple(map(op, a.lanes, b.lanes)))
        if a.concrete:
            a, b = b, a
        if b.concrete:
            k = self._split(a)
            if k is not None and max(b.lanes) < (1 << k):
                return Value(tuple(map(op, a.lanes, b.lanes)), a.terms)
        return self._fallback(what, a, b)

    def bfe(self, a, offset, width, signed: bool = False, bits: int = 32):
        what = self.what
        if bits == 64:
            full = self._ints64(a)
            o, w = self.uniform_everywhere(offset), self.uniform_everywhere(width)
            if full is None or o is None or w is None:
                return Pair(unknown(f"{what} extracts a 64-bit field isalint cannot evaluate"), self._high())
            return self._from64([self._bfe_int(x, o & 63, min(w, 64), signed, 64) for x in full])
        o, w = self.uniform_everywhere(offset), self.uniform_everywhere(width)
        if o is None or w is None:
            if a.concrete and offset.concrete and width.concrete:
                return Value(tuple([self._bfe_int(x, p & 31, min(q, 32), signed)
                                    for x, p, q in zip(a.lanes, offset.lanes, width.lanes)]))
            return self._fallback(what, a, offset, width)
        return self._bfe_const(a, o & 31, min(w, 32), signed, what)

    @staticmethod
    def _bfe_int(x: int, o: int, w: int, signed: bool, bits: int = 32) -> int:
        """``(S0 >> o) & ((1 << w) - 1)``, sign-extended from bit ``w - 1`` for the signed forms, whose
        shift is arithmetic (the guide's ``S0.i32 >>``)."""
        if w == 0:
            return 0
        if signed and x >> (bits - 1) & 1:
            x -= 1 << bits
        v = (x >> o) & ((1 << w) - 1)
        if signed and v >> (w - 1):
            v -= 1 << w
        return v & ((1 << bits) - 1)

    def _bfe_const(self, a: Value, o: int, w: int, signed: bool, what: str) -> Value:
        if w == 0:
            return self.const(0)
        if a.concrete:
            return Value(tuple([self._bfe_int(x, o, w, signed) for x in a.lanes]))
        u = self._and(self._lshr(a, self.const(o), what), self.const((1 << w) - 1), what)
        if not signed or not u.known:
            return u
        if u.concrete:
            return Value(tuple([self._bfe_int(x, 0, w, True) for x in u.lanes]))
        lo, hi = self.bounds(u.terms)
        if lo >= 0 and hi + max(u.lanes) < (1 << (w - 1)) and o + w <= 32:
            return u
        return self._fallback(what, a)

    def popcount(self, a: Value) -> Value:
        return self._per_lane(a, lambda x: bin(x).count("1"))

    def brev(self, a: Value) -> Value:
        return self._per_lane(a, lambda x: int(f"{x:032b}"[::-1], 2))

    def clz(self, a: Value) -> Value:
        return self._per_lane(a, lambda x: 32 - x.bit_length() if x else MASK)

    def ctz(self, a: Value) -> Value:
        return self._per_lane(a, lambda x: (x & -x).bit_length() - 1 if x else MASK)

    def _per_lane(self, a: Value, fn) -> Value:
        if a.concrete:
            return Value(tuple([fn(x) for x in a.lanes]))
        return self._fallback(self.what, a)

    # -- conditions: a Value of 0/1 per lane; LaneBits for a lane's bit of a mask register --------
    def cmp(self, rel: str, a, b, signed: bool = False, bits: int = 32) -> Value:
        what = self.what
        if rel in ("f", "t"):
            return self.const(int(rel == "t"))
        test = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
                "ge": operator.ge}[rel]
        if bits == 64:
            x, y = self._ints64(a), self._ints64(b)
            if x is None or y is None:
                return unknown(f"{what} compares values isalint cannot evaluate")
            if signed:
                x = [v - (1 << 64) if v >> 63 else v for v in x]
                y = [v - (1 << 64) if v >> 63 else v for v in y]
            return Value(tuple([int(test(p, q)) for p, q in zip(x, y)]))
        if a.concrete and b.concrete:
            x, y = a.lanes, b.lanes
            if signed:
                x, y = [_s32(v) for v in x], [_s32(v) for v in y]
            return Value(tuple([int(test(p, q)) for p, q in zip(x, y)]))
        if a.known and b.known and a.terms == b.terms and rel in ("eq", "ne"):
            return Value(tuple([int(test(p, q)) for p, q in zip(a.lanes, b.lanes)]))
        return unknown(f"{what} compares values isalint cannot evaluate")

    def _bits(self, cond) -> tuple[int, ...] | None:
        """The 0/1 of each lane of a condition, or None when it is not known."""
        if isinstance(cond, LaneBits):
            if not cond.mask.concrete:
                return None
            return tuple([(m >> ln) & 1 for m, ln in zip(cond.mask.lanes, self.layout.lane)])
        if isinstance(cond, Value) and cond.concrete:
            return tuple([x & 1 for x in cond.lanes])
        return None

    def select(self, cond, t, f):
        if isinstance(t, Pair):
            return Pair(self.select(cond, t.lo, f.lo), self.select(cond, t.hi, f.hi))
        what = self.what
        bits = self._bits(cond)
        if bits is not None:
            if not f.known:
                return f
            if not t.known:
                return t
            if f.terms != t.terms:
                if all(bits):
                    return t
                if not any(bits):
                    return f
                return unknown(f"{what} selects per lane between different uniform values")
            return Value(tuple([y if c else x for c, x, y in zip(bits, f.lanes, t.lanes)]), t.terms)
        if f.same(t):
            return f
        if isinstance(cond, LaneBits) and f.known and t.known and cond.reg is not None and \
                self._mask_all_same(cond.reg, cond.index, 8):
            diff = self.sub(t, f)
            if not self.varying(diff) and self.wave_uniform(diff) and not self.varying(f):
                return self._add(f, self.fresh(f"select@L{cond.line}"))
        for v in (f, t):
            if not v.known:
                return v
        return unknown(f"{what} selects per lane with a condition isalint cannot evaluate")

    def _mask_all_same(self, reg: str, index: int, depth: int) -> bool:
        """Whether lane mask ``reg`` read at ``index`` has all its bits equal; the evaluator knows."""
        return False

    # -- lanes ---------------------------------------------------------------------------
    def thread_mask(self) -> Pair:
        below = [(1 << ln) - 1 for ln in self.layout.lane]
        return self._from64(below)

    def readlane(self, a: Value, lane: Value) -> Value:
        c = self.uniform_everywhere(lane)
        if c is not None and a.known and not self.varying(a) and self.n % self.ws == 0:
            ws = self.ws
            c %= ws
            return Value(tuple([a.lanes[t - t % ws + c] for t in range(self.n)]), a.terms)
        return self._fallback(self.what, a, lane) if self.wave_uniform(a) else \
            unknown(f"{self.what} reads a lane isalint cannot tell")

    def _fallback(self, what: str, *vals: Value) -> Value:
        for v in vals:
            if not v.known:
                return v
        if all(self.wave_uniform(v) for v in vals):
            return self.fresh(what or "uniform")
        return unknown(f"{what} mixes per-lane and runtime-uniform bits in a way isalint does not model")


def _s32(x: int) -> int:
    x &= MASK
    return x - (1 << 32) if x >> 31 else x


class Pair:
    """A 64-bit value as its two 32-bit halves."""

    __slots__ = ("lo", "hi")

    def __init__(self, lo: Value, hi: Value):
        self.lo, self.hi = lo, hi


class LaneBits:
    """Each lane's bit of the lane mask ``mask`` (the guide's ``VCC.u64[laneId]``), with the register it
    was read from at ``index`` (so that a select can ask how the mask was made)."""

    __slots__ = ("mask", "reg", "index", "line")

    def __init__(self, mask: Value, reg: str | None, index: int, line: int):
        self.mask, self.reg, self.index, self.line = mask, reg, index, line


def _opaque(name: str):
    def op(self, *args, **kw):
        return self._opaque(*args)
    op.__name__ = name
    op.__doc__ = "Not evaluated per lane: the first unknown input, else unknown."
    return op


# The operations the lane algebra does not evaluate (floats, a write of one lane): the first unknown
# input says why, as it would for an operation isalint does not know.
for _name in ("fadd", "fsub", "fmul", "fma", "fmul_legacy", "fma_legacy", "fmax", "fmin", "fmed3", "fcmp", "fclass",
              "floor", "ceil", "trunc", "rndne", "fract", "rcp", "rsq", "sqrt", "exp2", "log2", "ldexp", "convert",
              "writelane"):
    setattr(LaneAlgebra, _name, _opaque(_name))
