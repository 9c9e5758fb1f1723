"""The throughput model (isalint/estimate): control flow, residency, the SIMD simulation, the CLI.

Small synthetic kernels isolate one mechanism each; the numbers they are held to come from the
parameters of isalint/hw/timing.py, not from earlier runs.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import KERNEL5, KERNELS, REPRESENTATIVE, gemm_fixture_kernels, split_slow
from isalint.analysis import Analysis
from isalint.estimate import EstimateError, estimate
from isalint.estimate.costs import CostModel
from isalint.estimate.prediction import _loop_keys
from isalint.estimate.path import build_stream
from isalint.estimate.residency import residency
from isalint.estimate.scalar import Launch, gemm_launch, trace
from isalint.estimate.simd import CAUSES, simulate_round
from isalint.hw.timing import GFX1100, PARAMETERS
from isalint.model.alu_delays import pending_in
from isalint.parse.source import parse_text

T = GFX1100

TEMPLATE = """\t.text
\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
\t.globl\tkernel
\t.p2align\t8
\t.type\tkernel,@function
kernel:
{body}
\ts_endpgm
\t.section\t.rodata,"a",@progbits
\t.p2align\t6, 0x0
\t.amdhsa_kernel kernel
\t\t.amdhsa_group_segment_fixed_size 0
\t\t.amdhsa_user_sgpr_count 2
\t\t.amdhsa_user_sgpr_kernarg_segment_ptr 1
\t\t.amdhsa_wavefront_size32 1
\t\t.amdhsa_next_free_vgpr 200
\t\t.amdhsa_next_free_sgpr 16
\t\t.amdhsa_workgroup_processor_mode 0
\t.end_amdhsa_kernel
"""


def kernel(body: str, trips: int) -> str:
    """``body`` as a loop run ``trips`` times (the counter in s4)."""
    loop = (f"\ts_mov_b32 s4, {trips}\n.LBB0_1:\n{body}\n\ts_add_i32 s4, s4, -1\n"
            "\ts_delay_alu instid0(SALU_CYCLE_1)\n\ts_cmp_lg_u32 s4, 0\n\ts_cbranch_scc1 .LBB0_1")
    return TEMPLATE.format(body=loop)


def program_of(text: str):
    return Analysis.from_source(parse_text(text, "synthetic.s")).program


def run(text: str, waves: int, groups: int = 1, timing=T):
    """Simulate ``groups`` workgroups of ``waves`` waves of the kernel on one SIMD."""
    program = program_of(text)
    k = program.kernels[0]
    cfg = program.cfg()
    tr = trace(program, k, cfg, Launch((1, 1, 1), (32, 1, 1), {}))
    blocking = frozenset(p.consumer for p in pending_in(program, cfg, timing))
    costs = CostModel(program, k, timing, blocking)
    stream = build_stream(tr.blocks, cfg, costs)
    return simulate_round(stream, costs.cost, _loop_keys(cfg), timing, groups, waves)


def chain(n: int, hinted: bool = True) -> str:
    """n VALU instructions, each reading the previous one's result (each announced by s_delay_alu,
    as the compiler writes them, unless ``hinted`` is False)."""
    hint = "\ts_delay_alu instid0(VALU_DEP_1)\n" if hinted else ""
    return "\n".join(f"{hint}\tv_add_nc_u32_e32 v{(i + 1) % 2}, v{i % 2}, v2" for i in range(n))


# -- the SIMD ---------------------------------------------------------------------------------------------

def test_one_wave_runs_a_dependent_chain_at_the_result_latency():
    trips, n = 300, 20
    r = run(kernel(chain(n), trips), waves=1)
    per = r.cycles / trips
    # each instruction waits valu_latency for its producer; the loop adds 3 scalar/branch instructions and
    # a taken branch
    assert n * T.valu_latency <= per <= n * T.valu_latency + 3 + T.branch_taken_cycles + 2
    assert r.causes["dependency"] > r.causes["valu"]


def test_other_waves_hide_the_latency_until_the_valu_is_full():
    trips, n = 300, 20
    one = run(kernel(chain(n), trips), waves=1).cycles
    five = run(kernel(chain(n), trips), waves=5).cycles
    ten = run(kernel(chain(n), trips), waves=10)
    assert five < 1.15 * one  # five waves' chains interleave in the time of one
    # ten waves need more VALU cycles than one wave's latency: the VALU issues every cycle, and the loop's
    # scalar and branch instructions issue beside other waves' VALU work (one per category per cycle)
    valu = 10 * n * trips
    # the chain's s_delay_alu hints make the loop longer than the prefetched code: each taken branch also
    # holds the SIMD branch_simd_cycles
    refetch = 10 * trips * T.branch_simd_cycles
    assert valu <= ten.cycles <= 1.1 * (valu + refetch)
    assert ten.causes["valu"] / ten.cycles > 0.85


def test_with_one_issue_per_cycle_the_scalar_instructions_take_the_valu_s_cycles():
    trips, n = 300, 20
    one_issue = T.with_(issue_per_cycle=1)
    ten = run(kernel(chain(n), trips), waves=10, timing=one_issue)
    issue = 10 * (n + 3) * trips  # one instruction per cycle, whatever its unit
    refetch = 10 * trips * T.branch_simd_cycles
    assert issue <= ten.cycles <= 1.1 * (issue + refetch)
    assert ten.causes["salu_branch"] >= 0.9 * 10 * 3 * trips


def test_a_dependency_no_s_delay_alu_names_stalls_the_whole_simd():
    trips, n = 200, 20
    hinted = run(kernel(chain(n), trips), waves=5)
    bare_text = kernel(chain(n, hinted=False), trips)
    program = program_of(bare_text)
    # every link of the chain, the first one's reaching back to the previous iteration's last
    assert len(pending_in(program, program.cfg())) == n
    bare = run(bare_text, waves=5)
    # hinted, five waves hide each other's latency; bare, each wait holds the SIMD: five chains in a row
    assert bare.cycles > 3 * hinted.cycles
    per_wave_chain = (n - 1) * T.valu_latency
    assert bare.cycles >= 5 * per_wave_chain * trips
    assert hinted.causes["unhinted"] == 0 and bare.causes["unhinted"] > 0.5 * bare.cycles


def _wmmas(count: int, chained: bool) -> str:
    """``count`` WMMAs: each into its own accumulator, or all into one (D of each is C of the next)."""
    out = []
    for k in range(count):
        d = 0 if chained else 8 * k
        out.append(f"\tv_wmma_f32_16x16x16_f16 v[{d}:{d + 7}], v[100:107], v[108:115], v[{d}:{d + 7}]")
    return "\n".join(out)


def test_a_wmma_keeps_the_simd_for_its_32_cycles():
    trips, count = 50, 8
    one = run(kernel(_wmmas(count, chained=False), trips), waves=1)
    four = run(kernel(_wmmas(count, chained=False), trips), waves=4)
    # independent WMMAs: one wave issues them back to back, each holding the matrix path wmma_cycles (the
    # time ends when the last one issues)
    assert (count * trips - 1) * T.wmma_cycles <= one.cycles <= 1.1 * count * T.wmma_cycles * trips
    assert one.causes["bank_stall"] == 0
    # four waves share the one matrix path: four times the work, four times the time
    assert four.cycles == pytest.approx(4 * one.cycles, rel=0.05)
    # an accumulation chain waits for each D: no faster than the independent ones, and not slower either
    chained = run(kernel(_wmmas(count, chained=True), trips), waves=1)
    assert chained.cycles == pytest.approx(one.cycles, rel=0.05)


def test_a_wmma_kernel_is_held_to_the_matrix_peak():
    path = KERNELS / "gemm_wmma_f16.s"
    analysis = Analysis.from_source(parse_text(path.read_text(), str(path)))
    from isalint.validate.gemm import geometry

    geo = geometry(str(path), 1024)
    est = estimate(analysis.program, 1024, geo.grid, geo.block, abi=geo.abi)
    assert est.matrix and est.peak_flops == T.peak_matrix_flops == 2 * T.peak_flops
    assert est.to_json()["peak"] == "FP16 matrix (WMMA)"
    # each wave computes one 16x16 tile of C with N/16 WMMAs; a SIMD runs its share of the waves
    waves = geo.grid[0] * geo.grid[1] * geo.grid[2] * (geo.block[0] * geo.block[1] * geo.block[2] // 32)
    assert est.cycles >= waves / T.simds * (1024 // 16) * T.wmma_cycles
    assert 0 < est.tflops < est.peak_flops / 1e12


def test_launch_overhead_and_matrix_clock_fraction_act_where_documented():
    """``launch_overhead_us`` is added once to the predicted time; ``matrix_clock_fraction`` slows the SIMD
    time of a WMMA kernel only: an FP32 kernel's time and every peak stay at ``clock_hz``."""
    from isalint.validate.gemm import geometry

    def predict(name: str, timing):
        path = KERNELS / name
        analysis = Analysis.from_source(parse_text(path.read_text(), str(path)))
        geo = geometry(str(path), 1024)
        return estimate(analysis.program, 1024, geo.grid, geo.block, timing, abi=geo.abi)

    bare = T.with_(launch_overhead_us=0.0, matrix_clock_fraction=1.0)
    for name, matrix in (("gemm_wmma_f16.s", True), ("kernel3_reg_tiling.s", False)):
        base = predict(name, bare)
        assert base.matrix is matrix and base.compute_ms == pytest.approx(base.cycles / T.clock_hz * 1e3)
        late = predict(name, bare.with_(launch_overhead_us=25.0))
        assert late.predicted_ms == pytest.approx(base.predicted_ms + 0.025)
        slow = predict(name, bare.with_(matrix_clock_fraction=0.5))
        assert slow.cycles == base.cycles and slow.peak_flops == base.peak_flops
        if matrix:
            assert slow.compute_ms == pytest.approx(2 * base.compute_ms)
            assert slow.efficiency < base.efficiency
        else:
            assert slow.predicted_ms == base.predicted_ms
    assert T.launch_overhead_us > 0 and 0 < T.matrix_clock_fraction < 1
    assert PARAMETERS["launch_overhead_us"][1] == PARAMETERS["matrix_clock_fraction"][1] == "calibrated"


