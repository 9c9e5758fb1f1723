"""Code objects in: the project's fixture kernels assembled into code objects, offload bundles and HIP
fat binaries are read kernel by kernel, checked as their source is, and disassembled into .s files
that assemble back to the same code and descriptor byte for byte. Rocm's Tensile library is read
too when it is present on the machine (skipped otherwise)."""
from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from conftest import KERNELS, SHARED, fixture_kernels

from isalint.binary import bundle, codeobject, listing
from isalint.binary.descriptor import Descriptor

TENSILE = Path(os.environ.get("ISALINT_TENSILE_LIBRARY", "/usr/lib/x86_64-linux-gnu/rocblas/2.47.0/library/"
                              "TensileLibrary_gfx1100.co"))
TENSILE_CORPUS = SHARED / "corpus" / "tensile"


def toolchain_or_skip():
    from isalint.validate.toolchain import ToolchainError, find_toolchain

    try:
        return find_toolchain()
    except ToolchainError as exc:
        pytest.skip(f"no gfx1100 assembler and linker: {exc}")


def build(tc, source: Path, out: Path) -> bytes:
    result = tc.build(str(source), str(out))
    assert result, result.diagnostics
    return out.read_bytes()


def run(*args, cwd=None):
    p = subprocess.run([sys.executable, "-m", "isalint", *map(str, args)], capture_output=True, text=True,
                       cwd=cwd, timeout=600)
    return p.returncode, p.stdout, p.stderr


def _same_code_and_descriptor(original, rebuilt) -> None:
    """The kernel's code (without the zero fill after it) and its descriptor, but for the entry offset
    (bytes 16-23, a relocation: it depends on where the linker put the code)."""
    assert rebuilt.code == original.code.rstrip(b"\0")[:len(rebuilt.code)]
    assert len(original.code.rstrip(b"\0")) <= len(rebuilt.code) <= len(original.code)
    assert rebuilt.descriptor[:16] == original.descriptor[:16]
    assert rebuilt.descriptor[24:] == _written(original)[24:]


def _written(kernel) -> bytes:
    """The descriptor with the fields the listing names as not written by the assembler cleared (clang's
    object writer puts an SGPR block count where GFX10+ reserves the bits)."""
    desc = Descriptor(kernel.descriptor)
    listed = listing.render(kernel)
    raw = bytearray(kernel.descriptor)
    rsrc1 = desc.rsrc1
    for field, lo, width in (("GRANULATED_WAVEFRONT_SGPR_COUNT", 6, 4), ("PRIORITY", 10, 2)):
        if f"; {field} " in listed:
            rsrc1 &= ~(((1 << width) - 1) << lo)
    raw[48:52] = struct.pack("<I", rsrc1)
    return bytes(raw)


# ------------------------------------------------------------------------------------------------
# the fixture kernels as code objects
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("source", fixture_kernels(), ids=lambda p: p.name)
def test_fixture_kernel_round_trips_byte_for_byte(source, tmp_path):
    tc = toolchain_or_skip()
    data = build(tc, source, tmp_path / "k.co")
    kernels, skipped = codeobject.read(data, "k.co")
    assert kernels and not skipped
    for k in kernels:
        text = listing.render(k)
        (tmp_path / "k.s").write_text(text)
        again, _ = codeobject.read(build(tc, tmp_path / "k.s", tmp_path / "again.co"), "again.co")
        assert [x.name for x in again] == [k.name]
        _same_code_and_descriptor(k, again[0])
        # the listing of the rebuilt kernel is the same text: labels, descriptor and metadata included
        assert listing.render(again[0]).splitlines()[2:] == text.splitlines()[2:]


def _finding_shapes(out: str) -> list[tuple]:
    """(code, severity, message) of each finding, with label names and line numbers (which differ
    between a compiler's .s and a listing of its code object) taken out."""
    shapes = []
    for d in json.loads(out):
        message = re.sub(r"\.L\w+", "LABEL", d["message"])
        message = re.sub(r"lines? \d+(-\d+)?", "LINES", message)
        shapes.append((d["code"], d["severity"], message))
    return sorted(shapes)


