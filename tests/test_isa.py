"""Tests of isalint.isa: the generated RDNA3 instruction data and its lookup API.

The oracle test assembles one synthesized line per mnemonic with LLVM's assembler and checks that
LLVM accepts our operand lists and agrees on the number of register operands.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from isalint import isa
from isalint.isa import generate as gen

REPO = Path(__file__).resolve().parents[1]
KERNEL5 = REPO.parent / "shared" / "corpus" / "kernel5.s"
TINYGRAD = Path(os.environ.get("ISALINT_TINYGRAD", "/tmp/tg/tgx/tinygrad"))


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------

def _llvm_mc() -> str | None:
    """An llvm-mc that knows gfx1100, or None."""
    for name in ("llvm-mc-19", "llvm-mc-18", "llvm-mc-17", "llvm-mc"):
        path = shutil.which(name)
        if not path:
            continue
        try:
            p = subprocess.run([path, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1100", "-show-encoding"],
                               input="s_nop 0\n", capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if p.returncode == 0 and "s_nop" in p.stdout and "not a recognized" not in p.stderr:
            return path
    return None


def _split_operands(text: str) -> list[str]:
    """Top-level comma split of an operand string (brackets/parens kept together)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def _parse(line: str) -> list[tuple[str, list[str]]]:
    """'mnemonic ops...' (or a VOPD pair 'x :: y') -> [(mnemonic, operand tokens)].

    Modifiers after the last operand (offset:16, glc, quad_perm:[..]) are dropped from it.
    """
    halves = []
    for part in line.split("::"):
        part = part.strip()
        mn, _, rest = part.partition(" ")
        ops = _split_operands(rest)
        if ops:
            last = ops[-1]
            # keep expressions like 'instid0(X) | instskip(Y)' and 'vmcnt(0) lgkmcnt(0)' whole
            if not re.search(r"[|()]", last):
                ops[-1] = last.split()[0]
        halves.append((mn, ops))
    return halves


_REG = re.compile(r"^(?:([vs])(\d+)|([vs])\[(\d+):(\d+)\]|(vcc_lo|vcc_hi|exec_lo|exec_hi|m0|null|scc)|(vcc|exec))$")


def _reg_count(tok: str) -> int | None:
    m = _REG.match(tok)
    if not m:
        return None
    if m.group(1):
        return 1
    if m.group(3):
        return int(m.group(5)) - int(m.group(4)) + 1
    return 1 if m.group(6) else 2


def _check_line(line: str) -> list[tuple[isa.OpInfo, tuple[isa.OperandSpec, ...], list[str]]]:
    """Look up every half of an assembler line and match its operands; asserts on failure."""
    out = []
    for mn, toks in _parse(line):
        info = isa.lookup(mn)
        assert info is not None, f"unknown mnemonic {mn!r} in {line!r}"
        specs = info.operands_for(len(toks))
        assert specs is not None, f"{line!r}: {len(toks)} operands, spec {info.operands}"
        narrow_addr = info.encoding == "GLOBAL" and toks and _reg_count(toks[-1]) == 2
        for spec, tok in zip(specs, toks):
            n = _reg_count(tok)
            if spec.kind == "other" and spec.name == "vcc_lo":
                assert tok == "vcc_lo", (line, spec, tok)
            if n is None or spec.kind in ("imm", "label", "other"):
                continue
            want = spec.regs
            if narrow_addr and spec.name == "addr":
                want = 1  # VGPR offset with an SGPR-pair base
            assert n == want, f"{line!r}: {spec.name} is {tok} ({n} regs), spec says {want}"
        out.append((info, specs, toks))
    return out


# ------------------------------------------------------------------------------------------------
# data shape and API
# ------------------------------------------------------------------------------------------------

def test_lookup_is_case_insensitive_and_cached():
    a = isa.lookup("V_FMAC_F32_E32")
    assert a is not None and a is isa.lookup("v_fmac_f32_e32")
    assert a.mnemonic == "v_fmac_f32_e32"
    assert isa.lookup("v_no_such_op") is None


