"""VOPD (dual-issue VALU) legality, usable on parsed lines and on plain tuples.

A VOPD instruction packs two VALU operations, X and Y, issued in the same cycle
(RDNA3 ISA guide, section 7.6 "Dual Issue VALU"). The constraints checked here
are the ones LLVM's assembler enforces for gfx11, which the test suite verifies
against a real ``llvm-mc`` on thousands of random pairs:

* opcodes: X takes only opcodes that fit the 4-bit OPX field (``vopd == "xy"`` in
  the ISA data); ``v_dual_add_nc_u32``, ``v_dual_lshlrev_b32`` and
  ``v_dual_and_b32`` are Y-only. ``v_dual_dot2acc_f32_bf16`` is a VOPD opcode of the
  ISA guide (OPX 13) with no VOP2 counterpart on gfx11; LLVM assembles it from version 20.
* operands: destinations are single VGPRs; SRC0 is a VGPR, scalar register or
  constant; VSRC1 is a VGPR; no neg/abs modifiers.
* each half's operands are numbered as LLVM numbers them: SRC0, SRC1, SRC2 =
  the sources in assembler order, then the accumulator for opcodes that read
  their destination (fmac, dot2acc). So ``fmamk``'s VGPR addend is its SRC2
  (the guide: it "uses the SRC2 read port"), ``fmaak``'s SRC2 is its literal.
* SRC0X/SRC0Y in different VGPR banks (index mod 4), SRC1X/SRC1Y likewise;
  SRC2X/SRC2Y (when both are VGPRs) one even and one odd; DSTX/DSTY one even and
  one odd.
* one literal value for the whole instruction (fmaak/fmamk's K included; inline
  constants are not literals; equal values are shared);
* at most 2 scalar values in total: distinct SGPRs (``null`` and LDS-direct do
  not count), plus 1 if there is a literal. LLVM counts the implicit VCC read of
  ``v_dual_cndmask_b32`` apart from an explicit ``vcc_lo`` source.

Reading the other half's destination is legal: both halves read their sources
before either writes, so the read sees the old value. :func:`check_pair`
reports Y reading X's destination as ``info`` on an existing pair (read in
written order, it looks like it gets X's result), and a read of an earlier
instruction's result as an error when the pair is being formed from two
instructions in program order (``order``), where it would change the result.

Inputs: a :class:`Half`, a parsed :class:`~isalint.parse.nodes.Statement`, an
assembler string (``"v_fmac_f32_e32 v1, v2, v3"``) or a tuple
``(mnemonic, operand, ...)`` with operands in assembler order (strings or parsed
Operands). Single-instruction mnemonics (``v_fmac_f32_e32``) are mapped to their
VOPD component through the ISA data.
"""
from __future__ import annotations

import math
import struct
from functools import lru_cache

from ..isa import lookup
from ..isa.constants import INLINE_FLOATS, INLINE_INTS, INV_2PI_F16, INV_2PI_F32, f16_bits, f32_bits
from ..isa.mnemonics import DPP_SUFFIXES, split_encoding
from ..parse.nodes import SPECIAL_REGISTERS, Operand, Statement
from ..parse.operands import OperandError, classify_operand
from ..records import FrozenRecord

__all__ = [
    "Src", "Half", "Violation", "Pairing", "PairAttempt", "half", "dual_name", "check_pair", "is_legal",
    "find_pairing", "format_pair", "bank", "COMMUTATIVE", "legality_class", "class_legal", "first_legal_form",
]

BANKS = 4
CONSTANT_BUS_LIMIT = 2

# Scalar sources that do not use the constant bus.
_FREE_SCALARS = {"null", "lds_direct", "src_lds_direct"}

# Inline constants (isalint.isa.constants): for 16-bit packed operands the f16 patterns.
_F32_INLINE_BITS = frozenset({f32_bits(v) for v in INLINE_FLOATS} | {INV_2PI_F32})
_F16_INLINE_BITS = frozenset({f16_bits(v) for v in INLINE_FLOATS} | {INV_2PI_F16})
# bf16 is the high half of an f32: its inline float patterns are those of f32, shifted.
_BF16_INLINE_BITS = frozenset({f32_bits(v) >> 16 for v in INLINE_FLOATS} | {INV_2PI_F32 >> 16})

