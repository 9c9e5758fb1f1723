"""``isalint fix --dual-fmac``: the worklog's kernel 5 -> kernel 6 rewrite, done by a tool.

The pass rewrites the FMA block of a loop (by default the hottest) into ``v_dual_fmac_f32``
instructions only, with the register layout of the worklog's kernel 6 (seed 000, "Kernel 6:
VALU optimization"): the A column on one pair of VGPR banks, the B row on the other pair, the
accumulators laid out so the two destinations of every pair differ in parity, and an FMA order
chosen by search against the bank / operand-cache model.

Steps (each proves what it needs or refuses with the reason; the input is never touched):

1. :mod:`.dual_fmac_detect` finds the FMA block: one outer product per iteration (or several in
   a row, an unrolled k loop), sources from LDS loads of the same iteration, loop-carried
   accumulators touched by nothing else, all in one basic block of the loop.
2. :mod:`.dual_fmac_region` finds the region over which the accumulators may live in other
   registers (the largest enclosing loop where nothing else touches them) and the VGPRs free
   there, from liveness over the whole kernel.
3. :mod:`.dual_fmac_sched` places the A and B values on register pairs (each ``ds_load_b128``
   becomes two ``ds_load_b64``; with several products, two register sets alternate), searches
   the order of the dual FMAs, and gives every accumulator a register of the parity its slot
   needs. The layout keeps the kernel's occupancy when it can, then uses the fewest VGPRs.
4. The loop body is re-emitted: new loads, the dual FMAs, the other instructions of the FMA span
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

from ..model.waitcnt import wait_thresholds, waitcnt_text
from . import FixRefused, FixResult
from .dual_fmac_detect import FmaBlock, find_block, vgpr_number
from .dual_fmac_emit import Edits, fmac_line, indent_of, load_line, move_lines, sequential_moves
from .dual_fmac_region import MAX_VGPRS, Region, find_region
from .dual_fmac_sched import (Layout, Schedule, assign_accumulators, choose_value_registers, dual_regs,
                              pair_counts, pair_of_load, search)

__all__ = ["apply", "plan"]


def apply(analysis, options: dict) -> FixResult:
    fb = find_block(analysis, (options or {}).get("loop"))
    region = find_region(analysis, fb)
    layout, sched = plan(analysis, fb, region)
    text, info = rewrite(analysis, fb, region, layout, sched)
    new_analysis = verify(analysis, fb, text, info)
    summary = _summary(analysis, new_analysis, fb, sched, info)
    return FixResult(text, summary)


# --------------------------------------------------------------------------------------------
# Planning

def _model():
    """The bank / operand-cache model to search against (:mod:`isalint.bankmodel`)."""
    from .. import bankmodel

    return bank_model(bankmodel)


def bank_model(bankmodel, loop: bool = False):
    """Adapter: score ``dual_regs`` tuples with :func:`isalint.bankmodel.simulate`."""
    BankOp = bankmodel.BankOp

    def op(x, y) -> object:
        reads, writes = [], []
        for tag, (acc, s0, s1) in (("X", x), ("Y", y)):
            reads += [(f"SRC0{tag}", f"v{s0}"), (f"SRC1{tag}", f"v{s1}")]
            if acc >= 0:
                reads.append((f"SRC2{tag}", f"v{acc}"))
                writes.append((f"DST{tag}", f"v{acc}"))
        return BankOp(reads, writes, True, "", None, None, True)

    def model(regs) -> dict:
        sim = bankmodel.simulate([op(x, y) for x, y in regs], loop=loop)
        rf = {"X": 0, "Y": 0}
        for step in sim.steps:
            for a in step.reads:
                if a.kind == "R" and not a.slot.startswith("SRC2"):
                    rf[a.slot[-1]] += 1
        return {"stalls": sim.stall_cycles, "hits": sim.cache_hits, "rf_reads": sim.rf_reads,
                "asymmetry": abs(rf["X"] - rf["Y"]), "cycles": sim.issue_cycles}

    return model


def plan(analysis, fb: FmaBlock, region: Region) -> tuple[Layout, Schedule]:
    p, q = pair_counts(fb)
    n_cells = 4 * p * q  # accumulators
    pool = set(range(MAX_VGPRS)) - region.busy
    value_pool = set(range(MAX_VGPRS)) - region.busy_values
    prefer = set(fb.value_regs)
    used_now = _highest_vgpr(analysis, fb.body[0]) + 1
    n_phases = len(fb.phases)
    prefix_phases = {_phase_of_load(fb, ld.order) for ld in fb.loads if fb.body.index(ld.index) < fb.first}
    kernel = analysis.program.kernel_of(fb.body[0])
    waves_before = _waves(kernel, used_now)
    best = None
    for sets in ((2, 1) if n_phases > 1 else (1,)):
        if max(prefix_phases, default=0) >= sets:
            continue  # a product loaded before the first FMA would overwrite a set still in use
        for a_bank in (2, 0):
            for limit in range(2, MAX_VGPRS + 1):
                if limit < used_now and not _fits(fb, pool, value_pool, a_bank, limit, sets, n_cells):
                    continue
                # Below the registers the kernel already uses, take all of them: the same count,
                # more room to keep accumulators and values where they were.
                limit = max(limit, used_now)
                below = {r for r in pool if r < limit}
                # Values first where only they can go (free where they live, busy elsewhere in the region).
                only_values = {r for r in value_pool if r < limit} - below
                vals = choose_value_registers(fb, below | only_values, a_bank, limit, sets, [only_values, prefer])
                if vals is None:
                    continue
                taken = {r + k for r in vals.values() for k in (0, 1)}
                rest = below - taken
                if (sum(1 for r in rest if r % 2 == 0) >= n_cells // 2
                        and sum(1 for r in rest if r % 2 == 1) >= n_cells // 2):
                    vgprs = max(limit, used_now)
                    # Keep the occupancy; then double-buffer the values; then the fewest VGPRs.
                    lost = max(0, waves_before - _waves(kernel, vgprs)) if waves_before else 0
                    cand = ((lost, -sets, vgprs, a_bank != 2), sets, a_bank, vals, rest)
                    if best is None or cand[0] < best[0]:
                        best = cand
                    break
    if best is None:
        if max(prefix_phases, default=0) >= 2:
            raise FixRefused(f"{analysis.program.path}: the loads of {max(prefix_phases) + 1} outer products are "
                             "issued before the first FMA; the pass double-buffers at most two")
        need = n_cells + 2 * (p + q)
        raise FixRefused(f"{analysis.program.path}: not enough free VGPRs: the block needs {need} registers "
                         f"({n_cells} accumulators, {2 * (p + q)} for one set of loaded values, in 64-bit pairs "
                         f"on two banks) and {len(pool)} are free in the loop")
    _, sets, a_bank, vals, rest = best
    layout = Layout(a_bank, sets, vals)
    sub_order = _subload_order(fb)

    def wait_cost(sch: Schedule) -> int:
        total, running = 0, -1
        for x, y in sch.duals:
            for h in (x, y):
                running = max(running, sub_order[("A", h.ai // 2)], sub_order[("B", h.bi // 2)])
            total += running
        return total

    sched = search(fb, layout, _model(), wait_cost)
    accs = assign_accumulators(fb, sched, rest)
    if accs is None:
        raise FixRefused("not enough free VGPRs of each parity for the accumulators")
    layout.acc_reg = accs
    from .. import bankmodel

    regs = [r for k in range(n_phases) for r in dual_regs(sched.duals, layout, k)]
    sched.model = bank_model(bankmodel, loop=True)(regs)
    return layout, sched


def _fits(fb, pool, value_pool, a_bank, limit, sets, n_cells) -> bool:
    below = {r for r in pool if r < limit}
    only_values = {r for r in value_pool if r < limit} - below
    vals = choose_value_registers(fb, below | only_values, a_bank, limit, sets, [only_values])
    if vals is None:
        return False
    rest = below - {r + k for r in vals.values() for k in (0, 1)}
    return (sum(1 for r in rest if r % 2 == 0) >= n_cells // 2
            and sum(1 for r in rest if r % 2 == 1) >= n_cells // 2)


def _waves(kernel, vgprs: int) -> int | None:
    """Waves per SIMD the kernel gets with ``vgprs`` VGPRs (the OCC001 model), None if unknown."""
    if kernel is None:
        return None
    from isalint.rules.occ001 import occupancy

    occ = occupancy(kernel, vgprs=vgprs)
    return occ.waves if occ is not None else None


def _phase_of_load(fb: FmaBlock, order: int) -> int:
    for ph in fb.phases:
        if order in ph.loads:
            return ph.index
    raise KeyError(order)


def _subload_order(fb: FmaBlock) -> dict[tuple, int]:
    """(side, pair index) of the first product -> position of its ds_load_b64 among them."""
    ph = fb.phases[0]
    order: dict[tuple, int] = {}
    for ld in sorted((fb.loads[n] for n in ph.loads), key=lambda ld: ld.order):
        for d in range(0, len(ld.regs), 2):
            order[pair_of_load(ph, fb, ld.order, d)] = len(order)
    return order


def _highest_vgpr(analysis, index: int | None = None) -> int:
    """The highest VGPR the kernel holding instruction ``index`` names (the whole file if None)."""
    instrs = analysis.program.instrs
    lo, hi = 0, len(instrs)
    if index is not None:
        k = analysis.program.kernel_of(index)
        if k is not None:
            lo, hi = k.first, k.last
    top = -1
    for ins in instrs[lo:hi]:
        for r in list(ins.defs) + list(ins.uses):
            n = vgpr_number(r)
            if n is not None and n > top:
                top = n
    return top


# --------------------------------------------------------------------------------------------
# Rewriting

def rewrite(analysis, fb: FmaBlock, region: Region, layout: Layout, sched: Schedule) -> tuple[str, dict]:
    from ..model import counters

    program, cfg = analysis.program, analysis.cfg
    instrs = program.instrs
    source = program.source
    line_index = {id(line): n for n, line in enumerate(source.lines)}

    def lidx(i: int) -> int:
        return line_index[id(instrs[i].line)]

    edits = Edits()
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
    phase_of = {ld.index: _phase_of_load(fb, ld.order) for ld in fb.loads}

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
    for pos, i in enumerate(body):
        if first_load < pos < fb.first and instrs[i].klass == "waitcnt":
            rest = _strip_lgkm(instrs[i])
            if rest:
                new_body.append((indent_of(instrs[i].line) + rest, None))
            continue
        if fb.first <= pos <= fb.last:
            if i != span[0]:
                continue
            # Products in order; the loads of product k + sets go right after product k, into the
            # register set product k has finished reading.
            for k in range(layout.sets):
                for ld in span_loads.get(k, []):
                    new_body.extend(sub_loads(ld))
            for k in range(len(fb.phases)):
                for x, y in dual_regs(sched.duals, layout, k):
                    new_body.append((fmac_line(indent, x, y), None))
                for ld in span_loads.get(k + layout.sets, []):
                    new_body.extend(sub_loads(ld))
            for j in span:
                if j in fma_set or j in load_by_index or (j in fb.dropped and instrs[j].klass != "waitcnt"):
                    continue
                if instrs[j].klass == "waitcnt" and j not in fb.kept_waits:
                    rest = _strip_lgkm(instrs[j])
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
    parsed = _parse_body([t for t, _ in new_body])
    if fb.whole_loop:
        planned = counters.plan_loop_waits(parsed, _entry_state(analysis, fb), keep_existing=True,
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
    first_line, last_line = lidx(body[0]), lidx(body[-1])
    for n in range(first_line, last_line + 1):
        edits.replace[n] = []
    # Comment lines inside the body (rare) are kept, at the top of the body.
    keep_between = [n for n in range(first_line, last_line + 1) if source.lines[n].kind != "instruction"]
    edits.replace[first_line] = [source.lines[n].text for n in keep_between] + final

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
    trampolines: list[list[str]] = []
    ca = counters.analyze(program)

    def temps_at(live: set[int], state) -> list[int]:
        """Registers free for a cycle's temporary: dead, no load in flight to them, not moved."""
        pending = {vgpr_number(r) for r in state.regs()} if state is not None else set()
        limit = _highest_vgpr(analysis, body[0]) + 1
        free = [r for r in range(MAX_VGPRS) if r not in live and r not in pending
                and r not in old_set and r not in new_set]
        return sorted(free, key=lambda r: (r >= limit, r))

    if moved:
        for e in region.entries:
            live = region.live.block_in(e.dst)
            if region.entry_values is not None:
                const = next(iter(region.entry_values.values()))[1]
                seq = [(r, const) for r in sorted(new_set - old_set)]
            else:
                state = ca.block_in[e.src].copy()
                for i in cfg.blocks[e.src].indices():
                    state.step(instrs[i], i, "zero")
                seq = sequential_moves(to_new, temps_at(live, state))
            lines = move_lines(indent, seq)
            written.update(d for d, _ in seq)
            n_entry_moves = max(n_entry_moves, len(lines))
            _place(analysis, e, lines, edits, lidx, trampolines, indent)
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
                edits.add_before(lidx(cfg.blocks[e.dst].first), lines)
            else:
                _place(analysis, e, lines, edits, lidx, trampolines, indent)
    if trampolines:
        k = program.kernel_of(body[0])
        last = instrs[k.last - 1]
        if not (last.ends_program() or last.is_unconditional_branch()):
            raise FixRefused(f"{program.path}:{last.lineno}: no place after the kernel's last instruction "
                             "for the moves of a branch edge")
        for t in trampolines:
            edits.add_after(lidx(k.last - 1), t)

    text = edits.render(source)
    top = max([_highest_vgpr(analysis, body[0])] + sorted(new_set | value_regs | written))
    text = _update_counts(text, source.path, top + 1)
    info = {
        "moved": len(moved), "entry_moves": n_entry_moves, "exit_moves": n_exit_moves,
        "waits": n_waits, "loads": sum(len(ld.regs) // 2 for ld in fb.loads), "vgprs": None,
        "region": region.loop.label, "trampolines": len(trampolines),
    }
    return text, info


def indent_of_text(text: str) -> str:
    return text[: len(text) - len(text.lstrip())] or "\t"


def _strip_lgkm(ins) -> str:
    """The wait without its lgkmcnt part ("" if nothing is left)."""
    thr = wait_thresholds(ins) or {}
    rest = {c: n for c, n in thr.items() if c != "lgkmcnt"}
    if not rest:
        return ""
    if ins.opcode != "s_waitcnt":
        return ins.text()
    return f"s_waitcnt {waitcnt_text(rest)}"


def _parse_body(lines: list[str]):
    from ..model.program import build_program
    from ..parse.source import parse_text

    prog = build_program(parse_text("\n".join(lines) + "\n", "<loop>"))
    return prog.instrs


def _entry_state(analysis, fb: FmaBlock):
    """The wait-counter state on the edges into the loop, from outside the loop."""
    from ..model import counters

    program, cfg = analysis.program, analysis.cfg
    ca = counters.analyze(program)
    header = cfg.blocks[fb.loop.header]
    state = None
    for p in header.preds:
        if p in fb.loop.blocks:
            continue
        blk = cfg.blocks[p]
        st = ca.block_in[p].copy()
        for i in blk.indices():
            st.step(program.instrs[i], i, "zero")
        if state is None:
            state = st
        else:
            state.merge(st)
    return state


def _place(analysis, edge, lines: list[str], edits: Edits, lidx, trampolines: list, indent: str) -> None:
    """Put ``lines`` on a CFG edge: at the end of its source, at the start of its target, between
    the two when the edge falls through, or in a trampoline block after the kernel."""
    if not lines:
        return
    program, cfg = analysis.program, analysis.cfg
    instrs = program.instrs
    src, dst = cfg.blocks[edge.src], cfg.blocks[edge.dst]
    if len(src.succs) == 1:
        term = instrs[src.last - 1]
        if term.klass == "branch":
            edits.add_before(lidx(src.last - 1), lines)
        else:
            edits.add_after(lidx(src.last - 1), lines)
        return
    if len(dst.preds) == 1:
        edits.add_before(lidx(dst.first), lines)
        return
    if edge.fallthrough:
        edits.add_after(lidx(src.last - 1), lines)
        return
    term = instrs[src.last - 1]
    target = term.branch_target()
    label = f".Lisalint_dfmac_{len(trampolines)}_{target.lstrip('.')}"
    old = term.line.text
    col = old.rfind(target)
    edits.replace[lidx(src.last - 1)] = [old[:col] + label + old[col + len(target):]]
    trampolines.append([f"{label}:"] + lines + [f"{indent}s_branch {target}"])


def _update_counts(text: str, path: str, vgprs: int) -> str:
    """Rewrite the register counts with the ``--metadata`` pass; where it refuses (it cannot see
    every register of some kernel), raise the VGPR fields the pass knows to ``vgprs``."""
    from ..analysis import Analysis
    from ..parse.source import parse_text
    from . import metadata

    try:
        return metadata.apply(Analysis.from_source(parse_text(text, path)), {}).text
    except FixRefused:
        return _fallback_counts(text, vgprs)


def _fallback_counts(text: str, vgprs: int) -> str:
    import re

    def at_least(m):
        old = int(m.group(2))
        return m.group(1) + str(max(old, vgprs))

    text = re.sub(r"(\.amdhsa_next_free_vgpr\s+)(\d+)", at_least, text)
    text = re.sub(r"(\.vgpr_count:\s+)(\d+)", at_least, text)
    text = re.sub(r"(;\s*NumVgprs:\s*)(\d+)", at_least, text)
    text = re.sub(r"(;\s*NumVGPRsForWavesPerEU:\s*)(\d+)", at_least, text)

    def blocks(m):
        old = int(m.group(2))
        return m.group(1) + str(max(old, -(-vgprs // 8) - 1))

    # The granulated count the descriptor encodes: blocks of 8 VGPRs in wave32, minus one.
    text = re.sub(r"(;\s*VGPRBlocks:\s*)(\d+)", blocks, text)
    return text


# --------------------------------------------------------------------------------------------
# Checking the result

def verify(analysis, fb: FmaBlock, text: str, info: dict):
    from ..analysis import Analysis
    from ..model import counters
    from ..parse.source import InputError, parse_text
    from ..vopd import check_pair

    try:
        new = Analysis.from_source(parse_text(text, analysis.program.path))
    except InputError as exc:
        raise FixRefused(f"internal error: the rewritten file does not parse ({exc})") from None
    loop = new.cfg.find_loop(fb.label)
    if loop is None:
        raise FixRefused("internal error: the rewritten loop is not found again")
    singles = 0
    for i in loop.indices(new.cfg):
        ins = new.program.instrs[i]
        if ins.opaque:
            raise FixRefused(f"internal error: line {ins.lineno} of the output is not understood: {ins.problem}")
        names = [s.mnemonic for s in ins.stmts]
        if any(n.startswith("v_fmac") or n.startswith("v_fma_") for n in names):
            singles += 1
        if ins.is_vopd:
            bad = [v for v in check_pair(ins.stmts[0], ins.stmts[1]) if v.severity == "error"]
            if bad:
                raise FixRefused(f"internal error: line {ins.lineno} is not a legal VOPD: {bad[0].message}")
    if singles:
        raise FixRefused(f"internal error: {singles} single FMAs left in the loop")
    # Every wait-counter hazard of the output must be one the input already had, at the same
    # (unchanged) instruction.
    def hazards(program) -> set[tuple[str, str, str]]:
        return {(program.instrs[h.index].text(), h.reg, h.counter) for h in counters.analyze(program).hazards}

    before = hazards(analysis.program)
    for h in counters.analyze(new.program).hazards:
        if (new.program.instrs[h.index].text(), h.reg, h.counter) not in before:
            raise FixRefused(f"internal error: the rewrite leaves {h.reg} used at line "
                             f"{new.program.instrs[h.index].lineno} before its {h.counter} wait")
    loop_new = new.cfg.find_loop(fb.label)
    info["vgprs"] = _highest_vgpr(new, new.cfg.blocks[loop_new.header].first) + 1
    return new


def loop_numbers(analysis, loop) -> dict:
    """The report's numbers for one loop (:func:`isalint.report.regtable.loop_summary`)."""
    from ..report.regtable import loop_summary

    return loop_summary(analysis, loop)


def _summary(old, new, fb: FmaBlock, sched: Schedule, info: dict) -> str:
    before = loop_numbers(old, fb.loop)
    after = loop_numbers(new, new.cfg.find_loop(fb.label))
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
    v0 = _highest_vgpr(old, fb.body[0]) + 1
    lines.append(f"  {'VGPRs':22}{v0:>10}{info['vgprs']:>10}")
    kernel = old.program.kernel_of(fb.body[0])
    w0, w1 = _waves(kernel, v0), _waves(kernel, info["vgprs"])
    if w0 is not None and w1 is not None:
        lines.append(f"  {'waves per SIMD':22}{w0:>10}{w1:>10}")
    lines.append(f"  loads: {len(fb.loads)} -> {info['loads']} ds_load_b64, {info['waits']} s_waitcnt lgkmcnt in "
                 "the loop (each FMA waits only for the loads it reads)")
    lines.append(f"  accumulators moved: {info['moved']} of {len(fb.accs)}, kept there over {info['region']}: "
                 f"{info['entry_moves']} instruction(s) on entry, {info['exit_moves']} on exit")
    return "\n".join(lines)
