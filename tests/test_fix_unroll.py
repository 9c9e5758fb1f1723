"""``isalint fix --unroll`` on real kernels: the worklog's kernel 5 -> 6 -> 7 pipeline, the project's
compiler-made GEMM fixtures (dual-issued first or not), the hand-written kernel-6-style GEMM with
hints in its loop, and the loops it must refuse.

The acceptance of the pass: the inner loop is gone (no backward branch among the FMAs), every
FMA is still a VOPD with 0 modeled bank stalls where the input had 0, the address steps are
in the LDS offsets (no VALU add left), each wait is re-derived, the VGPR budget and metadata
hold, and the emulator finds the result bit-identical to the input.
"""
from __future__ import annotations

import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from isalint.hw.vgpr_banks import simulate
from isalint.analysis import Analysis
from isalint.model.alu_delays import pending_dependencies
from isalint.fixes import FixRefused
from isalint.fixes import dual_fmac, unroll
from isalint.fixes.unroll.hints import Dep, body_delays
from isalint.model.waitcnt import wait_thresholds
from isalint.parse.source import parse_text

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "fixtures" / "kernels"
SNIPPETS = ROOT / "fixtures" / "fixes" / "unroll"
HINTED = KERNELS / "kernel6_style" / "gemm_k6_hinted.s"
KERNEL5 = ROOT.parent / "shared" / "corpus" / "kernel5.s"
needs_kernel5 = pytest.mark.skipif(not KERNEL5.is_file(), reason="../shared/corpus/kernel5.s is not present")


@lru_cache(maxsize=None)
def dual_issued(path: str) -> str:
    """The output of --dual-fmac on ``path``."""
    return dual_fmac.apply(Analysis.from_path(path), {}).text


@lru_cache(maxsize=None)
def pipeline(path: str, dual: bool, factor: int | None = None, loop: str | None = None) -> tuple[str, str, str]:
    """(input text, output text, unroll summary) of [--dual-fmac then] --unroll on ``path``."""
    original = Path(path).read_text()
    analysis = Analysis.from_source(parse_text(dual_issued(path), path)) if dual else Analysis.from_path(path)
    result = unroll.apply(analysis, {"loop": loop, "factor": factor})
    return original, result.text, result.summary


def _toolchain():
    from isalint.validate.toolchain import ToolchainNotFound, find_toolchain

    try:
        return find_toolchain(need_linker=False)
    except ToolchainNotFound as exc:
        pytest.skip(f"no gfx11 assembler: {exc}")


def unrolled_region(text: str, label: str):
    """(analysis, instructions from the loop's label to the last FMA of the basic block there)."""
    analysis = Analysis.from_source(parse_text(text, "out.s"))
    program, cfg = analysis.program, analysis.cfg
    start = program.labels[label]
    block = cfg.blocks[cfg.block_of[start]]
    end = max(i for i in block.indices() if _is_fma(program.instrs[i]))
    return analysis, program.instrs[start:end + 1]


def _is_fma(ins) -> bool:
    return ins.klass in ("valu", "vopd") and any("fma" in s.mnemonic for s in ins.stmts)


