"""``isalint fix --batch-gmem`` on the worklog's kernel 5, on ``fix --dual-fmac``'s kernel 6 and on the
compiler-made fixtures with the kernel-7 address chains.

Acceptance: every global load of the outer loop takes an SGPR base and a VGPR offset, the address
chains are gone, GMEM001/META001/WAIT001 are clean, at most 106 SGPRs and no more VGPRs than the
input, the output assembles and computes bit for bit what the input computes at N = 256 and 384
(the strides depend on N). Refusals leave the input untouched and say why, with the line.
"""
from __future__ import annotations

import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest
from conftest import KERNEL5, KERNELS, assembler_or_skip

from isalint.analysis import Analysis
from isalint.model.alu_delays import pending_dependencies
from isalint.lint.engine import check_analysis
from isalint.fixes import FixRefused
from isalint.fixes import batch_gmem
from isalint.parse.source import parse_text, read_file

MAX_N = 32768
SIZES = (256, 384)
# the largest N whose offsets fit, per input (kernel5 and its rewrites: MAX_N); the double-buffered
# kernel's counter is bounded one step later (its compare precedes the increment), so its limit is lower
LIMITS = {"gemm_register_tiled.s": 32767, "gemm_double_buffered.s": 32763, "kernel3_reg_tiling.s": 32764,
          "kernel4_gmem_db.s": 32767, "gemm_register_tiled.hipcc.s": 32767}


@lru_cache(maxsize=None)
def source_of(name: str) -> tuple[str, str]:
    """(path reported, text) of an input: a fixture, kernel5, kernel5 after fix --dual-fmac (kernel6),
    and that after fix --unroll (kernel7) when the unroll pass is part of this installation."""
    if name in ("kernel5", "kernel6", "kernel7"):
        if not KERNEL5.is_file():
            pytest.skip("../shared/corpus/kernel5.s is not present beside this checkout")
        text = KERNEL5.read_text()
        if name in ("kernel6", "kernel7"):
            from isalint.fixes import dual_fmac

            text = dual_fmac.apply(Analysis.from_path(str(KERNEL5)), {"loop": None}).text
        if name == "kernel7":
            unroll = pytest.importorskip("isalint.fixes.unroll", reason="fix --unroll is not in this installation")
            text = unroll.apply(Analysis.from_source(parse_text(text, str(KERNEL5))), {"loop": None}).text
        return str(KERNEL5), text
    path = KERNELS / name
    return str(path), path.read_text()


@lru_cache(maxsize=None)
def rewrite(name: str, max_n: int | None = None, spread: bool = False):
    path, text = source_of(name)
    max_n = max_n or LIMITS.get(name, MAX_N)
    result = batch_gmem.apply(Analysis.from_source(parse_text(text, path)),
                              {"loop": None, "max_n": max_n, "spread": spread})
    return path, text, result


def analysis_of(path: str, text: str) -> Analysis:
    return Analysis.from_source(parse_text(text, path))


def outer_loop(analysis, label: str = ".LBB0_6"):
    return analysis.cfg.find_loop(label)


def label_of(name: str) -> str:
    return ".LBB0_5" if name in ("gemm_register_tiled.s", "gemm_register_tiled.hipcc.s", "kernel3_reg_tiling.s") \
        else ".LBB0_6"


def global_loads(analysis, loop):
    from isalint.fixes.batch_gmem.select import own_blocks

    cfg = analysis.cfg
    return [analysis.program.instrs[i] for b in own_blocks(cfg, loop) for i in cfg.blocks[b].indices()
            if analysis.program.instrs[i].opcode.startswith("global_load")]


def declared(text: str, key: str) -> int:
    return int(re.search(rf"{re.escape(key)}:?\s+(\d+)", text).group(1))


# kernel3, kernel4 and the hipcc build: the row index is an or of the loop counter with a per-lane index
# (a sum, since the counter's trailing zero bits cover the index), and the work-item id is gone before the
# loop (`tid & 127` recovered from a VGPR holding it plus a uniform column)
INPUTS = ["kernel5", "kernel6", "kernel7", "gmem_chained.s", "gemm_lds_padded.s", "gemm_register_tiled.s",
          "gemm_double_buffered.s", "kernel3_reg_tiling.s", "kernel4_gmem_db.s", "gemm_register_tiled.hipcc.s"]