# Operations whose two sources may be swapped without changing the result (a*b+c = b*a+c, ...).
# Keyed by the VOPD operation name without the ``v_dual_`` prefix.
COMMUTATIVE = frozenset({
    "fmac_f32", "mul_f32", "add_f32", "max_f32", "min_f32", "mul_dx9_zero_f32", "add_nc_u32", "and_b32",
    "dot2acc_f32_f16",
})


def bank(vgpr: int) -> int:
    """The VGPR bank of register ``v<vgpr>`` (RDNA3 ISA guide 7.6: indexed by bits [1:0])."""
    return vgpr % BANKS


# --------------------------------------------------------------------------- data


class Src(FrozenRecord):
    """One operand of a VOPD half, classified for the legality rules.

    ``kind``: ``vgpr``, ``sgpr`` (any scalar register that uses the constant bus),
    ``free`` (a scalar source that does not: ``null``), ``inline``, ``literal``,
    ``bad`` (cannot be encoded; ``note`` says why). ``reg``: the VGPR index of a vgpr; ``name``:
    the register name (v184, s3, vcc_lo); ``value``: the 32-bit value a literal encodes; ``op``: the
    operand as written (not compared, not shown).
    """

    _fields = ("kind", "text", "reg", "name", "value", "note", "col", "op")
    _no_repr = _no_compare = frozenset({"op"})

    def __init__(self, kind: str, text: str, reg: int | None = None, name: str | None = None,
                 value: int | None = None, note: str | None = None, col: int | None = None,
                 op: Operand | None = None):
        d = self.__dict__
        d["kind"] = kind
        d["text"] = text
        d["reg"] = reg
        d["name"] = name
        d["value"] = value
        d["note"] = note
        d["col"] = col
        d["op"] = op

    @property
    def is_vgpr(self) -> bool:
        return self.kind == "vgpr"

    def label(self) -> str:
        if self.kind == "literal":
            return f"literal 0x{self.value:x}"
        return self.name or self.text


class Half(FrozenRecord):
    """One half of a (possible) VOPD pair.

    ``mnemonic`` is the VOPD component name (``v_dual_fmac_f32``), or the name as
    written if it has none. ``operands`` are in assembler order (``dst`` first);
    ``positions`` maps LLVM's component positions SRC0/SRC1/SRC2 to operands;
    ``vopd`` is "xy", "y" or None (no VOPD component).
    """

    _fields = ("mnemonic", "written", "dst", "operands", "positions", "reads_dst", "problems", "vopd", "commuted",
               "col")

    def __init__(self, mnemonic: str, written: str, dst: Src | None, operands: tuple[Src, ...],
                 positions: tuple[Src | None, Src | None, Src | None], reads_dst: bool = False,
                 problems: tuple[str, ...] = (), vopd: str | None = None, commuted: bool = False,
                 col: int | None = None):
        self.__dict__.update(mnemonic=mnemonic, written=written, dst=dst, operands=operands, positions=positions,
                             reads_dst=reads_dst, problems=problems, vopd=vopd, commuted=commuted, col=col)

    @property
    def op(self) -> str:
        """Operation name without the ``v_dual_`` prefix (``fmac_f32``)."""
        return self.mnemonic[7:] if self.mnemonic.startswith("v_dual_") else self.mnemonic.removeprefix("v_")

    @property
    def src0(self) -> Src | None:
        return self.positions[0]

    def reads(self) -> list[str]:
        """VGPRs this half reads (sources, then the accumulator)."""
        out = [s.name for s in self.positions if s is not None and s.kind == "vgpr"]
        return list(dict.fromkeys(out))

    def writes(self) -> list[str]:
        return [self.dst.name] if self.dst is not None and self.dst.kind == "vgpr" else []

    def text(self) -> str:
        return f"{self.mnemonic} " + ", ".join(s.text for s in self.operands)

    def commute(self) -> Half | None:
        """The same operation with SRC0 and VSRC1 swapped, or None if that is not possible."""
        if self.op not in COMMUTATIVE or len(self.operands) != 3:
            return None
        d, a, b = self.operands
        if a.kind != "vgpr" or b.kind != "vgpr":
            return None
        return _build(self.mnemonic, self.written, (d, b, a), self.col, commuted=not self.commuted)


