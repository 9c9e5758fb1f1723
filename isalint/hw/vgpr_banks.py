"""A model of the RDNA3 VGPR banks and operand caches, instruction by instruction.

The model (every parameter and assumption is here; the defaults are :data:`DEFAULT`)
------------------------------------------------------------------------------------

Hardware facts it starts from (documented: RDNA3 ISA guide, section 7.6 "Dual Issue VALU"):

* the VGPR file has 4 banks; register ``vN`` is in bank ``N mod 4``;
* each bank has an operand cache with three read ports, one each for SRC0, SRC1
  and SRC2; a cache can feed all three at once but not two SRC0s (or two SRC1s,
  or two SRC2s), which is why a VOPD pair needs SRC0X/SRC0Y and VSRC1X/VSRC1Y
  in different banks;
* operands read through the SRC2 port (the accumulator of fmac/dot2acc, the
  VGPR addend of fmamk) follow a parity rule instead (one even, one odd);
* results are written one cycle after the instruction issues.

Everything below that list is a *calibrated assumption*, not documented behaviour: the model's
choices (``cache_entries``, ``rf_reads_per_bank``, ``src2_separate``, ``writes_conflict``) were
fixed so that it reproduces the RGP observations on a 7900 XTX that the parameter notes cite.
In particular, although the guide gives the caches a SRC2 port, this model routes SRC2 reads
around the caches (``src2_separate``), and it applies the one-value-per-bank-per-cycle limit to a
single instruction as much as to a VOPD pair.

What one instruction costs. Per bank, count the *different* VGPRs its SRC0/SRC1
operands ask of that bank (one register read by several ports counts once) and,
of those, the ones not in the bank's cache (register-file reads). A bank needs
``max(ceil(values / cache_entries), ceil(rf_reads / rf_reads_per_bank))``
cycles; banks work in parallel; the instruction stalls for the slowest bank's
cycles minus one. A source in its bank's cache is a ``Cache`` hit, any other an
``R`` (register-file read) that then replaces the cached value (least recently
used first).

Parameters (:class:`Params`) and why they have these values:

``cache_entries = 1``
    (Calibrated assumption.) Each bank's cache holds one value, the bank's most
    recently read register (whichever port read it), and every SRC0/SRC1 operand
    reaches the ALU through it: a bank delivers one value per cycle, so an
    instruction that needs two different registers of one bank takes a second
    cycle, cached or not; a single instruction as much as a VOPD pair. This is
    the second of the two readings the worklog weighs for
    ``v_dual_fmac_f32 v123, v139, v144 :: v_dual_fmac_f32 v114, v140, v143``, and
    the one its measurements support: kernel 5's compiler pairs mostly ask one bank
    for an A and a B value, and RGP showed 2-3 cycles per dual FMA; with a cache
    that could serve a cached and a freshly read value together (or two entries),
    the same loop would model a single stall (tests/test_bank_model.py keeps that
    counter-check). One entry per bank also reproduces, row for row, the R/Cache
    columns of the worklog's table for its kernel-6 plan (Figure 34): 4 reads in
    the first row, then rows alternating between 2 reads and none.
``rf_reads_per_bank = 1``
    (Calibrated assumption.) Register-file reads a bank serves per cycle to the
    SRC0/SRC1 ports.
``src2_separate = True``
    (Calibrated assumption.) SRC2-port reads (accumulators) do not compete with
    SRC0/SRC1 for a bank and do not go through the operand caches: they are never
    ``Cache`` hits and never update a cache.
    Kernel 6 reads two accumulators and writes two results every cycle and runs
    at 1 cycle per VOPD (worklog, Figure 36); no schedule could do that if they
    shared the banks' ports. The parity rule for SRC2 suggests an even/odd path
    of their own. They are counted (``src2_reads``), never stall.
``writes_conflict = False``
    (Calibrated assumption.) Writes have their own port per bank: the worklog's optimal plan reads and
    writes bank 3 in the same cycle (Figure 34, third row) and measured no stall.
    The two results of one VOPD are always in different banks (parity rule).
``write_delay = 1``
    The ``W`` cells of a row show the results of the previous VALU instruction,
    which land during this one's issue cycle (the worklog's convention).

What the model leaves out: dependency stalls between back-to-back dependent
instructions (``s_delay_alu`` covers them), the transcendental unit, VGPR reads
of memory instructions (they have their own path), the source reads of a WMMA
(spread over the passes of its own execution; BANK001 counts the measured
+2 cycles of a WMMA whose A, B or C operands start in one bank apart), other
waves sharing the SIMD.
A non-VALU instruction that writes VGPRs (``ds_load``, ``global_load``)
invalidates the cached copies of those registers; so does a VALU write.

Calibration (tests/test_bank_model.py): the compiler's inner loop of the
worklog's kernel 5 stalls on most of its dual FMAs (2 cycles each; RGP measured
2-3, so the model is a lower bound), and a loop written the way the worklog
writes kernel 6 (A on banks 2-3, B on banks 0-1, the Figure 34 order) models 0
stalls, 1 cycle per VOPD.

API
---
``simulate(ops, loop=False, params=DEFAULT) -> Simulation``. ``ops`` is a
sequence of: model ``Instr`` objects; assembler strings (one instruction or a
``X :: Y`` pair); single halves as accepted by :func:`isalint.hw.vopd.half`
(``("v_fmac_f32_e32", "v1", "v2", "v3")``); pairs ``(x_spec, y_spec)``;
or :class:`BankOp` (reads per port slot, writes). With ``loop=True`` the
sequence is run twice and the second pass is reported: the steady state of a
loop whose caches were warmed by the previous iteration.

``stalls_of(instrs, indices, loop=False, half_of=None, params=DEFAULT) -> Simulation``: what
``simulate(..., stalls_only=True)`` gives for the instructions ``instrs[i]`` of ``indices``, worked
out from facts kept per distinct instruction (BANK001 runs it over every block of a kernel).

``Simulation``: ``steps`` (one :class:`Step` per op: ``reads``/``writes``/
``landing`` :class:`Access` lists, ``cells()`` for the worklog's table,
``bank_values``, ``bank_reads``, ``stall``, ``cycles``, ``conflicts``), and the
totals ``stall_cycles``, ``rf_reads``, ``bank_reads``, ``cache_hits``,
``src2_reads``, ``issue_cycles`` (VALU instructions + stalls), ``totals()``.

Two read counts, not to be confused: ``rf_reads`` counts SRC0/SRC1 *port* reads
served by the register file (an ``R`` cell of the table; one register read
through two ports in a cycle is two port reads), ``bank_reads`` counts the
register-file reads the banks perform (one per distinct register fetched).
"""
from __future__ import annotations