@pytest.mark.parametrize("name", ["gemm_lds_padded.s", "gemm_wmma_f16.s", "kernel4_gmem_db.s", "gemm_spill.s"])
def test_a_code_object_has_the_findings_of_its_source(name, tmp_path):
    tc = toolchain_or_skip()
    build(tc, KERNELS / name, tmp_path / "k.co")
    code, out, err = run("check", "--no-cache", "--format", "json", tmp_path / "k.co")
    # the source away from its kernels.json: the code object carries no launch either
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / name).write_text((KERNELS / name).read_text())
    code_s, out_s, _ = run("check", "--no-cache", "--format", "json", tmp_path / "src" / name)
    assert code == code_s and err == ""
    assert _finding_shapes(out) == _finding_shapes(out_s)
    assert all(d["kernel"] == "kernel" and d["path"] == str(tmp_path / "k.co") for d in json.loads(out))


def test_text_findings_name_file_kernel_line_column(tmp_path):
    tc = toolchain_or_skip()
    build(tc, KERNELS / "gemm_lds_padded.s", tmp_path / "k.co")
    code, out, err = run("check", "--no-cache", "--no-color", "k.co", cwd=tmp_path)
    assert code == 1
    assert re.search(r"^k\.co:kernel:\d+:\d+: [A-Z]+\d{3} (error|warning|info):", out, re.M)
    assert out.rstrip().endswith("info)") and "1 kernel checked:" in out


def test_kernel_glob_selects_and_reports_no_match(tmp_path):
    tc = toolchain_or_skip()
    build(tc, KERNELS / "gemm_naive.s", tmp_path / "k.co")
    assert run("check", "--no-cache", "--kernel", "kern*", "k.co", cwd=tmp_path)[0] in (0, 1)
    code, out, err = run("check", "--no-cache", "--kernel", "nothing*", "k.co", cwd=tmp_path)
    assert code == 2 and err.strip() == "isalint: k.co:1: no gfx11 kernel matches --kernel nothing*"
    code, out, err = run("check", "--kernel", "k*", KERNELS / "gemm_naive.s")
    assert code == 2 and "--kernel selects kernels of a code object" in err


def test_listing_commands_read_code_objects(tmp_path):
    tc = toolchain_or_skip()
    build(tc, KERNELS / "gemm_lds_padded.s", tmp_path / "k.co")
    code, out, _ = run("dump", "--format", "json", tmp_path / "k.co")
    assert code == 0 and json.loads(out)[0]["opcode"] == "s_load_b128"
    code, out, _ = run("estimate", "--gemm", "512", tmp_path / "k.co")
    assert code == 0 and "TFLOP/s" in out
    code, out, _ = run("report", tmp_path / "k.co")
    assert code == 0 and "VALU issue cycles" in out
    code, out, _ = run("graph", "--format", "dot", tmp_path / "k.co")
    assert code == 0 and out.startswith("digraph")


def test_disasm_writes_assemblable_kernels_and_nothing_on_bad_input(tmp_path):
    tc = toolchain_or_skip()
    build(tc, KERNELS / "gemm_wmma_f16.s", tmp_path / "k.co")
    code, out, err = run("disasm", tmp_path / "k.co", "-o", tmp_path / "out")
    assert code == 0 and (tmp_path / "out" / "kernel.s").is_file()
    build(tc, tmp_path / "out" / "kernel.s", tmp_path / "again.co")
    code, out, err = run("disasm", KERNELS / "gemm_wmma_f16.s", "-o", tmp_path / "none")
    assert code == 2 and "not a code object" in err and not (tmp_path / "none").exists()
    truncated = (tmp_path / "k.co").read_bytes()[:200]
    (tmp_path / "cut.co").write_bytes(truncated)
    for command in (["disasm", tmp_path / "cut.co", "-o", tmp_path / "none"], ["check", tmp_path / "cut.co"]):
        code, out, err = run(*command)
        assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "none").exists()


_IMAGE_KERNEL = """\
\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
\t.amdhsa_code_object_version 5
\t.text
\t.globl k
\t.p2align 8
\t.type k,@function
k:
\timage_sample v[0:3], v[0:1], s[0:7], s[8:11] dmask:0xf dim:SQ_RSRC_IMG_2D
\timage_atomic_add v[4:6], v[0:1], s[0:7] dmask:0x3 dim:SQ_RSRC_IMG_2D glc tfe
\ts_waitcnt vmcnt(0)
\ts_endpgm
.Lend:
\t.size k, .Lend-k
\t.rodata
\t.p2align 6
.amdhsa_kernel k
\t.amdhsa_next_free_vgpr 8
\t.amdhsa_next_free_sgpr 12
.end_amdhsa_kernel
"""


