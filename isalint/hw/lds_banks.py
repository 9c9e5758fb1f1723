"""LDS banks: which dwords of one DS access collide, and the padding that removes it.

Sources: RDNA3 ISA guide, chapter 11 "Data Share Operations" (the LDS is split into 4-byte banks, 64 for a
workgroup processor; a wave in CU mode works in its CU's half, 32 banks; the LDS serves 32 dwords per
clock). How the lanes of a 64- and 128-bit access are grouped into passes is not in the guide: the
passes of 16 lanes (b64) and 8 lanes (b96/b128) follow AMD's LDS documentation for GCN/CDNA (the LDS001
documentation says so, and treats the n of a wide access as an estimate).

The model: dword ``d`` lives in bank ``d % banks``; a wave is served in passes of
:func:`lanes_per_pass` consecutive lanes (a wave64 is twice as many passes); each address of a 2addr
instruction is served by its own passes; lanes reading the same dword share one access (broadcast); a
pass takes as many cycles as the largest number of distinct dwords one bank must deliver.

``bank_conflicts(access, banks, wave_size)`` takes any object with ``width`` (bytes per lane per
address) and ``addresses`` (one tuple of per-lane byte addresses per address the instruction issues),
such as :class:`isalint.model.lanes.lds.LdsAccess`.
"""
from __future__ import annotations

import math

from ..records import Record

BANKS_WGP_MODE = 64  # a workgroup processor's LDS
BANKS_CU_MODE = 32  # CU mode: a wave uses its CU's half


class Access:
    """What :func:`bank_conflicts` reads of an access (any object with these attributes, such as
    :class:`isalint.model.lanes.lds.LdsAccess`). One DS instruction's addresses: ``width`` bytes per
    lane per address, and one tuple of per-lane byte addresses per address it issues (two for the
    2addr forms)."""

    width: int
    addresses: list[tuple[int, ...]]


def bank_count(wgp_mode: bool) -> int:
    """LDS banks a wave sees: 64 in WGP mode, 32 (its CU's half of the LDS) in CU mode."""
    return BANKS_WGP_MODE if wgp_mode else BANKS_CU_MODE



class Conflict(Record):
    degree: int  # the worst pass: distinct dwords that share one bank
    cycles: int  # bank cycles over all passes of the worst wave
    ideal: int  # passes of that wave (cycles without conflicts)
    wave: int
    address: int  # which address of a 2addr instruction (0 or 1)
    bank: int
    lanes: list[int]  # one lane per distinct dword in the worst bank
    byte_stride: int  # gcd of the byte distances between those lanes' dwords
    lane_step: int  # gcd of the lane-index distances between them
    lane_stride: int | None  # bytes between consecutive lanes, when linear across the colliding lanes
    rows: int  # distinct rows (of byte_stride bytes) the wave touches
    pad: int | None  # dwords of padding per row that remove every conflict
    passes: int  # passes per address per wave
    row_bytes: int  # the row the padding applies to (the lane stride when linear, else byte_stride)

    _fields = ("degree", "cycles", "ideal", "wave", "address", "bank", "lanes", "byte_stride", "lane_step",
               "lane_stride", "rows", "pad", "passes", "row_bytes")

    def __init__(self, degree: int, cycles: int, ideal: int, wave: int, address: int, bank: int, lanes: list[int],
                 byte_stride: int, lane_step: int, lane_stride: int | None, rows: int, pad: int | None,
                 passes: int, row_bytes: int):
        self.degree = degree
        self.cycles = cycles
        self.ideal = ideal
        self.wave = wave
        self.address = address
        self.bank = bank
        self.lanes = lanes
        self.byte_stride = byte_stride
        self.lane_step = lane_step
        self.lane_stride = lane_stride
        self.rows = rows
        self.pad = pad
        self.passes = passes
        self.row_bytes = row_bytes