from ..parse.nodes import Statement
from ..records import FrozenRecord, Record
from .vopd import Half, dual_name, half

__all__ = ["Params", "DEFAULT", "Access", "BankOp", "Step", "Simulation", "simulate", "stalls_of",
           "ops_from_instrs", "COLUMNS"]


class Params(FrozenRecord):
    banks: int
    cache_entries: int
    rf_reads_per_bank: int
    src2_separate: bool
    writes_conflict: bool
    write_delay: int

    _fields = ("banks", "cache_entries", "rf_reads_per_bank", "src2_separate", "writes_conflict", "write_delay")

    def __init__(self, banks: int = 4, cache_entries: int = 1, rf_reads_per_bank: int = 1,
                 src2_separate: bool = True, writes_conflict: bool = False, write_delay: int = 1):
        self.__dict__.update(banks=banks, cache_entries=cache_entries, rf_reads_per_bank=rf_reads_per_bank,
                             src2_separate=src2_separate, writes_conflict=writes_conflict, write_delay=write_delay)

    def describe(self) -> dict:
        return {
            "banks": self.banks,
            "cache_entries_per_bank": self.cache_entries,
            "rf_reads_per_bank_per_cycle": self.rf_reads_per_bank,
            "src2_reads_separate": self.src2_separate,
            "writes_conflict_with_reads": self.writes_conflict,
            "write_delay_cycles": self.write_delay,
        }


DEFAULT = Params()

# The worklog's table columns.
COLUMNS = ("DSTX", "SRC0X", "SRC1X", "DSTY", "SRC0Y", "SRC1Y")


_VNUM: dict[str | None, int | None] = {f"v{n}": n for n in range(256)}


def _vgpr(name: str | None) -> int | None:
    try:
        return _VNUM[name]
    except KeyError:
        pass
    n = int(name[1:]) if name and name[0] == "v" and name[1:].isdigit() else None
    if len(_VNUM) < 4096:
        _VNUM[name] = n
    return n


