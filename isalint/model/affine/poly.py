"""Exact integer polynomials over named atoms (kernel arguments, thread ids, loop counters ...).

A :class:`Poly` is a sum of ``coefficient * atom1 * atom2 * ...`` with Python integers, so it
never wraps: the register that holds a value computed by 32-bit instructions holds the
polynomial modulo 2**32, and whoever needs the exact value must prove the polynomial's range
(see :mod:`isalint.model.addresses`). Polynomials are immutable and hashable.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

Mono = tuple[str, ...]  # atom names, sorted, repeated for powers; () is the constant term


class Poly:
    __slots__ = ("terms", "_hash")

    def __init__(self, terms: Mapping[Mono, int] | Iterable[tuple[Mono, int]] = ()):
        items = terms.items() if isinstance(terms, Mapping) else terms
        acc: dict[Mono, int] = {}
        for mono, c in items:
            if c:
                acc[mono] = acc.get(mono, 0) + c
        self.terms: tuple[tuple[Mono, int], ...] = tuple(sorted((m, c) for m, c in acc.items() if c))
        self._hash = hash(self.terms)

    # -- construction ---------------------------------------------------------------------
    @staticmethod
    def const(c: int) -> Poly:
        return Poly({(): c})

    @staticmethod
    def atom(name: str) -> Poly:
        return Poly({(name,): 1})

    # -- arithmetic -----------------------------------------------------------------------
    def __add__(self, other: Poly | int) -> Poly:
        other = _lift(other)
        return Poly(list(self.terms) + list(other.terms))

    __radd__ = __add__

    def __neg__(self) -> Poly:
        return Poly([(m, -c) for m, c in self.terms])

    def __sub__(self, other: Poly | int) -> Poly:
        return self + (-_lift(other))

    def __rsub__(self, other: Poly | int) -> Poly:
        return _lift(other) - self

    def __mul__(self, other: Poly | int) -> Poly:
        if isinstance(other, int):
            return Poly([(m, c * other) for m, c in self.terms])
        out: dict[Mono, int] = {}
        for m1, c1 in self.terms:
            for m2, c2 in other.terms:
                m = tuple(sorted(m1 + m2))
                out[m] = out.get(m, 0) + c1 * c2
        return Poly(out)

    __rmul__ = __mul__

    def __eq__(self, other: object) -> bool:
        if isinstance(other, int):
            other = Poly.const(other)
        return isinstance(other, Poly) and self.terms == other.terms

    def __hash__(self) -> int:
        return self._hash

    # -- inspection -----------------------------------------------------------------------
    @property
    def is_const(self) -> bool:
        return all(not m for m, _ in self.terms)

    @property
    def constant(self) -> int:
        return next((c for m, c in self.terms if not m), 0)

    def atoms(self) -> set[str]:
        return {a for m, _ in self.terms for a in m}

    def degree(self, atom: str) -> int:
        return max((m.count(atom) for m, _ in self.terms), default=0)

    def split(self, keep: Callable[[Mono], bool]) -> tuple[Poly, Poly]:
        """(the monomials ``keep`` accepts, the others)."""
        a = [(m, c) for m, c in self.terms if keep(m)]
        b = [(m, c) for m, c in self.terms if not keep(m)]
        return Poly(a), Poly(b)

    def coefficient(self, atom: str) -> Poly:
        """For a polynomial of degree 1 in ``atom``: the factor multiplying it."""
        out = []
        for m, c in self.terms:
            if atom in m:
                rest = list(m)
                rest.remove(atom)
                out.append((tuple(rest), c))
        return Poly(out)

    def substitute(self, values: Mapping[str, Poly | int]) -> Poly:
        out = Poly()
        for m, c in self.terms:
            term = Poly.const(c)
            for a in m:
                term = term * _lift(values[a]) if a in values else term * Poly.atom(a)
            out = out + term
        return out

    def evaluate(self, env: Mapping[str, int]) -> int:
        total = 0
        for m, c in self.terms:
            v = c
            for a in m:
                v *= env[a]
            total += v
        return total

    def divisible_by(self, k: int, atom_twos: Mapping[str, int] | None = None) -> bool:
        """Whether every value of the polynomial is a multiple of 2**k, from its coefficients and the
        known trailing zero bits of its atoms."""
        twos = atom_twos or {}
        return all(_twos(c) + sum(twos.get(a, 0) for a in m) >= k for m, c in self.terms)

    def congruent(self, other: Poly, bits: int) -> bool:
        """Equal modulo 2**bits for every value of the atoms (coefficient-wise)."""
        return all(c % (1 << bits) == 0 for _, c in (self - other).terms)

    def __repr__(self) -> str:
        return f"Poly({self})"

    def __str__(self) -> str:
        return self.render()

    def render(self, rename: Mapping[str, str] | None = None) -> str:
        """The polynomial as text, atoms renamed by ``rename``."""
        rename = rename or {}
        if not self.terms:
            return "0"
        parts = []
        for m, c in sorted(self.terms, key=lambda t: (-len(t[0]), t[0])):
            factors = "*".join(rename.get(a, a) for a in m)
            if not m:
                body = str(abs(c))
            elif abs(c) == 1:
                body = factors
            else:
                body = f"{abs(c)}*{factors}"
            parts.append(("- " if c < 0 else "+ ") + body)
        text = " ".join(parts)
        return text[2:] if text.startswith("+ ") else "-" + text[2:]


def _lift(x: Poly | int) -> Poly:
    return x if isinstance(x, Poly) else Poly.const(x)


def _twos(c: int) -> int:
    return 64 if c == 0 else (c & -c).bit_length() - 1
