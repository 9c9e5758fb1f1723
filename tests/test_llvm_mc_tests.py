"""LLVM's own gfx11 MC tests: every instruction line LLVM 19 accepts is read by the model.

The tests are read where they are, never copied: ``ISALINT_LLVM_MC_TESTS`` names LLVM's ``test/MC``
directory (``AMDGPU/*.s`` and ``Disassembler/AMDGPU/*.txt``); without it, or without ``llvm-mc-19``,
those tests skip and say so. ``benchmarks/bench_llvm_mc_tests.py`` runs all 99 gfx11 files; here a
subset that covers the classes the model once refused (image instructions, true16 register halves,
wave64 WMMA, typed buffers, LDS, RDNA3.5 SOPP, v_illegal) runs in one batch per RUN configuration:
no PARSE001, no traceback, the model's registers those LLVM's disassembly names, and the decoder's
text LLVM's, in the ``+real-true16`` syntax too (but for image atomics with tfe, whose registers
LLVM writes by their first only: left to ``llvm-objdump``).

The tests below the subset need no LLVM: the benchmark's reading of RUN lines, and the model's
reading of the forms the MC tests showed, on lines of our own.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from isalint.model.program import build_program
from isalint.parse import parse_text

REPO = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("bench_llvm_mc_tests", REPO / "benchmarks" / "bench_llvm_mc_tests.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

SUBSET = ["gfx11_asm_mimg.s", "gfx11_asm_mimg_features.s", "gfx11_asm_vop1.s", "gfx11_asm_vop1_dpp16-fake16.s",
          "gfx11_asm_wmma.s", "gfx11_asm_mtbuf.s", "gfx11_asm_ds.s", "gfx11_asm_smem.s", "gfx11_asm_sopc.s",
          "gfx11_asm_sop1.s", "gfx1150_asm_sopp.s", "v_illegal-atomics.s", "vinterp-fake16.s", "gfx11_asm_vopd.s",
          "gfx11_asm_vop3_dpp16_from_vop1.s", "gfx11_asm_flat.s"]


def _asm_dir() -> Path:
    raw = os.environ.get("ISALINT_LLVM_MC_TESTS")
    if not raw:
        pytest.skip("ISALINT_LLVM_MC_TESTS is not set (LLVM's test/MC directory, e.g. from the llvm-toolchain source)")
    root = Path(raw)
    asm = root / "AMDGPU" if (root / "AMDGPU").is_dir() else root
    if not asm.is_dir() or not any(asm.glob("gfx11_asm_*.s")):
        pytest.skip(f"no gfx11 MC tests under {raw}")
    if shutil.which("llvm-mc-19") is None:
        pytest.skip("llvm-mc-19 not installed")
    return asm


def test_every_line_llvm_accepts_is_read(tmp_path):
    asm = _asm_dir()
    files = [asm / name for name in SUBSET if (asm / name).is_file()]
    assert len(files) >= len(SUBSET) - 2, f"the subset's files are missing from {asm}"
    misses: dict[str, list] = defaultdict(list)
    rows = bench.assembler(files, "llvm-mc-19", False, misses, tmp_path)
    total = Counter()
    for _name, _cpu, _attrs, row in rows:
        total.update(row)
    configs = {(name, attrs) for name, _cpu, attrs, _row in rows}
    assert any("+wavefrontsize64" in attrs for _, attrs in configs)
    assert any("+real-true16" in attrs for _, attrs in configs)
    assert total["accepted"] > 8000 and total["unaligned"] == 0
    refused = [f"{m[3]} ({m[0]}, {m[2]}): {m[4]}" for key, found in misses.items() if not key.startswith("<")
               for m in found]
    assert not refused, f"{len(refused)} accepted lines refused:\n" + "\n".join(refused[:20])
    assert total["tracebacks"] == 0, misses["<tracebacks>"]
    assert total["regs"] == total["regs_total"] > 8000, misses["<registers>"][:10]
    # the decoder leaves to llvm-objdump only image atomics with tfe and three data dwords, which
    # LLVM's disassembler writes by their first registers
    decoder = [d for d in misses["<decoder>"] if not (d[4].startswith("<unknown: image_atomic_") and "tfe" in d[3])]
    assert not decoder, decoder[:10]
    assert len(misses["<decoder>"]) <= 14
    assert total["decoded"] > 3000 and total["decoded16"] > 1000


# -- without LLVM's files ------------------------------------------------------------------------

RUN_TEXT = """\
// RUN: llvm-mc -triple=amdgcn -mcpu=gfx1100 -mattr=+real-true16,+wavefrontsize32 -show-encoding %s \\
// RUN:   | FileCheck --check-prefix=GFX11 %s
// RUN: not llvm-mc -triple=amdgcn -mcpu=gfx1100 -mattr=-wavefrontsize32,+wavefrontsize64 %s 2>&1 | FileCheck %s
// RUN: llvm-mc -triple=amdgcn -mcpu=gfx1010 -show-encoding %s | FileCheck --check-prefix=GFX10 %s
// RUN: llvm-mc -triple=amdgcn -mcpu=gfx1100 -disassemble -show-encoding < %s | FileCheck %s

