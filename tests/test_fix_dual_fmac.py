"""``isalint fix --dual-fmac`` on the worklog's kernel 5 and on the project's GEMM fixtures.

The acceptance of the pass: the rewritten inner loop has only ``v_dual_fmac_f32`` FMAs, all
legal VOPD pairs, 0 modeled bank stalls, each FMA waits only for the LDS loads it reads, at
most 216 VGPRs, no new DUAL/BANK/WAIT/META finding, it assembles with LLVM and the emulator
says it computes what the input computes. Fixtures the pass cannot prove safe are refused
with the reason, and nothing is written.
"""
from __future__ import annotations

import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from isalint.hw import vgpr_banks
from isalint.analysis import Analysis
from isalint.fixes import FixRefused
from isalint.fixes.dual_fmac import apply
from isalint.model import counters
from isalint.model.waitcnt import wait_thresholds
from isalint.parse.source import parse_text
from isalint.hw.vopd import check_pair

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "fixtures" / "kernels"
KERNEL5 = ROOT.parent / "shared" / "corpus" / "kernel5.s"
needs_kernel5 = pytest.mark.skipif(not KERNEL5.is_file(), reason="../shared/corpus/kernel5.s is not present")

# Every GEMM fixture: rewritten, or refused with this reason.
OUTCOMES = {
    "gemm_lds_padded.s": None,
    "gmem_chained.s": None,
    "gmem_sgpr_base.s": None,
    "gemm_register_tiled.s": None,  # 8 outer products per iteration (the k loop unrolled)
    "gemm_register_tiled.hipcc.s": None,
    "gemm_double_buffered.s": None,  # the FMA block is one block of a 4-block loop
    "gemm_lds_padded.hipcc.s": r":609: accumulator v92 is also used by 'scratch_store_b32 .*' \(spilled to scratch\)",
    "gemm_spill.s": None,  # the barrier the compiler hoisted among the FMAs moves after them
    "gemm_lds_tiled.s": r":69: FMA source v21 comes from 'ds_load_2addr_b32 v\[21:22\], v6 offset1:32'",
    "gemm_lds_tiled.wgp.s": r":70: FMA source v21 comes from 'ds_load_2addr_b32 v\[21:22\], v6 offset1:32'",
    "gemm_naive.s": r":55: FMA source v4 comes from 'global_load_b32 v4, v\[1:2\], off'",
    "kernel1_naive.s": r":59: FMA source v5 comes from 'global_load_b32 v5, v\[2:3\], off'",
    "kernel2_lds.s": r":69: FMA source v21 comes from 'ds_load_2addr_b32 v\[21:22\], v7 offset1:32'",
    "kernel3_reg_tiling.s": None,
    "kernel4_gmem_db.s": None,
    "gemm_wmma_f16.s": r":70: loop \.LBB0_5 has no fp32 FMA to rewrite",
    "lds_transpose_conflict.s": r"the kernel has no loop to rewrite",
    "lds_transpose_padded.s": r"the kernel has no loop to rewrite",
}


@lru_cache(maxsize=None)
def rewrite(path: str) -> tuple[str, str, str]:
    """(input text, output text, summary) of the pass on ``path``."""
    text = Path(path).read_text()
    result = apply(Analysis.from_path(path), {"loop": None})
    return text, result.text, result.summary


def loop_instrs(text: str, label: str):
    analysis = Analysis.from_source(parse_text(text, "out.s"))
    loop = analysis.cfg.find_loop(label)
    assert loop is not None
    return analysis, [analysis.program.instrs[i] for i in loop.indices(analysis.cfg)]


def hot_label(path: str) -> str:
    analysis = Analysis.from_path(path)
    return analysis.cfg.blocks[analysis.hot_loop.header].label


