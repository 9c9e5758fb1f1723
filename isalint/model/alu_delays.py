"""ALU-to-ALU dependencies on gfx11 and the ``s_delay_alu`` hints that cover them.

On gfx11 the SIMD front end does not switch to another wave when the instruction it issues
waits for the result of a recent VALU, transcendental or SALU instruction: the wave stalls in the
ALU and the ALU does nothing else meanwhile. ``s_delay_alu`` names the dependency ahead of time
("wait for the VALU instruction 2 back"), so the front end issues other waves' instructions
until the result is there. Without it the code is still correct - the hardware interlocks - but
every such dependency costs the whole SIMD its remaining latency. (Mesa's ACO compiler documents
this behaviour of the gfx11 front end where it inserts the hint; the RDNA3 ISA guide describes
``S_DELAY_ALU``.)

Which dependencies need a hint follows LLVM's ``AMDGPUInsertDelayAlu``, the pass that writes the
hints of every compiler-made kernel, so that a kernel clang wrote is clean by construction:

* producers are VALU, transcendental and SALU instructions, through the registers they name
  explicitly (VCC and EXEC of the 32-bit encodings, SCC and other implicit operands are not
  followed);
* a VALU result is pending for its latency (5 cycles, 6 for a 64-bit result, 8 for a quarter-rate
  multiply) while fewer than 5 VALU instructions have issued since; a transcendental result for 10
  cycles while fewer than 4 transcendental ones have; an SALU result for 2 cycles. Every
  instruction takes one cycle to issue (``s_nop N`` takes N+1; ``s_delay_alu`` is a hint and takes
  none; ``s_clause`` takes one like any other, as LLVM counts it inside the clause it opens);
* LDS, global, buffer, image and export instructions wait for every VALU result before they issue,
  so they end what is pending; so does ``s_waitcnt_depctr`` with ``va_vdst(0)``;
* state flows along every edge of the control-flow graph (a loop's last instructions reach its
  first ones).

A pending dependency of an ALU instruction is *covered* when an ``s_delay_alu`` before it names,
for this instruction, a wait on the same or a more recent producer of that kind (or at least the
remaining SALU cycles).
"""
from __future__ import annotations

import re
from bisect import bisect_left
from collections import deque

from ..hw import latency as _default
from ..hw.latency import QUARTER_RATE_OPCODES
from ..isa.mnemonics import split_encoding
from ..records import FrozenRecord

ID_NAMES = ("NO_DEP", "VALU_DEP_1", "VALU_DEP_2", "VALU_DEP_3", "VALU_DEP_4", "TRANS32_DEP_1", "TRANS32_DEP_2",
            "TRANS32_DEP_3", "FMA_ACCUM_CYCLE_1", "SALU_CYCLE_1", "SALU_CYCLE_2", "SALU_CYCLE_3")
SKIP_NAMES = ("SAME", "NEXT", "SKIP_1", "SKIP_2", "SKIP_3", "SKIP_4")
VALU_MAX = 5  # a VALU result 5 VALU instructions back is complete (s_delay_alu encodes 1-4)
TRANS_MAX = 4  # likewise 4 transcendental instructions back (encodes 1-3)
SALU_CYCLES_MAX = 3  # longest SALU wait the hint encodes
_CMP64 = re.compile(r"v_cmpx?_\w+_[iuf]64(_e32|_e64)?$")
_FUNC = re.compile(r"(instid0|instskip|instid1)\((\w+)\)")
_IMPLICIT = frozenset({"vcc", "vcc_lo", "vcc_hi", "exec", "exec_lo", "exec_hi", "scc", "m0"})  # implied operands
_NEVER = frozenset({"scc", "null"})  # registers no hint is about
_SALU_BRANCHES = ("s_swappc_b64", "s_setpc_b64")  # SOP1: SALU instructions that read their SGPR pair
_WAITS_FOR_VALU = ("lds", "vmem_load", "vmem_store", "vmem_atomic", "scratch_load", "scratch_store", "export")