class Access(FrozenRecord):
    """One VGPR access: ``slot`` is DSTX/SRC0X/SRC1X/SRC2X (or ...Y), ``kind`` R, Cache or W."""

    slot: str
    reg: str
    bank: int
    kind: str

    _fields = ("slot", "reg", "bank", "kind")

    def __init__(self, slot: str, reg: str, bank: int, kind: str):
        self.__dict__.update(slot=slot, reg=reg, bank=bank, kind=kind)

    @property
    def label(self) -> str:
        return f"{self.kind}{self.bank}"


_HALF_SLOTS = (("DSTX", "SRC0X", "SRC1X", "SRC2X"), ("DSTY", "SRC0Y", "SRC1Y", "SRC2Y"))
_HALF_PORTS = tuple((dst, srcs) for dst, *srcs in _HALF_SLOTS)


class BankOp(Record):
    """What the model needs of one instruction: VGPR reads per port and VGPR writes.

    ``reads``: (slot, register) with slot SRC0X/SRC1X/SRC2X/SRC0Y/...; ``writes``:
    (slot, register) with slot DSTX/DSTY. ``valu`` False means a non-VALU
    instruction whose writes only invalidate cached copies.
    """

    reads: list[tuple[str, str]]
    writes: list[tuple[str, str]]
    valu: bool
    text: str  # an instruction's text is read from it when first asked for
    index: int | None
    line: int | None
    is_vopd: bool

    _fields = ("reads", "writes", "valu", "text", "index", "line", "is_vopd")

    def __init__(self, reads: list[tuple[str, str]], writes: list[tuple[str, str]], valu: bool = True,
                 text: str | None = "", index: int | None = None, line: int | None = None, is_vopd: bool = False,
                 instr=None):
        self.reads = reads
        self.writes = writes
        self.valu = valu
        self._text = text
        self._instr = instr
        self.index = index
        self.line = line
        self.is_vopd = is_vopd

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self._instr.text()
        return self._text

    @text.setter
    def text(self, value: str) -> None:
        self._text = value

    @classmethod
    def from_halves(cls, halves: list[Half], text: str = "", index: int | None = None, line: int | None = None,
                    instr=None):
        reads: list[tuple[str, str]] = []
        writes: list[tuple[str, str]] = []
        for (dst_slot, (p0, p1, p2)), h in zip(_HALF_PORTS, halves):
            s0, s1, s2 = h.positions
            if s0 is not None and s0.kind == "vgpr":
                reads.append((p0, s0.name))
            if s1 is not None and s1.kind == "vgpr":
                reads.append((p1, s1.name))
            if s2 is not None and s2.kind == "vgpr":
                reads.append((p2, s2.name))
            d = h.dst
            if d is not None and d.kind == "vgpr":  # Half.writes()
                writes.append((dst_slot, d.name))
        if not text and instr is None:
            text = " :: ".join(h.text() for h in halves)
        return cls(reads, writes, True, text, index, line, len(halves) == 2, instr)


_PORT_OF_SLOT = {"src0": "SRC0", "vsrc1": "SRC1", "src1": "SRC1", "src2": "SRC2", "vsrc2": "SRC2"}
_PORT_SLOT_X = {name: port + "X" for name, port in _PORT_OF_SLOT.items()}


# An instruction's reads and writes by port depend on its statements, their slots and its defs
# alone, which the model shares between every instruction of the same text: worked out once per
# such triple (the entry keeps them alive, so that their ids stay theirs).
_PORTS: dict[tuple[int, int, int], tuple] = {}
_PORTS_MAX = 1 << 16


def _op_from_instr(ins, half_of=None) -> BankOp:
    """``half_of(index, k)``: the VOPD half of statement k of instruction ``index`` if already
    built (:meth:`isalint.analysis.Analysis.vopd_half`)."""
    stmts, slots, defs = ins.stmts, ins.slots, ins.defs
    key = (id(stmts), id(slots), id(defs))
    known = _PORTS.get(key)
    if known is not None and known[0] is stmts and known[1] is slots and known[2] is defs \
            and known[3] == (ins.klass, ins.opaque):
        _, _, _, _, reads, writes, valu, is_vopd = known
        return BankOp(reads, writes, valu, None, ins.index, ins.lineno, is_vopd, ins)
    op = _op_from_instr_uncached(ins, half_of)
    if len(_PORTS) >= _PORTS_MAX:
        _PORTS.clear()
    _PORTS[key] = (stmts, slots, defs, (ins.klass, ins.opaque), op.reads, op.writes, op.valu, op.is_vopd)
    return op


