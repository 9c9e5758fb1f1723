"""Per-lane abstract interpretation of integer values (LDS and global addresses).

A :class:`Value` is ``uniform part + per-lane part``:

* ``lanes``: a tuple of Python ints, one 32-bit value per work-item of
  the analysed workgroup (work-item ``t`` is lane ``t % wave_size`` of wave
  ``t // wave_size``); ``None`` when the value cannot be evaluated, with the
  reason in ``reason``;
* ``terms``: a linear combination of symbols, each a wave-uniform runtime
  value (a kernel argument, a workgroup id, an SGPR computed from them, a loop
  induction offset ...). A uniform term shifts every lane of a wave by the
  same amount, so it never changes which LDS bank two lanes share.

Symbols carry what is known about them (bounds, known trailing zero bits) so
that the bit operations compilers emit for ``%`` and ``/`` on ``threadIdx +
blockIdx * tile`` (``and``, ``or``, ``lshr``, ``bfe``) can still be evaluated
when the uniform and per-lane bits do not overlap.

The evaluator works on demand: the value of a register before an instruction
is found by walking the CFG backwards to its reaching definitions and
evaluating them. Where paths join, values that differ only by a wave-uniform
amount merge into ``per-lane part + fresh uniform symbol``; at a loop header a
register whose back-edge value is ``itself + uniform increment`` becomes
``value on entry + uniform induction symbol``; anything else becomes unknown.

API: ``LaneEvaluator(program, kernel=None, layout=None)`` with
``.value(reg, index) -> Value`` (the register just before instruction
``index``) and ``.lds_access(instr) -> LdsAccess | Value | None`` (per-lane
byte addresses of a DS load/store, or the unknown Value saying why not);
``evaluator_for(analysis, index)`` caches one evaluator per kernel;
``thread_layout(kernel, override)`` picks the work-items; ``lds_banks(kernel)``
gives the banks its waves see (the bank arithmetic is :mod:`isalint.hw.lds_banks`);
``reaching_defs`` and ``valu_slice`` are the CFG walks GMEM001 shares.

Assumptions (stated in the LDS001 documentation): every lane is active (exec
masks are not tracked); workgroup ids are below 2**24; without
``.reqd_workgroup_size`` a kernel that uses ``threadIdx.y``/``z`` is analysed
for wave 0 only, with ``x`` spanning the whole wave and ``y``/``z`` uniform.
"""
from __future__ import annotations

import operator
import re
import struct
from bisect import bisect_left
from dataclasses import dataclass

from ..hw.lds_banks import bank_count

MASK = 0xFFFFFFFF
WORKGROUP_ID_LIMIT = 1 << 24

# ---------------------------------------------------------------------------
# Values


@dataclass(frozen=True, eq=False)
class Value:
    lanes: tuple[int, ...] | None
    terms: tuple[tuple[str, int], ...] = ()
    reason: str | None = None

    @property
    def known(self) -> bool:
        return self.lanes is not None

    @property
    def concrete(self) -> bool:
        """Known exactly, with no symbolic part."""
        return self.lanes is not None and not self.terms

    def same(self, other: Value) -> bool:
        if not self.known or not other.known:
            return False
        return self.terms == other.terms and self.lanes == other.lanes

    def term_dict(self) -> dict[str, int]:
        return dict(self.terms)


