"""The size guard: for which N the rewritten addresses are exactly the original's.

The ``saddr`` form adds the VGPR as a 32-bit *unsigned* offset to the 64-bit SGPR base (RDNA3 ISA
guide, chapter 10 "Flat, Scratch and Global Instructions", addressing). The rewrite computes
``base + offset`` with the base exact in 64 bits; it equals the original address

* when every value the original widens to 64 bits lies in the range its widening needs (the
  conditions the evaluator recorded: a sign-extended 32-bit index in ``[-2**31, 2**31)``, a
  zero-extended one in ``[0, 2**32)``, a compared one in range), because then the original's
  address is the exact polynomial too, and
* when the offset polynomial lies in ``[0, 2**32)``, so that the VGPR holds it exactly.

Both are checked over every work-item id below the workgroup size, every value of the loop
counters between their start and their bound, and every ``1 <= N <= limit`` (N: the kernel's
4-byte integer argument the polynomials use). Conditions on values with a workgroup id cannot be
checked without the grid: they are the original's own int32 indexing limit, reported, and checked
in workgroup 0 only, which bounds the sizes the original handles at all. Without ``--max-n`` the
limit is that bound; when the offsets need a smaller one the rewrite is refused with the size it
would impose.

Bounds are exact, not sampled: per work-item, each polynomial is affine in each counter with a
factor of fixed sign, so its extremes are at the counter's ends; what remains is a polynomial in
N, checked non-decreasing on ``N >= 1`` from its coefficients (after ``N = M + 1`` they must all
be non-negative), so its maximum is at the limit and its minimum at N = 1.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import comb

from ...model.affine.poly import Poly
from ...model.affine.words import Cond
from .. import FixRefused
from .plan import display_names

INT32_MAX = (1 << 31) - 1
OFFSET_LIMIT = (1 << 32) - 1


@dataclass
class Limits:
    size: str | None  # the atom of N, None when nothing depends on it
    limit: int  # proven for 1 <= N <= limit
    offsets_fit: int  # the largest N for which every offset stays below 2**32
    original: int  # the largest N the original's indices are exact for in workgroup 0
    assumed: list[Cond] = field(default_factory=list)  # conditions with workgroup ids
    offset_max: dict = field(default_factory=dict)  # group index -> (max offset at the limit, lane count)


class Bounder:
    """Extremes of polynomials over lanes, counters and 1 <= N <= limit."""

    def __init__(self, ev, size: str | None, counters: dict):
        self.ev = ev
        self.size = size
        self.counters = counters

    def _univariate(self, p: Poly, what: str) -> list[int]:
        if p.atoms() - ({self.size} if self.size else set()):
            raise _Unbounded(what)
        out: dict[int, int] = {}
        for mono, c in p.terms:
            out[len(mono)] = out.get(len(mono), 0) + c
        return [out.get(k, 0) for k in range(max(out, default=0) + 1)]

    def per_lane(self, p: Poly, what: str) -> list[tuple[list[int], list[int]]]:
        """For each distinct work-item value: (coefficients of the maximum over the counters as a
        polynomial in N, same for the minimum)."""
        lanes = sorted(a for a in p.atoms() if self.ev.atoms[a].kind == "lane")
        columns = [self.ev.atoms[a].values for a in lanes]
        seen: set[tuple] = set()
        out = []
        for t in range(self.ev.threads):
            key = tuple(col[t] for col in columns)
            if key in seen:
                continue
            seen.add(key)
            pt = p.substitute(dict(zip(lanes, key)))
            out.append(self._counter_extremes(pt, what))
        return out

    def _counter_extremes(self, p: Poly, what: str) -> tuple[list[int], list[int]]:
        hi_sub: dict[str, Poly] = {}
        lo_sub: dict[str, Poly] = {}
        for atom in sorted(a for a in p.atoms() if a in self.counters):
            c = self.counters[atom]
            if p.degree(atom) > 1:
                raise _Unbounded(what)
            k = self._univariate(p.coefficient(atom), what)
            top = c.bound if _nonneg(self._univariate(c.bound - c.init, what)) else None
            if top is None:
                raise _Unbounded(what)
            if _nonneg(k):
                hi_sub[atom], lo_sub[atom] = top, Poly.const(c.init)
            elif _nonneg([-x for x in k]):
                hi_sub[atom], lo_sub[atom] = Poly.const(c.init), top
            else:
                raise _Unbounded(what)
        hi = self._univariate(p.substitute(hi_sub), what)
        lo = self._univariate(p.substitute(lo_sub), what)
        if not (_nondecreasing(hi) and _nondecreasing(lo)):
            raise _Unbounded(what)
        return hi, lo

    def largest(self, p: Poly, lo: int, hi: int, what: str) -> int:
        """The largest N (0 if none) such that ``lo <= p <= hi`` for every N' <= N."""
        rows = self.per_lane(p, what)
        if min(_at(low, 1) for _, low in rows) < lo:
            return 0
        return _search(lambda n: max(_at(top, n) for top, _ in rows) <= hi)

    def maximum(self, p: Poly, n: int, what: str) -> int:
        return max(_at(top, n) for top, _ in self.per_lane(p, what))


