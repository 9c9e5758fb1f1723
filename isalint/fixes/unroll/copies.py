"""The copies of the loop body, with the loop control gone and constant address steps folded.

Each copy is the body as it runs in one iteration, minus what the unrolled code no longer
needs: the compare and the back edge (kept once per pass of a shorter loop with
``--factor``), the induction variable's add (its value is a known constant in every copy),
and adds of a constant to an address register, whose constants travel as deferred values
(:mod:`.deferred`) into the offsets of the LDS instructions that read them
(:mod:`isalint.fixes.toolkit.dsoffset`). The waits of the re-derived counters, ``s_delay_alu`` and ``s_clause``
are left out here; :mod:`.waits` and :mod:`.hints` place them again.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...model.liveness import liveness
from ...model.loop_counter import constant_add
from ..toolkit import indent_of_text
from ..toolkit import dsoffset
from . import waits
from .control import LoopControl, where
from .deferred import Deferred, Value, is_sgpr, is_vgpr

_VALU_ADDS = ("v_add_nc_u32", "v_add_nc_u32_e32", "v_add_nc_u32_e64")
_SALU_ADD_OPS = ("s_add_i32", "s_add_u32", "s_addk_i32", "s_sub_i32", "s_sub_u32")
HINTS = ("s_delay_alu", "s_clause")


@dataclass
class Item:
    """One instruction line of the unrolled code."""

    text: str
    origin: tuple[int, int] | None  # (copy, position in the body), None for an inserted instruction


@dataclass
class Emission:
    items: list[Item]
    copies: int
    wait_slots: set[int] = field(default_factory=set)  # item positions where a re-derived wait stood
    folded_adds: int = 0  # VALU adds not emitted (their constants went into offsets or nowhere)
    folded_salu: int = 0  # SALU adds not emitted (the induction variable's step, mostly)
    folded_loads: int = 0  # LDS instructions that took a folded constant
    kept_adds: int = 0  # moves/adds emitted to bring a deferred value up to date


def build(analysis, ctl: LoopControl, factor: int) -> Emission:
    """The copies for ``factor`` iterations (``factor == ctl.trip``: the loop disappears)."""
    program = analysis.program
    instrs = program.instrs
    live = liveness(program)
    full = factor == ctl.trip
    indent = indent_of_text(instrs[ctl.body[0]].line.text)
    items: list[Item] = []
    origin: list[tuple[int, int] | None] = [None]

    def emit_inserted(text: str, reg: str) -> None:
        items.append(Item(text, None))
        written([reg])

    state = Deferred(emit_inserted, indent)
    em = Emission(items, factor)
    if full:
        state.set(ctl.iv, Value(None, ctl.init))
    sums: dict[str, tuple[str, str]] = {}  # register -> the two registers whose sum it holds

    def written(regs) -> None:
        for r in regs:
            sums.pop(r, None)
            for d, (a, b) in list(sums.items()):
                if r in (a, b):
                    del sums[d]

    def emit(text: str, ins=None) -> None:
        items.append(Item(text, origin[0]))
        if ins is not None:
            written(ins.defs)

    def scc_free_before(i: int) -> bool:
        return not live.is_live_in(i, "scc")

    def refresh_reads(ins, i: int, skip: str | None = None) -> None:
        for r in ins.uses:
            if r != skip and state.stale(r):
                state.materialize(r, scc_free_before(i), where(program, i))

    def clobber_defs(ins, i: int) -> None:
        for r in ins.defs:
            state.clobber(r, scc_free_before(i), where(program, i))
        for r in ins.defs:
            state.entries.pop(r, None)

    last = factor - 1
    for k in range(factor):
        for pos, i in enumerate(ctl.body):
            ins = instrs[i]
            origin[0] = (k, pos)
            if i == ctl.branch:
                continue
            if ins.opcode in HINTS:
                continue
            if ins.klass == "waitcnt":
                rest = waits.strip(ins)
                if rest != ins.text():
                    em.wait_slots.add(len(items))
                if rest is not None:
                    emit(indent_of_text(ins.line.text) + rest)
                continue
            if i == ctl.compare:
                if full or k != last:
                    continue
                refresh_reads(ins, i)
                emit(ins.line.text, ins)
                continue
            if _fold_salu_add(ins, i, state, live, em):
                continue
            if _fold_valu_add(ins, i, state, sums, em, emit, clobber_defs):
                continue
            if dsoffset.foldable(ins):
                addr = dsoffset.address_operand(ins).text
                refresh_reads(ins, i, skip=addr)
                val = state.value(addr)
                text = ins.line.text
                if state.stale(addr):
                    fields = dsoffset.folded_fields(ins, val.constant) if val.base and is_vgpr(val.base) else None
                    if fields is None:
                        state.materialize(addr, scc_free_before(i), where(program, i))
                    else:
                        text = dsoffset.rewrite(ins, text, val.base, fields)
                        em.folded_loads += 1
                clobber_defs(ins, i)
                emit(text, ins)
                continue
            refresh_reads(ins, i)
            clobber_defs(ins, i)
            emit(ins.line.text, ins)
    origin[0] = None
    exit_live = live.block_live_in(ctl.exit_block)
    if full:
        for reg in [r for r in state.entries if r in exit_live]:
            state.materialize(reg, "scc" not in exit_live, where(program, ctl.branch))
        if "scc" in exit_live:
            # The code after the loop reads the SCC of the compare that ended it: set it again.
            relation = "lg" if ctl.exit_scc == 0 else "eq"
            items.append(Item(f"{indent}s_cmp_{relation}_u32 0, 0", None))
    else:
        top_live = live.block_live_in(ctl.block)
        for reg in [r for r in state.entries if r in exit_live or r in top_live]:
            state.materialize(reg, False, where(program, ctl.branch))
        items.append(Item(instrs[ctl.branch].line.text, (last, len(ctl.body) - 1)))
    em.kept_adds = state.materialized
    return em


def _fold_salu_add(ins, i: int, state: Deferred, live, em: Emission) -> bool:
    """``sD = sA + K`` whose SCC is not read: not emitted, sD deferred."""
    if ins.is_vopd or ins.opcode not in _SALU_ADD_OPS:
        return False
    ops = ins.stmts[0].operands
    dst = ops[0].text
    if not is_sgpr(dst) or live.is_live_out(i, "scc"):
        return False
    src = ops[0] if ins.opcode == "s_addk_i32" else (ops[1] if ops[1].kind == "sgpr" else ops[2])
    if src.kind != "sgpr" or src.count != 1:
        return False
    k = constant_add(ins, dst, src.text)
    if k is None:
        return False
    state.set(dst, state.value(src.text).plus(k))
    em.folded_salu += 1
    return True


def _fold_valu_add(ins, i: int, state: Deferred, sums: dict, em: Emission, emit, clobber_defs) -> bool:
    """``v_add_nc_u32 vD, a, b``: deferred when one side is a constant (or known to be one);
    emitted on the registers' current contents otherwise, with the constants deferred."""
    if ins.is_vopd or ins.opcode not in _VALU_ADDS:
        return False
    stmt = ins.stmts[0]
    ops = stmt.operands
    if stmt.modifiers or len(ops) != 3 or ops[0].kind != "vgpr" or ops[0].count != 1:
        return False
    vals = []
    for op in ops[1:]:
        if op.kind == "int":
            vals.append(Value(None, int(op.value)))
        elif op.kind in ("vgpr", "sgpr") and op.count == 1 and not (op.neg or op.abs or op.half):
            vals.append(state.value(op.text))
        else:
            return False
    dst = ops[0].text
    a, b = vals
    total = a.constant + b.constant
    if a.base is None or b.base is None:
        state.set(dst, Value(a.base or b.base, total))
        em.folded_adds += 1
        return True
    pair = tuple(sorted((a.base, b.base)))
    if sums.get(dst) == pair:  # dst already holds this sum: only the constant changes
        state.set(dst, Value(dst, total))
        em.folded_adds += 1
        return True
    first, second = (a.base, b.base) if not is_vgpr(a.base) or is_vgpr(b.base) else (b.base, a.base)
    if (first, second) == (ops[1].text, ops[2].text):
        text = ins.line.text
    else:
        text = f"{indent_of_text(ins.line.text)}v_add_nc_u32 {dst}, {first}, {second}"
    clobber_defs(ins, i)
    emit(text, ins)
    sums[dst] = pair
    state.set(dst, Value(dst, total))
    return True
