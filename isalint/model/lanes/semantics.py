"""The lane evaluator's side of an instruction: its operands' values in, its results out.

What an opcode computes is its definition in :mod:`isalint.isa.semantics`, evaluated on the lane
algebra (:class:`~.values.LaneAlgebra`: per-lane integers plus wave-uniform symbols). This module
reads the definition's inputs from the operands (their values come from the CFG walk of
:class:`~isalint.model.lanes.evaluator.LaneEvaluator`, which supplies ``program``,
``_value(reg, index)``, ``_slot_defs`` and ``_scratch_offset``) and turns its outputs into register
values. Every lane is taken as active (EXEC reads as all ones) and SCC is not followed.
"""
from __future__ import annotations

from ...isa.constants import ConstantError, constant_bits
from ...isa.mnemonics import CROSS_LANE_MODIFIERS, base_mnemonic
from ...isa.semantics import BindingError, binding
from ..reaching import reaching_defs
from .values import MASK, LaneAlgebra, LaneBits, Pair, Value, unknown

_WIDE = frozenset({"u64", "i64", "b64", "f64"})
# results that depend on the lane itself, not only on the values read (no uniform symbol for them)
_LANE_DEPENDENT = frozenset({"v_mbcnt_lo_u32_b32", "v_mbcnt_hi_u32_b32", "v_writelane_b32"})


