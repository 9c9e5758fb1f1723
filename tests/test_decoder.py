"""The gfx11 decoder: machine words to LLVM's assembly syntax.

Known encodings (as llvm-objdump prints them) are checked without any LLVM; with llvm-mc-19, every
synthesized operand form of every opcode and randomized encodings of every opcode are decoded by
both, LLVM being the oracle.
"""
from __future__ import annotations

import random
import re
import shutil
import subprocess

import pytest
from isa_forms import all_forms

from isalint.binary.decoder import Decoder, UnknownEncoding, tables

# (little-endian dwords, wave64, text) as LLVM 19 prints them
KNOWN = [
    ("BEFD00FF 00000800", False, "s_mov_b32 m0, 0x800"),
    ("980AC124", False, "s_cselect_b32 s10, s36, -1"),
    ("D7006A10 000220FF 00000400", False, "v_add_co_u32 v16, vcc_lo, 0x400, v16"),
    ("D501000C 010A18C1", False, "v_cndmask_b32_e64 v12, -1, v12, s66"),
    ("BF8903F7", False, "s_waitcnt vmcnt(0)"),
    ("BF89FC07", False, "s_waitcnt lgkmcnt(0)"),
    ("F404070E 0E000000", False, "s_load_b64 s[28:29], s[28:29], s7"),
    ("F4100600 F8000008", False, "s_load_b512 s[24:39], s[0:1], 0x8"),
    ("DBFC0800 0A00001B", False, "ds_load_b128 v[10:13], v27 offset:2048"),
    ("DA8C0040 0F00001C", False, "ds_load_u8_d16_hi v15, v28 offset:64"),
    ("E08C0002 8042201D", False, "buffer_load_d16_hi_b16 v32, v29, s[8:11], 0 offen offset:2"),
    ("E0740000 80448C88", False, "buffer_store_b128 v[140:143], v136, s[16:19], 0 offen"),
    ("CC200013 144E242D", False, "v_fma_mix_f32 v19, s45, v18, v19 op_sel_hi:[0,1,0]"),
    ("CC104012 1802002C", False, "v_pk_mul_f16 v18, s44, v0"),
    ("CC444000 FC02150F", False, "v_wmma_i32_16x16x16_iu8 v[0:7], v[15:18], v[10:13], v[0:7] neg_lo:[1,1,1]"),
    ("CC404000 1C021513", False, "v_wmma_f32_16x16x16_f16 v[0:7], v[19:26], v[10:17], v[0:7]"),
    ("121A1AFF FFFFFFE0", False, "v_mul_i32_i24_e32 v13, 0xffffffe0, v13"),
    ("BDFC0000", False, "s_waitcnt_lgkmcnt null, 0x0"),
    ("BEEA2229", False, "s_or_saveexec_b32 vcc_lo, s41"),
    ("D412006A 0001002C", False, "v_cmp_eq_f32_e64 vcc_lo, s44, 0"),
    ("D412006A 0001002C", True, "v_cmp_eq_f32_e64 vcc, s44, 0"),  # a wave64 lane mask is a pair
    ("D7006A10 000220FF 00000400", True, "v_add_co_u32 v16, vcc, 0x400, v16"),
    ("7E2A0300", False, "v_mov_b32_e32 v21, v0"),
    ("BFB00000", False, "s_endpgm"),
    ("BF800001", False, "s_nop 1"),
    # the cases LLVM's MC tests showed
    ("00000000", False, "v_illegal"),  # the all-zero word
    ("F4000141 F8000000", False, "s_load_b32 s5, s[2:3], null"),  # no SGPR offset, offset 0
    ("BF00FF00 3F717273", False, "s_cmp_eq_i32 s0, 0x3f717273"),  # a literal in ssrc1
    ("BE834CFF", False, "s_sendmsg_rtn_b32 s3, sendmsg(255, 0, 0)"),  # 255 is the message id
    ("B0801234", False, "s_version 0x1234"),
    ("D8D4FFFF 08000002", False, "ds_swizzle_b32 v8, v2 offset:65535"),
    ("D8D480FF 08000002", False, "ds_swizzle_b32 v8, v2 offset:swizzle(QUAD_PERM,3,3,3,3)"),
    ("CD028000 240E0501", False, "v_interp_p10_f16_f32 v0, -v1, v2, v3 clamp wait_exp:0"),
    ("BF930000", False, "s_singleuse_vdst 0x0"),  # RDNA3.5 (gfx1150)
    ("CC404010 1C421100", True, "v_wmma_f32_16x16x16_f16 v[16:19], v[0:7], v[8:15], v[16:19]"),  # wave64 C/D
]


