"""RDNA3 wait counters along the paths of the CFG.

What the hardware does (RDNA3 ISA guide, 4.4 "Data dependency resolution" and the
``S_WAITCNT`` entry of 16.x "SOPP instructions"):

* ``vmcnt`` counts vector-memory loads (global, buffer, scratch, flat, atomics that
  return data); they return in issue order among themselves (image sampler and BVH
  ops form their own in-order streams).
* ``vscnt`` counts vector-memory stores and atomics without return. The data VGPRs
  of a store are read at issue on gfx10+, so a store never holds a register.
* ``lgkmcnt`` counts LDS/GDS ops (in order among themselves), scalar-memory loads
  (which return out of order) and messages. FLAT ops count here too: on gfx10+
  FLAT ops keep both counters in issue order (the out-of-order FLAT counts were a
  gfx9-and-earlier behaviour; LLVM's waitcnt insertion relies on it for gfx10+),
  so a FLAT op is one more op of the LDS stream. When the program provably
  touches no LDS (:func:`may_touch_lds`), a FLAT op still counts on ``lgkmcnt``
  but holds no register there: its data comes from memory, and ``vmcnt`` says
  when it landed.
* A load that writes only half of its destination (the ``d16``/``d16_hi`` forms of
  LDS, global, buffer, scratch and FLAT loads) keeps the other half: it reads the
  register when its data returns, after every earlier op of its own in-order
  stream has landed, so an earlier load of the same stream into that register
  needs no wait.
* ``s_swappc_b64``/``s_call_b64``: the AMDGPU calling convention has a callee wait
  for every counter (but ``vscnt``) on entry and before it returns, so nothing
  this wave issued before the call is in flight after it.
* ``s_barrier`` is not a release fence: it waits for nothing. Only the LDS ops
  still in flight are a hazard there (the other waves of the workgroup read LDS
  once they pass it; LLVM's memory model waits ``lgkmcnt(0)`` before the barrier
  of ``__syncthreads``). Global/buffer ops in flight across a barrier are fine
  unless another wave stores to the same address after it (WAIT001 says so in an
  info note, see :func:`barrier_vmem_inflight`).
* ``expcnt`` counts exports (and GDS ops) until their data has left the VGPRs.
* ``s_waitcnt X(n)`` stalls until at most ``n`` ops of counter X are in flight.

The abstract state maps each register an op in flight will write to ``k``: how
many later ops of the same counter are certain to complete after it (later ops of
the same in-order stream). ``s_waitcnt X(n)`` with ``n <= k`` guarantees the op
is done: if it were not, it and its ``k`` successors would all be in flight. Ops
of out-of-order classes keep ``k = 0``, so only ``X(0)`` covers them, and they do
not raise ``k`` of others. Paths join by keeping the smallest ``k`` (the
strictest wait any path needs), and loops iterate to a fixed point.

API (everything the rule WAIT001 and the fix passes need):

* :func:`events` - what one instruction does to the counters.
* :class:`CounterState` - the state at one point: ``issue``, ``wait``,
  ``check`` (hazards of an instruction), ``required`` (the wait it needs),
  ``step`` (one instruction, in order), ``merge``.
* :func:`analyze` -> :class:`CounterAnalysis` - the fixed point over a program's
  CFG: ``state_before(i)``, ``hazards``, ``needed_threshold(i, counter)``.
* :func:`plan_waits` / :func:`plan_loop_waits` - the loosest waits a straight-line
  sequence (or a loop body) needs, for passes that reorder instructions and must
  recompute ``s_waitcnt`` values.
"""
from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence

from ..records import FrozenRecord, Record
from .waitcnt import wait_thresholds

CAP = 63  # the largest count a 6-bit counter field can wait for
COUNTERS = ("vmcnt", "vscnt", "lgkmcnt", "expcnt")

# Ops of these classes complete in issue order relative to the other ops of the same class.
IN_ORDER = frozenset({"vmem", "sample", "bvh", "lds", "store", "exp", "param"})
# These may complete in any order (scalar memory, messages).
OUT_OF_ORDER = frozenset({"smem", "msg"})
# Classes whose pending registers are *read* by the op (export data): only writes conflict.
LOCKS = frozenset({"exp"})


class Event(FrozenRecord):
    """One counter increment made by an instruction."""

    counter: str
    cls: str
    writes: tuple[str, ...]  # registers written when the op completes
    locks: tuple[str, ...]  # registers the op still reads after issue
    marks: bool  # the op moves its stream's barrier marker (False: the LDS side of a FLAT op)

    __slots__ = _fields = ("counter", "cls", "writes", "locks", "marks")

    def __init__(self, counter: str, cls: str, writes: tuple[str, ...] = (), locks: tuple[str, ...] = (),
                 marks: bool = True):
        setattr_ = object.__setattr__
        setattr_(self, "counter", counter)
        setattr_(self, "cls", cls)
        setattr_(self, "writes", writes)
        setattr_(self, "locks", locks)
        setattr_(self, "marks", marks)


class Pending(FrozenRecord):
    """A register an op in flight holds: ``k`` later ops surely complete after it."""

    k: int
    origin: int  # instruction index of the op

    __slots__ = _fields = ("k", "origin")

    def __init__(self, k: int, origin: int):
        setattr_ = object.__setattr__
        setattr_(self, "k", k)
        setattr_(self, "origin", origin)