def _vopd_block(conflict: bool, count: int = 64) -> str:
    lines = []
    for i in range(count):
        dx, dy = 10 + 2 * i, 11 + 2 * i  # separate accumulators: no dependency between the pairs
        if conflict:  # SRC0X v4 and VSRC1X v8 are both in bank 0 (and v5, v9 in bank 1)
            lines.append(f"\tv_dual_fmac_f32 v{dx}, v4, v8 :: v_dual_fmac_f32 v{dy}, v5, v9")
        else:  # banks 0, 2 | 1, 3
            lines.append(f"\tv_dual_fmac_f32 v{dx}, v4, v6 :: v_dual_fmac_f32 v{dy}, v5, v7")
    return "\n".join(lines)


def test_a_bank_stall_costs_its_exposed_share_of_a_valu_cycle():
    trips = 60
    clean = run(kernel(_vopd_block(False), trips), waves=8)
    stalled = run(kernel(_vopd_block(True), trips), waves=8)
    ratio = stalled.cycles / clean.cycles
    vopd, overhead = 64, 3 + T.branch_simd_cycles  # the 512-byte loop's branch leaves the prefetched code
    expected = (vopd * (1 + T.bank_stall_exposure) + overhead) / (vopd + overhead)
    assert abs(ratio - expected) < 0.03
    assert stalled.causes["bank_stall"] == pytest.approx(8 * trips * vopd * T.bank_stall_exposure, rel=0.01)
    assert clean.causes["bank_stall"] == 0


