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

from ...records import FrozenRecord, Record

MASK = 0xFFFFFFFF
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



class LaneAlgebra:
    """Arithmetic on :class:`Value` for the work-items of one thread layout
    (:class:`~isalint.model.lanes.threads.ThreadLayout`), with its table of symbols."""

    def __init__(self, layout):
        self.layout = layout
        self.n = layout.threads
        self.ws = layout.wave_size
        self.symbols: dict[str, Symbol] = {}
        self._consts: dict[int, tuple[int, ...]] = {}

    def const(self, c: int) -> Value:
        return Value(self._lanes_const(c))

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
        """A new wave-uniform symbol (deterministic name: re-evaluation reuses it)."""
        if lo == hi:
            return self.const(lo)
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

    # -- arithmetic --------------------------------------------------------------
    def add(self, a: Value, b: Value) -> Value:
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

    def sub(self, a: Value, b: Value) -> Value:
        return self.add(a, self.neg(b))

    def mul(self, a: Value, b: Value, what: str = "") -> Value:
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

    def shl(self, a: Value, n: Value, what: str = "") -> Value:
        c = self.uniform_everywhere(n)
        if not a.known:
            return a
        if c is not None:
            return self.mul(a, self.const(1 << (c & 31)), what)
        if a.concrete and n.concrete:
            return Value(tuple([(x << (y & 31)) & MASK for x, y in zip(a.lanes, n.lanes)]))
        return self._fallback(what, a, n)

    def lshr(self, a: Value, n: Value, what: str = "") -> Value:
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
            sym = self.fresh(f"({what})>>{c}" if what else f"uniform>>{c}", lo >> c, hi >> c, max(0, self.tz(a.terms) - c))
            terms = sym.terms
        low = tuple([x >> c for x in a.lanes]) if c <= k else self._lanes_const(0)
        return Value(low, terms)

    def ashr(self, a: Value, n: Value, what: str = "") -> Value:
        if not a.known:
            return a
        if a.concrete and n.known and n.concrete:
            return Value(tuple([((x - (1 << 32) if x >> 31 else x) >> (y & 31)) & MASK
                                for x, y in zip(a.lanes, n.lanes)]))
        k = self._split(a)
        if k is not None:
            lo, hi = self.bounds(a.terms)
            if hi + max(a.lanes) < (1 << 31):
                return self.lshr(a, n, what)
        return self._fallback(what, a, n)

    def band(self, a: Value, b: Value, what: str = "") -> Value:
        if not a.known:
            return a
        if not b.known:
            return b
        if a.concrete and b.concrete:
            return Value(tuple([x & y for x, y in zip(a.lanes, b.lanes)]))
        if a.concrete:
            a, b = b, a
        if b.concrete:  # a has terms, b is a per-lane mask
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

    def bor(self, a: Value, b: Value, what: str = "", op=operator.or_) -> Value:
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

    def bxor(self, a: Value, b: Value, what: str = "") -> Value:
        return self.bor(a, b, what, operator.xor)

    def bfe(self, a: Value, off: Value, width: Value, signed: bool, what: str = "") -> Value:
        o, w = self.uniform_everywhere(off), self.uniform_everywhere(width)
        if o is None or w is None:
            if a.concrete and off.concrete and width.concrete:
                return Value(tuple([self._bfe_int(x, p & 31, q & 31, signed)
                                    for x, p, q in zip(a.lanes, off.lanes, width.lanes)]))
            return self._fallback(what, a, off, width)
        return self._bfe_const(a, o & 31, w & 31, signed, what)

    @staticmethod
    def _bfe_int(x: int, o: int, w: int, signed: bool) -> int:
        if w == 0:
            return 0
        v = (x >> o) & ((1 << w) - 1)
        if signed and v >> (w - 1):
            v -= 1 << w
        return v & MASK

    def _bfe_const(self, a: Value, o: int, w: int, signed: bool, what: str) -> Value:
        if w == 0:
            return self.const(0)
        if a.concrete:
            if signed:
                return Value(tuple([self._bfe_int(x, o, w, True) for x in a.lanes]))
            field = (1 << w) - 1
            return Value(tuple([(x >> o) & field for x in a.lanes]))
        u = self.band(self.lshr(a, self.const(o), what), self.const((1 << w) - 1), what)
        if not signed or not u.known:
            return u
        if u.concrete:
            return Value(tuple([self._bfe_int(x, 0, w, True) for x in u.lanes]))
        lo, hi = self.bounds(u.terms)
        if lo >= 0 and hi + max(u.lanes) < (1 << (w - 1)):
            return u
        return self._fallback(what, a)

    def select(self, mask: Value, f: Value, t: Value, what: str = "") -> Value | None:
        """``t`` where the lane's bit of ``mask`` is set, else ``f``; None when
        the mask is not known."""
        if not mask.concrete:
            return None
        if not f.known:
            return f
        if not t.known:
            return t
        bits = [(m >> ln) & 1 for m, ln in zip(mask.lanes, self.layout.lane)]
        if f.terms != t.terms:
            if all(bits):
                return t
            if not any(bits):
                return f
            return unknown(f"{what} selects per lane between different uniform values")
        return Value(tuple([y if c else x for c, x, y in zip(bits, f.lanes, t.lanes)]), t.terms)

    def _fallback(self, what: str, *vals: Value) -> Value:
        for v in vals:
            if not v.known:
                return v
        if all(self.wave_uniform(v) for v in vals):
            return self.fresh(what or "uniform")
        return unknown(f"{what} mixes per-lane and runtime-uniform bits in a way isalint does not model")