def check_loop(text: str, label: str) -> dict:
    """The acceptance facts of a rewritten loop; asserts the structural ones."""
    analysis, body = loop_instrs(text, label)
    singles = [i for i in body if not i.is_vopd and i.opcode.startswith(("v_fmac", "v_fma_"))]
    assert not singles, f"single FMAs left: {[i.text() for i in singles]}"
    duals = [i for i in body if i.is_vopd and any(s.mnemonic == "v_dual_fmac_f32" for s in i.stmts)]
    assert duals and all(s.mnemonic == "v_dual_fmac_f32" for i in duals for s in i.stmts)
    for ins in duals:
        errors = [v.message for v in check_pair(ins.stmts[0], ins.stmts[1]) if v.severity == "error"]
        assert not errors, f"line {ins.lineno}: {errors}"
    cfg = analysis.cfg
    fma_block = cfg.blocks[cfg.block_of[duals[0].index]]
    block = [analysis.program.instrs[i] for i in fma_block.indices()]
    sim = vgpr_banks.simulate(duals, loop=True)
    # Each wait before an FMA is exactly as loose as that FMA allows: it waits for the newest
    # load the FMA reads (LDS operations complete in order), no more.
    lds = []
    for n, ins in enumerate(block):
        if ins.klass == "lds":
            lds.append(ins)
        thr = wait_thresholds(ins) if ins.klass == "waitcnt" else None
        if thr and "lgkmcnt" in thr and block[n + 1] in duals:
            reads = set(block[n + 1].uses)
            newest = max(k for k, ld in enumerate(lds) if reads & set(ld.defs))
            assert thr["lgkmcnt"] == len(lds) - 1 - newest, f"line {ins.lineno}: {ins.text()}"
    return {"duals": len(duals), "stalls": sim.stall_cycles, "vopd": sum(1 for s in sim.valu_steps if s.op.is_vopd),
            "loads": sum(1 for i in block if i.opcode.startswith("ds_load")), "analysis": analysis}


def vgprs_declared(text: str) -> int:
    return int(re.search(r"\.amdhsa_next_free_vgpr\s+(\d+)", text).group(1))


def highest_vgpr(analysis) -> int:
    top = -1
    for ins in analysis.program.instrs:
        for r in list(ins.defs) + list(ins.uses):
            if r.startswith("v") and r[1:].isdigit():
                top = max(top, int(r[1:]))
    return top


def findings(text: str, prefixes=("DUAL", "BANK", "WAIT", "META")) -> list:
    from isalint.lint.engine import check_analysis
    from isalint.rules import available

    analysis = Analysis.from_source(parse_text(text, "k.s"))
    codes = [c for c in available() if c.startswith(prefixes)]
    return [d for d in check_analysis(analysis, codes) if d.code.startswith(prefixes)]


# --------------------------------------------------------------------------------------------
# kernel5.s -> kernel 6


@needs_kernel5
def test_kernel5_inner_loop_is_all_dual_and_conflict_free():
    original, text, summary = rewrite(str(KERNEL5))
    facts = check_loop(text, ".LBB0_9")
    assert facts["duals"] == 64 and facts["vopd"] == 64
    assert facts["stalls"] == 0
    assert facts["loads"] == 12  # 6 ds_load_b128 -> 12 ds_load_b64
    assert "ds_load_b128" not in "".join(i.text() for i in loop_instrs(text, ".LBB0_9")[1])
    assert vgprs_declared(text) <= 216
    assert highest_vgpr(facts["analysis"]) < vgprs_declared(text)
    assert re.search(r"\.vgpr_count:\s+%d\b" % vgprs_declared(text), text)
    assert re.search(r"modeled bank stalls +\d+ +0\n", summary), summary
    # The original loop does not meet the bar: the test would notice a no-op.
    _, before = loop_instrs(original, ".LBB0_9")
    assert any(not i.is_vopd and i.opcode.startswith("v_fmac") for i in before)


@needs_kernel5
def test_kernel5_output_keeps_the_epilogue_and_the_input():
    original, text, _ = rewrite(str(KERNEL5))
    assert KERNEL5.read_text() == original  # the pass returns text, it never writes
    # The epilogue (from .LBB0_13 on) is unchanged, so its global_store_b128 of 4
    # consecutive registers reads the accumulators the moves restored.
    assert text[text.index(".LBB0_13:"):text.index("s_endpgm")] == \
        original[original.index(".LBB0_13:"):original.index("s_endpgm")]


@needs_kernel5
def test_kernel5_has_no_new_findings():
    """No DUAL/BANK/WAIT/META finding in what the pass wrote; the compiler's code around it keeps
    the findings it had (the outer loop's address math, the epilogue)."""
    original, text, _ = rewrite(str(KERNEL5))
    old = {(d.code, _line(original, d.line)) for d in findings(original)}
    new = findings(text)
    introduced = [d for d in new if (d.code, _line(text, d.line)) not in old]
    assert not introduced, [(d.line, d.code, d.message) for d in introduced]
    analysis, body = loop_instrs(text, ".LBB0_9")
    lines = {i.lineno for i in body}
    assert not [d for d in new if d.line in lines]


def _line(text: str, n: int) -> str:
    return text.splitlines()[n - 1].strip()


