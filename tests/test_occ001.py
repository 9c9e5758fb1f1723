"""OCC001: the occupancy model against the compiler's own `; Occupancy:` comments and known cases."""
from __future__ import annotations

import pytest
from conftest import KERNELS, all_real_kernels

from isalint.analysis import Analysis
from isalint.lint.engine import check_analysis
from isalint.hw.occupancy import occupancy_for, vgpr_model, vgprs_for_waves, waves_by_lds, waves_by_vgprs
from isalint.model.resources import comment_fields, compiler_is_legacy, launch_size, occupancy


@pytest.mark.parametrize("path", all_real_kernels(), ids=lambda p: p.name)
def test_agrees_with_the_compilers_occupancy_comment(path):
    """LLVM's count reproduced (``compiler_waves``); where the hardware's whole workgroups give another
    number, OCC001 says why the comment differs."""
    a = Analysis.from_path(str(path))
    comments = comment_fields(a.program)
    checked = 0
    for k in a.program.kernels:
        stated = comments.get(k.name, {}).get("Occupancy")
        if stated is None or not k.descriptor:
            continue
        checked += 1
        occ = occupancy(k)
        shown = occupancy(k, group_size=launch_size(k, str(path))[0])  # OCC001's: the real launch when known
        if compiler_is_legacy(a.program):
            # clang < 16 modelled gfx1100 with 1024 VGPRs in blocks of 16
            assert occupancy(k, legacy=True).compiler_waves == stated.value
            if shown.waves != stated.value:
                (d,) = [d for d in check_analysis(a, ["OCC001"]) if d.code == "OCC001"]
                assert f"the compiler's comment says {stated.value}: LLVM before 16" in d.message
        else:
            assert occ.compiler_waves == stated.value, (k.name, occ)
            if shown.waves != stated.value:
                (d,) = [d for d in check_analysis(a, ["OCC001"]) if d.code == "OCC001"]
                assert f"the compiler's comment says {stated.value}: LLVM counts the waves" in d.message
    if "clang version" in path.read_text():
        assert checked, "compiler output carries an Occupancy comment"


def test_whole_workgroups():
    # kernel 5: 7 waves per SIMD by VGPRs; workgroups of 4 waves over 2 SIMDs: 3 fit, 6 waves per SIMD
    occ = occupancy_for(208, 8320, 128, 32, False)
    assert (occ.waves, occ.groups, occ.by_vgprs, occ.compiler_waves, occ.limits) == (6, 3, 7, 7, ["VGPRs"])
    # one wave per workgroup: no barrier, so no 16-workgroup cap; the waves fill the SIMDs
    occ = occupancy_for(47, 0, 32, 32, False)
    assert (occ.waves, occ.groups) == (16, 32)
    # WGP mode: 128 KiB of LDS for four SIMDs, in LLVM's model too
    occ = occupancy_for(32, 32768, 256, 32, True)
    assert (occ.waves, occ.groups, occ.limits, occ.compiler_waves) == (8, 4, ["LDS"], 8)
    # 3-wave workgroups do not fill 16 slots: 10 per CU, 15 waves per SIMD
    occ = occupancy_for(24, 0, 96, 32, False)
    assert (occ.waves, occ.groups, occ.limits) == (15, 10, ["workgroup size"])
    # a workgroup larger than the VGPRs of its unit: none fits
    occ = occupancy_for(208, 0, 1024, 32, False)
    assert (occ.waves, occ.groups) == (0, 0)


def test_vgpr_steps_gfx1100():
    m32, m64 = vgpr_model(32), vgpr_model(64)
    assert (m32.total, m32.granule, m64.total, m64.granule) == (1536, 24, 768, 12)
    table = {24: 16, 96: 16, 97: 12, 113: 12, 128: 10, 168: 9, 186: 8, 192: 8, 193: 7, 208: 7, 216: 7, 217: 6,
             256: 5}
    assert {v: waves_by_vgprs(v, m32) for v in table} == table
    assert vgprs_for_waves(8, m32) == 192 and vgprs_for_waves(16, m32) == 96
    legacy = vgpr_model(32, legacy=True)
    assert (waves_by_vgprs(113, legacy), waves_by_vgprs(128, legacy), waves_by_vgprs(208, legacy)) == (8, 8, 4)