def test_a_wave_waits_for_global_memory_at_its_s_waitcnt():
    load = "\tglobal_load_b32 v2, v[0:1], off\n"
    use = "\tv_add_nc_u32_e32 v3, v2, v3"
    trips = 100
    waiting = run(kernel(load + "\ts_waitcnt vmcnt(0)\n" + use, trips), waves=1)
    free = run(kernel(load + use, trips), waves=1)
    assert waiting.cycles / trips == pytest.approx(T.vmem_latency, rel=0.1)
    assert free.cycles / trips < 20
    assert waiting.causes["gmem_wait"] / waiting.cycles > 0.9


def test_lds_bandwidth_is_shared():
    # 8 waves x 8 ds_load_b128: 4 passes of 128 bytes each, two cycles of this SIMD's share per pass
    body = "\n".join(f"\tds_load_b128 v[{4 * i + 10}:{4 * i + 13}], v1 offset:{16 * i}" for i in range(8))
    body += "\n\ts_waitcnt lgkmcnt(0)"
    trips = 60
    r = run(kernel(body, trips), waves=8)
    passes = 8 * 8 * 4
    per = r.cycles / trips
    assert passes * T.simds_per_cu <= per <= 1.1 * passes * T.simds_per_cu
    assert r.causes["lds_wait"] / r.cycles > 0.8


