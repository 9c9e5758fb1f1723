"""gfx11 machine code to assembly text, in LLVM's syntax, from the generated ISA data.

What is generated and what is written here: which encoding a machine word belongs to, where each
field sits, which opcode a number names, each opcode's operands in syntax order with their widths,
number formats and lane-mask flags all come from ``isalint/isa/rdna3.json`` (the ``layouts`` of
every encoding class and the per-mnemonic rows, both generated from AMD's machine-readable ISA
tables). This module holds the syntax: how an operand value is spelled (the operand encoding of the
RDNA3 ISA guide, "Scalar/Vector ALU operands": SGPRs 0-105, VCC 106-107, TTMP 108-123, NULL 124,
M0 125, EXEC 126-127, inline integers 128-208, inline floats 240-248, literal 255, VGPRs 256-511),
which modifiers each encoding writes and in which order (LLVM's, so that the text reads as
``llvm-objdump`` prints it and the LLVM assembler gives the same bytes back).

The decoder is exact or silent: an encoding it cannot print (an unknown opcode, an image atomic
with ``tfe`` whose registers LLVM writes by their first only) raises :class:`UnknownEncoding`,
never a guess.
"""
from __future__ import annotations

from .. import isa

# Operand values of the 9-bit source fields (RDNA3 ISA guide, "Scalar ALU Operands").
_SPECIAL = {106: "vcc_lo", 107: "vcc_hi", 124: "null", 125: "m0", 126: "exec_lo", 127: "exec_hi",
            235: "src_shared_base", 236: "src_shared_limit", 237: "src_private_base",
            238: "src_private_limit", 239: "src_pops_exiting_wave_id", 251: "src_vccz",
            252: "src_execz", 253: "src_scc", 254: "src_lds_direct"}
_PAIRS = {106: "vcc", 126: "exec"}
_INLINE_FLOAT = {240: "0.5", 241: "-0.5", 242: "1.0", 243: "-1.0", 244: "2.0", 245: "-2.0", 246: "4.0",
                 247: "-4.0"}
_INV_2PI = "0.15915494"
_INV_2PI_F64 = "0.15915494309189532"
LITERAL, DPP8, DPP8_FI, DPP16 = 255, 233, 234, 250
_OMOD = {1: " mul:2", 2: " mul:4", 3: " div:2"}
# s_delay_alu fields (RDNA3 ISA guide, S_DELAY_ALU): INSTID0 [3:0], INSTSKIP [6:4], INSTID1 [10:7]
_DELAY_ID = ("NO_DEP", "VALU_DEP_1", "VALU_DEP_2", "VALU_DEP_3", "VALU_DEP_4", "TRANS32_DEP_1",
             "TRANS32_DEP_2", "TRANS32_DEP_3", "FMA_ACCUM_CYCLE_1", "SALU_CYCLE_1", "SALU_CYCLE_2",
             "SALU_CYCLE_3")
_DELAY_SKIP = ("SAME", "NEXT", "SKIP_1", "SKIP_2", "SKIP_3", "SKIP_4")
# export targets (RDNA3 ISA guide, "Export": TARGET)
_EXP_TARGETS = {**{i: f"mrt{i}" for i in range(8)}, 8: "mrtz", 9: "null",
                **{12 + i: f"pos{i}" for i in range(5)}, 20: "prim", 21: "dual_src_blend0",
                22: "dual_src_blend1"}
_SIXTEEN = {"F16", "BF16", "I16", "U16", "B16"}
_SIXTY_FOUR = {"F64", "I64", "U64", "B64"}


# encodings whose size depends on their second dword (a literal or DPP dword after the first two)
_SIZE_FROM_SECOND_DWORD = {"VOP3", "VOP3SD", "VOP3P", "VOPD"}
LONGER = (None, None)  # a first-two-dwords entry: the instruction is 12 bytes


class UnknownEncoding(ValueError):
    """Machine code the decoder does not print; ``offset`` is the byte offset in the code."""

    def __init__(self, offset: int, message: str):
        super().__init__(message)
        self.offset = offset


class _Op:
    """One opcode as the decoder prints it: its LLVM spelling and its operand rows."""

    __slots__ = ("name", "enc", "ops", "fmts", "klass", "opcode", "row")

    def __init__(self, name: str, row: dict):
        self.name = name
        self.enc = row["enc"]
        self.ops = row["ops"]
        self.fmts = [f.split("/")[0] for f in row.get("fmt", [""] * len(row["ops"]))]
        self.klass = row["cls"]
        self.opcode = row["op"]
        self.row = row


class _Tables:
    """Encodings and opcodes from the generated data, built once per process."""

    def __init__(self):
        ops = {**isa.EXTRA_ROWS, **isa._ops()}
        meta = isa.meta()
        self.layouts = meta["layouts"]
        # which encoding a first dword belongs to: the fixed "encoding" bits, longest first
        fixed = []
        for cls, lay in self.layouts.items():
            if lay["base"] is not None:
                continue
            hi, lo, _kind, value = lay["fields"]["encoding"]
            fixed.append((hi - lo + 1, lo, (1 << (hi - lo + 1)) - 1, value, cls))
        # classes that share their fixed bits (VOP3/VOP3SD, FLAT/GLOBAL/SCRATCH) are one encoding
        # here, told apart by the opcode or the segment field: keep the first name
        seen = set()
        fixed = [f for f in sorted(fixed, key=lambda f: f[4]) if f[:4] not in seen and not seen.add(f[:4])]
        fixed.sort(reverse=True)
        self.dispatch = [(lo, mask, value, cls) for _w, lo, mask, value, cls in fixed]
        # every encoding is told by bits [31:23] of the first dword: one table of 512
        assert all(lo >= 23 for lo, _m, _v, _c in self.dispatch)
        self.by_top: list[str | None] = []
        for top in range(512):
            word = top << 23
            self.by_top.append(next((cls for lo, mask, value, cls in self.dispatch if (word >> lo) & mask == value),
                                    None))
        self.field = {cls: {name: (f[1], (1 << (f[0] - f[1] + 1)) - 1) for name, f in lay["fields"].items()}
                      for cls, lay in self.layouts.items()}
        names = set(ops)
        self.by_op: dict[tuple[str, int], _Op] = {}
        self.vopd: dict[int, _Op] = {}
        for name, row in ops.items():
            enc = row["enc"]
            if name.endswith("_dpp"):
                continue
            if enc == "VOPD":
                self.vopd[row["op"]] = _Op(name, row)
                continue
            printed = _llvm_name(name, enc, names)
            if printed is None:
                continue
            key = (enc, row["op"])
            if key not in self.by_op or printed == name:
                self.by_op[key] = _Op(printed, ops[printed] if printed in ops else row)
        # VOP3 and VOP3SD share one encoding: the opcode decides
        self.vop3sd = {op for (enc, op) in self.by_op if enc == "VOP3SD"}
        # VOPC opcodes promoted to VOP3 keep their number (RDNA3 ISA guide, "VOP3"): VOP3 0-255
        # are the compares, so the VOPC name of a VOP3 compare is found by the same opcode


def _llvm_name(name: str, enc: str, names: set) -> str | None:
    """The spelling LLVM prints for the row ``name``, or None when another row of the same opcode
    is the one it prints. VOP1/VOP2/VOPC carry ``_e32`` and VOP3 ``_e64`` only when the opcode has
    both encodings; an opcode with one encoding is printed bare."""
    if enc in ("VOP1", "VOP2", "VOPC"):
        if not name.endswith("_e32"):
            return None if (name + "_e32") in names else name
        base = name[:-4]
        return name if (base + "_e64") in names else base
    if enc in ("VOP3", "VOP3SD"):
        if name.endswith("_e64"):
            base = name[:-4]
            return name if (base + "_e32") in names else base
        return None if (name + "_e64") in names and (name + "_e32") in names else name
    return name