class Hazard(FrozenRecord):
    """A register used before the wait that guarantees its op completed."""

    index: int  # the instruction that uses the register
    reg: str
    counter: str
    cls: str
    k: int  # the instruction needs ``counter(k)`` (or stricter) before it
    origin: int  # the op in flight
    kind: str  # "read" | "write"

    __slots__ = _fields = ("index", "reg", "counter", "cls", "k", "origin", "kind")

    def __init__(self, index: int, reg: str, counter: str, cls: str, k: int, origin: int, kind: str):
        setattr_ = object.__setattr__
        setattr_(self, "index", index)
        setattr_(self, "reg", reg)
        setattr_(self, "counter", counter)
        setattr_(self, "cls", cls)
        setattr_(self, "k", k)
        setattr_(self, "origin", origin)
        setattr_(self, "kind", kind)


def _slot_regs(instr, roles: tuple[str, ...], names: tuple[str, ...] | None = None) -> tuple[str, ...]:
    out: list[str] = []
    for stmt_slots in instr.slots:
        for slot in stmt_slots:
            if slot.role in roles and (names is None or slot.name in names):
                out.extend(slot.regs)
    return tuple(dict.fromkeys(out))


def events(instr, flat_lds: bool = True) -> tuple[Event, ...]:
    """The counter increments of ``instr`` (empty for non-memory and opaque instructions).

    A FLAT op's ``lgkmcnt`` side is one more op of the in-order LDS stream; it holds
    its registers there only when ``flat_lds`` (the program may touch LDS)."""
    if not instr.counters or instr.opaque:
        return ()
    # The decoding of a line's text (its operand slots, one object) is shared by every instruction
    # of that text, in one kernel and the next: its events are worked out once.
    slots = instr.slots
    key = (id(slots), instr.klass, instr.opcode, instr.counters, flat_lds)
    known = _EVENTS.get(key)
    if known is not None and known[0] is slots:
        return known[1]
    out = _events(instr, flat_lds)
    if len(_EVENTS) >= 1 << 14:
        _EVENTS.clear()
    _EVENTS[key] = (slots, out)  # the entry keeps the slots, and so their id, alive
    return out


_EVENTS: dict[tuple, tuple] = {}


def _events(instr, flat_lds: bool) -> tuple[Event, ...]:
    info = instr.infos[0]
    klass = instr.klass
    enc = info.encoding if info is not None else ""
    name = instr.opcode
    writes = _slot_regs(instr, ("def", "defuse"))
    out: list[Event] = []
    if klass in ("vmem_load", "scratch_load"):
        cls = "vmem"
        if enc == "MIMG":
            cls = "bvh" if "bvh" in name else ("sample" if ("sample" in name or "gather" in name) else "vmem")
        out.append(Event("vmcnt", cls, writes))
        if "lgkmcnt" in instr.counters:
            out.append(Event("lgkmcnt", "lds", writes if flat_lds else (), marks=False))
    elif klass in ("vmem_store", "scratch_store"):
        out.append(Event("vscnt", "store"))
        if "lgkmcnt" in instr.counters:
            out.append(Event("lgkmcnt", "lds", marks=False))
    elif klass == "vmem_atomic":
        returns = bool(writes)  # the returning form (glc) is written with a vdst
        out.append(Event("vmcnt", "vmem", writes) if returns else Event("vscnt", "store"))
        if "lgkmcnt" in instr.counters:
            out.append(Event("lgkmcnt", "lds", writes if flat_lds else (), marks=False))
    elif klass == "smem":
        out.append(Event("lgkmcnt", "smem", writes))
    elif klass == "message":
        out.append(Event("lgkmcnt", "msg", writes))
    elif "expcnt" in instr.counters:
        if writes:  # lds_param_load / lds_direct_load return data on expcnt
            out.append(Event("expcnt", "param", writes))
        else:  # an export reads its data VGPRs after issue
            out.append(Event("expcnt", "exp", (), _slot_regs(instr, ("use",), None)))
    elif "lgkmcnt" in instr.counters:  # LDS / GDS
        out.append(Event("lgkmcnt", "lds", writes))
    return tuple(out)


# Pseudo registers standing for "the newest op of this stream". s_barrier reads the LDS one: the
# other waves of the workgroup read the LDS this wave wrote once they pass the barrier, so its LDS
# ops must be done (LLVM's memory model waits lgkmcnt(0) before the barrier of __syncthreads).
# A bare s_barrier is not a release fence for global memory: the vector-memory markers are kept
# (the rule reports loads in flight across a barrier of a kernel that also stores, as a note) but
# no barrier reads them.
LDS_SYNC = "@lds"
VMEM_SYNC = "@vmem"
STORE_SYNC = "@vstore"
_SYNC_OF = {"lds": LDS_SYNC, "vmem": VMEM_SYNC, "store": STORE_SYNC}
CU_MODE_SYNC = (LDS_SYNC,)
WGP_MODE_SYNC = CU_MODE_SYNC  # the same in WGP mode: a barrier is no fence for vector memory

# Calls: the callee waits for every counter but vscnt on entry and before it returns (AMDGPU
# calling convention), so after the call nothing issued before it is in flight.
CALLS = ("s_swappc_b64", "s_call_b64")
_CALL_WAIT = {"vmcnt": 0, "lgkmcnt": 0, "expcnt": 0}