class Violation(FrozenRecord):
    """A broken VOPD constraint. ``rule`` is a stable key; ``severity`` is ``error``
    (the assembler rejects it / the hardware forbids it) or ``warning``; ``half`` is "X", "Y" or
    None for the pair; ``short`` a few words ("SRC0 bank 0 (v184, v184)")."""

    _fields = ("rule", "message", "half", "severity", "regs", "short")

    def __init__(self, rule: str, message: str, half: str | None = None, severity: str = "error",
                 regs: tuple[str, ...] = (), short: str = ""):
        d = self.__dict__
        d["rule"] = rule
        d["message"] = message
        d["half"] = half
        d["severity"] = severity
        d["regs"] = regs
        d["short"] = short


# --------------------------------------------------------------------------- building halves


# Halves are built for every VALU statement by several rules: these two make the common objects
# without a call to __init__ (same fields, same values).
_new = object.__new__


_VGPR_NAMES = tuple(f"v{n}" for n in range(256))


def _vgpr_src(text: str, reg: int, col: int | None, op: Operand) -> Src:
    s = _new(Src)
    d = s.__dict__
    d["kind"] = "vgpr"
    d["text"] = text
    d["reg"] = reg
    d["name"] = _VGPR_NAMES[reg] if 0 <= reg < 256 else f"v{reg}"
    d["value"] = None
    d["note"] = None
    d["col"] = col
    d["op"] = op
    return s


def _new_half(mnemonic, written, dst, operands, positions, reads_dst, problems, vopd, commuted, col) -> Half:
    h = _new(Half)
    d = h.__dict__
    d["mnemonic"] = mnemonic
    d["written"] = written
    d["dst"] = dst
    d["operands"] = operands
    d["positions"] = positions
    d["reads_dst"] = reads_dst
    d["problems"] = problems
    d["vopd"] = vopd
    d["commuted"] = commuted
    d["col"] = col
    return h


@lru_cache(maxsize=None)
@lru_cache(maxsize=4096)  # asked for every VALU instruction by several rules
def dual_name(mnemonic: str) -> str | None:
    """The VOPD component of a VALU mnemonic (``v_fmac_f32_e32`` -> ``v_dual_fmac_f32``), or None."""
    m = mnemonic.strip().lower()
    if m.startswith("v_dual_"):
        info = lookup(m)
        return m if info is not None and info.klass == "vopd" else None
    info = lookup(m)
    if info is None or info.klass != "valu":
        return None
    base, suffix = split_encoding(m)
    if suffix in DPP_SUFFIXES:
        return None
    cand = "v_dual_" + base[2:]
    info = lookup(cand)
    return cand if info is not None and info.klass == "vopd" else None


@lru_cache(maxsize=None)
def _src_format(dual: str) -> str:
    # dot2acc takes two packed 16-bit values per source (the name says so: dot2 ... _f16/_bf16).
    if "dot2" in dual and dual.endswith("_bf16"):
        return "pk_bf16"
    if "dot2" in dual and dual.endswith("_f16"):
        return "pk16"
    return "b32"


_PACKED_INLINE = {"pk16": _F16_INLINE_BITS, "pk_bf16": _BF16_INLINE_BITS}


def _encode_constant(op: Operand, fmt: str, always_literal: bool = False) -> Src:
    text, col = op.text, op.col
    if op.kind == "int":
        v = int(op.value)
        if not -(1 << 31) <= v < (1 << 32):
            return Src("bad", text, note=f"{text} does not fit in 32 bits", col=col, op=op)
        u = v & 0xFFFFFFFF
        if always_literal:
            return Src("literal", text, value=u, col=col, op=op)
        signed = u - (1 << 32) if u & 0x80000000 else u
        if fmt in _PACKED_INLINE:
            # 16-bit packed operand: inline integers, or an inline float pattern written as a 16-bit value
            if signed in INLINE_INTS or (0 <= v <= 0xFFFF and v in _PACKED_INLINE[fmt]):
                return Src("inline", text, col=col, op=op)
            return Src("literal", text, value=u, col=col, op=op)
        if signed in INLINE_INTS or u in _F32_INLINE_BITS:
            return Src("inline", text, col=col, op=op)
        return Src("literal", text, value=u, col=col, op=op)
    if op.kind == "float":
        x = float(op.value)
        try:
            if fmt == "pk16" and not always_literal:
                bits = f16_bits(x)
            elif fmt == "pk_bf16" and not always_literal:
                bits = f32_bits(x, strict=True) >> 16  # LLVM writes a bf16 literal as the f32's high half
            else:
                bits = f32_bits(x, strict=True)
        except (OverflowError, struct.error):
            return Src("bad", text, note=f"{text} is out of range", col=col, op=op)
        if math.isnan(x) or math.isinf(x):
            return Src("bad", text, note=f"{text} is not a finite constant", col=col, op=op)
        if always_literal:
            return Src("literal", text, value=bits, col=col, op=op)
        if bits == 0:
            return Src("inline", text, col=col, op=op)
        inline = _PACKED_INLINE.get(fmt, _F32_INLINE_BITS)
        if bits in inline:
            return Src("inline", text, col=col, op=op)
        return Src("literal", text, value=bits, col=col, op=op)
    return Src("bad", text, note=f"{text} is not a constant", col=col, op=op)


