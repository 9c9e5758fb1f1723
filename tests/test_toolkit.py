"""isalint.fixes.toolkit: the pieces every rewrite pass shares, on the real kernels.

The register tests prove what the toolkit says free with the emulator: writing garbage into every
register it offers, at the top of a loop, leaves the kernel's result unchanged, and writing into a
register it withholds does not.
"""
from __future__ import annotations

import re

import pytest
from conftest import KERNEL5, KERNELS, examples
from hypothesis import given, settings
from hypothesis import strategies as st

from isalint.analysis import Analysis
from isalint.lint.engine import check_analysis
from isalint.fixes import FixRefused
from isalint.fixes.toolkit import (Edits, Labels, LiveRegisters, free_registers, move_lines, raise_counts,
                                   refresh_counts, sequential_moves, sgpr_budget, special_free)
from isalint.hw.registers import SGPRS, sgpr_blocks
from isalint.parse.source import parse_text

needs_kernel5 = pytest.mark.skipif(not KERNEL5.is_file(), reason="../shared/corpus/kernel5.s is not present")


def _analysis(path) -> Analysis:
    return Analysis.from_path(str(path))


def _equal(path, original: str, candidate: str) -> str | None:
    """None when the emulator finds the candidate equal to the original (GEMM N=128)."""
    from isalint.validate.equivalence import check_rewrite

    verdict = check_rewrite(str(path), original, candidate, gemm_n=128)
    if verdict is not None and verdict.startswith("cannot validate"):
        pytest.skip(verdict)
    return verdict


def _clobber_at_loop_top(analysis, label: str, lines: list[str]) -> str:
    loop = analysis.cfg.find_loop(label)
    edits = Edits(analysis.program)
    edits.insert_before(analysis.cfg.blocks[loop.header].first, ["\t" + t for t in lines])
    return edits.render()


# --------------------------------------------------------------------------------------------
# Free SGPRs, proven in the emulator


@needs_kernel5
def test_kernel5_inner_loop_free_sgprs_are_really_free():
    a = _analysis(KERNEL5)
    loop = a.cfg.find_loop(".LBB0_9")
    at = a.loop_indices(loop)
    free = free_registers(a.program, at, "s")
    # s14 counts the loop's iterations; s0-s13 hold kernel arguments read after the loop.
    assert free == [15]
    assert {5, 14} <= LiveRegisters(a.program, "s").block_in(loop.header)
    assert special_free(a.program, at, "vcc_lo")
    original = a.program.source.render()
    clobbered = _clobber_at_loop_top(a, ".LBB0_9", ["s_mov_b32 s15, 0x7fffffff", "s_mov_b32 vcc_lo, 0x7fffffff"])
    assert _equal(KERNEL5, original, clobbered) is None
    for live in ("s14", "s5"):
        wrong = _clobber_at_loop_top(a, ".LBB0_9", [f"s_mov_b32 {live}, 0x7fffffff"])
        assert _equal(KERNEL5, original, wrong) is not None, live


def test_naive_loop_free_sgprs_and_pairs_are_really_free():
    path = KERNELS / "gemm_naive.s"
    a = _analysis(path)
    at = a.loop_indices(a.hot_loop)
    singles = free_registers(a.program, at, "s")
    pairs = free_registers(a.program, at, "s", count=2)
    assert singles == [3, 7, 8, 9, 12, 13, 14, 15]
    # a pair starts at an even SGPR and both halves are free: s[8:9], s[12:13], s[14:15], not s[7:8]
    assert pairs == [8, 12, 14]
    assert free_registers(a.program, at, "s", count=4) == [12]
    label = a.cfg.blocks[a.hot_loop.header].label
    original = a.program.source.render()
    lines = [f"s_mov_b32 s{r}, 0x7fffffff" for r in singles] + ["s_mov_b64 s[8:9], -1"]
    assert _equal(path, original, _clobber_at_loop_top(a, label, lines)) is None