def merge_reads(instr) -> frozenset:
    """Registers a load reads only to keep the part of its destination it does not write (the other
    half of a D16 load's VGPR, for LDS and vector-memory loads alike): read when its data returns,
    so after every earlier op of its own in-order stream has landed."""
    klass = instr.klass
    if instr.opaque or klass not in ("vmem_load", "scratch_load", "lds"):
        return frozenset()
    if klass == "lds" and "_d16" not in instr.opcode:
        return frozenset()
    return frozenset(_slot_regs(instr, ("defuse",)))


# What reads the shared aperture (the only way to form a generic pointer into LDS).
_APERTURE_WORDS = ("shared_base", "shared_limit", "sh_mem_bases")


def may_touch_lds(program) -> bool:
    """False only when the whole program provably never accesses LDS (see :func:`lds_free_flat`)."""
    return _touches_lds(program.instrs, program.kernels)


def _touches_lds(instrs, kernels) -> bool:
    for ins in instrs:
        if ins.klass == "lds" or "lds" in ins.opcode or ins.opaque:
            return True
        text = ins.line.text.lower()
        if any(w in text for w in _APERTURE_WORDS):
            return True
    for k in kernels:
        if int(k.descriptor.get(".amdhsa_group_segment_fixed_size", 0) or 0) > 0:
            return True
        meta = k.metadata
        if isinstance(meta, dict) and int(meta.get(".group_segment_fixed_size", 0) or 0) > 0:
            return True
    return False


def _is_flat(ins) -> bool:
    return ins.klass in ("vmem_load", "vmem_store", "vmem_atomic", "scratch_load", "scratch_store") \
        and "lgkmcnt" in ins.counters


def lds_free_flat(program) -> frozenset:
    """Indices of the FLAT ops that provably access memory, not LDS: a vmcnt wait covers them.

    The proof, for the whole program or for the kernel holding the op: no LDS instruction (``ds_*``,
    LDS parameter/direct loads), no read of the shared aperture (``src_shared_base``/
    ``src_shared_limit``, ``s_getreg`` of ``HW_REG_SH_MEM_BASES``: without it no generic pointer into
    LDS can be formed), no kernel descriptor or metadata entry asking for LDS
    (``group_segment_fixed_size`` > 0), and, for one kernel of a program that does use LDS, no call
    (the callee might hand back a pointer into LDS). Code outside every kernel (a device function)
    is proven only with the whole program."""
    instrs = program.instrs
    flats = [i for i, ins in enumerate(instrs) if ins.counters and _is_flat(ins)]
    if not flats:
        return frozenset()
    if not _touches_lds(instrs, program.kernels):
        return frozenset(flats)
    out: set[int] = set()
    for k in program.kernels:
        first, last = k.first, k.last
        if first is None or last is None or not any(first <= i < last for i in flats):
            continue
        body = instrs[first:last]
        # a call, or a function's return (a device function laid out inside the kernel's range, which
        # other kernels may call with a pointer into their LDS): only the whole program can prove it
        if any(ins.opcode in CALLS or ins.opcode == "s_setpc_b64" for ins in body) or _touches_lds(body, [k]):
            continue
        out.update(i for i in flats if first <= i < last)
    return frozenset(out)


def reads_of(instr, sync: tuple[str, ...] = CU_MODE_SYNC) -> list[str]:
    """Registers ``instr`` reads, plus the pseudo registers a barrier synchronises."""
    if instr.klass == "barrier":
        return list(instr.uses) + list(sync)
    return instr.uses


