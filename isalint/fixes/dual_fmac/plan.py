"""Planning the rewrite: where the loaded values and the accumulators go, and the FMA order.

:func:`plan` tries the layouts (one or two register sets for the values, A on banks 2-3 or 0-1, the
fewest registers that fit) against the VGPRs the region leaves free, keeps the one that loses no
occupancy, double-buffers the values when it can and uses the fewest VGPRs; then searches the order
of the dual FMAs (:func:`.schedule.search`) against the bank and operand-cache model
(:mod:`isalint.hw.vgpr_banks`) and the waits each FMA would need, and gives every accumulator a
register of the parity its slot needs.
"""
from __future__ import annotations

from ...hw.registers import VGPRS
from ...model.fma_block import FmaBlock
from .. import FixRefused
from ..toolkit.registers import highest_register, waves_with_vgprs
from .region import Region
from .schedule import (Layout, Schedule, assign_accumulators, choose_value_registers, dual_regs, pair_counts,
                       pair_of_load, search)


def _model():
    """The bank / operand-cache model to search against (:mod:`isalint.hw.vgpr_banks`)."""
    from ...hw import vgpr_banks

    return bank_model(vgpr_banks)


def bank_model(banks, loop: bool = False):
    """Adapter: score ``dual_regs`` tuples with :func:`isalint.hw.vgpr_banks.simulate`."""
    BankOp = banks.BankOp

    def op(x, y) -> object:
        reads, writes = [], []
        for tag, (acc, s0, s1) in (("X", x), ("Y", y)):
            reads += [(f"SRC0{tag}", f"v{s0}"), (f"SRC1{tag}", f"v{s1}")]
            if acc >= 0:
                reads.append((f"SRC2{tag}", f"v{acc}"))
                writes.append((f"DST{tag}", f"v{acc}"))
        return BankOp(reads, writes, True, "", None, None, True)

    def model(regs) -> dict:
        sim = banks.simulate([op(x, y) for x, y in regs], loop=loop)
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
    pool = set(range(VGPRS)) - region.busy
    value_pool = set(range(VGPRS)) - region.busy_values
    prefer = set(fb.value_regs)
    used_now = highest_register(analysis.program, fb.body[0]) + 1
    n_phases = len(fb.phases)
    prefix_phases = {phase_of_load(fb, ld.order) for ld in fb.loads if fb.body.index(ld.index) < fb.first}
    kernel = analysis.program.kernel_of(fb.body[0])
    waves_before = waves_with_vgprs(kernel, used_now)
    best = None
    for sets in ((2, 1) if n_phases > 1 else (1,)):
        if max(prefix_phases, default=0) >= sets:
            continue  # a product loaded before the first FMA would overwrite a set still in use
        for a_bank in (2, 0):
            for limit in range(2, VGPRS + 1):
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
                    lost = max(0, waves_before - waves_with_vgprs(kernel, vgprs)) if waves_before else 0
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
    from ...hw import vgpr_banks

    regs = [r for k in range(n_phases) for r in dual_regs(sched.duals, layout, k)]
    sched.model = bank_model(vgpr_banks, loop=True)(regs)
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


def phase_of_load(fb: FmaBlock, order: int) -> int:
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
