"""isalint.hw.vgpr_banks and BANK001: the VGPR bank / operand-cache model against the worklog."""
from __future__ import annotations

from conftest import KERNELS, places

from isalint.analysis import Analysis
from isalint.hw.vgpr_banks import DEFAULT, BankOp, Params, simulate
from isalint.lint.engine import check_analysis

K6 = KERNELS / "kernel6_style"


def _loop_sim(path, label=None, params=DEFAULT):
    analysis = Analysis.from_path(str(path))
    loop = analysis.cfg.find_loop(label) if label else analysis.hot_loop
    instrs = [analysis.program.instrs[i] for i in analysis.loop_indices(loop)]
    return analysis, simulate(instrs, loop=True, params=params)


def test_kernel6_style_loop_models_no_stall_and_one_cycle_per_vopd():
    _, sim = _loop_sim(K6 / "kernel6_style.s")
    vopd = [s for s in sim.valu_steps if s.op.is_vopd]
    assert len(vopd) == 64 and all(s.cycles == 1 for s in vopd)
    assert sim.stall_cycles == 0 and sim.issue_cycles == len(sim.valu_steps) == 65


def test_kernel6_style_reads_follow_the_worklog_figure_34_pattern():
    # 4 register-file reads in the first pair (fresh A and B values), then pairs alternating
    # between 2 reads and none: every other pair reuses all four cached values.
    _, sim = _loop_sim(K6 / "kernel6_style.s")
    reads = [s.rf_reads for s in sim.valu_steps if s.op.is_vopd]
    assert reads[0] == 4
    assert reads[1::2] == [0] * 32 and set(reads[2::2]) == {2}
    first = next(s for s in sim.valu_steps if s.op.is_vopd).cells()
    # W0: the address increment v160 just before lands in this cycle
    assert first == {"DSTX": "W0", "SRC0X": "R2", "SRC1X": "R0", "DSTY": "", "SRC0Y": "R3", "SRC1Y": "R1"}


def test_the_same_loop_with_shared_banks_stalls():
    _, sim = _loop_sim(K6 / "kernel6_shared_banks.s")
    assert sim.stall_cycles >= 16
    for step in sim.valu_steps:
        if step.stall:
            assert step.conflicts and all(len(accs) >= 2 for _, accs in step.conflicts)


def test_kernel5_inner_loop_stalls_on_most_dual_fmas(kernel5):
    _, sim = _loop_sim(kernel5, ".LBB0_9")
    vopd = [s for s in sim.valu_steps if s.op.is_vopd]
    assert len(vopd) == 62
    stalled = [s for s in vopd if s.stall]
    # RGP measured 2-3 cycles per dual FMA; the model gives 2 for most, a lower bound
    assert len(stalled) >= 40 and sim.stall_cycles >= 40
    assert sim.issue_cycles == len(sim.valu_steps) + sim.stall_cycles


def test_bigger_caches_would_not_explain_kernel5(kernel5):
    """The calibration argument of vgpr_banks's docstring, as a test: with a bank cache that
    could deliver two values per cycle, the compiler's loop would barely stall, contrary to RGP."""
    _, sim = _loop_sim(kernel5, ".LBB0_9", Params(cache_entries=2))
    assert sim.stall_cycles <= 2


def test_accumulators_and_writes_do_not_stall_but_are_counted():
    sim = simulate(["v_dual_fmac_f32 v1, v186, v184 :: v_dual_fmac_f32 v2, v187, v185",
                    "v_dual_fmac_f32 v3, v186, v185 :: v_dual_fmac_f32 v4, v187, v184"])
    assert sim.stall_cycles == 0 and sim.src2_reads == 4
    second = sim.steps[1]
    assert second.cells() == {"DSTX": "W1", "SRC0X": "Cache2", "SRC1X": "Cache1", "DSTY": "W2",
                              "SRC0Y": "Cache3", "SRC1Y": "Cache0"}
    assert [(a.reg, a.bank) for a in second.writes] == [("v3", 3), ("v4", 0)]


def test_memory_writes_invalidate_cached_values():
    ops = ["v_fmac_f32_e32 v1, v184, v185", BankOp([], [("DSTX", "v184")], valu=False),
           "v_fmac_f32_e32 v3, v184, v185"]
    sim = simulate(ops)
    assert sim.steps[2].cells()["SRC0X"] == "R0" and sim.steps[2].cells()["SRC1X"] == "Cache1"


def test_simulate_takes_tuples_pairs_and_strings():
    x = ("v_dual_fmac_f32", "v1", "v184", "v192")
    y = ("v_dual_fmac_f32", "v2", "v185", "v193")
    a = simulate([(x, y)])
    b = simulate(["v_dual_fmac_f32 v1, v184, v192 :: v_dual_fmac_f32 v2, v185, v193"])
    assert [s.to_json()["cells"] for s in a.steps] == [s.to_json()["cells"] for s in b.steps]
    assert a.stall_cycles == 1 and a.steps[0].bank_values == [2, 2, 0, 0]
    single = simulate([("v_fmac_f32_e32", "v0", "v4", "v4")])  # one register twice: one value
    assert single.stall_cycles == 0 and single.rf_reads == 2 and single.steps[0].bank_reads[0] == 1