def test_free_sgprs_stop_at_the_declared_count_unless_told():
    a = _analysis(KERNELS / "gmem_sgpr_base.s")
    at = a.loop_indices(a.hot_loop)
    assert free_registers(a.program, at, "s") == [32]  # below .amdhsa_next_free_sgpr 44
    wide = free_registers(a.program, at, "s", limit=SGPRS)
    assert wide[0] == 32 and set(range(44, SGPRS)) <= set(wide)
    assert free_registers(a.program, at, "s", count=2, limit=SGPRS)[0] == 44


@needs_kernel5
def test_raising_the_sgpr_count_for_a_new_register():
    """A pass that takes s[16:17] in kernel5's loops refreshes the counts: META001 is then clean and the
    kernel computes the same."""
    a = _analysis(KERNEL5)
    outer = a.cfg.find_loop(".LBB0_6")
    assert free_registers(a.program, a.loop_indices(outer), "s", count=2, limit=SGPRS)[0] == 16
    text = _clobber_at_loop_top(a, ".LBB0_6", ["s_mov_b64 s[16:17], -1"])
    refreshed = refresh_counts(text, str(KERNEL5), vgprs=1, sgprs=18)
    assert "\t\t.amdhsa_next_free_sgpr 18\n" in refreshed
    assert "    .sgpr_count:     20\n" in refreshed and "; NumSgprs: 20\n" in refreshed
    after = Analysis.from_source(parse_text(refreshed, str(KERNEL5)))
    assert not [d for d in check_analysis(after, ["META001"]) if d.severity == "error"]
    assert _equal(KERNEL5, a.program.source.render(), refreshed) is None


@needs_kernel5
def test_raise_counts_when_the_registers_cannot_all_be_seen():
    text = KERNEL5.read_text()
    raised = raise_counts(text, vgprs=100, sgprs=20)
    assert re.search(r"\.amdhsa_next_free_sgpr 20\n", raised)
    # kernel5's metadata and comments count VCC's 2 SGPRs on top of the descriptor's 16
    assert re.search(r"\.sgpr_count:\s+22\n", raised) and "; NumSgprs: 22\n" in raised
    assert f"; SGPRBlocks: {sgpr_blocks(22)}\n" in raised
    assert re.search(r"\.amdhsa_next_free_vgpr 208\n", raised)  # never lowered
    assert raise_counts(text, vgprs=1) == text


@pytest.mark.parametrize("name, declared, initialised, vcc", [
    ("gemm_naive.s", 16, 16, True),
    ("gmem_sgpr_base.s", 44, 16, True),
    ("gemm_lds_padded.hipcc.s", 16, 16, True),
])
def test_sgpr_budget_of_fixture_kernels(name, declared, initialised, vcc):
    a = _analysis(KERNELS / name)
    budget = sgpr_budget(a.program, a.program.kernels[0])
    assert (budget.declared, budget.initialised, budget.uses_vcc) == (declared, initialised, vcc)
    assert budget.limit == declared and budget.used <= declared


@needs_kernel5
def test_sgpr_budget_of_kernel5():
    a = _analysis(KERNEL5)
    budget = sgpr_budget(a.program, a.program.kernels[0])
    # 14 user SGPRs (kernel arguments preloaded) + workgroup ids x and y
    assert (budget.declared, budget.used, budget.initialised, budget.uses_vcc) == (16, 16, 16, True)
    assert budget.reserve_vcc is None and budget.hardware == 106


# --------------------------------------------------------------------------------------------
# Moves


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.integers(0, 11), min_size=1, max_size=12, unique=True), st.randoms(use_true_random=False))
def test_sequential_moves_perform_the_parallel_copy(regs, rnd):
    targets = list(regs)
    rnd.shuffle(targets)
    copy = dict(zip(targets, regs))  # a permutation of regs: cycles of every length
    temps = [t for t in range(16) if t not in regs]
    for file in ("v", "s"):
        seq = sequential_moves(copy, temps, file=file)
        state = {r: f"old{r}" for r in range(16)}
        for d, s in seq:
            state[d] = state[s]
        assert all(state[d] == f"old{s}" for d, s in copy.items())
        assert all(state[r] == f"old{r}" for r in regs if r not in copy)
        assert {d for d, _ in seq} <= set(copy) | set(temps[:1])