class CounterState:
    """Registers held by ops in flight, and an upper bound of ops in flight per counter.

    Each op in flight is kept as ``(base, origin)`` per (reg, counter, cls), with a shift per
    stream (counter, cls): its ``k`` is ``min(CAP, base + shift)``. Issuing an op of an in-order
    stream raises that stream's shift, so the ops already in flight count one more later op
    without being visited. :attr:`pending` gives the same state as {key: :class:`Pending`}.
    """

    __slots__ = ("_p", "_shift", "inflight", "sync", "lds_free", "_held", "_pend")

    def __init__(self, pending: dict | None = None, inflight: dict | None = None,
                 sync: tuple[str, ...] = CU_MODE_SYNC, lds_free: frozenset = frozenset()):
        # (reg, counter, cls) -> (base, origin): k = min(CAP, base + _shift[(counter, cls)])
        self._p: dict[tuple[str, str, str], tuple[int, int]] = (
            {key: (p.k, p.origin) for key, p in pending.items()} if pending else {})
        self._shift: dict[tuple[str, str], int] = {}
        self.inflight: dict[str, int] = inflight if inflight is not None else {}
        self.sync = sync  # what s_barrier waits for (CU_MODE_SYNC or WGP_MODE_SYNC)
        self.lds_free = lds_free  # indices of the FLAT ops that provably touch no LDS (lds_free_flat)
        self._held: set[str] | None = None  # registers of ``_p``, reset by the methods that drop some
        self._pend: dict | None = None  # ``pending`` as made last, reset by every change

    @property
    def pending(self) -> dict[tuple[str, str, str], Pending]:
        """(reg, counter, cls) -> :class:`Pending` (the registers of one op share one)."""
        made = self._pend
        if made is None:
            shift = self._shift
            made = {}
            one: dict[tuple[int, int], Pending] = {}
            for key, (base, origin) in self._p.items():
                k = base + shift.get((key[1], key[2]), 0)
                if k > CAP:
                    k = CAP
                p = one.get((k, origin))
                if p is None:
                    p = one[k, origin] = Pending(k, origin)
                made[key] = p
            self._pend = made
        return made

    @pending.setter
    def pending(self, value: dict) -> None:
        self._p = {key: (p.k, p.origin) for key, p in value.items()}
        self._shift = {}
        self._held = self._pend = None

    def _k_items(self):
        """(key, k, origin) of every entry, in order."""
        shift = self._shift
        for key, (base, origin) in self._p.items():
            k = base + shift.get((key[1], key[2]), 0)
            yield key, (k if k < CAP else CAP), origin

    def copy(self) -> CounterState:
        st = CounterState(None, dict(self.inflight), self.sync, self.lds_free)
        st._p = dict(self._p)
        st._shift = dict(self._shift)
        return st

    def __eq__(self, other) -> bool:
        if not isinstance(other, CounterState) or self.inflight != other.inflight:
            return False
        mine, theirs = self._p, other._p
        if len(mine) != len(theirs):
            return False
        ms, os_ = self._shift, other._shift
        for key, (base, origin) in mine.items():
            q = theirs.get(key)
            if q is None or q[1] != origin:
                return False
            s = (key[1], key[2])
            a, b = base + ms.get(s, 0), q[0] + os_.get(s, 0)
            if a != b and (a < CAP or b < CAP):
                return False
        return True

    def __repr__(self) -> str:
        items = ", ".join(f"{r}:{c}/{cls}k{p.k}@{p.origin}" for (r, c, cls), p in sorted(self.pending.items()))
        return f"CounterState({items}; inflight={self.inflight})"

    # -- queries -------------------------------------------------------------------------------
    def held_regs(self) -> set[str]:
        """The registers (and stream markers) of the ops in flight (kept until they change)."""
        held = self._held
        if held is None:
            held = self._held = {key[0] for key in self._p}
        return held

    def regs(self) -> set[str]:
        """Registers an op in flight may still write (or, for exports, read)."""
        return {r for (r, _c, _cls) in self._p if r[0] != "@"}

    def written_regs(self) -> set[str]:
        return {r for (r, _c, cls) in self._p if cls not in LOCKS and r[0] != "@"}

    def entries(self, reg: str | None = None) -> list[tuple[str, str, str, Pending]]:
        return [(r, c, cls, p) for (r, c, cls), p in self.pending.items() if reg is None or r == reg]

    def check(self, instr, index: int | None = None) -> list[Hazard]:
        """Hazards ``instr`` would hit if issued in this state (before its own effects)."""
        pend = self._p
        if not pend:
            return []
        reads, writes = reads_of(instr, self.sync), instr.defs
        held = self.held_regs()
        if held.isdisjoint(reads) and held.isdisjoint(writes):
            return []
        index = instr.index if index is None else index
        own = {(e.counter, e.cls) for e in events(instr, index not in self.lds_free) if e.writes}
        merged = merge_reads(instr)
        shift = self._shift
        touched = held.intersection(reads)
        touched.update(held.intersection(writes))
        by_reg: dict[str, list] = {}
        for key, (base, origin) in pend.items():
            if key[0] in touched:
                k = base + shift.get((key[1], key[2]), 0)
                by_reg.setdefault(key[0], []).append((key, k if k < CAP else CAP, origin))
        out: list[Hazard] = []
        for r in reads:
            for (reg, c, cls), k, origin in by_reg.get(r, ()):
                if cls in LOCKS:
                    continue
                if r in merged and cls in IN_ORDER and (c, cls) in own:
                    continue  # read on return, after the earlier op of the same stream
                out.append(Hazard(index, reg, c, cls, k, origin, "read"))
        for r in writes:
            for (reg, c, cls), k, origin in by_reg.get(r, ()):
                if cls in IN_ORDER and cls not in LOCKS and (c, cls) in own:
                    continue  # a later op of the same in-order stream lands after the earlier one
                out.append(Hazard(index, reg, c, cls, k, origin, "write"))
        return out

    def required(self, instr, index: int | None = None) -> dict[str, int]:
        """The loosest wait ``instr`` needs before it: {counter: n}; empty if none."""
        need: dict[str, int] = {}
        for h in self.check(instr, index):
            if h.k < need.get(h.counter, CAP + 1):
                need[h.counter] = h.k
        return need

    # -- transfer ------------------------------------------------------------------------------
    def wait(self, thresholds: dict[str, int]) -> None:
        """Apply ``s_waitcnt``: drop every op the thresholds guarantee complete."""
        if not thresholds:
            return
        if self._p:
            shift = self._shift
            kept = {}
            for key, v in self._p.items():
                c = key[1]
                if c in thresholds:
                    k = v[0] + shift.get((c, key[2]), 0)
                    if (k if k < CAP else CAP) >= thresholds[c]:
                        continue
                kept[key] = v
            if len(kept) != len(self._p):
                self._p = kept
                self._held = self._pend = None
        for c, n in thresholds.items():
            if c in self.inflight and self.inflight[c] > n:
                if n == 0:
                    del self.inflight[c]
                else:
                    self.inflight[c] = n

    def issue(self, index: int, event: Event) -> None:
        self._pend = None
        c, cls = event.counter, event.cls
        stream = (c, cls)
        shift = self._shift
        s = shift.get(stream, 0)
        if cls in IN_ORDER:
            s += 1  # every op of the stream in flight has one more later op
            shift[stream] = s
        new = (-s, index)  # k = 0
        pend = self._p
        held = self._held
        for r in event.writes:
            pend[(r, c, cls)] = new
        for r in event.locks:
            pend[(r, c, cls)] = new
        if held is not None:
            held.update(event.writes)
            held.update(event.locks)
        marker = _SYNC_OF.get(cls) if event.marks else None
        if marker is not None:
            pend[(marker, c, cls)] = new
            if held is not None:
                held.add(marker)
        self.inflight[c] = min(CAP, self.inflight.get(c, 0) + 1)

    def step(self, instr, index: int | None = None, resolve: str = "zero") -> list[Hazard]:
        """Execute one instruction: its wait, its hazards, its issues. Returns the hazards.

        After a hazard the analysis continues as if the missing wait had been
        inserted: ``resolve="zero"`` waits the counter down to 0 (one finding per
        missing wait), ``"exact"`` applies exactly the loosest wait that was needed.
        """
        index = instr.index if index is None else index
        if instr.klass == "waitcnt":
            thr = wait_thresholds(instr)
            if thr:
                self.wait(thr)
            return []
        hz = self.check(instr, index)
        if hz:
            need: dict[str, int] = {}
            for h in hz:
                need[h.counter] = min(need.get(h.counter, CAP + 1), h.k)
            self.wait({c: 0 for c in need} if resolve == "zero" else need)
        if instr.counters and not instr.opaque:
            for e in events(instr, index not in self.lds_free):
                self.issue(index, e)
        if instr.opcode in CALLS:
            self.wait(_CALL_WAIT)  # the callee waited on entry (and before returning)
        return hz

    def merge(self, other: CounterState) -> bool:
        """Join ``other`` into self (paths meeting). True if self changed."""
        changed = False
        mine = self._p
        ms, os_ = self._shift, other._shift
        for key, (base, origin) in other._p.items():
            stream = (key[1], key[2])
            pk = base + os_.get(stream, 0)
            if pk > CAP:
                pk = CAP
            q = mine.get(key)
            if q is not None:
                qk = q[0] + ms.get(stream, 0)
                if qk > CAP:
                    qk = CAP
                if not (pk < qk or (pk == qk and origin < q[1])):
                    continue
            mine[key] = (pk - ms.get(stream, 0), origin)
            changed = True
        if changed:
            self._held = self._pend = None
        for c, n in other.inflight.items():
            if n > self.inflight.get(c, 0):
                self.inflight[c] = n
                changed = True
        return changed