def _op_from_instr_uncached(ins, half_of=None) -> BankOp:
    klass = ins.klass
    if ins.opcode.startswith("v_wmma_"):
        # a WMMA reads its 16-24 source VGPRs over the passes of its own multi-cycle execution, not
        # through the operand caches (BANK001 adds the cycles a shared starting bank of its A, B or C
        # costs). It issues as one VALU instruction and its results land as any.
        writes = [("DSTX", r) for r in ins.defs if _vgpr(r) is not None]
        return BankOp([], writes, True, None, ins.index, ins.lineno, False, ins)
    if klass == "vopd" or (klass in ("valu", "trans") and not ins.opaque):
        stmts = ins.stmts
        halves = None
        # a single without a VOPD form cannot be a VOPD half: its operands go by the ISA slots below
        if klass == "vopd" or (len(stmts) == 1 and dual_name(stmts[0].mnemonic) is not None):
            try:
                if half_of is None:
                    hs = [half(s) for s in stmts]
                elif len(stmts) == 1:
                    hs = [half_of(ins.index, 0)]
                else:
                    hs = [half_of(ins.index, k) for k in range(len(stmts))]
                for h in hs:
                    if h.vopd is None or h.problems:
                        break
                else:
                    halves = hs
            except (TypeError, ValueError):
                halves = None
        if halves is not None:
            return BankOp.from_halves(halves, None, ins.index, ins.lineno, ins)
        if klass != "vopd":
            reads: list[tuple[str, str]] = []
            writes: list[tuple[str, str]] = []
            for slot in (ins.slots[0] if ins.slots else ()):
                role = slot.role
                if role not in ("def", "defuse", "use"):
                    continue
                vregs = [r for r in slot.regs if _vgpr(r) is not None]
                if not vregs:
                    continue
                if role == "use":
                    port = _PORT_SLOT_X.get(slot.name, "SRC2X")
                    reads += [(port, r) for r in vregs]
                    continue
                writes += [("DSTX", r) for r in vregs]
                if role == "defuse":
                    reads += [("SRC2X", r) for r in vregs]
            return BankOp(reads, writes, True, None, ins.index, ins.lineno, False, ins)
    writes = [("DSTX", r) for r in ins.defs if _vgpr(r) is not None]
    return BankOp([], writes, False, None, ins.index, ins.lineno, False, ins)


def _to_op(item) -> BankOp:
    if isinstance(item, BankOp):
        return item
    if hasattr(item, "stmts") and hasattr(item, "klass"):
        return _op_from_instr(item)
    if isinstance(item, str):
        from ..parse.source import parse_statements

        stmts = parse_statements(item.strip())
        return BankOp.from_halves([half(s) for s in stmts], item.strip())
    if isinstance(item, (Half, Statement)):
        return BankOp.from_halves([half(item)])
    if isinstance(item, (tuple, list)) and item and isinstance(item[0], str):
        return BankOp.from_halves([half(tuple(item))])
    if isinstance(item, (tuple, list)) and len(item) == 2:
        return BankOp.from_halves([half(item[0]), half(item[1])])
    raise TypeError(f"cannot model {item!r}")


def ops_from_instrs(instrs, half_of=None) -> list[BankOp]:
    return [_op_from_instr(i, half_of) for i in instrs]


