"""VALU code for the per-lane offsets, before the loop.

An offset only needs its value modulo 2**32 (the guard proved the exact value lies in
``[0, 2**32)``), so it is built with ring operations (``v_mul_lo_u32``, ``v_lshlrev_b32``,
``v_add_nc_u32``) from registers that hold its atoms at the insertion point: a VGPR with a
per-lane atom (``tid``, ``tid & 7`` ...), recomputed from ``tid`` with the operation that made it
when no VGPR holds it any more, and an SGPR with ``k * atom`` for a uniform factor.
"""
from __future__ import annotations

from ...hw.registers import VGPRS
from ...model.affine.poly import Poly
from .. import FixRefused
from .emit_salu import MASK32, _lit

_OPS = {"and": "v_and_b32", "or": "v_or_b32", "xor": "v_xor_b32", "lshr": "v_lshrrev_b32", "ashr": "v_ashrrev_i32"}


class ValuWriter:
    def __init__(self, sregs, temps: list[int], where: str):
        self.ev = sregs.ev
        self.point = sregs.point
        self.sregs = sregs
        self.temps = list(temps)
        self.where = where
        self.lines: list[str] = []
        self._held: dict[Poly, int] | None = None
        self._made: dict[str, int] = {}

    def emit(self, text: str) -> None:
        self.lines.append(text)

    def _temp(self) -> int:
        if not self.temps:
            raise FixRefused(f"{self.where}: no free VGPR before the loop to compute the offsets in")
        return self.temps.pop(0)

    def _holders(self) -> dict[Poly, int]:
        if self._held is None:
            self._held = {}
            for n in range(VGPRS):
                w = self.point.word(f"v{n}")
                if w.kind == "low" and not self.ev.is_uniform(w.poly) and w.poly not in self._held:
                    self._held[w.poly] = n
        return self._held

    def lane(self, atom: str) -> int:
        """A VGPR holding lane atom ``atom`` at the insertion point (computed into a scratch VGPR when
        no register holds it)."""
        p = Poly.atom(atom)
        held = self._holders().get(p)
        if held is not None:
            self.sregs.read.add(f"v{held}")
            return held
        if atom in self._made:
            return self._made[atom]
        derived = self._less_uniform(p)
        if derived is not None:
            self._made[atom] = derived
            return derived
        a = self.ev.atoms[atom]
        if a.expr is None:
            raise FixRefused(f"{self.where}: no VGPR holds {a.origin} before the loop")
        op, x, q = a.expr
        t = self._temp()
        src = self.into_new(x)
        if not q.is_const:
            raise FixRefused(f"{self.where}: cannot recompute {atom} before the loop")
        c = q.constant
        if op in _OPS:
            self.emit(f"{_OPS[op]} v{t}, {_lit(c)}, v{src}")
        elif op in ("bfe_u", "bfe_i"):
            self.emit(f"v_bfe_{op[-1]}32 v{t}, v{src}, {c & 31}, {(c >> 8) & 0x7F}")
        else:
            raise FixRefused(f"{self.where}: cannot recompute {atom} before the loop")
        self._made[atom] = t
        return t

    def _less_uniform(self, p: Poly) -> int | None:
        """A scratch VGPR with ``p`` computed as ``v - u`` from a VGPR holding ``p + u`` for a uniform ``u``
        the SGPRs give (``v_and_or_b32 v1, 0x7f, v0, s2`` keeps ``tid & 127`` beside the workgroup's
        first column), or None."""
        for poly, n in self._holders().items():
            rest = poly - p
            if rest == Poly() or not self.ev.is_uniform(rest):
                continue
            saved = (list(self.lines), list(self.temps), set(self.sregs.read))
            try:
                t = self._temp()
                u = self._temp()
                self.into(u, rest)
            except FixRefused:
                self.lines, self.temps = saved[0], saved[1]
                self.sregs.read.clear()
                self.sregs.read.update(saved[2])
                continue
            self.emit(f"v_sub_nc_u32 v{t}, v{n}, v{u}")
            self.temps.insert(0, u)
            self.sregs.read.add(f"v{n}")
            return t
        return None

    def into_new(self, p: Poly) -> int:
        """A VGPR holding ``p`` (the register itself when one already does)."""
        held = self._holders().get(p)
        if held is not None:
            self.sregs.read.add(f"v{held}")
            return held
        if len(p.terms) == 1 and p.terms[0][1] == 1 and len(p.terms[0][0]) == 1 and \
                self.ev.atoms[p.terms[0][0][0]].kind == "lane":
            return self.lane(p.terms[0][0][0])
        t = self._temp()
        self.into(t, p)
        return t

    def offset(self, dst: int, p: Poly) -> None:
        """``v{dst} = p mod 2**32``, as a sum of multiples of VGPRs that already hold per-lane parts
        of ``p`` (the compiler's own index registers) plus a uniform rest, when one is found; else
        from the atoms."""
        combo = self.combination(p)
        if combo is None:
            self.into(dst, p)
            return
        parts, rest = combo
        first = True
        for n, c in parts:
            t = dst if first else self._temp()
            self._scale(t, f"v{n}", c)
            if not first:
                self.emit(f"v_add_nc_u32 v{dst}, v{t}, v{dst}")
                self.temps.insert(0, t)
            self.sregs.read.add(f"v{n}")
            first = False
        if rest != Poly():
            t = self._temp()
            self.into(t, rest)
            self.emit(f"v_add_nc_u32 v{dst}, v{t}, v{dst}")
            self.temps.insert(0, t)

    def combination(self, p: Poly) -> tuple[list[tuple[int, int]], Poly] | None:
        """([(VGPR, factor)], uniform rest) with ``p = sum(factor * VGPR) + rest``, or None."""
        lane = self.ev.is_uniform
        target, _ = p.split(lambda m: not lane(Poly({m: 1})))
        held = []
        for poly, n in self._holders().items():
            lanes, uni = poly.split(lambda m: not lane(Poly({m: 1})))
            held.append((n, lanes, uni))
        held.sort(key=lambda h: (len(h[1].terms), h[0]))
        parts: list[tuple[int, int]] = []
        remaining = target
        for _ in range(8):
            if remaining == Poly():
                break
            mono, k = max(remaining.terms, key=lambda t: (len(t[0]), t[0]))
            pick = None
            for n, lanes, _ in held:
                kk = dict(lanes.terms).get(mono)
                if kk and k % kk == 0:
                    pick = (n, lanes, k // kk)
                    break
            if pick is None:
                return None
            n, lanes, c = pick
            remaining = remaining - lanes * c
            parts.append((n, c))
        if remaining != Poly() or not parts:
            return None
        total = Poly()
        for n, c in parts:
            total = total + next(poly for poly, m in self._holders().items() if m == n) * c
        rest = p - total
        if not self.ev.is_uniform(rest):
            return None
        return parts, rest

    def _scale(self, dst: int, src: str, c: int) -> None:
        c &= MASK32
        if c == 1:
            self.emit(f"v_mov_b32 v{dst}, {src}")
        elif c & (c - 1) == 0:
            self.emit(f"v_lshlrev_b32 v{dst}, {c.bit_length() - 1}, {src}")
        else:
            self.emit(f"v_mul_lo_u32 v{dst}, {_lit(c)}, {src}")

    def into(self, dst: int, p: Poly) -> None:
        """``v{dst} = p mod 2**32``."""
        first = True
        for mono, c in p.terms:
            if not mono:
                continue
            if first:
                self._term(dst, mono, abs(c))
                if c < 0:
                    self.emit(f"v_sub_nc_u32 v{dst}, 0, v{dst}")
            else:
                t = self._temp()
                self._term(t, mono, abs(c))
                op = "v_add_nc_u32" if c > 0 else "v_subrev_nc_u32"
                self.emit(f"{op} v{dst}, v{t}, v{dst}")
                self.temps.insert(0, t)
            first = False
        const = p.constant
        if first:
            self.emit(f"v_mov_b32 v{dst}, {_lit(const)}")
        elif const:
            self.emit(f"v_add_nc_u32 v{dst}, {_lit(const)}, v{dst}")

    def _term(self, dst: int, mono: tuple, c: int) -> None:
        """``v{dst} = c * prod(mono)``."""
        srcs = []
        for atom in mono:
            if self.ev.atoms[atom].kind == "lane":
                srcs.append(f"v{self.lane(atom)}")
                continue
            f = self.sregs.factor(atom) or self.sregs.held(atom)
            if f is None or c % f[1]:
                raise FixRefused(f"{self.where}: no SGPR holds {self.ev.atoms[atom].origin} before the loop")
            srcs.append(f"s{f[0]}")
            c //= f[1]
        if not srcs[0].startswith("v"):
            srcs.sort(key=lambda s: not s.startswith("v"))
        cur = srcs[0]
        for other in srcs[1:]:
            self.emit(f"v_mul_lo_u32 v{dst}, {cur}, {other}")
            cur = f"v{dst}"
        if c == 1:
            if cur != f"v{dst}":
                self.emit(f"v_mov_b32 v{dst}, {cur}")
        elif c & (c - 1) == 0:
            self.emit(f"v_lshlrev_b32 v{dst}, {c.bit_length() - 1}, {cur}")
        else:
            self.emit(f"v_mul_lo_u32 v{dst}, {_lit(c)}, {cur}")