def test_sgpr_cycle_without_a_temporary_is_refused():
    with pytest.raises(FixRefused, match="no free SGPR to break a cycle of loop-counter moves"):
        sequential_moves({4: 5, 5: 4}, [4, 5], file="s", what="loop-counter moves")
    assert move_lines("\t", [(6, 4), (4, 5), (5, 6), (7, "0")], "s") == [
        "\ts_mov_b32 s6, s4", "\ts_mov_b32 s4, s5", "\ts_mov_b32 s5, s6", "\ts_mov_b32 s7, 0"]


# --------------------------------------------------------------------------------------------
# Labels and line edits


@needs_kernel5
def test_fresh_labels_avoid_every_name_in_the_file():
    a = _analysis(KERNEL5)
    labels = Labels(a.program)
    assert labels.fresh(".LBB0_9") == ".LBB0_9_2"
    assert labels.fresh(".Lfunc_end0") == ".Lfunc_end0_2"  # defined, and named by .size
    assert labels.fresh("kernel") == "kernel_2"  # the kernel's symbol
    assert labels.fresh(".Lisalint_edge") == ".Lisalint_edge"
    assert labels.fresh(".Lisalint_edge") == ".Lisalint_edge_2"  # given out once already
    assert labels.fresh(".LBB0") == ".LBB0"  # a prefix of a label is a different name


def test_edits_by_instruction_keep_every_other_byte():
    raw = (KERNELS / "gemm_naive.s").read_bytes().replace(b"\n", b"\r\n")
    program = Analysis.from_source(parse_text(raw.decode(), "crlf.s")).program
    loads = [ins.index for ins in program.instrs if ins.opcode.startswith("global_load")]
    edits = Edits(program)
    edits.insert_before(loads[0], ["\ts_nop 0"])
    edits.replace(loads[1], ["\ts_nop 1", "\ts_nop 2"])
    edits.delete(loads[2])
    edits.insert_after(loads[2], ["\ts_nop 3"])
    out = edits.render()
    assert "\n" not in out.replace("\r\n", "")
    at = {edits.line_of(i): k for k, i in enumerate(loads[:3])}
    expected = []
    for n, line in enumerate(program.source.lines):
        k = at.get(n)
        expected += {0: ["\ts_nop 0", line.text], 1: ["\ts_nop 1", "\ts_nop 2"], 2: ["\ts_nop 3"]}.get(k, [line.text])
    assert out.split("\r\n") == expected + [""]
    assert Edits(program).render() == raw.decode()


def test_rewritten_view_drops_and_adds_reads_in_every_register_file():
    # the first load of gmem_chained's loop reads its address v[137:138]; once the load takes it from
    # elsewhere, the pair and the VCC of the 64-bit add before it are dead, and the add with them
    from isalint.fixes.toolkit import rewritten_view
    from isalint.model.liveness import Liveness

    a = _analysis(KERNELS / "gmem_chained.s")
    prog = a.program
    load = next(i for i, ins in enumerate(prog.instrs) if ins.text() == "global_load_b32 v137, v[137:138], off")
    ci = next(i for i in range(load, 0, -1) if prog.instrs[i].text().startswith("v_add_co_ci_u32_e32 v138"))
    before = Liveness(prog)
    assert {"v137", "v138"} <= before.live_in(load) and "vcc_lo" in before.live_in(ci)
    view = rewritten_view(prog, set(), {load: {"v137", "v138"}})
    lv = Liveness(view)
    assert "v138" not in lv.live_in(load) and not (lv.def_mask[ci] & lv.live_out_mask(ci))
    removed = Liveness(rewritten_view(prog, {ci}, {load: {"v137", "v138"}}))
    assert "vcc_lo" not in removed.live_out(ci - 1)  # nothing reads the carry of the low add any more
    added = Liveness(rewritten_view(prog, set(), {load: {"v137", "v138"}}, {load: {"s40"}}))
    assert "s40" in added.live_in(load) and "s40" not in lv.live_in(load)
    assert prog.instrs[load].uses != view.instrs[load].uses  # the program itself is untouched


