"""What an instruction computes, per lane: the integer semantics of the VALU and SALU opcodes
compilers use for addresses (moves, add/sub/mul, shifts, bit operations, bit-field extracts, selects,
compares into lane masks).

:class:`InstructionSemantics` evaluates one instruction's results from its operands' values; the
operands' values come from the CFG walk of :class:`~isalint.model.lanes.evaluator.LaneEvaluator`,
which supplies ``program``, ``_value(reg, index)``, ``_slot_defs`` and ``_scratch_offset``.
"""
from __future__ import annotations

import operator
import re
import struct

from ..reaching import reaching_defs
from .values import MASK, LaneAlgebra, Value, unknown

_SUFFIX = re.compile(r"_(e32|e64|sdwa|dpp|e64_dpp)$")
CROSS_LANE_MODS = ("quad_perm", "row_shl", "row_shr", "row_ror", "row_mirror", "row_half_mirror", "row_bcast",
                   "row_share", "row_xmask", "wave_shl", "wave_shr", "wave_rol", "wave_ror", "dpp8", "dpp")


def base_mnemonic(m: str) -> str:
    """The mnemonic without its encoding suffix (``_e32``, ``_e64``, ``_dpp`` ...) and VOPD prefix."""
    m = m.lower()
    if m.startswith("v_dual_"):
        m = "v_" + m[len("v_dual_"):]
    return _SUFFIX.sub("", m)