@needs_kernel5
def test_kernel5_wait_counter_hazards_unchanged():
    original, text, _ = rewrite(str(KERNEL5))
    before = counters.analyze(Analysis.from_source(parse_text(original, "a.s")).program).hazards
    after = counters.analyze(Analysis.from_source(parse_text(text, "b.s")).program).hazards
    assert len(after) == len(before) == 0


def _toolchain_or_none():
    from isalint.validate.toolchain import ToolchainNotFound, find_toolchain

    try:
        return find_toolchain(need_linker=False)
    except ToolchainNotFound:
        return None


def _toolchain():
    from isalint.validate.toolchain import ToolchainNotFound, find_toolchain

    try:
        return find_toolchain(need_linker=False)
    except ToolchainNotFound as exc:
        pytest.skip(f"no gfx11 assembler: {exc}")


@needs_kernel5
def test_kernel5_cli_assembles_and_validates_equal(tmp_path):
    """The issue's command line, end to end: fix (validating), then `isalint validate`."""
    _toolchain()
    out = tmp_path / "k6.s"
    res = subprocess.run([sys.executable, "-m", "isalint", "fix", "--dual-fmac", str(KERNEL5), "-o", str(out)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    assert out.is_file()
    assert re.search(r"modeled bank stalls +\d+ +0\n", res.stderr), res.stderr
    res = subprocess.run([sys.executable, "-m", "isalint", "assemble", str(out), "-o", str(tmp_path / "k6.hsaco")],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    res = subprocess.run([sys.executable, "-m", "isalint", "validate", str(KERNEL5), str(out), "--gemm", "256"],
                         capture_output=True, text=True, timeout=900)
    if "No such command" in res.stderr:
        pytest.skip("isalint validate is not available yet")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "equal" in (res.stdout + res.stderr).lower()


# --------------------------------------------------------------------------------------------
# The fixtures: rewritten and validated, or refused with the reason


@pytest.mark.parametrize("name", sorted(OUTCOMES))
def test_fixture_outcome(name):
    path = str(KERNELS / name)
    expected = OUTCOMES[name]
    if expected is None:
        _, text, summary = rewrite(path)
        facts = check_loop(text, hot_label(path))
        assert facts["stalls"] == 0
        assert vgprs_declared(text) <= 256
        assert highest_vgpr(facts["analysis"]) < vgprs_declared(text)
        tc = _toolchain_or_none()
        if tc is not None:
            from isalint.validate.equivalence import assemble

            assert assemble(tc, path, text) == []
        return
    with pytest.raises(FixRefused) as exc:
        apply(Analysis.from_path(path), {"loop": None})
    assert re.search(expected, str(exc.value)), str(exc.value)


def test_every_fixture_kernel_has_an_expected_outcome():
    assert set(OUTCOMES) == {p.name for p in KERNELS.glob("*.s")}


@pytest.mark.parametrize("name", ["gemm_register_tiled.s", "gemm_double_buffered.s"])
def test_fixture_validates_in_the_emulator(name):
    _toolchain()
    from isalint.validate.equivalence import check_rewrite

    original, text, _ = rewrite(str(KERNELS / name))
    assert check_rewrite(str(KERNELS / name), original, text, gemm_n=128) is None


def test_refused_fixture_cli_writes_nothing(tmp_path):
    out = tmp_path / "out.s"
    res = subprocess.run([sys.executable, "-m", "isalint", "fix", "--dual-fmac", str(KERNELS / "gemm_lds_padded.hipcc.s"),
                          "-o", str(out)], capture_output=True, text=True, timeout=300)
    assert res.returncode == 1
    assert "refused" in res.stderr and "gemm_lds_padded.hipcc.s:609" in res.stderr
    assert "input left untouched" in res.stderr
    assert not out.exists()


@pytest.mark.slow
@needs_kernel5
def test_kernel5_naming_either_loop_gives_the_same_rewrite():
    """The FMA block is found from the inner loop or from the k loop around it."""
    _, text, _ = rewrite(str(KERNEL5))
    for label in (".LBB0_9", ".LBB0_6"):
        assert apply(Analysis.from_path(str(KERNEL5)), {"loop": label}).text == text


def test_named_loop_that_does_not_exist(tmp_path):
    res = subprocess.run([sys.executable, "-m", "isalint", "fix", "--dual-fmac", "--loop", ".LBB9_9",
                          str(KERNELS / "gemm_lds_padded.s"), "-o", str(tmp_path / "o.s")],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 1
    assert "no loop headed by label .LBB9_9" in res.stderr