class Dep(FrozenRecord):
    """One dependency an ``s_delay_alu`` names: ``n`` instructions of ``kind`` back (valu, trans),
    or ``n`` cycles (salu, fma)."""

    kind: str
    n: int

    __slots__ = _fields = ("kind", "n")

    def __init__(self, kind: str, n: int):
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "n", n)

    @property
    def id(self) -> int:
        if self.kind == "valu":
            return self.n
        if self.kind == "trans":
            return 4 + self.n
        if self.kind == "fma":
            return 8
        return 8 + self.n

    @property
    def name(self) -> str:
        return ID_NAMES[self.id]


def dep_of_id(ident: int) -> Dep | None:
    if 1 <= ident <= 4:
        return Dep("valu", ident)
    if 5 <= ident <= 7:
        return Dep("trans", ident - 4)
    if ident == 8:
        return Dep("fma", 1)
    if 9 <= ident <= 11:
        return Dep("salu", ident - 8)
    return None


def decode(ins) -> list[tuple[int, Dep]]:
    """An ``s_delay_alu``'s dependencies: [(which instruction after it: 1 = the next, dependency)]."""
    ops = ins.stmts[0].operands
    if len(ops) == 1 and ops[0].kind == "int":
        v = int(ops[0].value)
        id0, skip, id1 = v & 0xF, (v >> 4) & 0x7, (v >> 7) & 0xF
    else:
        fields = dict(_FUNC.findall(ins.text()))
        names = {n: i for i, n in enumerate(ID_NAMES)}
        id0 = names.get(fields.get("instid0", "NO_DEP"), 0)
        id1 = names.get(fields.get("instid1", "NO_DEP"), 0)
        skip = SKIP_NAMES.index(fields["instskip"]) if fields.get("instskip") in SKIP_NAMES else 0
    out = []
    for offset, ident in ((1, id0), (1 + skip, id1)):
        dep = dep_of_id(ident)
        if dep is not None:
            out.append((offset, dep))
    return out


def encode(indent: str, first: list[Dep], skip: int = 0, second: Dep | None = None) -> str:
    """One ``s_delay_alu`` for up to two dependencies of the next instruction (``skip`` 0), or one of
    the next instruction and one of the instruction ``skip`` after it."""
    ids = [d.id for d in first]
    if second is not None:
        parts = [f"instid0({ID_NAMES[ids[0]]})", f"instskip({SKIP_NAMES[skip]})", f"instid1({ID_NAMES[second.id]})"]
    elif len(ids) == 2:
        parts = [f"instid0({ID_NAMES[ids[0]]})", "instskip(SAME)", f"instid1({ID_NAMES[ids[1]]})"]
    else:
        parts = [f"instid0({ID_NAMES[ids[0]]})"]
    return f"{indent}s_delay_alu " + " | ".join(parts)


def alu_kind(ins) -> str | None:
    """The pipeline an instruction counts in for ``s_delay_alu``: valu, trans, salu, or None."""
    if ins.klass == "trans":
        return "trans"
    if ins.klass in ("valu", "vopd"):
        return "valu"
    if ins.klass == "salu" or ins.opcode in _SALU_BRANCHES:
        return "salu"
    return None


def result_latency(ins, timing=_default) -> int:
    """Cycles from issue until an ALU instruction's register results can be read (``timing``: an
    :class:`isalint.hw.timing.Timing`, or by default LLVM's numbers, :mod:`isalint.hw.latency`)."""
    if ins.klass == "trans":
        return _lat(timing, "trans_latency")
    if ins.klass == "salu":
        return _lat(timing, "salu_latency")
    if split_encoding(ins.opcode)[0] in QUARTER_RATE_OPCODES:
        return _lat(timing, "quarter_rate_latency")
    if any(len(s.regs) == 2 and s.role in ("def", "defuse") and s.regs[0][0] == "v"
           for st in ins.slots for s in st):
        return _lat(timing, "valu64_latency")
    if _CMP64.match(ins.opcode):
        return _lat(timing, "valu64_latency")  # a 64-bit compare: its mask comes as late as a 64-bit result
    return _lat(timing, "valu_latency")


def _lat(timing, name: str) -> int:
    return getattr(timing, name) if timing is not _default else getattr(_default, name.upper())


