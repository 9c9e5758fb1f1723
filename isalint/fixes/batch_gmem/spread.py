"""``--spread``: the loads moved through the loop body in small groups.

The worklog found it faster to issue the 16 loads two at a time across the (unrolled) k loop than
in one burst: fewer waves of a SIMD wait on global memory at the same moment. The loads move,
in order, from their block to evenly spaced points of the longest straight run of code that
follows it in every iteration: the blocks after the load block's join point, each the only
successor of the one before, none inside an inner loop. Every point is before the first
instruction that touches a loaded register and before the first wait on ``vmcnt``.

When the loads were skipped in some iterations (kernel 5 loads the next tile only while there is
one), each group is predicated instead: ``s_and_saveexec_b32`` with the SGPR that holds the
branch condition as a mask (``s_cselect_b32 -1, 0`` of the same compare), then ``s_mov_b32 exec_lo``
back. A load with EXEC zero reads nothing and writes no register, as the skipped one (RDNA3 ISA
guide, chapter 10: memory instructions act on the lanes EXEC enables).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...hw.registers import SGPRS
from ...model.affine.loops import edge_condition
from ...model.affine.words import Pred
from ...model.liveness import Liveness
from ...model.waitcnt import wait_thresholds
from .. import FixRefused
from ..toolkit import rewritten_view
from .registers import free_over, sgpr_ceiling
from .select import own_blocks

GROUP = 2


@dataclass
class Spread:
    points: dict[int, list[int]] = field(default_factory=dict)  # insert before instruction -> load indices
    mask: str | None = None  # SGPR holding the condition of the loads' block as a lane mask
    save: int | None = None  # SGPR keeping EXEC while a group runs predicated
    load_block: int = -1


def plan_spread(analysis, plan, out, group: int = GROUP) -> Spread:
    program, cfg = analysis.program, analysis.cfg
    ev = plan.ev
    path = program.path
    blocks = {cfg.block_of[ld.index] for ld in plan.loads}
    if len(blocks) != 1:
        raise FixRefused(f"{path}: --spread: the loads are in {len(blocks)} blocks; it moves the loads of one block")
    lb = blocks.pop()
    blk = cfg.blocks[lb]
    first = program.instrs[plan.loads[0].index]
    if len(blk.preds) != 1 or len(blk.succs) != 1:
        raise FixRefused(f"{path}:{first.lineno}: --spread: the loads' block is not a straight step of the loop")
    x, join = blk.preds[0], blk.succs[0]
    mask = None
    if set(cfg.blocks[x].succs) == {lb, join}:
        cond, _ = edge_condition(ev, x, lb)
        if not isinstance(cond, Pred):
            raise FixRefused(f"{path}:{first.lineno}: --spread: the condition under which the loads run is not one "
                             "isalint can read")
        mask = cond
    elif cfg.blocks[x].succs != [lb]:
        raise FixRefused(f"{path}:{first.lineno}: --spread: the loads' block is not a straight step of the loop")
    chain = _chain(cfg, plan.loop, join, {lb, x})
    if not chain:
        raise FixRefused(f"{path}:{first.lineno}: --spread: the code after the loads is entered from elsewhere too")
    target = max(chain, key=lambda b: len(cfg.blocks[b].indices()))
    dsts = {r for ld in plan.loads for r in program.instrs[ld.index].defs}
    _untouched_before(program, cfg, chain[:chain.index(target)], dsts, path, first)
    points = _points(program, cfg, target, dsts)
    count = -(-len(plan.loads) // group)
    tb = cfg.blocks[target]
    valu = sum(1 for i in tb.indices() if program.instrs[i].klass in ("valu", "vopd"))
    if valu < len(plan.loads):
        label = cfg.blocks[target].label or f"line {program.instrs[tb.first].lineno}"
        raise FixRefused(f"{path}:{first.lineno}: --spread: after the loads every iteration runs only {valu} VALU "
                         f"instructions before its next branch or inner loop (at {label}); nothing to spread the "
                         "loads over (unroll the inner loop first: fix --unroll)")
    out_spread = Spread(load_block=lb)
    if mask is not None:
        lv = Liveness(program)
        points = [i for i in points if "scc" not in lv.live_in(i)]
        holder = _mask_register(ev, points, mask)
        if holder is None:
            raise FixRefused(f"{path}:{first.lineno}: --spread: no SGPR holds the loads' condition ({mask}) as a mask "
                             "through the loop body, to predicate them with")
        out_spread.mask = holder
        points = [i for i in points if _holds(ev, holder, i, mask)]
    if len(points) < count:
        raise FixRefused(f"{path}:{first.lineno}: --spread: only {len(points)} places in the loop body can take a "
                         f"group of loads, {count} are needed")
    chosen = [points[(k * len(points)) // count] for k in range(count)]
    loads = [ld.index for ld in plan.loads]
    for k, at in enumerate(chosen):
        out_spread.points[at] = loads[k * group:(k + 1) * group]
    if mask is not None:
        out_spread.save = _save_register(program, plan, out, tb)
    return out_spread


def _chain(cfg, loop, join: int, entries: set[int]) -> list[int]:
    """``join`` and the blocks after it, each the only successor of the one before and entered
    only from it, none in an inner loop."""
    own = own_blocks(cfg, loop)
    if join not in own or not set(cfg.blocks[join].preds) <= entries:
        return []
    out = [join]
    while True:
        b = cfg.blocks[out[-1]]
        if len(b.succs) != 1:
            break
        nxt = b.succs[0]
        if nxt not in own or nxt == loop.header or cfg.blocks[nxt].preds != [out[-1]]:
            break
        out.append(nxt)
    return out


def _untouched_before(program, cfg, blocks, dsts, path, first) -> None:
    for b in blocks:
        for i in cfg.blocks[b].indices():
            ins = program.instrs[i]
            if dsts & (set(ins.defs) | set(ins.uses)):
                raise FixRefused(f"{path}:{ins.lineno}: --spread: '{ins.text()}' touches a loaded register before the "
                                 f"loop body the loads would move to (load at line {first.lineno})")


def _points(program, cfg, target: int, dsts: set[str]) -> list[int]:
    """Instructions of ``target`` a group may go before: not inside an ``s_clause`` or after an
    ``s_delay_alu`` (whose counts would shift), up to the first use of a loaded register, wait on
    vmcnt or branch."""
    out = []
    clause = 0
    for i in cfg.blocks[target].indices():
        ins = program.instrs[i]
        thr = wait_thresholds(ins) if ins.klass == "waitcnt" else None
        touches = bool(dsts & (set(ins.defs) | set(ins.uses)))
        if touches or (thr and "vmcnt" in thr) or ins.klass == "branch" or ins.ends_program():
            if clause == 0 and not touches and not _after_hint(program, i):
                out.append(i)
            break
        if clause == 0 and not _after_hint(program, i) and ins.opcode not in ("s_clause",):
            out.append(i)
        if ins.opcode == "s_clause":
            clause = (ins.stmts[0].operands[0].value or 0) + 2 if ins.stmts[0].operands else 0
        if clause:
            clause -= 1
    return out


def _after_hint(program, i: int) -> bool:
    return i > 0 and program.instrs[i - 1].opcode in ("s_delay_alu", "s_clause")


def _mask_register(ev, points: list[int], pred: Pred) -> str | None:
    if not points:
        return None
    for n in range(SGPRS):
        reg = f"s{n}"
        if _holds(ev, reg, points[0], pred) and _holds(ev, reg, points[-1], pred):
            return reg
    return None


def _holds(ev, reg: str, index: int, pred: Pred) -> bool:
    w = ev.word(reg, index)
    return w.kind == "mask" and w.pred == pred


def _save_register(program, plan, out, tb) -> int:
    loads = {ld.index: [r for s in program.instrs[ld.index].slots[0] if s.name in ("addr", "vaddr") for r in s.regs]
             for ld in plan.loads}
    after = rewritten_view(program, out.dead, {i: set(r) for i, r in loads.items()})
    _, free_s, _ = free_over(after, list(tb.indices()), sgpr_ceiling(program, plan.kernel))
    taken = {n for p in out.bases.values() for n in (p, p + 1)} | {n for n in out.steps.values() if n is not None}
    for n in free_s:
        if n not in taken:
            return n
    raise FixRefused(f"{program.path}: --spread: no free SGPR to keep EXEC in while a group of loads runs predicated")
