"""``isalint validate`` / ``check_rewrite``: equal kernels pass, every kind of mutation is caught."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from isalint.cli import cli
from isalint.validate.equivalence import check_rewrite
from test_emu_support import FIXTURES, need_kernel5, need_toolchain

# (name, line of kernel5.s, old text, new text): each must be reported different
MUTATIONS = [
    ("swapped FMA source", 570, "v_fmac_f32_e32 v124, v184, v192", "v_fmac_f32_e32 v124, v185, v192"),
    ("LDS offset off by 4", 564, "ds_load_b128 v[196:199], v204 offset:128",
     "ds_load_b128 v[196:199], v204 offset:132"),
    ("removed s_waitcnt (LDS results)", 569, "s_waitcnt lgkmcnt(3)", ""),
    ("removed s_waitcnt (before barrier)", 218, "s_waitcnt lgkmcnt(0)", ""),
    ("wrong loop bound", 568, "s_cmpk_lg_i32 s14, 0x1000", "s_cmpk_lg_i32 s14, 0xe00"),
]


def _mutate(text: str, line: int, old: str, new: str) -> str:
    lines = text.split("\n")
    assert old in lines[line - 1], (line, lines[line - 1])
    lines[line - 1] = lines[line - 1].replace(old, new)
    return "\n".join(lines)


def _validate(*args):
    return CliRunner().invoke(cli, ["validate", *map(str, args)])


@pytest.fixture(scope="module")
def kernel5():
    need_toolchain()
    return need_kernel5()


def test_kernel5_against_itself_is_equal(kernel5):
    res = _validate(kernel5, kernel5, "--gemm", "256")
    assert res.exit_code == 0, res.output
    assert "EQUAL" in res.output and "matches numpy" in res.output


# two kinds by default (a wrong value, a missing wait), every kind in the slow run
@pytest.mark.parametrize("what,line,old,new", [m if m[0] in ("swapped FMA source", "removed s_waitcnt (LDS results)")
                                               else pytest.param(*m, marks=pytest.mark.slow) for m in MUTATIONS],
                         ids=[m[0] for m in MUTATIONS])
def test_each_mutation_of_kernel5_is_reported_different(kernel5, tmp_path, what, line, old, new):
    cand = tmp_path / "kernel5_mutant.s"
    cand.write_text(_mutate(kernel5.read_text(), line, old, new))
    res = _validate(kernel5, cand, "--gemm", "256")
    assert res.exit_code == 1, res.output
    assert "DIFFERENT" in res.output


def test_commuted_fma_operands_stay_equal(kernel5, tmp_path):
    cand = tmp_path / "commuted.s"
    cand.write_text(_mutate(kernel5.read_text(), 570, "v124, v184, v192", "v124, v192, v184"))
    res = _validate(kernel5, cand, "--gemm", "128")
    assert res.exit_code == 0, res.output


def test_difference_report_names_element_workgroup_and_lane(kernel5, tmp_path):
    cand = tmp_path / "m.s"
    cand.write_text(_mutate(kernel5.read_text(), *MUTATIONS[0][1:]))
    res = _validate(kernel5, cand, "--gemm", "128")
    assert res.exit_code == 1
    first = res.output.splitlines()[0]
    assert "c[" in first and "workgroup (0,0,0) thread" in first and "lane" in first


def test_missing_wait_in_a_small_fixture_kernel(tmp_path):
    need_toolchain()
    src = FIXTURES / "gemm_naive.s"
    if not src.is_file():
        pytest.skip("fixture kernels not built")
    text = src.read_text()
    assert "\ts_waitcnt vmcnt(0)\n\tv_fmac_f32_e32 v6, v4, v7" in text
    cand = tmp_path / "gemm_naive.s"
    cand.write_text(text.replace("\ts_waitcnt vmcnt(0)\n\tv_fmac_f32_e32 v6, v4, v7", "\tv_fmac_f32_e32 v6, v4, v7"))
    (tmp_path / "kernels.json").write_text((FIXTURES / "kernels.json").read_text())
    res = _validate(src, cand, "--gemm", "48")
    assert res.exit_code == 1, res.output
    res = CliRunner().invoke(cli, ["run", str(cand), "--gemm", "48"])
    assert res.exit_code == 1 and ("MISMATCH" in res.output or "FAULT" in res.output)


def test_check_rewrite_api(kernel5):
    text = kernel5.read_text()
    assert check_rewrite(str(kernel5), text, text, gemm_n=128) is None
    reason = check_rewrite(str(kernel5), text, _mutate(text, *MUTATIONS[2][1:]), gemm_n=128)
    assert reason is not None and reason.startswith("different")
    broken = _mutate(text, 570, "v_fmac_f32_e32 v124, v184, v192", "v_fmac_f32_e32 v124, v184, v999")
    reason = check_rewrite(str(kernel5), text, broken, gemm_n=128)
    assert reason is not None and "does not assemble" in reason


def test_check_rewrite_without_a_toolchain(monkeypatch, kernel5):
    monkeypatch.setenv("ISALINT_ASSEMBLER", "none")
    text = kernel5.read_text()
    reason = check_rewrite(str(kernel5), text, text)
    assert reason is not None and "apt-get install llvm-19" in reason and "ziglang" in reason and "ROCm" in reason


def test_validate_without_a_toolchain_exits_2(monkeypatch, kernel5):
    monkeypatch.setenv("ISALINT_ASSEMBLER", "none")
    res = _validate(kernel5, kernel5, "--gemm", "128")
    assert res.exit_code == 2 and "ziglang" in res.output


def test_candidate_that_does_not_assemble_exits_2(kernel5, tmp_path):
    cand = tmp_path / "bad.s"
    cand.write_text(_mutate(kernel5.read_text(), 570, "v184, v192", "v184, v999"))
    res = _validate(kernel5, cand, "--gemm", "128")
    assert res.exit_code == 2 and "bad.s:570" in res.output


def test_device_hip_without_a_gpu_exits_2(kernel5):
    from isalint.validate.hip import Hip, NoDevice
    try:
        Hip()
        pytest.skip("an AMD GPU is present")
    except NoDevice:
        pass
    res = _validate(kernel5, kernel5, "--gemm", "128", "--device", "hip")
    assert res.exit_code == 2
    assert "no AMD GPU" in res.output or "no HIP runtime" in res.output


def test_generic_launch_with_args(tmp_path):
    need_toolchain()
    from test_emu_launch import IDS_KERNEL
    src = tmp_path / "ids.s"
    src.write_text(IDS_KERNEL.format(count="\t\t.amdhsa_user_sgpr_count 14\n", wgx="s14", wgy="s15"))
    res = _validate(src, src, "--grid", "2,3", "--block", "8,8", "--arg", "out=zeros:1536")
    assert res.exit_code == 0, res.output
    res = _validate(src, src, "--grid", "2,3", "--block", "8,8")
    assert res.exit_code == 2 and "no value for kernel argument out" in res.output


def test_unemulated_opcode_in_candidate_is_an_error_not_a_difference(kernel5, tmp_path):
    cand = tmp_path / "sad.s"
    cand.write_text(_mutate(kernel5.read_text(), 570, "v_fmac_f32_e32 v124, v184, v192",
                            "v_sad_u32 v124, v184, v192, v124"))
    res = _validate(kernel5, cand, "--gemm", "128")
    assert res.exit_code == 2, res.output
    assert "v_sad_u32" in res.output and "sad.s:570" in res.output


def test_device_path_reports_times_and_tflops(monkeypatch, kernel5):
    """The --device hip plumbing, with the GPU replaced by the emulator (no AMD GPU here)."""
    import isalint.validate.hip as hip

    class FakeHip:
        device_name = "fake gfx1100"

    def fake_run(h, image, kernel, launch, repeats=10):
        assert image[:4] == b"\x7fELF"  # a linked code object was built
        r = kernel.run(launch)
        return hip.DeviceRun(r.buffers, [2.0, 1.0, 3.0])

    monkeypatch.setattr(hip, "Hip", FakeHip)
    monkeypatch.setattr(hip, "run_on_device", fake_run)
    res = _validate(kernel5, kernel5, "--gemm", "128", "--device", "hip")
    assert res.exit_code == 0, res.output
    assert "fake gfx1100" in res.output and "median 2.000 ms" in res.output
    assert f"{2 * 128 ** 3 / 2e-3 / 1e12:.2f} TFLOP/s" in res.output