def issue_cycles(ins) -> int:
    """Cycles an instruction takes to issue, as the delay counting sees it."""
    if ins.opcode == "s_delay_alu":
        return 0
    if ins.opcode == "s_nop":
        ops = ins.stmts[0].operands
        return (int(ops[0].value) if ops and ops[0].kind == "int" else 0) + 1
    return 1


def explicit_reads(ins) -> set[str]:
    """The registers an instruction reads through its written operands. An operand the encoding
    implies (VCC of the 32-bit VOPC/VOP2 forms, EXEC, SCC, M0) is not followed, as LLVM scans only
    explicit operands; EXEC or VCC written as an explicit operand (``s_or_b32 exec_lo, exec_lo, s0``)
    is."""
    # v_writelane_b32 keeps the other lanes of its destination: LLVM does not count that read
    roles = ("use",) if ins.opcode == "v_writelane_b32" else ("use", "defuse")
    return {r for st in ins.slots for s in st if s.role in roles and s.name not in _IMPLICIT
            for r in s.regs if r not in _NEVER}


def explicit_writes(ins) -> set[str]:
    return {r for st in ins.slots for s in st if s.role in ("def", "defuse") and s.name not in _IMPLICIT
            for r in s.regs if r not in _NEVER}


def carry_writes(ins) -> set[str]:
    """The registers of a VALU instruction's second result, the SGPR carry or condition mask of
    ``v_add_co_u32``, ``v_sub_co_ci_u32``, ``v_mad_u64_u32``, ``v_div_scale_f32`` (VOP3b): LLVM's
    scheduling model gives that result the SALU write latency (:data:`isalint.hw.latency.SGPR_CARRY_LATENCY`),
    not the VALU one, so a read of it needs a wait only right after the producer."""
    if alu_kind(ins) != "valu" or ins.klass == "vopd":
        return set()
    slots = [s for st in ins.slots for s in st if s.role in ("def", "defuse") and s.name not in _IMPLICIT]
    if len(slots) < 2 or slots[0].name != "vdst":
        return set()
    return {r for s in slots[1:] if s.name == "sdst" for r in s.regs if r not in _NEVER}


def bundled_with_previous(instrs, i: int) -> bool:
    """Whether instruction ``i`` is one the compiler never gives a hint although it may read a result
    in flight, because it is part of a PC-relative sequence:

    * the ``s_add_u32``/``s_addc_u32`` of a PC-relative address (``s_getpc_b64`` then the two adds
      of ``sym@rel32@lo+4``/``@hi+12``): LLVM bundles the three and writes no hint inside a bundle -
      a line in between would move the PC the offsets are counted from;
    * the adds and the ``s_setpc_b64`` of a long branch (``s_getpc_b64``, adds of a label
      difference, ``s_setpc_b64``): LLVM writes them after its hints, when it relaxes a branch too far
      for ``s_branch``."""
    ins = instrs[i]
    if ins.opcode in ("s_add_u32", "s_addc_u32"):
        return _pc_relative_add(ins) and _after_getpc(instrs, i)
    if ins.opcode == "s_setpc_b64" and i >= 1:
        prev = instrs[i - 1]
        return (prev.opcode == "s_addc_u32" and _pc_relative_add(prev) and "@" not in prev.text()
                and _after_getpc(instrs, i - 1))
    return False


def _pc_relative_add(ins) -> bool:
    ops = ins.stmts[0].operands
    return len(ops) == 3 and ops[2].kind in ("expr", "label")


def _after_getpc(instrs, i: int) -> bool:
    for j in (i - 1, i - 2):
        if j < 0:
            return False
        if instrs[j].opcode == "s_getpc_b64":
            return True
        if instrs[j].opcode != "s_add_u32" or not _pc_relative_add(instrs[j]):
            return False
    return False


# One register's pending result: (valu_cycles, valu_num, trans_cycles, trans_num, trans_num_valu,
# salu_cycles, valu_producer, trans_producer, salu_producer). valu_num counts the VALU instructions
# issued since, the producer included (1: the VALU instruction just before).
_V_C, _V_N, _T_C, _T_N, _T_NV, _S_C, _V_P, _T_P, _S_P = range(9)


