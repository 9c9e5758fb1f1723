"""RDNA3 (gfx11, gfx1100, wave32) instruction facts: isalint's single source of ISA truth.

The data lives in ``rdna3.json`` next to this file, generated from AMD's ISA tables by
``python -m isalint.isa.generate`` (see that module for what is derived from where).  It is read
once, on the first lookup, and each :class:`OpInfo` is built on demand and cached.

Keys are assembler mnemonics as LLVM writes them, lowercase: ``v_add_f32_e32``, ``v_add_f32_e64``,
``v_add_f32_dpp`` and the bare ``v_add_f32`` (which resolves to the e32 form), VOP3-only ops bare
and with ``_e64``, ``v_dual_*`` for each half of a VOPD pair, and the plain names of everything
else.

Conventions the consumer must know:

* ``operands`` are in assembler syntax order.  Registers per operand = ``max(1, bits // 32)``.
* Widths are the largest the opcode can use.  A GLOBAL ``addr`` is 64 bits (a VGPR pair); when
  ``saddr`` is an SGPR pair rather than ``off`` the VGPR address is a 32-bit offset, so the model
  must narrow ``addr`` to one VGPR in that case.  SCRATCH ``addr``/``saddr`` may be ``off``.  MUBUF
  and MTBUF ``vaddr`` is 64 bits only with both ``idxen`` and ``offen``; MIMG ``vaddr``/``vdata``
  depend on ``dim``/``dmask``/``a16``/``d16``.
* ``kind`` ``"other"`` with name ``vcc_lo`` is LLVM's explicit spelling of an implicit VCC operand
  in VOP2/VOPC e32 forms (``v_add_co_ci_u32_e32 v1, vcc_lo, s1, v1, vcc_lo``,
  ``v_cndmask_b32_e32 v0, v1, v2, vcc_lo``, ``v_cmp_eq_u32_e32 vcc_lo, v1, v2``).  The register
  effect is already in ``implicit_defs``/``implicit_uses``; the operand is only syntax.  Operands
  with ``optional=True`` may be left out by the writer (LLVM accepts ``v_cmp_eq_u32_e32 v1, v2``).
* FLAT/GLOBAL atomics list ``vdst`` first: it is present only in the returning form (``glc``).
  :meth:`OpInfo.operands_for` picks the spec tuple matching the number of operands written.
* Atomics count on ``vmcnt`` when they return data (``glc``) and on ``vscnt`` otherwise, so both
  are listed; FLAT (not GLOBAL/SCRATCH) also counts on ``lgkmcnt``.
* Wave32: implicit VCC is ``vcc_lo``, EXEC is ``exec_lo``; lane masks are 32 bits.  Operands
  with ``mask=True`` are lane masks, an SGPR pair in wave64 (the model widens them there).
* ``<op>_e64_dpp`` is the VOP3 encoding with DPP16/DPP8 (LLVM's spelling); like ``_dpp`` its src0
  is a VGPR and its destination keeps the lanes DPP does not write.
* Names LLVM 19 accepts as aliases of gfx11 opcodes resolve through :mod:`isalint.isa.aliases`;
  a VOP3P opcode written with ``_e64`` (``v_dot2_f32_f16_e64``) is the opcode itself.
* ``is_trans``: VOP1 opcodes (and their e64/DPP forms) whose pseudocode computes 2^x, log2, sqrt,
  sin, cos or a reciprocal (1/x, 1/sqrt x) - the ops issued to the transcendental unit.
"""
from __future__ import annotations

import json
import os

from ..records import FrozenRecord
from . import aliases

__all__ = ["OperandSpec", "OpInfo", "lookup", "canonical", "all_mnemonics", "DATA_PATH"]

DATA_PATH = os.path.join(os.path.dirname(__file__), "rdna3.json")


