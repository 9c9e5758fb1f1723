"""Exact symbolic values of registers in one iteration of a loop.

:class:`AffineEvaluator` gives the :class:`~.words.Word` of a register just before an
instruction, or the :class:`~.words.Wide` 64-bit address of a global memory instruction, as a
polynomial over atoms:

* ``tid``, the work-item id in x (lanes of every wave of the workgroup, up to the kernel's
  ``.max_flat_workgroup_size``), and the lane atoms derived from it by bit operations;
* kernel arguments read by ``s_load`` from the kernarg segment (named by their ``.name`` in the
  metadata, else ``argOFFSET``), ``wg_x``/``wg_y``/``wg_z`` (the workgroup ids, below 2**24 as
  isalint assumes everywhere), uniform values it does not follow;
* ``REG@LABEL``, the value of an SGPR that changes in the analysed loop, at its header: one atom
  per iteration, related to the next iteration's by :mod:`.loops`.

It walks the CFG backwards from the use to the reaching definitions (as
:mod:`isalint.model.lanes` does): registers that the analysed loop does not write are followed
to their values before the loop; at other loop headers a register the loop writes becomes an
opaque uniform atom (SGPRs) or unknown (VGPRs); where paths join, different SGPR values become a
fresh uniform atom and different VGPR values unknown. Every lane is assumed active (EXEC is not
followed; callers refuse code that writes it) and ``v0`` holds only the x id
(``.amdhsa_system_vgpr_workitem_id 0``), else ``tid`` is unknown.
"""
from __future__ import annotations

import sys
from bisect import bisect_left

from ...hw.occupancy import MAX_WORKGROUP_SIZE
from ...isa.mnemonics import CROSS_LANE_MODIFIERS
from ...isa.semantics import BindingError, binding
from ..launch import AbiError, sgpr_layout
from .poly import Poly
from .semantics import AffineAlgebra
from .words import INT32, MASK32, W64, Atom, Wide, Word, high, low, unknown

WORKGROUP_ID_LIMIT = 1 << 24  # the bound isalint's lane model assumes for workgroup ids
_WIDE = frozenset({"u64", "i64", "b64", "f64"})
_FLOATS = frozenset({"f32", "f64"})

_LANE_OPS = {
    "and": lambda x, y: x & y,
    "or": lambda x, y: x | y,
    "xor": lambda x, y: x ^ y,
    "lshr": lambda x, y: x >> (y & 31),
    "ashr": lambda x, y: ((x - (1 << 32) if x >> 31 else x) >> (y & 31)) & MASK32,
    "bfe_u": lambda x, y: (x >> (y & 31)) & ((1 << ((y >> 8) & 0x7F)) - 1),
    # the signed extract shifts S0.i32 (arithmetic), then sign-extends the field
    "bfe_i": lambda x, y: _sext_field((_s32(x) >> (y & 31)) & ((1 << ((y >> 8) & 0x7F)) - 1), (y >> 8) & 0x7F),
}
_SYMBOL = {"and": "&", "or": "|", "xor": "^", "lshr": ">>", "ashr": ">>>"}


def _s32(x: int) -> int:
    return x - (1 << 32) if x >> 31 & 1 else x


def _sext_field(v: int, w: int) -> int:
    if w and v >> (w - 1):
        v -= 1 << w
    return v & MASK32