def _merge(a: tuple, b: tuple) -> tuple:
    # the producer named is the one that binds: the closest, and at equal distance the slower
    vp = a[_V_P] if (a[_V_N], -a[_V_C]) <= (b[_V_N], -b[_V_C]) else b[_V_P]
    tp = a[_T_P] if (a[_T_N], -a[_T_C]) <= (b[_T_N], -b[_T_C]) else b[_T_P]
    sp = a[_S_P] if a[_S_C] >= b[_S_C] else b[_S_P]
    return (max(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), min(a[3], b[3]), min(a[4], b[4]),
            max(a[5], b[5]), vp, tp, sp)


class Pending(FrozenRecord):
    """An ALU instruction that reads a result its ``s_delay_alu`` hints do not wait for."""

    consumer: int  # instruction index
    producer: int  # instruction index of the (most recent) producer
    reg: str
    need: Dep  # the wait it calls for
    stall: int  # cycles the SIMD stalls when nothing covers it

    __slots__ = _fields = ("consumer", "producer", "reg", "need", "stall")

    def __init__(self, consumer: int, producer: int, reg: str, need: Dep, stall: int):
        # the slots' own setters (made by the hundred thousand: quicker than object.__setattr__)
        set_consumer, set_producer, set_reg, set_need, set_stall = _PENDING_SETTERS
        set_consumer(self, consumer)
        set_producer(self, producer)
        set_reg(self, reg)
        set_need(self, need)
        set_stall(self, stall)


_PENDING_SETTERS = tuple(Pending.__dict__[name].__set__ for name in Pending._fields)


def _waits_for_valu(ins) -> bool:
    if ins.klass in _WAITS_FOR_VALU:
        return True
    if ins.opcode in ("s_sendmsg_rtn_b32", "s_sendmsg_rtn_b64"):
        return True
    if ins.opcode != "s_waitcnt_depctr":
        return False
    ops = ins.stmts[0].operands
    if len(ops) == 1 and ops[0].kind == "int":
        return (int(ops[0].value) >> 12) & 0xF == 0  # VA_VDST, bits 15:12 (LLVM AMDGPU DepCtr)
    return "va_vdst(0)" in ins.text().replace(" ", "")


class _Declared:
    """What the ``s_delay_alu`` lines before an instruction declare for it, looked up when asked (an
    ``s_delay_alu`` reaches at most 6 instructions on, so a short look back suffices)."""

    __slots__ = ("hints", "first")

    def __init__(self, hints: list, first: int):
        self.hints = hints  # per instruction: an s_delay_alu's decoded dependencies, else None
        self.first = first  # the block's first instruction: hints do not reach across blocks

    def get(self, i: int, default=()) -> list[Dep]:
        hints, out = self.hints, []
        real_before = 0  # real instructions between a hint and instruction i
        j = i - 1
        while j >= self.first and real_before <= len(SKIP_NAMES):
            deps = hints[j]
            if deps is None:
                real_before += 1
            else:
                out.extend(dep for offset, dep in deps if offset == real_before + 1)
            j -= 1
        return out or default


_FACTS: dict[int, tuple] = {}  # id(an instruction's slots) -> (those slots, its facts, its role), default timing
_FACTS_MAX = 1 << 16
# what else the walk looks at an instruction for: an s_delay_alu (its hints), an add or s_setpc_b64 that
# may be part of a PC-relative sequence (:func:`bundled_with_previous`)
_ROLE = {"s_delay_alu": 1, "s_add_u32": 2, "s_addc_u32": 2, "s_setpc_b64": 2}