def test_an_encoding_the_decoder_lacks_comes_from_llvm_objdump_or_is_named(tmp_path):
    tc = toolchain_or_skip()
    (tmp_path / "img.s").write_text(_IMAGE_KERNEL)
    build(tc, tmp_path / "img.s", tmp_path / "img.co")
    env = dict(os.environ, ISALINT_OBJDUMP="none")
    p = subprocess.run([sys.executable, "-m", "isalint", "check", "--no-cache", str(tmp_path / "img.co")],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    # the decoder reads image instructions, but not an atomic whose registers LLVM's disassembler
    # writes by their first only (tfe with three data dwords): it stays silent there
    assert "image_atomic_add with 3 data dwords (tfe)" in p.stderr and "address 0x" in p.stderr
    from isalint.binary import objdump

    if objdump.find() is None:
        pytest.skip("no llvm-objdump that knows gfx11 is installed: the fallback is not there to test")
    code, out, err = run("check", "--no-cache", tmp_path / "img.co")
    assert code in (0, 1) and "1 kernel checked" in out
    assert "1 instruction(s) printed by llvm-objdump, which isalint does not decode: image_atomic_add" in err
    kernel = codeobject.read((tmp_path / "img.co").read_bytes(), "img.co")[0][0]
    text = listing.render(kernel, listing.decode_kernel(kernel))
    assert "\timage_sample v[0:3], v[0:1], s[0:7], s[8:11] dmask:0xf dim:SQ_RSRC_IMG_2D\n" in text
    assert "\timage_atomic_add " in text


# ------------------------------------------------------------------------------------------------
# bundles and fat binaries
# ------------------------------------------------------------------------------------------------

def _bundle(entries: list[tuple[str, bytes]]) -> bytes:
    """An uncompressed clang offload bundle of ``entries`` (triple, bytes)."""
    header = bundle.MAGIC + struct.pack("<Q", len(entries))
    size = len(header) + sum(24 + len(t) for t, _ in entries)
    body, table = b"", b""
    for triple, data in entries:
        table += struct.pack("<QQQ", size + len(body), len(data), len(triple)) + triple.encode()
        body += data
    return header + table + body


def _retarget(code_object: bytes, mach: int) -> bytes:
    """The same code object marked for another processor (e_flags' EF_AMDGPU_MACH)."""
    flags, = struct.unpack_from("<I", code_object, 0x30)
    return code_object[:0x30] + struct.pack("<I", (flags & ~0xFF) | mach) + code_object[0x34:]


def test_bundles_compressed_or_not_give_their_gfx11_kernels(tmp_path):
    tc = toolchain_or_skip()
    co = build(tc, KERNELS / "gemm_naive.s", tmp_path / "k.co")
    plain = _bundle([("host-x86_64-unknown-linux-gnu", b""), ("hipv4-amdgcn-amd-amdhsa--gfx1100", co),
                     ("hipv4-amdgcn-amd-amdhsa--gfx1030", _retarget(co, 0x36))])
    kernels, skipped = codeobject.read(plain, "b.hipfb")
    assert [k.name for k in kernels] == ["kernel"] and kernels[0].target == "gfx1100"
    assert len(skipped) == 1 and "gfx1030" in skipped[0].what and "not RDNA3" in skipped[0].why
    # clang's compressed form (format 2: sizes, hash, payload), zlib
    payload = zlib.compress(plain)
    ccob = b"CCOB" + struct.pack("<HHIIQ", 2, 0, 24 + len(payload), len(plain), 0) + payload
    again, _ = codeobject.read(ccob, "c.hipfb")
    assert again[0].code == kernels[0].code
    # zstd cannot be read with the standard library: a clean error saying what to run
    zstd = b"CCOB" + struct.pack("<HHIIQ", 2, 1, 24 + 8, len(plain), 0) + bytes(8)
    (tmp_path / "z.hipfb").write_bytes(zstd)
    code, out, err = run("check", tmp_path / "z.hipfb")
    assert code == 2 and "zstd" in err and "clang-offload-bundler" in err and "Traceback" not in err


def test_hip_fat_binary_in_a_host_object(tmp_path):
    clang = shutil.which("clang-19")
    if clang is None:
        pytest.skip("clang-19 is not installed: it builds the HIP fat binary")
    host = tmp_path / "host.o"
    p = subprocess.run([clang, "-x", "hip", "--offload-arch=gfx1100", "--offload-arch=gfx1030", "-nogpulib", "-O3",
                        "-I/usr/include", "-c", str(KERNELS / "gemm_naive.hip"), "-o", str(host)],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        pytest.skip(f"clang-19 cannot build HIP here: {p.stderr.strip().splitlines()[-1:]}")
    code, out, err = run("check", "--no-cache", "-v", "--no-color", host)
    assert code in (0, 1) and "1 kernel checked, 1 skipped" in out
    assert re.search(r"skipped .*gfx1030.*not RDNA3", err)
    kernels, _ = codeobject.read(host.read_bytes(), str(host))
    assert [k.name for k in kernels] == ["_Z10gemm_naivePKfS0_Pfi"] or len(kernels) == 1
    tc = toolchain_or_skip()
    (tmp_path / "k.s").write_text(listing.render(kernels[0]))
    again, _ = codeobject.read(build(tc, tmp_path / "k.s", tmp_path / "again.co"), "again.co")
    _same_code_and_descriptor(kernels[0], again[0])


def test_a_host_file_without_device_code_is_a_clean_error(tmp_path):
    exe = Path(sys.executable).resolve()
    code, out, err = run("check", exe)
    assert code == 2 and "without HIP device code" in err and len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------------------------------------
# rocBLAS's Tensile library (read from where it is installed; never copied)
# ------------------------------------------------------------------------------------------------

def _tensile():
    if not TENSILE.is_file():
        pytest.skip(f"{TENSILE} is not present (set ISALINT_TENSILE_LIBRARY)")
    import mmap

    with open(TENSILE, "rb") as fh:
        return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)


def test_kernel_select_takes_several_globs_separated_by_commas():
    if not TENSILE.is_file():
        pytest.skip("rocBLAS's Tensile library is not installed")
    names = sorted(k.name for k in codeobject.read(_tensile(), "lib.co")[0])
    first, last = names[0], names[-1]
    assert [k.name for k in codeobject.read(_tensile(), "lib.co", f"{first},{last}")[0]] in \
        ([first, last], [last, first])
    family = first[:first.index("_MT")] + "_MT*"  # a glob and a name together: the union
    both = {k.name for k in codeobject.read(_tensile(), "lib.co", f"{family},{last}")[0]}
    assert both == {n for n in names if fnmatch.fnmatchcase(n, family)} | {last}
    assert codeobject.read(_tensile(), "lib.co", "no_such_kernel,")[0] == []


def test_tensile_library_listings_are_the_corpus_kernels():
    if not TENSILE_CORPUS.is_dir():
        pytest.skip("../shared/corpus/tensile is not present")
    by_addr = {k.code_addr: k for k in codeobject.read(_tensile(), "lib.co")[0]}
    assert len(by_addr) == 4844
    for path in sorted(TENSILE_CORPUS.glob("*.s")):
        ref = path.read_text()
        k = by_addr[int(re.search(r"code at (0x[0-9a-f]+)", ref).group(1), 16)]
        ours = listing.render(k)
        assert [x for x in ours.splitlines() if x.startswith("\t") and not x.startswith("\t.")] == \
            [x for x in ref.splitlines() if x.startswith("\t") and not x.startswith("\t.")], path.name
        meta = lambda text: text[text.index("---"):text.index("\t.end_amdgpu_metadata")]  # noqa: E731
        assert meta(ours) == meta(ref)


def test_tensile_wave64_kernels_round_trip(tmp_path):
    lib = _tensile()
    kernels, _ = codeobject.read(lib, "lib.co", "*_SB_*")
    wave64 = [k for k in kernels if Descriptor(k.descriptor).wave64]
    assert len(wave64) == 4
    tc = toolchain_or_skip()
    for k in wave64:
        text = listing.render(k)
        assert "vcc_lo" not in text and "v_cmp_eq_f32_e64 vcc, s44, 0" in text
        (tmp_path / "k.s").write_text(text)
        again, _ = codeobject.read(build(tc, tmp_path / "k.s", tmp_path / "again.co"), "again.co")
        _same_code_and_descriptor(k, again[0])
