"""``isalint fix --dual-fmac``: the worklog's kernel 5 -> kernel 6 rewrite, done by a tool.

The pass rewrites the FMA block of a loop (by default the hottest) into ``v_dual_fmac_f32``
instructions only, with the register layout of the worklog's kernel 6 (seed 000, "Kernel 6:
VALU optimization"): the A column on one pair of VGPR banks, the B row on the other pair, the
accumulators laid out so the two destinations of every pair differ in parity, and an FMA order
chosen by search against the bank / operand-cache model.

Steps (each proves what it needs or refuses with the reason; the input is never touched):

1. :mod:`isalint.model.fma_block` finds the FMA block: one outer product per iteration (or several in
   a row, an unrolled k loop), sources from LDS loads of the same iteration, loop-carried
   accumulators touched by nothing else, all in one basic block of the loop.
2. :mod:`.region` finds the region over which the accumulators may live in other
   registers (the largest enclosing loop where nothing else touches them) and the VGPRs free
   there, from liveness over the whole kernel.
3. :mod:`.plan` and :mod:`.schedule` place the A and B values on register pairs (each
   ``ds_load_b128`` becomes two ``ds_load_b64``; with several products, two register sets
   alternate), search the order of the dual FMAs, and give every accumulator a register of the
   parity its slot needs. The layout keeps the kernel's occupancy when it can, then uses the
   fewest VGPRs.
4. :mod:`.emit` re-emits the loop body: new loads, the dual FMAs, the other instructions of the FMA span
   after it, and ``s_waitcnt lgkmcnt`` re-derived so each FMA waits only for the loads it reads
   (:func:`isalint.model.counters.plan_loop_waits`).
5. On every edge into the region the accumulators move to their new registers (nothing to do
   when all start as the same constant, the usual zero initialisation), and on every edge out
   they move back, through a free register where the moves form a cycle, so the epilogue and
   its ``global_store_b128`` of 4 consecutive registers are unchanged.
6. The register counts are rewritten (``.amdhsa_next_free_vgpr``, ``.vgpr_count``, comments).
7. The result is re-parsed and checked: every FMA of the loop is a legal VOPD, no wait-counter
   hazard appears that the input did not have, the VGPR budget holds.
"""
from __future__ import annotations

from ...model.fma_block import FmaBlock, NotAnFmaBlock, find_block
from ...model.loop_stats import loop_summary
from .. import FixRefused, FixResult
from ..toolkit.registers import highest_register, waves_with_vgprs
from ..toolkit.verify import check_no_new_wait_hazards, check_understood, check_vopd, reparse
from .emit import rewrite
from .plan import plan
from .region import find_region
from .schedule import Schedule

__all__ = ["apply", "plan"]


def apply(analysis, options: dict) -> FixResult:
    try:
        fb = find_block(analysis, (options or {}).get("loop"))
    except NotAnFmaBlock as exc:
        raise FixRefused(str(exc)) from None
    region = find_region(analysis, fb)
    layout, sched = plan(analysis, fb, region)
    text, info = rewrite(analysis, fb, region, layout, sched)
    new_analysis = verify(analysis, fb, text, info)
    summary = _summary(analysis, new_analysis, fb, sched, info)
    return FixResult(text, summary)


def verify(analysis, fb: FmaBlock, text: str, info: dict):
    """The rewritten file re-parsed and checked (:mod:`isalint.fixes.toolkit.verify`): every instruction
    of the loop understood, no single FMA left, every VOPD legal, no new wait-counter hazard."""
    new = reparse(text, analysis.program.path)
    loop = new.cfg.find_loop(fb.label)
    if loop is None:
        raise FixRefused("internal error: the rewritten loop is not found again")
    singles = 0
    for i in loop.indices(new.cfg):
        ins = new.program.instrs[i]
        check_understood(ins)
        names = [s.mnemonic for s in ins.stmts]
        if any(n.startswith("v_fmac") or n.startswith("v_fma_") for n in names):
            singles += 1
        check_vopd(ins)
    if singles:
        raise FixRefused(f"internal error: {singles} single FMAs left in the loop")
    check_no_new_wait_hazards(analysis.program, new.program)
    loop_new = new.cfg.find_loop(fb.label)
    info["vgprs"] = highest_register(new.program, new.cfg.blocks[loop_new.header].first) + 1
    return new


def _summary(old, new, fb: FmaBlock, sched: Schedule, info: dict) -> str:
    before = loop_summary(old, fb.loop)
    after = loop_summary(new, new.cfg.find_loop(fb.label))
    shape = f"{len(fb.a_values)} x {len(fb.b_values)}"
    what = f"{len(fb.phases)} outer products of {shape}" if len(fb.phases) > 1 else f"{shape} outer product"
    head = (f"dual-fmac: loop {fb.label}: {len(fb.fmas)} FMAs ({what}) as {len(fb.fmas) // 2} v_dual_fmac_f32, "
            f"order: {sched.name}")
    rows = [
        ("VOPD share of FMAs", lambda s: f"{100 * s['vopd_fma_share']:.1f}%"),
        ("single FMAs", lambda s: str(s["single_fma"])),
        ("modeled bank stalls", lambda s: str(s["stall_cycles"])),
        ("register-file port reads", lambda s: str(s["rf_reads"])),
        ("operand-cache hits", lambda s: str(s["cache_hits"])),
        ("LDS ops per FMA", lambda s: f"{s['lds_ops_per_fma']:.3f}"),
        ("VALU issue cycles", lambda s: str(s["issue_cycles"])),
    ]
    lines = [head, f"  {'':22}{'before':>10}{'after':>10}"]
    for name, fmt in rows:
        lines.append(f"  {name:22}{fmt(before):>10}{fmt(after):>10}")
    v0 = highest_register(old.program, fb.body[0]) + 1
    lines.append(f"  {'VGPRs':22}{v0:>10}{info['vgprs']:>10}")
    kernel = old.program.kernel_of(fb.body[0])
    w0, w1 = waves_with_vgprs(kernel, v0), waves_with_vgprs(kernel, info["vgprs"])
    if w0 is not None and w1 is not None:
        lines.append(f"  {'waves per SIMD':22}{w0:>10}{w1:>10}")
    lines.append(f"  loads: {len(fb.loads)} -> {info['loads']} ds_load_b64, {info['waits']} s_waitcnt lgkmcnt in "
                 "the loop (each FMA waits only for the loads it reads)")
    lines.append(f"  accumulators moved: {info['moved']} of {len(fb.accs)}, kept there over {info['region']}: "
                 f"{info['entry_moves']} instruction(s) on entry, {info['exit_moves']} on exit")
    return "\n".join(lines)