def check_unrolled(text: str, label: str, copies: int) -> dict:
    """The acceptance facts of a fully unrolled GEMM loop; asserts the structural ones."""
    analysis, region = unrolled_region(text, label)
    assert analysis.cfg.find_loop(label) is None, f"{label} is still a loop"
    # No backward branch among the FMAs: no branch at all in the unrolled code.
    assert not [ins.text() for ins in region if ins.klass == "branch"]
    assert not [ins.text() for ins in region if ins.klass == "salu"], "loop control left in the copies"
    # The loop that holds the FMAs now is the outer loop, with no loop inside it.
    outer = analysis.cfg.loop_of(region[-1].index)
    assert outer is not None and not outer.children
    fmas = [ins for ins in region if _is_fma(ins)]
    # The address steps went into offsets: no VALU add is left (the hand-made kernel 7 kept two per copy).
    adds = [ins.text() for ins in region if ins.opcode.startswith("v_add_nc_u32")]
    assert not adds, adds
    sim = simulate(fmas, loop=True)
    lds = []
    for n, ins in enumerate(region):
        if ins.klass == "lds":
            lds.append(ins)
        thr = wait_thresholds(ins) if ins.klass == "waitcnt" else None
        if thr and "lgkmcnt" in thr and _is_fma(region[n + 1]):
            # Each wait is exactly as loose as the FMAs up to the next wait allow (LDS operations
            # complete in order): it waits for the newest load they read, no more.
            group = []
            for nxt in region[n + 1:]:
                if nxt.klass == "waitcnt":
                    break
                if _is_fma(nxt):
                    group.append(nxt)
            reads = set().union(*(set(g.uses) for g in group))
            newest = max(k for k, ld in enumerate(lds) if reads & set(ld.defs))
            assert thr["lgkmcnt"] == len(lds) - 1 - newest, f"line {ins.lineno}: {ins.text()}"
    return {"analysis": analysis, "region": region, "fmas": fmas, "stalls": sim.stall_cycles,
            "single": sum(1 for ins in fmas if not ins.is_vopd), "loads": len(lds),
            "waits": sum(1 for ins in region if ins.klass == "waitcnt")}


def delays_of(instrs) -> dict[int, list]:
    """{instruction index: the dependencies the s_delay_alu before it declare}."""
    return {instrs[0].index + pos: deps for pos, deps in body_delays(instrs).items()}


def vgprs_declared(text: str) -> int:
    return int(re.search(r"\.amdhsa_next_free_vgpr\s+(\d+)", text).group(1))


def highest_vgpr(analysis) -> int:
    return max(int(r[1:]) for ins in analysis.program.instrs for r in list(ins.defs) + list(ins.uses)
               if r.startswith("v") and r[1:].isdigit())


def meta_findings(analysis) -> list:
    from isalint.lint.engine import check_analysis

    return check_analysis(analysis, ["META001"])


# --------------------------------------------------------------------------------------------
# kernel5 -> --dual-fmac -> --unroll: the worklog's kernel 7


@needs_kernel5
def test_kernel5_pipeline_is_kernel7_without_its_adds():
    original, text, summary = pipeline(str(KERNEL5), dual=True)
    facts = check_unrolled(text, ".LBB0_9", 8)
    assert len(facts["fmas"]) == 8 * 64 and facts["single"] == 0  # 100% VOPD FMAs
    assert facts["stalls"] == 0
    assert facts["loads"] == 8 * 12
    assert facts["waits"] == 8 * 8
    assert vgprs_declared(text) <= 216
    assert highest_vgpr(facts["analysis"]) < vgprs_declared(text)
    assert not meta_findings(facts["analysis"])
    # The table: per k-step, the SALU/branch work of the loop is gone and 2 VALU adds with it.
    assert re.search(r"SALU\+branch per k-step +3\.0 +0\.0\n", summary), summary
    assert re.search(r"VALU per k-step +66\.0 +64\.0\n", summary), summary
    assert re.search(r"bank stalls per k-step +0\.0 +0\.0\n", summary), summary
    # The input does not meet the bar: the checks would notice a no-op.
    assert Analysis.from_source(parse_text(original, "k5.s")).cfg.find_loop(".LBB0_9") is not None


