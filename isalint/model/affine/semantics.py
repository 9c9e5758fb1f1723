"""Integer semantics of the RDNA3 instructions address computations use, on :class:`Word` values.

One function, :func:`evaluate`, maps a statement's source words to the words it writes. The
evaluator (:mod:`.evaluator`) supplies the operands and creates atoms. Ring operations (add, sub,
mul_lo, shifts left) stay exact on ``low`` words for any values; 64-bit results are built from the
carry of the low add and the high words (``*_co_ci``, ``addc``), so that ``v[a:a+1]`` of an
address chain becomes one polynomial. Anything else (bit operations whose fields could overlap,
shifts right of mixed values, selects) is evaluated only when it is exact for every lane, else
the result is unknown and says why, or, for a wave-uniform result, a fresh uniform atom.
"""
from __future__ import annotations

import re

from .poly import Poly
from .words import INT32, MASK32, UINT32, Cond, Pred, Wide, Word, high, low, unknown

_SUFFIX = re.compile(r"_(e32|e64)$")
_CMP = re.compile(r"^s_cmpk?_(eq|lg|lt|le|gt|ge)_([iu])32$")
_VCMP = re.compile(r"^v_cmp_(eq|ne|lg|lt|le|gt|ge)_([iu])32$")


def base_mnemonic(m: str) -> str:
    m = m.lower()
    if m.startswith("v_dual_"):
        m = "v_" + m[len("v_dual_"):]
    return _SUFFIX.sub("", m)


def conds_of(*words) -> frozenset:
    out: frozenset = frozenset()
    for w in words:
        out |= w.conds
    return out


def _const(w: Word) -> int | None:
    if w.kind == "low" and w.poly.is_const:
        return w.poly.constant & MASK32
    return None


def _simm16(c: int) -> int:
    c &= 0xFFFF
    return c - 0x10000 if c & 0x8000 else c


