"""META001 and ``isalint fix --metadata`` on real compiler output and on hand edits of kernel5."""
from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import all_real_kernels

from isalint.analysis import Analysis
from isalint.lint.engine import check_analysis
from isalint.fixes import FixRefused
from isalint.fixes import metadata as fix_metadata
from isalint.parse.source import parse_text

FMAC_LAST = "\tv_fmac_f32_e32 v2, v191, v207\n"


def analysis_of(text: str, path: str = "kernel5_edit.s") -> Analysis:
    return Analysis.from_source(parse_text(text, path))


def meta(analysis):
    return [d for d in check_analysis(analysis, ["META001"]) if d.code == "META001"]


def _compiler_output(path) -> bool:
    return "clang version" in path.read_text()


@pytest.mark.parametrize("path", all_real_kernels(), ids=lambda p: p.name)
def test_no_error_on_real_kernels(path):
    found = meta(Analysis.from_path(str(path)))
    assert [d for d in found if d.severity == "error"] == []
    if _compiler_output(path):
        # LLVM's own counts: no finding at all (VCC is in NumSgprs/.sgpr_count, not in next_free_sgpr)
        assert found == [], [d.message for d in found]


def test_kernel5_resources(kernel5):
    from isalint.model.resources import comment_fields, kernel_resources, metadata_fields

    a = Analysis.from_path(str(kernel5))
    k = a.program.kernels[0]
    res = kernel_resources(a.program, k)
    assert (res.max_vgpr, res.vgprs, res.max_sgpr, res.sgprs, res.uses_vcc, res.extra_sgprs) == (
        207, 208, 15, 16, True, 2)
    assert res.lds_min <= 8320
    md = metadata_fields(a.program)["kernel"]
    assert (md[".vgpr_count"].value, md[".sgpr_count"].value, md[".group_segment_fixed_size"].value) == (
        208, 18, 8320)
    cm = comment_fields(a.program)["kernel"]
    assert {k: f.value for k, f in cm.items()}.items() >= {"NumVgprs": 208, "NumSgprs": 18, "VGPRBlocks": 25,
                                                            "SGPRBlocks": 2, "Occupancy": 7}.items()


def _v208(kernel5) -> str:
    text = kernel5.read_text()
    assert text.count(FMAC_LAST) == 1
    return text.replace(FMAC_LAST, "\tv_fmac_f32_e32 v2, v191, v208\n")


def test_one_vgpr_beyond_the_declared_count(kernel5):
    text = _v208(kernel5)
    found = meta(analysis_of(text))
    errors = [d for d in found if d.severity == "error"]
    line = text.splitlines().index(FMAC_LAST.replace("v207", "v208").rstrip("\n")) + 1
    assert [(d.line, d.code) for d in errors][0] == (line, "META001")
    assert "v208 is used but .amdhsa_next_free_vgpr is 208" in errors[0].message
    # the metadata's count is read by the runtime's occupancy queries, not by the allocation: a warning
    warnings = [d.message for d in found if d.severity == "warning"]
    assert any(".vgpr_count is 208 but the code needs 209 VGPRs (the runtime's occupancy" in m for m in warnings)
    stale = {d.message.split(" is stale")[0] for d in found if d.severity == "info"}
    assert stale == {"comment NumVgprs 208", "comment NumVGPRsForWavesPerEU 208", "comment VGPRBlocks 25"}


def test_fix_metadata_makes_it_clean_and_keeps_every_other_byte(kernel5):
    text = _v208(kernel5)
    result = fix_metadata.apply(analysis_of(text), {})
    assert meta(analysis_of(result.text)) == []
    before, after = text.splitlines(keepends=True), result.text.splitlines(keepends=True)
    assert len(before) == len(after)
    changed = [(n + 1, b, a) for n, (b, a) in enumerate(zip(before, after)) if b != a]
    assert [(b.strip(), a.strip()) for _n, b, a in changed] == [
        (".amdhsa_next_free_vgpr 208", ".amdhsa_next_free_vgpr 209"),
        ("; NumVgprs: 208", "; NumVgprs: 209"),
        ("; VGPRBlocks: 25", "; VGPRBlocks: 26"),
        ("; NumVGPRsForWavesPerEU: 208", "; NumVGPRsForWavesPerEU: 209"),
        (".vgpr_count:     208", ".vgpr_count:     209"),
    ]
    # only the digits moved: tabs, spacing and line endings are the original's
    for _n, b, a in changed:
        assert b.replace("208", "#").replace("25", "#") == a.replace("209", "#").replace("26", "#")
    assert "Occupancy: 7" in result.text  # 209 VGPRs still allocate 216: 7 waves
    assert ".amdhsa_next_free_vgpr 208 -> 209" in result.summary
    # a clean file is left alone
    again = fix_metadata.apply(analysis_of(result.text), {})
    assert again.text == result.text