def independent(n: int, first: int = 10) -> str:
    """n VALU instructions that read nothing the others write (4 bytes each)."""
    return "\n".join(f"\tv_add_nc_u32_e32 v{first + i}, v1, v2" for i in range(n))


def _stream(text: str):
    program = program_of(text)
    k = program.kernels[0]
    cfg = program.cfg()
    tr = trace(program, k, cfg, Launch((1, 1, 1), (32, 1, 1), {}))
    return build_stream(tr.blocks, cfg, CostModel(program, k, T))


def test_a_loop_that_outgrows_the_prefetched_lines_pays_the_fetch_of_its_header():
    # a wave keeps 4 lines of 64 bytes (one behind its PC): a 48-byte loop stays buffered, a 400-byte one does not
    trips = 200
    small, big = independent(9), independent(97)
    short, long = _stream(kernel(small, trips)), _stream(kernel(big, trips))
    assert any(short.taken) and not any(short.refetch)
    assert any(long.taken) and long.refetch == long.taken  # every jump back
    for body, n, fetch in ((small, 9, 0), (big, 97, T.branch_taken_cycles)):
        per = run(kernel(body, trips), waves=1).cycles / trips
        # the loop's s_add, s_cmp and s_cbranch wait for each other's SCC and counter
        assert n + 3 + fetch <= per <= n + 3 + fetch + 2 * T.salu_latency, (n, per)


def test_memory_instructions_read_a_valu_result_later_than_valu_instructions():
    trips = 200
    to_valu = "\tv_add_nc_u32_e32 v5, v5, v2\n\ts_delay_alu instid0(VALU_DEP_1)\n\tv_add_nc_u32_e32 v6, v5, v2"
    to_lds = "\tv_add_nc_u32_e32 v5, v5, v2\n\tds_store_b32 v1, v5"
    valu = run(kernel(to_valu, trips), waves=1).cycles / trips
    lds = run(kernel(to_lds, trips), waves=1).cycles / trips
    # the ds_store waits valu_memory_latency for v5, the second VALU instruction valu_latency
    assert lds - valu == pytest.approx(T.valu_memory_latency - T.valu_latency, abs=1.5)
    same = run(kernel(to_lds, trips), waves=1, timing=T.with_(valu_memory_latency=T.valu_latency)).cycles / trips
    assert same == pytest.approx(valu, abs=1.5)


def test_the_fetch_after_a_branch_also_costs_the_whole_simd():
    trips, n = 200, 97  # 8 waves keep the VALU busy through one wave's 32-cycle fetch ...
    one_issue = T.with_(issue_per_cycle=1)  # every instruction takes the SIMD's issue slot: 8 (n + 3) per trip
    free = run(kernel(independent(n), trips), waves=8, timing=one_issue.with_(branch_simd_cycles=0)).cycles
    held = run(kernel(independent(n), trips), waves=8, timing=one_issue).cycles
    assert free / trips == pytest.approx(8 * (n + 3), rel=0.02)
    # ... but not through the SIMD's own loss at every wave's jump back
    assert (held - free) / trips == pytest.approx(8 * T.branch_simd_cycles, rel=0.15)