def _classify(op: Operand, spec_kind: str, fmt: str) -> Src:
    """Classify one written operand for a VOPD operand slot of ``spec_kind`` (vgpr/src/imm)."""
    text, col = op.text, op.col
    if op.neg or op.abs:
        return Src("bad", text, note=f"{text}: VOPD operands take no neg/abs modifiers", col=col, op=op)
    kind = op.kind
    if spec_kind == "imm":
        if kind in ("int", "float"):
            return _encode_constant(op, "b32", always_literal=True)
        return Src("bad", text, note=f"{text}: the K operand must be a constant", col=col, op=op)
    if kind == "vgpr":
        if op.count != 1 or op.half:
            return Src("bad", text, note=f"{text}: a VOPD operand is one 32-bit VGPR", col=col, op=op)
        return _vgpr_src(text, op.first, col, op)
    if spec_kind == "vgpr":
        return Src("bad", text, note=f"{text}: this operand must be a VGPR", col=col, op=op)
    if kind in ("sgpr", "ttmp"):
        if op.count != 1 or op.half:
            return Src("bad", text, note=f"{text}: a VOPD operand is one 32-bit register", col=col, op=op)
        return Src("sgpr", text, name=f"{op.file}{op.first}", col=col, op=op)
    if kind == "special":
        name = op.file
        if name in _FREE_SCALARS:
            return Src("free", text, name=name, col=col, op=op)
        if name in ("vccz", "execz", "src_vccz", "src_execz"):
            return Src("bad", text, note=f"{text} is not supported on gfx11", col=col, op=op)
        if len(SPECIAL_REGISTERS.get(name, ())) > 1:
            return Src("bad", text, note=f"{text}: a VOPD operand is 32 bits, {text} is 64", col=col, op=op)
        return Src("sgpr", text, name=name, col=col, op=op)
    if kind in ("int", "float"):
        return _encode_constant(op, fmt)
    return Src("bad", text, note=f"{text}: not a register or constant", col=col, op=op)


def _operand(x) -> Operand:
    if isinstance(x, Operand):
        return x
    if isinstance(x, int) and not isinstance(x, bool):
        return Operand(str(x), 0, "int", value=x)
    if isinstance(x, float):
        return Operand(repr(x), 0, "float", value=x)
    text = str(x).strip()
    try:
        return classify_operand(text, 0)
    except OperandError:
        return Operand(text, 0, "expr")


@lru_cache(maxsize=None)
def _shape(dual: str):
    """What building a half of ``dual`` needs of the ISA data: (operand specs, destination is
    written, indices of the sources, reads its destination, vopd, operand kinds, source format,
    reads VCC implicitly)."""
    info = lookup(dual)
    specs = info.operands
    uses = tuple(i for i, sp in enumerate(specs) if sp.role == "use")
    return (specs, specs[0].role in ("def", "defuse"), uses, specs[0].role == "defuse", info.vopd,
            tuple(sp.kind for sp in specs), _src_format(dual), "vcc_lo" in info.implicit_uses)


def _build(dual: str, written: str, ops: tuple[Src, ...], col: int | None, commuted: bool = False) -> Half:
    specs, dst_def, uses, reads_dst, vopd = _shape(dual)[:5]
    n = len(ops)
    problems = [f"{dual} takes {len(specs)} operands, {n} given"] if n != len(specs) else []
    for s in ops:
        if s.kind == "bad":
            problems.append(s.note)
    dst = ops[0] if ops and dst_def else None
    sources = [ops[i] for i in uses if i < n]
    if reads_dst and dst is not None:
        sources.append(dst)
    k = len(sources)
    pos = (sources[0] if k > 0 else None, sources[1] if k > 1 else None, sources[2] if k > 2 else None)
    return _new_half(dual, written, dst, tuple(ops), pos, reads_dst, tuple(problems), vopd, commuted, col)