class InstructionSemantics(LaneAlgebra):
    """The per-instruction part of the lane evaluator."""

    def _operand(self, ins, slot, part: int = 0, typ: str = "u32") -> Value:
        op = slot.operand
        if op.kind in ("int", "float"):
            try:
                bits = constant_bits(op.kind, op.value, typ)
            except ConstantError as exc:
                return unknown(f"{exc} at line {ins.lineno}")
            return self.const(bits >> (32 * part))
        if op.kind == "special" and op.file == "null":
            return self.const(0)
        if op.neg or op.abs or op.half:
            return unknown(f"operand '{op.text}' at line {ins.lineno} has a modifier")
        regs = slot.regs
        if part >= len(regs):
            return unknown(f"operand '{op.text}' has no part {part}")
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
        defs = [s for s in slots if s.role in ("def", "defuse") and s.regs]
        what = f"'{stmt.mnemonic}' at line {ins.lineno}"
        if any(mod.name in CROSS_LANE_MODIFIERS for mod in stmt.modifiers):
            return {r: unknown(f"{what} reads other lanes (DPP)") for d in defs for r in d.regs}
        try:
            b = binding(opcode, len(slots))  # the gfx11 opcode: an alias evaluates as what it stands for
        except BindingError:
            return self._not_evaluated(ins, slots, defs, base_mnemonic(opcode), what)
        args = [self._input(ins, slots, slot) for slot in b.ins]  # may evaluate other statements first
        saved = self.what, self._statement_names
        self.what, self._statement_names = what, set()
        try:
            return self._results(ins, slots, b, args)
        finally:
            self.what, self._statement_names = saved

    def _results(self, ins, slots, b, args) -> dict[str, Value]:
        results = b.op.fn(self, *args)
        uniform = b.op.name not in _LANE_DEPENDENT and all(self._uniform_input(a) for a in args)
        out: dict[str, Value] = {}
        for slot, value in zip(b.outs, results):
            if slot.kind == "operand":
                regs = slots[slot.ref].regs
            elif slot.ref == "VCC":
                regs = [r for r in ins.defs if r.startswith("vcc")][:1]
            else:
                continue  # SCC and EXEC are not followed
            if slot.type == "bit":
                out.update(self._mask_values(value, regs))
                continue
            values = [value.lo, value.hi] if isinstance(value, Pair) else [value]
            for r, v in zip(regs, values):
                if not v.known and uniform:  # a function of wave-uniform values is wave-uniform
                    v = self.fresh(f"{r}@L{ins.lineno}")
                out[r] = v
        return out

    def _not_evaluated(self, ins, slots, defs, m: str, what: str) -> dict[str, Value]:
        """The results of an opcode isalint has no definition for: a uniform symbol where its inputs are
        wave-uniform (and for every SGPR), else unknown."""
        dst = [r for d in defs for r in d.regs]
        if not dst:
            return {}
        if m.startswith("s_"):
            return {r: self.fresh(f"{r}@L{ins.lineno}") for r in dst}
        vals = [self._operand(ins, s) for s in slots if s.role == "use"]
        if all(self.wave_uniform(v) for v in vals) and m.startswith("v_") and not m.startswith("v_cmp"):
            return {r: self.fresh(f"{r}@L{ins.lineno}") for r in dst}
        bad = next((v for v in vals if not v.known), None)
        reason = bad.reason if bad is not None else f"{what} is not an integer operation isalint evaluates"
        return {r: unknown(reason) for r in dst}

    def _input(self, ins, slots, slot):
        """The value of one input of a definition."""
        wide = slot.type in _WIDE
        if slot.kind == "state":
            if slot.ref == "EXEC":
                return self.const(MASK)  # every lane active (see the module's note)
            if slot.ref == "VCC":
                reg = "vcc_lo"
                return LaneBits(self._mask_value([reg], ins.index), reg, ins.index, ins.lineno)
            return unknown(f"{slot.ref} at line {ins.lineno} is not followed")
        sl = slots[slot.ref]
        if slot.kind == "dest":
            if not sl.regs:
                return unknown(f"no destination at line {ins.lineno}")
            if wide:
                return Pair(self._value(sl.regs[0], ins.index), self._value(sl.regs[-1], ins.index))
            return self._value(sl.regs[0], ins.index)
        if slot.type == "bit":
            if sl.operand.kind in ("int", "float") or not sl.regs:
                return LaneBits(self._operand(ins, sl), None, ins.index, ins.lineno)
            return LaneBits(self._mask_value(sl.regs, ins.index), sl.regs[0], ins.index, ins.lineno)
        if slot.type in ("i16", "u16"):  # SIMM16, sign- or zero-extended
            v = self._operand(ins, sl)
            c = self.uniform_everywhere(v)
            if c is None:
                return v
            c &= 0xFFFF
            return self.const(c - 0x10000 if slot.type == "i16" and c & 0x8000 else c)
        if wide:
            return Pair(self._operand(ins, sl, 0, slot.type), self._operand(ins, sl, 1, slot.type))
        return self._operand(ins, sl, 0, slot.type)

    def _mask_value(self, regs, index: int) -> Value:
        """A lane mask's value: one register in wave32, the pair as one 64-bit number per lane in wave64."""
        lo = self._value(regs[0], index)
        if self.ws == 32 or len(regs) < 2 or not lo.concrete:
            return lo
        hi = self._value(regs[1], index)
        if not hi.concrete:
            return hi
        return Value(tuple([x | y << 32 for x, y in zip(lo.lanes, hi.lanes)]))

    def _mask_values(self, cond, regs) -> dict[str, Value]:
        """Per-lane conditions packed into each wave's lane mask (VCC.u64[laneId] = ...)."""
        if not regs:
            return {}
        if not isinstance(cond, Value) or not cond.known:
            return {regs[0]: cond if isinstance(cond, Value) else unknown("a lane mask isalint cannot evaluate")}
        masks = self._wave_mask(cond.lanes)
        if self.ws == 64 and len(regs) == 2:
            return {regs[0]: Value(tuple([m & MASK for m in masks])), regs[1]: Value(tuple([m >> 32 for m in masks]))}
        return {regs[0]: Value(masks)}

    def _uniform_input(self, v) -> bool:
        if isinstance(v, Pair):
            return self._uniform_input(v.lo) and self._uniform_input(v.hi)
        if isinstance(v, LaneBits):  # one bit per lane: uniform when every lane of a wave reads the same bit
            bits = self._bits(v)
            return bits is not None and self.wave_uniform(Value(bits))
        return v.known and self.wave_uniform(v)

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