_TABLES: _Tables | None = None


def tables() -> _Tables:
    global _TABLES
    if _TABLES is None:
        _TABLES = _Tables()
    return _TABLES


# ------------------------------------------------------------------------------------------------
# operand spelling
# ------------------------------------------------------------------------------------------------

def _range(prefix: str, first: int, count: int) -> str:
    return f"{prefix}{first}" if count == 1 else f"{prefix}[{first}:{first + count - 1}]"


def vgpr(n: int, bits: int = 32) -> str:
    return _range("v", n, max(1, bits // 32))


def sreg(value: int, bits: int = 32) -> str:
    """An SGPR-file operand (0-127) of ``bits`` width."""
    count = max(1, bits // 32)
    if value <= 105:
        return _range("s", value, count)
    if 108 <= value <= 123:
        return _range("ttmp", value - 108, count)
    if count == 2 and value in _PAIRS:
        return _PAIRS[value]
    name = _SPECIAL.get(value)
    if name is None:
        raise ValueError(f"register operand {value}")
    return name


def _hex(v: int) -> str:
    return f"0x{v:x}"


def _signed_hex(v: int) -> str:
    return f"-0x{-v:x}" if v < 0 else f"0x{v:x}"


def constant(value: int, fmt: str, literal: int | None) -> str:
    """An inline constant or the literal, as LLVM prints it for an operand of format ``fmt``."""
    if 128 <= value <= 192:
        return str(value - 128)
    if 193 <= value <= 208:
        return str(192 - value)
    f = _INLINE_FLOAT.get(value)
    if f is not None:
        return f
    if value == 248:
        return _INV_2PI_F64 if fmt in _SIXTY_FOUR else _INV_2PI
    if value == LITERAL:
        if literal is None:
            raise ValueError("literal operand without a literal")
        if fmt in _SIXTEEN:
            return _hex(literal & 0xFFFF)
        return _hex(literal)
    raise ValueError(f"source operand {value}")


def src(value: int, bits: int, fmt: str, literal: int | None) -> str:
    """A 9-bit source operand: VGPRs from 256, SGPR-file registers below 128, else a constant."""
    if value >= 256:
        return vgpr(value - 256, bits)
    if value < 128:
        return sreg(value, bits)
    if value in _SPECIAL:
        return _SPECIAL[value]
    return constant(value, fmt, literal)


# ------------------------------------------------------------------------------------------------
# the decoder
# ------------------------------------------------------------------------------------------------

class Decoder:
    """Decodes gfx11 machine code. ``wave64``: lane masks are register pairs (``vcc``, ``s[0:1]``).
    ``true16``: the syntax of LLVM's ``+real-true16`` mode, where the 16-bit opcodes LLVM 19 models
    with register halves name them (``v_ceil_f16_e32 v5.l, v1.h``); by default LLVM 19's default
    syntax for gfx11, which writes 32-bit registers for them."""

    def __init__(self, wave64: bool = False, true16: bool = False):
        self.t = tables()
        self.wave64 = wave64
        self.true16 = true16
        self._m4: dict[bytes, tuple] = {}  # instructions by their bytes, by size
        self._m8: dict[bytes, tuple] = {}
        self._m12: dict[bytes, tuple] = {}
        self.known_dwords = self._m4  # (text, relative branch target) of the 4-byte instructions seen
        self.known_qwords = self._m8  # the same of the 8-byte ones (LONGER: the first 8 of 12 bytes)

    # -- one instruction -----------------------------------------------------------------------
    def decode(self, code: bytes, k: int) -> tuple[int, str, int | None]:
        """(size in bytes, text, branch target) of the instruction at byte ``k`` of ``code``. A branch's
        text holds ``{}`` where its target is named; the target is a byte offset into ``code``.

        Kernels repeat their instructions: each distinct one is decoded once, then found by its
        bytes (its first dword when that fixes its size, else its first two or three)."""
        raw = code[k:k + 4]
        entry = self._m4.get(raw)
        if entry is None:
            raw = code[k:k + 8]
            entry = self._m8.get(raw)
            if entry is None or entry is LONGER:
                raw = code[k:k + 12]
                entry = self._m12.get(raw)
                if entry is None:
                    return self._first(code, k)
        text, rel = entry
        return len(raw), text, (None if rel is None else k + rel)

    def _first(self, code: bytes, k: int) -> tuple[int, str, int | None]:
        """:meth:`decode` of an instruction not seen before."""
        size, cls = self.size(code, k)
        raw = code[k:k + size]
        if len(raw) < size:
            raise UnknownEncoding(k, f"instruction runs past the end of the code ({len(raw)} of {size} bytes)")
        self._rel = None
        try:
            text = self._text(raw, cls, k)
        except UnknownEncoding:
            raise
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise UnknownEncoding(k, f"{cls} word {raw.hex()}: {exc}") from None
        entry = (text, self._rel)
        if size == 4 and cls not in _SIZE_FROM_SECOND_DWORD:
            self._m4[raw] = entry
        elif size == 8:
            self._m8[raw] = entry
        else:
            if size == 12:
                self._m8[raw[:8]] = LONGER
            self._m12[raw] = entry
        return size, text, (None if self._rel is None else k + self._rel)

    def size(self, code: bytes, k: int) -> tuple[int, str]:
        """(size, encoding class) of the instruction at ``k``: the base encoding, a literal dword
        when a source is 255 (or the opcode always has one), a DPP dword when src0 says so."""
        if k + 4 > len(code):
            raise UnknownEncoding(k, "truncated instruction")
        w0 = code[k] | code[k + 1] << 8 | code[k + 2] << 16 | code[k + 3] << 24
        cls = self.t.by_top[w0 >> 23]
        if cls is None:
            raise UnknownEncoding(k, f"no gfx11 encoding has the word 0x{w0:08x}")
        base = self.t.layouts[cls]["bits"] // 8
        if cls in ("VOP1", "VOP2", "VOPC"):
            s0 = w0 & 0x1FF
            if s0 == LITERAL or s0 in (DPP16, DPP8, DPP8_FI):
                return 8, cls
            if cls == "VOP2" and (w0 >> 25) & 0x3F in self._vop2_literal_ops():
                return 8, cls
            return 4, cls
        if cls in ("SOP1", "SOP2", "SOPC"):
            if cls == "SOP1" and (w0 >> 8) & 0xFF in self._sendmsg_rtn_ops():
                return 4, cls  # its SSRC0 field holds the message id, never a literal
            if w0 & 0xFF == LITERAL or (cls != "SOP1" and (w0 >> 8) & 0xFF == LITERAL):
                return 8, cls
            if cls == "SOP2" and (w0 >> 23) & 0x7F in self._sop2_literal_ops():
                return 8, cls
            return 4, cls
        if cls == "SOPK":
            return (8 if (w0 >> 23) & 0x1F == self._setreg_imm32() else 4), cls
        if cls in ("VOP3", "VOP3SD", "VOP3P"):
            if k + 8 > len(code):
                return 8, cls
            w1 = code[k + 4] | code[k + 5] << 8 | code[k + 6] << 16 | code[k + 7] << 24
            s0, s1, s2 = w1 & 0x1FF, (w1 >> 9) & 0x1FF, (w1 >> 18) & 0x1FF
            if s0 in (DPP16, DPP8, DPP8_FI) or LITERAL in (s0, s1, s2):
                return 12, cls
            return 8, cls
        if cls == "VOPD":
            if k + 8 > len(code):
                return 8, cls
            w1 = code[k + 4] | code[k + 5] << 8 | code[k + 6] << 16 | code[k + 7] << 24
            opx, opy = (w0 >> 22) & 0xF, (w0 >> 17) & 0x1F
            if w0 & 0x1FF == LITERAL or w1 & 0x1FF == LITERAL or opx in self._vopd_literal_ops() \
                    or opy in self._vopd_literal_ops():
                return 12, cls
            return 8, cls
        if cls == "MIMG" and w0 & 1:
            return base + 4, cls  # NSA: the other address VGPRs in one more dword
        return base, cls

    def _vop2_literal_ops(self) -> frozenset:
        ops = getattr(self, "_v2lit", None)
        if ops is None:
            ops = self._v2lit = frozenset(op for (enc, op), o in self.t.by_op.items()
                                          if enc == "VOP2" and any(r[0] == "simm32" for r in o.ops))
        return ops

    def _sendmsg_rtn_ops(self) -> frozenset:
        ops = getattr(self, "_rtn", None)
        if ops is None:
            ops = self._rtn = frozenset(op for (enc, op), o in self.t.by_op.items()
                                        if enc == "SOP1" and o.name.startswith("s_sendmsg_rtn"))
        return ops

    def _sop2_literal_ops(self) -> frozenset:
        ops = getattr(self, "_s2lit", None)
        if ops is None:
            ops = self._s2lit = frozenset(op for (enc, op), o in self.t.by_op.items()
                                          if enc == "SOP2" and any(r[0] == "simm32" for r in o.ops))
        return ops

    def _vopd_literal_ops(self) -> frozenset:
        ops = getattr(self, "_vdlit", None)
        if ops is None:
            ops = self._vdlit = frozenset(op for op, o in self.t.vopd.items() if any(r[0] == "simm32" for r in o.ops))
        return ops

    def _setreg_imm32(self) -> int:
        op = getattr(self, "_sreg32", None)
        if op is None:
            op = self._sreg32 = next((o.opcode for (enc, _), o in self.t.by_op.items()
                                      if enc == "SOPK" and any(r[0] == "simm32" for r in o.ops)), -1)
        return op

    # -- text ----------------------------------------------------------------------------------
    def _text(self, raw: bytes, cls: str, k: int) -> str:
        value = int.from_bytes(raw, "little")
        fn = getattr(self, "_" + cls.lower())
        return fn(value, len(raw), k)

    def _get(self, cls: str, value: int, name: str) -> int:
        lo, mask = self.t.field[cls][name]
        return (value >> lo) & mask

    def _op(self, enc: str, opcode: int, k: int) -> _Op:
        o = self.t.by_op.get((enc, opcode))
        if o is None:
            raise UnknownEncoding(k, f"{enc} opcode {opcode} is not a gfx11 instruction")
        return o

    def _mask_bits(self, row: list) -> int:
        return 64 if (self.wave64 and len(row) > 5 and row[5]) else row[2]

    def _implicit_vcc(self) -> str:
        return "vcc" if self.wave64 else "vcc_lo"

    # scalar ALU --------------------------------------------------------------------------------
    def _salu(self, o: _Op, fields: dict, literal: int | None) -> str:
        out = []
        for row, fmt in zip(o.ops, o.fmts):
            name, bits, kind = row[0], row[2], row[3]
            if name == "simm32":
                out.append(_hex(literal))
                continue
            v = fields[name]
            if kind in ("sgpr", "ssrc"):
                # scalar literals are written whole, whatever the operand's width
                out.append(sreg(v, bits) if v < 128 else _SPECIAL[v] if v in _SPECIAL
                           else constant(v, "B32" if fmt in _SIXTEEN else fmt, literal))
            else:
                out.append(str(v))
        return o.name + (" " + ", ".join(out) if out else "")

    def _sop1(self, value: int, size: int, k: int) -> str:
        o = self._op("SOP1", self._get("SOP1", value, "op"), k)
        lit = value >> 32 if size > 4 else None
        if o.name.startswith("s_sendmsg_rtn"):
            return f"{o.name} {sreg(self._get('SOP1', value, 'sdst'), o.ops[0][2])}, {_sendmsg(value & 0xFF)}"
        return self._salu(o, {"sdst": self._get("SOP1", value, "sdst"), "ssrc0": value & 0xFF}, lit)

    def _sop2(self, value: int, size: int, k: int) -> str:
        o = self._op("SOP2", self._get("SOP2", value, "op"), k)
        lit = value >> 32 if size > 4 else None
        return self._salu(o, {"sdst": self._get("SOP2", value, "sdst"), "ssrc0": value & 0xFF,
                              "ssrc1": (value >> 8) & 0xFF}, lit)

    def _sopc(self, value: int, size: int, k: int) -> str:
        o = self._op("SOPC", self._get("SOPC", value, "op"), k)
        lit = value >> 32 if size > 4 else None
        return self._salu(o, {"ssrc0": value & 0xFF, "ssrc1": (value >> 8) & 0xFF}, lit)

    def _sopk(self, value: int, size: int, k: int) -> str:
        o = self._op("SOPK", self._get("SOPK", value, "op"), k)
        simm = value & 0xFFFF
        sdst = self._get("SOPK", value, "sdst")
        out = []
        for row, fmt in zip(o.ops, o.fmts):
            name = row[0]
            if name == "sdst":
                out.append(sreg(sdst, row[2]))
            elif name == "simm32":
                out.append(_hex(value >> 32))
            elif row[3] == "label":
                out.append(self._label(k, simm))
            elif "HWREG" in o.row["fmt"][o.ops.index(row)]:
                out.append(_hwreg(simm))
            elif o.name == "s_version":
                out.append(_VERSIONS.get(simm, _hex(simm)))
            else:
                out.append(_hex(simm))
        return o.name + " " + ", ".join(out)

    def _sopp(self, value: int, size: int, k: int) -> str:
        o = self._op("SOPP", self._get("SOPP", value, "op"), k)
        simm = value & 0xFFFF
        if o.name.startswith("s_endpgm") or o.name in _SOPP_SILENT_ZERO or not o.ops:
            return o.name + (f" {simm}" if simm else "")
        opt = o.row["fmt"][0].split("/")[1]
        if o.klass == "branch" or opt == "LABEL":
            return f"{o.name} {self._label(k, simm)}"
        if opt == "WAITCNT":
            return f"{o.name} {_waitcnt(simm)}"
        if opt == "DELAY":
            return f"{o.name} {_delay_alu(simm)}"
        if o.name in _SOPP_U16:
            return f"{o.name} {simm if simm <= 64 else _hex(simm)}"
        if opt == "SENDMSG":
            return f"{o.name} {_sendmsg(simm) if simm <= 0xFF else simm}"
        if opt == "WAITCNT_DEPCTR":
            return f"{o.name} {_depctr(simm)}"
        return f"{o.name} {_hex(simm)}"

    def _label(self, k: int, simm: int) -> str:
        """A branch target (the next instruction plus 4 * SIMM16, signed): ``{}`` for the caller to
        name, the distance kept for :meth:`decode`."""
        self._rel = 4 + 4 * (simm - 0x10000 if simm & 0x8000 else simm)
        return "{}"

    # scalar memory -----------------------------------------------------------------------------
    def _smem(self, value: int, size: int, k: int) -> str:
        o = self._op("SMEM", self._get("SMEM", value, "op"), k)
        g = lambda n: self._get("SMEM", value, n)  # noqa: E731
        offset = g("offset")
        if offset & 0x100000:
            offset -= 0x200000
        soffset = g("soffset")
        out = []
        for row in o.ops:
            name, bits = row[0], row[2]
            if name == "sdata":
                # s_atc_probe's first operand is a 3-bit immediate in the sdata field
                imm = g("sdata")
                out.append((str(imm) if imm <= 64 else _hex(imm)) if row[3] == "imm" or o.name.startswith("s_atc_probe")
                           else sreg(imm, bits))
            elif name == "sbase":
                out.append(sreg(g("sbase") * 2, bits))
            elif name == "soffset":
                if soffset != 124:
                    out.append(sreg(soffset, 32))
                else:
                    out.append(_signed_hex(offset) if offset else "null")
        text = o.name + (" " + ", ".join(out) if out else "")
        if soffset != 124 and offset:
            text += f" offset:{_signed_hex(offset)}"
        return text + _cache_bits(g("glc"), 0, g("dlc"))

    # vector ALU --------------------------------------------------------------------------------
    def _vop1(self, value: int, size: int, k: int) -> str:
        return self._vop_e32("VOP1", value, size, k)

    def _vop2(self, value: int, size: int, k: int) -> str:
        if self._get("VOP2", value, "op") == 0 and value & 0xFFFFFFFF:
            raise UnknownEncoding(k, "VOP2 opcode 0 is v_illegal only as the all-zero word")
        return self._vop_e32("VOP2", value, size, k)

    def _vopc(self, value: int, size: int, k: int) -> str:
        return self._vop_e32("VOPC", value, size, k)

    def _vop_e32(self, enc: str, value: int, size: int, k: int) -> str:
        o = self._op(enc, self._get(enc, value, "op"), k)
        s0 = value & 0x1FF
        ext = value >> 32 if size > 4 else None
        dpp = s0 in (DPP16, DPP8, DPP8_FI)
        fields = {"src0": s0, "vsrc1": self._get(enc, value, "vsrc1") if enc != "VOP1" else 0,
                  "vdst": self._get(enc, value, "vdst") if enc != "VOPC" else 0}
        mods = ["", ""]  # DPP16's neg/abs of src0 and src1
        if dpp:
            fields["src0"] = 256 + (ext & 0xFF)
            if s0 == DPP16:
                for i in (0, 1):
                    neg, ab = (ext >> (20 + 2 * i)) & 1, (ext >> (21 + 2 * i)) & 1
                    mods[i] = ("-" if neg else "") + ("|" if ab else "")
        out = []
        t16 = _stem(o.name) in _TRUE16_OPS
        halves = self.true16 and t16
        if t16 and not halves and (fields["vdst"] > 127 or fields["vsrc1"] > 127 or fields["src0"] > 383):
            # bit 7 of the VGPR field names the high half of a VGPR below v128, which LLVM's
            # default syntax cannot write (its disassembler calls it invalid): Decoder(true16=True)
            raise UnknownEncoding(k, f"{o.name}: a high 16-bit half, written only in the true16 syntax")
        for row, fmt in zip(o.ops, o.fmts):
            name, bits, kind = row[0], row[2], row[3]
            if halves and name in ("vdst", "vsrc1") and kind == "vgpr":
                out.append(_half(fields[name]))  # bit 7 of the field selects the high half
            elif halves and name == "src0" and fields["src0"] >= 256:
                m = mods[0]
                text = _half(fields["src0"] - 256)
                out.append(f"{m}{text}{'|' if '|' in m else ''}" if m else text)
            elif kind == "other":  # LLVM's spelling of the implicit VCC
                out.append(self._implicit_vcc())
            elif name == "simm32":
                out.append(_hex(ext))
            elif name == "vdst" and kind in ("sgpr", "ssrc"):
                out.append(sreg(fields["vdst"], bits))
            elif name == "sdst":  # v_readfirstlane_b32: the SGPR destination in the vdst field
                out.append(sreg(fields["vdst"], bits))
            elif name == "vdst":
                out.append(vgpr(fields["vdst"], bits))
            elif name == "src0":
                text = src(fields["src0"], bits, fmt, ext)
                m = mods[0]
                out.append(f"{m}{text}{'|' if '|' in m else ''}" if m else text)
            elif name == "vsrc1":
                text = vgpr(fields["vsrc1"], bits)
                m = mods[1]
                out.append(f"{m}{text}{'|' if '|' in m else ''}" if m else text)
        if o.name in _TRUE16_E32:
            out = _true16(out, fields, s0, dpp)
        name = o.name if out else _bare(o.name)
        if dpp:
            if enc == "VOPC":
                name = name[:-4] if name.endswith("_e32") else name
            else:
                name = (name[:-4] if name.endswith("_e32") else name) + "_dpp"
            tail = _dpp8(ext, s0 == DPP8_FI) if s0 != DPP16 else _dpp16(ext)
            return name + " " + ", ".join(out) + tail
        return name + (" " + ", ".join(out) if out else "")

    def _vop3(self, value: int, size: int, k: int) -> str:
        opcode = self._get("VOP3", value, "op")
        cls = "VOP3SD" if opcode in self.t.vop3sd else "VOP3"
        o = self._op(cls, opcode, k)
        w1 = (value >> 32) & 0xFFFFFFFF
        ext = value >> 64 if size > 8 else None
        s = [w1 & 0x1FF, (w1 >> 9) & 0x1FF, (w1 >> 18) & 0x1FF]
        dpp = s[0] in (DPP16, DPP8, DPP8_FI)
        if dpp:
            s[0] = 256 + (ext & 0xFF)
        neg = (w1 >> 29) & 7
        ab = (value >> 8) & 7 if cls == "VOP3" else 0
        opsel = (value >> 11) & 0xF if cls == "VOP3" else 0
        out = []
        nsrc = 0
        halves = self.true16 and _stem(o.name) in _TRUE16_OPS  # op_sel picks each VGPR's half
        for row, fmt in zip(o.ops, o.fmts):
            name, bits = row[0], self._mask_bits(row)
            if name == "vdst" and halves:
                out.append(f"v{value & 0xFF}.{'h' if opsel >> 3 & 1 else 'l'}")
            elif name == "vdst":
                out.append(vgpr(value & 0xFF, bits))
            elif name == "sdst":
                out.append(sreg((value >> 8) & 0x7F if cls == "VOP3SD" else value & 0xFF, bits))
            elif name in ("src0", "src1", "src2"):
                i = int(name[3])
                nsrc = max(nsrc, i + 1)
                text = src(s[i], bits, fmt, ext)
                if halves and s[i] >= 256:
                    text = f"v{s[i] - 256}.{'h' if opsel >> i & 1 else 'l'}"
                if o.name in _PERMLANE:
                    pass  # their op_sel bits are FI and BOUND_CTRL, and they take no source modifiers
                elif fmt not in _INTEGER:
                    text = _modified(text, s[i], neg >> i & 1, ab >> i & 1)
                elif dpp and neg >> i & 1:
                    text = f"sext({text})"  # an integer source of a DPP operation: sign extension
                out.append(text)
            elif name == "simm32":
                out.append(_hex(ext))
        name = o.name
        tail = ""
        if o.name in _PERMLANE:
            if opsel & 3:
                tail += " op_sel:" + _bits_list(opsel, 2)
        elif opsel:
            entries = [opsel >> i & 1 for i in range(nsrc)] + [opsel >> 3 & 1]
            tail += " op_sel:[" + ",".join(map(str, entries)) + "]"
        if (value >> 15) & 1:
            tail += " clamp"
        omod = (w1 >> 27) & 3
        if omod:
            tail += _OMOD[omod]
        if dpp:
            base = name[:-4] if name.endswith("_e64") else name
            name = base + "_e64_dpp"
            tail += _dpp8(ext, (w1 & 0x1FF) == DPP8_FI) if (w1 & 0x1FF) != DPP16 else _dpp16(ext)
        return (name + " " + ", ".join(out) if out else _bare(name)) + tail

    def _vop3p(self, value: int, size: int, k: int) -> str:
        o = self._op("VOP3P", self._get("VOP3P", value, "op"), k)
        w1 = (value >> 32) & 0xFFFFFFFF
        ext = value >> 64 if size > 8 else None
        s = [w1 & 0x1FF, (w1 >> 9) & 0x1FF, (w1 >> 18) & 0x1FF]
        dpp = s[0] in (DPP16, DPP8, DPP8_FI)
        if dpp:
            s[0] = 256 + (ext & 0xFF)
        opsel = (value >> 11) & 7
        opsel_hi = (w1 >> 27) & 3 | ((value >> 14) & 1) << 2
        neg_lo, neg_hi = (w1 >> 29) & 7, (value >> 8) & 7
        # the mixed-precision FMAs take f32 or f16 (op_sel_hi) scalars: NEG and NEG_HI are the
        # sources' negate and absolute-value modifiers (RDNA3 ISA guide, V_FMA_MIX_F32)
        mix = o.name.startswith("v_fma_mix")
        # a wave64 WMMA holds its C/D matrix in half the VGPRs of each lane (A and B keep theirs)
        halve = self.wave64 and o.name.startswith("v_wmma_")
        out = []
        nsrc = 0
        for row, fmt in zip(o.ops, o.fmts):
            name, bits = row[0], row[2]
            if halve and name in ("vdst", "src2"):
                bits //= 2
            if name == "vdst":
                out.append(vgpr(value & 0xFF, bits))
            elif name in ("src0", "src1", "src2"):
                i = int(name[3])
                nsrc = max(nsrc, i + 1)
                if mix:  # a literal is written as its low half
                    text = src(s[i], bits, "F16", ext)
                    out.append(_modified(text, s[i], neg_lo >> i & 1, neg_hi >> i & 1))
                else:
                    out.append(src(s[i], bits, fmt, ext))
        if mix:
            neg_lo = neg_hi = 0
        lanes = (1 << nsrc) - 1
        tail = ""
        if opsel & lanes:
            tail += " op_sel:" + _bits_list(opsel, nsrc)
        default_hi = 0 if mix else lanes
        if (opsel_hi & lanes) != default_hi:
            tail += " op_sel_hi:" + _bits_list(opsel_hi, nsrc)
        if neg_lo & lanes:
            tail += " neg_lo:" + _bits_list(neg_lo, nsrc)
        if neg_hi & lanes:
            tail += " neg_hi:" + _bits_list(neg_hi, nsrc)
        if (value >> 15) & 1:
            tail += " clamp"
        name = o.name
        if dpp:
            name += "_e64_dpp"
            tail += _dpp8(ext, (w1 & 0x1FF) == DPP8_FI) if (w1 & 0x1FF) != DPP16 else _dpp16(ext)
        return name + " " + ", ".join(out) + tail

    def _vopd(self, value: int, size: int, k: int) -> str:
        g = lambda n: self._get("VOPD", value, n)  # noqa: E731
        opx, opy = g("opx"), g("opy")
        x, y = self.t.vopd.get(opx), self.t.vopd.get(opy)
        if x is None or y is None or (x.row.get("vopd") != "xy"):
            raise UnknownEncoding(k, f"VOPD opcodes {opx}/{opy} are not a gfx11 pair")
        lit = value >> 64 if size > 8 else None
        vdstx = g("vdstx")
        vdsty = (g("vdsty") << 1) | ((vdstx & 1) ^ 1)
        half_x = self._vopd_half(x, vdstx, g("srcx0"), g("vsrcx1"), lit)
        half_y = self._vopd_half(y, vdsty, g("srcy0"), g("vsrcy1"), lit)
        return f"{half_x} :: {half_y}"

    def _vopd_half(self, o: _Op, vdst: int, s0: int, vs1: int, lit: int | None) -> str:
        out = []
        for row, fmt in zip(o.ops, o.fmts):
            name = row[0]
            if name == "vdst":
                out.append(vgpr(vdst))
            elif name == "src0":
                out.append(src(s0, 32, fmt, lit))
            elif name == "vsrc1":
                out.append(vgpr(vs1))
            elif name == "simm32":
                out.append(_hex(lit))
            elif row[3] == "other":
                out.append(self._implicit_vcc())
        return o.name + " " + ", ".join(out)

    def _vinterp(self, value: int, size: int, k: int) -> str:
        o = self._op("VINTERP", self._get("VINTERP", value, "op"), k)
        w1 = (value >> 32) & 0xFFFFFFFF
        s = [w1 & 0x1FF, (w1 >> 9) & 0x1FF, (w1 >> 18) & 0x1FF]
        neg = (w1 >> 29) & 7
        out = [vgpr(value & 0xFF)]
        for i in range(3):
            text = src(s[i], 32, "F32", None)
            out.append("-" + text if neg >> i & 1 else text)
        opsel = (value >> 11) & 0xF
        tail = " clamp" if (value >> 15) & 1 else ""
        if opsel:
            tail += " op_sel:" + _bits_list(opsel, 4)
        tail += f" wait_exp:{(value >> 8) & 7}"
        return o.name + " " + ", ".join(out) + tail

    def _ldsdir(self, value: int, size: int, k: int) -> str:
        o = self._op("LDSDIR", self._get("LDSDIR", value, "op"), k)
        g = lambda n: self._get("LDSDIR", value, n)  # noqa: E731
        wait = f" wait_vdst:{g('wait_vdst')}"
        if o.name == "lds_direct_load":
            return f"{o.name} {vgpr(g('vdst'))}{wait}"
        return f"{o.name} {vgpr(g('vdst'))}, attr{g('attr')}.{'xyzw'[g('attr_chan')]}{wait}"

    # LDS ---------------------------------------------------------------------------------------
    def _ds(self, value: int, size: int, k: int) -> str:
        o = self._op("DS", self._get("DS", value, "op"), k)
        g = lambda n: self._get("DS", value, n)  # noqa: E731
        out = []
        for row in o.ops:
            name, bits = row[0], row[2]
            out.append(vgpr(g(name), bits))
        text = o.name + (" " + ", ".join(out) if out else "")
        off0, off1 = g("offset0"), g("offset1")
        if "2addr" in o.name:
            if off0:
                text += f" offset0:{off0}"
            if off1:
                text += f" offset1:{off1}"
        else:
            offset = off1 << 8 | off0
            if o.name == "ds_swizzle_b32" and offset:
                text += f" offset:{_swizzle(offset)}"
            elif offset:
                text += f" offset:{offset}"
        if g("gds"):
            text += " gds"
        return text

    # vector memory -----------------------------------------------------------------------------
    def _flat(self, value: int, size: int, k: int) -> str:
        """FLAT, GLOBAL and SCRATCH: one encoding, the SEG field tells which."""
        enc = "FLAT"
        g = lambda n: self._get(enc, value, n)  # noqa: E731
        seg = g("seg")
        enc = {0: "FLAT", 1: "SCRATCH", 2: "GLOBAL"}.get(seg)
        if enc is None:
            raise UnknownEncoding(k, f"FLAT segment {seg} is not a gfx11 segment")
        o = self._op(enc, g("op"), k)
        glc = g("glc")
        saddr = g("saddr")
        sve = g("sve")
        out = []
        for row in o.ops:
            name, bits = row[0], row[2]
            if name == "vdst":
                if o.klass == "vmem_atomic" and not glc:
                    continue  # an atomic that returns nothing: no destination is written
                out.append(vgpr(g("vdst"), bits))
            elif name == "addr":
                if enc == "SCRATCH":
                    out.append(vgpr(g("addr"), 32) if sve else "off")
                elif enc == "GLOBAL" and saddr != 124:
                    out.append(vgpr(g("addr"), 32))
                else:
                    out.append(vgpr(g("addr"), 64))
            elif name == "data":
                out.append(vgpr(g("data"), bits))
            elif name == "saddr":
                out.append("off" if saddr == 124 else sreg(saddr, 32 if enc == "SCRATCH" else 64))
        text = o.name + " " + ", ".join(out)
        offset = g("offset")
        if enc != "FLAT" and offset & 0x1000:
            offset -= 0x2000
        if offset:
            text += f" offset:{offset}"
        return text + _cache_bits(glc, g("slc"), g("dlc"))

    def _mubuf(self, value: int, size: int, k: int) -> str:
        return self._buffer("MUBUF", value, k)

    def _mtbuf(self, value: int, size: int, k: int) -> str:
        return self._buffer("MTBUF", value, k)

    def _buffer(self, enc: str, value: int, k: int) -> str:
        g = lambda n: self._get(enc, value, n)  # noqa: E731
        o = self._op(enc, g("op"), k)
        offen, idxen, tfe = g("offen"), g("idxen"), g("tfe")
        out = []
        for row, fmt in zip(o.ops, o.fmts):
            name, bits = row[0], row[2]
            if name == "vdata":
                out.append(vgpr(g("vdata"), bits + (32 if tfe else 0)))
            elif name == "vaddr":
                out.append("off" if not (offen or idxen) else vgpr(g("vaddr"), 64 if (offen and idxen) else 32))
            elif name == "srsrc":
                out.append(sreg(g("srsrc") * 4, 128))
            elif name == "soffset":
                out.append(src(g("soffset"), 32, "B32", None))
        text = o.name + (" " + ", ".join(out) if out else "")
        if enc == "MTBUF" and g("format") != 1:  # 1 (BUF_FMT_8_UNORM) is the default, not written
            text += f" format:{_buffer_format(g('format'))}"
        if idxen:
            text += " idxen"
        if offen:
            text += " offen"
        if g("offset"):
            text += f" offset:{g('offset')}"
        text += _cache_bits(g("glc"), g("slc"), g("dlc"))
        if tfe:
            text += " tfe"
        return text

    def _mimg(self, value: int, size: int, k: int) -> str:
        """Image instructions, their data and address as wide as the opcode, ``dim``, ``dmask``,
        ``a16``, ``d16`` and ``tfe`` make them (:mod:`isalint.isa.mimg`, LLVM's widths); the address
        as a register list with NSA (RDNA3 ISA guide, "Image Instructions")."""
        from ..isa import mimg

        o = self._op("MIMG", self._get("MIMG", value, "op"), k)
        g = lambda n: self._get("MIMG", value, n)  # noqa: E731
        name = o.name
        bvh = name.startswith("image_bvh")
        mods = {}
        if not bvh:
            if g("dmask"):
                mods["dmask"] = _hex(g("dmask"))
            mods["dim"] = "SQ_RSRC_IMG_" + _IMG_DIMS[g("dim")]
            sampling = name.startswith(("image_sample", "image_gather4", "image_get_lod"))
            if (sampling or "_mip" in name) and "MSAA" in mods["dim"]:
                # no sampler reads a multisampled image; LLVM's disassembler then keeps the
                # registers of whatever variant the opcode decoded to
                raise UnknownEncoding(k, f"{name} of a multisampled image")  # no mip levels either
            if name.startswith("image_gather4") and g("tfe") and g("d16"):
                raise UnknownEncoding(k, f"{name} with tfe: LLVM writes no width for its status dword")
        no_d16 = o.klass == "vmem_atomic" or bvh or "_pck" in name or name in ("image_get_lod", "image_get_resinfo")
        if g("d16") and no_d16:
            raise UnknownEncoding(k, f"{name} has no 16-bit data (d16)")
        if bvh and not (g("unrm") and g("r128")) or bvh and (g("tfe") or g("lwe")):
            raise UnknownEncoding(k, f"{name} without its unorm and r128 bits, or with tfe or lwe")
        if name.startswith("image_gather4") and g("vdata") + 4 > 256:
            # LLVM reads a gather's data as four VGPRs before it sizes it: none past v252
            raise UnknownEncoding(k, f"{name}: data at v{g('vdata')}")
        for bit, written in (("unrm", "unorm"), ("glc", "glc"), ("slc", "slc"), ("dlc", "dlc"), ("r128", "r128"),
                             ("a16", "a16"), ("tfe", "tfe"), ("lwe", "lwe"), ("d16", "d16")):
            if g(bit) and not (bvh and bit in ("unrm", "r128")):  # the ray-tracing ones always set them
                mods[written] = ""
        if bvh:
            data = 4
        else:
            widths = mimg.data_widths(name, mods)
            data = widths[-1] if widths else None  # without lwe's status dword, as LLVM counts
        words = mimg.address_dwords(name, mods)
        if data is None or words is None:
            raise UnknownEncoding(k, f"{name}: operand widths unknown")
        widths = (2, 4) if "cmpswap" in name else (1, 2)
        if o.klass == "vmem_atomic" and data not in ((2,) if "tfe" in mods or "lwe" in mods else widths):
            # an atomic's data is 1 or 2 dwords (dmask 0x1, 0x3), a compare-swap's 2 or 4 (0x3, 0xf);
            # LLVM's disassembler writes the others by their first registers (or one more), and
            # with tfe or lwe it is sure of two dwords only
            raise UnknownEncoding(k, f"{name} with {data} data dwords" + (" (tfe)" if "tfe" in mods else ""))
        if g("vdata") + data > 256 or (not g("nsa") and g("vaddr") + (16 if words > 12 else words) > 256):
            raise UnknownEncoding(k, f"{name}: registers past v255")
        out = [vgpr(g("vdata"), 32 * data)]
        if g("nsa"):
            # up to five address VGPRs, the first in VADDR and four in the next dword; the last of
            # five holds the remaining dwords (the ray-tracing instructions: one per vector)
            if bvh:
                groups = [2 if "64" in name else 1, 1, 3] + ([3] if "a16" in mods else [3, 3])
            else:
                groups = [1] * words if words <= 5 else [1, 1, 1, 1, words - 4]
            extra = (value >> 64) & 0xFFFFFFFF
            regs = [g("vaddr")] + [extra >> (8 * i) & 0xFF for i in range(len(groups) - 1)]
            if size < 12 or len(groups) > 5 or extra >> (8 * (len(groups) - 1)) \
                    or any(r + n > 256 for r, n in zip(regs, groups)):
                raise UnknownEncoding(k, f"{name}: NSA address of {words} dwords in {len(groups)} VGPR fields")
            out.append("[" + ", ".join(vgpr(r, 32 * n) for r, n in zip(regs, groups)) + "]")
        else:
            out.append(vgpr(g("vaddr"), 32 * (16 if words > 12 else words)))
        rows = {row[0]: row for row in o.ops}
        if "ssamp" not in rows and g("ssamp"):
            raise UnknownEncoding(k, f"{name} takes no sampler, its SSAMP field is {g('ssamp')}")
        for field in ("srsrc", "ssamp"):
            if field in rows:
                first, count = g(field) * 4, rows[field][2] // 32
                if not (first + count <= 106 or 108 <= first and first + count <= 124 or first == 124):
                    raise UnknownEncoding(k, f"{name}: {field} s{first} and {count - 1} more leaves its register file")
                out.append(sreg(first, 32 * count))
        tail = "".join(f" {m}:{v}" if v else f" {m}" for m, v in mods.items())
        return name + " " + ", ".join(out) + tail

    def _exp(self, value: int, size: int, k: int) -> str:
        g = lambda n: self._get("EXP", value, n)  # noqa: E731
        target = _EXP_TARGETS.get(g("target"))
        if target is None:
            raise UnknownEncoding(k, f"export target {g('target')}")
        en = g("en")
        regs = [vgpr(g(f"vsrc{i}")) if en >> i & 1 else "off" for i in range(4)]
        text = f"exp {target} " + ", ".join(regs)
        if g("done"):
            text += " done"
        if g("row"):
            text += " row_en"
        return text

    # -- a whole kernel -----------------------------------------------------------------------
    def instructions(self, code: bytes, start: int = 0, end: int | None = None):
        """(byte offset, size, text) of each instruction of ``code[start:end]``."""
        k = start
        end = len(code) if end is None else end
        decode = self.decode
        while k < end:
            size, text = decode(code, k)
            yield k, size, text
            k += size


# ------------------------------------------------------------------------------------------------
# immediate operands with a syntax of their own
# ------------------------------------------------------------------------------------------------

# s_version's microcode versions
_VERSIONS = {0: "UC_VERSION_GFX7", 4: "UC_VERSION_GFX10", 6: "UC_VERSION_GFX11", 9: "UC_VERSION_GFX12"}
# SOPP immediates written in decimal up to 64 and in hex above (the others always in hex)
_SOPP_U16 = {"s_nop", "s_setprio", "s_sleep", "s_trap", "s_sethalt", "s_setkill", "s_incperflevel",
             "s_decperflevel", "s_denorm_mode"}
# SOPP opcodes whose operand is written only when it is not 0
_SOPP_SILENT_ZERO = {"s_barrier", "s_code_end", "s_icache_inv", "s_wakeup", "s_ttracedata", "s_wait_idle"}


# image dimensions (RDNA3 ISA guide, MIMG DIM)
_IMG_DIMS = ("1D", "2D", "3D", "CUBE", "1D_ARRAY", "2D_ARRAY", "2D_MSAA", "2D_MSAA_ARRAY")


# gfx11 unified buffer formats (RDNA3 ISA guide, "Buffer Resource": FORMAT), 0-63
_BUF_FORMATS = ("INVALID 8_UNORM 8_SNORM 8_USCALED 8_SSCALED 8_UINT 8_SINT 16_UNORM 16_SNORM 16_USCALED "
                "16_SSCALED 16_UINT 16_SINT 16_FLOAT 8_8_UNORM 8_8_SNORM 8_8_USCALED 8_8_SSCALED 8_8_UINT "
                "8_8_SINT 32_UINT 32_SINT 32_FLOAT 16_16_UNORM 16_16_SNORM 16_16_USCALED 16_16_SSCALED "
                "16_16_UINT 16_16_SINT 16_16_FLOAT 10_11_11_FLOAT 11_11_10_FLOAT 10_10_10_2_UNORM "
                "10_10_10_2_SNORM 10_10_10_2_UINT 10_10_10_2_SINT 2_10_10_10_UNORM 2_10_10_10_SNORM "
                "2_10_10_10_USCALED 2_10_10_10_SSCALED 2_10_10_10_UINT 2_10_10_10_SINT 8_8_8_8_UNORM "
                "8_8_8_8_SNORM 8_8_8_8_USCALED 8_8_8_8_SSCALED 8_8_8_8_UINT 8_8_8_8_SINT 32_32_UINT "
                "32_32_SINT 32_32_FLOAT 16_16_16_16_UNORM 16_16_16_16_SNORM 16_16_16_16_USCALED "
                "16_16_16_16_SSCALED 16_16_16_16_UINT 16_16_16_16_SINT 16_16_16_16_FLOAT 32_32_32_UINT "
                "32_32_32_SINT 32_32_32_FLOAT 32_32_32_32_UINT 32_32_32_32_SINT 32_32_32_32_FLOAT").split()


def _buffer_format(fmt: int) -> str:
    return f"[BUF_FMT_{_BUF_FORMATS[fmt]}]" if fmt < len(_BUF_FORMATS) else str(fmt)


_INTEGER = {"I16", "U16", "I32", "U32", "I64", "U64"}
_PERMLANE = {"v_permlane16_b32", "v_permlanex16_b32"}
# 16-bit moves whose 32-bit encodings LLVM 19 writes with register halves: the VGPR fields' bit 7
# selects the high half (RDNA3 ISA guide, "16-bit VGPRs" of VOP1)
_TRUE16_E32 = {"v_mov_b16_e32", "v_swap_b16_e32", "v_mov_b16", "v_swap_b16"}


# The 16-bit opcodes LLVM 19 writes with register halves in its real-true16 mode (its MC tests'
# +real-true16 runs): in their 32-bit encodings bit 7 of a VGPR field selects the high half of
# VGPRs 0-127, in VOP3 the op_sel bits do (RDNA3 ISA guide, "16-bit VGPRs")
_TRUE16_OPS = {"v_ceil_f16", "v_floor_f16", "v_exp_f16", "v_log_f16", "v_rcp_f16", "v_rsq_f16", "v_sqrt_f16",
               "v_add_f16", "v_sub_f16", "v_subrev_f16", "v_mul_f16", "v_max_f16", "v_min_f16"}


def _stem(name: str) -> str:
    return name[:-4] if name.endswith(("_e32", "_e64")) else name


def _half(n: int) -> str:
    return f"v{n & 0x7F}.{'h' if n & 0x80 else 'l'}"


def _true16(out: list[str], fields: dict, s0: int, dpp: bool) -> list[str]:
    def half(n: int) -> str:
        return f"v{n & 0x7F}.{'h' if n & 0x80 else 'l'}"

    res = [half(fields["vdst"])]
    if len(out) > 1:
        v = fields["src0"]
        res.append(half(v - 256) if v >= 256 else out[1])
    return res


def _modified(text: str, value: int, neg: int, absolute: int) -> str:
    """A source with its negate and absolute-value modifiers: ``-v1``, ``|v1|``, ``-|v1|``, and
    ``neg(...)`` around a constant without ``|..|`` (where ``-`` would read as its sign)."""
    if absolute:
        text = f"|{text}|"
    if neg:
        constant_operand = 128 <= value <= 255 and value not in _SPECIAL
        text = f"neg({text})" if constant_operand and not absolute else "-" + text
    return text


def _bare(name: str) -> str:
    """An opcode without operands is written without its encoding suffix (``v_nop``)."""
    return name[:-4] if name.endswith(("_e32", "_e64")) else name


def _bits_list(bits: int, n: int) -> str:
    return "[" + ",".join(str(bits >> i & 1) for i in range(n)) + "]"


def _cache_bits(glc: int, slc: int, dlc: int) -> str:
    return (" glc" if glc else "") + (" slc" if slc else "") + (" dlc" if dlc else "")


def _waitcnt(simm: int) -> str:
    """gfx11 s_waitcnt: VM_CNT [15:10], LGKM_CNT [9:4], EXP_CNT [2:0]; counters at their
    maximum (no wait) are left out, unless all are."""
    vm, lgkm, exp = simm >> 10 & 0x3F, simm >> 4 & 0x3F, simm & 7
    parts = []
    if vm != 0x3F:
        parts.append(f"vmcnt({vm})")
    if exp != 7:
        parts.append(f"expcnt({exp})")
    if lgkm != 0x3F:
        parts.append(f"lgkmcnt({lgkm})")
    if not parts:
        parts = [f"vmcnt({vm})", f"expcnt({exp})", f"lgkmcnt({lgkm})"]
    return " ".join(parts)


def _delay_alu(simm: int) -> str:
    id0, skip, id1 = simm & 0xF, simm >> 4 & 7, simm >> 7 & 0xF
    if id0 >= len(_DELAY_ID) or id1 >= len(_DELAY_ID) or skip >= len(_DELAY_SKIP):
        return _hex(simm)
    parts = []
    if id0:
        parts.append(f"instid0({_DELAY_ID[id0]})")
    if skip:
        parts.append(f"instskip({_DELAY_SKIP[skip]})")
    if id1:
        parts.append(f"instid1({_DELAY_ID[id1]})")
    return " | ".join(parts) if parts else "0"


def _hwreg(simm: int) -> str:
    reg, offset, size = simm & 0x3F, simm >> 6 & 0x1F, (simm >> 11 & 0x1F) + 1
    name = _HWREG.get(reg, str(reg))
    if offset == 0 and size == 32:
        return f"hwreg({name})"
    return f"hwreg({name}, {offset}, {size})"


# the hardware registers of s_getreg/s_setreg that the assembler names (RDNA3 ISA guide, "Hardware
# Registers"; LLVM's spelling)
_HWREG = {1: "HW_REG_MODE", 2: "HW_REG_STATUS", 3: "HW_REG_TRAPSTS", 5: "HW_REG_GPR_ALLOC",
          6: "HW_REG_LDS_ALLOC", 7: "HW_REG_IB_STS", 15: "HW_REG_SH_MEM_BASES", 18: "HW_REG_PERF_SNAPSHOT_PC_LO",
          19: "HW_REG_PERF_SNAPSHOT_PC_HI", 20: "HW_REG_FLAT_SCR_LO", 21: "HW_REG_FLAT_SCR_HI",
          23: "HW_REG_HW_ID1", 24: "HW_REG_HW_ID2", 27: "HW_REG_PERF_SNAPSHOT_DATA", 29: "HW_REG_SHADER_CYCLES"}


# s_sendmsg message types of gfx11 that are not returning messages (RDNA3 ISA guide, "S_SENDMSG")
_MESSAGES = {1: "MSG_INTERRUPT", 2: "MSG_HS_TESSFACTOR", 3: "MSG_DEALLOC_VGPRS", 5: "MSG_STALL_WAVE_GEN",
             6: "MSG_HALT_WAVES", 9: "MSG_GS_ALLOC_REQ"}


def _sendmsg(simm: int) -> str:
    msg = simm & 0xFF
    name = _MESSAGES.get(msg) or {v: k for k, v in isa.meta().get("msg", {}).items() if "ILLEGAL" not in k}.get(msg)
    return f"sendmsg({name})" if name else f"sendmsg({msg}, 0, 0)"


# S_WAITCNT_DEPCTR fields of gfx11, in the order they are written: (name, low bit, width)
_DEPCTR = (("depctr_hold_cnt", 7, 1), ("depctr_sa_sdst", 0, 1), ("depctr_va_vdst", 12, 4),
           ("depctr_va_sdst", 9, 3), ("depctr_va_ssrc", 8, 1), ("depctr_va_vcc", 1, 1), ("depctr_vm_vsrc", 2, 3))


def _depctr(simm: int) -> str:
    """The fields that wait (below their maximum); all of them when none does; the number itself
    when bits outside the fields are set."""
    if simm & 0x60:
        return _hex(simm)
    values = [(name, simm >> lo & ((1 << w) - 1), (1 << w) - 1) for name, lo, w in _DEPCTR]
    shown = [f"{n}({v})" for n, v, top in values if v != top] or [f"{n}({v})" for n, v, _ in values]
    return " ".join(shown)


def _swizzle(offset: int) -> str:
    """ds_swizzle_b32's offset (RDNA3 ISA guide, DS_SWIZZLE_B32): bit 15 selects the quad
    permutation (bits 14-8 clear; otherwise LLVM writes the number), else 5-bit AND, OR and XOR
    masks of the lane id."""
    if offset & 0xFF00 == 0x8000:
        return "swizzle(QUAD_PERM," + ",".join(str(offset >> (2 * i) & 3) for i in range(4)) + ")"
    and_mask, or_mask, xor_mask = offset & 0x1F, offset >> 5 & 0x1F, offset >> 10 & 0x1F
    if offset >> 15:
        return str(offset)
    if and_mask == 0x1F and or_mask == 0 and xor_mask and xor_mask & (xor_mask - 1) == 0:
        return f"swizzle(SWAP,{xor_mask})"
    if and_mask == 0x1F and or_mask == 0 and xor_mask and (xor_mask + 1) & xor_mask == 0:
        return f"swizzle(REVERSE,{xor_mask + 1})"
    group = 0x1F - and_mask + 1
    if xor_mask == 0 and group > 1 and group & (group - 1) == 0 and or_mask < group:
        return f"swizzle(BROADCAST,{group},{or_mask})"
    mask = ""
    for bit in range(4, -1, -1):
        a, o, x = and_mask >> bit & 1, or_mask >> bit & 1, xor_mask >> bit & 1
        if a and not o and not x:
            mask += "p"
        elif a and x and not o:
            mask += "i"
        elif not a and not x:
            mask += "1" if o else "0"
        else:
            return str(offset)
    return f'swizzle(BITMASK_PERM,"{mask}")'


def _dpp16(ext: int) -> str:
    ctrl = ext >> 8 & 0x1FF
    if ctrl <= 0xFF:
        text = "quad_perm:[" + ",".join(str(ctrl >> (2 * i) & 3) for i in range(4)) + "]"
    elif 0x101 <= ctrl <= 0x10F:
        text = f"row_shl:{ctrl & 0xF}"
    elif 0x111 <= ctrl <= 0x11F:
        text = f"row_shr:{ctrl & 0xF}"
    elif 0x121 <= ctrl <= 0x12F:
        text = f"row_ror:{ctrl & 0xF}"
    elif ctrl == 0x140:
        text = "row_mirror"
    elif ctrl == 0x141:
        text = "row_half_mirror"
    elif 0x150 <= ctrl <= 0x15F:
        text = f"row_share:{ctrl & 0xF}"
    elif 0x160 <= ctrl <= 0x16F:
        text = f"row_xmask:{ctrl & 0xF}"
    else:
        raise ValueError(f"DPP control 0x{ctrl:x}")
    text = f" {text} row_mask:{_hex(ext >> 28 & 0xF)} bank_mask:{_hex(ext >> 24 & 0xF)}"
    if ext >> 19 & 1:
        text += " bound_ctrl:1"
    if ext >> 18 & 1:
        text += " fi:1"
    return text


def _dpp8(ext: int, fi: bool) -> str:
    sel = ext >> 8
    text = " dpp8:[" + ",".join(str(sel >> (3 * i) & 7) for i in range(8)) + "]"
    return text + (" fi:1" if fi else "")