def _facts(instrs, timing) -> tuple[list[tuple], list, list[int]]:
    """What the walk needs of each instruction, worked out once per distinct decoding: (kind,
    explicit reads, explicit writes, result latency, issue cycles, waits for every VALU result,
    opaque, writes ready as they issue); beside it, for each ``s_delay_alu``, the dependencies it
    declares (else None); and the indices of the ``s_delay_alu`` lines and of the instructions that
    may be part of a PC-relative sequence, in order."""
    decoded: dict[str, list] = {}
    out: list[tuple] = []
    marked: list[int] = []
    role = _ROLE.get
    if timing is _default:
        # with the default timing, kept from one file to the next: an instruction's facts depend on
        # its decoding alone, and every instruction of one decoding shares its ``slots`` list (see
        # isalint.model.program._make_instr), which the entry keeps alive
        known = _FACTS
        if len(known) >= _FACTS_MAX:
            known.clear()
        get = known.get
        append = out.append
        for i, ins in enumerate(instrs):
            slots = ins.slots
            k = get(id(slots))
            if k is None or k[0] is not slots:
                k = known[id(slots)] = (slots, _work_out(ins, timing), role(ins.opcode, 0))
            append(k[1])
            if k[2]:
                marked.append(i)
    else:
        by_text: dict[str, tuple] = {}
        for i, ins in enumerate(instrs):
            key = ins.line.text
            f = by_text.get(key)
            if f is None:
                f = by_text[key] = _work_out(ins, timing)
            out.append(f)
            if role(ins.opcode, 0):
                marked.append(i)
    hints: list = [None] * len(instrs)
    for i in marked:
        ins = instrs[i]
        if ins.opcode == "s_delay_alu":
            key = ins.line.text
            d = decoded.get(key)
            if d is None:
                d = decoded[key] = decode(ins)
            hints[i] = d
    return out, hints, marked


def _work_out(ins, timing) -> tuple:
    if ins.opaque:
        return (None, (), (), 0, 1, False, True, ())
    kind = alu_kind(ins)
    if kind is None:
        return (None, (), (), 0, issue_cycles(ins), _waits_for_valu(ins), False, ())
    done = carry_writes(ins)
    return (kind, tuple(sorted(explicit_reads(ins))), tuple(r for r in explicit_writes(ins) if r not in done),
            result_latency(ins, timing), issue_cycles(ins), False, False, tuple(done))


def _covered(info: tuple, declared: list[Dep]) -> list[tuple[Dep, int]]:
    """The waits ``info`` calls for that ``declared`` does not give: [(dependency, stall cycles)]."""
    vc, vn, tc, tn, tnv, sc = info[:6]
    valu = [d.n for d in declared if d.kind == "valu"]
    trans = [d.n for d in declared if d.kind == "trans"]
    salu = [d.n for d in declared if d.kind == "salu"]
    missing = []
    # counts include the producer itself: 1 is the instruction just before
    trans_ok = tn >= TRANS_MAX or any(n <= tn for n in trans)
    if tn < TRANS_MAX and not trans_ok:
        missing.append((Dep("trans", tn), tc))
    if vn < VALU_MAX and not any(n <= vn for n in valu):
        # a wait on a transcendental instruction issued after this VALU covers it as well
        if not (trans and tn < TRANS_MAX and trans_ok and tnv < vn):
            missing.append((Dep("valu", vn), vc))
    if sc and not any(n >= min(sc, SALU_CYCLES_MAX) for n in salu):
        missing.append((Dep("salu", min(sc, SALU_CYCLES_MAX)), sc))
    return missing


_DEPS: dict[tuple[str, int], Dep] = {}  # Dep is immutable: one object per distinct value
_AT = {"valu": _V_P, "trans": _T_P, "salu": _S_P}  # where an entry names the producer of each kind
_MISSING: dict[tuple, tuple] = {}  # (an entry's first 6 fields, the hints declared) -> what _covered says
_MISSING_MAX = 1 << 14


def _missing(info: tuple, declared) -> tuple:
    """:func:`_covered` of ``info`` and ``declared`` as ((dependency, where ``info`` names its
    producer, stall cycles), ...), worked out once per distinct question."""
    key = (info[:6], tuple(declared)) if declared else info[:6]
    got = _MISSING.get(key)
    if got is None:
        got = []
        for dep, stall in _covered(info, declared):
            dep = _DEPS.setdefault((dep.kind, dep.n), dep)
            got.append((dep, _AT[dep.kind], max(1, stall)))
        got = tuple(sorted(got, key=lambda m: m[0].kind))  # in the order pending_in gives them
        if len(_MISSING) >= _MISSING_MAX:
            _MISSING.clear()
        _MISSING[key] = got
    return got