class CounterAnalysis(Record):
    """The counter state at every block entry of a program, at the fixed point."""

    program: object
    block_in: list[CounterState]
    hazards: list[Hazard]
    resolve: str
    # block -> {index: the state before it}, for the indices asked for (and the block's first)
    _before: dict[int, dict[int, CounterState]]
    _last: dict[int, int]  # block -> largest index in _before

    _fields = ("program", "block_in", "hazards", "resolve", "_before", "_last")
    _no_repr = frozenset({"_before", "_last"})

    def __init__(self, program: object, block_in: list[CounterState], hazards: list[Hazard] | None = None,
                 resolve: str = "zero", _before: dict[int, dict[int, CounterState]] | None = None,
                 _last: dict[int, int] | None = None):
        self.program = program
        self.block_in = block_in
        self.hazards = [] if hazards is None else hazards
        self.resolve = resolve
        self._before = {} if _before is None else _before
        self._last = {} if _last is None else _last

    def state_before(self, index: int) -> CounterState:
        """A copy of the state just before instruction ``index`` (after earlier ones in its block)."""
        return self._state_at(index).copy()

    def _state_at(self, index: int) -> CounterState:
        """The state just before instruction ``index``, as kept (not to be changed)."""
        cfg = self.program.cfg()
        b = cfg.block_of[index]
        states = self._before.get(b)
        if states is None:
            first = cfg.blocks[b].first
            states = self._before[b] = {first: self.block_in[b].copy()}
            self._last[b] = first
        st = states.get(index)
        if st is None:
            last = self._last[b]
            start = last if last < index else max(i for i in states if i < index)
            st = states[start].copy()
            instrs = self.program.instrs
            for i in range(start, index):
                st.step(instrs[i], i, self.resolve)
            states[index] = st
            if index > last:
                self._last[b] = index
        return st

    def hazards_at(self, index: int) -> list[Hazard]:
        return [h for h in self.hazards if h.index == index]

    def retires(self, index: int, counter: str) -> list[tuple[str, str, str, Pending]]:
        """The in-flight entries the wait at ``index`` retires on ``counter``."""
        thr = wait_thresholds(self.program.instrs[index]) or {}
        if counter not in thr:
            return []
        n = thr[counter]
        return [(r, c, cls, Pending(k, origin)) for (r, c, cls), k, origin in self._state_at(index)._k_items()
                if c == counter and k >= n]

    def retires_any(self, index: int, counter: str) -> bool:
        """Whether the wait at ``index`` retires anything on ``counter`` (:meth:`retires` is not empty)."""
        thr = wait_thresholds(self.program.instrs[index]) or {}
        if counter not in thr:
            return False
        n = thr[counter]
        return any(c == counter and k >= n for (_r, c, _cls), k, _origin in self._state_at(index)._k_items())

    def needed_threshold(self, index: int, counter: str) -> int | None:
        """For the wait at ``index``: the loosest ``counter`` value that still leaves no
        register used early; None when no later use needs this wait on ``counter``.

        Each op in flight at the wait is followed forward along every path (with the waits
        that come after it) until a later wait retires it, a same-stream load replaces
        it, or an instruction uses its register (then the wait is needed for it). Ops the
        wait does not retire count too: when one of them is used early, the value is below
        the wait's own (the wait is too weak, not too strict).
        """
        instr = self.program.instrs[index]
        thr = wait_thresholds(instr) or {}
        if counter not in thr:
            return None
        groups = self._groups(index, counter)
        best: int | None = None
        for k, cls in sorted(groups):
            if best is not None and k >= best:
                break
            if self._tokens_needed(index + 1, groups[k, cls], counter, cls, k):
                best = k
        return best

    def looser_threshold(self, index: int, counter: str) -> tuple[bool, int | None]:
        """For the wait at ``index``, whether a looser ``counter`` value would still do, and
        which: ``(True, needed_threshold(index, counter))`` when that is None or above the
        wait's own value, else ``(False, None)``.

        The ops at the wait's own k are asked first (the register a wait is for is mostly
        used right after it): once one of those, or of the ops the wait leaves in flight, is
        needed, the others need not be followed."""
        thr = wait_thresholds(self.program.instrs[index]) or {}
        if counter not in thr:
            return True, None
        n = thr[counter]
        groups = self._groups(index, counter)
        order = sorted(groups)
        at_most = [g for g in order if g[0] == n] + [g for g in reversed(order) if g[0] < n]
        for k, cls in at_most:
            if self._tokens_needed(index + 1, groups[k, cls], counter, cls, k):
                return False, None
        for k, cls in order:
            if k > n and self._tokens_needed(index + 1, groups[k, cls], counter, cls, k):
                return True, k
        return True, None

    def _groups(self, index: int, counter: str) -> dict[tuple[int, str], list[str]]:
        """The registers in flight on ``counter`` before ``index``, by (k, class)."""
        st = self._state_at(index)
        # The ops in flight with the same class and k (the registers of one load, mostly) are
        # followed together: the wait is needed at that k as soon as one of them is used early.
        groups: dict[tuple[int, str], list[str]] = {}
        for (reg, c, cls), k, _origin in st._k_items():
            if c == counter:
                groups.setdefault((k, cls), []).append(reg)
        return groups

    def _tokens_needed(self, start: int, regs: list[str], counter: str, cls: str, k: int) -> bool:
        """Whether one of ``regs`` (written by ops of class ``cls`` in flight on ``counter``,
        each with ``k`` later ops of its stream) is used, along some path from ``start``,
        before a wait retires it, a same-stream load replaces it or the program ends.

        Each register is followed as if alone (a path state is a block entered with some k,
        and one with a smaller k covers it, per register); those a path has not yet dropped
        share the walk.
        """
        program = self.program
        cfg = program.cfg()
        instrs = program.instrs
        n_instrs = len(instrs)
        sync = self.block_in[0].sync if self.block_in else CU_MODE_SYNC
        lds_free = self.block_in[0].lds_free if self.block_in else frozenset()
        seen: dict[tuple[int, str], int] = {}  # (block, register) -> smallest k it was entered with
        work: list[tuple[int, int, frozenset[str]]] = [(start, k, frozenset(regs))]
        locked = cls in LOCKS
        in_order = cls in IN_ORDER
        known = self.__dict__.setdefault("_events", {})  # instruction index -> events() (asked again and again)
        # Only some instructions can end the walk or change it: waits, ops that count, ends of the
        # program (``steps``), and those that read or write one of the registers (``touches``);
        # every other instruction is passed over without being looked at.
        steps, touching, waits = self._walk_index(sync)
        touches = self._touches(regs, touching)
        step_set = self.__dict__.get("_step_set")
        if step_set is None:
            step_set = self.__dict__["_step_set"] = frozenset(steps)
        n_steps, n_touches = len(steps), len(touches)
        while work:
            i, k, alive = work.pop()
            if i >= n_instrs:
                continue
            b = cfg.block_of[i]
            blk = cfg.blocks[b]
            if i == blk.first:
                fresh = []
                for r in alive:
                    was = seen.get((b, r))
                    if was is None or was > k:
                        seen[b, r] = k
                        fresh.append(r)
                if not fresh:
                    continue
                if len(fresh) < len(alive):
                    alive = frozenset(fresh)
            end = blk.last
            p = bisect_left(steps, i)
            q = bisect_left(touches, i) if n_touches else 0
            while alive:
                js = steps[p] if p < n_steps else end
                jt = touches[q] if q < n_touches else end
                j = js if js < jt else jt
                if j >= end:
                    break
                if js == j:
                    p += 1
                if jt == j:
                    q += 1
                ins = instrs[j]
                klass = ins.klass
                if klass == "waitcnt":
                    thr = waits[j]
                    if thr and counter in thr and k >= thr[counter]:
                        alive = frozenset()
                        break
                    continue
                if ins.counters and not ins.opaque:
                    evs = known.get(j)
                    if evs is None:
                        evs = known[j] = events(ins, j not in lds_free)
                else:
                    evs = ()
                if jt == j:
                    uses = ins.uses if klass != "barrier" else reads_of(ins, sync)
                    defs = ins.defs
                    dropped = []
                    for reg in alive:
                        if not locked and reg in uses:
                            if not (in_order and reg in merge_reads(ins)
                                    and any(e.counter == counter and e.cls == cls for e in evs)):
                                return True
                        if reg in defs:
                            if in_order and not locked and any(
                                    e.counter == counter and e.cls == cls and reg in e.writes for e in evs):
                                dropped.append(reg)  # replaced by a same-stream load
                                continue
                            return True
                        if ins.opcode in CALLS and counter in _CALL_WAIT and j not in step_set \
                                and (reg in uses or reg in defs):
                            dropped.append(reg)  # the callee waits for it
                    if dropped:
                        alive = alive.difference(dropped)
                        if not alive:
                            break
                for e in evs:
                    if e.counter == counter and e.cls == cls and in_order and k < CAP:
                        k += 1
                if klass == "endpgm" or ins.opcode in _ENDS_PROGRAM:
                    alive = frozenset()
                    break
                if ins.opcode in CALLS and counter in _CALL_WAIT and j in step_set:
                    alive = frozenset()  # the callee waits for it
                    break
            if alive:
                for s in blk.succs:
                    work.append((cfg.blocks[s].first, k, alive))
        return False

    def _touches(self, regs: list[str], touching: dict[str, list[int]]) -> list[int]:
        """The indices of the instructions that read or write one of ``regs``, in order (the
        same registers are asked for again and again: the registers of one load)."""
        made = self.__dict__.setdefault("_touches_of", {})
        key = tuple(sorted(regs))
        got = made.get(key)
        if got is None:
            if len(key) == 1:
                got = touching.get(key[0], [])
            else:
                got = sorted(set().union(*(touching.get(r, ()) for r in key)))
            made[key] = got
        return got

    def _walk_index(self, sync: tuple[str, ...]) -> tuple[list[int], dict[str, list[int]], dict]:
        """For :meth:`_token_needed` (made once): the indices of the instructions that are waits,
        count on a counter or end the program, and per register the indices of those that read it
        (a barrier: with what it synchronises) or write it, each list in order; and the thresholds
        of each wait."""
        made = self.__dict__.get("_walk")
        if made is not None and made[0] == sync:
            return made[1:]
        steps: list[int] = []
        touching: dict[str, list[int]] = {}
        waits: dict[int, dict | None] = {}
        instrs = self.program.instrs
        # Only the registers an op in flight can hold are ever asked for: those held at a block's
        # entry, those an op of the program holds, and the stream markers.
        held: set[str] = set(_SYNC_OF.values())
        for st in self.block_in:
            held.update(key[0] for key in st._p)
        lds_free = self.block_in[0].lds_free if self.block_in else frozenset()
        for j, ins in enumerate(instrs):
            if ins.counters and not ins.opaque:
                for e in events(ins, j not in lds_free):
                    held.update(e.writes)
                    held.update(e.locks)
        get = touching.get
        for j, ins in enumerate(instrs):
            klass = ins.klass
            if klass == "waitcnt":
                waits[j] = wait_thresholds(ins)
                steps.append(j)
            elif (ins.counters and not ins.opaque) or klass == "endpgm" or ins.opcode in _ENDS_PROGRAM:
                steps.append(j)
            for r in (ins.uses if klass != "barrier" else reads_of(ins, sync)):
                if r in held:
                    at = get(r)
                    if at is None:
                        touching[r] = [j]
                    elif at[-1] != j:
                        at.append(j)
            for r in ins.defs:
                if r in held:
                    at = get(r)
                    if at is None:
                        touching[r] = [j]
                    elif at[-1] != j:  # listed once, read and written
                        at.append(j)
        self.__dict__["_walk"] = (sync, steps, touching, waits)
        return steps, touching, waits


