"""``isalint fix --unroll``: a counted loop copied out, its control gone, its address steps folded.

The rewrite the worklog made by hand from kernel 6 to kernel 7 (seed 000, "Kernel 7: Loop
unrolling"): the inner GEMM loop of 8 iterations becomes 8 copies of its body, without the
compare and branch of every iteration. Unlike the hand-made kernel 7, which kept one
``v_add_nc_u32`` per matrix per copy, the address steps go into the LDS instructions'
offsets.

Steps (each proves what it needs or refuses with the line and the reason; the input is
never touched):

1. :mod:`.control` picks the loop (``--loop``, else the hottest innermost) and proves its
   trip count from the induction variable and the compare.
2. :mod:`.copies` emits ``--factor`` copies (default: all iterations) with the loop control
   removed and the constant address steps deferred into LDS offsets (:mod:`.deferred`,
   :mod:`isalint.fixes.toolkit.dsoffset`); values the code after the loop reads are brought up to date on exit.
3. :mod:`.waits` places every ``lgkmcnt``/``vmcnt`` wait again from the counters;
   :mod:`.hints` re-derives ``s_delay_alu`` and ``s_clause`` and prunes redundant ``s_setprio``.
4. The loop's lines are replaced, the register counts rewritten, and the result re-parsed
   and checked (no new wait hazard, no backward branch left, no new bank stall).
"""
from __future__ import annotations

from ...model.loop_counter import signed
from .. import FixRefused, FixResult
from ..toolkit import (check_no_new_wait_hazards, check_understood, highest_register, indent_of_text, plan_at_slots,
                       plan_loop_at_slots, refresh_counts, reparse, wait_lines, wait_to_cover)
from ..toolkit import codesize
from . import copies, hints, numbers, render, waits
from .control import LoopControl, prove, where

__all__ = ["apply"]


def apply(analysis, options: dict | None = None) -> FixResult:
    options = options or {}
    program = analysis.program
    ctl = prove(analysis, options.get("loop"))
    factor = _factor(analysis, ctl, options.get("factor"))
    body = [program.instrs[i] for i in ctl.body]
    _check_size(analysis, ctl, factor)
    em = copies.build(analysis, ctl, factor)
    lines, info = finish(analysis, ctl, em)
    text = render.replace_loop(analysis, ctl, [t for t, _ in lines], info["exit_delays"])
    text = refresh_counts(text, program.path, vgprs=highest_register(program, ctl.body[0]) + 1,
                          sgprs=highest_register(program, ctl.body[0], "s") + 1)
    new = verify(analysis, ctl, text, factor)
    count = sum(1 for t, _ in lines if not t.lstrip().startswith(";"))
    before = numbers.figures(body, highest_register(program, ctl.body[0]) + 1)
    after = numbers.figures(_region_instrs(new, ctl, factor, count),
                            highest_register(new.program, new.program.labels[ctl.label]) + 1)
    if before["stall_cycles"] == 0 and after["stall_cycles"] > 0:
        raise FixRefused(f"internal error: the unrolled code has {after['stall_cycles']} modeled bank stall cycles "
                         "per k-step where the loop had none")
    return FixResult(text, _summary(ctl, factor, before, after, em, info))


def _factor(analysis, ctl: LoopControl, factor) -> int:
    if factor is None:
        return ctl.trip
    if factor < 2 or factor > ctl.trip or ctl.trip % factor:
        divisors = [d for d in range(2, ctl.trip + 1) if ctl.trip % d == 0]
        raise FixRefused(f"{where(analysis.program, ctl.branch)}: loop {ctl.label} runs {ctl.trip} times; "
                         f"--factor must divide that: {', '.join(map(str, divisors)) or 'none'}")
    return factor


def finish(analysis, ctl: LoopControl, em) -> tuple[list[tuple[str, tuple | None]], dict]:
    """The emitted copies with waits, clauses, delays and priorities placed: (text, origin) lines."""
    looping = em.copies < ctl.trip
    instrs = render.parse_lines([it.text for it in em.items])
    entry = waits.entry_state(analysis, ctl)
    planner = plan_loop_at_slots if looping else plan_at_slots
    plan, out = planner(instrs, em.wait_slots, entry, waits.REDERIVED)
    need = wait_to_cover(out, waits.exit_state(analysis, ctl), waits.REDERIVED)
    indent = indent_of_text(em.items[0].text)
    seq: list[tuple[str, tuple | None]] = []
    for pos, it in enumerate(em.items):
        if pos in plan:
            seq += [(t, None) for t in wait_lines(indent, plan[pos])]
        if need and looping and pos == len(em.items) - 1:
            seq += [(t, None) for t in wait_lines(indent, need)]
        seq.append((it.text, it.origin))
    if need and not looping:
        seq += [(t, None) for t in wait_lines(indent, need)]
    parsed = render.parse_lines([t for t, _ in seq])
    lines = [hints.Line(t, ins, o) for (t, o), ins in zip(seq, parsed)]
    lines, pruned = hints.prune_setprio(lines)
    body = [analysis.program.instrs[i] for i in ctl.body]
    lines = hints.place_clauses(lines, body, em.copies, indent)
    out_lines = hints.rederive_delays(lines, body, em.copies, looping, indent)
    info_exit = _exit_delays(analysis, ctl, lines, body, em.copies, looping, indent)
    marked: list[tuple[str, tuple | None]] = []
    seen = set()
    for text, origin in out_lines:
        if origin is not None and origin[0] not in seen:
            seen.add(origin[0])
            what = (f"iteration {origin[0] + 1} of {em.copies}" if not looping
                    else f"copy {origin[0] + 1} of {em.copies} per pass")
            marked.append((f"{indent}; {ctl.label} unrolled: {what}", None))
        marked.append((text, origin))
    info = {"setprio_pruned": pruned, "exit_wait": need, "exit_delays": info_exit}
    return marked, info