def _run_block(facts: list, block, entry: dict, declared: dict, found: list, bundled=frozenset()) -> dict:
    """Walk one block from the pending results at its entry (relative form, as :func:`_merge`
    keeps them) to those at its exit; ``found`` gets the uncovered reads.

    Inside the block a result is kept against the block's own clocks - cycles issued, VALU and
    transcendental instructions issued - so that an instruction touches only the registers it
    reads and writes: (valu ready, valu count at issue, trans ready, trans count at issue, valu
    count at the trans issue, salu ready, producers)."""
    now = vcount = tcount = 0
    state: dict = {}
    for r, e in entry.items():
        vc, vn, tc, tn, tnv, sc, vp, tp, sp = e
        state[r] = (vc, -vn, tc, -tn, -tnv, sc, vp, tp, sp)
    pop = state.pop
    carry_lat = _default.SGPR_CARRY_LATENCY
    for i in range(block.first, block.last):
        kind, reads, writes, lat, cycles, waits, opaque, done = facts[i]
        if waits or opaque:
            state = {}
            pop = state.pop
        elif reads and state:
            hit = popped = None  # the first register read in flight, then all of them
            for r in reads:
                a = pop(r, None)
                # a result whose every latency has run out is complete, however few instructions ago
                if a is not None and (a[0] > now or a[2] > now or a[5] > now):
                    if hit is None:
                        hit, first = r, a
                    elif popped is None:
                        popped = [(hit, first), (r, a)]
                    else:
                        popped.append((r, a))
            if hit is not None and i not in bundled:
                if popped is None:
                    _check_one(i, hit, first, now, vcount, tcount, declared, found)
                else:
                    _check_reads(i, popped, now, vcount, tcount, declared, found)
        if done:
            carry = (now + carry_lat, vcount, 0, -TRANS_MAX, -VALU_MAX, 0, i, -1, -1)
            for r in done:
                state[r] = carry
        if writes:
            # issued at ``now``; the counts include the producer itself once it has issued
            if kind == "valu":
                entry_abs = (now + lat, vcount, 0, -TRANS_MAX, -VALU_MAX, 0, i, -1, -1)
            elif kind == "trans":
                entry_abs = (0, -VALU_MAX, now + lat, tcount, vcount, 0, -1, i, -1)
            else:
                entry_abs = (0, -VALU_MAX, 0, -TRANS_MAX, -VALU_MAX, now + min(lat, SALU_CYCLES_MAX + 1), -1, -1, i)
            for r in writes:
                state[r] = entry_abs
        now += cycles
        if kind is not None:
            if kind == "valu":
                vcount += 1
            elif kind == "trans":
                tcount += 1
    out = {}
    for r, a in state.items():
        if a[0] > now or a[2] > now or a[5] > now:
            e = _relative(a, now, vcount, tcount)
            if e is not None:
                out[r] = e
    return out


def _check_one(i: int, r: str, a: tuple, now: int, vcount: int, tcount: int, declared, found: list) -> None:
    """:func:`_check_reads` of a read of one register in flight, as most are."""
    e = _relative(a, now, vcount, tcount)
    if e is None:
        return
    deps = declared.get(i, ()) if declared else ()
    missing = None if deps else _MISSING.get(e[:6])
    if missing is None:
        missing = _missing(e, deps)
    for dep, at, stall in missing:
        producer = e[at]
        found.append(Pending(i, producer, r if producer >= 0 else "", dep, stall))


def _check_reads(i: int, popped: list, now: int, vcount: int, tcount: int, declared, found: list) -> None:
    """The uncovered dependencies of instruction ``i`` on the registers ``popped`` (two or more) in flight."""
    merged, kept = None, []
    for r, a in popped:
        e = _relative(a, now, vcount, tcount)
        if e is not None:
            merged = e if merged is None else _merge(merged, e)
            kept.append((r, e))
    if merged is None:
        return
    missing = _missing(merged, declared.get(i, ()) if declared else ())
    for dep, at, stall in missing:
        reg = next((r for r, e in kept if e[at] >= 0 and e[at] == merged[at]), "")
        found.append(Pending(i, merged[at], reg, dep, stall))