class Semantics:
    """Evaluates statements against a context that reads operands and makes atoms."""

    def __init__(self, ctx):
        self.ctx = ctx

    # -- helpers ------------------------------------------------------------------------------
    def first_unknown(self, *words) -> Word | None:
        return next((w for w in words if not w.known), None)

    def lows(self, what: str, *words) -> list[Poly] | Word:
        bad = self.first_unknown(*words)
        if bad is not None:
            return bad
        for w in words:
            if w.kind != "low":
                return unknown(f"{what} reads a {w.kind} word as a 32-bit integer")
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

    # -- bit operations -----------------------------------------------------------------------
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
            return low(self.ctx.uniform_atom(f"{op}@{line}", f"a bitwise {op} at line {line}"))
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
            return low(self.ctx.uniform_atom(f"and@{line}", f"a bitwise and at line {line}", lo=0, hi=c,
                                             twos=_mono_twos((), c, {})))
        return unknown(f"the and at line {line} masks bits that mix per-lane and uniform values")

    def lshr(self, p: Poly, n: int, line: int, signed: bool = False) -> Word:
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
            return low(self.ctx.uniform_atom(f"shr@{line}", f"a shift right at line {line}"))
        return unknown(f"the shift right at line {line} mixes per-lane and uniform bits")

    # -- the table -------------------------------------------------------------------------------
    def evaluate(self, ins, stmt, slots, defs: list[str], src, wide) -> dict[str, Word]:  # noqa: C901
        """Words written by one statement. ``src(k, part=0)`` reads source ``k``, ``wide(k)`` reads
        source ``k`` as a 64-bit pair."""
        m = base_mnemonic(stmt.mnemonic)
        line = ins.lineno
        what = f"'{stmt.mnemonic}' at line {line}"
        out: dict[str, Word] = {}

        def put(*words):
            for r, w in zip(defs, words):
                if w is not None:
                    out[r] = w
            return out

        def ring(fn, *ks):
            ps = self.lows(what, *(src(k) for k in ks))
            if isinstance(ps, Word):
                return put(ps)
            return put(low(fn(*ps), conds_of(*(src(k) for k in ks))))

        if m in ("v_mov_b32", "s_mov_b32"):
            return put(src(0))
        if m == "s_movk_i32":
            return put(low(_simm16(_const(src(0)) or 0)))
        if m in ("s_mov_b64", "v_mov_b64"):
            return put(src(0, 0), src(0, 1))
        if m in ("v_add_nc_u32", "v_add_u32", "s_add_i32", "v_add_nc_i32"):
            return ring(lambda a, b: a + b, 0, 1)
        if m in ("v_sub_nc_u32", "v_sub_u32", "s_sub_i32", "v_sub_nc_i32"):
            return ring(lambda a, b: a - b, 0, 1)
        if m in ("v_subrev_nc_u32", "v_subrev_u32"):
            return ring(lambda a, b: b - a, 0, 1)
        if m in ("v_mul_lo_u32", "s_mul_i32", "v_mul_lo_i32"):
            return ring(lambda a, b: a * b, 0, 1)
        if m in ("s_addk_i32", "s_mulk_i32"):
            cur = self.ctx.current(defs[0])
            ps = self.lows(what, cur)
            if isinstance(ps, Word):
                return put(ps)
            k = _simm16(_const(src(0)) or 0)
            return put(low(ps[0] + k if m == "s_addk_i32" else ps[0] * k, cur.conds))
        if m in ("v_add3_u32",):
            return ring(lambda a, b, c: a + b + c, 0, 1, 2)
        if m in ("v_lshlrev_b32", "s_lshl_b32", "v_lshl_add_u32", "v_add_lshl_u32", "s_lshl1_add_u32",
                 "s_lshl2_add_u32", "s_lshl3_add_u32", "s_lshl4_add_u32", "v_lshl_or_b32"):
            return self._shift_left(m, what, line, src, put)
        if m in ("v_mul_u32_u24", "v_mad_u32_u24"):
            ws = [src(k) for k in range(3 if m == "v_mad_u32_u24" else 2)]
            ps = self.lows(what, *ws)
            if isinstance(ps, Word):
                return put(ps)
            conds = conds_of(*ws)
            for p in ps[:2]:
                conds |= self.range_cond(p, 0, (1 << 24) - 1, line, "is a 24-bit multiply operand")
            r = ps[0] * ps[1] + (ps[2] if len(ps) > 2 else 0)
            return put(low(r, conds))
        if m in ("v_and_b32", "s_and_b32", "v_or_b32", "s_or_b32", "v_xor_b32", "s_xor_b32", "v_or3_b32",
                 "v_and_or_b32"):
            return self._bitwise(m, what, line, src, put, defs)
        if m in ("v_lshrrev_b32", "s_lshr_b32", "v_ashrrev_i32", "s_ashr_i32"):
            rev = m.startswith("v_")
            val, amt = (src(1), src(0)) if rev else (src(0), src(1))
            ps = self.lows(what, val)
            n = _const(amt)
            if isinstance(ps, Word):
                return put(ps)
            if n is None:
                return put(self._uniform_or_unknown(defs, line, f"{what} shifts by a runtime amount", val, amt))
            n &= 31
            if "ashr" in m and n == 31:
                cond = self.range_cond(ps[0], INT32[0], INT32[1], line, "sign-extends a 32-bit index", "index")
                return put(high(ps[0], val.conds | cond))
            w = self.lshr(ps[0], n, line, signed="ashr" in m)
            return put(Word(w.kind, w.poly, w.conds | val.conds, w.reason) if w.known else w)
        if m in ("v_bfe_u32", "s_bfe_u32", "v_bfe_i32", "s_bfe_i32"):
            if m.startswith("s_"):
                packed = _const(src(1))
                off, width = (None, None) if packed is None else (packed & 31, (packed >> 16) & 0x7F)
            else:
                off, width = _const(src(1)), _const(src(2))
            ps = self.lows(what, src(0))
            if isinstance(ps, Word):
                return put(ps)
            if off is None or width is None:
                return put(self._uniform_or_unknown(defs, line, f"{what} extracts a runtime field", src(0)))
            signed = m.endswith("i32")
            if self.ctx.lane_values(ps[0]) is not None:
                return put(low(self.ctx.lane_atom("bfe_i" if signed else "bfe_u", ps[0],
                                                  Poly.const(off | width << 8), line)))
            shifted = self.lshr(ps[0], off, line)
            if not shifted.known or signed:
                return put(self._uniform_or_unknown(defs, line, f"{what} extracts a field of a mixed value", src(0)))
            w = self.band(shifted.poly, (1 << width) - 1 if width < 32 else MASK32, line)
            return put(Word(w.kind, w.poly, w.conds | shifted.conds | src(0).conds, w.reason) if w.known else w)
        if m in ("v_add_co_u32", "s_add_u32", "v_sub_co_u32", "s_sub_u32", "v_subrev_co_u32"):
            a, b = (src(1), src(0)) if m == "v_subrev_co_u32" else (src(0), src(1))
            ps = self.lows(what, a, b)
            if isinstance(ps, Word):
                return put(ps, ps)
            sub = "sub" in m
            res = low(ps[0] - ps[1] if sub else ps[0] + ps[1], conds_of(a, b))
            carry = Word("carry", conds=conds_of(a, b), carry=(ps[0], ps[1], sub))
            return put(res, carry)
        if m in ("v_add_co_ci_u32", "s_addc_u32", "v_sub_co_ci_u32", "s_subb_u32", "v_subrev_co_ci_u32"):
            a, b = src(0), src(1)
            cin = self.ctx.current("scc") if m.startswith("s_") else src(2)
            if m == "v_subrev_co_ci_u32":
                a, b = b, a
            return put(self._carry_high(what, line, a, b, cin, "sub" in m), unknown(f"carry-out of {what}"))
        if m in ("v_lshlrev_b64", "s_lshl_b64"):
            amt, val = (src(0), wide(1)) if m.startswith("v_") else (src(1), wide(0))
            n = _const(amt)
            if not val.known:
                return put(unknown(val.reason), unknown(val.reason))
            if n is None:
                return put(unknown(f"{what} shifts by a runtime amount"), unknown(f"{what} shifts by a runtime amount"))
            q = val.poly * (1 << (n & 63))
            return put(low(q, val.conds), high(q, val.conds))
        if m in ("v_mad_u64_u32", "v_mad_i64_i32"):
            return self._mad64(m, what, line, src, put)
        if _CMP.match(m):
            return put(self._compare(m, what, line, src))
        if m == "s_cselect_b32":
            return put(self._cselect(defs, line, src))
        if m in ("s_and_not1_b32", "s_andn2_b32") or (m == "s_and_b32" and self._reads_exec(src)):
            return put(self._exec_and(m, src), unknown(f"SCC of {what}"))
        if _VCMP.match(m):
            return put(self._vector_compare(m, line, src))
        return {}

    # -- pieces of the table -----------------------------------------------------------------------
    def _shift_left(self, m, what, line, src, put):
        if m in ("v_lshlrev_b32",):
            val, amt, add = src(1), src(0), None
        elif m == "s_lshl_b32":
            val, amt, add = src(0), src(1), None
        elif m.startswith("s_lshl") and m.endswith("_add_u32"):
            val, amt, add = src(0), low(int(m[6])), src(1)
        elif m == "v_lshl_add_u32" or m == "v_lshl_or_b32":
            val, amt, add = src(0), src(1), src(2)
        else:  # v_add_lshl_u32: (a + b) << c
            s = self.lows(what, src(0), src(1))
            if isinstance(s, Word):
                return put(s)
            val, amt, add = low(s[0] + s[1], conds_of(src(0), src(1))), src(2), None
        n = _const(amt)
        ps = self.lows(what, val)
        if isinstance(ps, Word):
            return put(ps)
        if n is None:
            return put(unknown(f"{what} shifts by a runtime amount"))
        shifted = ps[0] * (1 << (n & 31))
        conds = val.conds
        if add is None:
            return put(low(shifted, conds))
        qs = self.lows(what, add)
        if isinstance(qs, Word):
            return put(qs)
        if m == "v_lshl_or_b32":
            w = self.bor(shifted, qs[0], line)
            return put(Word(w.kind, w.poly, w.conds | conds | add.conds, w.reason) if w.known else w)
        return put(low(shifted + qs[0], conds | add.conds))

    def _bitwise(self, m, what, line, src, put, defs):
        if m == "v_and_or_b32":
            first = self._bitwise("v_and_b32", what, line, lambda k, part=0: src(k), lambda *w: w[0], defs)
            if not first.known:
                return put(first)
            ps = self.lows(what, src(2))
            if isinstance(ps, Word):
                return put(ps)
            w = self.bor(first.poly, ps[0], line)
            return put(Word(w.kind, w.poly, w.conds | first.conds | src(2).conds, w.reason) if w.known else w)
        if m == "v_or3_b32":
            first = self._bitwise("v_or_b32", what, line, src, lambda *w: w[0], defs)
            if not first.known:
                return put(first)
            ps = self.lows(what, src(2))
            if isinstance(ps, Word):
                return put(ps)
            w = self.bor(first.poly, ps[0], line)
            return put(Word(w.kind, w.poly, w.conds | first.conds | src(2).conds, w.reason) if w.known else w)
        a, b = src(0), src(1)
        ps = self.lows(what, a, b)
        if isinstance(ps, Word):
            return put(ps)
        conds = conds_of(a, b)
        op = m[2:].split("_")[0]
        if op == "and":
            ca, cb = _const(a), _const(b)
            if ca is None and cb is None:
                if self.ctx.lane_values(ps[0]) is not None and self.ctx.lane_values(ps[1]) is not None:
                    return put(low(self.ctx.lane_atom("and", ps[0], ps[1], line), conds))
                return put(self._uniform_or_unknown(defs, line, f"{what} masks with a runtime value", a, b))
            p, c = (ps[1], ca) if ca is not None else (ps[0], cb)
            w = self.band(p, c, line)
        else:
            w = self.bor(ps[0], ps[1], line, op)
        return put(Word(w.kind, w.poly, w.conds | conds, w.reason) if w.known else w)

    def _carry_high(self, what, line, a, b, cin, sub) -> Word:
        if cin.kind != "carry" or cin.carry[2] != sub:
            return unknown(f"{what} adds a carry isalint cannot pair with its low half")
        pa, pb, _ = cin.carry
        for x, y in ((a, b), (b, a)) if not sub else ((a, b),):
            wa, wb = self.widen(pa, x, line), self.widen(pb, y, line)
            if wa is not None and wb is not None:
                q = wa.poly - wb.poly if sub else wa.poly + wb.poly
                return high(q, wa.conds | wb.conds | cin.conds)
        return unknown(f"{what}: the high words do not belong to the values of the low add")

    def _mad64(self, m, what, line, src, put):
        a, b = src(0), src(1)
        c_lo, c_hi = src(2, 0), src(2, 1)
        ps = self.lows(what, a, b, c_lo)
        if isinstance(ps, Word):
            return put(ps, ps)
        lo_word = low(ps[0] * ps[1] + ps[2], conds_of(a, b, c_lo))
        rng, kind, text = (INT32, "index", "sign-extends a 32-bit factor") if m == "v_mad_i64_i32" else \
            (UINT32, "range", "zero-extends a 32-bit factor")
        wc = self.widen(ps[2], c_hi, line)
        if wc is None:
            return put(lo_word, unknown(f"high half of {what}"))
        conds = conds_of(a, b) | wc.conds
        for p in ps[:2]:
            conds |= self.range_cond(p, rng[0], rng[1], line, text, kind)
        return put(lo_word, high(ps[0] * ps[1] + wc.poly, conds))

    def _compare(self, m, what, line, src) -> Word:
        mm = _CMP.match(m)
        op, signed = mm.group(1), mm.group(2) == "i"
        a, b = src(0), src(1)
        if m.startswith("s_cmpk_"):
            k = _const(b)
            if k is None:
                return unknown(f"{what} has no immediate")
            b = low(_simm16(k) if signed else k & 0xFFFF)
        ps = self.lows(what, a, b)
        if isinstance(ps, Word):
            return ps
        rng = INT32 if signed else UINT32
        conds = conds_of(a, b)
        for p in ps:
            conds |= self.range_cond(p, rng[0], rng[1], line, "is compared as a 32-bit integer")
        pa, pb = ps
        pred = {"lt": Pred("lt", pa, pb, signed), "le": Pred("le", pa, pb, signed), "gt": Pred("lt", pb, pa, signed),
                "ge": Pred("le", pb, pa, signed), "eq": Pred("eq", pa, pb, signed),
                "lg": Pred("ne", pa, pb, signed)}[op]
        return Word("pred", conds=conds, pred=pred)

    def _vector_compare(self, m, line, src) -> Word:
        mm = _VCMP.match(m)
        op = {"ne": "lg"}.get(mm.group(1), mm.group(1))
        a, b = src(0), src(1)
        if not (a.kind == "low" and b.kind == "low" and self.ctx.is_uniform(a.poly) and self.ctx.is_uniform(b.poly)):
            return unknown(f"the compare at line {line} is not wave-uniform")
        w = self._compare(f"s_cmp_{op}_{mm.group(2)}32", f"the compare at line {line}", line, src)
        if w.kind != "pred":
            return w
        return Word("execand", conds=w.conds, pred=w.pred)

    def _cselect(self, defs, line, src) -> Word:
        scc = self.ctx.current("scc")
        a, b = src(0), src(1)
        ca, cb = _const(a), _const(b)
        if scc.kind == "pred" and {ca, cb} == {0, MASK32}:
            p = scc.pred if ca == MASK32 else scc.pred.negate()
            return Word("mask", conds=scc.conds, pred=p)
        if a.same(b):
            return a
        return self._uniform_or_unknown(defs, line, f"the select at line {line}", a, b)

    def _reads_exec(self, src) -> bool:
        return any(src(k).kind == "exec" for k in (0, 1))

    def _exec_and(self, m, src) -> Word:
        a, b = src(0), src(1)
        if m == "s_and_b32":
            mask = b if a.kind == "exec" else a
            if mask.kind == "mask":
                return Word("execand", conds=mask.conds, pred=mask.pred)
        elif a.kind == "exec" and b.kind == "mask":
            return Word("execand", conds=b.conds, pred=b.pred.negate())
        return unknown(f"an exec mask isalint does not follow ({m})")

    def _uniform_or_unknown(self, defs, line, reason, *words) -> Word:
        if defs and defs[0].startswith("s") and not defs[0].startswith("scc"):
            return low(self.ctx.uniform_atom(f"{defs[0]}@{line}", f"{defs[0]} written at line {line}"))
        if all(w.kind == "low" and self.ctx.is_uniform(w.poly) for w in words):
            return low(self.ctx.uniform_atom(f"{defs[0] if defs else 'value'}@{line}", reason))
        return unknown(reason)


def _mono_twos(mono, c: int, twos) -> int:
    k = 64 if c == 0 else (c & -c).bit_length() - 1
    return min(32, k + sum(twos.get(a, 0) for a in mono))