_ENDS_PROGRAM = ("s_setpc_b64", "s_endpgm_saved", "s_trap")  # Instr.ends_program(), besides s_endpgm


def analyze(program, resolve: str = "zero", entry: CounterState | None = None) -> CounterAnalysis:
    """The fixed point of the counter states over ``program``'s CFG (all kernels).

    Kernel entries start with nothing in flight (or ``entry``). Hazards are listed
    once per (instruction, register, counter) with the loosest wait each needs.
    """
    cfg = program.cfg()
    blocks = cfg.blocks
    instrs = program.instrs
    nb = len(blocks)
    sync = WGP_MODE_SYNC if any(k.wgp_mode for k in program.kernels if k.descriptor) else CU_MODE_SYNC
    lds_free = lds_free_flat(program)
    if entry is not None:
        sync, lds_free = entry.sync, entry.lds_free
    block_out: list[CounterState | None] = [None] * nb
    block_in: list[CounterState] = [CounterState(sync=sync, lds_free=lds_free) for _ in range(nb)]
    block_hazards: list[list[Hazard]] = [[] for _ in range(nb)]
    block_before: list[dict[int, CounterState]] = [{} for _ in range(nb)]
    order = _reverse_postorder(cfg)
    position = {b: n for n, b in enumerate(order)}
    import heapq

    # Visits go in rounds, each in reverse postorder; a block reached over a retreating (back)
    # edge waits for the next round. Revisiting a loop header as soon as one of its latches
    # changed would merge all its predecessors once per latch: quadratic with many back edges.
    queued = {b: 0 for b in order}  # block -> the round it is queued for
    heap = [(0, position[b]) for b in order]
    heapq.heapify(heap)
    while heap:
        rnd, pos = heapq.heappop(heap)
        b = order[pos]
        if queued.get(b) != rnd:
            continue
        del queued[b]
        blk = blocks[b]
        st = (entry.copy() if entry is not None and not blk.preds else CounterState(sync=sync, lds_free=lds_free))
        for p in blk.preds:
            if block_out[p] is not None:
                st.merge(block_out[p])
        block_in[b] = st.copy()
        found: list[Hazard] = []
        before = {blk.first: block_in[b].copy()}
        for i in blk.indices():
            ins = instrs[i]
            klass = ins.klass
            if klass == "waitcnt":
                before[i] = st.copy()  # what WAIT001 asks state_before for
            elif not ins.counters and klass != "barrier" and ins.opcode not in CALLS:
                # no wait, no op that counts, no call: only a register in flight it touches matters
                if not st._p:
                    continue
                held = st.held_regs()
                if held.isdisjoint(ins.uses) and held.isdisjoint(ins.defs):
                    continue
            hz = st.step(ins, i, resolve)
            if hz:
                found.extend(_dedup_hazards(hz))
        # the last visit of a block starts from its final entry state: its hazards are the block's
        block_hazards[b] = found
        block_before[b] = before
        if block_out[b] is None or block_out[b] != st:
            block_out[b] = st
            for s in blk.succs:
                when = rnd + 1 if position[s] <= pos else rnd
                if queued.get(s, when + 1) > when:
                    queued[s] = when
                    heapq.heappush(heap, (when, position[s]))
    result = CounterAnalysis(program, block_in, resolve=resolve)
    result.hazards = [h for b in range(nb) for h in block_hazards[b]]
    for b, before in enumerate(block_before):
        if before:
            result._before[b] = before
            result._last[b] = max(before)
    return result