def _terms(d: dict[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted((k, v) for k, v in d.items() if v != 0))


def unknown(reason: str) -> Value:
    return Value(None, (), reason)


@dataclass
class Symbol:
    name: str
    lo: int = 0
    hi: int = MASK
    tz: int = 0  # known trailing zero bits
    varying: bool = False  # a placeholder for a per-lane value (loop header in progress)


def _v2(n: int) -> int:
    if n == 0:
        return 64
    return (n & -n).bit_length() - 1


# ---------------------------------------------------------------------------
# LDS accesses

_DS = re.compile(r"^ds_(load|store|read|write)(_2addr)?(_stride64)?_([bui])(8|16|32|64|96|128)(_d16(_hi)?)?$")


@dataclass
class LdsAccess:
    """The per-lane byte addresses of one DS instruction.

    ``addresses`` holds one tuple of per-lane byte addresses per address the instruction issues (two for
    the ``2addr`` forms), each already including its offset; ``width`` is the
    bytes per lane per address.
    """

    index: int
    mnemonic: str
    kind: str  # load | store
    width: int
    addresses: list[tuple[int, ...]]
    terms: tuple[tuple[str, int], ...]
    reg: str
    offsets: tuple[int, ...]


def ds_shape(mnemonic: str) -> tuple[str, int, int, bool] | None:
    """(load|store, bytes per address, number of addresses, stride64) of a DS
    load/store mnemonic, or None for other DS instructions."""
    m = _DS.match(_base_mnemonic(mnemonic))
    if not m:
        return None
    kind = "load" if m.group(1) in ("load", "read") else "store"
    return kind, int(m.group(5)) // 8, 2 if m.group(2) else 1, bool(m.group(3))


# ---------------------------------------------------------------------------
# Reaching definitions and VALU slices (shared with GMEM001)


def reaching_defs(program, index: int, reg: str, blocks: set[int] | None = None,
                  stop_header: int | None = None) -> list[int]:
    """Indices of the instructions whose write of ``reg`` reaches instruction
    ``index``; ``-1`` stands for "live on entry" (the kernel entry, a block
    outside ``blocks``, or the entry of ``stop_header``: the search does not
    follow that block's predecessors, i.e. does not go around a loop)."""
    cfg = program.cfg()
    bdefs = _block_defs(program)
    b = cfg.block_of[index]
    idx = bdefs[b].get(reg)
    if idx:
        k = bisect_left(idx, index)
        if k:
            return [idx[k - 1]]
    out: list[int] = []
    seen: set[int] = set()
    stack = [b]
    while stack:
        x = stack.pop()
        if x == stop_header or not cfg.blocks[x].preds:
            out.append(-1)
            continue
        for p in cfg.blocks[x].preds:
            if p in seen:
                continue
            seen.add(p)
            if blocks is not None and p not in blocks:
                out.append(-1)
                continue
            idx = bdefs[p].get(reg)
            if idx:
                out.append(idx[-1])
            else:
                stack.append(p)
    return sorted(set(out))


def _block_defs(program) -> list[dict[str, list[int]]]:
    """Per CFG block: register -> indices of the block's instructions writing
    it, ascending (cached on the program)."""
    cached = program.__dict__.get("_lanes_block_defs")
    if cached is not None:
        return cached
    instrs = program.instrs
    out: list[dict[str, list[int]]] = []
    for blk in program.cfg().blocks:
        d: dict[str, list[int]] = {}
        for i in range(blk.first, blk.last):
            for r in instrs[i].defs:
                d.setdefault(r, []).append(i)
        out.append(d)
    program.__dict__["_lanes_block_defs"] = out
    return out


def valu_slice(program, index: int, regs: list[str], blocks: set[int] | None = None,
               stop_header: int | None = None) -> set[int]:
    """The VALU instructions (VOP and VOPD) whose results flow into ``regs``
    as read by instruction ``index``, following reaching definitions inside
    ``blocks`` and not around ``stop_header``'s back edges. The walk stops at
    anything that is not VALU (SALU, memory, kernel entry)."""
    out: set[int] = set()
    work = [(index, r) for r in regs]
    seen: set[tuple[int, str]] = set()
    instrs = program.instrs
    while work:
        at, reg = work.pop()
        if (at, reg) in seen:
            continue
        seen.add((at, reg))
        for d in reaching_defs(program, at, reg, blocks, stop_header):
            if d < 0 or d in out:
                continue
            ins = instrs[d]
            if ins.klass not in ("valu", "vopd", "trans"):
                continue
            out.add(d)
            for u in ins.uses:
                if u.startswith("exec"):
                    continue
                work.append((d, u))
    return out


# ---------------------------------------------------------------------------
# The evaluator

_SUFFIX = re.compile(r"_(e32|e64|sdwa|dpp|e64_dpp)$")
_CROSS_LANE_MODS = ("quad_perm", "row_shl", "row_shr", "row_ror", "row_mirror", "row_half_mirror", "row_bcast",
                    "row_share", "row_xmask", "wave_shl", "wave_shr", "wave_rol", "wave_ror", "dpp8", "dpp")


def _base_mnemonic(m: str) -> str:
    m = m.lower()
    if m.startswith("v_dual_"):
        m = "v_" + m[len("v_dual_"):]
    return _SUFFIX.sub("", m)


@dataclass
class ThreadLayout:
    threads: int
    wave_size: int
    x: tuple[int, ...]
    y: tuple[int, ...] | None  # None: uniform and symbolic
    z: tuple[int, ...] | None
    note: str

    @property
    def waves(self) -> int:
        return max(1, self.threads // self.wave_size)

    @property
    def lane(self) -> tuple[int, ...]:
        """The lane index of each work-item."""
        lane = self.__dict__.get("_lane")
        if lane is None:
            lane = self.__dict__["_lane"] = tuple(t % self.wave_size for t in range(self.threads))
        return lane


def thread_layout(kernel, override: tuple[int, int, int] | None = None) -> ThreadLayout:
    """Which work-items the evaluator models, from the kernel metadata.

    With ``.reqd_workgroup_size`` (or ``override``) the whole workgroup; else
    ``.max_flat_workgroup_size`` work-items along x when the kernel only uses
    ``threadIdx.x``; else (no metadata, or y/z used with an unknown shape)
    wave 0 only.
    """
    ws = kernel.wave_size if kernel is not None else 32
    meta = (kernel.metadata or {}) if kernel is not None else {}
    dims = override or meta.get(".reqd_workgroup_size")
    workitem = (kernel.descriptor.get(".amdhsa_system_vgpr_workitem_id", 0) if kernel is not None else 0)
    if dims and len(dims) == 3 and all(isinstance(d, int) and d > 0 for d in dims):
        bx, by, bz = dims
        t = min(bx * by * bz, 1024)
        x = tuple(i % bx for i in range(t))
        y = tuple((i // bx) % by for i in range(t))
        z = tuple(i // (bx * by) for i in range(t))
        return ThreadLayout(t, ws, x, y, z, f"workgroup {bx}x{by}x{bz}")
    flat = meta.get(".max_flat_workgroup_size")
    if workitem == 0 and isinstance(flat, int) and flat > 0:
        t = max(ws, min(flat, 1024))
        return ThreadLayout(t, ws, tuple(range(t)), (0,) * t, (0,) * t,
                            f"{t} work-items along x")
    x = tuple(range(ws))
    if workitem == 0:
        return ThreadLayout(ws, ws, x, (0,) * ws, (0,) * ws, "wave 0")
    return ThreadLayout(ws, ws, x, None, None, "wave 0, threadIdx.y/z taken as uniform")


class LaneEvaluator:
    """Evaluates registers per lane for one kernel of an analysed program."""

    def __init__(self, program, kernel=None, layout: ThreadLayout | None = None):
        self.program = program
        self.kernel = kernel if kernel is not None else (program.kernels[0] if program.kernels else None)
        self.layout = layout or thread_layout(self.kernel)
        self.cfg = program.cfg()
        self.n = self.layout.threads
        self.ws = self.layout.wave_size
        self.symbols: dict[str, Symbol] = {}
        self._consts: dict[int, tuple[int, ...]] = {}
        self._def_memo: dict[int, dict[str, Value]] = {}
        self._entry_memo: dict[tuple[int, str], Value] = {}
        self._temp: dict[tuple, object] = {}
        self._progress: dict[tuple[int, str], str] = {}  # loop headers being evaluated -> placeholder
        self._visits: dict[tuple[int, str], int] = {}
        self._headers = {lp.header for lp in self.cfg.loops}
        self._enclosing: dict[int, list[int]] = {}
        for lp in self.cfg.loops:
            outer = []
            q = lp.parent
            while q is not None:
                outer.append(q.header)
                q = q.parent
            self._enclosing[lp.header] = outer[::-1]
        self._entry_block = self.cfg.block_of[self.kernel.first] if self.kernel is not None and \
            self.kernel.first < len(program.instrs) else 0
        self._entry_sgprs = self._system_sgprs()
        self._slot_defs = self._scratch_slots()
        self._block_defs = self._defs_by_block()

    def _scratch_slots(self) -> dict[int, list[str]]:
        """Spill slots as pseudo registers ``scratch:OFFSET`` (one per dword):
        a scratch access with neither VGPR nor SGPR address is a fixed,
        per-lane private slot, so a reload reads what the last spill wrote.
        A scratch store with a computed address may write any slot."""
        out: dict[int, list[str]] = {}
        for ins in self.program.instrs:
            if ins.klass != "scratch_store" or ins.opaque:
                continue
            const = self._scratch_offset(ins)
            if const is None:
                out[ins.index] = ["scratch:*"]
                continue
            data = next((sl for sl in ins.slots[0] if sl.name.startswith("data")), None)
            n = len(data.regs) if data is not None else 1
            out[ins.index] = [f"scratch:{const + 4 * j}" for j in range(n)]
        return out

    def _defs_by_block(self) -> list[dict[str, list[int]]]:
        """Per block: register (or scratch slot) -> the indices writing it, ascending."""
        out = [dict(d) for d in _block_defs(self.program)]
        for i, slots in sorted(self._slot_defs.items()):
            d = out[self.cfg.block_of[i]]
            for r in slots:
                d.setdefault(r, []).append(i)
        return out

    def _last_write(self, b: int, reg: str, before: int) -> int:
        """The last instruction of block ``b`` before index ``before`` that
        writes ``reg`` (a store with a computed address writes every scratch
        slot), or -1."""
        d = self._block_defs[b]
        found = -1
        idx = d.get(reg)
        if idx:
            k = bisect_left(idx, before)
            if k:
                found = idx[k - 1]
        if reg.startswith("scratch:"):
            idx = d.get("scratch:*")
            if idx:
                k = bisect_left(idx, before)
                if k:
                    found = max(found, idx[k - 1])
        return found

    @staticmethod
    def _scratch_offset(ins) -> int | None:
        slots = ins.slots[0]
        if any(sl.name in ("addr", "vaddr", "saddr") and sl.operand.kind != "off" for sl in slots):
            return None
        mod = ins.stmts[0].modifier("offset")
        return (mod.int_value() or 0) if mod is not None else 0

    # -- construction helpers -------------------------------------------------
    def const(self, c: int) -> Value:
        return Value(self._lanes_const(c))

    def _lanes_const(self, c: int) -> tuple[int, ...]:
        c &= MASK
        lanes = self._consts.get(c)
        if lanes is None:
            lanes = self._consts[c] = (c,) * self.n
        return lanes

    def symbol(self, name: str, lo: int = 0, hi: int = MASK, tz: int = 0, varying: bool = False) -> Value:
        if name not in self.symbols:
            self.symbols[name] = Symbol(name, lo, hi, tz, varying)
        return Value(self._lanes_const(0), ((name, 1),))

    def _system_sgprs(self) -> dict[str, tuple[str, int]]:
        k = self.kernel
        if k is None or not k.descriptor:
            return {}
        d = k.descriptor
        n = d.get(".amdhsa_user_sgpr_count", 0)
        out = {}
        for axis in "xyz":
            if d.get(f".amdhsa_system_sgpr_workgroup_id_{axis}", 1 if axis == "x" else 0):
                out[f"s{n}"] = (f"workgroup_id_{axis}", WORKGROUP_ID_LIMIT - 1)
                n += 1
        return out

    # -- symbolic facts --------------------------------------------------------
    def bounds(self, terms) -> tuple[int, int]:
        lo = hi = 0
        for name, c in terms:
            s = self.symbols[name]
            a, b = c * s.lo, c * s.hi
            lo += min(a, b)
            hi += max(a, b)
        return lo, hi

    def tz(self, terms) -> int:
        if not terms:
            return 64
        return min(_v2(c) + self.symbols[name].tz for name, c in terms)

    def varying(self, v: Value) -> bool:
        return any(self.symbols[name].varying for name, _ in v.terms)

    def wave_uniform(self, v: Value) -> bool:
        """Same value in every lane of each wave."""
        if not v.known or self.varying(v):
            return False
        lanes, ws = v.lanes, self.ws
        if self.n % ws:
            return lanes.count(lanes[0]) == len(lanes)
        for lo in range(0, self.n, ws):
            if lanes[lo:lo + ws].count(lanes[lo]) != ws:
                return False
        return True

    def uniform_everywhere(self, v: Value) -> int | None:
        """The constant when ``v`` is the same number in every work-item."""
        if not v.concrete:
            return None
        lanes = v.lanes
        first = lanes[0]
        return first if lanes.count(first) == len(lanes) else None

    def fresh(self, name: str, lo: int = 0, hi: int = MASK, tz: int = 0) -> Value:
        """A new wave-uniform symbol (deterministic name: re-evaluation reuses it)."""
        if lo == hi:
            return self.const(lo)
        if name not in self.symbols:
            self.symbols[name] = Symbol(name, max(lo, -(1 << 40)), min(hi, 1 << 40), min(tz, 32))
        return Value(self._lanes_const(0), ((name, 1),))

    def _split(self, v: Value) -> int | None:
        """``k`` such that v = S + L with S a multiple of 2**k in [0, 2**32) and
        every lane's L below 2**k (so the bits do not overlap), else None."""
        if self.varying(v):
            return None
        k = min(self.tz(v.terms), 32)
        if v.terms:
            lo, hi = self.bounds(v.terms)
            if lo < 0 or hi > MASK:
                return None
        if k >= 32:
            return 32
        if max(v.lanes) >= (1 << k):
            return None
        return k

    # -- arithmetic --------------------------------------------------------------
    def add(self, a: Value, b: Value) -> Value:
        if not a.known:
            return a
        if not b.known:
            return b
        d = a.term_dict()
        for k, c in b.terms:
            d[k] = d.get(k, 0) + c
        return Value(tuple([(x + y) & MASK for x, y in zip(a.lanes, b.lanes)]), _terms(d))

    def neg(self, a: Value) -> Value:
        if not a.known:
            return a
        return Value(tuple([-x & MASK for x in a.lanes]), tuple((k, -c) for k, c in a.terms))

    def sub(self, a: Value, b: Value) -> Value:
        return self.add(a, self.neg(b))

    def mul(self, a: Value, b: Value, what: str = "") -> Value:
        if not a.known:
            return a
        if not b.known:
            return b
        if a.concrete and b.concrete:
            return Value(tuple([(x * y) & MASK for x, y in zip(a.lanes, b.lanes)]))
        ca, cb = self.uniform_everywhere(a), self.uniform_everywhere(b)
        if ca is not None or cb is not None:
            c, v = (ca, b) if ca is not None else (cb, a)
            sc = c if c < (1 << 31) else c - (1 << 32)
            return Value(tuple([(x * c) & MASK for x in v.lanes]), _terms({k: x * sc for k, x in v.terms}))
        if self.wave_uniform(a) and self.wave_uniform(b):
            return self.fresh(what or "product")
        return unknown(f"{what or 'a product'} multiplies a per-lane value by a runtime uniform value")

    def shl(self, a: Value, n: Value, what: str = "") -> Value:
        c = self.uniform_everywhere(n)
        if not a.known:
            return a
        if c is not None:
            return self.mul(a, self.const(1 << (c & 31)), what)
        if a.concrete and n.concrete:
            return Value(tuple([(x << (y & 31)) & MASK for x, y in zip(a.lanes, n.lanes)]))
        return self._fallback(what, a, n)

    def lshr(self, a: Value, n: Value, what: str = "") -> Value:
        c = self.uniform_everywhere(n)
        if not a.known:
            return a
        if a.concrete and n.known and n.concrete:
            return Value(tuple([x >> (y & 31) for x, y in zip(a.lanes, n.lanes)]))
        if c is None:
            return self._fallback(what, a, n)
        c &= 31
        k = self._split(a)
        if k is None:
            return self._fallback(what, a, n)
        lo, hi = self.bounds(a.terms)
        if all(x % (1 << c) == 0 for _, x in a.terms) and c <= k:
            terms = tuple((name, x >> c) for name, x in a.terms)
        else:
            sym = self.fresh(f"({what})>>{c}" if what else f"uniform>>{c}", lo >> c, hi >> c, max(0, self.tz(a.terms) - c))
            terms = sym.terms
        low = tuple([x >> c for x in a.lanes]) if c <= k else self._lanes_const(0)
        return Value(low, terms)

    def ashr(self, a: Value, n: Value, what: str = "") -> Value:
        if not a.known:
            return a
        if a.concrete and n.known and n.concrete:
            return Value(tuple([((x - (1 << 32) if x >> 31 else x) >> (y & 31)) & MASK
                                for x, y in zip(a.lanes, n.lanes)]))
        k = self._split(a)
        if k is not None:
            lo, hi = self.bounds(a.terms)
            if hi + max(a.lanes) < (1 << 31):
                return self.lshr(a, n, what)
        return self._fallback(what, a, n)

    def band(self, a: Value, b: Value, what: str = "") -> Value:
        if not a.known:
            return a
        if not b.known:
            return b
        if a.concrete and b.concrete:
            return Value(tuple([x & y for x, y in zip(a.lanes, b.lanes)]))
        if a.concrete:
            a, b = b, a
        if b.concrete:  # a has terms, b is a per-lane mask
            k = self._split(a)
            if k is not None:
                lo, hi = self.bounds(a.terms)
                nb = max(hi.bit_length(), k)
                need = ((1 << nb) - 1) & ~((1 << k) - 1)
                low_mask = (1 << k) - 1
                low = tuple([x & y & low_mask for x, y in zip(a.lanes, b.lanes)])
                if all(y & need == need for y in b.lanes):
                    return Value(low, a.terms)
                if all(y & need == 0 for y in b.lanes):
                    return Value(low)
                if self.uniform_everywhere(b) is not None:
                    # S & mask depends on S only: still one value per wave
                    sym = self.fresh(f"({what})&{b.lanes[0]:#x}", 0, min(hi, b.lanes[0]), k)
                    return Value(low, sym.terms)
        return self._fallback(what, a, b)

    def bor(self, a: Value, b: Value, what: str = "", op=operator.or_) -> Value:
        if not a.known:
            return a
        if not b.known:
            return b
        if a.concrete and b.concrete:
            return Value(tuple(map(op, a.lanes, b.lanes)))
        if a.concrete:
            a, b = b, a
        if b.concrete:
            k = self._split(a)
            if k is not None and max(b.lanes) < (1 << k):
                return Value(tuple(map(op, a.lanes, b.lanes)), a.terms)
        return self._fallback(what, a, b)

    def bxor(self, a: Value, b: Value, what: str = "") -> Value:
        return self.bor(a, b, what, operator.xor)

    def bfe(self, a: Value, off: Value, width: Value, signed: bool, what: str = "") -> Value:
        o, w = self.uniform_everywhere(off), self.uniform_everywhere(width)
        if o is None or w is None:
            if a.concrete and off.concrete and width.concrete:
                return Value(tuple([self._bfe_int(x, p & 31, q & 31, signed)
                                    for x, p, q in zip(a.lanes, off.lanes, width.lanes)]))
            return self._fallback(what, a, off, width)
        return self._bfe_const(a, o & 31, w & 31, signed, what)

    @staticmethod
    def _bfe_int(x: int, o: int, w: int, signed: bool) -> int:
        if w == 0:
            return 0
        v = (x >> o) & ((1 << w) - 1)
        if signed and v >> (w - 1):
            v -= 1 << w
        return v & MASK

    def _bfe_const(self, a: Value, o: int, w: int, signed: bool, what: str) -> Value:
        if w == 0:
            return self.const(0)
        if a.concrete:
            if signed:
                return Value(tuple([self._bfe_int(x, o, w, True) for x in a.lanes]))
            field = (1 << w) - 1
            return Value(tuple([(x >> o) & field for x in a.lanes]))
        u = self.band(self.lshr(a, self.const(o), what), self.const((1 << w) - 1), what)
        if not signed or not u.known:
            return u
        if u.concrete:
            return Value(tuple([self._bfe_int(x, 0, w, True) for x in u.lanes]))
        lo, hi = self.bounds(u.terms)
        if lo >= 0 and hi + max(u.lanes) < (1 << (w - 1)):
            return u
        return self._fallback(what, a)

    def select(self, mask: Value, f: Value, t: Value, what: str = "") -> Value | None:
        """``t`` where the lane's bit of ``mask`` is set, else ``f``; None when
        the mask is not known."""
        if not mask.concrete:
            return None
        if not f.known:
            return f
        if not t.known:
            return t
        bits = [(m >> ln) & 1 for m, ln in zip(mask.lanes, self.layout.lane)]
        if f.terms != t.terms:
            if all(bits):
                return t
            if not any(bits):
                return f
            return unknown(f"{what} selects per lane between different uniform values")
        return Value(tuple([y if c else x for c, x, y in zip(bits, f.lanes, t.lanes)]), t.terms)

    def _fallback(self, what: str, *vals: Value) -> Value:
        for v in vals:
            if not v.known:
                return v
        if all(self.wave_uniform(v) for v in vals):
            return self.fresh(what or "uniform")
        return unknown(f"{what} mixes per-lane and runtime-uniform bits in a way isalint does not model")

    # -- registers -----------------------------------------------------------------
    def value(self, reg: str, index: int) -> Value:
        """The value of ``reg`` just before instruction ``index`` executes."""
        import sys

        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 20000))
        try:
            return self._value(reg, index)
        except RecursionError:
            return unknown(f"{reg} depends on a longer chain of instructions than isalint follows")
        finally:
            sys.setrecursionlimit(limit)

    def _value(self, reg: str, index: int) -> Value:
        b = self.cfg.block_of[index]
        i = self._last_write(b, reg, index)
        if i >= 0:
            return self._def_value(i, reg)
        return self._entry_value(b, reg)

    def _exit_value(self, b: int, reg: str) -> Value:
        i = self._last_write(b, reg, self.cfg.blocks[b].last)
        if i >= 0:
            return self._def_value(i, reg)
        return self._entry_value(b, reg)

    def _kernel_entry(self, reg: str) -> Value:
        if reg == "v0":
            lay = self.layout
            terms = {}
            packed = lay.x
            if lay.y is not None:
                packed = tuple([x | (y << 10) | (z << 20) for x, y, z in zip(lay.x, lay.y, lay.z)])
            else:
                self.symbol("threadIdx.y", 0, 1023, 0)
                self.symbol("threadIdx.z", 0, 1023, 0)
                terms = {"threadIdx.y": 1 << 10, "threadIdx.z": 1 << 20}
            return Value(packed, _terms(terms))
        if reg.startswith("v") or reg.startswith("scratch:"):
            return unknown(f"{reg} is read before the kernel writes it")
        if reg == "exec_lo":
            return self.const(MASK)
        if reg == "exec_hi":
            return self.const(0 if self.ws == 32 else MASK)
        if reg in self._entry_sgprs:
            name, hi = self._entry_sgprs[reg]
            return self.symbol(name, 0, hi, 0)
        return self.symbol(f"{reg}@entry")

    def _entry_value(self, b: int, reg: str) -> Value:
        key = (b, reg)
        if key in self._entry_memo:
            return self._entry_memo[key]
        blk = self.cfg.blocks[b]
        preds = [p for p in blk.preds if self._in_kernel(p)]
        if b == self._entry_block or not preds:
            v = self._kernel_entry(reg) if b == self._entry_block else unknown(
                f"{reg} at unreachable block {blk.label or b}")
            self._entry_memo[key] = v
            return v
        header = b in self._headers
        if key in self._progress:
            # only a loop header closes a cycle: every cycle of a reducible CFG passes through one
            return Value(self._lanes_const(0), ((self._progress[key], 1),))
        if not header and self._visits.get(key, 0) > len(self._headers) + 1:
            return unknown(f"{reg}: irreducible control flow at {blk.label or b}")
        tkey = ("e", key, frozenset(self._progress))
        if tkey in self._temp:
            return self._temp[tkey]  # type: ignore[return-value]
        if header:
            # Solve enclosing loops first (outside in), so that a cycle through
            # this header and an outer one closes at the outer header.
            for outer in self._enclosing.get(b, ()):
                if (outer, reg) not in self._progress and (outer, reg) not in self._entry_memo:
                    self._entry_value(outer, reg)
            if key in self._entry_memo:
                return self._entry_memo[key]
            if tkey in self._temp:
                return self._temp[tkey]  # type: ignore[return-value]
        ph = f"%{reg}@B{b}"
        if header:
            self.symbols.setdefault(ph, Symbol(ph, 0, MASK, 0, varying=True))
            self._progress[key] = ph
        else:
            self._visits[key] = self._visits.get(key, 0) + 1
        try:
            vals = [self._exit_value(p, reg) for p in preds]
        finally:
            if header:
                del self._progress[key]
            else:
                self._visits[key] -= 1
        v = self._merge(reg, b, vals, ph)
        if reg.startswith("s") and not v.known:
            v = self.fresh(f"{reg}@{blk.label or 'B%d' % b}")
        if not self.varying(v):
            self._entry_memo[key] = v
        else:
            self._temp[tkey] = v
        return v

    def _in_kernel(self, b: int) -> bool:
        if self.kernel is None:
            return True
        first = self.cfg.blocks[b].first
        return self.kernel.first <= first < self.kernel.last

    def _merge(self, reg: str, b: int, vals: list[Value], ph: str) -> Value:
        label = self.cfg.blocks[b].label or f"B{b}"
        init = [v for v in vals if not any(n == ph for n, _ in v.terms)]
        back = [v for v in vals if any(n == ph for n, _ in v.terms)]
        for v in vals:
            if not v.known:
                return v
        induction = False
        step_tz = 64
        for v in back:
            d = v.term_dict()
            if d.get(ph) != 1:
                return unknown(f"{reg} changes per lane from one iteration to the next of the loop at {label}")
            del d[ph]
            rest = Value(v.lanes, _terms(d))
            if self.varying(rest) or not self.wave_uniform(rest):
                return unknown(f"{reg} changes per lane from one iteration to the next of the loop at {label}")
            if rest.terms or any(rest.lanes):
                induction = True
                step_tz = min(step_tz, self.tz(rest.terms), *(_v2(x) for x in set(rest.lanes)))
        if not init:
            return unknown(f"{reg} has no value on entry to {label}")
        base = init[0]
        if all(v.same(base) for v in init[1:]):
            merged = base
        else:
            # value = base + phi, phi = (the path's value - base): wave-uniform on every path
            lo = hi = 0
            tzs = []
            for v in init[1:]:
                diff = self.sub(v, base)
                if self.varying(diff) or not self.wave_uniform(diff):
                    return unknown(f"{reg} holds different per-lane values on the paths into {label}")
                distinct = set(diff.lanes)
                signed = [x - (1 << 32) if x >> 31 else x for x in distinct]
                dlo, dhi = self.bounds(diff.terms)
                lo, hi = min(lo, dlo + min(signed)), max(hi, dhi + max(signed))
                tzs.append(min(self.tz(diff.terms), *(_v2(x) for x in distinct)))
            merged = self.add(base, self.fresh(f"phi({reg}@{label})", lo, hi, min(tzs)))
        if induction:
            merged = self.add(merged, self.fresh(f"iter({reg}@{label})", -(1 << 40), 1 << 40, step_tz))
        return merged

    def _def_value(self, i: int, reg: str) -> Value:
        memo = self._def_memo.get(i)
        if memo is not None and reg in memo:
            return memo[reg]
        tkey = ("d", i, frozenset(self._progress))
        tm = self._temp.get(tkey)
        if tm is not None and reg in tm:  # type: ignore[operator]
            return tm[reg]  # type: ignore[index]
        ins = self.program.instrs[i]
        results = self._evaluate(ins)
        out = {}
        for r in list(ins.defs) + self._slot_defs.get(i, []):
            v = results.get(r)
            if v is None:
                v = unknown(f"{r} is written by '{ins.text()}' (line {ins.lineno}), which isalint does not evaluate")
            if r.startswith("s") and not r.startswith("scc") and not v.known:
                v = self.fresh(f"{r}@L{ins.lineno}")
            out[r] = v
        if any(self.varying(v) for v in out.values() if v.known):
            self._temp[tkey] = out
        else:
            self._def_memo[i] = out
        return out[reg]

    # -- instruction semantics --------------------------------------------------------
    def _operand(self, ins, slot, part: int = 0) -> Value:
        op = slot.operand
        if op.kind == "int":
            return self.const(int(op.value) >> (32 * part))
        if op.kind == "float":
            if part:
                return self.const(0)
            return self.const(struct.unpack("<I", struct.pack("<f", float(op.value)))[0])
        if op.kind == "special" and op.file == "null":
            return self.const(0)
        if op.neg or op.abs or op.half:
            return unknown(f"operand '{op.text}' at line {ins.lineno} has a modifier")
        regs = slot.regs
        if part >= len(regs):
            return self.const(0) if op.kind in ("int",) else unknown(f"operand '{op.text}' has no part {part}")
        return self._value(regs[part], ins.index)

    def _evaluate(self, ins) -> dict[str, Value]:
        if ins.opaque:
            return {}
        if ins.klass == "scratch_store":
            slots = self._slot_defs.get(ins.index, [])
            data = next((sl for sl in ins.slots[0] if sl.name.startswith("data")), None)
            if data is None or slots == ["scratch:*"]:
                return {}
            return {slot: self._value(r, ins.index) for slot, r in zip(slots, data.regs)}
        if ins.klass == "scratch_load":
            const = self._scratch_offset(ins)
            dst = [r for sl in ins.slots[0] if sl.role == "def" for r in sl.regs]
            if const is None or ins.opcode.rstrip("0123456789").endswith(("_u", "_i", "_d16_hi_b", "_d16_b")):
                return {r: unknown(f"{r} is loaded from scratch at line {ins.lineno}") for r in dst}
            return {r: self._value(f"scratch:{const + 4 * j}", ins.index) for j, r in enumerate(dst)}
        if ins.klass in ("lds", "vmem_load", "vmem_atomic", "scratch_load"):
            return {r: unknown(f"{r} is loaded from memory at line {ins.lineno}") for r in ins.defs
                    if r.startswith("v")}
        if ins.klass == "smem":
            return {r: self.fresh(f"{r}@L{ins.lineno}") for r in ins.defs}
        out: dict[str, Value] = {}
        for si, stmt in enumerate(ins.stmts):
            slots = ins.slots[si]
            out.update(self._statement(ins, stmt, slots))
        return out

    def _statement(self, ins, stmt, slots) -> dict[str, Value]:
        m = _base_mnemonic(stmt.mnemonic)
        defs = [s for s in slots if s.role in ("def", "defuse") and s.regs]
        srcs = [s for s in slots if s.role == "use"]
        what = f"'{stmt.mnemonic}' at line {ins.lineno}"
        if any(mod.name in _CROSS_LANE_MODS for mod in stmt.modifiers):
            return {r: unknown(f"{what} reads other lanes (DPP)") for d in defs for r in d.regs}
        dst = [r for d in defs for r in d.regs]
        if not dst and m.startswith("v_cmp_") and not m.startswith("v_cmpx"):
            dst = [r for r in ins.defs if r.startswith("vcc")][:1]
        if not dst:
            return {}

        def src(n: int, part: int = 0) -> Value:
            if n >= len(srcs):
                return unknown(f"{what} has no operand {n}")
            return self._operand(ins, srcs[n], part)

        res = self._semantics(m, src, srcs, what, ins, defs)
        if res is None:
            if m.startswith("s_"):
                return {r: self.fresh(f"{r}@L{ins.lineno}") for r in dst}
            vals = [src(k) for k in range(len(srcs))]
            if all(self.wave_uniform(v) for v in vals) and m.startswith("v_") and not m.startswith("v_cmp"):
                return {r: self.fresh(f"{r}@L{ins.lineno}") for r in dst}
            bad = next((v for v in vals if not v.known), None)
            reason = bad.reason if bad is not None else f"{what} is not an integer operation isalint evaluates"
            return {r: unknown(reason) for r in dst}
        if isinstance(res, Value):
            return {dst[0]: res}
        return {r: v for r, v in zip(dst, res) if v is not None}

    def _semantics(self, m: str, src, srcs, what: str, ins, defs):  # noqa: C901 - one table of opcodes
        # 32-bit moves and arithmetic (VALU and SALU alike; shifts take the amount first in *rev forms)
        if m in ("v_mov_b32", "s_mov_b32", "s_movk_i32", "v_mov_b16"):
            return src(0)
        if m in ("s_mov_b64", "v_mov_b64", "s_cmov_b32"):
            if m == "s_cmov_b32":
                return None
            return [src(0, 0), src(0, 1)]
        if m == "v_readfirstlane_b32":
            v = src(0)
            if v.known and not self.varying(v) and self.n % self.ws == 0:
                ws = self.ws
                return Value(tuple([v.lanes[t - t % ws] for t in range(self.n)]), v.terms)
            return None
        if m in ("v_add_nc_u32", "v_add_u32", "v_add_nc_i32", "s_add_u32", "s_add_i32"):
            return self.add(src(0), src(1))
        if m in ("v_sub_nc_u32", "v_sub_u32", "v_sub_nc_i32", "s_sub_u32", "s_sub_i32"):
            return self.sub(src(0), src(1))
        if m in ("v_subrev_nc_u32", "v_subrev_u32"):
            return self.sub(src(1), src(0))
        if m in ("s_addk_i32",):
            return self.add(self._value(defs[0].regs[0], ins.index), self._simm16(src(0)))
        if m in ("s_mulk_i32",):
            return self.mul(self._value(defs[0].regs[0], ins.index), self._simm16(src(0)), what)
        if m in ("v_mul_lo_u32", "s_mul_i32", "v_mul_lo_i32"):
            return self.mul(src(0), src(1), what)
        if m in ("v_mul_u32_u24", "v_mul_i32_i24"):
            return self.mul(self._u24(src(0), what), self._u24(src(1), what), what)
        if m in ("v_mad_u32_u24", "v_mad_i32_i24"):
            return self.add(self.mul(self._u24(src(0), what), self._u24(src(1), what), what), src(2))
        if m in ("v_mad_u64_u32", "v_mad_i64_i32"):
            lo = self.add(self.mul(src(0), src(1), what), src(2, 0))
            a, b, c0, c1 = src(0), src(1), src(2, 0), src(2, 1)
            hi: Value | None = None
            if all(v.concrete for v in (a, b, c0, c1)) and m == "v_mad_u64_u32":
                hi = Value(tuple([((x * y + (p | q << 32)) >> 32) & MASK
                                  for x, y, p, q in zip(a.lanes, b.lanes, c0.lanes, c1.lanes)]))
            return [lo, hi or unknown(f"high half of {what}")]
        if m in ("v_lshlrev_b32", "v_lshlrev_b16"):
            return self.shl(src(1), src(0), what)
        if m == "s_lshl_b32":
            return self.shl(src(0), src(1), what)
        if m == "v_lshrrev_b32":
            return self.lshr(src(1), src(0), what)
        if m == "s_lshr_b32":
            return self.lshr(src(0), src(1), what)
        if m == "v_ashrrev_i32":
            return self.ashr(src(1), src(0), what)
        if m == "s_ashr_i32":
            return self.ashr(src(0), src(1), what)
        if m in ("s_lshl1_add_u32", "s_lshl2_add_u32", "s_lshl3_add_u32", "s_lshl4_add_u32"):
            return self.add(self.shl(src(0), self.const(int(m[6])), what), src(1))
        if m == "v_lshl_add_u32":
            return self.add(self.shl(src(0), src(1), what), src(2))
        if m == "v_add_lshl_u32":
            return self.shl(self.add(src(0), src(1)), src(2), what)
        if m == "v_lshl_or_b32":
            return self.bor(self.shl(src(0), src(1), what), src(2), what)
        if m == "v_and_or_b32":
            return self.bor(self.band(src(0), src(1), what), src(2), what)
        if m == "v_or3_b32":
            return self.bor(self.bor(src(0), src(1), what), src(2), what)
        if m == "v_add3_u32":
            return self.add(self.add(src(0), src(1)), src(2))
        if m == "v_xad_u32":
            return self.add(self.bxor(src(0), src(1), what), src(2))
        if m in ("v_and_b32", "s_and_b32"):
            return self.band(src(0), src(1), what)
        if m in ("v_or_b32", "s_or_b32"):
            return self.bor(src(0), src(1), what)
        if m in ("v_xor_b32", "s_xor_b32"):
            return self.bxor(src(0), src(1), what)
        if m in ("v_not_b32", "s_not_b32"):
            return self.bxor(src(0), self.const(MASK), what)
        if m in ("v_bfe_u32", "v_bfe_i32"):
            return self.bfe(src(0), src(1), src(2), m.endswith("i32"), what)
        if m in ("s_bfe_u32", "s_bfe_i32"):
            packed = self.uniform_everywhere(src(1))
            if packed is None:
                return None
            return self._bfe_const(src(0), packed & 31, (packed >> 16) & 0x7F, m.endswith("i32"), what)
        if m == "v_bfi_b32":
            sel = src(0)
            return self.bor(self.band(sel, src(1), what), self.band(self.bxor(sel, self.const(MASK)), src(2), what),
                            what)
        if m == "v_mbcnt_lo_u32_b32":
            mask, add = src(0), src(1)
            if mask.concrete:
                count = tuple([bin(x & ((1 << ln) - 1) & MASK).count("1")
                               for x, ln in zip(mask.lanes, self.layout.lane)])
                return self.add(Value(count), add)
            return None
        if m == "v_mbcnt_hi_u32_b32":
            if self.ws == 32:
                return self.add(self.const(0), src(1)) if src(0).known else None
            return None
        if m == "v_lshlrev_b64":
            lo, hi, n = src(1, 0), src(1, 1), self.uniform_everywhere(src(0))
            low = self.shl(lo, src(0), what)
            if n is not None and lo.concrete and hi.concrete:
                n &= 63
                full = [((a | b << 32) << n) for a, b in zip(lo.lanes, hi.lanes)]
                return [Value(tuple([x & MASK for x in full])), Value(tuple([(x >> 32) & MASK for x in full]))]
            return [low, unknown(f"high half of {what}")]
        if m in ("v_cndmask_b32", "s_cselect_b32"):
            if m == "s_cselect_b32":
                a, b = src(0), src(1)
                return a if a.same(b) else None
            f, t = src(0), src(1)
            mask_slot = srcs[2] if len(srcs) > 2 else None
            mask = self._operand(ins, mask_slot) if mask_slot is not None else unknown("no mask")
            sel = self.select(mask, f, t, what)
            if sel is not None:
                return sel
            if f.same(t):
                return f
            if f.known and t.known and mask_slot is not None and mask_slot.regs and \
                    self._mask_all_same(mask_slot.regs[0], ins.index, 8):
                diff = self.sub(t, f)
                if not self.varying(diff) and self.wave_uniform(diff) and not self.varying(f):
                    return self.add(f, self.fresh(f"select@L{ins.lineno}"))
            for v in (f, t):
                if not v.known:
                    return v
            return unknown(f"{what} selects per lane with a condition isalint cannot evaluate")
        if m in ("v_add_co_u32", "v_add_co_ci_u32", "v_sub_co_u32", "v_subrev_co_u32"):
            a, b = src(0), src(1)
            if m == "v_subrev_co_u32":
                a, b = b, a
            if m.startswith("v_sub"):
                low = self.sub(a, b)
            else:
                low = self.add(a, b)
            carry_in = None
            if m == "v_add_co_ci_u32":
                cin = src(2)
                if not cin.concrete:
                    return [unknown(f"{what} adds a carry isalint cannot evaluate"), None]
                carry_in = tuple([(x >> ln) & 1 for x, ln in zip(cin.lanes, self.layout.lane)])
                low = self.add(low, Value(carry_in))
            carry: Value | None = None
            if a.concrete and b.concrete:
                if m.startswith("v_sub"):
                    c = [int(x < y) for x, y in zip(a.lanes, b.lanes)]
                elif carry_in is not None:
                    c = [((x + y + z) >> 32) & 1 for x, y, z in zip(a.lanes, b.lanes, carry_in)]
                else:
                    c = [((x + y) >> 32) & 1 for x, y in zip(a.lanes, b.lanes)]
                carry = Value(self._wave_mask(c))
            return [low, carry]
        if m.startswith("v_cmp_") and not m.startswith("v_cmpx"):
            mm = re.match(r"v_cmp_(eq|ne|lt|le|gt|ge|lg)_([ui])32$", m)
            if not mm:
                return None
            a, b = src(0), src(1)
            op, signed = mm.group(1), mm.group(2) == "i"
            if a.concrete and b.concrete:
                x, y = a.lanes, b.lanes
                if signed:
                    x = [v - (1 << 32) if v >> 31 else v for v in x]
                    y = [v - (1 << 32) if v >> 31 else v for v in y]
                cmp = {"eq": operator.eq, "ne": operator.ne, "lg": operator.ne, "lt": operator.lt, "le": operator.le,
                       "gt": operator.gt, "ge": operator.ge}[op]
                return Value(self._wave_mask(list(map(cmp, x, y))))
            if a.known and b.known and a.terms == b.terms and op in ("eq", "ne", "lg"):
                cmp = operator.eq if op == "eq" else operator.ne
                return Value(self._wave_mask(list(map(cmp, a.lanes, b.lanes))))
            return [unknown(f"{what} compares values isalint cannot evaluate")]
        return None

    def _wave_mask(self, bits) -> tuple[int, ...]:
        """Per-lane 0/1 bits -> each wave's 32-bit mask, broadcast to its lanes."""
        ws = self.ws
        if self.n % ws:
            return self._lanes_const(0)
        out: list[int] = []
        for lo in range(0, self.n, ws):
            mask = 0
            for ln, bit in enumerate(bits[lo:lo + ws]):
                if bit & 1:
                    mask |= 1 << ln
            if ws == 32:
                mask &= MASK
            out.extend([mask] * ws)
        return tuple(out)

    def _simm16(self, v: Value) -> Value:
        c = self.uniform_everywhere(v)
        if c is None:
            return v
        c &= 0xFFFF
        return self.const(c - 0x10000 if c & 0x8000 else c)

    def _u24(self, v: Value, what: str) -> Value:
        if not v.known:
            return v
        if v.concrete:
            return Value(tuple([x & 0xFFFFFF for x in v.lanes]))
        lo, hi = self.bounds(v.terms)
        if lo >= 0 and hi + max(v.lanes) < (1 << 24):
            return v
        return self.band(v, self.const(0xFFFFFF), what)

    def _mask_all_same(self, reg: str, index: int, depth: int) -> bool:
        """Whether lane mask ``reg`` read at ``index`` has all its bits equal
        (a uniform condition: s_cselect of 0/-1, a compare of wave-uniform values)."""
        if depth <= 0:
            return False
        defs = reaching_defs(self.program, index, reg)
        if not defs or -1 in defs:
            return False
        for d in defs:
            ins = self.program.instrs[d]
            if ins.opaque or ins.is_vopd:
                return False
            m = _base_mnemonic(ins.opcode)
            srcs = [s for s in ins.slots[0] if s.role == "use"]
            if m == "s_cselect_b32":
                vals = [self._operand(ins, s) for s in srcs[:2]]
                if not all(self.uniform_everywhere(v) in (0, MASK) for v in vals):
                    return False
            elif m.startswith("v_cmp_") and not m.startswith("v_cmpx"):
                if not all(self.wave_uniform(self._operand(ins, s)) for s in srcs[:2]):
                    return False
            elif m in ("s_and_b32", "s_or_b32", "s_xor_b32", "s_and_not1_b32", "s_andn2_b32", "s_or_not1_b32",
                       "s_not_b32", "s_mov_b32"):
                for s in srcs:
                    if s.operand.kind == "special" and s.operand.file in ("exec_lo", "exec"):
                        continue
                    if s.operand.kind == "int" and s.operand.value in (0, -1):
                        continue
                    if not s.regs or not self._mask_all_same(s.regs[0], d, depth - 1):
                        return False
            else:
                return False
        return True

    # -- LDS -------------------------------------------------------------------------------------
    def lds_access(self, ins) -> LdsAccess | Value | None:
        """The per-lane addresses of a ds_load*/ds_store*, or the unknown
        :class:`Value` explaining why they cannot be evaluated, or None when
        ``ins`` is not such an instruction."""
        if ins.opaque or ins.is_vopd:
            return None
        shape = ds_shape(ins.opcode)
        if shape is None:
            return None
        kind, width, naddr, stride64 = shape
        addr_slot = next((s for s in ins.slots[0] if s.name == "addr"), None)
        if addr_slot is None or not addr_slot.regs:
            return None
        reg = addr_slot.regs[0]
        v = self.value(reg, ins.index)
        if not v.known:
            return v
        if self.varying(v):
            return unknown(f"{reg} changes per lane from one loop iteration to the next")
        stmt = ins.stmts[0]
        if naddr == 1:
            mod = stmt.modifier("offset")
            offs = ((mod.int_value() or 0) if mod else 0,)
        else:
            unit = width * (64 if stride64 else 1)
            offs = tuple(((stmt.modifier(n).int_value() or 0) if stmt.modifier(n) else 0) * unit
                         for n in ("offset0", "offset1"))
        addrs = [tuple([(x + o) & MASK for x in v.lanes]) for o in offs]
        return LdsAccess(ins.index, ins.opcode, kind, width, addrs, v.terms, reg, offs)


def lds_banks(kernel) -> int:
    """The LDS banks the kernel's waves see (:func:`isalint.hw.lds_banks.bank_count`); WGP mode when
    the kernel is unknown."""
    return bank_count(True if kernel is None else kernel.wgp_mode)


def evaluator_for(analysis, index: int) -> LaneEvaluator:
    """The evaluator of the kernel holding instruction ``index``, shared by the
    rules of one analysis (cached on it)."""
    cache = analysis.__dict__.setdefault("_lane_evaluators", {})
    program = analysis.program
    k = program.kernel_of(index)
    key = k.name if k is not None else None
    if key not in cache:
        cache[key] = LaneEvaluator(program, k)
    return cache[key]