@pytest.mark.parametrize("name", INPUTS)
def test_every_outer_loop_load_uses_an_sgpr_base(name):
    path, text, result = rewrite(name)
    before, after = analysis_of(path, text), analysis_of(path, result.text)
    old = global_loads(before, outer_loop(before, label_of(name)))
    new = global_loads(after, outer_loop(after, label_of(name)))
    assert len(new) == len(old) == (8 if name in LIMITS else 16)
    for ins in new:
        saddr = next(s for s in ins.slots[0] if s.name == "saddr")
        addr = next(s for s in ins.slots[0] if s.name in ("addr", "vaddr"))
        assert saddr.operand.kind == "sgpr" and len(saddr.regs) == 2 and len(addr.regs) == 1, ins.text()
    # the loads keep their destinations and order; the address chains are gone from the loop
    assert [i.stmts[0].operands[0].text for i in new] == [i.stmts[0].operands[0].text for i in old]
    body = [after.program.instrs[i].opcode for i in outer_loop(after, label_of(name)).indices(after.cfg)]
    assert not [op for op in body if op in ("v_lshlrev_b64", "v_add_co_ci_u32_e32", "v_mad_u64_u32")]


@pytest.mark.parametrize("name", INPUTS)
def test_no_gmem_meta_or_wait_finding_and_register_budget(name):
    path, text, result = rewrite(name)
    after = analysis_of(path, result.text)
    found = [d for d in check_analysis(after, ["GMEM001", "META001", "WAIT001"])]
    assert not found, [f"{d.code} {d.line}: {d.message}" for d in found]
    assert declared(result.text, ".sgpr_count") <= 106
    assert declared(result.text, ".amdhsa_next_free_sgpr") + 2 == declared(result.text, ".sgpr_count")
    assert declared(result.text, ".amdhsa_next_free_vgpr") <= declared(text, ".amdhsa_next_free_vgpr")


# Every input at N = 256 by default; at 384 too in the slow run (the CLI test below validates one input at
# both sizes by default: the pass's own validation).
@pytest.mark.parametrize("name,sizes", [(name, SIZES[:1]) for name in INPUTS]
                         + [pytest.param(name, SIZES[1:], marks=pytest.mark.slow) for name in INPUTS])
def test_assembles_and_computes_the_same_at_two_sizes(name, sizes):
    from isalint.validate import equivalence

    tc = assembler_or_skip()
    path, text, result = rewrite(name)
    assert equivalence.assemble(tc, path, result.text) == []
    orig = equivalence.parse_program(path, text)
    cand = equivalence.parse_program(path, result.text)
    for n in sizes:
        make, prob, _ = equivalence.gemm_launcher(path, n, 1.5, -0.75, seed=3)
        out = equivalence.validate_pair(orig, cand, make, seed=3, check=equivalence.gemm_check(prob))
        assert out.status == equivalence.EQUAL, f"N={n}: {out.message}"


def test_spread_puts_two_predicated_loads_in_each_unrolled_k_step():
    path, text, result = rewrite("kernel7", MAX_N, True)
    after = analysis_of(path, result.text)
    loop = outer_loop(after)
    loads = global_loads(after, loop)
    assert len(loads) == 16
    blocks = {after.cfg.block_of[i.index] for i in loads}
    assert len(blocks) == 1  # all in the unrolled k loop, none left in the conditional block
    body = [after.program.instrs[i] for i in sorted(after.cfg.blocks[blocks.pop()].indices())]
    groups = []
    for k, ins in enumerate(body):
        if ins.opcode == "global_load_b32" and body[k - 1].opcode == "s_and_saveexec_b32":
            groups.append(k)
            assert body[k + 1].opcode == "global_load_b32" and body[k + 2].opcode == "s_mov_b32"
            assert body[k + 2].text().startswith("s_mov_b32 exec_lo, ")
    assert len(groups) == 8
    gaps = [b - a for a, b in zip(groups, groups[1:])]
    assert max(gaps) - min(gaps) <= 2  # evenly spaced through the body
    assert not check_analysis(after, ["GMEM001", "META001", "WAIT001"])