def test_the_documented_issue_rule_issues_one_instruction_per_category_per_cycle():
    trips, n = 100, 40
    lds = "\n".join(f"\tds_load_b32 v{100 + i}, v1 offset:{4 * i}" for i in range(6)) + "\n\ts_waitcnt lgkmcnt(0)"
    body = independent(n) + "\n" + lds
    one = run(kernel(body, trips), waves=8, timing=T.with_(issue_per_cycle=1)).cycles / trips
    five = run(kernel(body, trips), waves=8, timing=T.with_(issue_per_cycle=5)).cycles / trips
    assert T.issue_per_cycle == 5  # the rule the hardware traces show is the default
    assert one >= 8 * (n + 6 + 3)  # every instruction takes the SIMD's single issue slot
    # the loads and the loop's SALU and branch issue beside other waves' VALU work
    assert five <= 8 * (n + T.branch_simd_cycles + 1)
    # SALU and scalar memory are one category: they never issue in the same cycle
    scalar = "\n".join(f"\ts_add_u32 s{20 + i}, s1, s2\n\ts_load_b32 s{40 + i}, s[0:1], 0x0" for i in range(10))
    r = run(kernel(scalar, trips), waves=8, timing=T.with_(issue_per_cycle=5))
    assert r.cycles / trips >= 8 * (20 + 2)


def test_shortened_loops_give_the_full_loop_time():
    """Long runs of identical iterations are simulated in part and charged at their period."""
    body = chain(8) + "\n\tglobal_load_b32 v2, v[0:1], off\n\ts_waitcnt vmcnt(0)"
    short = run(kernel(body, 50), waves=4)
    long = run(kernel(body, 5000), waves=4)
    assert not short.periods and long.periods  # 50 iterations are all simulated, 5000 are not
    assert long.cycles / 5000 == pytest.approx(short.cycles / 50, rel=0.03)


def test_the_causes_add_up_to_the_cycles():
    r = run(kernel(chain(6) + "\n\tglobal_load_b32 v2, v[0:1], off\n\ts_waitcnt vmcnt(0)", 3000), waves=3)
    assert sum(r.causes.values()) == pytest.approx(r.cycles, rel=0.01)
    assert set(r.causes) == set(CAUSES)


# -- control flow ----------------------------------------------------------------------------------------

def _visits(path, n):
    a = Analysis.from_path(path)
    k = a.program.kernels[0]
    from isalint.validate.gemm import geometry

    geo = geometry(path, n)
    tr = trace(a.program, k, a.cfg, gemm_launch(geo.grid, geo.block, n))
    counts = {}
    for b in tr.blocks:
        counts[b] = counts.get(b, 0) + 1
    return a.cfg, {(a.cfg.blocks[lp.header].label, lp.depth): counts.get(lp.header, 0) for lp in a.cfg.loops}


@pytest.mark.parametrize("n", [48, 96])
def test_naive_kernel_loops_n_times(n):
    _, trips = _visits(KERNELS / "kernel1_naive.s", n)
    assert list(trips.values()) == [n]


