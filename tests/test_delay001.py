"""DELAY001 and ``fix --delay-alu``: ALU dependencies no ``s_delay_alu`` names.

The oracle is the compiler: clang writes an ``s_delay_alu`` before every ALU instruction that needs
one (LLVM's AMDGPUInsertDelayAlu). So a kernel clang compiled has nothing to report, and the same
kernel with its hints removed has a finding at exactly the instructions clang gave a hint.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import KERNEL5, KERNELS, assembler_or_skip
from isalint.analysis import Analysis
from isalint.lint.engine import check_analysis
from isalint.estimate import estimate
from isalint.fixes import delay_alu
from isalint.model.alu_delays import decode, pending_dependencies
from isalint.parse.source import parse_text
from isalint.validate.gemm import geometry

# every .s clang 19 (or ROCm's clang, for kernel5.s) wrote; the .hipcc.s files come from clang 15,
# whose hints predate VOPD-aware counting and are checked separately
COMPILED = sorted(p for p in KERNELS.glob("*.s") if not p.name.endswith(".hipcc.s"))


def _analysis(text: str, path: str = "k.s") -> Analysis:
    return Analysis.from_source(parse_text(text, path))


# GEMM-like kernels compiled by clang 19 only to be the oracle of this rule: 64-bit index math (VOP3b
# carries), branches, calls, FP64, transcendental and packed FP16 code
DELAY_CORPUS = KERNELS.parent / "delay_corpus"


def _compiled():
    out = list(COMPILED) + sorted(DELAY_CORPUS.glob("*.s"))
    if KERNEL5.is_file():
        out.append(KERNEL5)
    return out


def _hinted_lines(analysis) -> set[int]:
    """Source lines of the instructions an s_delay_alu names (any ALU wait)."""
    instrs = analysis.program.instrs
    out = set()
    for i, ins in enumerate(instrs):
        if ins.opcode != "s_delay_alu":
            continue
        real = [j for j in range(i + 1, len(instrs)) if instrs[j].opcode != "s_delay_alu"]
        for offset, dep in decode(ins):
            if dep.kind in ("valu", "trans", "salu") and offset <= len(real):
                out.add(instrs[real[offset - 1]].lineno)
    return out


def _strip(text: str) -> tuple[str, dict[int, int]]:
    """The text without its s_delay_alu lines, and {new line number: old line number}."""
    kept, old_of = [], {}
    for n, line in enumerate(text.split("\n"), 1):
        if line.strip().startswith("s_delay_alu"):
            continue
        kept.append(line)
        old_of[len(kept)] = n
    return "\n".join(kept), old_of


@pytest.mark.parametrize("path", _compiled(), ids=lambda p: p.name)
def test_compiled_kernels_have_nothing_to_report(path):
    analysis = _analysis(path.read_text(), str(path))
    assert pending_dependencies(analysis) == []
    assert list(check_analysis(analysis, ["DELAY001"])) == []


@pytest.mark.parametrize("path", _compiled(), ids=lambda p: p.name)
def test_without_its_hints_a_kernel_is_reported_where_the_compiler_hinted(path):
    text = path.read_text()
    hinted = _hinted_lines(_analysis(text, str(path)))
    assert hinted, "the compiler wrote no hint: the test would prove nothing"
    stripped, old_of = _strip(text)
    analysis = _analysis(stripped, str(path))
    found = {old_of[analysis.program.instrs[p.consumer].lineno] for p in pending_dependencies(analysis)}
    assert found == hinted


def test_clang15_builds_lack_hints_clang19_writes():
    # the .hipcc.s fixtures (clang 15) miss hints the analysis asks for and clang 19 writes, such as a
    # VOPD's accumulator read four VALU instructions after a move wrote it
    analysis = _analysis((KERNELS / "gemm_lds_padded.hipcc.s").read_text())
    lines = {analysis.program.instrs[p.consumer].lineno: p for p in pending_dependencies(analysis)}
    assert 841 in lines
    p = lines[841]
    assert (p.need.name, p.reg, analysis.program.instrs[p.producer].lineno) == ("VALU_DEP_4", "v53", 837)


def test_fix_writes_the_missing_hints_and_keeps_what_the_compiler_wrote():
    path = KERNELS / "kernel3_reg_tiling.s"
    text = path.read_text()
    stripped, _ = _strip(text)
    before = _analysis(stripped, str(path))
    assert pending_dependencies(before)
    fixed = delay_alu.apply(before, {})
    after = _analysis(fixed.text, str(path))
    assert pending_dependencies(after) == []
    assert _strip(fixed.text)[0] == stripped  # only hint lines were added
    assert fixed.summary.startswith("delay-alu: ")
    # nothing to do on the compiler's own output: the same bytes
    same = delay_alu.apply(_analysis(text, str(path)), {})
    assert same.text == text and "already" in same.summary


def test_hints_change_the_estimate_as_the_front_end_would():
    # without hints, every dependent ALU instruction stalls the SIMD; the compiler's hints let other
    # waves issue meanwhile
    path = KERNELS / "kernel2_lds.s"
    geo = geometry(str(path), 1024)
    text = path.read_text()
    with_hints = estimate(_analysis(text, str(path)).program, 1024, geo.grid, geo.block, abi=geo.abi)
    without = estimate(_analysis(_strip(text)[0], str(path)).program, 1024, geo.grid, geo.block, abi=geo.abi)
    assert without.predicted_ms > 1.1 * with_hints.predicted_ms
    # and it says where the time went
    assert with_hints.causes["unhinted"] == 0
    assert without.fractions()["unhinted"] > 0.1
    refixed = delay_alu.apply(_analysis(_strip(text)[0], str(path)), {}).text
    again = estimate(_analysis(refixed, str(path)).program, 1024, geo.grid, geo.block, abi=geo.abi)
    assert again.predicted_ms == pytest.approx(with_hints.predicted_ms, rel=0.02)


def test_cli_fix_delay_alu_validates_and_check_is_then_clean(tmp_path):
    assembler_or_skip()
    src = tmp_path / "gemm_lds_padded.s"
    src.write_text(_strip((KERNELS / "gemm_lds_padded.s").read_text())[0])
    (tmp_path / "kernels.json").write_text((KERNELS / "kernels.json").read_text())
    out = tmp_path / "fixed.s"
    proc = subprocess.run([sys.executable, "-m", "isalint", "check", "--select", "DELAY001", str(src)],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "DELAY001 warning" in proc.stdout and "fix: isalint fix --delay-alu" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "isalint", "fix", "--delay-alu", "-o", str(out), str(src)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "validated" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "isalint", "check", "--select", "DELAY001", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


@pytest.mark.parametrize("seed", range(12))
def test_fix_leaves_no_missing_hint_after_random_hand_edits(seed):
    """Hand edits as kernel engineers make them - instructions swapped, duplicated, hints dropped - and
    then ``fix --delay-alu``: nothing is missing afterwards, and only hint lines changed."""
    import random

    rng = random.Random(seed)
    path = rng.choice(COMPILED)
    lines = path.read_text().split("\n")
    code = [n for n, ln in enumerate(lines) if ln.startswith("\t") and ln.strip()[:2] in ("v_", "s_")
            and not ln.strip().startswith(("s_cbranch", "s_branch", "s_endpgm", "s_setpc"))]
    for _ in range(40):
        n = rng.choice(code)
        action = rng.random()
        if action < 0.4 and n + 1 in code:
            lines[n], lines[n + 1] = lines[n + 1], lines[n]
        elif action < 0.7:
            lines[n] = lines[n] + "\n" + lines[n]  # a duplicated instruction
        elif lines[n].strip().startswith("s_delay_alu"):
            lines[n] = ""
    text = "\n".join(lines)
    fixed = delay_alu.apply(_analysis(text, str(path)), {}).text
    after = _analysis(fixed, str(path))
    assert pending_dependencies(after) == []
    assert _strip(fixed)[0] == _strip(text)[0]


def test_a_hints_only_rewrite_is_validated_by_its_machine_code():
    assembler_or_skip()
    from isalint.fixes.toolkit.pipeline import validate

    path = KERNELS / "kernel3_reg_tiling.s"
    text = path.read_text()
    stripped = _strip(text)[0]
    hinted = delay_alu.apply(_analysis(stripped, str(path)), {}).text
    assert validate(str(path), stripped, hinted, 256, hints_only=True) is None
    # a change beyond the hints is caught, and so is a hint the assembler refuses
    changed = hinted.replace("v_add_nc_u32_e32", "v_sub_nc_u32_e32", 1)
    assert "beyond s_delay_alu hints" in validate(str(path), stripped, changed, 256, hints_only=True)
    broken = hinted.replace("instid0(VALU_DEP_1)", "instid0(VALU_DEP_9)", 1)
    assert "does not assemble" in validate(str(path), stripped, broken, 256, hints_only=True)


def test_the_worklog_style_fixed_size_kernel_gets_its_hints_without_emulation(tmp_path):
    """A kernel that only runs at one size (its bases built for N = 4096) cannot be emulated at 256, yet
    its hints can be written and proven: the check is on machine code."""
    assembler_or_skip()
    src = tmp_path / "k.s"
    stripped = _strip((KERNELS / "gemm_lds_padded.s").read_text())[0]
    src.write_text(stripped)
    out = tmp_path / "out.s"
    proc = subprocess.run([sys.executable, "-m", "isalint", "fix", "--delay-alu", "--gemm", "100000", "-o", str(out),
                           str(src)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "without its s_delay_alu hints is the input's machine code byte for byte" in proc.stderr


def test_a_loop_with_many_findings_is_named_once(monkeypatch):
    """Aggregating thousands of sites of one loop names the loop once (naming walks the loop: once
    per site was quadratic, minutes on a loop of 20,000 back edges)."""
    import sys as _sys

    _sys.path.insert(0, str(KERNELS.parent.parent / "benchmarks"))
    import shapes

    from isalint.rules import cost

    made = []
    real = cost._make_region
    monkeypatch.setattr(cost, "_make_region", lambda *a: made.append(a) or real(*a))
    analysis = _analysis(shapes.back_edges(2000))
    found = list(check_analysis(analysis, ["DELAY001"]))
    assert len(found) == 1 and len(found[0].sites) == 2000
    assert 1 <= len(made) <= 2


@pytest.mark.slow
@pytest.mark.parametrize("source", sorted(DELAY_CORPUS.glob("*.hip")), ids=lambda p: p.name)
def test_clang19_rebuilds_of_the_corpus_agree_hint_for_hint(source, tmp_path):
    """The corpus compiled again by the clang 19 on this machine: its hints and the rule agree."""
    import shutil

    if shutil.which("clang-19") is None:
        pytest.skip("clang-19 is not installed")
    out = tmp_path / (source.stem + ".s")
    proc = subprocess.run(["clang-19", "-x", "hip", "--offload-arch=gfx1100", "--cuda-device-only", "-nogpulib", "-S",
                           "-O3", "-I/usr/include", f"-I{DELAY_CORPUS}", str(source), "-o", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert pending_dependencies(_analysis(text, str(out))) == []
    hinted = _hinted_lines(_analysis(text, str(out)))
    stripped, old_of = _strip(text)
    analysis = _analysis(stripped, str(out))
    assert {old_of[analysis.program.instrs[p.consumer].lineno] for p in pending_dependencies(analysis)} == hinted


def test_fix_refuses_code_that_branches_by_a_numeric_pc_offset():
    """A disassembled code object reaches its far labels by a byte count from s_getpc_b64: every hint
    written before the target would move it, and the machine-code check (the output without its hints
    is the input) cannot see that, so the pass refuses; a label difference the assembler works out is
    fine."""
    from isalint.fixes import FixRefused

    body = ("\t.text\n\t.amdgcn_target \"amdgcn-amd-amdhsa--gfx1100\"\nk:\n"
            "\tv_lshrrev_b32_e32 v1, 3, v0\n\tv_lshlrev_b32_e32 v1, 12, v1\n"
            "\ts_getpc_b64 s[66:67]\n{add}\n\ts_addc_u32 s67, s67, 0\n\ts_setpc_b64 s[66:67]\n"
            ".Lfar:\n\ts_endpgm\n")
    numeric = body.replace("{add}", "\ts_add_i32 s68, 0x10, 4\n\ts_add_u32 s66, s66, s68")
    with pytest.raises(FixRefused, match=":6: s_getpc_b64 with a numeric offset"):
        delay_alu.apply(_analysis(numeric), {})
    labelled = body.replace("{add}", ".Lpost:\n\ts_add_u32 s66, s66, (.Lfar-.Lpost)&4294967295")
    fixed = delay_alu.apply(_analysis(labelled), {}).text
    assert "s_delay_alu instid0(VALU_DEP_1)\n\tv_lshlrev_b32_e32 v1, 12, v1" in fixed


def test_a_finding_says_its_share_of_the_iteration_and_how_sure_it_is():
    from conftest import SNIPPETS

    path = SNIPPETS / "delay001" / "severity.s"
    found = {d.severity: d for d in check_analysis(_analysis(path.read_text(), str(path)), ["DELAY001"])}
    main, tail = found["warning"], found["info"]
    # the main loop: 4 cycles against its 21 issue cycles, hot by its weight, its trip count assumed
    assert (main.cost["cycles_per_execution"], main.cost["loop_issue_cycles"]) == (4, 21)
    assert main.cost["loop_share"] == round(4 / 25, 4) and main.cost["hot"] and main.cost["confidence"] == "medium"
    assert "(16% of an iteration's 25 cycles)" in main.message
    # the remainder loop loses two thirds of its iterations, but nothing shows it runs often
    assert tail.cost["loop_share"] == round(10 / 15, 4) and not tail.cost["hot"] and tail.cost["confidence"] == "low"
    assert any("not shown to be hot" in n for n in tail.notes)