def half(obj, *operands) -> Half:
    """Build a :class:`Half` from a Half, a Statement, an assembler string, or a
    mnemonic followed by operands in assembler order (``half("v_fmac_f32_e32", "v1", "v2", "v3")``
    or ``half(("v_fmac_f32_e32", "v1", "v2", "v3"))``)."""
    if isinstance(obj, Half):
        return obj
    col = None
    if isinstance(obj, Statement):
        written, ops, col = obj.mnemonic, list(obj.operands), obj.col
        if obj.modifiers:
            mods = " ".join(m.text for m in obj.modifiers)
            return _opaque(written, ops, col, f"{written} {mods}: VOPD halves take no modifiers")
    elif isinstance(obj, (tuple, list)):
        written, ops = str(obj[0]), [_operand(o) for o in obj[1:]]
    elif isinstance(obj, str) and operands:
        written, ops = obj, [_operand(o) for o in operands]
    elif isinstance(obj, str):
        from ..parse.source import parse_statements

        stmts = parse_statements(obj.strip())
        if len(stmts) != 1:
            raise ValueError(f"expected one instruction, got {obj!r}")
        return half(stmts[0])
    else:
        raise TypeError(f"cannot make a VOPD half from {type(obj).__name__}")
    written = written.lower()
    dual = dual_name(written)
    if dual is None:
        return _opaque(written, ops, col, f"{written} has no VOPD form")
    kinds, fmt, reads_vcc = _shape(dual)[5:]
    n = len(kinds)
    # e32 spellings of VOP2 ops that read VCC write it as a trailing operand (v_cndmask_b32_e32 .., vcc_lo);
    # the e64 form names the lane mask there: only vcc_lo converts to the VOPD's implicit VCC.
    if len(ops) == n + 1 and reads_vcc and not written.startswith("v_dual_"):
        last = ops[-1]
        if last.kind == "special" and last.file == "vcc_lo" and not last.neg and not last.abs:
            ops = ops[:-1]
        else:
            return _opaque(written, ops, col, f"{written}: lane mask {last.text} is not vcc_lo, which VOPD reads")
    srcs = []
    shared = _SRCS
    for op, kind in zip(ops, kinds):
        key = (id(op), kind, fmt)
        src = shared.get(key)
        if src is None or src.op is not op:
            src = _classify(op, kind, fmt)
            if len(shared) >= _SRCS_MAX:
                shared.clear()
            shared[key] = src
        srcs.append(src)
    if len(ops) > n:
        srcs += [Src("bad", op.text, note=f"{op.text}: extra operand", col=op.col) for op in ops[n:]]
    return _build(dual, written, srcs, col)


# A Src is never changed once made and depends on its operand, the slot's kind and the source format
# only; the parser makes one operand node per text and column. Keyed by the operand's identity, which
# the Src keeps alive (``op``), so that the key is never another operand's.
_SRCS: dict[tuple[int, str, str], Src] = {}
_SRCS_MAX = 1 << 14


def _opaque(written: str, ops: list[Operand], col, problem: str) -> Half:
    srcs = tuple(Src("bad", op.text, col=op.col) for op in ops)
    return Half(written, written, None, srcs, (None, None, None), False, (problem,), None, False, col)


# --------------------------------------------------------------------------- the rules


def _parity(r: int) -> str:
    return "even" if r % 2 == 0 else "odd"


def _role_name(h: Half, i: int) -> str:
    """What operand position i (0..2) of ``h`` is, in words, for messages."""
    s = h.positions[i]
    if i == 2 and s is not None and h.reads_dst and s is h.dst:
        return f"the {h.op.split('_')[0]} accumulator"
    if i == 2 and s is not None:
        return f"the {h.op.split('_')[0]} addend"
    return ""