def test_all_mnemonics_sorted_and_complete():
    names = isa.all_mnemonics()
    assert names == sorted(names)
    assert len(names) > 2000
    for n in names:
        info = isa.lookup(n)
        assert info.klass in {"salu", "valu", "trans", "vopd", "lds", "smem", "vmem_load", "vmem_store",
                              "vmem_atomic", "scratch_load", "scratch_store", "branch", "barrier", "waitcnt",
                              "delay", "nop", "message", "endpgm", "other"}, n
        for o in info.operands:
            assert o.role in ("def", "use", "defuse"), (n, o)
            assert o.kind in ("vgpr", "sgpr", "src", "ssrc", "imm", "label", "other"), (n, o)
            assert o.bits > 0, (n, o)


def test_data_file_small_and_import_light():
    assert Path(isa.DATA_PATH).stat().st_size < 1_000_000
    code = ("import sys, isalint.isa as i; i.lookup('v_fmac_f32_e32'); "
            "print(sorted(m for m in ('numpy','rich','pyparsing','networkx','yaml','click','tinygrad') "
            "if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert p.stdout.strip() == "[]"


def test_vopd_halves_split_by_opx_width():
    duals = {n: isa.lookup(n) for n in isa.all_mnemonics() if n.startswith("v_dual_")}
    assert len(duals) >= 15
    for n, info in duals.items():
        assert info.encoding == "VOPD" and info.klass == "vopd", n
        assert info.vopd in ("xy", "y"), n
        # OPX is 4 bits wide (RDNA3 ISA, VOPD encoding); OPY is 5 bits
        assert info.vopd == ("xy" if info.opcode < 16 else "y"), n
    y_only = {n for n, i in duals.items() if i.vopd == "y"}
    assert y_only == {n for n, i in duals.items() if i.opcode >= 16}
    assert {"v_dual_add_nc_u32", "v_dual_lshlrev_b32", "v_dual_and_b32"} <= y_only
    assert {"v_dual_fmac_f32", "v_dual_mov_b32", "v_dual_mul_f32", "v_dual_cndmask_b32"}.isdisjoint(y_only)
    # only VOPD halves carry a vopd tag
    assert all(isa.lookup(n).vopd is None for n in isa.all_mnemonics() if not n.startswith("v_dual_"))


def _op(info, name):
    return next(o for o in info.operands if o.name == name)


def test_spot_facts_widths_and_roles():
    assert _op(isa.lookup("ds_load_b128"), "vdst").bits == 128
    i = isa.lookup("v_lshlrev_b64")
    assert _op(i, "vdst").bits == 64 and _op(i, "src1").bits == 64 and _op(i, "src0").bits == 32
    i = isa.lookup("global_load_b32")
    assert _op(i, "addr").bits == 64 and _op(i, "saddr").kind == "sgpr"
    i = isa.lookup("s_load_b128")
    assert [(o.name, o.bits) for o in i.operands[:2]] == [("sdata", 128), ("sbase", 64)]
    assert _op(isa.lookup("v_fmac_f32_e32"), "vdst").role == "defuse"
    assert _op(isa.lookup("v_fmac_f32_e64"), "vdst").role == "defuse"
    assert _op(isa.lookup("v_mul_f32_e32"), "vdst").role == "def"
    i = isa.lookup("v_mad_u64_u32")
    assert i.encoding == "VOP3SD"
    assert [o.name for o in i.operands] == ["vdst", "sdst", "src0", "src1", "src2"]
    assert _op(i, "vdst").bits == 64 and _op(i, "src2").bits == 64 and _op(i, "sdst").bits == 32
    assert _op(isa.lookup("s_addk_i32"), "sdst").role == "defuse"
    assert _op(isa.lookup("s_cmpk_lg_i32"), "sdst").role == "use"
    assert _op(isa.lookup("s_movk_i32"), "sdst").role == "def"
    assert _op(isa.lookup("s_cmov_b32"), "sdst").role == "defuse"   # written only if SCC
    assert _op(isa.lookup("v_ceil_f32"), "vdst").role == "def"      # D0 read after it is written
    assert [o.role for o in isa.lookup("v_swap_b32").operands] == ["defuse", "defuse"]
    assert _op(isa.lookup("ds_load_u16_d16"), "vdst").role == "defuse"  # high half preserved
    assert _op(isa.lookup("ds_load_b32"), "vdst").role == "def"
    # MUBUF/MTBUF D16 loads keep the 16-bit halves they do not load ("VDATA[31:16] is preserved")
    for mn in ("buffer_load_d16_b16", "buffer_load_d16_hi_b16", "buffer_load_d16_u8", "buffer_load_d16_hi_i8",
               "buffer_load_d16_format_x", "buffer_load_d16_hi_format_x", "buffer_load_d16_format_xyz",
               "tbuffer_load_d16_format_x", "tbuffer_load_d16_format_xyz", "global_load_d16_hi_b16",
               "scratch_load_d16_u8", "flat_load_d16_hi_i8"):
        assert _op(isa.lookup(mn), "vdst" if mn.startswith(("global", "scratch", "flat")) else "vdata").role == "defuse", mn
    # ... and the ones that load every half of their VGPRs write them whole
    for mn in ("buffer_load_d16_format_xy", "buffer_load_d16_format_xyzw", "tbuffer_load_d16_format_xyzw",
               "buffer_load_u16", "buffer_load_b32"):
        assert _op(isa.lookup(mn), "vdata").role == "def", mn
    assert _op(isa.lookup("global_atomic_cmpswap_b32"), "vdst").bits == 32
    assert _op(isa.lookup("global_atomic_cmpswap_b32"), "data").bits == 64
    assert _op(isa.lookup("v_add_f32_dpp"), "vdst").role == "defuse"
    assert _op(isa.lookup("v_add_f32_dpp"), "src0").kind == "vgpr"
    assert _op(isa.lookup("v_readlane_b32"), "src0").kind == "vgpr"
    assert _op(isa.lookup("v_readlane_b32"), "sdst").kind == "sgpr"
    # literal constants placed where the pseudocode uses them
    assert [o.name for o in isa.lookup("v_fmamk_f32").operands] == ["vdst", "src0", "simm32", "vsrc1"]
    assert [o.name for o in isa.lookup("v_fmaak_f32").operands] == ["vdst", "src0", "vsrc1", "simm32"]
    assert [o.name for o in isa.lookup("v_dual_fmaak_f32").operands] == ["vdst", "src0", "vsrc1", "simm32"]
    assert [o.name for o in isa.lookup("s_setreg_b32").operands] == ["simm16", "sdst"]


def test_spot_facts_implicit_and_classes():
    def f(n):
        return isa.lookup(n)
    assert f("v_add_co_ci_u32_e32").implicit_defs == ("vcc_lo",)
    assert "vcc_lo" in f("v_add_co_ci_u32_e32").implicit_uses
    assert "vcc_lo" in f("v_cndmask_b32_e32").implicit_uses
    assert "vcc_lo" not in f("v_cndmask_b32_e64").implicit_uses   # mask is the explicit src2
    assert _op(f("v_cndmask_b32_e64"), "src2").kind == "sgpr"
    assert "vcc_lo" in f("v_div_fmas_f32").implicit_uses          # VOP3 without a mask operand
    assert f("v_add_co_u32").implicit_defs == ()                  # carry-out is the explicit sdst
    assert f("v_cmp_eq_u32_e32").implicit_defs == ("vcc_lo",)
    assert f("v_cmp_eq_u32_e64").implicit_defs == () and f("v_cmp_eq_u32_e64").operands[0].name == "sdst"
    assert f("v_cmpx_eq_u32_e32").implicit_defs == ("exec_lo",)
    assert f("v_cmpx_eq_u32_e64").implicit_defs == ("exec_lo",)
    assert f("s_add_u32").implicit_defs == ("scc",) and "scc" not in f("s_add_u32").implicit_uses
    assert f("s_addc_u32").implicit_uses == ("scc",)
    assert f("s_cselect_b32").implicit_uses == ("scc",) and f("s_cselect_b32").implicit_defs == ()
    assert f("s_cmp_lt_i32").implicit_defs == ("scc",)
    assert f("s_cbranch_scc1").implicit_uses == ("scc",)
    assert f("s_cbranch_vccz").implicit_uses == ("vcc_lo",)
    assert f("s_cbranch_execnz").implicit_uses == ("exec_lo",)
    assert set(f("s_and_saveexec_b32").implicit_defs) == {"exec_lo", "scc"}
    assert "m0" in f("s_movrels_b32").implicit_uses
    for n in ("v_add_f32_e32", "global_load_b32", "ds_load_b32", "v_dual_mov_b32"):
        assert "exec_lo" in f(n).implicit_uses, n
    assert "exec_lo" not in f("s_mov_b32").implicit_uses
    assert f("s_branch").operands[0].kind == "label" and f("s_branch").klass == "branch"
    assert f("s_cbranch_vccz").klass == "branch" and f("s_setpc_b64").klass == "branch"
    assert f("s_trap").klass == "other"
    expect = {"s_waitcnt": "waitcnt", "s_waitcnt_vscnt": "waitcnt", "s_delay_alu": "delay", "s_nop": "nop",
              "s_barrier": "barrier", "s_endpgm": "endpgm", "s_sendmsg": "message", "s_clause": "other",
              "ds_load_b128": "lds", "s_load_b64": "smem", "global_load_b128": "vmem_load",
              "global_store_b128": "vmem_store", "global_atomic_add_u32": "vmem_atomic",
              "scratch_load_b32": "scratch_load", "scratch_store_b32": "scratch_store",
              "buffer_load_b32": "vmem_load", "v_exp_f32": "trans", "v_mul_f32_e32": "valu",
              "s_mul_i32": "salu", "v_dual_fmac_f32": "vopd"}
    assert {n: f(n).klass for n in expect} == expect
    for n in ("s_waitcnt", "s_delay_alu", "s_clause", "s_nop"):
        assert [o.kind for o in f(n).operands] == ["imm"], n
    cnt = {"ds_store_b32": ("lgkmcnt",), "s_load_b128": ("lgkmcnt",), "s_sendmsg": ("lgkmcnt",),
           "global_load_b32": ("vmcnt",), "global_store_b32": ("vscnt",), "scratch_load_b32": ("vmcnt",),
           "scratch_store_b32": ("vscnt",), "buffer_store_b32": ("vscnt",), "exp": ("expcnt",),
           "flat_load_b32": ("vmcnt", "lgkmcnt"), "flat_store_b32": ("vscnt", "lgkmcnt"),
           "v_add_f32_e32": (), "s_mov_b32": ()}
    assert {n: f(n).counters for n in cnt} == cnt


def test_transcendentals():
    trans = {n for n in isa.all_mnemonics() if isa.lookup(n).is_trans}
    bases = {re.sub(r"(_e64_dpp|_e32|_e64|_dpp)$", "", n) for n in trans}
    expected = {f"v_{op}_{t}" for op in ("exp", "log", "rcp", "rsq", "sqrt", "sin", "cos") for t in ("f32", "f16")}
    expected |= {"v_rcp_iflag_f32", "v_rcp_f64", "v_rsq_f64", "v_sqrt_f64"}
    assert bases == expected
    assert all(isa.lookup(n).klass == "trans" for n in trans)
    assert not isa.lookup("v_fract_f32").is_trans and not isa.lookup("v_ldexp_f32").is_trans


def test_spellings():
    for n in ("v_add_f32", "v_add_f32_e32", "v_add_f32_e64", "v_add_f32_dpp", "v_lshl_add_u32",
              "v_lshl_add_u32_e64", "v_add_co_ci_u32_e64", "v_add_co_u32", "v_add_co_u32_e64",
              "v_mad_u64_u32", "v_mad_u64_u32_e64", "v_cmp_eq_u32", "v_cmp_eq_u32_e32", "v_cmp_eq_u32_e64"):
        assert isa.lookup(n) is not None, n
    # the bare name resolves to the e32 form
    assert isa.lookup("v_add_f32").encoding == "VOP2" and isa.lookup("v_add_f32_e64").encoding == "VOP3"
    assert isa.lookup("v_add_co_ci_u32").encoding == "VOP2"
    # no DPP with 64-bit operands or literals
    assert isa.lookup("v_add_f64_dpp") is None and isa.lookup("v_fmamk_f32_dpp") is None
    assert isa.lookup("v_add_co_u32_e32") is None  # gfx11 has only the VOP3 form


def test_operands_for_optional_forms():
    cmp = isa.lookup("v_cmp_eq_u32_e32")
    assert [o.name for o in cmp.operands_for(3)] == ["vcc_lo", "src0", "vsrc1"]
    assert [o.name for o in cmp.operands_for(2)] == ["src0", "vsrc1"]
    at = isa.lookup("global_atomic_add_u32")
    assert [o.name for o in at.operands_for(4)] == ["vdst", "addr", "data", "saddr"]
    assert [o.name for o in at.operands_for(3)] == ["addr", "data", "saddr"]
    assert isa.lookup("v_mov_b32").operands_for(5) is None


KERNEL5_LINES = [
    ("v_fmac_f32_e32 v124, v184, v192", [("defuse", 1), ("use", 1), ("use", 1)]),
    ("v_dual_fmac_f32 v10, v20, v30 :: v_dual_fmac_f32 v11, v21, v31", None),
    ("v_add_co_ci_u32_e64 v184, null, 0, s14, s15", [("def", 1), ("def", 1), ("use", 1), ("use", 1), ("use", 1)]),
    ("v_mad_u64_u32 v[168:169], null, v167, s4, v[1:2]", [("def", 2), ("def", 1), ("use", 1), ("use", 1), ("use", 2)]),
    ("ds_store_2addr_stride64_b32 v8, v23, v24 offset1:4", [("use", 1)] * 3),
    ("global_load_b128 v[134:137], v[0:1], off", [("def", 4), ("use", 2), ("use", 2)]),
    ("global_store_b128 v[0:1], v[138:141], off", [("use", 2), ("use", 4), ("use", 2)]),
    ("s_load_b128 s[4:7], s[0:1], 0x18", [("def", 4), ("use", 2), ("use", 1)]),
    ("s_cselect_b32 s13, -1, 0", [("def", 1), ("use", 1), ("use", 1)]),
    ("s_and_not1_b32 vcc_lo, exec_lo, s7", [("def", 1), ("use", 1), ("use", 1)]),
    ("s_cbranch_vccz .LBB0_4", [("use", 1)]),
    ("v_cndmask_b32_e32 v5, v6, v7, vcc_lo", [("def", 1), ("use", 1), ("use", 1), ("use", 1)]),
    ("v_dual_mov_b32 v2, v3 :: v_dual_add_nc_u32 v5, 4, v9", None),
    ("s_addk_i32 s14, 0x200", [("defuse", 1), ("use", 1)]),
    ("s_cmpk_lg_i32 s14, 0x1000", [("use", 1), ("use", 1)]),
    ("s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)", [("use", 1)]),
    ("scratch_load_b32 v1, off, off offset:4", [("def", 1), ("use", 1), ("use", 1)]),
    ("scratch_store_b32 off, v2, off offset:8", [("use", 1), ("use", 1), ("use", 1)]),
    ("v_writelane_b32 v3, s4, 5", [("defuse", 1), ("use", 1), ("use", 1)]),
    ("v_readlane_b32 s6, v3, 5", [("def", 1), ("use", 1), ("use", 1)]),
    ("s_waitcnt vmcnt(0) lgkmcnt(0)", [("use", 1)]),
    ("s_delay_alu instid0(VALU_DEP_1) | instskip(NEXT) | instid1(VALU_DEP_2)", [("use", 1)]),
]


@pytest.mark.parametrize("line,roles", KERNEL5_LINES, ids=[l for l, _ in KERNEL5_LINES])
def test_kernel5_style_lines(line, roles):
    matched = _check_line(line)
    if roles is not None:
        (info, specs, toks), = matched
        assert [(s.role, s.regs) for s in specs] == roles
    else:
        assert len(matched) == 2
        x, y = matched
        assert x[0].vopd in ("xy",) and y[0].vopd in ("xy", "y")
        if x[0].mnemonic == "v_dual_fmac_f32":
            assert x[1][0].role == "defuse" and y[1][0].role == "defuse"


def test_kernel5_every_instruction():
    if not KERNEL5.is_file():
        pytest.skip(f"{KERNEL5} not present (../shared is a developer-only checkout)")
    n = 0
    for raw in KERNEL5.read_text().splitlines():
        # instructions are tab-indented; directives start with '.', metadata YAML is space-indented
        line = raw.split(";")[0].strip()
        if not raw.startswith("\t") or not line or line.startswith((".", "#", "//")):
            continue
        _check_line(line)
        n += 1
    assert n > 1000


# ------------------------------------------------------------------------------------------------
# pseudocode dataflow of the generator
# ------------------------------------------------------------------------------------------------

def test_pcode_dataflow_rules():
    P = gen._Pcode
    assert "D0" in P("D0.f32 = fma(S0.f32, S1.f32, D0.f32)").reads
    assert "D0" not in P("D0.f32 = trunc(S0.f32);\nif S0.f32 > 0.0F then\nD0.f32 += 1.0F\nendif").reads
    assert "D0" in P("if SCC then\nD0.b32 = S0.b32\nendif").reads
    assert "D0" not in P("if SCC then\nD0.b32 = S0.b32\nelse\nD0.b32 = S1.b32\nendif").reads
    assert "D0" in P("D0.u32[S0.u32[4 : 0]] = 1'0U").reads         # one bit written
    assert "D0" not in P("D0.u64[laneId] = S0.u32 == S1.u32").reads  # per-lane compare result
    assert not P("RETURN_DATA[15 : 0].u16 = MEM[ADDR].u16").covers("RETURN_DATA", 32)
    assert P("VDATA[31 : 0] = MEM[ADDR].b32;\nVDATA[63 : 32] = MEM[ADDR + 4U].b32").covers("VDATA", 64)
    p = P("tmp = VCC.u64[laneId];\nVCC.u64[laneId] = tmp")
    assert "VCC" in p.reads and "VCC" in p.writes
    p = P("addr = SRC0.u32;\naddr += M0.u32[31 : 0];\nD0.b32 = VGPR[laneId][addr].b32")
    assert {"SRC0", "M0"} <= p.reads and "D0" in p.writes
    p = P("declare lane : 32'U;\nif WAVE32 then\nlane = S1.u32[4 : 0].u32\nelse\nlane = S1.u32[5 : 0].u32\n"
          "endif;\nVGPR[lane][VDST.u32] = S0.b32")
    assert "VDST" in p.writes and "VDST" in p.reads   # one lane written, the others kept
    assert "D0" not in P("// D0 = VCC in VOPC encoding.\nSCC = S0.u32 == S1.u32").writes
    assert gen._Pcode("D0.f32 = 1.0F / sqrt(S0.f32)").is_trans
    assert not gen._Pcode("D0.f32 = S0.f32 + S1.f32").is_trans


def test_generator_reproduces_checked_in_json(tmp_path):
    if not (TINYGRAD / "runtime/autogen/amd/rdna3/ins.py").is_file():
        pytest.skip(f"tinygrad tables not found under {TINYGRAD} (set ISALINT_TINYGRAD)")
    out = tmp_path / "rdna3.json"
    assert gen.main(["--tinygrad", str(TINYGRAD), "-o", str(out)]) == 0
    assert json.loads(out.read_text()) == json.loads(Path(isa.DATA_PATH).read_text())


# ------------------------------------------------------------------------------------------------
# LLVM oracle
# ------------------------------------------------------------------------------------------------

# Encodings whose operand widths the data cannot pin down for a synthesized line.
ORACLE_SKIP = {"MIMG": "vaddr/vdata widths depend on dim/dmask/a16/d16; the data holds the maximum"}
# Register-count differences LLVM models differently from the ISA tables.
KNOWN_COUNT_MISMATCH: dict[str, str] = {}


class _Alloc:
    def __init__(self):
        self.v, self.s = 10, 4

    def vgpr(self, n):
        r = f"v{self.v}" if n == 1 else f"v[{self.v}:{self.v + n - 1}]"
        self.v += n + 1
        return r

    def sgpr(self, n):
        align = 1 if n == 1 else (2 if n == 2 else 4)
        self.s = (self.s + align - 1) // align * align
        r = f"s{self.s}" if n == 1 else f"s[{self.s}:{self.s + n - 1}]"
        self.s += n
        return r


def _render(info: isa.OpInfo, fixed: dict | None = None) -> tuple[str, int]:
    """Operand text for one instruction and the number of register operands written."""
    a, toks, nreg = _Alloc(), [], 0
    has_addr = any(o.name == "addr" for o in info.operands)
    for o in info.operands:
        if fixed and o.name in fixed:
            toks.append(fixed[o.name])
            nreg += o.kind not in ("imm", "label", "other")
        elif o.kind == "other":
            toks.append({"tgt": "mrt0", "attr": "attr0.x"}.get(o.name, o.name))
        elif o.kind == "label":
            toks.append(".Ltarget")
        elif o.kind == "imm":
            toks.append("0x1234" if o.name == "simm32" else "0")
        elif info.encoding in ("GLOBAL", "SCRATCH") and o.name == "saddr" and has_addr:
            toks.append("off")
        elif info.klass == "waitcnt" and o.kind == "sgpr":
            toks.append("null")  # s_waitcnt_*cnt take null as their SGPR
            nreg += 1
        else:
            toks.append(a.vgpr(o.regs) if o.kind in ("vgpr", "src") else a.sgpr(o.regs))
            nreg += 1
    return ", ".join(toks), nreg


def _synth(mn: str) -> tuple[str, int] | None:
    info = isa.lookup(mn)
    if info.encoding in ORACLE_SKIP:
        return None
    if info.encoding == "VOPD":
        # VOPD bank rules: X and Y sources in different banks (reg % 4), destinations of opposite parity
        mov = isa.lookup("v_dual_mov_b32")
        if info.vopd == "xy":
            x, nx = _render(info, {"vdst": "v0", "src0": "v1", "vsrc1": "v2"})
            y, ny = _render(mov, {"vdst": "v3", "src0": "v6"})
            return f"{mn} {x} :: v_dual_mov_b32 {y}", nx + ny
        x, nx = _render(mov, {"vdst": "v0", "src0": "v1"})
        y, ny = _render(info, {"vdst": "v3", "src0": "v6", "vsrc1": "v7"})
        return f"v_dual_mov_b32 {x} :: {mn} {y}", nx + ny
    text, n = _render(info)
    line = f"{mn} {text}".rstrip()
    if mn.endswith("_dpp"):
        line += " quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf"
    if info.encoding in ("MUBUF", "MTBUF") and any(o.name == "vaddr" and o.bits == 64 for o in info.operands):
        line += " idxen offen"
    if info.klass == "vmem_atomic":
        line += " glc"  # the returning form, so the vdst/vdata tie is visible
    if info.encoding == "DS" and re.search(r"gws|gs_reg|ordered_count", mn):
        line += " gds"
    return line, n


def _assemble(mc: str, cpu: str, lines: list[str]) -> tuple[dict[int, str], list[tuple[str, int, int]]]:
    """Assemble lines in one batch -> ({line index: error}, [(MCInst name, #register operands,
    instruction bits as an int)] for the accepted lines in order)."""
    src = "\n".join(lines) + "\n.Ltarget:\n"
    p = subprocess.run([mc, "-triple=amdgcn-amd-amdhsa", f"-mcpu={cpu}", "-show-inst", "-show-encoding"],
                       input=src, capture_output=True, text=True, timeout=300)
    errors: dict[int, str] = {}
    for m in re.finditer(r"<stdin>:(\d+):\d+: error: (.*)", p.stderr):
        errors.setdefault(int(m.group(1)) - 1, m.group(2))
    insts = []
    # (branch encodings carry fixup bytes 'A' and a fixup line before the MCInst)
    pat = r"encoding: \[([^\]]*)\][^<]*<MCInst #\d+ (\w+)((?:\n\s*;\s+<MCOperand [^\n]*)*)"
    for enc, name, body in re.findall(pat, p.stdout):
        raw = [b.strip() for b in enc.split(",")]
        word = int.from_bytes(bytes(int(b, 16) if b.startswith("0x") else 0 for b in raw), "little")
        insts.append((name, len(re.findall(r"MCOperand Reg:", body)), word))
    return errors, insts


def test_llvm_mc_oracle():
    mc = _llvm_mc()
    if mc is None:
        pytest.skip("no llvm-mc (19/18/17) that knows gfx1100")
    names, lines, counts = [], [], []
    for mn in isa.all_mnemonics():
        r = _synth(mn)
        if r is None:
            continue
        names.append(mn)
        lines.append(r[0])
        counts.append(r[1])
    errors, insts = _assemble(mc, "gfx1100", lines)
    accepted = [i for i in range(len(lines)) if i not in errors]
    assert len(insts) == len(accepted), "could not pair MCInsts with accepted lines"

    # Opcodes of the tables that gfx1100 lacks but RDNA3.5 (gfx1151) has, e.g. the SALU float ops:
    # not our mistake, so not counted against us.
    newer = [i for i, e in errors.items() if "not supported on this GPU" in e]
    newer_err, _ = _assemble(mc, "gfx1151", [lines[i] for i in newer])
    rdna35_only = {newer[j] for j in range(len(newer)) if j not in newer_err}
    rejected = {i: e for i, e in errors.items() if i not in rdna35_only}
    tested = len(lines) - len(rdna35_only)
    rate = (tested - len(rejected)) / tested
    rej_text = "\n".join(f"  {lines[i]}    <- {e}" for i, e in sorted(rejected.items()))
    print(f"llvm-mc oracle: {tested - len(rejected)}/{tested} accepted ({rate:.1%}), "
          f"{len(rdna35_only)} RDNA3.5-only skipped, {len(ORACLE_SKIP)} encodings skipped")
    assert rate >= 0.97, f"only {rate:.1%} accepted; rejects:\n{rej_text}"

    op_fields = isa.meta()["op_fields"]
    mismatches, wrong_opcode = [], []
    for i, (mcname, nreg, word) in zip(accepted, insts):
        halves_mn = [h.split()[0] for h in lines[i].split("::")]
        want = [isa.lookup(h).opcode for h in halves_mn]
        fields = op_fields[isa.lookup(halves_mn[0]).encoding]
        got = [(word >> lo) & ((1 << (hi - lo + 1)) - 1) for hi, lo in fields]
        if fields and got != want:
            wrong_opcode.append(f"  {lines[i]}: ours {want}, LLVM encodes {got}")
    assert not wrong_opcode, "opcodes differ from LLVM's encoding:\n" + "\n".join(wrong_opcode)

    for i, (mcname, nreg, _) in zip(accepted, insts):
        info = isa.lookup(names[i])
        halves = [isa.lookup(h.split()[0]) for h in lines[i].split("::")] if "::" in lines[i] else [info]
        ties = sum(o.role == "defuse" and o.kind in ("vgpr", "sgpr", "src", "ssrc")
                   for h in halves for o in h.operands)
        # LLVM lists a tied input for most read-modify-write destinations (v_fmac, DPP old, d16
        # loads, returning atomics) but not all (s_cmov), so ties are allowed, not required; a DPP
        # form of an accumulating op lists the old value and the accumulator both
        ties += sum(h.mnemonic.endswith("_dpp") for h in halves)
        if not counts[i] <= nreg <= counts[i] + ties and names[i] not in KNOWN_COUNT_MISMATCH:
            mismatches.append(f"  {lines[i]}: ours {counts[i]}(+{ties} tied), LLVM {mcname} {nreg}")
    assert not mismatches, "register operand counts differ:\n" + "\n".join(mismatches)


def test_aliases_resolve_to_gfx11_opcodes():
    from isalint.isa import aliases

    table = aliases.table()
    assert len(table) > 250 and all(isa.lookup(real) is not None for real in table.values())
    for alias, real in (("v_add_u32_e32", "v_add_nc_u32_e32"), ("v_add_u32", "v_add_nc_u32"),
                        ("v_cmp_tru_f32_e64", "v_cmp_t_f32_e64"), ("ds_read_b128", "ds_load_b128"),
                        ("ds_write2_b32", "ds_store_2addr_b32"), ("global_load_dword", "global_load_b32"),
                        ("scratch_store_dwordx4", "scratch_store_b128"), ("s_load_dwordx4", "s_load_b128"),
                        ("buffer_store_dword", "buffer_store_b32"), ("flat_atomic_add", "flat_atomic_add_u32"),
                        ("s_andn2_saveexec_b64", "s_and_not1_saveexec_b64"), ("s_ff1_i32_b32", "s_ctz_i32_b32"),
                        ("s_flbit_i32", "s_cls_i32"), ("v_dot2c_f32_f16_dpp", "v_dot2acc_f32_f16_dpp"),
                        ("V_MUL_LEGACY_F32_E64", "v_mul_dx9_zero_f32_e64")):
        assert isa.lookup(alias) is isa.lookup(real), alias
        assert isa.canonical(alias) == real
    # line 8 of the hand-written kernel: the destination is read and written at full width
    (info, specs, toks), = _check_line("v_add_u32_e32 v215, v1, v215")
    assert info.mnemonic == "v_add_nc_u32_e32" and [s.role for s in specs] == ["def", "use", "use"]
    assert isa.lookup("ds_cmpst_b32") is None  # LLVM gives no alias: the operands were swapped in gfx11
    assert isa.canonical("v_no_such_op") == "v_no_such_op"