class AffineEvaluator:
    """Register values of ``kernel`` as polynomials, iteration-wise inside ``loop`` (may be None)."""

    def __init__(self, program, kernel, loop=None):
        self.program = program
        self.kernel = kernel
        self.loop = loop
        self.cfg = program.cfg()
        self.atoms: dict[str, Atom] = {}
        self._lane_keys: dict[tuple, Poly] = {}
        self._lane_cache: dict[Poly, list[int] | None] = {}
        self._def_memo: dict[int, dict[str, Word]] = {}
        self._entry_memo: dict[tuple[int, str], Word] = {}
        self._busy: set[tuple[int, str]] = set()
        self._placeholders: dict[tuple[int, str], Poly] = {}
        self._counters_to_size: list[str] = []  # counter atoms whose trailing zero bits are not known yet
        self._index = -1
        self.sem = AffineAlgebra(self)
        d = kernel.descriptor if kernel is not None else {}
        md = (kernel.metadata or {}) if kernel is not None else {}
        reqd = md.get(".reqd_workgroup_size")
        self.threads = int(reqd[0]) if reqd else int(md.get(".max_flat_workgroup_size", MAX_WORKGROUP_SIZE))
        self.workitem_ids = int(d.get(".amdhsa_system_vgpr_workitem_id", 0))
        self.entry_block = self.cfg.block_of[kernel.first] if kernel is not None else 0
        self._blocks = {b for b in range(len(self.cfg.blocks)) if self._in_kernel(b)}
        self._defs = self._defs_by_block()
        self._headers = {lp.header: lp for lp in self.cfg.loops}
        self._writes = {lp.header: self._written(lp) for lp in self.cfg.loops}
        self._entry_sgprs = self._entry_registers(d)
        self._args = self._kernel_args(md)

    # -- setup --------------------------------------------------------------------------------
    def _in_kernel(self, b: int) -> bool:
        if self.kernel is None:
            return True
        first = self.cfg.blocks[b].first
        return self.kernel.first <= first < self.kernel.last

    def _defs_by_block(self) -> list[dict[str, list[int]]]:
        out = []
        for blk in self.cfg.blocks:
            d: dict[str, list[int]] = {}
            for i in blk.indices():
                ins = self.program.instrs[i]
                for r in ins.defs:
                    d.setdefault(r, []).append(i)
            out.append(d)
        return out

    def _written(self, loop) -> set[str]:
        return {r for b in loop.blocks for r in self._defs[b]}

    def _entry_registers(self, d: dict) -> dict[str, Word]:
        """The kernarg pointer and the workgroup ids on entry (:mod:`isalint.model.launch`)."""
        out: dict[str, Word] = {}
        try:
            layout = sgpr_layout(d)
        except AbiError:
            return out
        n = layout.user.get("kernarg_segment_ptr")
        if n is not None:
            k = self.make_atom("kernarg", "uniform", "the kernel argument segment address", 0, (1 << 64) - 1)
            out[f"s{n}"], out[f"s{n + 1}"] = low(k), high(k)
        for axis, s in layout.workgroup_id.items():
            out[f"s{s}"] = low(self.make_atom(f"wg_{axis}", "uniform", f"the workgroup id in {axis}", 0,
                                              WORKGROUP_ID_LIMIT - 1))
        return out

    @staticmethod
    def _kernel_args(md: dict) -> dict[int, dict]:
        out = {}
        for a in md.get(".args", []) or []:
            out[int(a.get(".offset", 0))] = a
        return out

    # -- atoms (the context of :class:`Semantics`) ------------------------------------------------
    def make_atom(self, name: str, kind: str, origin: str, lo=None, hi=None, twos: int = 0, **extra) -> Poly:
        if name not in self.atoms:
            self.atoms[name] = Atom(name, kind, origin, lo, hi, twos, **extra)
        return Poly.atom(name)

    def uniform_atom(self, name: str, origin: str, lo=None, hi=None, twos: int = 0) -> Poly:
        return self.make_atom(name, "uniform", origin, lo, hi, twos)

    def is_lane_atom(self, name: str) -> bool:
        return self.atoms[name].kind == "lane"

    def is_uniform(self, p: Poly) -> bool:
        return not any(self.atoms[a].kind == "lane" for a in p.atoms())

    def twos(self) -> dict[str, int]:
        while self._counters_to_size:
            name = self._counters_to_size.pop()
            self.atoms[name].twos = self._counter_twos(name)
        return {n: a.twos for n, a in self.atoms.items() if a.twos}

    def _counter_twos(self, atom: str) -> int:
        """Trailing zero bits of every value of a loop counter: those of its start and its step,
        which adding the step (mod 2**32) keeps."""
        from .loops import induction

        got = induction(self, self.loop, atom)
        if isinstance(got, str):
            return 0
        init, step = got
        both = (init | step) & MASK32
        return (both & -both).bit_length() - 1 if both else 32

    def lane_values(self, p: Poly) -> list[int] | None:
        """The exact value of ``p`` in each work-item, when it depends on lane atoms only."""
        if p in self._lane_cache:
            return self._lane_cache[p]
        names = p.atoms()
        if any(self.atoms[a].kind != "lane" for a in names):
            vals = None
        else:
            cols = {a: self.atoms[a].values for a in names}
            vals = [p.evaluate({a: cols[a][t] for a in names}) for t in range(self.threads)]
        self._lane_cache[p] = vals
        return vals

    def lane_atom(self, op: str, p: Poly, q: Poly, line: int) -> Poly:
        """The lane polynomial ``p op q`` (both lane-only, read as 32-bit words)."""
        key = (op, p, q)
        if key in self._lane_keys:
            return self._lane_keys[key]
        pv, qv = self.lane_values(p), self.lane_values(q)
        fn = _LANE_OPS[op]
        vals = tuple(fn(x & MASK32, y & MASK32) for x, y in zip(pv, qv))
        if len(set(vals)) == 1:
            out = Poly.const(vals[0])
        elif vals == tuple(pv):
            out = p
        else:
            sym = _SYMBOL.get(op)
            name = f"({p}{sym}{q})" if sym else f"{op}({p},{q})"
            twos = min(((v & -v).bit_length() - 1 for v in vals if v), default=0)
            self.atoms[name] = Atom(name, "lane", f"a per-lane value computed at line {line}", min(vals), max(vals),
                                    twos, values=vals, expr=(op, p, q))
            out = Poly.atom(name)
        self._lane_keys[key] = out
        return out

    def current(self, reg: str) -> Word:
        return self.word(reg, self._index)

    # -- registers ------------------------------------------------------------------------------
    def word(self, reg: str, index: int) -> Word:
        """The value of ``reg`` just before instruction ``index``."""
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 20000))
        try:
            return self._word(reg, index)
        except RecursionError:
            return unknown(f"{reg} depends on a longer chain of instructions than isalint follows")
        finally:
            sys.setrecursionlimit(limit)

    def _word(self, reg: str, index: int) -> Word:
        if reg in ("exec_lo", "exec"):
            return Word("exec")
        b = self.cfg.block_of[index]
        i = self._last_write(b, reg, index)
        if i >= 0:
            return self._def_word(i, reg)
        return self._entry_word(b, reg)

    def _last_write(self, b: int, reg: str, before: int) -> int:
        idx = self._defs[b].get(reg)
        if not idx:
            return -1
        k = bisect_left(idx, before)
        return idx[k - 1] if k else -1

    def exit_word(self, b: int, reg: str) -> Word:
        """The value of ``reg`` at the end of block ``b``."""
        blk = self.cfg.blocks[b]
        i = self._last_write(b, reg, blk.last)
        return self._def_word(i, reg) if i >= 0 else self._entry_word(b, reg)

    def wide(self, regs: list[str], index: int) -> Wide:
        """The 64-bit value of the register pair ``regs`` just before instruction ``index``."""
        lo, hi = self.word(regs[0], index), self.word(regs[1], index)
        return self._pair(lo, hi, self.program.instrs[index].lineno)

    def _pair(self, lo: Word, hi: Word, line: int) -> Wide:
        for w in (lo, hi):
            if not w.known:
                return Wide(None, reason=w.reason)
        if lo.kind != "low":
            return Wide(None, reason=f"the low word of a 64-bit value at line {line} is a {lo.kind} word")
        w = self.sem.widen(lo.poly, hi, line)
        if w is None:
            return Wide(None, reason=f"the two words of a 64-bit value at line {line} do not belong together")
        return Wide(w.poly, w.conds | lo.conds)

    def _entry_word(self, b: int, reg: str) -> Word:
        key = (b, reg)
        memo = self._entry_memo.get(key)
        if memo is not None:
            return memo
        if key in self._placeholders:
            return low(self._placeholders[key])
        if key in self._busy:
            return unknown(f"{reg}: control flow isalint does not follow at {self._label(b)}")
        self._busy.add(key)
        try:
            w = self._compute_entry(b, reg)
        finally:
            self._busy.discard(key)
        self._entry_memo[key] = w
        return w

    def _compute_entry(self, b: int, reg: str) -> Word:
        if b == self.entry_block:
            return self._kernel_entry(reg)
        blk = self.cfg.blocks[b]
        preds = [p for p in blk.preds if p in self._blocks]
        lp = self._headers.get(b)
        if lp is not None:
            inside = [p for p in preds if p in lp.blocks]
            preds = [p for p in preds if p not in lp.blocks]
            if reg in self._writes[b] and inside:
                return self._carried(b, reg, lp)
        if not preds:
            return unknown(f"{reg} at {self._label(b)}, which the kernel does not reach")
        return self._merge(b, reg, [self.exit_word(p, reg) for p in preds])

    def _carried(self, b: int, reg: str, lp) -> Word:
        label = self._label(b)
        name = f"{reg}@{label}"
        if self.loop is not None and lp.header == self.loop.header:
            if reg.startswith("s") and reg[1:].isdigit():
                if name not in self.atoms:
                    self._counters_to_size.append(name)
                return low(self.make_atom(name, "counter", f"{reg} at the start of an iteration of {label}",
                                          reg=reg))
            if reg.startswith("v") and reg[1:].isdigit():
                return self._vector_induction(b, reg, lp)
            return unknown(f"{reg} is carried from one iteration of the loop at {label} to the next")
        if reg.startswith("s") and reg[1:].isdigit():
            return low(self.uniform_atom(name, f"{reg} in the loop at {label}"))
        return unknown(f"{reg} changes in the loop at {label}")

    def _vector_induction(self, b: int, reg: str, lp) -> Word:
        """A VGPR the loop advances by the same uniform amount every iteration, as its value on entry
        plus a multiple of a loop counter's distance from its start: ``v = v0 + d * (s - s0) / step``."""
        from .loops import induction

        label = self._label(b)
        why = f"{reg} is carried from one iteration of the loop at {label} to the next"
        start = self._merge(b, reg, [self.exit_word(p, reg) for p in self.cfg.blocks[b].preds
                                     if p in self._blocks and p not in lp.blocks])
        if start.kind != "low":
            return unknown(why)
        me = self.make_atom(f"{reg}@{label}", "lane", f"{reg} at the start of an iteration of {label}",
                            values=(0,) * self.threads)
        # one iteration evaluated with the header value as an unknown: a sandbox, whose values are
        # dropped afterwards, and where only the placeholder closes the cycle around the loop
        saved = (dict(self._def_memo), dict(self._entry_memo), dict(self._lane_cache), self._busy)
        self._placeholders[(b, reg)] = me
        self._busy = set()
        try:
            ends = [self.exit_word(p, reg) for p in self.cfg.blocks[b].preds if p in lp.blocks]
        finally:
            del self._placeholders[(b, reg)]
            self._def_memo, self._entry_memo, self._lane_cache, self._busy = saved
            del self.atoms[me.terms[0][0][0]]
        deltas = {(w.poly - me) if w.kind == "low" else None for w in ends}
        if len(deltas) != 1 or None in deltas:
            return unknown(f"{why}, not by the same amount on every path")
        delta = deltas.pop()
        if delta.atoms() & {a for a, at in self.atoms.items() if at.kind != "uniform"} or me.atoms() & delta.atoms():
            return unknown(f"{why}, by an amount that is not the same in every lane and iteration")
        for n in sorted(int(r[1:]) for r in self._writes[b] if r.startswith("s") and r[1:].isdigit()):
            c = self._entry_word(b, f"s{n}")
            if c.kind != "low" or len(c.poly.terms) != 1 or self.atoms[c.poly.terms[0][0][0]].kind != "counter":
                continue
            got = induction(self, lp, c.poly.terms[0][0][0])
            if isinstance(got, str):
                continue
            init, step = got
            if all(k % step == 0 for _, k in delta.terms):
                per = Poly([(m, k // step) for m, k in delta.terms])
                return low(start.poly + per * (c.poly - init), start.conds)
        return unknown(f"{why}, and no loop counter moves in step with it")

    def _merge(self, b: int, reg: str, vals: list[Word]) -> Word:
        first = vals[0]
        if all(v.same(first) for v in vals[1:]):
            conds = frozenset().union(*(v.conds for v in vals))
            return Word(first.kind, first.poly, conds, first.reason, first.carry, first.pred)
        bad = next((v for v in vals if not v.known), None)
        if reg.startswith("s") and reg[1:].isdigit():
            return low(self.uniform_atom(f"{reg}@{self._label(b)}", f"{reg} where paths join at {self._label(b)}"))
        if bad is not None:
            return bad
        return unknown(f"{reg} holds different values on the paths into {self._label(b)}")

    def _label(self, b: int) -> str:
        blk = self.cfg.blocks[b]
        if blk.label:
            return blk.label
        if blk.last > blk.first:
            return f"line {self.program.instrs[blk.first].lineno}"
        return f"block {b}"

    def _kernel_entry(self, reg: str) -> Word:
        if reg == "v0":
            if self.workitem_ids:
                return unknown("v0 packs the y/z work-item ids, which isalint does not model here")
            return low(self.make_atom("tid", "lane", "the work-item id", 0, self.threads - 1,
                                      values=tuple(range(self.threads))))
        if reg in self._entry_sgprs:
            return self._entry_sgprs[reg]
        if reg.startswith("s") and reg[1:].isdigit():
            return low(self.uniform_atom(f"{reg}@entry", f"{reg} on entry to the kernel"))
        return unknown(f"{reg} is read before the kernel writes it")

    # -- instructions -------------------------------------------------------------------------------
    def _def_word(self, i: int, reg: str) -> Word:
        memo = self._def_memo.get(i)
        if memo is None:
            memo = self._def_memo[i] = self._evaluate(self.program.instrs[i])
        w = memo.get(reg)
        if w is not None:
            return w
        ins = self.program.instrs[i]
        if reg.startswith("s") and reg[1:].isdigit():
            return low(self.uniform_atom(f"{reg}@{ins.lineno}", f"{reg} written at line {ins.lineno}"))
        return unknown(f"{reg} is written by '{ins.text()}' (line {ins.lineno}), which isalint does not evaluate")

    def _evaluate(self, ins) -> dict[str, Word]:
        if ins.opaque:
            return {}
        if ins.klass == "smem":
            return self._kernarg_load(ins)
        if ins.is_memory():
            return {r: unknown(f"{r} is loaded from memory at line {ins.lineno}") for r in ins.defs}
        out: dict[str, Word] = {}
        saved, self._index = self._index, ins.index
        try:
            for stmt, slots, info in zip(ins.stmts, ins.slots, ins.infos):
                out.update(self._statement(ins, stmt, slots, info.mnemonic if info is not None else stmt.mnemonic))
        finally:
            self._index = saved
        return out

    def _statement(self, ins, stmt, slots, opcode: str) -> dict[str, Word]:
        """The words one statement writes: its definition (isalint.isa.semantics) on words."""
        defs = [r for s in slots if s.role in ("def", "defuse") for r in s.regs]
        if any(m.name in CROSS_LANE_MODIFIERS for m in stmt.modifiers):
            return {r: unknown(f"'{stmt.mnemonic}' at line {ins.lineno} reads other lanes (DPP)") for r in defs}
        try:
            b = binding(opcode, len(slots))
        except BindingError:
            return {}
        if b.op.types & _FLOATS:
            return {}  # not an integer computation: nothing to follow (and its inputs are not read)
        sem = self.sem
        args = [self._input(ins, slots, slot) for slot in b.ins]
        saved = sem.begin(f"'{stmt.mnemonic}' at line {ins.lineno}", ins.lineno, defs)
        try:
            results = b.op.fn(sem, *args)
            compare = [n for n, _ in b.op.outs] == ["SCC"]
            out: dict[str, Word] = {}
            for slot, w in zip(b.outs, results):
                if slot.kind == "operand":
                    regs = slots[slot.ref].regs
                elif slot.ref == "VCC":
                    regs = ["vcc_lo"]
                elif slot.ref == "SCC" and (compare or w.kind == "carry"):
                    regs = ["scc"]  # SCC of a compare or a carry; the other SCC results are not followed
                else:
                    continue
                if slot.type == "bit" and regs != ["scc"] and w.kind == "pred":  # VCC.u64[laneId] = S0 REL S1
                    uniform = self.is_uniform(w.pred.a) and self.is_uniform(w.pred.b)
                    w = Word("execand", conds=w.conds, pred=w.pred) if uniform else \
                        unknown(f"the compare at line {ins.lineno} is not wave-uniform")
                words = [w.lo, w.hi] if isinstance(w, W64) else [w]
                for r, word in zip(regs, words):
                    if word.known or not (r.startswith("s") and r[1:].isdigit()):
                        out[r] = word  # an SGPR left unknown gets an atom of its own (_def_word)
            return out
        finally:
            sem.end(saved)

    def _input(self, ins, slots, slot):
        """The word (or pair of words) of one input of a definition."""
        if slot.kind == "state":
            reg = {"SCC": "scc", "VCC": "vcc_lo", "EXEC": "exec_lo"}.get(slot.ref)
            return self.word(reg, ins.index) if reg else unknown(f"{slot.ref} is not followed")
        sl = slots[slot.ref]
        if slot.kind == "dest":
            if slot.type in _WIDE and len(sl.regs) == 2:
                return W64(self.word(sl.regs[0], ins.index), self.word(sl.regs[1], ins.index))
            return self.word(sl.regs[0], ins.index) if sl.regs else unknown(f"line {ins.lineno} has no destination")
        if slot.type in ("i16", "u16"):  # SIMM16, sign- or zero-extended
            op = sl.operand
            if op.kind != "int":
                return unknown(f"line {ins.lineno} has no immediate")
            v = int(op.value) & 0xFFFF
            return low(v - 0x10000 if slot.type == "i16" and v & 0x8000 else v)
        if slot.type in _WIDE:
            return W64(self._operand(ins, sl, 0), self._operand(ins, sl, 1))
        return self._operand(ins, sl, 0)

    def _operand(self, ins, slot, part: int) -> Word:
        op = slot.operand
        if op.kind == "int":
            v = int(op.value)
            return low(v >> (32 * part) if part else v)
        if op.kind == "special" and op.file == "null":
            return low(0)
        if op.neg or op.abs or op.half or op.kind not in ("vgpr", "sgpr", "special", "ttmp"):
            return unknown(f"operand '{op.text}' at line {ins.lineno} is not an integer register")
        regs = slot.regs
        if part >= len(regs):
            return unknown(f"operand '{op.text}' at line {ins.lineno} has no word {part}")
        return self.word(regs[part], ins.index)

    def _kernarg_load(self, ins) -> dict[str, Word]:
        slots = ins.slots[0]
        data = next((s for s in slots if s.role == "def"), None)
        base = next((s for s in slots if s.name == "sbase"), None)
        off = next((s for s in slots if s.name in ("soffset", "offset")), None)
        if data is None:
            return {}
        fail: dict[str, Word] = {}  # the evaluator makes an opaque atom of each SGPR not given
        if base is None or len(base.regs) != 2:
            return fail
        addr = self.wide(base.regs, ins.index)
        k = Poly.atom("kernarg")
        if not addr.known or not (addr.poly - k).is_const:
            return fail
        offset = (addr.poly - k).constant
        if off is not None and off.operand.kind == "int":
            offset += int(off.operand.value)
        elif off is not None and off.regs:
            return fail
        mod = ins.stmts[0].modifier("offset")
        if mod is not None:
            offset += mod.int_value() or 0
        out = {}
        for j, r in enumerate(data.regs):
            out[r] = self._kernarg_word(offset + 4 * j, r, ins)
        return out

    def _kernarg_word(self, at: int, reg: str, ins) -> Word:
        for off, a in self._args.items():
            size, kind = int(a.get(".size", 0)), str(a.get(".value_kind", ""))
            name = str(a.get(".name") or f"arg{off}")
            if kind == "global_buffer" and size == 8 and at in (off, off + 4):
                p = self.make_atom(name, "uniform", f"the pointer argument at offset {off}", 0, (1 << 64) - 1,
                                   arg={"offset": off, "size": size, "kind": kind})
                return low(p) if at == off else high(p)
            if kind == "by_value" and size == 4 and at == off:
                return low(self.make_atom(name, "uniform", f"the 4-byte argument at offset {off}", INT32[0], INT32[1],
                                          arg={"offset": off, "size": size, "kind": kind}))
        return low(self.uniform_atom(f"kernarg{at}", f"the kernel argument word at offset {at}"))

    # -- memory instructions ---------------------------------------------------------------------
    def address(self, index: int) -> Wide:
        """The 64-bit address of the global memory instruction at ``index`` (its ``offset:``
        included), from its VGPR pair (``saddr`` off) or its SGPR pair plus 32-bit VGPR offset."""
        ins = self.program.instrs[index]
        slots = ins.slots[0]
        vaddr = next((s for s in slots if s.name in ("addr", "vaddr")), None)
        saddr = next((s for s in slots if s.name == "saddr"), None)
        mod = ins.stmts[0].modifier("offset")
        imm = (mod.int_value() or 0) if mod is not None else 0
        if vaddr is None:
            return Wide(None, reason=f"line {ins.lineno} has no address operand")
        if saddr is None or saddr.operand.kind == "off":
            if len(vaddr.regs) != 2:
                return Wide(None, reason=f"line {ins.lineno} has no 64-bit address")
            w = self.wide(vaddr.regs, index)
        else:
            base = self.wide(saddr.regs, index)
            off = self.word(vaddr.regs[0], index)
            if not base.known or not off.known or off.kind != "low":
                return Wide(None, reason=base.reason or off.reason or "the offset is not a 32-bit value")
            w = self.sem.widen(off.poly, low(0), ins.lineno)
            w = Wide(base.poly + w.poly, base.conds | w.conds | off.conds)
        if not w.known:
            return w
        return Wide(w.poly + imm, w.conds)


__all__ = ["AffineEvaluator", "WORKGROUP_ID_LIMIT", "high", "low"]