class Step(Record):
    """The model's view of one instruction."""

    op: BankOp
    reads: list[Access]
    writes: list[Access]  # this instruction's results
    landing: list[Access]  # results landing during its issue cycle
    bank_reads: list[int]  # register-file reads per bank (SRC0/SRC1 ports)
    bank_values: list[int]  # different VGPRs asked of each bank
    stall: int
    conflicts: list[tuple[int, list[Access]]]

    _fields = ("op", "reads", "writes", "landing", "bank_reads", "bank_values", "stall", "conflicts")

    def __init__(self, op: BankOp, reads: list[Access] | None = None, writes: list[Access] | None = None,
                 landing: list[Access] | None = None, bank_reads: list[int] | None = None,
                 bank_values: list[int] | None = None, stall: int = 0,
                 conflicts: list[tuple[int, list[Access]]] | None = None):
        self.op = op
        self.reads = [] if reads is None else reads
        self.writes = [] if writes is None else writes
        self.landing = [] if landing is None else landing
        self.bank_reads = [] if bank_reads is None else bank_reads
        self.bank_values = [] if bank_values is None else bank_values
        self.stall = stall
        self.conflicts = [] if conflicts is None else conflicts

    @property
    def valu(self) -> bool:
        return self.op.valu

    @property
    def cycles(self) -> int:
        return 1 + self.stall if self.op.valu else 0

    @property
    def rf_reads(self) -> int:
        """SRC0/SRC1 port reads served by the register file (a register two ports read counts twice)."""
        return sum(1 for a in self.reads if a.kind == "R" and not a.slot.startswith("SRC2"))

    @property
    def cache_hits(self) -> int:
        return sum(1 for a in self.reads if a.kind == "Cache")

    @property
    def src2_reads(self) -> int:
        return sum(1 for a in self.reads if a.slot.startswith("SRC2"))

    def cells(self) -> dict[str, str]:
        """The worklog's row: DSTX SRC0X SRC1X DSTY SRC0Y SRC1Y -> "R0", "Cache2", "W1" or ""."""
        out = {c: "" for c in COLUMNS}
        for a in self.landing:
            out[a.slot] = (out[a.slot] + " " + a.label).strip()
        for a in self.reads:
            if a.slot in out:
                out[a.slot] = (out[a.slot] + " " + a.label).strip()
        return out

    def to_json(self) -> dict:
        return {
            "index": self.op.index, "line": self.op.line, "text": self.op.text, "valu": self.op.valu,
            "vopd": self.op.is_vopd, "cells": self.cells(),
            "reads": [{"slot": a.slot, "reg": a.reg, "bank": a.bank, "kind": a.kind} for a in self.reads],
            "writes": [{"slot": a.slot, "reg": a.reg, "bank": a.bank} for a in self.writes],
            "bank_reads": list(self.bank_reads), "bank_values": list(self.bank_values), "stall": self.stall,
            "cycles": self.cycles,
        }


class Simulation(Record):
    steps: list[Step]
    params: Params

    _fields = ("steps", "params")

    def __init__(self, steps: list[Step], params: Params):
        self.steps = steps
        self.params = params

    @property
    def valu_steps(self) -> list[Step]:
        return [s for s in self.steps if s.valu]

    @property
    def stall_cycles(self) -> int:
        return sum(s.stall for s in self.steps)

    @property
    def rf_reads(self) -> int:
        return sum(s.rf_reads for s in self.steps)

    @property
    def bank_reads(self) -> int:
        """Register-file reads the banks perform: one per distinct register fetched."""
        return sum(sum(s.bank_reads) for s in self.steps)

    @property
    def cache_hits(self) -> int:
        return sum(s.cache_hits for s in self.steps)

    @property
    def src2_reads(self) -> int:
        return sum(s.src2_reads for s in self.steps)

    @property
    def issue_cycles(self) -> int:
        return sum(s.cycles for s in self.steps)

    def totals(self) -> dict:
        v = self.valu_steps
        return {
            "valu": len(v), "vopd": sum(1 for s in v if s.op.is_vopd), "stall_cycles": self.stall_cycles,
            "stalled_instructions": sum(1 for s in v if s.stall), "rf_reads": self.rf_reads,
            "bank_reads": self.bank_reads,
            "cache_hits": self.cache_hits, "src2_reads": self.src2_reads, "issue_cycles": self.issue_cycles,
        }


class _Caches:
    def __init__(self, params: Params):
        self.p = params
        self.entries: list[list[str]] = [[] for _ in range(params.banks)]

    def has(self, reg: str, b: int) -> bool:
        return reg in self.entries[b]

    def touch(self, reg: str, b: int) -> None:
        e = self.entries[b]
        if reg in e:
            e.remove(reg)
        e.append(reg)
        del e[: max(0, len(e) - self.p.cache_entries)]

    def invalidate(self, reg: str, b: int) -> None:
        e = self.entries[b]
        if reg in e:
            e.remove(reg)


_ACCESS: dict[tuple[str, str, int, str], Access] = {}  # Access is immutable: one object per distinct value


def _access(slot: str, reg: str, b: int, kind: str) -> Access:
    key = (slot, reg, b, kind)
    a = _ACCESS.get(key)
    if a is None:
        a = _ACCESS[key] = Access(slot, reg, b, kind)
    return a


def _writes(op: BankOp, nb: int, entries) -> list[Access]:
    """The VGPR writes of ``op``; a written register's old value leaves its bank's cache."""
    interned, vnum = _ACCESS.get, _VNUM.get
    writes: list[Access] = []
    for slot, r in op.writes:
        v = vnum(r, -1)
        if v == -1:
            v = _vgpr(r)
        if v is None:
            continue
        b = v % nb
        writes.append(interned((slot, r, b, "W")) or _access(slot, r, b, "W"))
        e = entries[b]
        if r in e:
            e.remove(r)
    return writes