def check_pair(x, y, order: str | None = None) -> list[Violation]:
    """Every constraint the pair (X, Y) breaks; empty when it is a legal VOPD.

    ``order`` says how the pair is formed: None for an existing VOPD instruction
    (both halves read before either writes; a cross read is a warning), ``"xy"``
    when X's instruction comes first in program order and Y's second (fusing them
    must not let Y read X's result), ``"yx"`` for the reverse.
    """
    return list(_violations(half(x), half(y), order))


def _violations(hx: Half, hy: Half, order: str | None):
    """The violations of :func:`check_pair`, one at a time (enough to stop at the first)."""
    opcode = False  # an opcode problem: the operand rules are not checked
    for tag, h in (("X", hx), ("Y", hy)):
        for p in h.problems:
            where = tuple(s.text for s in h.operands if s.kind == "bad" and s.note == p)
            opcode = opcode or h.vopd is None
            yield Violation("operand" if h.vopd is not None else "opcode", f"{tag}: {p}", tag, regs=where, short=p)
    if hx.vopd == "y":
        both = " (both halves are Y-only)" if hy.vopd == "y" else "; swap X and Y"
        yield Violation("opcode-x", f"{hx.mnemonic} can only be the Y half: its opcode does not fit the 4-bit "
                                    f"OPX field{both}", "X", short=f"{hx.mnemonic} is Y-only")
    if hx.vopd is None or hy.vopd is None or opcode:
        return

    # DST parity, SRC0/SRC1 banks, SRC2 parity (LLVM's per-position masks: 1 for DST and SRC2, 3 for SRC0/SRC1).
    dx, dy = hx.dst, hy.dst
    if dx is not None and dy is not None and dx.kind == dy.kind == "vgpr":
        a, b = dx.reg, dy.reg
        if a % 2 == b % 2:
            yield Violation("dst-parity", f"DSTX and DSTY are both {_parity(a)} ({dx.name}, {dy.name}): "
                                          "one destination must be even and the other odd", None,
                            regs=(dx.name, dy.name), short=f"DST parity ({dx.name}, {dy.name} both {_parity(a)})")
    for i, sx, sy in zip((0, 1, 2), hx.positions, hy.positions):
        if sx is None or sy is None or sx.kind != "vgpr" or sy.kind != "vgpr":
            continue
        if i == 2:
            if (sx.reg ^ sy.reg) & 1:
                continue
            if sx is dx and sy is dy:
                continue  # two accumulators: the destination parity rule already says it
            regs = (sx.name, sy.name)
            wx, wy = _role_name(hx, 2), _role_name(hy, 2)
            yield Violation("src2-parity", f"SRC2X ({sx.name}, {wx}) and SRC2Y ({sy.name}, {wy}) are both "
                                           f"{_parity(sx.reg)}: operands read through the SRC2 port must be one "
                                           "even and one odd", None, regs=regs,
                            short=f"SRC2 parity ({sx.name}, {sy.name} both {_parity(sx.reg)})")
        else:
            if (sx.reg ^ sy.reg) & 3:
                continue
            regs = (sx.name, sy.name)
            name, label = ("SRC0", "SRC0") if i == 0 else ("SRC1", "VSRC1")
            yield Violation(f"{name.lower()}-bank", f"{label}X and {label}Y both read bank {bank(sx.reg)} "
                                                    f"({sx.name}, {sy.name}): they must be in different VGPR "
                                                    "banks", None, regs=regs,
                            short=f"{label} bank {bank(sx.reg)} ({sx.name}, {sy.name})")

    # Literals: one 32-bit value per instruction, shared by both halves.
    lits = [s for s in hx.operands + hy.operands if s.kind == "literal"]
    values = list(dict.fromkeys(s.value for s in lits)) if lits else []
    if len(values) > 1:
        shown = ", ".join(f"0x{v:x}" for v in values)
        second = next(s for s in lits if s.value == values[1])
        yield Violation("literal", f"{len(values)} different literals ({shown}): a VOPD instruction has room "
                                   "for one 32-bit literal, shared by both halves", None,
                        regs=(second.text,), short=f"literals {shown}")

    # Constant bus: distinct scalar registers + the literal, at most 2.
    scalars: list[str] = []
    for s in hx.positions + hy.positions:
        if s is not None and s.kind == "sgpr" and s.name not in scalars:
            scalars.append(s.name)
    implicit = _implicit_scalars(hx.mnemonic) + _implicit_scalars(hy.mnemonic)
    if len(implicit) > 1:
        implicit = tuple(dict.fromkeys(implicit))
    if len(scalars) + len(implicit) + (1 if values else 0) > CONSTANT_BUS_LIMIT:
        uses = scalars + [f"{r} (implicit)" for r in implicit] + ([f"literal 0x{values[0]:x}"] if values else [])
        yield Violation("constant-bus", f"{len(uses)} scalar values ({', '.join(uses)}): a VOPD instruction "
                                        f"may read at most {CONSTANT_BUS_LIMIT} SGPRs/literals in total", None,
                        regs=tuple(scalars), short=f"constant bus ({', '.join(uses)})")

    # Independence.
    for first, second, ft, st in ((hx, hy, "X", "Y"), (hy, hx, "Y", "X")):
        written = first.dst
        if written is None or written.kind != "vgpr":
            continue
        if not any(s is not None and s.kind == "vgpr" and s.name == written.name for s in second.positions):
            continue
        shared = [r for r in second.reads() if r == written.name]
        regs = ", ".join(shared)
        if order is None:
            # X reading what Y writes reads the same as in written order; Y reading X's result does not.
            if ft == "X":
                yield Violation("reads-other-dst", f"{st} reads {regs}, which {ft} writes: in a VOPD both "
                                                   f"halves read before either writes, so {st} sees the value "
                                                   "from before this instruction", st, "info", tuple(shared),
                                f"{st} reads {regs} written by {ft}")
        elif (order == "xy" and ft == "X") or (order == "yx" and ft == "Y"):
            yield Violation("dependency", f"{second.written} reads {regs}, written by {first.written} just "
                                          "before it: as one VOPD it would read the old value", st,
                            regs=tuple(shared), short=f"dependency on {regs}")