class _Unbounded(Exception):
    pass


def _at(coeffs: list[int], n: int) -> int:
    return sum(c * n ** k for k, c in enumerate(coeffs))


def _shift(coeffs: list[int]) -> list[int]:
    """Coefficients of p(M + 1)."""
    out = [0] * len(coeffs)
    for k, c in enumerate(coeffs):
        for j in range(k + 1):
            out[j] += c * comb(k, j)
    return out


def _nonneg(coeffs: list[int]) -> bool:
    """p(N) >= 0 for every N >= 1 (sufficient: p(M + 1) has no negative coefficient)."""
    return all(c >= 0 for c in _shift(coeffs))


def _nondecreasing(coeffs: list[int]) -> bool:
    nxt = _shift(coeffs)  # p(N + 1)
    diff = [a - (coeffs[k] if k < len(coeffs) else 0) for k, a in enumerate(nxt)]
    return _nonneg(diff)


def _search(ok) -> int:
    if not ok(1):
        return 0
    lo, hi = 1, INT32_MAX
    if ok(hi):
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo


def size_atom(plan) -> str | None:
    """The kernel's 4-byte integer argument the offsets and counter bounds depend on (N)."""
    ev = plan.ev
    polys = [g.offset for g in plan.groups] + [c.bound for c in plan.counters.values()]
    polys += [c.poly for ld in plan.loads for c in ld.conds]
    found = set()
    for p in polys:
        for a in p.atoms():
            atom = ev.atoms[a]
            if atom.kind == "uniform" and atom.arg.get("kind") == "by_value":
                found.add(a)
    if len(found) > 1:
        raise FixRefused(f"{plan.ev.program.path}: the addresses depend on several integer arguments "
                         f"({', '.join(sorted(found))}); the size guard bounds one")
    return next(iter(found), None)


@dataclass
class IndexLimit:
    """The largest N for which the loop's address arithmetic is exact in workgroup 0."""

    limit: int
    name: str  # how N is shown ("N", or the argument's name and offset)
    cond: Cond | None  # the condition that sets the limit (None: nothing depends on N)
    assumed: list[Cond]  # conditions with workgroup ids, checked in workgroup 0 only
    shown: str = ""  # cond's value as the user reads it