def _dedup_hazards(hz: list[Hazard]) -> list[Hazard]:
    best: dict[tuple, Hazard] = {}
    for h in hz:
        key = (h.reg, h.counter)
        if key not in best or h.k < best[key].k:
            best[key] = h
    return list(best.values())


def _reverse_postorder(cfg) -> list[int]:
    blocks = cfg.blocks
    seen: set[int] = set()
    post: list[int] = []
    roots = [b.id for b in blocks if not b.preds] or ([0] if blocks else [])
    for root in roots + [b.id for b in blocks]:
        if root in seen:
            continue
        stack = [(root, iter(blocks[root].succs))]
        seen.add(root)
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                post.append(node)
                stack.pop()
            elif nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, iter(blocks[nxt].succs)))
    return post[::-1]


# -- wait planning for rewrite passes -------------------------------------------------------------

class PlannedWait(FrozenRecord):
    position: int  # insert the wait before sequence[position]
    thresholds: dict  # {counter: n}, the loosest values that make the instruction safe
    hazards: tuple  # the Hazards the wait resolves

    __slots__ = _fields = ("position", "thresholds", "hazards")

    def __init__(self, position: int, thresholds: dict, hazards: tuple):
        setattr_ = object.__setattr__
        setattr_(self, "position", position)
        setattr_(self, "thresholds", thresholds)
        setattr_(self, "hazards", hazards)