@pytest.mark.slow  # the fixture pipelines below run the same commands on the kernel-5-style fixture
@needs_kernel5
def test_kernel5_pipeline_on_the_command_line_validates_equal(tmp_path):
    """The issue's commands, end to end: fix --dual-fmac, fix --unroll (each validating before it
    writes), then isalint validate against kernel 5."""
    _toolchain()
    k6, k7 = tmp_path / "k6.s", tmp_path / "k7.s"
    for args in (["--dual-fmac", str(KERNEL5), "-o", str(k6)], ["--unroll", str(k6), "-o", str(k7)]):
        run = subprocess.run([sys.executable, "-m", "isalint", "fix", *args], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
    assert "unroll: loop .LBB0_9: 8 iterations (s14 from 0 by 512), fully unrolled" in run.stderr
    # the passes' own output, and besides, the s_delay_alu hints the command writes for their new code
    out = k7.read_text()

    def code(text: str) -> list[str]:
        return [ln for ln in text.splitlines() if not ln.strip().startswith("s_delay_alu")]

    assert code(out) == code(pipeline(str(KERNEL5), dual=True)[1])
    assert pending_dependencies(Analysis.from_source(parse_text(out, str(k7)))) == []
    run = subprocess.run([sys.executable, "-m", "isalint", "validate", str(KERNEL5), str(k7), "--gemm", "256"],
                         capture_output=True, text=True)
    assert run.returncode == 0 and "EQUAL" in run.stdout, run.stdout + run.stderr


# --------------------------------------------------------------------------------------------
# The project's compiler-made GEMMs


@pytest.mark.parametrize("name", ["gemm_lds_padded.s", "gmem_sgpr_base.s"])
def test_fixture_pipeline_unrolls_and_validates(name):
    path = str(KERNELS / name)
    original, text, _ = pipeline(path, dual=True)
    facts = check_unrolled(text, ".LBB0_9", 8)
    assert len(facts["fmas"]) == 8 * 64 and facts["single"] == 0 and facts["stalls"] == 0
    assert vgprs_declared(text) <= 216 and highest_vgpr(facts["analysis"]) < vgprs_declared(text)
    assert not meta_findings(facts["analysis"])
    _toolchain()
    from isalint.validate.equivalence import check_rewrite

    assert check_rewrite(path, original, text, gemm_n=256) is None


def test_report_of_the_unrolled_kernel_counts_per_k_step(tmp_path):
    """After a full unroll the hot loop is the outer loop, 8 k-steps per iteration: its instructions
    are the input's outer loop as it ran (the inner body 8 times) less the 5 loop-control
    instructions (compare, branch, counter add, 2 address adds) of each k-step."""
    from isalint.model.loop_stats import loop_summary

    path = str(KERNELS / "gemm_lds_padded.s")
    k6 = Analysis.from_source(parse_text(dual_issued(path), path))
    outer6 = loop_summary(k6, k6.cfg.find_loop(".LBB0_6"))
    inner6 = loop_summary(k6, k6.cfg.find_loop(".LBB0_9"))
    assert outer6["k_steps"] is None  # it holds the inner loop: no per-iteration figure
    assert inner6["k_steps"] == 1 and inner6["per_k_step"]["salu_branch"] == 3
    k7 = Analysis.from_source(parse_text(pipeline(path, dual=True)[1], path))
    s = loop_summary(k7, k7.hot_loop)
    assert s["loop"] == ".LBB0_6" and s["k_steps"] == 8
    assert s["instructions"] == outer6["instructions"] + 7 * inner6["instructions"] - 8 * 5
    assert s["per_k_step"]["instructions"] == round(s["instructions"] / 8, 2)
    out = tmp_path / "k7.s"
    out.write_text(pipeline(path, dual=True)[1])
    run = subprocess.run([sys.executable, "-m", "isalint", "report", "--no-color", str(out)], capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
    assert "k-steps               8 per iteration (128 FMAs each, one per accumulator)" in run.stdout
    per = s["per_k_step"]
    assert f"per k-step            {per['instructions']:g} instructions ({per['valu']:g} VALU," in run.stdout


def test_compiler_output_never_dual_issued_unrolls_and_validates():
    """gmem_chained.s as clang-19 wrote it: ds_load_b128, mostly VOPD with 4 single FMAs per k-step."""
    path = str(KERNELS / "gmem_chained.s")
    original, text, summary = pipeline(path, dual=False)
    facts = check_unrolled(text, ".LBB0_9", 8)
    assert len(facts["fmas"]) == 8 * 66 and facts["single"] == 8 * 4  # the compiler's schedule, copied
    assert facts["loads"] == 8 * 6
    # The loop's own bank stalls per k-step are the copies' (the schedule is not touched).
    before, after = re.search(r"bank stalls per k-step +([\d.]+) +([\d.]+)", summary).groups()
    assert float(before) > 0 and float(after) <= float(before)
    _toolchain()
    from isalint.validate.equivalence import check_rewrite

    assert check_rewrite(path, original, text, gemm_n=256) is None


# --------------------------------------------------------------------------------------------
# Hand-written kernel-6-style input with s_clause, s_setprio and s_delay_alu in the loop


def test_hinted_loop_keeps_its_clauses_and_priorities():
    original, text, summary = pipeline(str(HINTED), dual=False)
    facts = check_unrolled(text, ".LBB0_9", 8)
    region = facts["region"]
    texts = [ins.text() for ins in region]
    # Each copy: a clause over its 4 A loads and one over its 8 B loads, the loads right after.
    for n, t in enumerate(texts):
        if t.startswith("s_clause"):
            length = int(t.split()[1], 0) + 1
            assert all(x.startswith("ds_load") for x in texts[n + 1:n + 1 + length]), texts[n:n + 1 + length]
    assert [t for t in texts if t.startswith("s_clause")] == ["s_clause 0x3", "s_clause 0x7"] * 8
    # (the region ends at the last FMA, before the last copy's s_setprio 0)
    assert [t for t in texts if t.startswith("s_setprio")] == ["s_setprio 1", "s_setprio 0"] * 7 + ["s_setprio 1"]
    # The induction variable's add and the SALU -> VALU delay that served it are gone with it.
    assert not [t for t in texts if t.startswith(("s_delay_alu", "s_addk", "s_cmp"))]
    # The induction variable started at -512 and was stepped before use: the B loads of copy k
    # read at 512 k, with no add.
    b_loads = [t for t in texts if t.startswith("ds_load_b64 v[124:125]")]
    assert b_loads == ["ds_load_b64 v[124:125], v143"] + [f"ds_load_b64 v[124:125], v143 offset:{512 * k}"
                                                          for k in range(1, 8)]
    assert facts["stalls"] == 0 and facts["single"] == 0
    assert "(s13 from -512 by 512)" in summary
    _toolchain()
    from isalint.validate.equivalence import check_rewrite

    assert check_rewrite(str(HINTED), original, text, gemm_n=256) is None


# --------------------------------------------------------------------------------------------
# Offsets without room, values live after the loop, s_delay_alu across a removed add, --factor

WALK = SNIPPETS / "lds_walk.s"
WALK_LAUNCH = ["--grid", "1", "--block", "32", "--arg", "out=zeros:512"]


def _validate_walk(tmp_path, text: str) -> subprocess.CompletedProcess:
    _toolchain()
    cand = tmp_path / "walk.s"
    cand.write_text(text)
    return subprocess.run([sys.executable, "-m", "isalint", "validate", str(WALK), str(cand), *WALK_LAUNCH],
                          capture_output=True, text=True)


def test_offsets_without_room_keep_an_add_and_exit_values_are_right(tmp_path):
    _, text, summary = pipeline(str(WALK), dual=False, loop=".LBB0_2")
    body = text[text.index(".LBB0_2:"):text.index("global_store_b32")]
    # v3 walks down 256 bytes per copy from offset:1024: the unsigned offset has room for copies
    # 1-5 (1024, 768, 512, 256, 0), then one add rebases it; v8's 2addr offsets (in dwords) fold
    # in every copy. Both are brought up to date once after the loop, where they are stored.
    offsets = re.findall(r"ds_load_b32 v4, v3(?: offset:(\d+))?", body)
    assert [int(o or 0) for o in offsets] == [1024, 768, 512, 256, 0, 1024, 768, 512]
    assert re.findall(r"v_add_nc_u32 v3, (\S+), v3", body) == ["0xfffffb00", "0xfffffd00"]
    assert re.findall(r"ds_load_2addr_b32 v\[5:6\], v8 (.*)", body) == \
        ["offset1:9"] + [f"offset0:{16 * k} offset1:{16 * k + 9}" for k in range(1, 8)]
    assert re.findall(r"v_add_nc_u32 v8, (\S+), v8", body) == ["0x200"]
    # The code after the loop reads the SCC its last compare left (s2 <= 0: 1); it is set again.
    assert "\tv_add_nc_u32 v3, 0xfffffd00, v3\n\ts_cmp_eq_u32 0, 0\n\ts_delay_alu" in body
    # The FMA's s_delay_alu pointed 2 VALU back, across the add of v8 that is gone: now 1 back
    # (two consecutive copies' delays share one s_delay_alu, as the compiler writes them).
    instrs = Analysis.from_source(parse_text(text, "walk.s")).program.instrs
    deps = delays_of(instrs)
    fmacs = [i for i, ins in enumerate(instrs) if ins.opcode == "v_fmac_f32_e32"]
    assert len(fmacs) == 8 and all(deps.get(i) == [Dep("valu", 1)] for i in fmacs), deps
    # After the loop, v_mul_f32 read the last FMA 1 back; the two adds placed on exit make it 3.
    mul = next(i for i, ins in enumerate(instrs) if ins.opcode == "v_mul_f32_e32")
    assert deps == {**{i: [Dep("valu", 1)] for i in fmacs}, mul: [Dep("valu", 3)]}, deps
    assert "removed: 8 compares and branches, 8 SALU and 16 VALU adds; 13 LDS instructions re-addressed" in summary
    assert "kept: 3 moves/adds" in summary, summary
    run = _validate_walk(tmp_path, text)
    assert run.returncode == 0 and "EQUAL" in run.stdout, run.stdout + run.stderr
    # The comparison sees a wrong offset, or the SCC left unset: each breaks the equality.
    for old, new in (("ds_load_b32 v4, v3 offset:768", "ds_load_b32 v4, v3 offset:772"),
                     ("\ts_cmp_eq_u32 0, 0\n", "")):
        run = _validate_walk(tmp_path, text.replace(old, new, 1))
        assert run.returncode == 1 and "DIFFERENT" in run.stdout, run.stdout + run.stderr


@pytest.mark.parametrize("factor", [2, 4])
def test_factor_keeps_a_shorter_loop(tmp_path, factor):
    _, text, summary = pipeline(str(WALK), dual=False, factor=factor, loop=".LBB0_2")
    analysis = Analysis.from_source(parse_text(text, "walk.s"))
    loop = analysis.cfg.find_loop(".LBB0_2")
    assert loop is not None
    body = [analysis.program.instrs[i].text() for i in loop.indices(analysis.cfg)]
    # One step of the counter per pass, by `factor`, and the compare it feeds.
    salu = [analysis.program.instrs[i] for i in loop.indices(analysis.cfg)]
    assert [ins.text() for ins in salu if ins.klass in ("salu", "branch")] == \
        ["s_add_i32 s2, s2, %d" % -factor, "s_cmp_le_i32 s2, 0", "s_cbranch_scc0 .LBB0_2"]
    assert sum(1 for t in body if t.startswith("v_fmac")) == factor
    assert f"a loop of {8 // factor} iterations" in summary
    run = _validate_walk(tmp_path, text)
    assert run.returncode == 0 and "EQUAL" in run.stdout, run.stdout + run.stderr


# --------------------------------------------------------------------------------------------
# Refusals: the line and the reason, exit 1, the input byte-identical


REFUSALS = [
    (KERNELS / "gemm_register_tiled.s", [],
     r"gemm_register_tiled\.s:11: s4 \(the bound of 's_cmp_lt_i32 s12, s4'\) enters loop \.LBB0_5 with the value "
     r"of 's_load_b128 s\[4:7\], s\[0:1\], 0x18', not a constant; the trip count cannot be proven"),
    (KERNELS / "gemm_naive.s", [],
     r"gemm_naive\.s:33: s2 enters loop \.LBB0_3 with the value of 's_mov_b32 s2, s4', not a constant"),
    (SNIPPETS / "loop_call.s", [],
     r"loop_call\.s:14: loop \.LBB0_1 makes a call \('s_swappc_b64 s\[30:31\], s\[4:5\]'\)"),
    (SNIPPETS / "loop_early_exit.s", [],
     r"loop_early_exit\.s:12: loop \.LBB0_1 has 2 basic blocks \('s_cbranch_vccnz \.LBB0_2' branches inside it\)"),
    (KERNELS / "kernel6_style" / "kernel6_style.s", [],
     r"kernel6_style\.s:156: 64 copies of loop \.LBB0_1 take about 38 KiB of code, more than half of the 32 KiB "
     r"instruction cache; try --factor 16"),
    (KERNELS / "kernel6_style" / "kernel6_style.s", ["--factor", "3"],
     r"kernel6_style\.s:156: loop \.LBB0_1 runs 64 times; --factor must divide that: 2, 4, 8, 16, 32, 64"),
    (KERNELS / "gemm_lds_padded.s", ["--loop", ".LBB0_6"],
     r"gemm_lds_padded\.s:\d+: loop \.LBB0_6 contains the loop \.LBB0_9; unroll the inner loop first"),
]


@pytest.mark.parametrize("path,extra,reason", REFUSALS, ids=lambda v: getattr(v, "name", None))
def test_refusals_name_the_line_and_leave_the_input_untouched(tmp_path, path, extra, reason):
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    out = tmp_path / "out.s"
    run = subprocess.run([sys.executable, "-m", "isalint", "fix", "--unroll", str(copy), "-o", str(out), *extra],
                         capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    first = run.stderr.splitlines()[0]
    assert first.startswith("isalint: fix --unroll refused: ") and re.search(reason, first), first
    assert "Traceback" not in run.stderr
    assert copy.read_bytes() == path.read_bytes() and not out.exists()


def test_refusal_through_the_api_is_a_fix_refused():
    with pytest.raises(FixRefused, match="not a constant"):
        unroll.apply(Analysis.from_path(str(KERNELS / "gemm_lds_tiled.s")), {})


def test_factor_without_unroll_is_a_usage_error(tmp_path):
    run = subprocess.run([sys.executable, "-m", "isalint", "fix", "--metadata", "--factor", "2",
                          str(WALK), "-o", str(tmp_path / "x.s")], capture_output=True, text=True)
    assert run.returncode == 2 and run.stderr.strip() == "isalint: --factor goes with --unroll"


def test_loop_that_changes_exec_is_refused():
    """An address step deferred past an EXEC change would reach other lanes than the step it replaces."""
    text = (WALK.read_text()
            .replace("\ts_add_i32 s2, s2, -1\n", "\ts_add_i32 s2, s2, -1\n\ts_and_b32 exec_lo, exec_lo, 0xffff\n"))
    analysis = Analysis.from_source(parse_text(text, "exec.s"))
    with pytest.raises(FixRefused, match=r"exec\.s:\d+: loop \.LBB0_2 changes EXEC \('s_and_b32 exec_lo"):
        unroll.apply(analysis, {"loop": ".LBB0_2"})


def _walk_with_bound_in(reg_setup: str, body_extra: str = "") -> Analysis:
    text = (WALK.read_text()
            .replace("\ts_mov_b32 s2, 8\n", "\ts_mov_b32 s2, 8\n" + reg_setup)
            .replace("\ts_cmp_le_i32 s2, 0\n", body_extra + "\ts_cmp_le_i32 s2, s5\n"))
    return Analysis.from_source(parse_text(text, "bound.s"))


def test_a_bound_in_an_sgpr_set_to_a_constant_is_proven():
    result = unroll.apply(_walk_with_bound_in("\ts_mov_b32 s5, 0\n"), {"loop": ".LBB0_2"})
    assert result.summary.startswith("unroll: loop .LBB0_2: 8 iterations (s2 from 8 by -1), fully unrolled")
    body = result.text[result.text.index(".LBB0_2:"):result.text.index("global_store_b32")]
    assert "s_cmp_le_i32" not in body and body.count("v_fmac_f32") == 8


def test_a_bound_the_loop_changes_is_refused():
    with pytest.raises(FixRefused, match=r"bound\.s:\d+: 's_cmp_le_i32 s2, s5' compares s2 with s5, which the loop "
                                         r"changes"):
        unroll.apply(_walk_with_bound_in("\ts_mov_b32 s5, 0\n", "\ts_add_i32 s5, s5, 1\n"), {"loop": ".LBB0_2"})