def index_limit(plan) -> IndexLimit:
    """The original's own size limit: every condition the evaluator recorded on the loop's load
    addresses and counters (a sign-extended 32-bit index in range, ...) bounded over the lanes, the
    counters and ``1 <= N``, with workgroup ids at 0 (larger ids only lower it)."""
    ev = plan.ev
    program = ev.program
    size = size_atom(plan)
    names = display_names(ev, size)
    bounder = Bounder(ev, size, plan.counters)
    wg = {a for a in ev.atoms if a.startswith("wg_")}
    conds: set[Cond] = set()
    for ld in plan.loads:
        conds |= ld.conds
    for c in plan.counters.values():
        conds |= c.conds
    assumed = []
    original = INT32_MAX
    worst = None
    for cond in sorted(conds, key=lambda c: (c.line, str(c.poly))):
        poly = cond.poly
        if poly.atoms() & wg:
            if cond.kind != "index":
                raise FixRefused(f"{program.path}:{cond.line}: the value {cond.poly.render(names)} {cond.what}; it depends on the "
                                 f"workgroup id, so isalint cannot prove it in range")
            assumed.append(cond)
            poly = poly.substitute({a: 0 for a in poly.atoms() & wg})
        try:
            n = bounder.largest(poly, cond.lo, cond.hi, cond.what)
        except _Unbounded:
            raise FixRefused(f"{program.path}:{cond.line}: cannot bound {cond.poly.render(names)}, which {cond.what}") from None
        if n < original:
            original, worst = n, cond
    return IndexLimit(original, _size_name(ev, size), worst, assumed,
                      worst.poly.render(names) if worst is not None else "")


def check_sizes(plan, max_n: int | None) -> Limits:
    ev = plan.ev
    program = ev.program
    size = size_atom(plan)
    names = display_names(ev, size)
    bounder = Bounder(ev, size, plan.counters)
    found = index_limit(plan)
    assumed, original = found.assumed, found.limit
    if original < 1:
        raise FixRefused(f"{program.path}: the original's address arithmetic overflows even for N = 1")
    fits = INT32_MAX
    for g in plan.groups:
        ld = g.loads[0]
        try:
            n = bounder.largest(g.offset, 0, OFFSET_LIMIT, "offset")
        except _Unbounded:
            raise FixRefused(f"{program.path}:{ld.line}: the per-lane offset {g.offset.render(names)} of "
                             f"{_lines(g)} is not bounded by the loop counters and N") from None
        if n < 1:
            raise FixRefused(f"{program.path}:{ld.line}: the per-lane offset {g.offset.render(names)} of {_lines(g)} can be "
                             f"negative, which the unsigned 32-bit offset of an SGPR-based load cannot hold")
        fits = min(fits, n)
    name = _size_name(ev, size)
    if max_n is not None:
        if max_n > original:
            raise FixRefused(f"{program.path}: --max-n {max_n}: the original's 32-bit indices overflow already "
                             f"in workgroup 0 for {name} > {original}")
        if max_n > fits:
            raise FixRefused(_too_small(plan, bounder, fits, name, f"--max-n {max_n} asks for more", names))
        limit = max_n
    else:
        if fits < original:
            raise FixRefused(_too_small(plan, bounder, fits, name,
                                        f"the original's 32-bit indices are exact up to {name} = {original}", names) +
                             f"; pass --max-n {fits} (or less) to accept that limit")
        limit = original
    out = Limits(size, limit, fits, original, assumed)
    for k, g in enumerate(plan.groups):
        out.offset_max[k] = bounder.maximum(g.offset, limit, "offset")
    return out


def _size_name(ev, size: str | None) -> str:
    if size is None:
        return "N"
    off = ev.atoms[size].arg.get("offset")
    return "N" if size.startswith("arg") else f"{size} (offset {off})"


def _lines(g) -> str:
    lines = [ld.line for ld in g.loads]
    return f"the load at line {lines[0]}" if len(lines) == 1 else \
        f"the {len(lines)} loads at lines {min(lines)}-{max(lines)}"


def _too_small(plan, bounder, fits: int, name: str, why: str, names: dict) -> str:
    program = plan.ev.program
    worst = None
    for g in plan.groups:
        n = bounder.largest(g.offset, 0, OFFSET_LIMIT, "offset")
        if worst is None or n < worst[0]:
            worst = (n, g)
    g = worst[1]
    peak = bounder.maximum(g.offset, fits + 1, "offset")
    return (f"{program.path}:{g.loads[0].line}: the per-lane byte offset {g.offset.render(names)} of {_lines(g)} reaches "
            f"{peak} >= 2^32 at {name} = {fits + 1}, so an SGPR base with a 32-bit VGPR offset is exact only for "
            f"{name} <= {fits}, while {why}")