def plan_waits(sequence: Sequence, state: CounterState | None = None, *, keep_existing: bool = True,
               counters: Iterable[str] | None = None) -> tuple[list[PlannedWait], CounterState]:
    """The waits a straight-line ``sequence`` of Instr needs, as late and as loose as possible.

    ``state`` is the state before the first instruction (default: nothing in flight).
    Existing ``s_waitcnt`` instructions in the sequence are honoured when
    ``keep_existing`` (else skipped, so the plan replaces them). ``counters``
    restricts the plan to those counters (the others must already be satisfied).
    Returns the planned waits and the state after the sequence.
    """
    st = state.copy() if state is not None else CounterState()
    only = set(counters) if counters is not None else None
    plan: list[PlannedWait] = []
    for pos, ins in enumerate(sequence):
        if ins.klass == "waitcnt":
            if keep_existing:
                thr = wait_thresholds(ins)
                if thr:
                    st.wait(thr)
            continue
        hz = st.check(ins, pos)
        if hz:
            need: dict[str, int] = {}
            for h in hz:
                if only is None or h.counter in only:
                    need[h.counter] = min(need.get(h.counter, CAP + 1), h.k)
            if need:
                plan.append(PlannedWait(pos, need, tuple(h for h in hz if h.counter in need)))
                st.wait(need)
        for e in events(ins):  # a rewritten sequence: a FLAT op may touch LDS (the safe side)
            st.issue(pos, e)
        if ins.opcode in CALLS:
            st.wait(_CALL_WAIT)
    return plan, st


def plan_loop_waits(body: Sequence, entry: CounterState | None = None, *, keep_existing: bool = False,
                    counters: Iterable[str] | None = None, max_rounds: int = 64) -> list[PlannedWait]:
    """The waits a loop body (straight-line, its back edge to the top) needs.

    The state at the top is the join of ``entry`` (from the preheader) and the state
    the body leaves at its back edge, iterated to a fixed point.
    """
    top = entry.copy() if entry is not None else CounterState()
    for _ in range(max_rounds):
        plan, out = plan_waits(body, top, keep_existing=keep_existing, counters=counters)
        # origins in the body are sequence positions; keep them distinct from entry origins
        nxt = top.copy()
        if not nxt.merge(out):
            return plan
        top = nxt
    return plan