@lru_cache(maxsize=None)
@lru_cache(maxsize=4096)
def _implicit_scalars(dual: str) -> tuple[str, ...]:
    """Implicit register reads of a VOPD component that use the constant bus (EXEC does not)."""
    return tuple(r for r in lookup(dual).implicit_uses if r != "exec_lo")


def is_legal(x, y, order: str | None = None) -> bool:
    """True when (X, Y) breaks no error-level constraint (what the assembler accepts)."""
    return not any(v.severity == "error" for v in check_pair(x, y, order))


# --------------------------------------------------------------------------- forming pairs


class PairAttempt(FrozenRecord):
    _fields = ("x", "y", "violations")

    def __init__(self, x: Half, y: Half, violations: tuple[Violation, ...]):
        d = self.__dict__
        d["x"] = x
        d["y"] = y
        d["violations"] = violations

    @property
    def legal(self) -> bool:
        return not any(v.severity == "error" for v in self.violations)


class Pairing(FrozenRecord):
    """The outcome of :func:`find_pairing` for two instructions ``first`` and ``second``
    (program order). ``best`` is a legal (X, Y) form if one exists, preferring the
    written operand order and ``first`` as X; ``attempts`` holds every form tried."""

    _fields = ("first", "second", "best", "attempts")

    def __init__(self, first: Half, second: Half, best: PairAttempt | None, attempts: tuple[PairAttempt, ...] = ()):
        self.__dict__.update(first=first, second=second, best=best, attempts=attempts)

    @property
    def legal(self) -> bool:
        return self.best is not None

    @property
    def text(self) -> str | None:
        return format_pair(self.best.x, self.best.y) if self.best else None

    def reason(self) -> str:
        """Why no form is legal: what the written form breaks, then (briefly) what
        the forms with commuted sources or swapped roles break instead."""
        if self.best is not None or not self.attempts:
            return ""
        firsts = []
        for att in self.attempts:
            errs = [v for v in att.violations if v.severity == "error"]
            # a dependency holds whatever the form: say it first
            errs.sort(key=lambda v: v.rule != "dependency")
            if errs:
                firsts.append(errs[0])
        if not firsts:
            return "no legal form"
        main = firsts[0]
        seen = {(main.rule, frozenset(main.regs))}
        others = []
        for v in firsts[1:]:
            key = (v.rule, frozenset(v.regs))
            if key not in seen:
                seen.add(key)
                others.append(v.short or v.message)
        if not others:
            return main.message
        commuted = any(a.x.commuted or a.y.commuted for a in self.attempts)
        what = "commuting the sources gives" if commuted else "swapping X and Y gives"
        return f"{main.message}; {what}: {'; '.join(others[:2])}"