class InstructionSemantics(LaneAlgebra):
    """The per-instruction part of the lane evaluator."""

    def _operand(self, ins, slot, part: int = 0) -> Value:
        op = slot.operand
        if op.kind == "int":
            return self.const(int(op.value) >> (32 * part))
        if op.kind == "float":
            if part:
                return self.const(0)
            return self.const(struct.unpack("<I", struct.pack("<f", float(op.value)))[0])
        if op.kind == "special" and op.file == "null":
            return self.const(0)
        if op.neg or op.abs or op.half:
            return unknown(f"operand '{op.text}' at line {ins.lineno} has a modifier")
        regs = slot.regs
        if part >= len(regs):
            return self.const(0) if op.kind in ("int",) else unknown(f"operand '{op.text}' has no part {part}")
        return self._value(regs[part], ins.index)

    def _evaluate(self, ins) -> dict[str, Value]:
        if ins.opaque:
            return {}
        if ins.klass == "scratch_store":
            slots = self._slot_defs.get(ins.index, [])
            data = next((sl for sl in ins.slots[0] if sl.name.startswith("data")), None)
            if data is None or slots == ["scratch:*"]:
                return {}
            return {slot: self._value(r, ins.index) for slot, r in zip(slots, data.regs)}
        if ins.klass == "scratch_load":
            const = self._scratch_offset(ins)
            dst = [r for sl in ins.slots[0] if sl.role == "def" for r in sl.regs]
            if const is None or ins.opcode.rstrip("0123456789").endswith(("_u", "_i", "_d16_hi_b", "_d16_b")):
                return {r: unknown(f"{r} is loaded from scratch at line {ins.lineno}") for r in dst}
            return {r: self._value(f"scratch:{const + 4 * j}", ins.index) for j, r in enumerate(dst)}
        if ins.klass in ("lds", "vmem_load", "vmem_atomic", "scratch_load"):
            return {r: unknown(f"{r} is loaded from memory at line {ins.lineno}") for r in ins.defs
                    if r.startswith("v")}
        if ins.klass == "smem":
            return {r: self.fresh(f"{r}@L{ins.lineno}") for r in ins.defs}
        out: dict[str, Value] = {}
        for si, stmt in enumerate(ins.stmts):
            slots = ins.slots[si]
            info = ins.infos[si]
            out.update(self._statement(ins, stmt, slots, info.mnemonic if info is not None else stmt.mnemonic))
        return out

    def _statement(self, ins, stmt, slots, opcode: str) -> dict[str, Value]:
        m = base_mnemonic(opcode)  # the gfx11 opcode: an alias evaluates as what it stands for
        defs = [s for s in slots if s.role in ("def", "defuse") and s.regs]
        srcs = [s for s in slots if s.role == "use"]
        what = f"'{stmt.mnemonic}' at line {ins.lineno}"
        if any(mod.name in CROSS_LANE_MODS for mod in stmt.modifiers):
            return {r: unknown(f"{what} reads other lanes (DPP)") for d in defs for r in d.regs}
        dst = [r for d in defs for r in d.regs]
        if not dst and m.startswith("v_cmp_") and not m.startswith("v_cmpx"):
            dst = [r for r in ins.defs if r.startswith("vcc")][:1]
        if not dst:
            return {}

        def src(n: int, part: int = 0) -> Value:
            if n >= len(srcs):
                return unknown(f"{what} has no operand {n}")
            return self._operand(ins, srcs[n], part)

        res = self._semantics(m, src, srcs, what, ins, defs)
        if res is None:
            if m.startswith("s_"):
                return {r: self.fresh(f"{r}@L{ins.lineno}") for r in dst}
            vals = [src(k) for k in range(len(srcs))]
            if all(self.wave_uniform(v) for v in vals) and m.startswith("v_") and not m.startswith("v_cmp"):
                return {r: self.fresh(f"{r}@L{ins.lineno}") for r in dst}
            bad = next((v for v in vals if not v.known), None)
            reason = bad.reason if bad is not None else f"{what} is not an integer operation isalint evaluates"
            return {r: unknown(reason) for r in dst}
        if isinstance(res, Value):
            return {dst[0]: res}
        return {r: v for r, v in zip(dst, res) if v is not None}

    def _semantics(self, m: str, src, srcs, what: str, ins, defs):  # noqa: C901 - one table of opcodes
        # 32-bit moves and arithmetic (VALU and SALU alike; shifts take the amount first in *rev forms)
        if m in ("v_mov_b32", "s_mov_b32", "s_movk_i32", "v_mov_b16"):
            return src(0)
        if m in ("s_mov_b64", "v_mov_b64", "s_cmov_b32"):
            if m == "s_cmov_b32":
                return None
            return [src(0, 0), src(0, 1)]
        if m == "v_readfirstlane_b32":
            v = src(0)
            if v.known and not self.varying(v) and self.n % self.ws == 0:
                ws = self.ws
                return Value(tuple([v.lanes[t - t % ws] for t in range(self.n)]), v.terms)
            return None
        if m in ("v_add_nc_u32", "v_add_u32", "v_add_nc_i32", "s_add_u32", "s_add_i32"):
            return self.add(src(0), src(1))
        if m in ("v_sub_nc_u32", "v_sub_u32", "v_sub_nc_i32", "s_sub_u32", "s_sub_i32"):
            return self.sub(src(0), src(1))
        if m in ("v_subrev_nc_u32", "v_subrev_u32"):
            return self.sub(src(1), src(0))
        if m in ("s_addk_i32",):
            return self.add(self._value(defs[0].regs[0], ins.index), self._simm16(src(0)))
        if m in ("s_mulk_i32",):
            return self.mul(self._value(defs[0].regs[0], ins.index), self._simm16(src(0)), what)
        if m in ("v_mul_lo_u32", "s_mul_i32", "v_mul_lo_i32"):
            return self.mul(src(0), src(1), what)
        if m in ("v_mul_u32_u24", "v_mul_i32_i24"):
            return self.mul(self._u24(src(0), what), self._u24(src(1), what), what)
        if m in ("v_mad_u32_u24", "v_mad_i32_i24"):
            return self.add(self.mul(self._u24(src(0), what), self._u24(src(1), what), what), src(2))
        if m in ("v_mad_u64_u32", "v_mad_i64_i32"):
            lo = self.add(self.mul(src(0), src(1), what), src(2, 0))
            a, b, c0, c1 = src(0), src(1), src(2, 0), src(2, 1)
            hi: Value | None = None
            if all(v.concrete for v in (a, b, c0, c1)) and m == "v_mad_u64_u32":
                hi = Value(tuple([((x * y + (p | q << 32)) >> 32) & MASK
                                  for x, y, p, q in zip(a.lanes, b.lanes, c0.lanes, c1.lanes)]))
            return [lo, hi or unknown(f"high half of {what}")]
        if m in ("v_lshlrev_b32", "v_lshlrev_b16"):
            return self.shl(src(1), src(0), what)
        if m == "s_lshl_b32":
            return self.shl(src(0), src(1), what)
        if m == "v_lshrrev_b32":
            return self.lshr(src(1), src(0), what)
        if m == "s_lshr_b32":
            return self.lshr(src(0), src(1), what)
        if m == "v_ashrrev_i32":
            return self.ashr(src(1), src(0), what)
        if m == "s_ashr_i32":
            return self.ashr(src(0), src(1), what)
        if m in ("s_lshl1_add_u32", "s_lshl2_add_u32", "s_lshl3_add_u32", "s_lshl4_add_u32"):
            return self.add(self.shl(src(0), self.const(int(m[6])), what), src(1))
        if m == "v_lshl_add_u32":
            return self.add(self.shl(src(0), src(1), what), src(2))
        if m == "v_add_lshl_u32":
            return self.shl(self.add(src(0), src(1)), src(2), what)
        if m == "v_lshl_or_b32":
            return self.bor(self.shl(src(0), src(1), what), src(2), what)
        if m == "v_and_or_b32":
            return self.bor(self.band(src(0), src(1), what), src(2), what)
        if m == "v_or3_b32":
            return self.bor(self.bor(src(0), src(1), what), src(2), what)
        if m == "v_add3_u32":
            return self.add(self.add(src(0), src(1)), src(2))
        if m == "v_xad_u32":
            return self.add(self.bxor(src(0), src(1), what), src(2))
        if m in ("v_and_b32", "s_and_b32"):
            return self.band(src(0), src(1), what)
        if m in ("v_or_b32", "s_or_b32"):
            return self.bor(src(0), src(1), what)
        if m in ("v_xor_b32", "s_xor_b32"):
            return self.bxor(src(0), src(1), what)
        if m in ("v_not_b32", "s_not_b32"):
            return self.bxor(src(0), self.const(MASK), what)
        if m in ("v_bfe_u32", "v_bfe_i32"):
            return self.bfe(src(0), src(1), src(2), m.endswith("i32"), what)
        if m in ("s_bfe_u32", "s_bfe_i32"):
            packed = self.uniform_everywhere(src(1))
            if packed is None:
                return None
            return self._bfe_const(src(0), packed & 31, (packed >> 16) & 0x7F, m.endswith("i32"), what)
        if m == "v_bfi_b32":
            sel = src(0)
            return self.bor(self.band(sel, src(1), what), self.band(self.bxor(sel, self.const(MASK)), src(2), what),
                            what)
        if m == "v_mbcnt_lo_u32_b32":
            mask, add = src(0), src(1)
            if mask.concrete:
                count = tuple([bin(x & ((1 << ln) - 1) & MASK).count("1")
                               for x, ln in zip(mask.lanes, self.layout.lane)])
                return self.add(Value(count), add)
            return None
        if m == "v_mbcnt_hi_u32_b32":
            if self.ws == 32:
                return self.add(self.const(0), src(1)) if src(0).known else None
            return None
        if m == "v_lshlrev_b64":
            lo, hi, n = src(1, 0), src(1, 1), self.uniform_everywhere(src(0))
            low = self.shl(lo, src(0), what)
            if n is not None and lo.concrete and hi.concrete:
                n &= 63
                full = [((a | b << 32) << n) for a, b in zip(lo.lanes, hi.lanes)]
                return [Value(tuple([x & MASK for x in full])), Value(tuple([(x >> 32) & MASK for x in full]))]
            return [low, unknown(f"high half of {what}")]
        if m in ("v_cndmask_b32", "s_cselect_b32"):
            if m == "s_cselect_b32":
                a, b = src(0), src(1)
                return a if a.same(b) else None
            f, t = src(0), src(1)
            mask_slot = srcs[2] if len(srcs) > 2 else None
            mask = self._operand(ins, mask_slot) if mask_slot is not None else unknown("no mask")
            sel = self.select(mask, f, t, what)
            if sel is not None:
                return sel
            if f.same(t):
                return f
            if f.known and t.known and mask_slot is not None and mask_slot.regs and \
                    self._mask_all_same(mask_slot.regs[0], ins.index, 8):
                diff = self.sub(t, f)
                if not self.varying(diff) and self.wave_uniform(diff) and not self.varying(f):
                    return self.add(f, self.fresh(f"select@L{ins.lineno}"))
            for v in (f, t):
                if not v.known:
                    return v
            return unknown(f"{what} selects per lane with a condition isalint cannot evaluate")
        if m in ("v_add_co_u32", "v_add_co_ci_u32", "v_sub_co_u32", "v_subrev_co_u32"):
            a, b = src(0), src(1)
            if m == "v_subrev_co_u32":
                a, b = b, a
            if m.startswith("v_sub"):
                low = self.sub(a, b)
            else:
                low = self.add(a, b)
            carry_in = None
            if m == "v_add_co_ci_u32":
                cin = src(2)
                if not cin.concrete:
                    return [unknown(f"{what} adds a carry isalint cannot evaluate"), None]
                carry_in = tuple([(x >> ln) & 1 for x, ln in zip(cin.lanes, self.layout.lane)])
                low = self.add(low, Value(carry_in))
            carry: Value | None = None
            if a.concrete and b.concrete:
                if m.startswith("v_sub"):
                    c = [int(x < y) for x, y in zip(a.lanes, b.lanes)]
                elif carry_in is not None:
                    c = [((x + y + z) >> 32) & 1 for x, y, z in zip(a.lanes, b.lanes, carry_in)]
                else:
                    c = [((x + y) >> 32) & 1 for x, y in zip(a.lanes, b.lanes)]
                carry = Value(self._wave_mask(c))
            return [low, carry]
        if m.startswith("v_cmp_") and not m.startswith("v_cmpx"):
            mm = re.match(r"v_cmp_(eq|ne|lt|le|gt|ge|lg)_([ui])32$", m)
            if not mm:
                return None
            a, b = src(0), src(1)
            op, signed = mm.group(1), mm.group(2) == "i"
            if a.concrete and b.concrete:
                x, y = a.lanes, b.lanes
                if signed:
                    x = [v - (1 << 32) if v >> 31 else v for v in x]
                    y = [v - (1 << 32) if v >> 31 else v for v in y]
                cmp = {"eq": operator.eq, "ne": operator.ne, "lg": operator.ne, "lt": operator.lt, "le": operator.le,
                       "gt": operator.gt, "ge": operator.ge}[op]
                return Value(self._wave_mask(list(map(cmp, x, y))))
            if a.known and b.known and a.terms == b.terms and op in ("eq", "ne", "lg"):
                cmp = operator.eq if op == "eq" else operator.ne
                return Value(self._wave_mask(list(map(cmp, a.lanes, b.lanes))))
            return [unknown(f"{what} compares values isalint cannot evaluate")]
        return None

    def _wave_mask(self, bits) -> tuple[int, ...]:
        """Per-lane 0/1 bits -> each wave's 32-bit mask, broadcast to its lanes."""
        ws = self.ws
        if self.n % ws:
            return self._lanes_const(0)
        out: list[int] = []
        for lo in range(0, self.n, ws):
            mask = 0
            for ln, bit in enumerate(bits[lo:lo + ws]):
                if bit & 1:
                    mask |= 1 << ln
            if ws == 32:
                mask &= MASK
            out.extend([mask] * ws)
        return tuple(out)

    def _simm16(self, v: Value) -> Value:
        c = self.uniform_everywhere(v)
        if c is None:
            return v
        c &= 0xFFFF
        return self.const(c - 0x10000 if c & 0x8000 else c)

    def _u24(self, v: Value, what: str) -> Value:
        if not v.known:
            return v
        if v.concrete:
            return Value(tuple([x & 0xFFFFFF for x in v.lanes]))
        lo, hi = self.bounds(v.terms)
        if lo >= 0 and hi + max(v.lanes) < (1 << 24):
            return v
        return self.band(v, self.const(0xFFFFFF), what)

    def _mask_all_same(self, reg: str, index: int, depth: int) -> bool:
        """Whether lane mask ``reg`` read at ``index`` has all its bits equal
        (a uniform condition: s_cselect of 0/-1, a compare of wave-uniform values)."""
        if depth <= 0:
            return False
        defs = reaching_defs(self.program, index, reg)
        if not defs or -1 in defs:
            return False
        for d in defs:
            ins = self.program.instrs[d]
            if ins.opaque or ins.is_vopd:
                return False
            m = base_mnemonic(ins.opcode)
            srcs = [s for s in ins.slots[0] if s.role == "use"]
            if m == "s_cselect_b32":
                vals = [self._operand(ins, s) for s in srcs[:2]]
                if not all(self.uniform_everywhere(v) in (0, MASK) for v in vals):
                    return False
            elif m.startswith("v_cmp_") and not m.startswith("v_cmpx"):
                if not all(self.wave_uniform(self._operand(ins, s)) for s in srcs[:2]):
                    return False
            elif m in ("s_and_b32", "s_or_b32", "s_xor_b32", "s_and_not1_b32", "s_andn2_b32", "s_or_not1_b32",
                       "s_not_b32", "s_mov_b32"):
                for s in srcs:
                    if s.operand.kind == "special" and s.operand.file in ("exec_lo", "exec"):
                        continue
                    if s.operand.kind == "int" and s.operand.value in (0, -1):
                        continue
                    if not s.regs or not self._mask_all_same(s.regs[0], d, depth - 1):
                        return False
            else:
                return False
        return True
