"""Launch set-up from the kernel descriptor and metadata, and whole kernels against numpy."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from isalint.cli import cli
from isalint.model.program import build_program
from isalint.parse.source import parse_text
from isalint.validate import equivalence as eq
from isalint.validate.emu import Kernel, Launch, LaunchError, sgpr_layout
from test_emu_support import FIXTURES, need_kernel5

KERNEL5_DESCRIPTOR = {".amdhsa_user_sgpr_count": 14, ".amdhsa_user_sgpr_kernarg_segment_ptr": 1,
                      ".amdhsa_system_sgpr_workgroup_id_x": 1, ".amdhsa_system_sgpr_workgroup_id_y": 1,
                      ".amdhsa_system_sgpr_workgroup_id_z": 0, ".amdhsa_system_vgpr_workitem_id": 0}


def test_kernel5_sgpr_layout():
    lay = sgpr_layout(KERNEL5_DESCRIPTOR)
    assert lay.user == {"kernarg_segment_ptr": 0}
    assert lay.workgroup_id == {"x": 14, "y": 15}  # kernel5 uses s14/s15 as blockIdx.x/y
    assert lay.workitem_dims == 1


def test_sgpr_layout_orders_user_fields_and_defaults_the_count():
    lay = sgpr_layout({".amdhsa_user_sgpr_dispatch_ptr": 1, ".amdhsa_user_sgpr_kernarg_segment_ptr": 1,
                       ".amdhsa_user_sgpr_private_segment_size": 1, ".amdhsa_system_sgpr_workgroup_id_z": 1,
                       ".amdhsa_enable_private_segment": 1})
    assert lay.user == {"dispatch_ptr": 0, "kernarg_segment_ptr": 2, "private_segment_size": 4}
    assert lay.user_count == 5
    assert lay.workgroup_id == {"x": 5, "z": 6}  # X is on unless disabled
    assert lay.wave_offset == 7


def test_user_sgpr_count_too_small_is_an_error():
    with pytest.raises(LaunchError, match="user_sgpr_count 1"):
        sgpr_layout({".amdhsa_user_sgpr_count": 1, ".amdhsa_user_sgpr_kernarg_segment_ptr": 1})


IDS_KERNEL = """\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
\t.text
\t.globl ids
\t.p2align 8
\t.type ids,@function
ids:
\ts_load_b64 s[2:3], s[0:1], 0x0
\tv_and_b32_e32 v1, 0x3ff, v0
\tv_bfe_u32 v2, v0, 10, 10
\tv_lshl_add_u32 v1, v2, 3, v1
\ts_lshl_b32 s4, {wgy}, 1
\ts_add_u32 s4, s4, {wgx}
\ts_lshl_b32 s4, s4, 6
\tv_add_nc_u32_e32 v1, s4, v1
\tv_lshlrev_b32_e32 v1, 2, v1
\ts_waitcnt lgkmcnt(0)
\tglobal_store_b32 v1, v0, s[2:3]
\ts_endpgm
\t.rodata
\t.p2align 6
\t.amdhsa_kernel ids
\t\t.amdhsa_next_free_vgpr 8
\t\t.amdhsa_next_free_sgpr 16
{count}\t\t.amdhsa_user_sgpr_kernarg_segment_ptr 1
\t\t.amdhsa_system_sgpr_workgroup_id_x 1
\t\t.amdhsa_system_sgpr_workgroup_id_y 1
\t\t.amdhsa_system_vgpr_workitem_id 1
\t.end_amdhsa_kernel
\t.amdgpu_metadata
---
amdhsa.kernels:
  - .args:
      - .address_space:  global
        .name:           out
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 8
    .max_flat_workgroup_size: 64
    .name:           ids
    .private_segment_fixed_size: 0
    .sgpr_count:     16
    .symbol:         ids.kd
    .vgpr_count:     8
    .wavefront_size: 32
amdhsa.target:   amdgcn-amd-amdhsa--gfx1100
amdhsa.version:
  - 1
  - 2