def _forms(h: Half) -> list[Half]:
    c = h.commute()
    return [h, c] if c is not None else [h]


def legality_class(h: Half):
    """What the error-level rules of :func:`_violations` read of a half whose opcode and operands are
    valid, with each VGPR reduced to what those rules compare (its bank in SRC0/SRC1, its parity as
    the destination or in SRC2): two halves of the same classes break the same rules. None for a
    half with problems or no VOPD form. The dependency rule (the later instruction reads the VGPR
    the earlier one writes) compares register names: it is checked apart."""
    if h.problems or h.vopd is None:
        return None
    d = h.dst
    s0, s1, s2 = h.positions
    return (h.vopd, d.reg & 1 if d is not None and d.kind == "vgpr" else None,
            s0.reg & 3 if s0 is not None and s0.kind == "vgpr" else None,
            s1.reg & 3 if s1 is not None and s1.kind == "vgpr" else None,
            (s2.reg & 1, s2 is d) if s2 is not None and s2.kind == "vgpr" else None,
            frozenset(s.value for s in h.operands if s.kind == "literal"),
            frozenset(s.name for s in h.positions if s is not None and s.kind == "sgpr"),
            frozenset(_implicit_scalars(h.mnemonic)))


def class_legal(cx, cy) -> bool:
    """Whether halves of legality classes ``cx`` (X) and ``cy`` (Y) break no error-level rule of
    :func:`_violations` but the dependency one (see :func:`legality_class`)."""
    if cx[0] == "y":
        return False  # opcode-x
    if cx[1] is not None and cx[1] == cy[1]:
        return False  # dst-parity
    if cx[2] is not None and cx[2] == cy[2]:
        return False  # src0-bank
    if cx[3] is not None and cx[3] == cy[3]:
        return False  # src1-bank
    x2, y2 = cx[4], cy[4]
    if x2 is not None and y2 is not None and x2[0] == y2[0] and not (x2[1] and y2[1]):
        return False  # src2-parity (two accumulators: the destination rule says it)
    literals = cx[5] | cy[5]
    if len(literals) > 1:
        return False  # literal
    # constant-bus: distinct SGPRs, distinct implicit reads, the literal
    return len(cx[6] | cy[6]) + len(cx[7] | cy[7]) + (1 if literals else 0) <= CONSTANT_BUS_LIMIT


def first_legal_form(classes_a, classes_b):
    """The first legal form :func:`_pairing` (``stop``) finds for two halves when the later one does
    not read what the earlier one writes, from the legality classes of their forms: (form of a,
    form of b, whether b is X), or None."""
    for ia, ca in enumerate(classes_a):
        for ib, cb in enumerate(classes_b):
            if class_legal(ca, cb):
                return ia, ib, False
            if class_legal(cb, ca):
                return ia, ib, True
    return None


def find_pairing(first, second) -> Pairing:
    """Try to fuse two instructions (``first`` before ``second`` in program order)
    into one VOPD: both role assignments and, for commutative operations, both
    source orders."""
    a, b = half(first), half(second)
    return _pairing(a, b, _forms(a), _forms(b))


def _pairing(a: Half, b: Half, forms_a: list[Half], forms_b: list[Half], stop: bool = False) -> Pairing:
    """:func:`find_pairing` of two halves whose forms are known. With ``stop``, only the first
    legal form is worked out (``best``, ``text``); ``attempts`` stays empty, so ask again without
    it for :meth:`Pairing.reason`."""
    attempts: list[PairAttempt] = []
    best = None
    for fa in forms_a:
        for fb in forms_b:
            for x, y, order in ((fa, fb, "xy"), (fb, fa, "yx")):
                if stop:
                    if any(v.severity == "error" for v in _violations(x, y, order)):
                        continue
                    return Pairing(a, b, PairAttempt(x, y, tuple(_violations(x, y, order))))
                att = PairAttempt(x, y, tuple(_violations(x, y, order)))
                attempts.append(att)
                if best is None and att.legal:
                    best = att
    return Pairing(a, b, best, tuple(attempts))


def format_pair(x, y) -> str:
    """Assembler text of the VOPD instruction (X :: Y)."""
    return f"{half(x).text()} :: {half(y).text()}"