def _words(hexwords: str) -> bytes:
    return b"".join(int(w, 16).to_bytes(4, "little") for w in hexwords.split())


@pytest.mark.parametrize("hexwords,wave64,text", KNOWN)
def test_known_encodings(hexwords, wave64, text):
    code = _words(hexwords)
    size, got, target = Decoder(wave64=wave64).decode(code, 0)
    assert (size, got, target) == (len(code), text, None)


def test_branch_targets_are_byte_offsets():
    # s_cbranch_vccz +1: the instruction after the next; s_branch -1: itself
    code = _words("BFA30001 BF800000 BFB00000 BFA0FFFF")
    d = Decoder()
    assert d.decode(code, 0) == (4, "s_cbranch_vccz {}", 8)
    assert d.decode(code, 12) == (4, "s_branch {}", 12)


def test_vopd_pair_and_shared_literal():
    # one literal dword for the pair; Y's destination keeps the other parity than X's
    code = bytes([0x01, 0x05, 0x90, 0xc8, 0x06, 0x01, 0x02, 0x00, 0x34, 0x12, 0x00, 0x00])
    size, text, _ = Decoder().decode(code, 0)
    assert size == 12 and text == "v_dual_fmamk_f32 v0, v1, 0x1234, v2 :: v_dual_mov_b32 v3, v6"


def test_unknown_words_are_refused_not_guessed():
    d = Decoder()
    with pytest.raises(UnknownEncoding):
        d.decode(bytes([1, 0, 0, 0]), 0)  # VOP2 opcode 0 is an instruction only as the all-zero word
    with pytest.raises(UnknownEncoding):
        d.decode(_words("D7006A10"), 0)  # a VOP3 cut after its first dword


def test_every_encoding_class_is_told_apart_by_its_top_bits():
    t = tables()
    assert len(t.by_top) == 512
    assert {c for c in t.by_top if c} >= {"SOP1", "SOP2", "SOPC", "SOPK", "SOPP", "VOP1", "VOP2", "VOPC", "VOP3",
                                          "VOP3P", "VOPD", "DS", "SMEM", "MUBUF", "MTBUF", "MIMG", "EXP", "VINTERP",
                                          "LDSDIR"}


# ------------------------------------------------------------------------------------------------
# LLVM as the oracle
# ------------------------------------------------------------------------------------------------

def _llvm_mc() -> str:
    path = shutil.which("llvm-mc-19")
    if not path:
        pytest.skip("llvm-mc-19 is not installed (apt-get install llvm-19): the oracle of these tests")
    return path