def _run(ops: list[BankOp], params: Params, caches: _Caches, pending: list[Access],
         every: bool = True) -> tuple[list[Step], list[Access]]:
    """The steps of ``ops`` (only those that stall unless ``every``: the others are worked out just
    far enough to know that they do not, and to leave the caches as they do) and what is still landing."""
    nb = params.banks
    n_entries, n_rf = params.cache_entries, params.rf_reads_per_bank
    src2_separate, writes_conflict = params.src2_separate, params.writes_conflict
    write_delay = params.write_delay
    entries = caches.entries
    interned = _ACCESS.get
    vnum = _VNUM.get
    steps: list[Step] = []
    append_step = steps.append
    for op in ops:
        if not op.valu:
            for _, r in op.writes:
                v = vnum(r, -1)
                if v == -1:
                    v = _vgpr(r)
                if v is not None:
                    e = entries[v % nb]
                    if r in e:
                        e.remove(r)
            if every:
                append_step(Step(op, [], [], [], [], [], 0, []))
            continue
        if not every and _quiet(op, nb, n_entries, n_rf, src2_separate, writes_conflict, entries, pending, vnum):
            # no stall: the caches and the results landing next as the full step below leaves them
            writes = _writes(op, nb, entries)
            pending = writes if write_delay else []
            continue
        bank_reads = [0] * nb
        reads: list[Access] = []
        fetched: list[tuple[str, int]] = []
        hits: list[tuple[str, int]] = []
        distinct: dict[int, list[Access]] = {}
        seen: set[str] = set()  # a register is in one bank: seen in this step = seen in its bank
        for slot, r in op.reads:
            v = vnum(r, -1)
            if v == -1:
                v = _vgpr(r)
            if v is None:
                continue
            b = v % nb
            if src2_separate and slot.startswith("SRC2"):  # its own path: counted, never stalls
                reads.append(interned((slot, r, b, "R")) or _access(slot, r, b, "R"))
                continue
            if r in entries[b]:
                acc = interned((slot, r, b, "Cache")) or _access(slot, r, b, "Cache")
                hits.append((r, b))
                hit = True
            else:
                acc = interned((slot, r, b, "R")) or _access(slot, r, b, "R")
                hit = False
            reads.append(acc)
            if r not in seen:  # one value feeds every port that reads it this cycle
                seen.add(r)
                if b in distinct:
                    distinct[b].append(acc)
                else:
                    distinct[b] = [acc]
                if not hit:
                    fetched.append((r, b))
                    bank_reads[b] += 1
        if writes_conflict:
            for a in pending:
                bank_reads[a.bank] += 1
        _refresh(entries, fetched, hits, n_entries)
        # Cycles bank b needs: its cache serves cache_entries different values per cycle, and the
        # register file refills rf_reads_per_bank of them per cycle.
        bank_values = [0] * nb
        most = 0
        for b, accs in distinct.items():
            k = bank_values[b] = len(accs)
            if k > most:
                most = k
        # the slowest bank (both terms grow with their count, so the largest counts decide)
        stall = max(-(-most // n_entries), -(-max(bank_reads) // n_rf)) - 1
        if stall > 0:
            need = [max(-(-bank_values[b] // n_entries), -(-bank_reads[b] // n_rf)) for b in range(nb)]
            conflicts = [(b, distinct.get(b, [])) for b in range(nb) if need[b] > 1]  # a bank busy with writes only reads nothing
        else:
            stall, conflicts = 0, []
        writes = _writes(op, nb, entries)
        append_step(Step(op, reads, writes, pending, bank_reads, bank_values, stall, conflicts))
        pending = writes if write_delay else []
    return steps, pending


def _quiet(op: BankOp, nb: int, n_entries: int, n_rf: int, src2_separate: bool, writes_conflict: bool,
           entries: list[list[str]], pending: list[Access], vnum) -> bool:
    """Whether the VALU ``op`` issues without a stall; if so its reads are done to the caches (the
    register-file reads, then the hits, as :func:`_run` does them)."""
    bank_reads = [0] * nb
    values = [0] * nb
    fetched: list[tuple[str, int]] = []
    hits: list[tuple[str, int]] = []
    seen: set[str] = set()
    for slot, r in op.reads:
        v = vnum(r, -1)
        if v == -1:
            v = _vgpr(r)
        if v is None:
            continue
        b = v % nb
        if src2_separate and slot.startswith("SRC2"):
            continue
        hit = r in entries[b]
        if hit:
            hits.append((r, b))
        if r not in seen:
            seen.add(r)
            values[b] += 1
            if not hit:
                fetched.append((r, b))
                bank_reads[b] += 1
    if writes_conflict:
        for a in pending:
            bank_reads[a.bank] += 1
    if max(-(-max(values) // n_entries), -(-max(bank_reads) // n_rf)) > 1:
        return False
    _refresh(entries, fetched, hits, n_entries)
    return True


def _refresh(entries, fetched: list[tuple[str, int]], hits: list[tuple[str, int]], n_entries: int) -> None:
    """The cache keeps the most recently read values: the register-file reads, then the hits."""
    for group in (fetched, hits):
        for r, b in group:
            e = entries[b]
            if r in e:
                e.remove(r)
            e.append(r)
            if len(e) > n_entries:
                del e[:len(e) - n_entries]


def _warm(ops: list[BankOp], params: Params, caches: _Caches) -> list[Access]:
    """What :func:`_run` leaves behind (the caches, the results still landing) without its steps:
    the first pass of a loop."""
    nb = params.banks
    src2_separate = params.src2_separate
    entries = caches.entries
    touch = caches.touch
    last = None
    for op in ops:
        if op.valu:
            last = op
            fetched: list[str] = []
            cached: list[str] = []
            seen: set[str] = set()
            for slot, r in op.reads:
                v = _vgpr(r)
                if v is None or (src2_separate and slot.startswith("SRC2")):
                    continue
                hit = r in entries[v % nb]
                if hit:
                    cached.append(r)
                if r not in seen:
                    seen.add(r)
                    if not hit:
                        fetched.append(r)
            for r in fetched:
                touch(r, _vgpr(r) % nb)
            for r in cached:
                touch(r, _vgpr(r) % nb)
        for _, r in op.writes:
            v = _vgpr(r)
            if v is not None:
                e = entries[v % nb]
                if r in e:
                    e.remove(r)
    if last is None or not params.write_delay:
        return []
    return [_access(slot, r, v % nb, "W") for slot, r in last.writes if (v := _vgpr(r)) is not None]


# What the stalls-only walk of :func:`stalls_of` needs of an instruction, for ``nb`` banks: worked out
# once per distinct decoding (keyed as ``_PORTS`` is, by the instruction's slots, which the entry
# keeps alive with its statements and defs) and shared between every instruction of the same text.
_SINGLE: dict[int, tuple] = {}
_SINGLE_MAX = 1 << 16


def _single_facts(ins, half_of, nb: int) -> tuple:
    """(valu, reads as (slot, reg, bank, through SRC2), write Accesses, the banks' values after a
    stall-free issue as (reg, bank) or None when the instruction always stalls, writes as (reg, bank)).

    With one cache entry per bank and at least one register-file read per bank and cycle, an
    instruction stalls exactly when it asks one bank for two different registers (SRC2 apart),
    whatever the caches hold; when it does not, each bank it reads keeps the one register it asked
    for. Kept in ``_SINGLE``, where :func:`stalls_of` looks it up first."""
    op = _op_from_instr(ins, half_of)
    reads = []
    for slot, r in op.reads:
        v = _vgpr(r)
        if v is not None:
            reads.append((slot, r, v % nb, slot.startswith("SRC2")))
    writes = tuple(_access(slot, r, v % nb, "W") for slot, r in op.writes if (v := _vgpr(r)) is not None)
    banks: dict[int, str] = {}
    quiet = True
    for _slot, r, b, src2 in reads:
        if src2:
            continue
        if banks.setdefault(b, r) != r:
            quiet = False
    facts = (op.valu, tuple(reads), writes, tuple((r, b) for b, r in banks.items()) if quiet else None,
             tuple((w.reg, w.bank) for w in writes))
    if len(_SINGLE) >= _SINGLE_MAX:
        _SINGLE.clear()
    _SINGLE[id(ins.slots)] = (ins.slots, ins.stmts, ins.defs, ins.klass, ins.opaque, nb, facts)
    return facts


def _walk_single(facts: list, cache: list, pending: tuple, n_rf: int, write_delay: int, steps=None,
                 instrs=None, indices=None, half_of=None) -> tuple:
    """:func:`_warm` (``steps`` None) or :func:`_run` keeping stalled steps only (into ``steps``) for
    caches of one entry per bank (``cache[b]``: the register it holds, else None), SRC2 reads on their
    own path and writes on their own port. Returns what is still landing."""
    nb = len(cache)
    interned = _ACCESS.get
    for k, (valu, reads, writes, quiet, written) in enumerate(facts):
        if valu:
            if quiet is not None:
                for r, b in quiet:
                    cache[b] = r
            else:  # it stalls: the full step (register-file reads, then hits; the last one wins a bank)
                bank_reads = [0] * nb
                accs: list[Access] = []
                fetched: list[tuple[str, int]] = []
                hits: list[tuple[str, int]] = []
                distinct: dict[int, list[Access]] = {}
                seen = set()
                for slot, r, b, src2 in reads:
                    if src2:
                        accs.append(interned((slot, r, b, "R")) or _access(slot, r, b, "R"))
                        continue
                    if cache[b] == r:
                        acc = interned((slot, r, b, "Cache")) or _access(slot, r, b, "Cache")
                        hits.append((r, b))
                        hit = True
                    else:
                        acc = interned((slot, r, b, "R")) or _access(slot, r, b, "R")
                        hit = False
                    accs.append(acc)
                    if r not in seen:
                        seen.add(r)
                        if b in distinct:
                            distinct[b].append(acc)
                        else:
                            distinct[b] = [acc]
                        if not hit:
                            fetched.append((r, b))
                            bank_reads[b] += 1
                for r, b in fetched:
                    cache[b] = r
                for r, b in hits:
                    cache[b] = r
                if steps is not None:
                    bank_values = [0] * nb
                    for b, group in distinct.items():
                        bank_values[b] = len(group)
                    need = [max(bank_values[b], -(-bank_reads[b] // n_rf)) for b in range(nb)]
                    stall = max(need) - 1
                    conflicts = [(b, distinct.get(b, [])) for b in range(nb) if need[b] > 1]
                    op = _op_from_instr(instrs[indices[k]], half_of)
                    steps.append(Step(op, accs, list(writes), list(pending), bank_reads, bank_values, stall,
                                      conflicts))
            pending = writes if write_delay else ()
        for r, b in written:
            if cache[b] == r:
                cache[b] = None
    return pending


def stalls_of(instrs, indices, loop: bool = False, half_of=None, params: Params = DEFAULT) -> Simulation:
    """``simulate([instrs[i] for i in indices], loop, params, stalls_only=True)`` (the operands of a
    VOPD half from ``half_of`` as :func:`ops_from_instrs` takes it), worked out from facts shared by
    every instruction of one text when the caches hold one entry per bank: what a rule runs over
    every block of a kernel."""
    nb = params.banks
    if params.cache_entries != 1 or params.rf_reads_per_bank < 1 or params.writes_conflict \
            or not params.src2_separate:
        return simulate(ops_from_instrs([instrs[i] for i in indices], half_of), loop, params, stalls_only=True)
    facts = []
    append, known = facts.append, _SINGLE.get
    for i in indices:
        ins = instrs[i]
        slots = ins.slots
        k = known(id(slots))
        # the memo's key, checked inline: what a kernel's every instruction goes through
        if k is not None and k[0] is slots and k[1] is ins.stmts and k[2] is ins.defs and k[3] == ins.klass \
                and k[4] == ins.opaque and k[5] == nb:
            append(k[6])
        else:
            append(_single_facts(ins, half_of, nb))
    cache: list = [None] * nb
    pending: tuple = ()
    if loop:
        pending = _walk_single(facts, cache, pending, params.rf_reads_per_bank, params.write_delay)
    steps: list[Step] = []
    _walk_single(facts, cache, pending, params.rf_reads_per_bank, params.write_delay, steps, instrs, indices,
                 half_of)
    return Simulation(steps, params)


def simulate(ops, loop: bool = False, params: Params = DEFAULT, stalls_only: bool = False) -> Simulation:
    """Run the model over ``ops`` (see the module docstring for what they may be). ``stalls_only``:
    the simulation keeps only the steps that stall (each as the whole simulation has it), which
    takes less time than keeping them all."""
    seq = [_to_op(o) for o in ops]
    caches = _Caches(params)
    pending: list[Access] = []
    if loop:
        pending = _warm(seq, params, caches)
    steps, _ = _run(seq, params, caches, pending, not stalls_only)
    return Simulation(steps, params)