class OperandSpec(FrozenRecord):
    name: str   # field name: vdst, sdst, src0, vsrc1, src1, src2, addr, data0, saddr, sbase, sdata, simm16, ...
    role: str   # "def" | "use" | "defuse"
    bits: int   # width in bits (registers = max(1, bits // 32))
    kind: str   # "vgpr" | "sgpr" | "src" | "ssrc" | "imm" | "label" | "other"
    optional: bool
    mask: bool  # a lane mask: one SGPR in wave32, an SGPR pair in wave64

    _fields = ("name", "role", "bits", "kind", "optional", "mask")

    def __init__(self, name: str, role: str, bits: int, kind: str, optional: bool = False, mask: bool = False):
        # regs: the registers it names (derived, not a field)
        self.__dict__.update(name=name, role=role, bits=bits, kind=kind, optional=optional, mask=mask,
                             regs=max(1, bits // 32))


class OpInfo(FrozenRecord):
    mnemonic: str
    encoding: str
    klass: str
    operands: tuple[OperandSpec, ...]
    implicit_defs: tuple[str, ...]
    implicit_uses: tuple[str, ...]
    counters: tuple[str, ...]
    vopd: str | None
    opcode: int
    is_trans: bool

    _fields = ("mnemonic", "encoding", "klass", "operands", "implicit_defs", "implicit_uses", "counters", "vopd",
               "opcode", "is_trans")

    def __init__(self, mnemonic: str, encoding: str, klass: str, operands: tuple[OperandSpec, ...],
                 implicit_defs: tuple[str, ...], implicit_uses: tuple[str, ...], counters: tuple[str, ...],
                 vopd: str | None, opcode: int, is_trans: bool):
        self.__dict__.update(mnemonic=mnemonic, encoding=encoding, klass=klass, operands=operands,
                             implicit_defs=implicit_defs, implicit_uses=implicit_uses, counters=counters,
                             vopd=vopd, opcode=opcode, is_trans=is_trans)

    def operands_for(self, count: int) -> tuple[OperandSpec, ...] | None:
        """The operand specs for a line written with ``count`` operands, or None if none fits.

        Drops optional operands (LLVM's optional ``vcc_lo`` spellings) and, for FLAT/GLOBAL atomics
        written without a return register, the leading ``vdst``.
        """
        ops = self.operands
        if len(ops) == count:
            return ops
        required = tuple(o for o in ops if not o.optional)
        if len(required) == count:
            return required
        if self.klass == "vmem_atomic" and ops and ops[0].name == "vdst" and len(ops) - 1 == count:
            return ops[1:]
        return None


_DATA: dict | None = None  # the whole document, parsed only when meta() or a malformed file needs it
_TEXT: str = ""
_INDEX: dict[str, int] | None = None  # mnemonic -> offset of its row in _TEXT
_ROWS: dict[str, dict] = {}
_CACHE: dict[str, OpInfo | None] = {}
_DECODER = json.JSONDecoder()


def _load() -> None:
    """Index the rows of the data file without decoding them: a run looks up a few dozen of its
    2000-odd mnemonics, and decoding only those is several times faster than json.load. The
    generator writes one ``"mnemonic":{...}`` row per line of the "ops" object."""
    global _TEXT, _INDEX, _DATA
    with open(DATA_PATH, encoding="utf-8") as f:
        text = f.read()
    index: dict[str, int] | None = {}
    start = text.find('\n"ops":{\n')
    if start >= 0 and text.startswith('{"meta":'):
        find = text.find
        pos = start + len('\n"ops":{\n')
        while text.startswith('"', pos):
            q = find('"', pos + 1)
            if not text.startswith(":{", q + 1):
                break
            index[text[pos + 1:q]] = q + 2
            pos = find("\n", q) + 1
            if pos == 0:
                break
        if len(index) != _DECODER.raw_decode(text, len('{"meta":'))[0].get("count"):
            index = None
    else:
        index = None
    if index is None:  # not laid out as the generator writes it: decode it all
        _DATA = json.loads(text)
        _ROWS.update(_DATA["ops"])
        index = dict.fromkeys(_DATA["ops"], -1)
    _TEXT, _INDEX = text, index


# Opcodes LLVM 19 assembles for gfx11 processors that AMD's RDNA3 tables (and so the generated data)
# do not list, in the generated rows' format: ``v_illegal``, the all-zero word (VOP2 opcode 0), which
# raises an illegal-instruction exception; and RDNA3.5's ``s_singleuse_vdst`` (gfx1150, gfx1151,
# gfx1152: SOPP opcode 19, a hint that a VALU result is read only once; no register).
EXTRA_ROWS = {
    "s_singleuse_vdst": {"enc": "SOPP", "cls": "other", "op": 19, "ops": [["simm16", "use", 16, "imm"]],
                         "idef": [], "iuse": [], "cnt": [], "fmt": ["B16/SIMM16"]},
    "v_illegal": {"enc": "VOP2", "cls": "other", "op": 0, "ops": [], "idef": [], "iuse": [], "cnt": [],
                  "fmt": []},
}


def _row(key: str) -> dict | None:
    if _INDEX is None:
        _load()
    row = _ROWS.get(key)
    if row is None:
        at = _INDEX.get(key)
        if at is None:
            return EXTRA_ROWS.get(key)
        row = _ROWS[key] = _DECODER.raw_decode(_TEXT, at)[0]
    return row


def _ops() -> dict:
    """The whole "ops" object."""
    global _DATA
    if _DATA is None:
        with open(DATA_PATH, encoding="utf-8") as f:
            _DATA = json.load(f)
    return _DATA["ops"]


def _make(mnemonic: str, row: dict) -> OpInfo:
    return OpInfo(
        mnemonic=mnemonic,
        encoding=row["enc"],
        klass=row["cls"],
        operands=tuple(OperandSpec(o[0], o[1], o[2], o[3], len(o) > 4 and bool(o[4]), len(o) > 5 and bool(o[5]))
                       for o in row["ops"]),
        implicit_defs=tuple(row["idef"]),
        implicit_uses=tuple(row["iuse"]),
        counters=tuple(row["cnt"]),
        vopd=row.get("vopd"),
        opcode=row["op"],
        is_trans=bool(row.get("trans")),
    )


def lookup(mnemonic: str) -> OpInfo | None:
    """OpInfo for an assembler mnemonic (case-insensitive), or None if unknown.

    A name LLVM accepts as an alias of a gfx11 opcode (``ds_read_b128``, ``v_add_u32_e32``) gives
    the canonical opcode's OpInfo, whose ``mnemonic`` is the canonical spelling."""
    try:
        return _CACHE[mnemonic]  # the parser's spelling: already stripped and lowercase
    except KeyError:
        pass
    key = mnemonic.strip().lower()
    try:
        info = _CACHE[key]
    except KeyError:
        pass
    else:
        _CACHE[mnemonic] = info
        return info
    row = _row(key)
    if row is not None:
        info = _make(key, row)
    else:
        real = aliases.resolve(key)
        if real is None and key.endswith("_e64"):
            # A VOP3P opcode has one encoding; LLVM also accepts it with the VOP3 suffix
            # (``v_dot2_f32_f16_e64``) and prints it without
            bare = _row(key[:-4])
            if bare is not None and bare.get("enc") == "VOP3P":
                real = key[:-4]
        info = lookup(real) if real is not None else None
    _CACHE[key] = info
    return info


def canonical(mnemonic: str) -> str:
    """The gfx11 spelling of a mnemonic: an alias resolved, anything else lowercased as written."""
    info = lookup(mnemonic)
    return info.mnemonic if info is not None else mnemonic.strip().lower()


def all_mnemonics() -> list[str]:
    """Every mnemonic in the data, sorted."""
    if _INDEX is None:
        _load()
    return sorted(_INDEX)


def meta() -> dict:
    """Provenance of the data file (generator version, source hashes, notes)."""
    _ops()
    return dict(_DATA["meta"])
