"""DUAL001 and isalint.hw.vopd: VOPD legality, with LLVM's assembler as the ground truth."""
from __future__ import annotations

import json
import random
import re
from collections import Counter

import pytest
from click.testing import CliRunner
from conftest import KERNELS, SNIPPETS

from isalint.cli import cli
from isalint.isa import all_mnemonics, lookup
from isalint.parse.source import parse_statements
from isalint.hw.vopd import check_pair, dual_name, find_pairing, format_pair, half, is_legal

# --------------------------------------------------------------------------- the oracle


def _toolchain():
    from isalint.validate.toolchain import ToolchainError, find_toolchain

    try:
        return find_toolchain(need_linker=False)
    except ToolchainError as exc:
        pytest.skip(f"no gfx1100 assembler to compare with: {exc}")


def _verdict(line: str) -> bool:
    x, y = parse_statements(line)
    return is_legal(x, y)


def _predates_llvm20(tc) -> bool:
    """LLVM 19 and older reject v_dual_dot2acc_f32_bf16 (assembled from LLVM 20 on)."""
    return not tc.show_inst(["v_dual_dot2acc_f32_bf16 v0, v2, v4 :: v_dual_mov_b32 v1, v3"])[0].accepted


# Lines on which LLVM 19 departs from the hardware's rules, which DUAL001 follows: it rejects every
# v_dual_dot2acc_f32_bf16, and it re-encodes a dot2acc f16 constant as a 32-bit value to share the
# literal of an fmaak/fmamk beside it (3.5 becomes 0x40600000, which the dot2acc then reads as the
# f16 pair (0.0, 2.1875)); LLVM 20 and newer keep the f16 value and report two literals.
_LLVM19_DEPARTS = re.compile(r"dot2acc_f32_bf16|dot2acc_f32_f16 v\d+, [^v,][^,]*,.*fma(?:ak|mk)|fma(?:ak|mk).*dot2acc_f32_f16 v\d+, [^v,]")


def _comparable(tc, lines: list[str]) -> list[str]:
    """``lines`` without those an LLVM older than 20 judges against the hardware's rules."""
    if not _predates_llvm20(tc):
        return lines
    kept = [ln for ln in lines if not _LLVM19_DEPARTS.search(ln)]
    assert len(kept) > 0.8 * len(lines)
    return kept


# --------------------------------------------------------------------------- random pairs

VOPD_OPS = [m for m in all_mnemonics() if m.startswith("v_dual_")]
X_OPS = [m for m in VOPD_OPS if lookup(m).vopd == "xy"]
# Small pools so that bank, parity, literal and SGPR clashes are frequent.
VGPRS = [f"v{i}" for i in (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 17, 184, 191, 192, 206, 255)]
SCALARS = ["s0", "s1", "s2", "s105", "vcc_lo", "vcc_hi", "exec_lo", "m0", "null", "ttmp3"]
# inline constants (also written as bit patterns, and f16 patterns that are inline only for dot2acc)
INLINE = ["0", "1", "-1", "-16", "64", "0.5", "-4.0", "1.0", "0x3f800000", "0xfffffff0", "0.15915494", "0x3800"]
# literals, some equal to each other once encoded (0x1234 = 4660, 3.5 = 0x40600000, 0x4300 = f16 3.5)
LITERALS = ["0x1234", "4660", "0x4300", "3.5", "-17", "65", "0x40600000", "0x12345678", "0.1", "0x3fc00000", "1.5"]
K_VALUES = ["0x1234", "1.0", "0x3f800000", "3.5", "0x40600000", "-17", "7"]