def _exit_delays(analysis, ctl: LoopControl, lines, body, copies_count: int, looping: bool, indent: str):
    """{instruction index: s_delay_alu lines} for the block the loop exits to, when it is reached only
    from the loop and one of its delays names an instruction of the loop; else None."""
    cfg, instrs = analysis.cfg, analysis.program.instrs
    blk = cfg.blocks[ctl.exit_block]
    if blk.preds != [ctl.block]:
        return None
    exit_instrs = [instrs[i] for i in blk.indices()]
    found = hints.exit_delays(lines, exit_instrs, body, copies_count, looping, indent)
    if found is None:
        return None
    real = [i for i in blk.indices() if instrs[i].opcode != "s_delay_alu"]
    return {real[n]: texts for n, texts in found.items()}


def _check_size(analysis, ctl: LoopControl, factor: int) -> None:
    """Refuse copies that would not fit half the instruction cache (estimated from the body
    without its loop control), naming the largest factor that fits."""
    instrs = analysis.program.instrs
    control = {ctl.branch, ctl.compare, ctl.step_at}
    per_copy = codesize.code_bytes(instrs[i] for i in ctl.body if i not in control)
    if per_copy * factor <= codesize.BUDGET_BYTES:
        return
    fits = [d for d in range(2, factor) if ctl.trip % d == 0 and per_copy * d <= codesize.BUDGET_BYTES]
    hint = f"; try --factor {max(fits)}" if fits else ""
    raise FixRefused(f"{where(analysis.program, ctl.branch)}: {factor} copies of loop {ctl.label} take about "
                     f"{per_copy * factor // 1024} KiB of code, more than half of the "
                     f"{codesize.ICACHE_BYTES // 1024} KiB instruction cache{hint}")


def verify(analysis, ctl: LoopControl, text: str, factor: int):
    """Re-parse the result and check what the rewrite promises."""
    new = reparse(text, analysis.program.path)
    for ins in new.program.instrs:
        check_understood(ins)
    loop = new.cfg.find_loop(ctl.label)
    if factor == ctl.trip and loop is not None:
        raise FixRefused(f"internal error: {ctl.label} is still a loop after a full unroll")
    if factor < ctl.trip and loop is None:
        raise FixRefused(f"internal error: the shorter loop {ctl.label} is not found again")
    check_no_new_wait_hazards(analysis.program, new.program)
    return new


def _summary(ctl: LoopControl, factor: int, before: dict, after: dict, em, info: dict) -> str:
    full = factor == ctl.trip
    how = "fully unrolled" if full else f"unrolled by {factor}: a loop of {ctl.trip // factor} iterations"
    head = (f"unroll: loop {ctl.label}: {ctl.trip} iterations ({ctl.iv} from {signed(ctl.init)} by "
            f"{signed(ctl.step)}), {how}")
    lines = [head] + numbers.table(before, after)
    control = ctl.trip - (0 if full else ctl.trip // factor)
    lines.append(f"  removed: {control} compares and branches, {em.folded_salu} SALU and {em.folded_adds} VALU adds; "
                 f"{em.folded_loads} LDS instructions re-addressed")
    lines.append(f"  kept: {em.kept_adds} moves/adds (offsets without room, values read after the loop)")
    extra = []
    if info["setprio_pruned"]:
        extra.append(f"{info['setprio_pruned']} redundant s_setprio dropped")
    if info["exit_wait"]:
        extra.append("one wait added on exit")
    if extra:
        lines.append("  " + "; ".join(extra))
    return "\n".join(lines)


def _region_instrs(new, ctl: LoopControl, factor: int, count: int):
    """The instructions of the unrolled code (``count`` of them from the loop's label), or of the
    shorter loop."""
    program = new.program
    if factor < ctl.trip:
        loop = new.cfg.find_loop(ctl.label)
        return [program.instrs[i] for i in loop.indices(new.cfg)]
    start = program.labels[ctl.label]
    return program.instrs[start:start + count]