@pytest.mark.parametrize("n", [256, 512])
def test_kernel5_style_loops_n_over_8_times_with_8_k_steps_each(n):
    _, trips = _visits(KERNELS / "gemm_lds_padded.s", n)
    outer = [v for (label, depth), v in trips.items() if depth == 1]
    inner = [v for (label, depth), v in trips.items() if depth == 2]
    assert outer == [n // 8] and inner == [n]


def test_a_loop_exit_only_the_vector_unit_knows_is_an_error_with_its_line():
    body = "\tv_add_nc_u32_e32 v1, 1, v1\n\tv_cmp_gt_u32_e32 vcc_lo, 10, v1\n\ts_cbranch_vccnz .LBB0_1"
    text = TEMPLATE.format(body=".LBB0_1:\n" + body)
    program = program_of(text)
    with pytest.raises(EstimateError) as exc:
        estimate(program, 64, (1, 1, 1), (32, 1, 1))
    assert exc.value.line == 10 and "s_cbranch_vccnz" in str(exc.value)


def test_a_forward_branch_on_a_vector_value_is_a_note():
    text = TEMPLATE.format(body="\tv_cmp_gt_u32_e32 vcc_lo, 10, v0\n\ts_cbranch_vccz .LBB0_2\n"
                                "\tv_add_nc_u32_e32 v1, 1, v1\n.LBB0_2:\n\tv_add_nc_u32_e32 v1, 1, v1")
    est = estimate(program_of(text), 64, (1, 1, 1), (32, 1, 1))
    assert est.notes[0] == "line 8: s_cbranch_vccz on a value only the vector unit knows; assumed to fall through"


# -- occupancy -------------------------------------------------------------------------------------------

def test_kernel5_runs_six_waves_per_simd(kernel5):
    """208 VGPRs allow 7 waves per SIMD, but whole workgroups (2 waves per SIMD each) fit only 3."""
    k = Analysis.from_path(kernel5).program.kernels[0]
    r = residency(k, (128, 1, 1), T)
    assert (r.waves_by_vgprs, r.groups_per_unit, r.waves_per_simd, r.limit) == (7, 3, 6, "VGPRs")


def test_wgp_mode_spreads_a_workgroup_over_four_simds():
    k = Analysis.from_path(KERNELS / "kernel2_lds.s").program.kernels[0]
    r = residency(k, (32, 32, 1), T)
    assert r.wgp_mode and r.simds_per_unit == 4 and r.local_waves() == 8
    assert (r.groups_per_unit, r.waves_per_simd) == (2, 16)


# -- whole kernels ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", split_slow(gemm_fixture_kernels() + ([KERNEL5] if KERNEL5.is_file() else []),
                                            REPRESENTATIVE, lambda p: p.name), ids=lambda p: p.name)
def test_every_kernel_can_be_estimated(path):
    n = 512
    from isalint.validate.gemm import geometry

    geo = geometry(path, n)
    est = estimate(Analysis.from_path(path).program, n, geo.grid, geo.block, abi=geo.abi)
    assert est.predicted_ms > 0
    assert sum(lp.cycles for lp in est.loops) == pytest.approx(est.cycles, rel=1e-6)
    assert sum(est.causes.values()) == pytest.approx(est.cycles, rel=1e-6)
    if geo.abi == "gemm":
        assert 0 < est.tflops <= T.peak_flops / 1e12


def test_kernel3_waits_on_global_memory_and_kernel4_hides_it():
    """The worklog's finding for kernel 3 (global-memory waits are its biggest loss) and its fix."""
    shares = {}
    for name in ("kernel3_reg_tiling.s", "kernel4_gmem_db.s"):
        est = estimate(Analysis.from_path(KERNELS / name).program, 4096, (32, 32, 1), (256, 1, 1))
        shares[name] = est.fractions()["gmem_wait"]
    assert shares["kernel3_reg_tiling.s"] > 0.15 > 0.02 > shares["kernel4_gmem_db.s"]


# -- the command line -------------------------------------------------------------------------------------

