"""Facts about the project's own fixture kernels (fixtures/kernels).

These tests read the committed .s files directly; they do not use isalint.
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import REPRESENTATIVE, split_slow

KERNELS = Path(__file__).resolve().parents[1] / "fixtures" / "kernels"
ASM_FILES = sorted(p.name for p in KERNELS.glob("*.s"))
LAUNCH = json.loads((KERNELS / "kernels.json").read_text())["kernels"]

CLANG = shutil.which("clang-19")
CXX = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++-19")


def text(name: str) -> str:
    return (KERNELS / name).read_text()


def meta(name: str, key: str) -> int:
    """An integer field of the file's amdhsa.kernels metadata."""
    m = re.search(rf"^\s+\.{key}:\s+(\d+)\s*$", text(name), re.M)
    assert m, f"{name}: no .{key} in metadata"
    return int(m.group(1))


def instructions(name: str) -> list[str]:
    """Instruction lines: comments stripped, labels and directives dropped."""
    out = []
    for line in text(name).splitlines():
        line = line.split(";", 1)[0].strip()
        if line and not line.startswith(".") and not line.endswith(":"):
            out.append(line)
    return out


def test_inventory_is_consistent():
    hip = sorted(p.stem for p in KERNELS.glob("*.hip"))
    assert len(hip) == 15
    for stem in hip:
        assert f"{stem}.s" in ASM_FILES, f"{stem}.hip has no {stem}.s"
    assert set(LAUNCH) == set(ASM_FILES)
    compilers = text("COMPILERS.txt")
    for name, info in LAUNCH.items():
        assert (KERNELS / info["source"]).is_file()
        assert re.search(rf"^{re.escape(name)}: ", compilers, re.M), f"{name} missing in COMPILERS.txt"
    assert {p for p in ASM_FILES if p.endswith(".hipcc.s")} == {
        "gemm_lds_padded.hipcc.s",
        "gemm_register_tiled.hipcc.s",
    }


@pytest.mark.parametrize("name", ASM_FILES)
def test_one_gfx1100_kernel_named_kernel(name):
    src = text(name)
    assert '.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"' in src
    assert re.findall(r"^\s+\.amdhsa_kernel\s+(\S+)", src, re.M) == ["kernel"]
    assert "s_endpgm" in src


@pytest.mark.parametrize("name", ASM_FILES)
def test_block_fits_max_flat_workgroup_size(name):
    block = LAUNCH[name]["block"]
    assert math.prod(block) <= meta(name, "max_flat_workgroup_size")


@pytest.mark.parametrize("name", ASM_FILES)
def test_assembles_and_links(name, tmp_path):
    from isalint.validate.toolchain import ToolchainError, find_toolchain

    try:
        tc = find_toolchain()
    except ToolchainError as exc:
        pytest.skip(f"no gfx1100 assembler and linker: {exc}")
    obj, hsaco = tmp_path / "k.o", tmp_path / "k.hsaco"
    mc = tc.assemble(KERNELS / name, obj)
    assert mc.ok, "\n".join(map(str, mc.diagnostics))
    ld = tc.link(obj, hsaco)
    assert ld.ok, "\n".join(map(str, ld.diagnostics))
    assert hsaco.read_bytes()[:4] == b"\x7fELF"


def scratch_ops(name: str) -> list[str]:
    return [i for i in instructions(name) if i.startswith("scratch_")]


def test_spill_fixture_spills_and_its_fixed_twin_does_not():
    assert "__launch_bounds__" not in text("gemm_spill.hip").split("#include", 1)[1]
    assert "__launch_bounds__(THREADS)" in text("gemm_double_buffered.hip")
    ops = scratch_ops("gemm_spill.s")
    assert any(op.startswith("scratch_store") for op in ops)
    assert any(op.startswith("scratch_load") for op in ops)
    assert meta("gemm_spill.s", "private_segment_fixed_size") > 0
    assert meta("gemm_spill.s", "vgpr_spill_count") > 0
    assert meta("gemm_spill.s", "vgpr_count") <= 96
    assert scratch_ops("gemm_double_buffered.s") == []
    assert meta("gemm_double_buffered.s", "private_segment_fixed_size") == 0


@pytest.mark.parametrize("name", [n for n in ASM_FILES if n not in ("gemm_spill.s", "gemm_lds_padded.hipcc.s")])
def test_other_fixtures_do_not_spill(name):
    assert scratch_ops(name) == []
    assert meta(name, "private_segment_fixed_size") == 0