v_mov_b32 v1, v2 // GFX11: encoding: [0x02,0x03,0x02,0x7e]
// GFX11: v_mov_b32_e32
# GFX11: v_mov_b32_e32 v1, v2   ; encoding: [0x02,0x03,0x02,0x7e]
# GFX11-NEXT: v_nop ; encoding: [{{.*}}]
.set sym, 4
label:
s_mov_b32 s0, sym ; a comment
  v_add_f16 v1.l, v2.h, v3.l
"""


def test_run_lines_give_the_gfx11_configurations():
    assert bench.configurations(RUN_TEXT, disassemble=False) == [
        ("amdgcn", "gfx1100", ("+real-true16", "+wavefrontsize32")),
        ("amdgcn", "gfx1100", ("-wavefrontsize32", "+wavefrontsize64"))]
    assert bench.configurations(RUN_TEXT, disassemble=True) == [("amdgcn", "gfx1100", ())]
    first, second = bench.configurations(RUN_TEXT, disassemble=False)
    assert not bench.wave64(first[2]) and bench.real_true16(first[2])
    assert bench.wave64(second[2]) and not bench.real_true16(second[2])
    assert bench.instruction_lines(RUN_TEXT) == ["v_mov_b32 v1, v2", "s_mov_b32 s0, sym", "v_add_f16 v1.l, v2.h, v3.l"]
    prefixes, checks = bench.check_lines(RUN_TEXT)
    assert prefixes == {("amdgcn", "gfx1100", ()): {"CHECK"}}
    assert checks == {("GFX11", bytes([2, 3, 2, 0x7E])): "v_mov_b32_e32 v1, v2"}


def test_registers_named_by_llvm_text():
    assert bench.named_registers("v_dual_add_f32 v255, v4, v2 :: v_dual_mov_b32 v6, s[2:3]") == \
        {"v255", "v4", "v2", "v6", "s2", "s3"}
    assert bench.named_registers("v_ceil_f16_e32 v5.l, v1.h") == {"v5", "v1"}
    assert bench.named_registers("image_load v[12:13], v0, ttmp[8:15] dmask:0x3") == \
        {"v12", "v13", "v0", *(f"ttmp{i}" for i in range(8, 16))}


def _ins(line: str, wave64: bool = False):
    text = f"\t{line}\n" + ("\t.amdhsa_wavefront_size32 0\n" if wave64 else "")
    ins = build_program(parse_text(text)).instrs[0]
    assert not ins.opaque, ins.problem
    return ins


def test_an_image_address_wider_than_its_dwords_reads_its_dwords_only():
    # a 2D sample with derivatives takes 6 address dwords; the assembler wants 8 registers written
    ins = _ins("image_sample_d v[12:14], v[0:7], s[16:23], s[24:27] dmask:0x7 dim:SQ_RSRC_IMG_2D")
    assert [r for r in ins.uses if r.startswith("v")] == [f"v{i}" for i in range(6)]
    assert ins.defs == ["v12", "v13", "v14"]
    # exactly as wide: all of them
    ins = _ins("image_bvh64_intersect_ray v[20:23], v[40:48], s[24:27] a16")
    assert [r for r in ins.uses if r.startswith("v")] == [f"v{i}" for i in range(40, 49)]


def test_msaa_load_returns_four_samples_and_lwe_keeps_the_written_width():
    assert _ins("image_msaa_load v[8:11], v[0:2], s[16:23] dmask:0x2 dim:SQ_RSRC_IMG_2D_MSAA").defs == \
        ["v8", "v9", "v10", "v11"]
    assert _ins("image_load v[12:13], v[0:1], s[16:23] dmask:0x3 dim:SQ_RSRC_IMG_2D lwe").defs == ["v12", "v13"]
    assert _ins("image_load v[12:14], v[0:1], s[16:23] dmask:0x3 dim:SQ_RSRC_IMG_2D tfe").defs == ["v12", "v13", "v14"]


def test_llvm_only_opcodes_and_no_forms():
    assert _ins("v_illegal").defs == [] and _ins("s_singleuse_vdst 0xffff").uses == []
    ins = _ins("image_load v[12:15], v[0:1], s[16:23] dmask:0xf dim:SQ_RSRC_IMG_2D noa16 nod16 notfe")
    assert ins.defs == ["v12", "v13", "v14", "v15"]  # the bits are clear: four full dwords, no status


DISASSEMBLER_SUBSET = ["gfx11_dasm_mimg.txt", "gfx11_dasm_vop1.txt", "gfx11_dasm_smem.txt", "gfx11_dasm_sopc.txt"]


def test_disassembler_tests_decode_to_their_check_lines(tmp_path):
    """LLVM's disassembler tests: the decoder reads their bytes as ``llvm-mc -disassemble`` does in
    each RUN configuration (+real-true16 and wave64 ones too), and as the files' CHECK lines say."""
    dis = _asm_dir().parent / "Disassembler" / "AMDGPU"
    files = [dis / name for name in DISASSEMBLER_SUBSET if (dis / name).is_file()]
    if not files:
        pytest.skip(f"no disassembler tests under {dis}")
    misses: dict[str, list] = defaultdict(list)
    rows = bench.disassembler(files, "llvm-mc-19", misses, tmp_path)
    total = Counter()
    for _name, _cpu, _attrs, row in rows:
        total.update(row)
    assert not misses["<disassembler>"], misses["<disassembler>"][:10]
    assert total["decoded16"] > 1000 and total["decoded"] > 1000
    assert total["checks"] == total["checks_total"] > 2000
