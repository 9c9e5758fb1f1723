"""Wave groups, memory, outstanding memory operations and the workgroup scheduler.

Waves that sit at the same program counter execute in lockstep as one *group*: every VGPR is a
``uint32`` array of shape ``[W, 32]`` (W waves, 32 lanes), every SGPR a ``[W]`` vector, so one
numpy call executes an instruction for all W waves.  Waves of one workgroup share an LDS region;
waves of different workgroups may share a group (they only never share LDS).  A scalar branch
that goes different ways for different waves splits the group; groups that meet again at a
barrier (or that finish) are merged back.

Memory instructions complete late (RDNA3 ISA guide, 5.x "Data dependency resolution"): each
issue creates a :class:`Pending` entry on the group's ``vm`` (vector loads), ``vs`` (vector
stores) or ``lgkm`` (LDS, scalar memory) queue.  A load reads memory when issued (seeing its own
wave's not yet completed stores, as the in-order LDS and the per-wave memory path do) but writes
its destination registers only when the entry completes; a store captures its data at issue and
writes memory only when it completes.  Entries complete in order per wave and counter: when an
``s_waitcnt`` asks for it, when the counter would overflow, or after a seeded random number of
instructions.  A missing or too weak wait therefore reads stale registers or stale LDS.
"""
from __future__ import annotations

import numpy as np

from ...hw.registers import EXEC_HI, EXEC_LO, M0, NULL, SCALAR_OPERANDS, TTMP0, VCC_HI, VCC_LO  # noqa: F401
from .errors import EmulationError

U8 = np.uint8
U32 = np.uint32
U64 = np.uint64
I32 = np.int32
I64 = np.int64
F32 = np.float32
F64 = np.float64

NSGPR = SCALAR_OPERANDS  # the scalar state of a wave, indexed by scalar operand number
LANES = np.arange(32, dtype=U32)
ALL_ONES = U32(0xFFFF_FFFF)

HEAP_BASE = 1 << 32  # global addresses handed out start here
HEAP_ALIGN = 256
HEAP_GUARD = 65536  # bytes of garbage between buffers (at least; a quarter of the buffer before it)

COUNTER_QUEUE = {"vmcnt": "vm", "vscnt": "vs", "lgkmcnt": "lgkm"}
COUNTER_LIMIT = 63  # 6-bit vmcnt/vscnt/lgkmcnt on gfx11: issue stalls when a counter is full

# Returned by an op closure instead of a next pc.
STOP_BARRIER = -1
STOP_END = -2
STOP_SPLIT = -3


def bits_to_mask(bits: np.ndarray) -> np.ndarray:
    """[W] uint32 lane masks -> [W, 32] bool."""
    return ((np.asarray(bits, dtype=U32)[..., None] >> LANES) & U32(1)).astype(bool)


def mask_to_bits(mask: np.ndarray) -> np.ndarray:
    """[W, 32] bool -> [W] uint32."""
    m = np.ascontiguousarray(mask, dtype=bool)
    return np.packbits(m, axis=-1, bitorder="little").view(U32).reshape(m.shape[:-1])


class Buffer:
    __slots__ = ("name", "address", "size", "offset")

    def __init__(self, name: str, address: int, size: int, offset: int):
        self.name, self.address, self.size, self.offset = name, address, size, offset