DS2 = re.compile(r"^ds_load_2addr(_stride64)?_b32\s+v\[\d+:\d+\],\s*v\d+(?:\s+offset0:(\d+))?(?:\s+offset1:(\d+))?")


def lds_row_strides(name: str) -> set[int]:
    """Byte distance between the two addresses of each ds_load_2addr*_b32."""
    strides = set()
    for ins in instructions(name):
        m = DS2.match(ins)
        if m:
            unit = 256 if m.group(1) else 4
            strides.add((int(m.group(3) or 0) - int(m.group(2) or 0)) * unit)
    return strides


def test_transpose_pair_differs_in_as_leading_dimension():
    assert lds_row_strides("lds_transpose_conflict.s") == {128 * 4}
    assert lds_row_strides("lds_transpose_padded.s") == {(128 + 4) * 4}
    assert meta("lds_transpose_conflict.s", "group_segment_fixed_size") == 8 * 128 * 4
    assert meta("lds_transpose_padded.s", "group_segment_fixed_size") == 8 * 132 * 4


SADDR_LOAD = re.compile(r"^global_load_b32\s+v\d+,\s*v\d+,\s*s\[\d+:\d+\]")
VADDR_LOAD = re.compile(r"^global_load_b32\s+v\d+,\s*v\[\d+:\d+\],\s*off\b")


def test_sgpr_base_loads_vs_chained_loads():
    sgpr = [i for i in instructions("gmem_sgpr_base.s") if i.startswith("global_load_b32")]
    assert sum(bool(SADDR_LOAD.match(i)) for i in sgpr) >= 16
    assert all(SADDR_LOAD.match(i) for i in sgpr)

    chained = instructions("gmem_chained.s")
    loads = [i for i in chained if i.startswith("global_load_b32")]
    assert len(loads) >= 16
    assert not any(SADDR_LOAD.match(i) for i in loads)
    assert all(VADDR_LOAD.match(i) for i in loads)
    # each chained load converts its own 32-bit index to a 64-bit byte offset
    assert sum(i.startswith("v_lshlrev_b64") for i in chained) >= 16
    assert sum(i.startswith("v_ashrrev_i32") for i in chained) >= 16


def test_lds_padded_has_the_kernel5_inner_loop_shape():
    ins = instructions("gemm_lds_padded.s")
    assert meta("gemm_lds_padded.s", "group_segment_fixed_size") == 8 * 132 * 4 + 8 * 128 * 4
    assert meta("gemm_lds_padded.s", "max_flat_workgroup_size") == 128
    assert sum(i.startswith("ds_load_b128") for i in ins) == 6
    assert sum(i.startswith("v_dual_fmac_f32") for i in ins) >= 60
    # the As read pointer advances by one padded row (132 floats) per k
    assert any(re.match(r"v_add_nc_u32_e32\s+(v\d+),\s*0x210,\s*\1$", i) for i in ins)


def test_hipcc_outputs_use_code_object_v4():
    for name in ("gemm_lds_padded.hipcc.s", "gemm_register_tiled.hipcc.s"):
        src = text(name)
        assert ".amdhsa_code_object_version" not in src
        assert re.search(r"^amdhsa\.version:\s*\n\s+- 1\n\s+- 1\n", src, re.M)
        assert "clang version 15" in src
    assert ".amdhsa_code_object_version 5" in text("gemm_lds_padded.s")


def recorded_clang_commands() -> list[tuple[str, str]]:
    return re.findall(r"^(\S+\.s): (clang-19 .*)$", text("COMPILERS.txt"), re.M)