def _llvm_texts(mc: str, encodings: list[bytes], wave64: bool) -> dict[bytes, str]:
    attr = ["-mattr=+wavefrontsize64"] if wave64 else []
    p = subprocess.run([mc, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1100", *attr, "-disassemble", "-show-encoding"],
                       input="\n".join(",".join(f"0x{b:02x}" for b in e) for e in encodings),
                       capture_output=True, text=True, timeout=600)
    out = {}
    for line in p.stdout.splitlines():
        m = re.match(r"\s+(.*?)\s*; encoding: \[(.*)\]", line)
        if m:
            out[bytes(int(x, 16) for x in m.group(2).split(","))] = " ".join(m.group(1).split())
    return out


def _ours(decoder, raw: bytes) -> str | None:
    try:
        size, text, target = decoder.decode(raw, 0)
    except UnknownEncoding:
        return None
    if size != len(raw):
        return f"<{size} bytes>"
    return text.replace("{}", str(((target - 4) // 4) & 0xFFFF)) if target is not None else text


@pytest.mark.parametrize("wave64", [False, True])
def test_every_synthesized_form_reads_as_llvm_prints_it(wave64, tmp_path):
    mc = _llvm_mc()
    lines = [f.line for f in all_forms() if f.wave64 == wave64]
    src = tmp_path / "forms.s"
    src.write_text("\n".join(lines) + "\n")
    attr = ["-mattr=+wavefrontsize64"] if wave64 else []
    p = subprocess.run([mc, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1100", *attr, "-show-encoding", str(src)],
                       capture_output=True, text=True, timeout=600)
    encodings = [bytes(int(x, 16) if x != "A" else 0 for x in m.group(1).split(","))
                 for m in re.finditer(r"encoding: \[(.*?)\]", p.stdout)]
    assert len(encodings) > (3900 if not wave64 else 400)
    theirs = _llvm_texts(mc, encodings, wave64)
    decoder = Decoder(wave64=wave64)
    wrong = [(raw.hex(), theirs[raw], _ours(decoder, raw)) for raw in encodings
             if raw in theirs and _ours(decoder, raw) != theirs[raw]]
    assert not wrong, wrong[:10]


def _random_encodings(seed: int, per_opcode: int) -> list[bytes]:
    """Each opcode with random fields, sources drawn from every operand kind (registers, inline
    constants, literals, DPP); VOPD pairs of random X and Y opcodes."""
    rnd = random.Random(seed)
    t = tables()

    def build(cls, fixed):
        lay = t.layouts[cls]
        value = 0
        for name, f in lay["fields"].items():
            width = f[0] - f[1] + 1
            v = f[3] if f[2] == "fixed" else fixed.get(name, rnd.getrandbits(width))
            value |= (v & ((1 << width) - 1)) << f[1]
        return value.to_bytes(lay["bits"] // 8, "little") + rnd.getrandbits(32).to_bytes(4, "little")

    def source():
        return rnd.choice([rnd.randrange(0, 106), 106, 124, 125, 126, rnd.randrange(108, 124), rnd.randrange(128, 209),
                           rnd.randrange(240, 249), 255, rnd.randrange(256, 512), rnd.randrange(256, 512)])

    out = []
    for (enc, op), _o in sorted(t.by_op.items()):
        for _ in range(per_opcode):
            f = {"op": op}
            if enc in ("VOP3", "VOP3SD", "VOP3P", "VINTERP", "VOP1", "VOP2", "VOPC"):
                f.update(src0=source(), src1=source(), src2=source())
                if rnd.random() < 0.2:
                    f["src0"] = rnd.choice([233, 234, 250])  # DPP8, DPP8 with FI, DPP16
            if enc in ("SOP1", "SOP2", "SOPC"):
                f.update(ssrc0=source() & 0xFF, ssrc1=source() & 0xFF)
            out.append(build(enc, f))
    xs = [op for op, o in sorted(t.vopd.items()) if o.row.get("vopd") == "xy"]
    for _ in range(per_opcode * 40):
        out.append(build("VOPD", {"opx": rnd.choice(xs), "opy": rnd.choice(sorted(t.vopd)), "srcx0": source(),
                                  "srcy0": source()}))
    return out


# Encodings no assembler writes, which LLVM prints in ways of its own: register numbers beyond
# what a 16-bit operand's field can name, DPP with a literal, a branch's raw offset (isalint names
# its target), integer sources with DPP's sign-extension bit, s_sendmsg*/s_version oddities.
_LLVM_ONLY = re.compile(r"Invalid register|invalid|sext\(|^s_(cbranch|branch|call|subvector|sendmsghalt|version)")


@pytest.mark.parametrize("wave64", [False, True])
def test_random_encodings_of_every_opcode_read_as_llvm_prints_them(wave64):
    mc = _llvm_mc()
    decoder = Decoder(wave64=wave64)
    ours = {}
    for raw in _random_encodings(11 + wave64, 4):
        try:
            size = decoder.decode(raw, 0)[0]
        except UnknownEncoding:
            continue
        ours[raw[:size]] = _ours(decoder, raw[:size])
    theirs = _llvm_texts(mc, list(ours), wave64)
    compared = wrong = 0
    examples = []
    for raw, text in ours.items():
        want = theirs.get(raw)
        if want is None or _LLVM_ONLY.search(want):
            continue
        if _dpp_with_literal(raw):
            continue  # no such instruction: LLVM reads the DPP dword as the literal too
        compared += 1
        if want != text:
            wrong += 1
            examples.append((raw.hex(), want, text))
    assert compared > 1500
    assert not wrong, examples[:10]


def _dpp_with_literal(raw: bytes) -> bool:
    """A VOP3/VOP3P word whose src0 selects DPP and another source the literal."""
    w0, w1 = int.from_bytes(raw[:4], "little"), int.from_bytes(raw[4:8], "little")
    if w0 >> 26 != 0b110101 and w0 >> 24 != 0b11001100:
        return False
    return w1 & 0x1FF in (233, 234, 250) and 255 in ((w1 >> 9) & 0x1FF, (w1 >> 18) & 0x1FF)


@pytest.mark.parametrize("hexwords,text", [
    ("7E0AB981", "v_ceil_f16_e32 v5.l, v1.h"),  # bit 7 of a VGPR field: the high half
    ("650B0501", "v_add_f16_e32 v5.h, v1.l, v2.h"),
    ("7E0AB801", "v_ceil_f16_e32 v5.l, s1"),
    ("D5DC4805 080000FA 01015F01", "v_ceil_f16_e64_dpp v5.h, v1.h op_sel:[1,1] mul:2 row_share:15 row_mask:0x0 "
                                   "bank_mask:0x1"),  # VOP3: op_sel picks the halves
])
def test_real_true16_syntax(hexwords, text):
    """LLVM 19's +real-true16 mode names the register halves of the 16-bit opcodes it models so; the
    default mode writes the same bytes with 32-bit registers, and has no spelling for a high half
    in a 32-bit encoding (LLVM's disassembler calls it invalid): there the decoder is silent."""
    code = _words(hexwords)
    assert Decoder(true16=True).decode(code, 0) == (len(code), text, None)
    if ".h" in text and "_e64" not in text:
        with pytest.raises(UnknownEncoding):
            Decoder().decode(code, 0)
    else:
        default = Decoder().decode(code, 0)[1]
        assert ".l" not in default and ".h" not in default


def test_random_image_encodings_read_as_llvm_prints_them():
    """Image instructions with every field random (the unused bits clear), NSA or not: each one the
    decoder prints reads as LLVM prints it, and LLVM reads almost all of them (the decoder stays
    silent where LLVM's disassembler sizes no register, or calls the word invalid)."""
    mc = _llvm_mc()
    from isalint import isa

    rnd = random.Random(20261128)
    opcodes = sorted(r["op"] for r in isa._ops().values() if r["enc"] == "MIMG")
    decoder = Decoder()
    ours = {}
    for _ in range(3000):
        w0 = ((60 << 26) | (rnd.choice(opcodes) << 18) | rnd.getrandbits(18)) & ~((1 << 1) | (3 << 5))
        w1 = rnd.getrandbits(32) & ~((7 << 23) | (1 << 31))
        if rnd.random() < 0.3:
            w1 &= ~(3 << 21)  # tfe and lwe clear
        raw = w0.to_bytes(4, "little") + w1.to_bytes(4, "little")
        if w0 & 1:
            raw += rnd.getrandbits(32).to_bytes(4, "little")
        text = _ours(decoder, raw)
        if text is not None:
            ours[raw] = " ".join(text.split())
    theirs = _llvm_texts(mc, list(ours), False)
    wrong = [(raw.hex(), theirs[raw], text) for raw, text in ours.items() if raw in theirs and theirs[raw] != text]
    assert len(ours) > 600 and len(theirs) >= 0.99 * len(ours)
    assert not wrong, wrong[:5]