# --------------------------------------------------------------------------------------------
# Waits re-derived at the places the code waited


def _loop_without_lds_waits(path, label):
    """(analysis, loop, the loop body's Instr without its lgkmcnt waits, the slots they stood at,
    the waits they had in order)."""
    from isalint.fixes.toolkit import parse_lines
    from isalint.model.waitcnt import wait_thresholds

    analysis = _analysis(path)
    loop = analysis.cfg.find_loop(label)
    body = [analysis.program.instrs[i] for i in analysis.loop_indices(loop)]
    kept, slots, had = [], set(), []
    for ins in body:
        thr = wait_thresholds(ins) if ins.klass == "waitcnt" else None
        if thr and "lgkmcnt" in thr:
            slots.add(len(kept))
            had.append(thr["lgkmcnt"])
            continue
        kept.append(ins.line.text)
    return analysis, loop, parse_lines(kept), slots, had


def test_plan_at_slots_finds_the_compilers_waits_again():
    """gemm_lds_padded's inner loop: its 4 lgkmcnt waits, taken out and re-derived at their places,
    come back with the compiler's values."""
    from isalint.fixes.toolkit import plan_loop_at_slots, state_entering

    analysis, loop, seq, slots, had = _loop_without_lds_waits(KERNELS / "gemm_lds_padded.s", ".LBB0_9")
    waits, _ = plan_loop_at_slots(seq, slots, state_entering(analysis, loop), ("lgkmcnt",))
    assert sorted(waits) == sorted(slots)
    assert [waits[p]["lgkmcnt"] for p in sorted(waits)] == had == [3, 2, 1, 0]


def test_plan_at_slots_keeps_one_wait_where_the_code_had_one():
    """kernel6_style.s waits once for all 12 loads before its 64 FMAs: re-derived at that place it
    stays one lgkmcnt(0), where waiting as loosely as each FMA allows would take 8."""
    from isalint.fixes.toolkit import plan_loop_at_slots, state_entering
    from isalint.model.counters import plan_loop_waits

    analysis, loop, seq, slots, had = _loop_without_lds_waits(KERNELS / "kernel6_style" / "kernel6_style.s",
                                                              ".LBB0_1")
    entry = state_entering(analysis, loop)
    waits, _ = plan_loop_at_slots(seq, slots, entry, ("lgkmcnt",))
    assert had == [0] and waits == {min(slots): {"lgkmcnt": 0}}
    assert len(plan_loop_waits(seq, entry, counters=["lgkmcnt"])) == 8


def test_plan_at_slots_gives_a_later_load_its_own_wait():
    from isalint.fixes.toolkit import parse_lines, plan_at_slots
    from isalint.model.counters import CounterState

    seq = parse_lines(["\tds_load_b32 v1, v0", "\tds_load_b32 v2, v0 offset:4", "\tv_add_f32_e32 v3, v1, v1",
                       "\tds_load_b32 v4, v0 offset:8", "\tv_add_f32_e32 v5, v4, v4"])
    waits, after = plan_at_slots(seq, {2}, CounterState(), ("lgkmcnt",))
    # The slot before the first add serves it (v1: 1 load after it); v4 was issued after the slot.
    assert waits == {2: {"lgkmcnt": 1}, 4: {"lgkmcnt": 0}}
    assert not after.pending