@pytest.mark.parametrize("sizes", [SIZES[:1], pytest.param(SIZES[1:], marks=pytest.mark.slow)])
def test_spread_validates_at_two_sizes(sizes):
    from isalint.validate import equivalence

    assembler_or_skip()
    path, text, result = rewrite("kernel7", MAX_N, True)
    orig = equivalence.parse_program(path, text)
    cand = equivalence.parse_program(path, result.text)
    for n in sizes:
        make, prob, _ = equivalence.gemm_launcher(path, n, 1.0, 0.0, seed=4)
        out = equivalence.validate_pair(orig, cand, make, seed=4, check=equivalence.gemm_check(prob))
        assert out.status == equivalence.EQUAL, f"N={n}: {out.message}"


def test_spread_without_an_unrolled_body_is_refused():
    path, text = source_of("kernel5")
    with pytest.raises(FixRefused) as exc:
        batch_gmem.apply(analysis_of(path, text), {"max_n": MAX_N, "spread": True})
    assert str(exc.value) == (f"{path}:435: --spread: after the loads every iteration runs only 1 VALU instructions "
                              "before its next branch or inner loop (at .LBB0_8); nothing to spread the loads over "
                              "(unroll the inner loop first: fix --unroll)")


def test_summary_and_setup_comment_state_the_proven_sizes():
    path, text, result = rewrite("gmem_chained.s")
    assert "proven for 1 <= N <= 32768" in result.summary
    assert "global loads from an SGPR base      0/16     16/16" in result.summary
    note = next(line for line in result.text.splitlines() if "isalint fix --batch-gmem:" in line)
    assert "16 global-load bases" in note and "exact for 1 <= N <= 32768" in note


def test_the_offset_limit_is_the_largest_n_whose_b_offsets_fit_32_bits():
    # the B tile's byte offset is 4 * (k0 * N + t), t < 128 threads, k0 up to N - 1 (the loop runs
    # while k0 < N): it must stay below 2**32 for every N up to the limit
    def fits(n):
        return 4 * ((n - 1) * n + 127) < 1 << 32

    limit = max(n for n in range(30000, 40000) if fits(n))
    path, text = source_of("gmem_chained.s")
    with pytest.raises(FixRefused) as exc:
        batch_gmem.apply(analysis_of(path, text), {"max_n": limit + 1})
    assert f"exact only for N <= {limit}, while --max-n {limit + 1} asks for more" in str(exc.value)
    assert "gmem_chained.s:393:" in str(exc.value)
    assert rewrite("gmem_chained.s", limit)[2].text


def test_without_max_n_the_pass_refuses_and_names_the_limit():
    path, text = source_of("gmem_chained.s")
    with pytest.raises(FixRefused) as exc:
        batch_gmem.apply(analysis_of(path, text), {})
    msg = str(exc.value)
    assert msg.startswith(f"{path}:393: the per-lane byte offset 4*N*s14 + 4*tid of the 8 loads at lines 393-400")
    assert "the original's 32-bit indices are exact up to N = 46333" in msg
    assert msg.endswith("pass --max-n 32768 (or less) to accept that limit")


def refusal(text_edit, path=KERNELS / "gmem_chained.s", **options):
    text = path.read_text()
    text = text_edit(text)
    with pytest.raises(FixRefused) as exc:
        batch_gmem.apply(analysis_of(str(path), text), {"max_n": MAX_N, **options})
    return str(exc.value)


def _replace(old, new):
    def edit(text):
        assert old in text
        return text.replace(old, new, 1)
    return edit


def test_refuses_an_address_not_affine_in_the_counter():
    msg = refusal(_replace("v_mad_u64_u32 v[137:138], null, s12, s4, v[1:2]",
                           "v_mad_u64_u32 v[137:138], null, s12, s12, v[1:2]"))
    assert re.search(r"gmem_chained\.s:393: the address of 'global_load_b32 v137, v\[137:138\], off' is not affine "
                     r"in the loop counter s14: its offset .* grows with s14\^2", msg), msg


