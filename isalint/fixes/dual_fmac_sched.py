"""Choosing the register layout and the order of the dual FMAs.

The plan is the worklog's (seed 000, "Kernel 6", Figures 32-34), derived here for any outer
product of p pairs of A values by q pairs of B values:

* the A values go to register pairs on one pair of banks and the B values to pairs on the other
  two banks (``ds_load_b64`` writes two consecutive VGPRs, so a pair covers banks {k, k+1});
* the |A| x |B| products are cut into 2x2 *blocks* (one A pair by one B pair). A block's four
  FMAs make two dual instructions, {a0*b0, a1*b1} and {a0*b1, a1*b0}: in each, SRC0X and SRC0Y
  read different banks, and so do VSRC1X and VSRC1Y (RDNA3 ISA guide, 7.6 "Dual issue VALU");
* the blocks are visited in a walk where consecutive blocks share an A pair or a B pair (so
  the operand caches can serve the shared values), and within each block the variant - which
  instruction first, which product goes to X - is chosen by a beam search against the bank and
  operand-cache model;
* walks that consume the LDS data in the order it is loaded are preferred: an FMA may only wait
  for the loads it reads, so early blocks should read early loads.

The accumulators get registers afterwards: the two destinations of a dual instruction must
differ in parity; each keeps its old register when that register is free and of the right
parity, and otherwise takes the lowest free register of that parity.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import FixRefused
from .dual_fmac_detect import FmaBlock


@dataclass(frozen=True)
class Pair:
    side: str  # "A" | "B"
    load: int  # load position in FmaBlock.loads
    first_dword: int  # dword of that load held in the pair's first register

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.side, self.load, self.first_dword)


@dataclass
class Layout:
    a_bank: int  # bank of the first register of every A pair (B pairs start at a_bank ^ 2)
    pair_reg: dict[tuple[str, int, int], int]  # Pair.key -> first VGPR
    acc_reg: dict[tuple, int] = field(default_factory=dict)  # cell -> VGPR

    def value_reg(self, side: str, key: tuple[int, int]) -> int:
        load, dword = key
        return self.pair_reg[(side, load, dword - dword % 2)] + dword % 2


@dataclass(frozen=True)
class Half:
    cell: tuple  # (A value key, B value key)
    a_first: bool  # SRC0 is the A value (else the B value)


@dataclass
class Schedule:
    duals: list[tuple[Half, Half]]  # (X, Y) per instruction
    walk: list[tuple[int, int]]
    name: str = ""
    score: tuple = ()
    model: dict = field(default_factory=dict)


def pairs_of(fb: FmaBlock) -> tuple[list[Pair], list[Pair]]:
    """The register pairs each side needs; loads of an odd number of dwords are refused."""
    out: dict[str, list[Pair]] = {"A": [], "B": []}
    for ld in fb.loads:
        if len(ld.regs) % 2:
            raise FixRefused(f"{fb_where(fb, ld.index)}: a {len(ld.regs) * 32}-bit load cannot be split into "
                             "64-bit pairs")
        for d in range(0, len(ld.regs), 2):
            out[ld.side].append(Pair(ld.side, ld.order, d))
    return out["A"], out["B"]


def fb_where(fb: FmaBlock, index: int) -> str:
    return f"instruction {index}"


# --------------------------------------------------------------------------------------------
# Register allocation

def choose_value_registers(fb: FmaBlock, pool: set[int], a_bank: int, limit: int,
                           tiers: list[set[int]]) -> dict[tuple, int] | None:
    """First registers of every A and B pair below ``limit``, or None when they do not fit.

    Pairs go first to the registers of ``tiers[0]`` (those only the loaded values can use),
    then ``tiers[1]`` (the loop's old value registers), then to the highest free registers,
    so the low registers stay for the accumulators.
    """
    a_pairs, b_pairs = pairs_of(fb)
    b_bank = a_bank ^ 2

    def tier(r: int) -> int:
        for n, t in enumerate(tiers):
            if r in t and r + 1 in t:
                return n
        return len(tiers)

    out: dict[tuple, int] = {}
    for pairs, bank in ((a_pairs, a_bank), (b_pairs, b_bank)):
        cands = [r for r in range(bank, limit - 1, 4) if r in pool and r + 1 in pool]
        cands.sort(key=lambda r: (tier(r), -r))
        if len(cands) < len(pairs):
            return None
        chosen = sorted(cands[: len(pairs)])
        for p, r in zip(pairs, chosen):
            out[p.key] = r
    return out


def assign_accumulators(fb: FmaBlock, sched: Schedule, pool: set[int]) -> dict[tuple, int] | None:
    """A register for every cell so that the two destinations of each dual differ in parity.

    A cell keeps its old register when that is free and the parities allow it (the bank model
    does not care which parity is X, so when the two old registers already differ in parity
    both stay); otherwise it takes the lowest free register of the parity it needs. Returns
    None if the pool is short.
    """
    usable = {r for r in pool}
    parity: dict[tuple, int] = {}
    for x, y in sched.duals:
        ox, oy = fb.cells[x.cell], fb.cells[y.cell]
        kx, ky = ox in usable, oy in usable
        if ox % 2 != oy % 2:
            parity[x.cell], parity[y.cell] = ox % 2, oy % 2
        elif kx and not ky:
            parity[x.cell], parity[y.cell] = ox % 2, 1 - ox % 2
        else:
            parity[x.cell], parity[y.cell] = 1 - oy % 2, oy % 2
    out: dict[tuple, int] = {}
    used: set[int] = set()
    for cell, par in parity.items():
        old = fb.cells[cell]
        if old % 2 == par and old in usable and old not in used:
            out[cell] = old
            used.add(old)
    for par in (0, 1):
        rest = sorted(r for r in usable if r % 2 == par and r not in used)
        missing = [c for c, p in parity.items() if p == par and c not in out]
        if len(rest) < len(missing):
            # Not enough of this parity: fall back to a strict X/Y split if that balances.
            return None
        for cell, r in zip(missing, rest):
            out[cell] = r
            used.add(r)
    return out


# --------------------------------------------------------------------------------------------
# Block walks and variants

def _walks(p: int, q: int, a_loads: list[int], b_loads: list[int]) -> dict[str, list[tuple[int, int]]]:
    """Candidate orders of the p x q blocks; consecutive blocks always share a pair."""
    def snake(outer, inner, transpose):
        out = []
        for n, o in enumerate(outer):
            seq = inner if n % 2 == 0 else list(reversed(inner))
            out.extend((i, o) if transpose else (o, i) for i in seq)
        return out

    rows, cols = list(range(p)), list(range(q))
    walks = {
        "b-major snake": snake(cols, rows, True),
        "a-major snake": snake(rows, cols, False),
    }
    # 2-wide bands: walk pairs of B pairs across the A pairs (the worklog's Figure 34 shape).
    if q % 2 == 0 and p > 1:
        out = []
        for n, j0 in enumerate(range(0, q, 2)):
            seq = rows if n % 2 == 0 else list(reversed(rows))
            for m, i in enumerate(seq):
                js = (j0, j0 + 1) if m % 2 == 0 else (j0 + 1, j0)
                out.extend((i, j) for j in js)
        walks["b-band snake"] = out
    if p % 2 == 0 and q > 1:
        out = []
        for n, i0 in enumerate(range(0, p, 2)):
            seq = cols if n % 2 == 0 else list(reversed(cols))
            for m, j in enumerate(seq):
                is_ = (i0, i0 + 1) if m % 2 == 0 else (i0 + 1, i0)
                out.extend((i, j) for i in is_)
        walks["a-band snake"] = out
    return walks


# The two duals of block (A pair i, B pair j): products (a0,b0)+(a1,b1) and (a0,b1)+(a1,b0).
# A variant picks which dual comes first and which product of each goes to X.
VARIANTS = [(first, x1, x2) for first in (0, 1) for x1 in (0, 1) for x2 in (0, 1)]


def _block_duals(a_pair: Pair, b_pair: Pair, variant, a_first: bool) -> list[tuple[Half, Half]]:
    a = [(a_pair.load, a_pair.first_dword), (a_pair.load, a_pair.first_dword + 1)]
    b = [(b_pair.load, b_pair.first_dword), (b_pair.load, b_pair.first_dword + 1)]
    d0 = [(a[0], b[0]), (a[1], b[1])]
    d1 = [(a[0], b[1]), (a[1], b[0])]
    first, x1, x2 = variant
    duals = [d0, d1] if first == 0 else [d1, d0]
    out = []
    for d, xsel in zip(duals, (x1, x2)):
        x, y = d[xsel], d[1 - xsel]
        out.append((Half(x, a_first), Half(y, a_first)))
    return out


def dual_regs(sch_duals, layout: Layout) -> list[tuple[tuple[int, int, int], tuple[int, int, int]]]:
    """(acc, src0, src1) VGPR numbers of X and Y for each dual."""
    out = []
    for x, y in sch_duals:
        out.append((_half_regs(x, layout), _half_regs(y, layout)))
    return out


def _half_regs(h: Half, layout: Layout) -> tuple[int, int, int]:
    a_key, b_key = h.cell
    a = layout.value_reg("A", a_key)
    b = layout.value_reg("B", b_key)
    acc = layout.acc_reg.get(h.cell, -1)
    return (acc, a, b) if h.a_first else (acc, b, a)


def search(fb: FmaBlock, layout: Layout, model, wait_cost, *, beam: int = 16) -> Schedule:
    """The best schedule over the walks and per-block variants.

    ``model(regs)`` scores a list of dual instructions given as ``dual_regs`` tuples and
    returns a dict with at least ``stalls`` and ``hits``; accumulators not yet assigned are -1.
    The beam search extends a block at a time and scores the extension on a short window
    (the model's state only depends on the last instructions); the finished candidates are
    ranked on the whole loop by (stalls, LDS wait cost, -cache hits, X/Y read asymmetry).
    """
    a_pairs, b_pairs = pairs_of(fb)
    p, q = len(a_pairs), len(b_pairs)
    best: Schedule | None = None
    walks = _walks(p, q, [x.load for x in a_pairs], [x.load for x in b_pairs])
    window = 2
    for name, walk in walks.items():
        for a_first in (True, False):
            states: list[tuple[tuple, list]] = [((0, 0), [])]
            for (i, j) in walk:
                nxt = []
                for score, duals in states:
                    ctx = dual_regs(duals[-window:], layout)
                    base = model(ctx) if ctx else {"stalls": 0, "hits": 0}
                    for v in VARIANTS:
                        new = _block_duals(a_pairs[i], b_pairs[j], v, a_first)
                        m = model(ctx + dual_regs(new, layout))
                        inc = (m["stalls"] - base["stalls"], -(m["hits"] - base["hits"]))
                        nxt.append(((score[0] + inc[0], score[1] + inc[1]), duals + new))
                nxt.sort(key=lambda t: t[0])
                states = _dedup(nxt)[:beam]
            for _, duals in states[:4]:
                sch = Schedule(duals, walk, f"{name}, SRC0={'A' if a_first else 'B'}")
                m = model(dual_regs(duals, layout))
                sch.model = m
                sch.score = (m["stalls"], wait_cost(sch), -m["hits"], m.get("asymmetry", 0))
                if best is None or sch.score < best.score:
                    best = sch
    assert best is not None
    return best


def _dedup(items):
    seen = set()
    out = []
    for score, duals in items:
        key = tuple(duals[-2:])
        if (score, key) in seen:
            continue
        seen.add((score, key))
        out.append((score, duals))
    return out


def provisional_model(regs) -> dict:
    """A stand-in for the bank/operand-cache model: per bank, a value read by the previous
    instruction is in the cache; a bank asked for two different uncached values in one
    instruction stalls a cycle; accumulators (SRC2) are not counted."""
    prev: dict[int, set[int]] = {}
    stalls = hits = reads = 0
    x_reads = y_reads = 0
    for x, y in regs:
        cur: dict[int, set[int]] = {}
        rf: dict[int, set[int]] = {}
        for tag, (acc, s0, s1) in (("X", x), ("Y", y)):
            for r in (s0, s1):
                b = r % 4
                cur.setdefault(b, set()).add(r)
                if r in prev.get(b, ()):
                    hits += 1
                else:
                    rf.setdefault(b, set()).add(r)
                    if tag == "X":
                        x_reads += 1
                    else:
                        y_reads += 1
        for b, rs in rf.items():
            reads += len(rs)
            stalls += len(rs) - 1
        prev = cur
    return {"stalls": stalls, "hits": hits, "rf_reads": reads, "asymmetry": abs(x_reads - y_reads)}