def cli(*args):
    proc = subprocess.run([sys.executable, "-m", "isalint", *map(str, args)], capture_output=True, text=True,
                          timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


def test_cli_text_and_json():
    path = KERNELS / "kernel4_gmem_db.s"
    code, out, err = cli("estimate", path, "--gemm", 1024)
    assert code == 0, err
    assert "predicted" in out and "TFLOP/s" in out and "per loop" in out and "waiting on LDS" in out
    code, out, err = cli("estimate", path, "--gemm", 1024, "--format", "json")
    assert code == 0, err
    d = json.loads(out)
    for key in ("predicted_ms", "tflops", "occupancy_waves", "breakdown", "loops", "parameters", "per_k_step"):
        assert key in d
    assert set(d["breakdown"]) == set(CAUSES)
    assert sum(v["share"] for v in d["breakdown"].values()) == pytest.approx(1.0, abs=0.002)
    assert d["occupancy_waves"] == 12 and d["occupancy"]["unit"] == "WGP"
    assert d["tflops"] == pytest.approx(2 * 1024 ** 3 / (d["predicted_ms"] * 1e-3) / 1e12, rel=1e-3)
    assert set(d["parameters"]) == set(PARAMETERS)


def test_cli_parameter_override_changes_the_prediction():
    path = KERNELS / "kernel1_naive.s"
    _, out, _ = cli("estimate", path, "--gemm", 256, "--format", "json")
    _, slow, _ = cli("estimate", path, "--gemm", 256, "--format", "json", "--param", "vmem_latency=900")
    launch = T.launch_overhead_us / 1000  # the launch's own time does not grow with the latency
    assert json.loads(slow)["predicted_ms"] - launch > 1.8 * (json.loads(out)["predicted_ms"] - launch)


def test_cli_lists_the_parameters_with_their_sources():
    code, out, _ = cli("estimate", "--parameters")
    assert code == 0
    for name, (_, kind, _) in PARAMETERS.items():
        assert any(line.startswith(name) and f" {kind} " in line for line in out.splitlines()), name


@pytest.mark.parametrize("args,message", [
    (["--gemm", "100"], "multiple of 128"),
    ([], "--gemm N"),
    (["--gemm", "256", "--param", "speed=3"], "--param 'speed=3'"),
    (["--gemm", "256", "--param", "vmem_latency=fast"], "not a int"),
])
def test_cli_bad_input_is_one_line_and_exit_2(args, message):
    code, out, err = cli("estimate", KERNELS / "kernel3_reg_tiling.s", *args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_cli_unknown_trip_count_points_at_the_line(tmp_path):
    body = "\tv_add_nc_u32_e32 v1, 1, v1\n\tv_cmp_gt_u32_e32 vcc_lo, 10, v1\n\ts_cbranch_vccnz .LBB0_1"
    f = tmp_path / "k.s"
    f.write_text(TEMPLATE.format(body=".LBB0_1:\n" + body))
    code, _, err = cli("estimate", f, "--gemm", 128)
    assert code == 2 and f"{f}:10:" in err and len(err.strip().splitlines()) == 1


def test_cli_says_which_parts_of_the_launch_are_assumed(tmp_path):
    """A kernel with no metadata: the block, the grid and the argument list are all defaults, and
    the text and the JSON say so; kernels.json makes none of them one."""
    f = tmp_path / "k.s"
    f.write_text(kernel("\tv_fmac_f32_e32 v1, v2, v3", 64))
    code, out, err = cli("estimate", f, "--gemm", 256, "--format", "json")
    assert code == 0, err
    d = json.loads(out)
    assert d["launch"]["defaults"] == ["block", "grid", "arguments"]
    assert "128 threads by default" in d["launch"]["source"]
    assert any("metadata lists no arguments" in n for n in d["notes"])
    code, out, err = cli("estimate", f, "--gemm", 256, "--block", "64", "--grid", "4,4")
    assert code == 0, err
    assert "(defaults: arguments)" in out and "block from --block, grid from --grid" in out
    code, out, err = cli("estimate", KERNELS / "kernel4_gmem_db.s", "--gemm", 256, "--format", "json")
    assert json.loads(out)["launch"] == {"source": "kernels.json", "defaults": []}


@pytest.mark.parametrize("last", ["\ts_waitcnt vmcnt(0)", "\ts_nop 0", "\ts_delay_alu instid0(VALU_DEP_1)"])
def test_a_kernel_without_s_endpgm_ends_where_its_code_ends(last):
    text = TEMPLATE.replace("\ts_endpgm\n", "").format(body="\tv_mov_b32 v1, v0\n" + last)
    r = run(text, waves=2)
    assert 0 < r.cycles < 100
