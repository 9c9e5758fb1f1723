"""The real-assembler bridge: discovery, assembling, linking, diagnostics and the show_inst oracle."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from isalint.commands.assemble import command as assemble_cmd
from isalint.validate import toolchain as tcmod
from isalint.validate.toolchain import (
    Toolchain,
    ToolchainNotFound,
    find_toolchain,
    parse_diagnostics,
)

REPO = Path(__file__).resolve().parents[1]
KERNEL5 = REPO.parent / "shared" / "corpus" / "kernel5.s"
EM_AMDGPU = 0xE0

# A tiny complete code object: one kernel with its descriptor, enough for ld.lld to link.
TINY_KERNEL = """\
\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
\t.text
\t.globl tiny
\t.p2align 8
\t.type tiny,@function
tiny:
\tv_mov_b32 v0, 0
\ts_endpgm
\t.rodata
\t.p2align 6
\t.amdhsa_kernel tiny
\t\t.amdhsa_next_free_vgpr 1
\t\t.amdhsa_next_free_sgpr 0
\t.end_amdhsa_kernel
"""


@pytest.fixture(autouse=True)
def _no_forced_toolchain(monkeypatch):
    monkeypatch.delenv("ISALINT_ASSEMBLER", raising=False)


@pytest.fixture(scope="module")
def llvm() -> Toolchain:
    try:
        return find_toolchain("llvm")
    except ToolchainNotFound as exc:
        pytest.skip(f"no gfx1100-capable llvm-mc on PATH: {exc.reason}")


def _kernel5() -> Path:
    if not KERNEL5.is_file():
        pytest.skip(f"{KERNEL5} absent (../shared is not checked out beside the repo)")
    return KERNEL5


def elf_symbols(path: Path) -> tuple[int, set[str]]:
    """(e_machine, names of all symbols in .symtab/.dynsym) of a little-endian ELF64 file."""
    data = path.read_bytes()
    assert data[:4] == b"\x7fELF", f"{path} is not an ELF file"
    assert data[4] == 2 and data[5] == 1, "expected ELF64 little-endian"
    e_machine = struct.unpack_from("<H", data, 18)[0]
    e_shoff = struct.unpack_from("<Q", data, 0x28)[0]
    e_shentsize, e_shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = []
    for i in range(e_shnum):
        # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, sh_link, sh_info, sh_addralign, sh_entsize
        sections.append(struct.unpack_from("<IIQQQQIIQQ", data, e_shoff + i * e_shentsize))
    names = set()
    for sh in sections:
        if sh[1] not in (2, 11):  # SHT_SYMTAB, SHT_DYNSYM
            continue
        off, size, link, entsize = sh[4], sh[5], sh[6], sh[9]
        str_off = sections[link][4]
        for j in range(size // entsize):
            st_name = struct.unpack_from("<I", data, off + j * entsize)[0]
            end = data.index(b"\0", str_off + st_name)
            names.add(data[str_off + st_name:end].decode())
    return e_machine, names


# --------------------------------------------------------------------------- discovery


def test_discovery_finds_versioned_llvm(llvm):
    assert llvm.name == "llvm"
    exe = Path(llvm.assembler[0]).name
    assert exe.startswith("llvm-mc"), exe
    assert llvm.linker and "ld.lld" in Path(llvm.linker[0]).name
    assert llvm.knows_gfx1100()
    if shutil.which("llvm-mc-19") and not shutil.which("llvm-mc-20"):
        assert exe == "llvm-mc-19"
    auto = find_toolchain()
    assert auto.name in ("rocm", "llvm")


def test_probe_rejects_assembler_without_gfx1100():
    mc = shutil.which("llvm-mc")
    if not mc:
        pytest.skip("no plain llvm-mc on PATH")
    ver = subprocess.run([mc, "--version"], capture_output=True, text=True).stdout
    major = next((int(w.split(".")[0]) for w in ver.split() if w[:1].isdigit() and "." in w), None)
    if major is None or major >= 15:
        pytest.skip(f"plain llvm-mc is LLVM {major}, which may know gfx1100")
    ok, why = Toolchain("path", (mc,), "llvm-mc", None).probe()
    assert not ok and "gfx1100" in why
    with pytest.raises(ToolchainNotFound, match="does not know gfx1100"):
        find_toolchain(mc)


def test_not_found_lists_three_options(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(tcmod, "_rocm_roots", lambda: [str(tmp_path / "rocm")])
    monkeypatch.setattr(tcmod, "_zig_available", lambda: False)
    with pytest.raises(ToolchainNotFound) as info:
        find_toolchain()
    msg = str(info.value)
    assert "\n" not in msg
    assert "(1) ROCm" in msg and "ROCM_PATH" in msg
    assert "(2) Debian/Ubuntu: apt-get install llvm-19 lld-19" in msg
    assert "(3) pip install ziglang" in msg and "isalint[toolchain]" in msg


def test_cli_without_toolchain_exits_2_with_one_line(monkeypatch, tmp_path):
    src = tmp_path / "k.s"
    src.write_text(TINY_KERNEL)
    monkeypatch.setenv("ISALINT_ASSEMBLER", "none")
    res = CliRunner().invoke(assemble_cmd, [str(src), "-o", str(tmp_path / "k.hsaco")])
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "apt-get install llvm-19 lld-19" in lines[0]
    assert not (tmp_path / "k.hsaco").exists()


def test_cli_unreadable_input_exits_2(tmp_path):
    res = CliRunner().invoke(assemble_cmd, [str(tmp_path / "missing.s")])
    assert res.exit_code == 2
    assert res.stderr.strip() == f"{tmp_path / 'missing.s'}: error: cannot read: No such file or directory"


# --------------------------------------------------------------------------- assembling


def test_assemble_kernel5_to_hsaco(llvm, tmp_path, monkeypatch):
    src = _kernel5()
    out = tmp_path / "k5.hsaco"
    monkeypatch.setenv("ISALINT_ASSEMBLER", "llvm")
    res = CliRunner().invoke(assemble_cmd, [str(src), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "llvm toolchain" in res.stderr
    machine, syms = elf_symbols(out)
    assert machine == EM_AMDGPU
    assert {"kernel", "kernel.kd"} <= syms
    assert list(tmp_path.iterdir()) == [out]  # no temporaries left behind


def test_broken_line_reported_at_its_line(llvm, tmp_path):
    lines = _kernel5().read_text().splitlines()
    target = next(i for i, ln in enumerate(lines) if ln.strip().startswith("v_add_nc_u32"))
    lines[target] = "\tv_add_nc_u32_e32 v3, s4, v1, v2"  # one operand too many
    bad = tmp_path / "bad.s"
    bad.write_text("\n".join(lines) + "\n")
    out = tmp_path / "bad.hsaco"
    res = CliRunner().invoke(assemble_cmd, [str(bad), "-o", str(out), "--toolchain", "llvm"])
    assert res.exit_code == 1, res.output
    errs = [ln for ln in res.stderr.splitlines() if ": error: " in ln]
    assert errs and errs[0].startswith(f"{bad}:{target + 1}:")
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [bad]


def test_assemble_text_diagnostics_are_structured(llvm, tmp_path):
    obj = tmp_path / "t.o"
    res = llvm.assemble("s_endpgm\n  v_bogus v0\ns_mov_b32 s0, s1 s2\n", obj, source_name="t.s")
    assert not res.ok and not obj.exists()
    got = [(d.path, d.line, d.column, d.severity) for d in res.errors]
    assert got == [("t.s", 2, 3, "error"), ("t.s", 3, 18, "error")]
    assert res.errors[0].format() == "t.s:2:3: error: invalid instruction"


def test_link_error_exits_1(llvm, tmp_path):
    src = tmp_path / "u.s"
    src.write_text(TINY_KERNEL.replace("\tv_mov_b32 v0, 0\n",
                                       "\ts_getpc_b64 s[0:1]\n\ts_add_u32 s0, s0, nowhere@rel32@lo+4\n"))
    res = CliRunner().invoke(assemble_cmd, [str(src), "--toolchain", "llvm"])
    assert res.exit_code == 1, res.output
    assert "undefined symbol: nowhere" in res.stderr
    assert not (tmp_path / "u.hsaco").exists()


def test_obj_only(llvm, tmp_path):
    src = tmp_path / "tiny.s"
    src.write_text(TINY_KERNEL)
    res = CliRunner().invoke(assemble_cmd, [str(src), "--obj-only", "--toolchain", "llvm"])
    assert res.exit_code == 0, res.output
    machine, syms = elf_symbols(tmp_path / "tiny.o")
    assert machine == EM_AMDGPU and "tiny.kd" in syms


def test_zig_toolchain_builds_kernel(tmp_path):
    if not tcmod._zig_available():
        pytest.skip("ziglang is not installed (pip install ziglang)")
    zig = find_toolchain("zig")
    src = KERNEL5 if KERNEL5.is_file() else None
    if src is None:
        src = tmp_path / "tiny.s"
        src.write_text(TINY_KERNEL)
    out = tmp_path / "z.hsaco"
    res = zig.build(src, out)
    assert res.ok, [str(d) for d in res.diagnostics]
    machine, syms = elf_symbols(out)
    assert machine == EM_AMDGPU
    assert ("kernel.kd" if src == KERNEL5 else "tiny.kd") in syms


# --------------------------------------------------------------------------- the oracle


def test_show_inst_per_line_verdicts(llvm):
    lines = [
        "s_endpgm",
        "v_bogus v0",
        "v_fma_f32 v0, v1, v2, v3",
        "v_dual_mov_b32 v0, v1 :: v_dual_mov_b32 v2, v3",  # VOPD: both dsts even
        "v_dual_mov_b32 v0, v1 :: v_dual_mov_b32 v3, v4",
        "s_cbranch_scc1 .LBB0_2",
        "s_mov_b32 s0, s1 s2",
    ]
    got = llvm.show_inst(lines)
    assert [c.accepted for c in got] == [True, False, True, False, True, True, False]
    assert [c.line for c in got] == lines
    assert got[0].encoding == bytes([0x00, 0x00, 0xB0, 0xBF]) and got[0].opcode.startswith("S_ENDPGM")
    assert got[1].error == "invalid instruction" and got[1].diagnostics[0].line == 2
    assert "even" in got[3].error and got[3].diagnostics[0].line == 4
    fma = got[2]
    assert fma.size == 8 and fma.opcode.startswith("V_FMA_F32_e64")
    assert sum(op.kind == "Reg" for op in fma.operands) == 4
    vopd = got[4]
    assert vopd.size == 8 and vopd.text.startswith("v_dual_mov_b32")
    assert sum(op.kind == "Reg" for op in vopd.operands) == 4
    assert got[5].has_fixup and got[5].operands[0].kind == "Expr"


def test_show_inst_large_batch_keeps_line_mapping(llvm):
    lines = [f"v_add_f32 v{i % 200}, v1, v2" if i % 3 else "v_add_f32 v0, v1" for i in range(3000)]
    got = llvm.show_inst(lines)
    assert len(got) == 3000
    assert all(c.accepted == bool(i % 3) for i, c in enumerate(got))
    assert got[4].encoding == llvm.show_inst(["v_add_f32 v4, v1, v2"])[0].encoding
    assert got[4].text == "v_add_f32_e32 v4, v1, v2"
    assert all(c.diagnostics[0].line == i + 1 for i, c in enumerate(got) if not c.accepted)


def test_parse_diagnostics_forms():
    text = (
        "k.s:7:12: error: invalid operand for instruction\n"
        "\tv_mov_b32 v0, v1 v2\n"
        "\t           ^\n"
        "ld.lld-19: error: undefined symbol: foo\n"
        ">>> referenced by k.o:(.text+0x8)\n"
    )
    d = parse_diagnostics(text, default_path="k.o")
    assert [x.format() for x in d] == [
        "k.s:7:12: error: invalid operand for instruction",
        "k.o: error: undefined symbol: foo (referenced by k.o:(.text+0x8))",
    ]


@pytest.mark.parametrize("kind", ["llvm", "zig"])
def test_opcode_newer_than_the_assembler_is_explained(kind, tmp_path):
    try:
        tc = find_toolchain(kind, need_linker=False)
    except ToolchainNotFound as exc:
        pytest.skip(f"no {kind} toolchain: {exc.reason}")
    text = TINY_KERNEL.replace("\tv_mov_b32 v0, 0\n", "\tv_dual_dot2acc_f32_bf16 v0, v2, v4 :: v_dual_mov_b32 v1, v3\n")
    result = tc.assemble(text, tmp_path / "k.o", source_name="k.s")
    if result.ok:  # LLVM 20 and newer assemble it
        assert (tmp_path / "k.o").is_file()
        return
    (err,) = result.errors
    assert err.line == 7 and err.path == "k.s"
    assert "v_dual_dot2acc_f32_bf16 is a gfx11 opcode of the RDNA3 ISA guide" in err.message
    assert "too old to assemble it: LLVM 20 or newer does" in err.message
