"""Re-emitting the loop body and moving the accumulators on the region's edges.

The body of the FMA block's basic block is written anew: the loads split into ``ds_load_b64`` into
the planned register pairs, the dual FMAs in the searched order (loads of a later product go right
after the product whose register set they reuse), then the block's other instructions in their
order; the lgkm waits are re-derived (:func:`isalint.model.counters.plan_loop_waits`) so each FMA
waits only for the loads it reads. Moved accumulators go to their new registers on every edge into
the region and back on every edge out (:mod:`isalint.fixes.toolkit.moves`), and the register counts
are refreshed (:func:`isalint.fixes.toolkit.counts.refresh_counts`).
"""
from __future__ import annotations

from ...hw.registers import VGPRS
from ...model.fma_block import FmaBlock
from ...model.liveness import vgpr_number
from ...model.waitcnt import waitcnt_text
from .. import FixRefused
from ..toolkit.counts import refresh_counts
from ..toolkit.edits import Edits, indent_of, indent_of_text
from ..toolkit.moves import EdgePlacer, move_lines, sequential_moves
from ..toolkit.registers import highest_register
from ..toolkit.waits import parse_lines, state_entering, state_leaving, strip_counter
from .plan import phase_of_load
from .region import Region
from .schedule import Layout, Schedule, dual_regs, pair_of_load

TRAMPOLINE_STEM = ".Lisalint_dfmac"  # labels of the blocks that hold an edge's moves
MAX_CLAUSE = 64  # instructions one s_clause can group (its 6-bit count + 1)


def fmac_line(indent: str, x: tuple[int, int, int], y: tuple[int, int, int]) -> str:
    return (f"{indent}v_dual_fmac_f32 v{x[0]}, v{x[1]}, v{x[2]} :: "
            f"v_dual_fmac_f32 v{y[0]}, v{y[1]}, v{y[2]}")


def load_line(indent: str, reg: int, addr: str, offset: int) -> str:
    off = f" offset:{offset}" if offset else ""
    return f"{indent}ds_load_b64 v[{reg}:{reg + 1}], {addr}{off}"