def lanes_per_pass(width: int) -> int:
    """Lanes the LDS serves per pass: 32 dwords (128 bytes) per clock; a
    b96 lane uses a 4-dword slot."""
    dwords = 4 if width == 12 else max(1, width // 4)
    return max(1, 32 // dwords)


def _pass_degree(addr, width: int, banks: int) -> tuple[int, dict[int, int], list[int]]:
    """Conflict degree of one pass; also each distinct dword with its first
    lane (position in ``addr``) and the number of distinct dwords per bank."""
    first: dict[int, int] = {}
    if width <= 4:
        for ln, a in enumerate(addr):
            first.setdefault(a >> 2, ln)
    else:
        nd = (width + 3) // 4
        for ln, a in enumerate(addr):
            d = a >> 2
            for k in range(nd):
                first.setdefault(d + k, ln)
    counts = [0] * banks
    for d in first:
        counts[d % banks] += 1
    return max(counts), first, counts


def _pass_degree_only(addr, width: int, banks: int) -> int:
    """The conflict degree of one pass (fast path of :func:`_pass_degree`)."""
    if width <= 4:
        dws = {a >> 2 for a in addr}
    else:
        nd = (width + 3) // 4
        dws = {(a >> 2) + k for a in addr for k in range(nd)}
    if len(dws) <= 1:
        return len(dws)
    banks_hit = {d % banks for d in dws}
    if len(banks_hit) == len(dws):
        return 1
    counts: dict[int, int] = {}
    for d in dws:
        b = d % banks
        counts[b] = counts.get(b, 0) + 1
    return max(counts.values())


def bank_conflicts(access: Access, banks: int, wave_size: int = 32, pad_search: bool = True) -> Conflict | None:
    """The worst bank conflict of ``access`` over the analysed waves, or None
    when every pass of every wave is conflict-free.

    Model (documented in LDS001): dword ``d`` lives in bank ``d % banks``; a
    wave is served in passes of ``lanes_per_pass(width)`` consecutive lanes
    (a wave64 is simply twice as many passes); each address of a 2addr
    instruction is served by its own passes; lanes reading the same dword
    share one access (broadcast); a pass takes as many cycles as the largest
    number of distinct dwords one bank must deliver.
    """
    width = access.width
    lpp = lanes_per_pass(width)
    n = len(access.addresses[0])
    waves = max(1, n // wave_size)
    worst: Conflict | None = None
    seen: set[tuple] = set()
    for w in range(waves):
        lo, hi = w * wave_size, min(n, (w + 1) * wave_size)
        rel = [a[lo:hi] for a in access.addresses]
        base = min(min(r) for r in rel)
        key = (tuple(tuple(x - base for x in r) for r in rel), base % (4 * banks))
        if key in seen:
            continue
        seen.add(key)
        cycles = ideal = 0
        best = None
        for ai, r in enumerate(rel):
            for start in range(0, len(r), lpp):
                chunk = r[start:start + lpp]
                degree = _pass_degree_only(chunk, width, banks)
                cycles += degree
                ideal += 1
                if degree > 1 and (best is None or degree > best[0]):
                    _, first, counts = _pass_degree(chunk, width, banks)
                    bank = counts.index(degree)  # the lowest bank with the most dwords
                    best = (degree, ai, bank, sorted({ln + start for d, ln in first.items() if d % banks == bank}))
        if best is None or (worst is not None and (best[0], cycles) <= (worst.degree, worst.cycles)):
            continue
        degree, ai, bank, lanes = best
        addrs = [rel[ai][ln] for ln in lanes]
        stride = step = 0
        for a, ln in zip(addrs[1:], lanes[1:]):
            stride = math.gcd(stride, abs(a - addrs[0]))
            step = math.gcd(step, ln - lanes[0])
        lane_stride = None
        r = rel[ai]
        if step and stride % step == 0:
            ls = stride // step
            if r[lanes[1]] < r[lanes[0]]:
                ls = -ls
            r0, l0 = r[lanes[0]], lanes[0]
            if all(r[x] - r0 == (x - l0) * ls for x in range(l0, lanes[-1] + 1)):
                lane_stride = abs(ls)
        worst = Conflict(degree, cycles, ideal, w, ai, bank, lanes, stride, step, lane_stride, 0, None,
                         max(1, math.ceil((hi - lo) / lpp)), stride)
    if worst is not None and pad_search:
        rows = [worst.lane_stride] if worst.lane_stride and worst.lane_stride % 4 == 0 else []
        rows += [worst.byte_stride] if worst.byte_stride not in rows else []
        for row in rows:
            worst.rows, worst.pad = _padding(access, banks, wave_size, row)
            worst.row_bytes = row
            if worst.pad is not None:
                break
    return worst


def _padding(access: Access, banks: int, wave_size: int, row_bytes: int) -> tuple[int, int | None]:
    """Rows touched by a wave, and the fewest dwords of padding per row of
    ``row_bytes`` that make every pass conflict-free (aligned to the access
    width first)."""
    n = len(access.addresses[0])
    waves = max(1, n // wave_size)
    rel_all = []
    rows = 1
    for w in range(waves):
        lo, hi = w * wave_size, min(n, (w + 1) * wave_size)
        rel = [a[lo:hi] for a in access.addresses]
        base = min(min(r) for r in rel)
        rel = [[x - base for x in r] for r in rel]
        rows = max(rows, len({x // row_bytes for r in rel for x in r}))
        rel_all.append(rel)
    align = 4 if access.width >= 12 else max(1, access.width // 4)
    candidates = [p for p in range(align, banks + 1, align)] + [p for p in range(1, banks + 1) if p % align]
    lpp = lanes_per_pass(access.width)
    for p in candidates:
        ok = True
        for rel in rel_all:
            for r in rel:
                padded = [x + (x // row_bytes) * 4 * p for x in r]
                for start in range(0, len(padded), lpp):
                    if _pass_degree_only(padded[start:start + lpp], access.width, banks) > 1:
                        ok = False
                        break
                if not ok:
                    break
            if not ok:
                break
        if ok:
            return rows, p
    return rows, None