def _relative(a: tuple, now: int, vcount: int, tcount: int) -> tuple | None:
    """An absolute entry as (cycles left, instructions since) at this point, or None when done."""
    v_ready, v_at, t_ready, t_at, tv_at, s_ready, vp, tp, sp = a
    vc, vn = v_ready - now, vcount - v_at
    if vn >= VALU_MAX or vc <= 0:
        vc, vn, vp = 0, VALU_MAX, -1
    tc, tn, tnv = t_ready - now, tcount - t_at, vcount - tv_at
    if tn >= TRANS_MAX or tc <= 0:
        tc, tn, tnv, tp = 0, TRANS_MAX, VALU_MAX, -1
    sc = s_ready - now
    if sc <= 0:
        sc, sp = 0, -1
    if vc == 0 and tc == 0 and sc == 0:
        return None
    return (vc, vn, tc, tn, tnv, sc, vp, tp, sp)


def _merge_states(states) -> dict:
    out: dict = {}
    for s in states:
        for r, e in s.items():
            cur = out.get(r)
            out[r] = e if cur is None else _merge(cur, e)
    return out


def pending_dependencies(analysis) -> list[Pending]:
    """Every ALU instruction of the analysed file that reads a result no ``s_delay_alu`` before it
    waits for, in instruction order (one entry per missing wait). Computed once per analysis."""
    cached = analysis.__dict__.get("_alu_pending")
    if cached is None:
        cached = analysis.__dict__["_alu_pending"] = pending_in(analysis.program, analysis.cfg)
    return cached


def pending_in(program, cfg, timing=None, hints: bool = True) -> list[Pending]:
    """:func:`pending_dependencies` of ``program`` over its control-flow graph ``cfg``; with ``hints``
    False, every dependency that calls for a wait, whatever the ``s_delay_alu`` lines say (hints do
    not change what is in flight, only who waits for it)."""
    t = timing if timing is not None else _default
    instrs = program.instrs
    blocks = cfg.blocks
    facts, declared_by, marked = _facts(instrs, t)
    bundled = frozenset(i for i in marked if instrs[i].opcode != "s_delay_alu" and bundled_with_previous(instrs, i))
    # a block without an s_delay_alu declares nothing (hints do not reach across blocks)
    with_hints = [i for i in marked if declared_by[i] is not None] if hints else []
    declared = [_Declared(declared_by, b.first) if _any_between(with_hints, b.first, b.last) else {} for b in blocks]
    exit_state: list[dict] = [{} for _ in blocks]
    found_in: list[list[Pending]] = [[] for _ in blocks]
    work = deque(b.id for b in blocks)
    queued = set(work)
    rounds, limit = 0, 8 * len(blocks) + 16
    while work and rounds < limit:  # entries die within a few instructions: this settles fast
        rounds += 1
        b = work.popleft()
        queued.discard(b)
        blk = blocks[b]
        # each run of a block starts from the latest state of its predecessors, so the findings of
        # its last run are those of the settled state
        found_in[b] = []
        out = _run_block(facts, blk, _merge_states(exit_state[p] for p in blk.preds), declared[b], found_in[b], bundled)
        if out != exit_state[b]:
            exit_state[b] = out
            for s in blk.succs:
                if s not in queued:
                    queued.add(s)
                    work.append(s)
    found = [p for f in found_in for p in f]
    # each block's are in (consumer, kind) order: so are all of them when the blocks are in order
    if any(blocks[k].first > blocks[k + 1].first for k in range(len(blocks) - 1)):
        found.sort(key=lambda p: (p.consumer, p.need.kind))
    return found


def _any_between(sorted_indices: list[int], first: int, last: int) -> bool:
    """Whether one of ``sorted_indices`` is in [first, last)."""
    k = bisect_left(sorted_indices, first)
    return k < len(sorted_indices) and sorted_indices[k] < last


def strongest(deps) -> list[Dep]:
    """The waits one ``s_delay_alu`` writes for an instruction needing ``deps``: the closest of each
    kind, at most two (a transcendental one, a VALU one, else an SALU one - LLVM's order, which drops
    the SALU wait when all three are needed)."""
    best: dict[str, Dep] = {}
    for d in deps:
        cur = best.get(d.kind)
        if cur is None or (d.kind in ("valu", "trans") and d.n < cur.n) or (d.kind in ("salu", "fma") and d.n > cur.n):
            best[d.kind] = d
    return [best[k] for k in ("trans", "valu", "salu", "fma") if k in best][:2]