@pytest.mark.parametrize("every", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_clang19_output_is_reproducible(tmp_path, every):
    """The recorded commands rebuild the committed .s byte for byte: by default one kernel (the
    kernel-5-style fixture), every one in the slow run."""
    if not CLANG:
        pytest.skip("clang-19 not installed")
    recorded = text("COMPILERS.txt").split("## clang-19 --version\n", 1)[1].splitlines()[0]
    have = subprocess.run([CLANG, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    if have != recorded:
        pytest.skip(f"installed clang-19 is '{have}', fixtures were built with '{recorded}'")
    cmds = recorded_clang_commands()
    assert len(cmds) == 16  # the fifteen sources, and gemm_lds_tiled again in WGP mode
    include_dirs = {d for _, cmd in cmds for d in re.findall(r"-I(\S+)", cmd)}
    if not any((Path(d) / "hip" / "hip_runtime.h").is_file() for d in include_dirs):
        pytest.skip(f"the HIP headers (hip/hip_runtime.h under {sorted(include_dirs)}) are not installed: "
                    "apt-get install libamdhip64-dev")

    def rebuild(item: tuple[str, str]) -> tuple[str, subprocess.CompletedProcess]:
        name, cmd = item
        argv = shlex.split(cmd)
        argv[0] = CLANG
        argv[argv.index("-o") + 1] = str(tmp_path / name)
        return name, subprocess.run(argv, cwd=KERNELS, capture_output=True, text=True)

    if not every:
        cmds = [c for c in cmds if c[0] == "gemm_lds_padded.s"]
        assert len(cmds) == 1
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for name, res in pool.map(rebuild, cmds):
            assert res.returncode == 0, res.stderr
            assert (tmp_path / name).read_bytes() == (KERNELS / name).read_bytes(), f"{name} differs from a rebuild"


GRID_DIM = re.compile(r"^(?:ceil\(N/(\d+)\)|N/(\d+))$")


def grid_of(expr: str, n: int) -> list[int]:
    """Evaluate a kernels.json grid such as 'N/8,N/128' or 'ceil(N/16),ceil(N/16)'."""
    dims = []
    for part in expr.split(","):
        m = GRID_DIM.match(part.strip())
        assert m, f"unsupported grid expression {part!r}"
        if m.group(1):
            dims.append(-(-n // int(m.group(1))))
        else:
            assert n % int(m.group(2)) == 0
            dims.append(n // int(m.group(2)))
    return dims


def cpu_geometry(name: str) -> tuple[int, list[int]]:
    info = LAUNCH[name]
    # N = 40 is not a multiple of the naive kernel's 16x16 block, so its bounds
    # check runs; the tiled kernels get two tiles per dimension.
    n = 40 if info["n_multiple"] == 1 else max(info["min_n"], 2 * info["n_multiple"])
    return n, grid_of(info["grid"], n)


def test_grid_expressions():
    assert cpu_geometry("gemm_naive.s") == (40, [3, 3])
    assert cpu_geometry("gemm_lds_tiled.s") == (64, [2, 2])
    assert cpu_geometry("gemm_lds_padded.s") == (256, [2, 2])
    assert cpu_geometry("lds_transpose_padded.s") == (256, [32, 2])


# cpu_check.cpp has no host version of the WMMA builtin: gemm_wmma_f16 is checked against numpy in
# the emulator instead (tests/test_emu_wmma.py).
@pytest.mark.parametrize("name", split_slow(sorted(n for n in LAUNCH
                                                    if not n.endswith(".hipcc.s") and LAUNCH[n]["abi"] != "gemm_f16"),
                                             REPRESENTATIVE))
def test_source_computes_what_kernels_json_says(name, tmp_path):
    if not CXX:
        pytest.skip("no host C++ compiler to run cpu_check.cpp")
    info = LAUNCH[name]
    exe = tmp_path / "check"
    build = subprocess.run(
        [CXX, "-std=c++20", "-O1", "-pthread", f'-DKERNEL_SOURCE="{info["source"]}"', "cpu_check.cpp", "-o", str(exe)],
        cwd=KERNELS,
        capture_output=True,
        text=True,
    )
    if build.returncode != 0 and "barrier" in build.stderr:
        pytest.skip(f"{CXX} lacks C++20 <barrier>")
    assert build.returncode == 0, build.stderr
    n, grid = cpu_geometry(name)
    bx, by, _ = info["block"]
    run = subprocess.run(
        [str(exe), info["abi"], str(n), str(bx), str(by), str(grid[0]), str(grid[1])],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("name", ASM_FILES)
def test_worklog_kernels_1_to_4_are_built_in_wgp_mode(name):
    """kernel[1-4]_* are built as the worklog built them (WGP mode), and *.wgp.s in WGP mode by name;
    every other fixture in CU mode."""
    mode = re.search(r"^\s+\.amdhsa_workgroup_processor_mode\s+(\d)", text(name), re.M)
    worklog = re.match(r"kernel[1-4]_", name) is not None or name.endswith(".wgp.s")
    if mode is None:  # code object v4 (hipcc 5.2) leaves the directive out
        assert name.endswith(".hipcc.s")
        return
    assert mode.group(1) == ("1" if worklog else "0")
    if worklog and "s_barrier" in text(name):
        assert "buffer_gl0_inv" in text(name)  # the WGP-mode acquire after each barrier