def test_refuses_a_base_that_is_not_uniform():
    # the B pointer of the first load comes from memory, one per lane, loaded before the loop
    def edit(text):
        for old, new in (("\ts_branch .LBB0_6\n", "\tglobal_load_b64 v[190:191], v[0:1], off\n\ts_branch .LBB0_6\n"),
                         ("\tv_add_co_u32 v137, vcc_lo, s10, v137\n", "\tv_add_co_u32 v137, vcc_lo, v190, v137\n"),
                         ("\tv_add_co_ci_u32_e32 v138, vcc_lo, s11, v138, vcc_lo\n",
                          "\tv_add_co_ci_u32_e32 v138, vcc_lo, v191, v138, vcc_lo\n")):
            assert old in text
            text = text.replace(old, new, 1)
        return text
    msg = refusal(edit)
    assert "gmem_chained.s:394: the address of 'global_load_b32 v137, v[137:138], off' is not a function" in msg
    assert re.search(r"v190 is loaded from memory at line \d+", msg), msg


def test_refuses_when_no_sgprs_are_free_over_the_loop():
    # s16..s103 set before the loop and read after it: live across the whole loop
    def edit(text):
        sets = "".join(f"\ts_mov_b32 s{k}, {k}\n" for k in range(16, 104))
        reads = "".join(f"\ts_mov_b32 s{k}, s{k}\n" for k in range(16, 104))
        text = text.replace("\ts_branch .LBB0_6\n", sets + "\ts_branch .LBB0_6\n", 1)
        return text.replace(".LBB0_12:\n", ".LBB0_12:\n" + reads, 1)
    msg = refusal(edit)
    assert re.search(r"gmem_chained\.s:\d+: no free SGPRs for the bases: 16 aligned SGPR pairs must stay free over "
                     r"the loop, \d+ are", msg), msg


def test_refuses_a_loop_that_writes_exec():
    msg = refusal(_replace("\ts_add_i32 s12, s14, 8\n", "\ts_add_i32 s12, s14, 8\n\ts_mov_b32 exec_lo, -1\n"))
    assert "writes EXEC; the address proof takes every lane of the loop as active" in msg


def test_refuses_a_kernel_without_the_pattern():
    msg = refusal(lambda t: t, path=KERNELS / "gmem_sgpr_base.s")
    assert msg == "no loop has a global load with a 64-bit VGPR address (GMEM001's pattern)"


def run(*args):
    proc = subprocess.run([sys.executable, "-m", "isalint", *map(str, args)], capture_output=True, text=True,
                          timeout=600)
    return proc.returncode, proc.stdout, proc.stderr


def test_cli_refusal_exit_1_and_input_untouched(tmp_path):
    src = tmp_path / "gmem_chained.s"
    src.write_bytes((KERNELS / "gmem_chained.s").read_bytes())
    before = src.read_bytes()
    code, _, err = run("fix", "--batch-gmem", src, "--in-place")
    assert code == 1 and src.read_bytes() == before
    assert "fix --batch-gmem refused:" in err and "pass --max-n 32768" in err
    assert "input left untouched" in err


def test_cli_bad_options_exit_2(tmp_path):
    k = KERNELS / "gmem_chained.s"
    code, _, err = run("fix", "--dual-fmac", "--max-n", "100", k, "-o", tmp_path / "o.s")
    assert code == 2 and "--max-n and --spread belong to --batch-gmem" in err and "Traceback" not in err
    code, _, err = run("fix", "--batch-gmem", "--max-n", "300", k, "-o", tmp_path / "o.s")
    assert code == 2 and "--gemm 384 is larger than --max-n 300" in err


def test_cli_rewrites_validates_twice_and_writes(tmp_path):
    assembler_or_skip()
    out = tmp_path / "k8.s"
    code, _, err = run("fix", "--batch-gmem", "--max-n", MAX_N, KERNELS / "gemm_lds_padded.s", "-o", out)
    assert code == 0, err
    assert "(GEMM N=256, 384, bit-identical)" in err
    # the pass's output, with the s_delay_alu hints the command writes for its new address code
    written = out.read_text()

    def code(text: str) -> list[str]:
        return [ln for ln in text.splitlines() if not ln.strip().startswith("s_delay_alu")]

    assert code(written) == code(rewrite("gemm_lds_padded.s")[2].text)
    assert written != rewrite("gemm_lds_padded.s")[2].text and "s_delay_alu for the new code" in err
    assert pending_dependencies(Analysis.from_source(parse_text(written, str(out)))) == []