def test_lds_steps():
    # CU mode: 64 KiB per CU, 2 SIMDs
    assert waves_by_lds(8320, 128, 32, False) == 14  # 7 workgroups of 4 waves
    assert waves_by_lds(32768, 256, 32, False) == 8  # 2 workgroups of 8 waves
    assert waves_by_lds(0, 1024, 32, False) == 16
    # WGP mode: the WGP's 128 KiB over its 4 SIMDs (clang 19's comment on probes/lds_occupancy_wgp.s)
    assert waves_by_lds(32768, 256, 32, True) == 8
    assert waves_by_lds(40000, 256, 32, True) == 6 and waves_by_lds(40000, 256, 32, False) == 4


def test_kernel5_message(kernel5):
    a = Analysis.from_path(str(kernel5))
    (d,) = check_analysis(a, ["OCC001"])
    assert d.severity == "info" and d.line == 1175  # .amdhsa_next_free_vgpr 208
    for piece in ("occupancy 6 waves/SIMD (of 16), limited by VGPRs: 3 workgroups of 4 waves per CU (2 SIMDs)",
                  "208 VGPRs are allocated as 216 (blocks of 24, 1536 per SIMD) -> 7 waves per SIMD, 3 workgroups",
                  "LDS 8320 bytes/workgroup of 64 KiB per CU -> 7 workgroups",
                  "free 16 VGPRs (208 -> 192) for 8 waves (4 workgroups)",
                  "the compiler's comment says 7: LLVM counts the waves the limits allow, not whole workgroups"):
        assert piece in d.message


def test_one_occupancy_in_check_estimate_and_fix(kernel5):
    """OCC001, estimate and the fix table give kernel 5 the same occupancy: the hardware's."""
    import json
    import subprocess
    import sys

    from isalint.fixes.toolkit.registers import waves_with_vgprs

    a = Analysis.from_path(str(kernel5))
    (d,) = check_analysis(a, ["OCC001"])
    est = subprocess.run([sys.executable, "-m", "isalint", "estimate", str(kernel5), "--gemm", "1024",
                          "--format", "json"], capture_output=True, text=True)
    assert est.returncode == 0, est.stderr
    waves = json.loads(est.stdout)["occupancy_waves"]
    assert waves == 6 and d.message.startswith(f"occupancy {waves:g} waves/SIMD")
    assert waves_with_vgprs(a.program.kernels[0], 208) == 6 and waves_with_vgprs(a.program.kernels[0], 192) == 8


def test_lds_limited_suggestion():
    from conftest import SNIPPETS

    a = Analysis.from_path(str(SNIPPETS / "occ001" / "lds_limited.s"))
    (d,) = check_analysis(a, ["OCC001"])
    assert "limited by LDS" in d.message and "at most 21845 bytes of LDS per workgroup for 12 waves" in d.message


def test_json_output(kernel5):
    import json
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "isalint", "check", "--select", "OCC001", "--format", "json",
                           str(kernel5)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr  # an info finding is a note: shown, not failing (--fail-on warning)
    data = json.loads(proc.stdout)
    items = data if isinstance(data, list) else data.get("diagnostics", data)
    assert [(d["code"], d["severity"], d["line"]) for d in items] == [("OCC001", "info", 1175)]
    assert "6 waves/SIMD" in items[0]["message"]


def test_workgroup_size_source(tmp_path):
    """kernel3_reg_tiling.s has no launch bounds (the metadata allows 1024 work-items): beside its
    kernels.json OCC001 uses the recorded launch (256), elsewhere it says the 1024 is an assumption."""
    src = KERNELS / "kernel3_reg_tiling.s"
    text = src.read_text()
    assert ".max_flat_workgroup_size: 1024" in text and ".reqd_workgroup_size" not in text

    def occ001(path):
        (d,) = [d for d in check_analysis(Analysis.from_path(str(path)), ["OCC001"]) if d.code == "OCC001"]
        return d.message

    here = occ001(src)
    assert "workgroups of 256 work-items (8 waves, from the launch in kernels.json)" in here
    assert here.startswith("occupancy 12 waves/SIMD")  # clang's comment says 12 too
    alone = tmp_path / src.name
    alone.write_text(text)
    there = occ001(alone)
    assert "workgroups of 1024 work-items (32 waves, assumed: the kernel has no launch bounds" in there
    assert there.startswith("occupancy 8 waves/SIMD")
    assert "the compiler's comment says 12: LLVM counts the waves" in there
