"""SALU code for the 64-bit bases and the per-iteration steps, before the loop.

A base is a polynomial over kernel arguments, workgroup ids and the like, exact in 64 bits. It is
built from SGPRs that hold, at the insertion point, a pointer (a pair) or ``k * atom`` exactly
(their value proven to lie in ``[0, 2**32)`` over the size domain): each monomial is a product of
at most two such registers times a constant, formed with ``s_mul_i32`` (low word) and
``s_mul_hi_u32`` (high word) so that it is exact in 64 bits whatever N, and added with
``s_add_u32``/``s_addc_u32``. Consecutive bases of a group usually differ by one stride
(``4*N`` bytes for the next row): that difference is computed once and added, two instructions per
base. A step only needs its value modulo 2**32 (it is added to a 32-bit offset).
"""
from __future__ import annotations

from ...hw.registers import SGPRS
from ...model.affine.poly import Poly
from .. import FixRefused

MASK32 = (1 << 32) - 1


class Point:
    """Register values where the setup goes: before instruction ``index``, or after it when it ends
    its block (a preheader that falls through into the loop)."""

    def __init__(self, ev, index: int, after: bool = False):
        self.ev = ev
        self.index = index
        self.after = after

    def word(self, reg: str):
        if self.after:
            return self.ev.exit_word(self.ev.cfg.block_of[self.index], reg)
        return self.ev.word(reg, self.index)

    def wide(self, lo: str, hi: str):
        return self.ev._pair(self.word(lo), self.word(hi), self.ev.program.instrs[self.index].lineno)


class Registers:
    """What the SGPRs hold at the insertion point, and the exact ranges of the atoms."""

    def __init__(self, point: Point, ranges: dict[str, tuple[int, int]]):
        self.ev = point.ev
        self.point = point
        self.ranges = ranges
        self.read: set[str] = set()  # the registers code built from these values reads
        self.words = {}
        for n in range(SGPRS):
            w = point.word(f"s{n}")
            if w.kind == "low":
                self.words[n] = w.poly
        self.pairs = {}
        for n in range(0, SGPRS, 2):
            w = point.wide(f"s{n}", f"s{n + 1}")
            if w.known and not w.conds:
                self.pairs[n] = w.poly

    def span(self, p: Poly) -> tuple[int, int] | None:
        """Interval of ``p`` over the atom ranges (None when an atom has no known range)."""
        lo = hi = 0
        for mono, c in p.terms:
            a, b = c, c
            for atom in mono:
                r = self.ranges.get(atom)
                if r is None:
                    return None
                cands = (a * r[0], a * r[1], b * r[0], b * r[1])
                a, b = min(cands), max(cands)
            lo, hi = lo + a, hi + b
        return lo, hi

    def factor(self, atom: str) -> tuple[int, int] | None:
        """(SGPR number, k) with the register holding exactly ``k * atom`` as an unsigned word."""
        best = None
        for n, p in self.words.items():
            if len(p.terms) != 1:
                continue
            mono, k = p.terms[0]
            if mono != (atom,) or k <= 0:
                continue
            s = self.span(p)
            if s is None or s[0] < 0 or s[1] > MASK32:
                continue
            if best is None or k < best[1]:
                best = (n, k)
        if best is not None:
            self.read.add(f"s{best[0]}")
        return best

    def held(self, atom: str) -> tuple[int, int] | None:
        """(SGPR number, k) with the register holding ``k * atom`` modulo 2**32 (enough for VALU offsets)."""
        for n, p in self.words.items():
            if len(p.terms) == 1 and p.terms[0][0] == (atom,) and p.terms[0][1] > 0:
                self.read.add(f"s{n}")
                return n, p.terms[0][1]
        return None

    def pointer(self, base: Poly) -> tuple[int, Poly] | None:
        """(pair number, rest): a pair holding ``pointer + constant`` of the pointer atom of ``base``."""
        for n, p in self.pairs.items():
            atoms = [a for a in p.atoms()]
            if len(atoms) != 1 or self.ev.atoms[atoms[0]].hi is None or self.ev.atoms[atoms[0]].hi <= MASK32:
                continue
            rest = base - p
            if atoms[0] not in rest.atoms():
                self.read |= {f"s{n}", f"s{n + 1}"}
                return n, rest
        return None