def _kernel_descriptor(obj: bytes, symbol: str) -> bytes:
    """The 64-byte kernel descriptor ``symbol`` in a relocatable ELF64 object."""
    shoff, = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + n * shentsize) for n in range(shnum)]
    for sh in sections:
        if sh[1] != 2:  # SHT_SYMTAB
            continue
        strtab = sections[sh[6]]
        for off in range(sh[4], sh[4] + sh[5], 24):
            name_off, _info, _other, shndx, value, _size = struct.unpack_from("<IBBHQQ", obj, off)
            start = strtab[4] + name_off
            name = obj[start:obj.index(b"\0", start)].decode()
            if name == symbol:
                return obj[sections[shndx][4] + value:][:64]
    raise AssertionError(f"{symbol} not in the object")


def test_fixed_file_assembles_with_the_new_vgpr_blocks(kernel5, tmp_path):
    from isalint.validate.toolchain import ToolchainNotFound, find_toolchain

    try:
        tc = find_toolchain(need_linker=False)
    except ToolchainNotFound as exc:
        pytest.skip(f"no gfx1100 assembler: {exc}")
    fixed = fix_metadata.apply(analysis_of(_v208(kernel5)), {}).text
    src = tmp_path / "fixed.s"
    src.write_text(fixed)
    res = tc.assemble(src, tmp_path / "fixed.o")
    assert res.ok, [d.format() for d in res.errors]
    kd = _kernel_descriptor((tmp_path / "fixed.o").read_bytes(), "kernel.kd")
    rsrc1, = struct.unpack_from("<I", kd, 48)
    assert rsrc1 & 0x3F == 26  # 209 VGPRs: 27 blocks of 8, encoded as blocks - 1
    orig = tmp_path / "orig.s"
    orig.write_text(kernel5.read_text())
    assert tc.assemble(orig, tmp_path / "orig.o").ok
    assert struct.unpack_from("<I", _kernel_descriptor((tmp_path / "orig.o").read_bytes(), "kernel.kd"), 48)[0] \
        & 0x3F == 25  # 208 VGPRs: 26 blocks, encoded 25


def test_sgpr_beyond_declared_count(kernel5):
    text = kernel5.read_text()
    assert text.count("\ts_mov_b32 s14, 0\n") == 1
    text = text.replace("\ts_mov_b32 s14, 0\n", "\ts_mov_b32 s16, 0\n")
    found = meta(analysis_of(text))
    # since gfx10 every wave gets all its SGPRs: a count too low misleads tools, it does not break the kernel
    assert [d for d in found if d.severity != "info"] == []
    messages = [d.message for d in found]
    assert any("s16 is used but .amdhsa_next_free_sgpr is 16; declare 17 (harmless on gfx11" in m for m in messages)
    assert "metadata .sgpr_count 18 is stale: the code needs 19 SGPRs (incl. 2 for VCC)" in messages
    fixed = fix_metadata.apply(analysis_of(text), {}).text
    assert meta(analysis_of(fixed)) == []
    for piece in (".amdhsa_next_free_sgpr 17", "; NumSgprs: 19", ".sgpr_count:     19", "; SGPRBlocks: 2",
                  "; NumSGPRsForWavesPerEU: 19"):
        assert piece in fixed


def test_legacy_compiler_occupancy_comment_recomputed():
    from conftest import KERNELS

    path = KERNELS / "gemm_lds_padded.hipcc.s"
    if not path.is_file():
        pytest.skip("fixture gemm_lds_padded.hipcc.s absent")
    text = path.read_text()
    a = analysis_of(text, str(path))
    k = a.program.kernels[0]
    assert k.descriptor[".amdhsa_next_free_vgpr"] == 128
    # use v128: 129 VGPRs; clang 15's model (1024 VGPRs in blocks of 16) then gives 7 waves
    instr = next(i for i in a.program.instrs if i.opcode == "v_mov_b32_e32" and i.defs and i.defs[0] != "v128")
    lines = text.splitlines(keepends=True)
    n = instr.lineno - 1
    lines[n] = lines[n].replace(instr.defs[0] + ",", "v128,", 1)
    result = fix_metadata.apply(analysis_of("".join(lines), str(path)), {})
    assert "; Occupancy: 7" in result.text and "Occupancy 8 -> 7" in result.summary


def test_refuses_indirect_register_addressing():
    text = ('\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"\nkernel:\n\ts_mov_b32 m0, 2\n'
            "\tv_movrels_b32_e32 v1, v2\n\ts_endpgm\n\t.amdhsa_kernel kernel\n\t\t.amdhsa_next_free_vgpr 3\n"
            "\t\t.amdhsa_next_free_sgpr 0\n\t.end_amdhsa_kernel\n")
    with pytest.raises(FixRefused, match="M0"):
        fix_metadata.apply(analysis_of(text, "movrel.s"), {})