def rewrite(analysis, fb: FmaBlock, region: Region, layout: Layout, sched: Schedule) -> tuple[str, dict]:
    from ...model import counters

    program, cfg = analysis.program, analysis.cfg
    instrs = program.instrs
    source = program.source
    edits = Edits(program)
    body = fb.body
    span = body[fb.first: fb.last + 1]
    fma_set = set(fb.fma_instrs)
    load_by_index = {ld.index: ld for ld in fb.loads}
    indent = indent_of(instrs[span[0]].line)

    # New body as text, in order, without the lgkm waits from the first block load to the last
    # FMA (the only LDS operations there are the block's loads: those waits served the FMAs).
    first_load = min(body.index(ld.index) for ld in fb.loads)
    for pos, i in enumerate(body[first_load: fb.last + 1], first_load):
        if instrs[i].counters and i not in load_by_index and "lgkmcnt" in instrs[i].counters:
            raise FixRefused(f"{program.path}:{instrs[i].lineno}: another LDS or scalar-memory operation "
                             f"('{instrs[i].text()}') among the block's loads and FMAs; their waits cannot be "
                             "re-derived safely")
        if instrs[i].klass in ("barrier", "message") and i not in fb.moved:
            raise FixRefused(f"{program.path}:{instrs[i].lineno}: '{instrs[i].text()}' between the loads and "
                             "the FMAs")
    new_body: list[tuple[str, int | None]] = []  # (text, original instr index or None)
    skip: set[int] = set()  # block loads already written under their s_clause
    phase_of = {ld.index: phase_of_load(fb, ld.order) for ld in fb.loads}

    def sub_loads(ld) -> list[tuple[str, None]]:
        ph = fb.phases[phase_of[ld.index]]
        ind = indent_of(instrs[ld.index].line)
        out = []
        for d in range(0, len(ld.regs), 2):
            side, pair = pair_of_load(ph, fb, ld.order, d)
            reg = layout.value_reg(ph.index, side, 2 * pair)
            out.append((load_line(ind, reg, ld.addr, ld.offset + 4 * d), None))
        return out

    span_loads: dict[int, list] = {}  # product -> its loads that sat among the FMAs
    for j in span:
        if j in load_by_index:
            span_loads.setdefault(phase_of[j], []).append(load_by_index[j])
    in_clause = {j for covered in fb.clauses.values() for j in covered}

    def load_group(loads) -> list[tuple[str, None]]:
        """The split loads, under one s_clause when a clause held any of them (and it still fits)."""
        lines = [line for ld in loads for line in sub_loads(ld)]
        if any(ld.index in in_clause for ld in loads) and 2 <= len(lines) <= MAX_CLAUSE:
            lines.insert(0, (f"{indent_of(instrs[loads[0].index].line)}s_clause {hex(len(lines) - 1)}", None))
        return lines

    def priority(i) -> list[tuple[str, int]]:
        return [(instrs[i].line.text, i)]

    for pos, i in enumerate(body):
        if i in fb.clauses and not fb.first <= pos <= fb.last:
            covered = [load_by_index[j] for j in fb.clauses[i]]
            if any(body.index(j) > fb.first for j in fb.clauses[i]):
                continue  # its loads sit among the FMAs: re-clausing them is the span's business
            group = load_group(covered)
            new_body.extend(group)
            skip.update(fb.clauses[i])
            continue
        if i in skip:
            continue
        if first_load < pos < fb.first and instrs[i].klass == "waitcnt":
            rest = strip_counter(instrs[i], "lgkmcnt")
            if rest:
                new_body.append((indent_of(instrs[i].line) + rest, None))
            continue
        if fb.first <= pos <= fb.last:
            if i != span[0]:
                continue
            # Products in order; the loads of product k + sets go right after product k, into the
            # register set product k has finished reading.
            for k in range(layout.sets):
                new_body.extend(load_group(span_loads.get(k, [])))
            # s_setprio among the FMAs: the searched order leaves none of them beside the FMAs it
            # stood by, so the whole FMA sequence runs at the first one's priority and the block
            # ends at the last one's (what follows the block sees the priority it saw before)
            if fb.priorities:
                new_body.extend(priority(fb.priorities[0]))
            for k in range(len(fb.phases)):
                for x, y in dual_regs(sched.duals, layout, k):
                    new_body.append((fmac_line(indent, x, y), None))
                new_body.extend(load_group(span_loads.get(k + layout.sets, [])))
            if len(fb.priorities) > 1:
                new_body.extend(priority(fb.priorities[-1]))
            for j in span:
                if j in fma_set or j in load_by_index or (j in fb.dropped and instrs[j].klass != "waitcnt"):
                    continue
                if j in fb.priorities or j in fb.clauses:
                    continue
                if instrs[j].klass == "waitcnt" and j not in fb.kept_waits:
                    rest = strip_counter(instrs[j], "lgkmcnt")
                    if rest:
                        new_body.append((indent_of(instrs[j].line) + rest, None))
                    continue
                new_body.append((instrs[j].line.text, j))
            continue
        if i in load_by_index:
            new_body.extend(sub_loads(load_by_index[i]))
            continue
        new_body.append((instrs[i].line.text, i))

    # Waits: plan the lgkm waits of the new body from the state the loop is entered with.
    parsed = parse_lines([t for t, _ in new_body])
    if fb.whole_loop:
        planned = counters.plan_loop_waits(parsed, state_entering(analysis, fb.loop), keep_existing=True,
                                           counters=["lgkmcnt"])
    else:
        entry = counters.analyze(program).block_in[fb.block]
        planned, _ = counters.plan_waits(parsed, entry, keep_existing=True, counters=["lgkmcnt"])
    waits_at: dict[int, dict] = {w.position: w.thresholds for w in planned}
    final: list[str] = []
    for pos, (text, _) in enumerate(new_body):
        if pos in waits_at:
            thr = waits_at[pos]
            final.append(f"{indent_of_text(text)}s_waitcnt {waitcnt_text(thr)}")
        final.append(text)
    n_waits = len(planned)

    # Replace the body lines.
    first_line, last_line = edits.line_of(body[0]), edits.line_of(body[-1])
    for n in range(first_line, last_line + 1):
        edits.replace_line(n, [])
    # Comment lines inside the body (rare) are kept, at the top of the body.
    keep_between = [n for n in range(first_line, last_line + 1) if source.lines[n].kind != "instruction"]
    edits.replace_line(first_line, [source.lines[n].text for n in keep_between] + final)

    # Accumulator moves on the region's edges.
    old_of = fb.old_accs()
    new_of = layout.acc_reg
    moved = {cell for cell in old_of if old_of[cell] != new_of[cell]}
    to_new = {new_of[c]: old_of[c] for c in moved}  # new <- old
    to_old = {old_of[c]: new_of[c] for c in moved}  # old <- new
    old_set = set(old_of.values())
    new_set = set(new_of.values())
    value_regs = {r + k for r in layout.pair_reg.values() for k in (0, 1)}
    n_entry_moves = n_exit_moves = 0
    written: set[int] = set()
    placer = EdgePlacer(analysis, edits, indent, TRAMPOLINE_STEM)
    ca = counters.analyze(program)

    def temps_at(live: set[int], state) -> list[int]:
        """Registers free for a cycle's temporary: dead, no load in flight to them, not moved."""
        pending = {vgpr_number(r) for r in state.regs()} if state is not None else set()
        limit = highest_register(program, body[0]) + 1
        free = [r for r in range(VGPRS) if r not in live and r not in pending
                and r not in old_set and r not in new_set]
        return sorted(free, key=lambda r: (r >= limit, r))

    if moved:
        for e in region.entries:
            live = region.live.block_in(e.dst)
            if region.entry_values is not None:
                const = next(iter(region.entry_values.values()))[1]
                seq = [(r, const) for r in sorted(new_set - old_set)]
            else:
                seq = sequential_moves(to_new, temps_at(live, state_leaving(analysis, e.src, ca)))
            lines = move_lines(indent, seq)
            written.update(d for d, _ in seq)
            n_entry_moves = max(n_entry_moves, len(lines))
            placer.place(e, lines)
        done_targets: set[int] = set()
        for e in region.exits:
            # A target reached only from the region gets the moves once, at its start.
            whole = all(pb in region.blocks for pb in cfg.blocks[e.dst].preds)
            if whole and e.dst in done_targets:
                continue
            done_targets.add(e.dst)
            live = region.live.block_in(e.dst)
            seq = sequential_moves(to_old, temps_at(live, ca.block_in[e.dst]))
            lines = move_lines(indent, seq)
            written.update(d for d, _ in seq)
            n_exit_moves = max(n_exit_moves, len(lines))
            if whole and lines:
                edits.insert_before(cfg.blocks[e.dst].first, lines)
            else:
                placer.place(e, lines)
    placer.add_trampolines(program.kernel_of(body[0]))

    text = edits.render()
    top = max([highest_register(program, body[0])] + sorted(new_set | value_regs | written))
    text = refresh_counts(text, source.path, top + 1)
    info = {
        "moved": len(moved), "entry_moves": n_entry_moves, "exit_moves": n_exit_moves,
        "waits": n_waits, "loads": sum(len(ld.regs) // 2 for ld in fb.loads), "vgprs": None,
        "region": region.loop.label, "trampolines": len(placer.trampolines),
    }
    return text, info