...
\t.end_amdgpu_metadata
"""


@pytest.mark.parametrize("count,wgx,wgy", [("\t\t.amdhsa_user_sgpr_count 14\n", "s14", "s15"), ("", "s2", "s3")])
def test_workgroup_ids_and_packed_workitem_ids(count, wgx, wgy):
    if wgx == "s2":  # the ids land in s2/s3, so load the kernarg into other registers
        text = IDS_KERNEL.replace("s_load_b64 s[2:3]", "s_load_b64 s[6:7]").replace("v1, v0, s[2:3]", "v1, v0, s[6:7]")
    else:
        text = IDS_KERNEL
    text = text.format(count=count, wgx=wgx, wgy=wgy)
    k = Kernel(build_program(parse_text(text, "ids.s")))
    res = k.run(Launch((2, 3, 1), (8, 8, 1), {"out": "out"}, {"out": np.zeros(6 * 64, np.uint32)}))
    out = res.buffers["out"].view(np.uint32).reshape(6, 8, 8)
    y, x = np.mgrid[0:8, 0:8]
    assert np.array_equal(out, np.broadcast_to(x | (y << 10), (6, 8, 8)))
    assert "wave 1, lane 3" in res.wavemap.describe(int(res.writers["out"][64 + 35]))


def test_ids_kernel_assembles():
    from test_emu_support import need_toolchain
    from isalint.validate.equivalence import assemble
    tc = need_toolchain()
    for count, x, y in (("\t\t.amdhsa_user_sgpr_count 14\n", "s14", "s15"), ("", "s2", "s3")):
        assert assemble(tc, "ids.s", IDS_KERNEL.format(count=count, wgx=x, wgy=y)) == []


def test_unknown_or_missing_kernel_argument():
    k = Kernel(build_program(parse_text(IDS_KERNEL.format(count="", wgx="s2", wgy="s3"), "ids.s")))
    with pytest.raises(LaunchError, match="no value for kernel argument out"):
        k.run(Launch((1, 1, 1), (8, 8, 1), {}, {}))
    with pytest.raises(LaunchError, match="unknown kernel argument"):
        k.run(Launch((1, 1, 1), (8, 8, 1), {"out": "o", "bogus": 1}, {"o": np.zeros(64, np.uint32)}))


def _kernel5_gemm(n, alpha, beta, seed=0, **kw):
    prog = eq.parse_program(str(need_kernel5()))
    make, prob, geo = eq.gemm_launcher(str(need_kernel5()), n, alpha, beta, seed)
    k = Kernel(prog)
    return k.run(make(k), seed=seed, **kw), prob


def test_kernel5_results_do_not_depend_on_batching_or_memory_timing():
    base, prob = _kernel5_gemm(256, 1.25, 0.5)
    batched, _ = _kernel5_gemm(256, 1.25, 0.5, max_waves=8)  # two workgroups at a time
    assert np.array_equal(base.buffers["c"], batched.buffers["c"])
    small, _ = _kernel5_gemm(128, 1.25, 0.5)
    never, _ = _kernel5_gemm(128, 1.25, 0.5, latency=None)  # loads land only when waited for
    quick, _ = _kernel5_gemm(128, 1.25, 0.5, latency=(0, 30))
    for other in (never, quick):
        assert np.array_equal(small.buffers["c"], other.buffers["c"])


@pytest.mark.parametrize("alpha,beta", [(1.0, 0.0), (1.5, -0.75)])
def test_isalint_run_kernel5_matches_numpy(alpha, beta):
    path = str(need_kernel5())
    res = CliRunner().invoke(cli, ["run", path, "--gemm", "256", "--alpha", str(alpha), "--beta", str(beta)])
    assert res.exit_code == 0, res.output
    assert "OK: matches numpy" in res.output


def _fixture_cases():
    meta = FIXTURES / "kernels.json"
    if not meta.is_file():
        return []
    out = []
    for name, e in json.loads(meta.read_text())["kernels"].items():
        mult, lo = int(e.get("n_multiple", 1)), int(e.get("min_n", 1))
        n = max(lo, mult)
        if mult == 1:
            n = max(lo, 40)  # not a multiple of the block: the boundary lanes must be masked off
        out.append(pytest.param(name, n, id=name))
    return out


@pytest.mark.parametrize("name,n", _fixture_cases())
def test_fixture_kernels_match_numpy(name, n):
    path = FIXTURES / name
    if not path.is_file():
        pytest.skip(f"{path} not built yet")
    res = CliRunner().invoke(cli, ["run", str(path), "--gemm", str(n), "--beta", "0.5", "--alpha", "-1.25"])
    assert res.exit_code == 0, res.output
    assert "OK: matches numpy" in res.output


def test_run_reports_a_wrong_result_with_exit_1(tmp_path):
    path = need_kernel5()
    text = path.read_text().replace("v_fmac_f32_e32 v124, v184, v192", "v_fmac_f32_e32 v124, v185, v192", 1)
    bad = tmp_path / "bad.s"
    bad.write_text(text)
    res = CliRunner().invoke(cli, ["run", str(bad), "--gemm", "128"])
    assert res.exit_code == 1 and "MISMATCH" in res.output


def test_run_usage_errors_exit_2(tmp_path):
    path = str(need_kernel5())
    r = CliRunner().invoke(cli, ["run", path, "--gemm", "100"])
    assert r.exit_code == 2 and "multiple of 128" in r.output
    r = CliRunner().invoke(cli, ["run", path])
    assert r.exit_code == 2 and "--grid" in r.output
    junk = tmp_path / "junk.s"
    junk.write_text('\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"\n\ts_endpgm\n')
    r = CliRunner().invoke(cli, ["run", str(junk), "--gemm", "128"])
    assert r.exit_code == 2 and "descriptor" in r.output