def test_bank001_findings_on_kernel5_and_the_fixtures(kernel5):
    analysis = Analysis.from_path(str(kernel5))
    loop = analysis.cfg.find_loop(".LBB0_9")
    lines = {analysis.program.instrs[i].lineno for i in analysis.loop_indices(loop)}
    findings = check_analysis(analysis, ["BANK001"])
    hot = [d for d in findings if d.line in lines]
    # the inner loop's stalls are one warning carrying their total, each stalled instruction a site
    assert len(hot) == 1 and hot[0].severity == "warning" and hot[0].fix == "--dual-fmac"
    found = places(hot)
    assert len(found) >= 40 and all(p.line in lines for p in found)
    assert all("must deliver" in p.message and "steady state" in p.message for p in found)
    assert hot[0].cost["cycles_per_execution"] == len(found) == 49
    # 8 iterations inferred from s14 (0 to 0x1000 in steps of 0x200), the outer loop's count is N's
    assert hot[0].cost["executions"] == 8 * 16 and not hot[0].cost["executions_known"]
    # the cold prologue/epilogue and the outer loop's address math: info, one finding each
    rest = [d for d in findings if d.line not in lines]
    assert [d.severity for d in rest] == ["info", "info"]
    assert sum(d.cost["cycles_per_execution"] for d in rest) == 22
    assert check_analysis(Analysis.from_path(str(K6 / "kernel6_style.s")), ["BANK001"]) == []
    shared = check_analysis(Analysis.from_path(str(K6 / "kernel6_shared_banks.s")), ["BANK001"])
    assert len(shared) == 1 and shared[0].severity == "warning" and len(places(shared)) >= 16


def _random_ops(rnd, n):
    """VALU operations reading and writing a few VGPRs (some through SRC2), with non-VALU writes
    between them."""
    ops = []
    for _ in range(n):
        regs = [f"v{rnd.randrange(12)}" for _ in range(4)]
        if rnd.random() < 0.15:
            ops.append(BankOp([], [("DSTX", regs[0])], valu=False))
            continue
        reads = [("SRC0X", regs[1]), ("SRC1X", regs[2])]
        if rnd.random() < 0.5:
            reads.append(("SRC2X", regs[0]))
        writes = [("DSTX", regs[0])]
        if rnd.random() < 0.5:  # a pair
            more = [f"v{rnd.randrange(12)}" for _ in range(3)]
            reads += [("SRC0Y", more[1]), ("SRC1Y", more[2])]
            writes.append(("DSTY", more[0]))
        ops.append(BankOp(reads, writes, is_vopd=len(writes) == 2))
    return ops


def test_the_stalls_only_simulation_keeps_the_same_stalled_steps():
    import random

    rnd = random.Random(7)
    settings = [DEFAULT, Params(cache_entries=2), Params(write_delay=0),
                Params(src2_separate=False, rf_reads_per_bank=2), Params(writes_conflict=True)]
    stalled = 0
    for params in settings:
        for _ in range(40):
            ops = _random_ops(rnd, rnd.randrange(1, 30))
            for loop in (False, True):
                every = simulate(ops, loop=loop, params=params)
                only = simulate(ops, loop=loop, params=params, stalls_only=True)
                assert only.steps == [s for s in every.steps if s.stall]
                stalled += len(only.steps)
    assert stalled > 100  # the sequences do stall


def test_stalls_of_over_instructions_is_the_stalls_only_simulation():
    """BANK001's walk over a kernel's loops and blocks (facts shared between instructions of one text)
    keeps the steps the stalls-only simulation keeps, with the default model and with others."""
    from conftest import REPRESENTATIVE, fixture_kernels

    from isalint.hw.vgpr_banks import ops_from_instrs, stalls_of

    settings = [DEFAULT, Params(rf_reads_per_bank=2, write_delay=0), Params(cache_entries=2)]
    compared = stalled = 0
    for path in fixture_kernels():
        if path.name not in REPRESENTATIVE | {"kernel6_shared_banks.s"}:
            continue
        analysis = Analysis.from_path(str(path))
        instrs, cfg = analysis.program.instrs, analysis.cfg
        groups = [(lp.indices(cfg), True) for lp in cfg.loops] + [(b.indices(), False) for b in cfg.blocks]
        for params in settings:
            for idx, loop in groups:
                idx = list(idx)
                ops = ops_from_instrs([instrs[i] for i in idx], analysis.vopd_half)
                want = simulate(ops, loop=loop, params=params, stalls_only=True)
                got = stalls_of(instrs, idx, loop=loop, half_of=analysis.vopd_half, params=params)
                assert [s.to_json() for s in got.steps] == [s.to_json() for s in want.steps]
                assert got.steps == want.steps
                compared += 1
                stalled += len(want.steps)
    assert compared > 20 and stalled > 50