def _src0(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.55:
        return rng.choice(VGPRS)
    if r < 0.72:
        return rng.choice(SCALARS)
    if r < 0.86:
        return rng.choice(INLINE)
    return rng.choice(LITERALS)


def _half_text(rng: random.Random, mnemonic: str, dst_parity: int | None = None) -> str:
    ops = []
    for spec in lookup(mnemonic).operands:
        if spec.kind == "vgpr" and spec.role != "use" and dst_parity is not None and rng.random() < 0.8:
            ops.append(rng.choice([v for v in VGPRS if int(v[1:]) % 2 == dst_parity]))
        elif spec.kind == "vgpr":
            # now and then something else where a VGPR is required
            ops.append(rng.choice(VGPRS) if rng.random() > 0.006 else rng.choice(["s1", "vcc_lo", "0"]))
        elif spec.kind == "imm":
            ops.append(rng.choice(K_VALUES))
        else:
            ops.append(_src0(rng))
    return f"{mnemonic} " + ", ".join(ops)


def random_pairs(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        x = rng.choice(X_OPS) if rng.random() > 0.04 else rng.choice(VOPD_OPS)  # some Y-only X halves
        y = rng.choice(VOPD_OPS)
        if "bf16" in x + y and rng.random() < 0.7:  # LLVM rejects these outright: keep only a few
            x, y = x.replace("bf16", "f16"), rng.choice(X_OPS[:3])
        hx = _half_text(rng, x)
        dx = hx.split()[1].rstrip(",")
        parity = 1 - int(dx[1:]) % 2 if re.fullmatch(r"v\d+", dx) else None  # mostly legal destinations
        out.append(f"{hx} :: {_half_text(rng, y, parity)}")
    return out


def _compare(lines: list[str]) -> tuple[list[str], Counter, int]:
    tc = _toolchain()
    lines = _comparable(tc, lines)
    checks = tc.show_inst(lines)
    disagree, reasons, accepted = [], Counter(), 0
    for line, c in zip(lines, checks):
        accepted += c.accepted
        if not c.accepted:
            reasons[re.sub(r",? did you mean.*", "", c.error.split(";")[0])] += 1
        if _verdict(line) != c.accepted:
            disagree.append(f"{line}  | llvm-mc: {'accepts' if c.accepted else c.error}")
    return disagree, reasons, accepted


def test_random_pairs_agree_with_llvm_mc():
    lines = random_pairs(3000, seed=1100)
    disagree, reasons, accepted = _compare(lines)
    assert not disagree, f"{len(disagree)} of {len(lines)} disagree:\n" + "\n".join(disagree[:20])
    # the sample exercises every constraint, on both sides of the verdict
    assert 0.3 * len(lines) < accepted < 0.7 * len(lines)
    for reason in ("src0 operands must use different VGPR banks", "src1 operands must use different VGPR banks",
                   "src2 operands must use different VGPR banks", "one dst register must be even and the other odd",
                   "only one unique literal operand is allowed",
                   "invalid operand (violates constant bus restrictions)", "invalid operand for instruction"):
        assert reasons[reason] >= 5, (reason, reasons)
    # opcodes that cannot be an X half (worded differently across LLVM releases)
    opcode_errors = ("invalid instruction", "invalid VOPDY instruction", "instruction not supported on this GPU")
    assert sum(reasons[r] for r in opcode_errors) >= 5, reasons


def test_hypothesis_pairs_agree_with_llvm_mc():
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies
    tc = _toolchain()

    @hypothesis.settings(max_examples=4, deadline=None, derandomize=True)
    @hypothesis.given(st.integers(min_value=0, max_value=2**32 - 1))
    def run(seed):
        lines = _comparable(tc, random_pairs(150, seed))
        checks = tc.show_inst(lines)
        bad = [ln for ln, c in zip(lines, checks) if _verdict(ln) != c.accepted]
        assert not bad, bad[:5]

    run()


def _fixture_vopd_lines() -> list[tuple[str, int, str]]:
    files = [*sorted((SNIPPETS / "dual001").glob("*.s")), *sorted((SNIPPETS / "dual002").glob("*.s")),
             *sorted((SNIPPETS / "bank001").glob("*.s")), *sorted((KERNELS / "kernel6_style").glob("*.s"))]
    out = []
    for f in files:
        for n, raw in enumerate(f.read_text().splitlines(), 1):
            code = raw.split(";")[0].strip()
            if "::" in code:
                out.append((f.name, n, code))
    return out


def test_every_fixture_vopd_line_agrees_with_llvm_mc():
    entries = _fixture_vopd_lines()
    assert len(entries) > 140
    tc = _toolchain()
    kept = set(_comparable(tc, [code for _, _, code in entries]))
    entries = [e for e in entries if e[2] in kept]
    checks = tc.show_inst([code for _, _, code in entries])
    bad = [f"{f}:{n}: {code} | llvm-mc {'accepts' if c.accepted else 'rejects: ' + c.error}"
           for (f, n, code), c in zip(entries, checks) if _verdict(code) != c.accepted]
    assert not bad, "\n".join(bad)


def test_cli_on_a_file_of_bare_pairs(tmp_path):
    lines = random_pairs(200, seed=7)
    path = tmp_path / "pairs.s"
    path.write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(cli, ["check", "--select", "DUAL001", "--format", "json", str(path)])
    assert result.exit_code in (0, 1), result.output
    found = json.loads(result.output)
    rejected_lines = {d["line"] for d in found if d["severity"] == "error"}
    expected = {n for n, ln in enumerate(lines, 1) if not _verdict(ln)}
    assert rejected_lines == expected and 40 < len(expected) < 160
    assert all(d["code"] == "DUAL001" and d["path"] == str(path) for d in found)


# --------------------------------------------------------------------------- the API on tuples


def test_check_pair_on_tuples_names_the_constraint_and_registers():
    v = check_pair(("v_dual_fmac_f32", "v124", "v184", "v192"), ("v_dual_fmac_f32", "v133", "v184", "v193"))
    assert [x.rule for x in v] == ["src0-bank"]
    assert v[0].regs == ("v184", "v184") and "bank 0" in v[0].message
    v = check_pair(("v_dual_fmac_f32", "v1", "v2", "v3"), ("v_dual_fmac_f32", "v5", "v6", "v7"))
    assert {x.rule for x in v} == {"dst-parity", "src0-bank", "src1-bank"}
    # an accumulator and an fmamk addend share the SRC2 port: parity rule
    v = check_pair(("v_dual_fmamk_f32", "v0", "v1", "0x1234", "v3"), ("v_dual_fmac_f32", "v5", "v2", "v6"))
    assert [x.rule for x in v] == ["src2-parity"]
    assert is_legal(("v_dual_fmamk_f32", "v0", "v1", "0x1234", "v2"), ("v_dual_fmac_f32", "v5", "v3", "v6"))


def test_single_mnemonics_map_to_their_vopd_component():
    assert dual_name("v_fmac_f32_e32") == "v_dual_fmac_f32"
    assert dual_name("v_add_nc_u32_e32") == "v_dual_add_nc_u32"
    assert dual_name("v_mov_b32") == "v_dual_mov_b32"
    assert dual_name("v_fma_f32") is None and dual_name("ds_load_b32") is None
    assert half("v_cndmask_b32_e32 v0, v1, v2, vcc_lo").mnemonic == "v_dual_cndmask_b32"
    assert half("v_cndmask_b32_e64 v0, v1, v2, s[4:5]").vopd is None  # another lane mask: no VOPD form
    assert half("v_add_f32_e64 v0, v1, v2 clamp").vopd is None


def test_literals_are_encoded_like_the_assembler():
    # 0x3f800000 is the inline constant 1.0, 3.5 is the literal 0x40600000
    assert is_legal("v_dual_mov_b32 v0, 0x3f800000", "v_dual_mov_b32 v1, 3.5")
    assert is_legal("v_dual_mov_b32 v0, 0x40600000", "v_dual_mov_b32 v1, 3.5")
    assert not is_legal("v_dual_mov_b32 v0, 0x40600001", "v_dual_mov_b32 v1, 3.5")
    # dot2acc's packed f16 source: 3.5 is the f16 literal 0x4300, 0x3800 the inline 0.5 ...
    assert is_legal("v_dual_dot2acc_f32_f16 v1, 3.5, v2", "v_dual_mov_b32 v0, 0x4300")
    assert is_legal("v_dual_dot2acc_f32_f16 v1, 0x3800, v2", "v_dual_mov_b32 v0, 0x1234")
    # ... also beside fmaak/fmamk, whose K is a 32-bit value: 3.5 there is 0x40600000, not 0x4300
    assert is_legal("v_dual_dot2acc_f32_f16 v2, 0x3800, v17", "v_dual_fmamk_f32 v191, v9, 0x1234, v255")
    assert not is_legal("v_dual_dot2acc_f32_f16 v2, 3.5, v17", "v_dual_fmamk_f32 v191, v9, 3.5, v255")
    assert is_legal("v_dual_dot2acc_f32_f16 v2, 0x4300, v17", "v_dual_fmamk_f32 v191, v9, 0x4300, v255")
    # bf16 is the high half of an f32: 0x3f00 is the inline 0.5, 3.5 the literal 0x4060
    assert is_legal("v_dual_dot2acc_f32_bf16 v1, 0x3f00, v2", "v_dual_mov_b32 v0, 0x1234")
    assert is_legal("v_dual_dot2acc_f32_bf16 v1, 3.5, v2", "v_dual_mov_b32 v0, 0x4060")
    assert not is_legal("v_dual_dot2acc_f32_bf16 v1, 3.5, v2", "v_dual_mov_b32 v0, 0x40600000")
    assert not is_legal("v_dual_dot2acc_f32_bf16 v1, 0x3800, v2", "v_dual_mov_b32 v0, 0x1234")  # f16's 0.5


def test_existing_pair_cross_read_is_a_note_fusing_it_an_error():
    v = check_pair("v_dual_mov_b32 v0, v1", "v_dual_mov_b32 v3, v0")
    assert [(x.rule, x.severity) for x in v] == [("reads-other-dst", "info")]
    assert check_pair("v_dual_mov_b32 v3, v0", "v_dual_mov_b32 v0, v1") == []  # X reads, Y writes: as written
    v = check_pair("v_mov_b32_e32 v0, v1", "v_mov_b32_e32 v3, v0", order="xy")
    assert [(x.rule, x.severity) for x in v] == [("dependency", "error")]
    # a read before a write in program order (WAR) survives fusing: a VOPD reads first
    assert is_legal("v_mov_b32_e32 v0, v1", "v_mov_b32_e32 v3, v0", order="yx")
    assert is_legal("v_mov_b32_e32 v3, v0", "v_mov_b32_e32 v0, v1", order="xy")


def test_find_pairing_tries_roles_and_commuted_sources():
    # Y-only opcode written first: it becomes the Y half
    p = find_pairing("v_add_nc_u32_e32 v3, v191, v206", "v_fmac_f32_e32 v2, v190, v207")
    assert p.legal and p.best.x.mnemonic == "v_dual_fmac_f32"
    assert p.text == "v_dual_fmac_f32 v2, v190, v207 :: v_dual_add_nc_u32 v3, v191, v206"
    # commuting the second FMA's sources makes the banks differ
    p = find_pairing("v_fmac_f32_e32 v1, v184, v193", "v_fmac_f32_e32 v2, v184, v198")
    assert p.legal and p.best.y.commuted and format_pair(p.best.x, p.best.y).endswith("v2, v198, v184")
    # kernel 5's first two singles: nothing works, and the reason says why
    p = find_pairing("v_fmac_f32_e32 v124, v184, v192", "v_fmac_f32_e32 v133, v184, v193")
    assert not p.legal
    assert p.reason().startswith("SRC0X and SRC0Y both read bank 0 (v184, v184)")
    assert "commuting the sources gives: VSRC1 bank 0" in p.reason()


def test_explain_cites_the_isa_guide():
    for code in ("DUAL001", "DUAL002", "BANK001"):
        result = CliRunner().invoke(cli, ["explain", code])
        assert result.exit_code == 0
        assert "## What it finds" in result.output and "RDNA3 ISA guide, section 7.6" in result.output