class SaluWriter:
    """Emits SALU lines computing bases into SGPR pairs. Scratch: the pairs ``s[tpair:tpair+1]``
    (a product) and ``s[dpair:dpair+1]`` (the stride between consecutive bases) and ``s{single}``."""

    def __init__(self, regs: Registers, tpair: int, dpair: int, single: int, where: str):
        self.regs = regs
        self.t = [tpair, tpair + 1, single, dpair, dpair + 1]
        self.where = where
        self.lines: list[str] = []

    def emit(self, text: str) -> None:
        self.lines.append(text)

    def base(self, dst: int, value: Poly, prev: tuple[int, Poly] | None, stride_cache: dict) -> None:
        """``s[dst:dst+1] = value`` (exact 64-bit), from the previous base when that is cheaper."""
        if prev is not None:
            pdst, pval = prev
            delta = value - pval
            if delta not in stride_cache:
                d0 = self.t[3]
                self.emit(f"s_mov_b64 s[{d0}:{d0 + 1}], 0")
                self.add_terms(d0, delta)
                stride_cache.clear()
                stride_cache[delta] = d0
            d0 = stride_cache[delta]
            self.emit(f"s_add_u32 s{dst}, s{pdst}, s{d0}")
            self.emit(f"s_addc_u32 s{dst + 1}, s{pdst + 1}, s{d0 + 1}")
            return
        ptr = self.regs.pointer(value)
        if ptr is None:
            raise FixRefused(f"{self.where}: no SGPR pair holds the pointer of the base {value} before the loop")
        n, rest = ptr
        self.emit(f"s_mov_b64 s[{dst}:{dst + 1}], s[{n}:{n + 1}]")
        self.add_terms(dst, rest)

    def add_terms(self, dst: int, p: Poly) -> None:
        """``s[dst:dst+1] += p`` exactly in 64 bits."""
        const = p.constant
        for mono, c in p.terms:
            if not mono:
                continue
            t0 = self.t[0]
            self.product(t0, mono, abs(c))
            op, opc = ("s_add_u32", "s_addc_u32") if c > 0 else ("s_sub_u32", "s_subb_u32")
            self.emit(f"{op} s{dst}, s{dst}, s{t0}")
            self.emit(f"{opc} s{dst + 1}, s{dst + 1}, s{t0 + 1}")
        if const:
            v = const & ((1 << 64) - 1)
            self.emit(f"s_add_u32 s{dst}, s{dst}, {_lit(v & MASK32)}")
            self.emit(f"s_addc_u32 s{dst + 1}, s{dst + 1}, {_lit(v >> 32)}")

    def product(self, t0: int, mono: tuple, c: int) -> None:
        """``s[t0:t0+1] = c * prod(mono)`` exactly (unsigned 32 x 32 -> 64-bit products)."""
        regs = []
        for atom in mono:
            f = self.regs.factor(atom)
            if f is None:
                raise FixRefused(f"{self.where}: no SGPR holds {self.regs.ev.atoms[atom].origin} before the loop, "
                                 "to compute a base from")
            regs.append(f)
        k = 1
        for _, kk in regs:
            k *= kk
        if c % k:
            raise FixRefused(f"{self.where}: cannot form {c}*{'*'.join(mono)} from the SGPRs before the loop")
        c //= k
        if len(regs) == 1:
            r = regs[0][0]
            self.emit(f"s_mul_i32 s{t0}, s{r}, {_lit(c)}")
            self.emit(f"s_mul_hi_u32 s{t0 + 1}, s{r}, {_lit(c)}")
            return
        if len(regs) != 2:
            raise FixRefused(f"{self.where}: a base term multiplies more than two runtime values")
        (r1, _), (r2, _) = regs
        self.emit(f"s_mul_i32 s{t0}, s{r1}, s{r2}")
        self.emit(f"s_mul_hi_u32 s{t0 + 1}, s{r1}, s{r2}")
        if c == 1:
            return
        if c & (c - 1) == 0:
            self.emit(f"s_lshl_b64 s[{t0}:{t0 + 1}], s[{t0}:{t0 + 1}], {c.bit_length() - 1}")
            return
        x = self.t[2]
        self.emit(f"s_mul_i32 s{x}, s{t0 + 1}, {_lit(c)}")
        self.emit(f"s_mul_hi_u32 s{t0 + 1}, s{t0}, {_lit(c)}")
        self.emit(f"s_mul_i32 s{t0}, s{t0}, {_lit(c)}")
        self.emit(f"s_add_i32 s{t0 + 1}, s{t0 + 1}, s{x}")

    def word(self, dst: int, p: Poly) -> None:
        """``s{dst} = p mod 2**32`` (for a step)."""
        first = True
        for mono, c in p.terms:
            if not mono:
                continue
            f = [self.regs.factor(a) or self._any(a) for a in mono]
            k = 1
            for _, kk in f:
                k *= kk
            if c % k or len(f) > 2:
                raise FixRefused(f"{self.where}: cannot form the step {p} from the SGPRs before the loop")
            target = dst if first else self.t[0]
            if len(f) == 1:
                self.emit(f"s_mul_i32 s{target}, s{f[0][0]}, {_lit((c // k) & MASK32)}")
            else:
                self.emit(f"s_mul_i32 s{target}, s{f[0][0]}, s{f[1][0]}")
                if c // k != 1:
                    self.emit(f"s_mul_i32 s{target}, s{target}, {_lit((c // k) & MASK32)}")
            if not first:
                self.emit(f"s_add_i32 s{dst}, s{dst}, s{target}")
            first = False
        const = p.constant & MASK32
        if first:
            self.emit(f"s_mov_b32 s{dst}, {_lit(const)}")
        elif const:
            self.emit(f"s_add_i32 s{dst}, s{dst}, {_lit(const)}")

    def _any(self, atom: str) -> tuple[int, int]:
        """A register holding ``k * atom`` modulo 2**32 (enough for a 32-bit step)."""
        for n, p in self.regs.words.items():
            if len(p.terms) == 1 and p.terms[0][0] == (atom,) and p.terms[0][1] > 0:
                self.regs.read.add(f"s{n}")
                return n, p.terms[0][1]
        raise FixRefused(f"{self.where}: no SGPR holds {self.regs.ev.atoms[atom].origin} before the loop")


def _lit(v: int) -> str:
    """An operand for a 32-bit constant: inline when the assembler encodes it inline."""
    v &= MASK32
    if v <= 64:
        return str(v)
    if v >= MASK32 - 15:
        return str(v - (1 << 32))
    return hex(v)