def test_cli_fix_and_json(kernel5, tmp_path):
    bad = tmp_path / "k5_v208.s"
    bad.write_text(_v208(kernel5))
    proc = subprocess.run([sys.executable, "-m", "isalint", "check", "--select", "META001", "--format", "json",
                           str(bad)], capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    items = data if isinstance(data, list) else data.get("diagnostics", data)
    assert any(d["code"] == "META001" and d["severity"] == "error" and "v208" in d["message"] for d in items)
    out = tmp_path / "fixed.s"
    proc = subprocess.run([sys.executable, "-m", "isalint", "fix", "--metadata", "--no-validate", "-o", str(out),
                           str(bad)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([sys.executable, "-m", "isalint", "check", "--select", "META001", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_wave_size_consistency():
    body = ('\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"\n\t.globl kernel\n\t.type kernel,@function\nkernel:\n'
            "\tv_cmp_gt_u32_e32 vcc_lo, 64, v0\n\ts_and_saveexec_b32 s4, vcc_lo\n\ts_endpgm\n"
            "\t.amdhsa_kernel kernel\n\t\t.amdhsa_user_sgpr_count 2\n\t\t.amdhsa_wavefront_size32 0\n"
            "\t\t.amdhsa_next_free_vgpr 1\n\t\t.amdhsa_next_free_sgpr 5\n\t.end_amdhsa_kernel\n"
            "\t.amdgpu_metadata\n---\namdhsa.kernels:\n  - .name:           kernel\n    .symbol:         kernel.kd\n"
            "    .wavefront_size: 32\n...\n\t.end_amdgpu_metadata\n")
    found = meta(analysis_of(body, "w64.s"))
    errors = sorted((d.line, d.message.split(":")[0]) for d in found if d.severity == "error")
    assert errors == [(5, "vcc_lo is half a lane mask, but this is a wave64 kernel (.amdhsa_wavefront_size32 0)"),
                      (6, "vcc_lo is half a lane mask, but this is a wave64 kernel (.amdhsa_wavefront_size32 0)"),
                      (19, "metadata .wavefront_size 32 disagrees with the descriptor (.amdhsa_wavefront_size32 0")]


def test_text_output_names_the_fix_command_once(kernel5, tmp_path):
    bad = tmp_path / "k5_v208.s"
    bad.write_text(_v208(kernel5))
    proc = subprocess.run([sys.executable, "-m", "isalint", "check", "--select", "META001", "--no-cache", str(bad)],
                          capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert "= fix: isalint fix --metadata" in proc.stdout
    assert "isalint fix isalint" not in proc.stdout


def test_every_rule_names_its_fix_as_a_fix_option():
    from isalint.rules import all_rules

    for module in all_rules():
        assert module.FIXABLE is None or module.FIXABLE.startswith("--"), module.CODE


TENSILE = Path(os.environ.get("ISALINT_TENSILE_LIBRARY", "/usr/lib/x86_64-linux-gnu/rocblas/2.47.0/library/"
                              "TensileLibrary_gfx1100.co"))
# One kernel of each data type of rocBLAS's Tensile library for gfx1100 (half, bf16, int8, single in
# wave64) at two macro-tile sizes.
TENSILE_KINDS = ["*_HHS_BH_MT128x128x16_*", "*_HB_MT64x64x32_*", "*_BBS_BH_MT32x32x32_*", "*_I8II_BH_*MT64x64x16_*",
                 "*_SB_MT*_WS64_*", "*_HHS_BH_MT64x64x32_*"]


@pytest.mark.parametrize("pattern", TENSILE_KINDS)
def test_no_false_error_on_tensile_kernels(pattern):
    """Hand-scheduled production code: PARSE001 reads every line, and META001 and SCRATCH001 find
    nothing worse than a note (Tensile's counts are its own, one SGPR or VGPR off LLVM's convention)."""
    if not TENSILE.is_file():
        pytest.skip("rocBLAS's TensileLibrary_gfx1100.co is not installed (set ISALINT_TENSILE_LIBRARY)")
    import mmap

    from isalint.binary import codeobject, listing

    with open(TENSILE, "rb") as fh:
        lib = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        kernels, _ = codeobject.read(lib, "lib.co", pattern)
    assert kernels, pattern
    k = kernels[0]
    analysis = Analysis.from_source(parse_text(listing.render(k), k.name))
    found = [d for d in check_analysis(analysis, ["PARSE001", "META001", "SCRATCH001"])]
    assert not [d for d in found if d.code == "PARSE001"], [d.message for d in found if d.code == "PARSE001"]
    assert all(d.severity == "info" for d in found), [(d.code, d.severity, d.message) for d in found]
