"""The one table of opcode meanings (isalint.isa.semantics): its bindings, and its algebras agreeing.

Every integer definition is run on the emulator's numpy algebra and on the exact integer algebra (the
estimate's) with the same random inputs; the two must give the same bits. A primitive written wrong in
one algebra (a shift that is logical where the guide's is arithmetic, a carry off by one) shows here as
a disagreement on the opcodes that use it.
"""
from __future__ import annotations

import numpy as np
import pytest

from isalint.isa.semantics import OPS, BindingError, ExactAlgebra, binding, definition
from isalint.validate.emu.algebra import NP

EXACT = ExactAlgebra()
INTEGER = {"u32", "i32", "b32", "u64", "i64", "b64", "u16", "i16", "bit"}
# lane operations: one wave's scalar walk has no lanes, so the exact algebra leaves them unknown
LANES = {"v_readfirstlane_b32", "v_readlane_b32", "v_writelane_b32", "v_mbcnt_lo_u32_b32", "v_mbcnt_hi_u32_b32"}
SPECIAL = [0, 1, 2, 31, 32, 63, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0x00FF_FFFF, 0x0080_0000, 0x0010_001F,
           0x0008_0004, 0x0038_0004, 0x0007_001F]


def _value(rng, typ: str) -> int:
    if typ == "bit":
        return int(rng.integers(0, 2))
    if typ in ("u16", "i16"):
        v = int(rng.integers(0, 1 << 16))
        return (v - 0x10000 if typ == "i16" and v & 0x8000 else v) & 0xFFFF_FFFF  # SIMM16 as read
    wide = typ in ("u64", "i64", "b64")
    if rng.random() < 0.5:
        v = SPECIAL[int(rng.integers(0, len(SPECIAL)))]
        return v | (SPECIAL[int(rng.integers(0, len(SPECIAL)))] << 32 if wide else 0)
    return int(rng.integers(0, 1 << 64 if wide else 1 << 32, dtype=np.uint64))


def _numpy(value: int, typ: str):
    if typ == "bit":
        return np.array(bool(value))
    return np.array(value, dtype=np.uint64 if typ in ("u64", "i64", "b64") else np.uint32)


def _bits(out, typ: str) -> int:
    a = np.asarray(out)
    if a.dtype == bool:
        return int(bool(a))
    return int(a.astype(np.uint64 if typ in ("u64", "i64", "b64") else np.uint32).view(
        np.uint64 if typ in ("u64", "i64", "b64") else np.uint32))


@pytest.mark.parametrize("name", sorted(n for n, op in OPS.items() if op.types <= INTEGER and n not in LANES))
def test_numpy_and_exact_algebras_agree(name):
    op = OPS[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    for _ in range(60):
        ins = [_value(rng, t) for _, t in op.ins]
        want = op.fn(EXACT, *ins)
        with np.errstate(all="ignore"):
            got = op.fn(NP, *[_numpy(v, t) for v, (_, t) in zip(ins, op.ins)])
        for (out, typ), w, g in zip(op.outs, want, got):
            assert w is not None, (name, out, ins)
            assert _bits(g, typ) == w, (name, out, [hex(x) for x in ins], hex(_bits(g, typ)), hex(w))


def test_signed_bit_field_extract_shifts_arithmetically():
    # S_BFE_I32: tmp.i32 = (S0.i32 >> S1[4:0]) & ((1 << S1[22:16]) - 1); D0 = signext_from_bit(tmp, width)
    d0, scc = OPS["s_bfe_i32"].fn(EXACT, 0x8765_4321, 0x0007_001F)
    assert (d0, scc) == (0xFFFF_FFFF, 1)  # bits 31..37 of the sign-extended value: all ones
    (v,) = OPS["v_bfe_i32"].fn(EXACT, 0x8765_4321, 31, 7)
    assert v == 0xFFFF_FFFF


def test_one_definition_serves_every_spelling():
    assert definition("v_add_co_ci_u32_e32") is definition("v_add_co_ci_u32_e64") is OPS["v_add_co_ci_u32"]
    assert definition("v_dual_fmac_f32") is definition("v_fmac_f32_e32") is OPS["v_fmac_f32"]
    assert definition("v_add_u32_e32") is OPS["v_add_nc_u32"]  # an alias LLVM accepts
    assert definition("s_andn2_b32") is OPS["s_and_not1_b32"]
    assert definition("v_fmac_f32_dpp") is OPS["v_fmac_f32"]


def test_bindings_follow_the_written_operands():
    e32 = binding("v_add_co_ci_u32_e32", 5)  # v1, vcc_lo, s1, v1, vcc_lo: the carries are operands
    assert [(s.kind, s.ref) for s in e32.outs] == [("operand", 0), ("operand", 1)]
    assert [(s.kind, s.ref) for s in e32.ins] == [("operand", 2), ("operand", 3), ("operand", 4)]
    vopc = binding("v_cmp_gt_u32_e32", 2)  # vcc_lo left out: the result goes to VCC
    assert [(s.kind, s.ref) for s in vopc.outs] == [("state", "VCC")]
    fmac = binding("v_fmac_f32_e32", 3)
    assert fmac.ins[-1].kind == "dest" and fmac.ins[-1].ref == 0
    save = binding("s_and_saveexec_b32", 2)
    assert [s.name for s in save.outs] == ["EXEC", "D0", "SCC"]  # EXEC first, as the guide writes it
    addk = binding("s_addk_i32", 2)
    assert [(s.kind, s.type) for s in addk.ins] == [("operand", "i16"), ("dest", "u32")]
    with pytest.raises(BindingError):
        binding("s_add_u32", 2)
    with pytest.raises(BindingError):
        binding("v_wmma_f32_16x16x16_f16", 4)  # the emulator's alone


def test_exact_algebra_leaves_unknown_inputs_unknown():
    d0, scc = OPS["s_add_u32"].fn(EXACT, None, 5)
    assert d0 is None and scc is None
    assert OPS["s_addc_u32"].fn(EXACT, 1, 2, None) == (None, None)  # SCC not known: no carry in
    assert OPS["s_cselect_b32"].fn(EXACT, 7, 9, None) == (None,)
    assert OPS["s_and_b32"].fn(EXACT, 0xF0, 0x3C) == (0x30, 1)