class Memory:
    """Global memory (one heap of buffers), LDS of every workgroup, private (scratch) memory."""

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed ^ 0xB0F)
        self.buffers: list[Buffer] = []
        self._chunks: list[np.ndarray] = []
        self._size = 0
        self.heap = np.zeros(0, dtype=U8)
        self.heap32 = self.heap.view(U32)
        self.starts = np.zeros(0, dtype=I64)
        self.ends = np.zeros(0, dtype=I64)
        self.lds = np.zeros(0, dtype=U8)
        self.lds32 = self.lds.view(U32)
        self.lds_size = 0
        self.scratch = np.zeros(0, dtype=U8)
        self.scratch32 = self.scratch.view(U32)
        self.private_size = 0
        self.writer: np.ndarray | None = None  # per heap dword: wave*32+lane of the last store, or -1

    def track_writers(self) -> None:
        self.writer = np.full(self.heap.size // 4, -1, dtype=I64)

    # -- global heap -----------------------------------------------------------------
    def alloc(self, name: str, data: bytes | np.ndarray) -> int:
        """Place ``data`` in the heap; returns its 64-bit device address."""
        raw = np.frombuffer(bytes(data), dtype=U8) if not isinstance(data, np.ndarray) else \
            np.ascontiguousarray(data).view(U8).reshape(-1)
        guard = max(HEAP_GUARD, self.buffers[-1].size // 4) if self.buffers else HEAP_GUARD
        offset = self._size + guard
        offset = (offset + HEAP_ALIGN - 1) // HEAP_ALIGN * HEAP_ALIGN
        pad = offset - self._size
        self._chunks.append(self.rng.integers(0, 256, size=pad, dtype=U8))
        self._chunks.append(raw.copy())
        self._size = offset + raw.size
        buf = Buffer(name, HEAP_BASE + offset, raw.size, offset)
        self.buffers.append(buf)
        self._finish()
        return buf.address

    def _finish(self) -> None:
        last = self.buffers[-1].size // 4 if self.buffers else 0
        tail = (-self._size) % HEAP_ALIGN + max(HEAP_GUARD, last)
        self.heap = np.concatenate(self._chunks + [self.rng.integers(0, 256, size=tail, dtype=U8)])
        self.heap32 = self.heap.view(U32)
        self.starts = np.array([b.offset for b in self.buffers], dtype=I64)
        self.ends = np.array([b.offset + b.size for b in self.buffers], dtype=I64)

    def read_buffer(self, name_or_address) -> np.ndarray:
        buf = self.buffer(name_or_address)
        return self.heap[buf.offset: buf.offset + buf.size].copy()

    def buffer(self, name_or_address) -> Buffer:
        for b in self.buffers:
            if b.name == name_or_address or b.address == name_or_address:
                return b
        raise KeyError(name_or_address)

    def check_global(self, off: np.ndarray, nbytes: int, store: bool = False) -> tuple[str | None, bool]:
        """(problem, fatal) for byte offsets ``off`` (1-D int64) accessed with ``nbytes`` each.

        (None, False) when every access is inside a buffer.  A load that strays into the garbage
        between buffers is not fatal (real kernels over-fetch and discard; on hardware the memory
        is mapped too): it reads garbage, and any use of it shows up in the results.  A store
        outside every buffer, or any access outside the heap, is fatal.
        """
        if off.size == 0:
            return None, False
        lo = int(off.min())
        hi = int(off.max())
        k = int(np.searchsorted(self.starts, lo, side="right")) - 1
        if k >= 0 and hi + nbytes <= self.ends[k] and lo >= self.starts[k]:
            return None, False
        ks = np.searchsorted(self.starts, off, side="right") - 1
        bad = (ks < 0) | (off + nbytes > self.ends[np.maximum(ks, 0)])
        if not bad.any():
            return None, False
        first = int(off[np.argmax(bad)])
        msg = f"address 0x{HEAP_BASE + first:x} (+{nbytes} bytes) is outside every buffer"
        outside_heap = lo < 0 or hi + nbytes > self.heap.size
        return msg, bool(store or outside_heap)

    # -- LDS / scratch ----------------------------------------------------------------
    def setup_lds(self, n_workgroups: int, size: int) -> None:
        self.lds_size = size
        total = n_workgroups * ((size + 3) // 4 * 4) + 16
        self.lds = np.zeros(total, dtype=U8)
        self.lds32 = self.lds.view(U32)

    def setup_scratch(self, n_waves: int, size: int) -> None:
        self.private_size = (size + 3) // 4 * 4
        self.scratch = np.zeros(max(16, n_waves * 32 * self.private_size), dtype=U8)
        self.scratch32 = self.scratch.view(U32)


def gather(arr8: np.ndarray, arr32: np.ndarray, idx: np.ndarray, nbytes: int) -> np.ndarray:
    """Bytes ``idx .. idx+nbytes`` of ``arr8`` per element of ``idx`` -> uint32 [..., ceil(n/4)].

    Sub-dword reads come back zero-extended in the low bits of one dword.
    """
    if nbytes >= 4 and not (idx & 3).any():
        d = idx >> 2
        if nbytes == 4:
            return arr32[d][..., None]
        k = nbytes // 4
        if k & (k - 1) == 0 and not (d & (k - 1)).any():  # aligned to the access: one row per lane
            return _rows(arr32, k)[d // k]
        return arr32[d[..., None] + np.arange(k)]
    raw = arr8[idx[..., None] + np.arange(nbytes)]
    if nbytes < 4:
        raw = np.concatenate([raw, np.zeros(raw.shape[:-1] + (4 - nbytes,), dtype=U8)], axis=-1)
    return np.ascontiguousarray(raw).view(U32)


def _rows(arr32: np.ndarray, k: int) -> np.ndarray:
    """``arr32`` as rows of ``k`` dwords (the tail that fills no row left out)."""
    return arr32[:arr32.size - arr32.size % k].reshape(-1, k)


def scatter(arr8: np.ndarray, arr32: np.ndarray, idx: np.ndarray, nbytes: int, data: np.ndarray) -> None:
    """Write ``data`` (uint32 [..., ndw]) at byte offsets ``idx`` (1-D, already masked)."""
    if nbytes >= 4 and not (idx & 3).any():
        d = idx >> 2
        k = nbytes // 4
        if k == 1:
            arr32[d] = data[..., 0]
        elif k & (k - 1) == 0 and not (d & (k - 1)).any():
            _rows(arr32, k)[d // k] = data
        else:
            arr32[d[..., None] + np.arange(k)] = data
        return
    raw = np.ascontiguousarray(data).view(U8)[..., :nbytes]
    arr8[idx[..., None] + np.arange(nbytes)] = raw


class Pending:
    """One outstanding memory operation of the waves ``waves`` (global wave ids)."""

    __slots__ = ("seq", "queue", "due", "waves", "left", "apply", "store", "space", "keys", "vals", "instr", "lo", "hi")

    def __init__(self, seq, queue, due, waves, apply, instr, store=False, space=None, keys=None, vals=None):
        self.seq = seq
        self.queue = queue
        self.due = due
        self.waves = waves  # int64 [W] sorted
        self.left = set(waves.tolist())
        self.apply = apply  # apply(group, rows_in_entry, rows_in_group)
        self.store = store
        self.space = space
        self.keys = keys  # for stores: int64 [W, 32, nbytes] byte indices (or None)
        self.vals = vals  # uint8 [W, 32, nbytes]
        self.instr = instr
        self.lo, self.hi = 0, -1  # byte range a store touches (for a quick no-overlap test)
        if keys is not None:
            ok = keys[keys >= 0]
            if ok.size:
                self.lo, self.hi = int(ok.min()), int(ok.max())


class Group:
    """Waves executing in lockstep."""

    __slots__ = ("V", "S", "scc", "waves", "wg", "lds_base", "mask", "full", "pc", "queues",
                 "next_due", "wkey", "state")

    def __init__(self, V, S, scc, waves, wg, lds_base, pc):
        self.V = V
        self.S = S
        self.scc = scc
        self.waves = waves
        self.wg = wg
        self.lds_base = lds_base
        self.pc = pc
        self.queues = {"vm": [], "vs": [], "lgkm": []}
        self.next_due = 1 << 62
        self.wkey = waves.tobytes()
        self.state = "run"
        self.update_exec()

    @property
    def width(self) -> int:
        return self.waves.size

    def update_exec(self) -> None:
        e = self.S[EXEC_LO]
        self.full = bool((e == ALL_ONES).all())
        self.mask = bits_to_mask(e)

    # -- split / merge ------------------------------------------------------------------
    def take(self, rows: np.ndarray) -> "Group":
        g = Group(self.V[:, rows].copy(), self.S[:, rows].copy(), self.scc[rows].copy(),
                  self.waves[rows].copy(), self.wg[rows].copy(), self.lds_base[rows].copy(), self.pc)
        mine = set(g.waves.tolist())
        for name, q in self.queues.items():
            g.queues[name] = [e for e in q if e.left & mine]
        g.refresh_due()
        return g

    @staticmethod
    def merge(groups: list["Group"]) -> "Group":
        if len(groups) == 1:
            return groups[0]
        waves = np.concatenate([g.waves for g in groups])
        order = np.argsort(waves, kind="stable")
        cat = lambda xs, axis: np.concatenate(xs, axis=axis)[(slice(None),) * axis + (order,)]  # noqa: E731
        g = Group(cat([x.V for x in groups], 1), cat([x.S for x in groups], 1), cat([x.scc for x in groups], 0),
                  waves[order], cat([x.wg for x in groups], 0), cat([x.lds_base for x in groups], 0), groups[0].pc)
        for name in g.queues:
            seen: dict[int, Pending] = {}
            for x in groups:
                for e in x.queues[name]:
                    seen[id(e)] = e
            g.queues[name] = sorted(seen.values(), key=lambda e: e.seq)
        g.refresh_due()
        return g

    def refresh_due(self) -> None:
        d = 1 << 62
        for q in self.queues.values():
            if q and q[0].due < d:
                d = q[0].due
        self.next_due = d

    # -- completing outstanding operations ------------------------------------------------
    def complete(self, e: Pending) -> None:
        """Complete ``e`` for the waves of this group; drop it from this group's queue."""
        same = e.waves.size == self.waves.size and e.waves.tobytes() == self.wkey
        if same and len(e.left) == e.waves.size:  # the common case: one group issued and completes it
            e.apply(self, slice(None), slice(None))
            e.left.clear()
        else:
            mine = e.left.intersection(self.waves.tolist())
            if mine:
                sel = np.array(sorted(mine), dtype=I64)
                e.apply(self, np.searchsorted(e.waves, sel), np.searchsorted(self.waves, sel))
                e.left.difference_update(mine)
        self.queues[e.queue].remove(e)

    def retire_due(self, clock: int) -> None:
        for q in self.queues.values():
            while q and q[0].due <= clock:
                self.complete(q[0])
        self.refresh_due()

    def wait(self, queue: str, limit: int) -> None:
        """s_waitcnt: complete the oldest entries until each wave has <= limit outstanding."""
        q = self.queues[queue]
        if len(q) <= limit:
            return
        uniform = all(e.waves.tobytes() == self.wkey and len(e.left) == e.waves.size for e in q)
        if uniform:
            for e in q[: len(q) - limit]:
                self.complete(e)
        else:
            counts: dict[int, int] = {}
            doomed = []
            here = set(self.waves.tolist())
            for e in reversed(q):
                must = False
                for w in e.left & here:
                    counts[w] = counts.get(w, 0) + 1
                    if counts[w] > limit:
                        must = True
                if must:
                    doomed.append(e)
            for e in reversed(doomed):
                self.complete(e)
        self.refresh_due()

    def drain(self) -> None:
        for name in ("vm", "vs", "lgkm"):
            while self.queues[name]:
                self.complete(self.queues[name][0])
        self.refresh_due()


def _may_overlap(stores, act: np.ndarray, lo: int, hi: int) -> bool:
    """Whether a dword of the load (byte indices ``act`` in ``lo..hi``) is written by one of ``stores``,
    whichever wave: a linear test that spares the exact per-wave matching (a sort) in the common case."""
    base = lo >> 2
    written = np.zeros((hi >> 2) - base + 1, dtype=bool)
    for e in stores:
        k = e.keys[e.keys >= 0]
        k = k[(k >= lo) & (k <= hi)]
        written[(k >> 2) - base] = True
    return bool(written[(act >> 2) - base].any())


class Machine:
    """Everything one launch needs at run time: memory, clock, random delays, limits."""

    def __init__(self, seed: int = 0, latency: tuple[int, int] | None = (64, 4096),
                 max_steps: int = 50_000_000):
        self.mem = Memory(seed)
        self.clock = 0
        self.seq = 0
        self.rng = np.random.default_rng(seed)
        self.latency = latency
        self.max_steps = max_steps
        self._delays = np.zeros(0, dtype=I64)
        self._di = 0
        self.notes: dict[tuple, str] = {}

    def delay(self) -> int:
        if self.latency is None:
            return 1 << 60
        if self._di >= self._delays.size:
            lo, hi = self.latency
            self._delays = self.rng.integers(lo, hi + 1, size=4096)
            self._di = 0
        d = int(self._delays[self._di])
        self._di += 1
        return d

    def issue(self, g: Group, queue: str, apply, instr, store=False, space=None, keys=None, vals=None) -> Pending:
        q = g.queues[queue]
        if len(q) >= COUNTER_LIMIT:  # the hardware stalls issue until the oldest one returns
            g.wait(queue, COUNTER_LIMIT - 1)
        due = self.clock + self.delay()
        if q and q[-1].due > due:
            due = q[-1].due
        self.seq += 1
        e = Pending(self.seq, queue, due, g.waves, apply, instr, store, space, keys, vals)
        q.append(e)
        if due < g.next_due:
            g.next_due = due
        return e

    def forward(self, g: Group, queue: str, space: str, keys: np.ndarray, raw: np.ndarray) -> np.ndarray:
        """Overlay this group's own not yet completed stores (same wave only) onto loaded bytes.

        ``keys``: int64 [W, 32, nbytes] byte indices of the load; ``raw``: uint8 same shape.
        """
        act = keys[keys >= 0]
        if act.size == 0:
            return raw
        lo, hi = int(act.min()), int(act.max())
        stores = [e for e in g.queues[queue] if e.store and e.space == space and e.lo <= hi and e.hi >= lo]
        if not stores or not _may_overlap(stores, act, lo, hi):
            return raw
        W = g.waves.size
        wid = g.waves.astype(I64)
        skeys, svals = [], []
        for e in stores:
            # rows of this store's waves that are still pending and present in this group
            sel = np.array(sorted(e.left.intersection(g.waves.tolist())), dtype=I64)
            if sel.size == 0:
                continue
            rows = np.searchsorted(e.waves, sel)
            k = e.keys[rows]
            ok = k >= 0
            tag = (sel[:, None, None] << 40) + k
            skeys.append(tag[ok])
            svals.append(e.vals[rows][ok])
        if not skeys:
            return raw
        sk = np.concatenate(skeys)
        sv = np.concatenate(svals)
        # keep the newest value per byte: reverse, unique keeps the first occurrence
        rk, ri = np.unique(sk[::-1], return_index=True)
        rv = sv[::-1][ri]
        lk = (wid.reshape(W, *([1] * (keys.ndim - 1))) << 40) + keys
        pos = np.searchsorted(rk, lk)
        pos = np.minimum(pos, rk.size - 1)
        hit = rk[pos] == lk
        if hit.any():
            raw = raw.copy()
            raw[hit] = rv[pos[hit]]
        return raw

    def tick_error(self, instr, path):
        raise EmulationError(f"instruction limit of {self.max_steps} exceeded (endless loop?)",
                             path, instr.lineno, instr.text())