def test_wait_to_cover_on_the_exit_of_kernel5s_loop(kernel5):
    from isalint.fixes.toolkit import state_leaving, wait_to_cover
    from isalint.model.counters import Event

    analysis = _analysis(kernel5)
    loop = analysis.cfg.find_loop(".LBB0_9")
    old = state_leaving(analysis, loop.latch)
    assert wait_to_cover(old, old) == {}
    new = old.copy()
    new.issue(10**6, Event("lgkmcnt", "lds", ("v7",)))
    new.issue(10**6 + 1, Event("lgkmcnt", "lds", ("v8",)))
    assert wait_to_cover(new, old) == {"lgkmcnt": 0}
    new.wait({"lgkmcnt": 1})
    assert new.entries("v7") == [] and wait_to_cover(new, old) == {"lgkmcnt": 0}
    new.wait({"lgkmcnt": 0})
    assert wait_to_cover(new, old) == {}


# A jump by a byte count from s_getpc_b64, as a disassembled code object has it (to the instruction
# after s_setpc_b64), placed after the kernel's s_endpgm.
_FAR_JUMP = "\ts_getpc_b64 s[0:1]\n\ts_add_u32 s0, s0, 12\n\ts_addc_u32 s1, s1, 0\n\ts_setpc_b64 s[0:1]\n"


def _rewriting_cases():
    """Each golden case of a code-changing pass that rewrites its input (the pass, its options, its input)."""
    from test_golden_fixes import CASES_DIR, expected_paths, read_case

    out = []
    for case in sorted(CASES_DIR.glob("*/*.run")):
        names, given, source = read_case(case)
        if names in (["metadata"],) or not expected_paths(case)[0].is_file():
            continue
        if case.parent.name in {c.parent.name for c in out}:
            continue  # one case per pass
        out.append(case)
    return out


@pytest.mark.parametrize("case", _rewriting_cases(), ids=lambda c: c.parent.name)
def test_every_pass_that_moves_code_refuses_a_numeric_pc_offset(case):
    """The case's input, which the pass rewrites, with a numeric-offset jump from s_getpc_b64 added: any
    instruction the pass adds, removes or changes may move the jump's target, so the pass refuses at
    the s_getpc_b64 line and the text is left as it was."""
    from test_golden_fixes import read_case

    from isalint.fixes.registry import option_values
    from isalint.fixes.toolkit.pipeline import run_passes

    names, given, source = read_case(case)
    text = source.read_text()
    end = text.rindex("\ts_endpgm\n") + len("\ts_endpgm\n")
    far = text[:end] + _FAR_JUMP + text[end:]
    getpc_line = far[:end].count("\n") + 1
    out = run_passes(Analysis.from_source(parse_text(far, "far.s")), names, option_values(given))
    assert out.refused is not None, f"--{names[0]} rewrote code that jumps by a numeric offset"
    assert out.refused[0] == names[0]
    assert out.refused[1].startswith(f"far.s:{getpc_line}: s_getpc_b64 with a numeric offset: "), out.refused[1]
    assert out.text == far
    # the same jump with its offset a label difference the assembler works out is no reason to refuse
    labelled = far.replace("\ts_add_u32 s0, s0, 12\n", "\ts_add_u32 s0, s0, (.Lafter_far-.Lafter_far)&4294967295\n") \
        .replace("\ts_setpc_b64 s[0:1]\n", "\ts_setpc_b64 s[0:1]\n.Lafter_far:\n", 1)
    out = run_passes(Analysis.from_source(parse_text(labelled, "far.s")), names, option_values(given))
    assert out.refused is None or "s_getpc_b64" not in out.refused[1], out.refused


def test_optimize_skips_a_pass_that_would_move_code_reached_by_a_numeric_pc_offset():
    from conftest import FIXTURES

    from isalint.commands.optimize import run_steps

    path = FIXTURES / "fixes" / "unroll" / "lds_walk_far.s"
    text = path.read_text()
    steps = run_steps(str(path), text, ["unroll", "tidy"], {"loop": ".LBB0_2", "factor": 2})
    assert [s.applied for s in steps] == [False, False]
    assert steps[0].note.startswith(f"skipped: {path}:15: s_getpc_b64 with a numeric offset: the rewrite of --unroll adds")
    assert all(s.text == text for s in steps)
