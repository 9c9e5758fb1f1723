"""The lane evaluator: the value of a register in every lane, found by walking the CFG on demand.

The value of a register before an instruction is found by walking the CFG backwards to its reaching
definitions and evaluating them (:mod:`.semantics`). Where paths join, values that differ only by a
wave-uniform amount merge into ``per-lane part + fresh uniform symbol``; at a loop header a register
whose back-edge value is ``itself + uniform increment`` becomes ``value on entry + uniform induction
symbol``; anything else becomes unknown. Spill slots of scratch memory are followed like registers.

Assumptions (stated in the LDS001 documentation): every lane is active (exec masks are not tracked);
workgroup ids are below 2**24.
"""
from __future__ import annotations

from bisect import bisect_left

from .. import limits
from ..launch import AbiError, sgpr_layout
from ..reaching import block_defs
from .lds import LdsAccess, lds_access
from .semantics import InstructionSemantics
from .threads import ThreadLayout, thread_layout
from .values import MASK, WORKGROUP_ID_LIMIT, Symbol, Value, make_terms, trailing_zeros, unknown

class _WorkLimit(Exception):
    """The evaluator spent its budget of evaluation steps (LaneEvaluator.max_steps)."""


class LaneEvaluator(InstructionSemantics):
    """Evaluates registers per lane for one kernel of an analysed program."""

    def __init__(self, program, kernel=None, layout: ThreadLayout | None = None):
        self.program = program
        self.kernel = kernel if kernel is not None else (program.kernels[0] if program.kernels else None)
        super().__init__(layout or thread_layout(self.kernel))
        self.cfg = program.cfg()
        self._def_memo: dict[int, dict[str, Value]] = {}
        self._entry_memo: dict[tuple[int, str], Value] = {}
        self._temp: dict[tuple, object] = {}
        self._progress: dict[tuple[int, str], str] = {}  # loop headers being evaluated -> placeholder
        self._visits: dict[tuple[int, str], int] = {}
        self._headers = {lp.header for lp in self.cfg.loops}
        self._enclosing: dict[int, list[int]] = {}
        for lp in self.cfg.loops:
            outer = []
            q = lp.parent
            while q is not None:
                outer.append(q.header)
                q = q.parent
            self._enclosing[lp.header] = outer[::-1]
        self._entry_block = self.cfg.block_of[self.kernel.first] if self.kernel is not None and \
            self.kernel.first < len(program.instrs) else 0
        self._entry_sgprs = self._system_sgprs()
        self._slot_defs = self._scratch_slots()
        self._block_defs = self._defs_by_block()
        self.steps = 0  # evaluations done (memo misses), up to self.max_steps
        size = (self.kernel.last - self.kernel.first) if self.kernel is not None else len(program.instrs)
        self.max_steps = max(limits.LANE_STEPS_MIN, limits.LANE_STEPS_PER_INSTRUCTION * size)
        self._refused: set[int] = set()  # instructions asked about after the budget ran out
        self._limit: limits.LimitReached | None = None

    def _scratch_slots(self) -> dict[int, list[str]]:
        """Spill slots as pseudo registers ``scratch:OFFSET`` (one per dword):
        a scratch access with neither VGPR nor SGPR address is a fixed,
        per-lane private slot, so a reload reads what the last spill wrote.
        A scratch store with a computed address may write any slot."""
        out: dict[int, list[str]] = {}
        for ins in self.program.instrs:
            if ins.klass != "scratch_store" or ins.opaque:
                continue
            const = self._scratch_offset(ins)
            if const is None:
                out[ins.index] = ["scratch:*"]
                continue
            data = next((sl for sl in ins.slots[0] if sl.name.startswith("data")), None)
            n = len(data.regs) if data is not None else 1
            out[ins.index] = [f"scratch:{const + 4 * j}" for j in range(n)]
        return out

    def _defs_by_block(self) -> list[dict[str, list[int]]]:
        """Per block: register (or scratch slot) -> the indices writing it, ascending (read only)."""
        if not self._slot_defs:  # no spill slot: the program's own table, as it is
            return block_defs(self.program)
        out = [dict(d) for d in block_defs(self.program)]
        for i, slots in sorted(self._slot_defs.items()):
            d = out[self.cfg.block_of[i]]
            for r in slots:
                d.setdefault(r, []).append(i)
        return out

    def _last_write(self, b: int, reg: str, before: int) -> int:
        """The last instruction of block ``b`` before index ``before`` that
        writes ``reg`` (a store with a computed address writes every scratch
        slot), or -1."""
        d = self._block_defs[b]
        found = -1
        idx = d.get(reg)
        if idx:
            k = bisect_left(idx, before)
            if k:
                found = idx[k - 1]
        if reg.startswith("scratch:"):
            idx = d.get("scratch:*")
            if idx:
                k = bisect_left(idx, before)
                if k:
                    found = max(found, idx[k - 1])
        return found

    @staticmethod
    def _scratch_offset(ins) -> int | None:
        slots = ins.slots[0]
        if any(sl.name in ("addr", "vaddr", "saddr") and sl.operand.kind != "off" for sl in slots):
            return None
        mod = ins.stmts[0].modifier("offset")
        return (mod.int_value() or 0) if mod is not None else 0

    def _system_sgprs(self) -> dict[str, tuple[str, int]]:
        """The SGPRs holding the workgroup ids on entry (:mod:`isalint.model.launch`)."""
        k = self.kernel
        if k is None or not k.descriptor:
            return {}
        try:
            layout = sgpr_layout(k.descriptor)
        except AbiError:
            return {}
        return {f"s{s}": (f"workgroup_id_{axis}", WORKGROUP_ID_LIMIT - 1) for axis, s in layout.workgroup_id.items()}

    # -- registers -----------------------------------------------------------------
    def value(self, reg: str, index: int) -> Value:
        """The value of ``reg`` just before instruction ``index`` executes."""
        import sys

        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 20000))
        try:
            return self._value(reg, index)
        except RecursionError:
            return unknown(f"{reg} depends on a longer chain of instructions than isalint follows")
        except _WorkLimit:
            self._note_refused(index)
            return unknown(f"analysis limit reached: {reg} not evaluated")
        finally:
            sys.setrecursionlimit(limit)

    def _count_step(self) -> None:
        self.steps += 1
        if self.steps > self.max_steps:
            raise _WorkLimit

    def _note_refused(self, index: int) -> None:
        self._refused.add(index)
        if self._limit is None:
            ins = self.program.instrs[index]
            name = self.kernel.name if self.kernel is not None else "the file"
            self._limit = limits.LimitReached("the per-lane evaluation of LDS addresses", f"kernel {name}",
                                              ins.lineno, 0, "their bank conflicts are not checked")
            limits.record(self.program, self._limit)
        self._limit.skipped = len(self._refused)

    def _value(self, reg: str, index: int) -> Value:
        b = self.cfg.block_of[index]
        i = self._last_write(b, reg, index)
        if i >= 0:
            return self._def_value(i, reg)
        return self._entry_value(b, reg)

    def _exit_value(self, b: int, reg: str) -> Value:
        i = self._last_write(b, reg, self.cfg.blocks[b].last)
        if i >= 0:
            return self._def_value(i, reg)
        return self._entry_value(b, reg)

    def _kernel_entry(self, reg: str) -> Value:
        if reg == "v0":
            lay = self.layout
            terms = {}
            packed = lay.x
            if lay.y is not None:
                packed = tuple([x | (y << 10) | (z << 20) for x, y, z in zip(lay.x, lay.y, lay.z)])
            else:
                self.symbol("threadIdx.y", 0, 1023, 0)
                self.symbol("threadIdx.z", 0, 1023, 0)
                terms = {"threadIdx.y": 1 << 10, "threadIdx.z": 1 << 20}
            return Value(packed, make_terms(terms))
        if reg.startswith("v") or reg.startswith("scratch:"):
            return unknown(f"{reg} is read before the kernel writes it")
        if reg == "exec_lo":
            return self.const(MASK)
        if reg == "exec_hi":
            return self.const(0 if self.ws == 32 else MASK)
        if reg in self._entry_sgprs:
            name, hi = self._entry_sgprs[reg]
            return self.symbol(name, 0, hi, 0)
        return self.symbol(f"{reg}@entry")

    def _entry_value(self, b: int, reg: str) -> Value:
        key = (b, reg)
        if key in self._entry_memo:
            return self._entry_memo[key]
        blk = self.cfg.blocks[b]
        preds = [p for p in blk.preds if self._in_kernel(p)]
        if b == self._entry_block or not preds:
            v = self._kernel_entry(reg) if b == self._entry_block else unknown(
                f"{reg} at unreachable block {blk.label or b}")
            self._entry_memo[key] = v
            return v
        header = b in self._headers
        if key in self._progress:
            # only a loop header closes a cycle: every cycle of a reducible CFG passes through one
            return Value(self._lanes_const(0), ((self._progress[key], 1),))
        if not header and self._visits.get(key, 0) > len(self._headers) + 1:
            return unknown(f"{reg}: irreducible control flow at {blk.label or b}")
        tkey = ("e", key, frozenset(self._progress))
        if tkey in self._temp:
            return self._temp[tkey]  # type: ignore[return-value]
        self._count_step()
        if header:
            # Solve enclosing loops first (outside in), so that a cycle through
            # this header and an outer one closes at the outer header.
            for outer in self._enclosing.get(b, ()):
                if (outer, reg) not in self._progress and (outer, reg) not in self._entry_memo:
                    self._entry_value(outer, reg)
            if key in self._entry_memo:
                return self._entry_memo[key]
            if tkey in self._temp:
                return self._temp[tkey]  # type: ignore[return-value]
        ph = f"%{reg}@B{b}"
        if header:
            self.symbols.setdefault(ph, Symbol(ph, 0, MASK, 0, varying=True))
            self._progress[key] = ph
        else:
            self._visits[key] = self._visits.get(key, 0) + 1
        try:
            vals = [self._exit_value(p, reg) for p in preds]
        finally:
            if header:
                del self._progress[key]
            else:
                self._visits[key] -= 1
        v = self._merge(reg, b, vals, ph)
        if reg.startswith("s") and not v.known:
            v = self.fresh(f"{reg}@{blk.label or 'B%d' % b}")
        if not self.varying(v):
            self._entry_memo[key] = v
        else:
            self._temp[tkey] = v
        return v

    def _in_kernel(self, b: int) -> bool:
        if self.kernel is None:
            return True
        first = self.cfg.blocks[b].first
        return self.kernel.first <= first < self.kernel.last

    def _merge(self, reg: str, b: int, vals: list[Value], ph: str) -> Value:
        label = self.cfg.blocks[b].label or f"B{b}"
        init = [v for v in vals if not any(n == ph for n, _ in v.terms)]
        back = [v for v in vals if any(n == ph for n, _ in v.terms)]
        for v in vals:
            if not v.known:
                return v
        induction = False
        step_tz = 64
        for v in back:
            d = v.term_dict()
            if d.get(ph) != 1:
                return unknown(f"{reg} changes per lane from one iteration to the next of the loop at {label}")
            del d[ph]
            rest = Value(v.lanes, make_terms(d))
            if self.varying(rest) or not self.wave_uniform(rest):
                return unknown(f"{reg} changes per lane from one iteration to the next of the loop at {label}")
            if rest.terms or any(rest.lanes):
                induction = True
                step_tz = min(step_tz, self.tz(rest.terms), *(trailing_zeros(x) for x in set(rest.lanes)))
        if not init:
            return unknown(f"{reg} has no value on entry to {label}")
        base = init[0]
        if all(v.same(base) for v in init[1:]):
            merged = base
        else:
            # value = base + phi, phi = (the path's value - base): wave-uniform on every path
            lo = hi = 0
            tzs = []
            for v in init[1:]:
                diff = self.sub(v, base)
                if self.varying(diff) or not self.wave_uniform(diff):
                    return unknown(f"{reg} holds different per-lane values on the paths into {label}")
                distinct = set(diff.lanes)
                signed = [x - (1 << 32) if x >> 31 else x for x in distinct]
                dlo, dhi = self.bounds(diff.terms)
                lo, hi = min(lo, dlo + min(signed)), max(hi, dhi + max(signed))
                tzs.append(min(self.tz(diff.terms), *(trailing_zeros(x) for x in distinct)))
            merged = self.add(base, self.fresh(f"phi({reg}@{label})", lo, hi, min(tzs)))
        if induction:
            merged = self.add(merged, self.fresh(f"iter({reg}@{label})", -(1 << 40), 1 << 40, step_tz))
        return merged

    def _def_value(self, i: int, reg: str) -> Value:
        memo = self._def_memo.get(i)
        if memo is not None and reg in memo:
            return memo[reg]
        tkey = ("d", i, frozenset(self._progress))
        tm = self._temp.get(tkey)
        if tm is not None and reg in tm:  # type: ignore[operator]
            return tm[reg]  # type: ignore[index]
        ins = self.program.instrs[i]
        self._count_step()
        results = self._evaluate(ins)
        out = {}
        for r in list(ins.defs) + self._slot_defs.get(i, []):
            v = results.get(r)
            if v is None:
                v = unknown(f"{r} is written by '{ins.text()}' (line {ins.lineno}), which isalint does not evaluate")
            if r.startswith("s") and not r.startswith("scc") and not v.known:
                v = self.fresh(f"{r}@L{ins.lineno}")
            out[r] = v
        if any(self.varying(v) for v in out.values() if v.known):
            self._temp[tkey] = out
        else:
            self._def_memo[i] = out
        found = out.get(reg)
        if found is None:  # a spill slot that a store with a computed address may have overwritten
            found = unknown(f"{reg} may be overwritten by '{ins.text()}' (line {ins.lineno}), whose address "
                            "isalint does not follow")
        return found

    def lds_access(self, ins) -> LdsAccess | Value | None:
        """:func:`isalint.model.lanes.lds.lds_access` of ``ins``."""
        return lds_access(self, ins)


def evaluator_for(analysis, index: int) -> LaneEvaluator:
    """The evaluator of the kernel holding instruction ``index``, shared by the
    rules of one analysis (cached on it)."""
    cache = analysis.__dict__.setdefault("_lane_evaluators", {})
    program = analysis.program
    k = program.kernel_of(index)
    key = k.name if k is not None else None
    if key not in cache:
        cache[key] = LaneEvaluator(program, k)
    return cache[key]
