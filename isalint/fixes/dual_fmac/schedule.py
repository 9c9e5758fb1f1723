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
  operand-cache model (:mod:`isalint.hw.vgpr_banks`);
* walks that consume the LDS data in the order it is loaded are preferred: an FMA may only wait
  for the loads it reads, so early blocks should read early loads.

A loop body with several outer products in a row (an unrolled k loop) repeats the same order
for each; their values alternate between two register sets, so the loads of product k+2 can be
issued while product k+1 is computed.

The accumulators get registers afterwards: the two destinations of a dual instruction must
differ in parity. The parity constraints of all the products form a graph that must be
two-coloured; each accumulator keeps its old register when that is free and of its colour,
and otherwise takes the lowest free register of that parity.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...model.fma_block import FmaBlock, Phase
from .. import FixRefused


@dataclass
class Layout:
    a_bank: int  # bank of the first register of every A pair (B pairs start at a_bank ^ 2)
    sets: int  # register sets the products' values alternate between
    pair_reg: dict[tuple[int, str, int], int]  # (set, side, pair index) -> first VGPR
    acc_reg: dict[tuple[int, int], int] = field(default_factory=dict)  # (A index, B index) -> VGPR

    def value_reg(self, phase: int, side: str, index: int) -> int:
        return self.pair_reg[(phase % self.sets, side, index // 2)] + index % 2


@dataclass(frozen=True)
class Half:
    ai: int  # index of the A value in its product (pair ai // 2, position ai % 2)
    bi: int
    a_first: bool  # SRC0 is the A value (else the B value)

    @property
    def cell(self) -> tuple[int, int]:
        return (self.ai, self.bi)


@dataclass
class Schedule:
    duals: list[tuple[Half, Half]]  # (X, Y) per instruction, for one outer product
    walk: list[tuple[int, int]]
    name: str = ""
    score: tuple = ()
    model: dict = field(default_factory=dict)


def pair_counts(fb: FmaBlock) -> tuple[int, int]:
    """(A pairs, B pairs) per product (detection guarantees the values come in 64-bit pairs)."""
    ph = fb.phases[0]
    return len(ph.a_values) // 2, len(ph.b_values) // 2


def pair_of_load(phase: Phase, fb: FmaBlock, load_order: int, dword: int) -> tuple[str, int]:
    """(side, pair index in the product) of the pair holding ``dword`` of a load."""
    for side, values in (("A", phase.a_values), ("B", phase.b_values)):
        for n, v in enumerate(values):
            if v.load == load_order and v.dword == dword:
                return side, n // 2
    raise KeyError((load_order, dword))


# --------------------------------------------------------------------------------------------
# Register allocation

def choose_value_registers(fb: FmaBlock, pool: set[int], a_bank: int, limit: int, sets: int,
                           tiers: list[set[int]]) -> dict[tuple, int] | None:
    """First registers of every A and B pair of every set below ``limit``, or None.

    Pairs go first to the registers of ``tiers[0]`` (those only the loaded values can use),
    then ``tiers[1]`` (the loop's old value registers), then to the highest free registers,
    so the low registers stay for the accumulators.
    """
    p, q = pair_counts(fb)
    b_bank = a_bank ^ 2

    def tier(r: int) -> int:
        for n, t in enumerate(tiers):
            if r in t and r + 1 in t:
                return n
        return len(tiers)

    out: dict[tuple, int] = {}
    for side, count, bank in (("A", p, a_bank), ("B", q, b_bank)):
        cands = [r for r in range(bank, limit - 1, 4) if r in pool and r + 1 in pool]
        cands.sort(key=lambda r: (tier(r), -r))
        if len(cands) < count * sets:
            return None
        chosen = sorted(cands[: count * sets])
        for n, r in enumerate(chosen):
            out[(n // count, side, n % count)] = r
    return out


def assign_accumulators(fb: FmaBlock, sched: Schedule, pool: set[int]) -> dict[tuple, int] | None:
    """A register for every accumulator so that the two destinations of each dual differ in parity.

    The duals are the same in every product, so the parity constraints are those of one
    product; each connected group of them takes the colouring that keeps the most accumulators
    in their old registers. Returns None if the pool is short.
    """
    old = fb.old_accs()
    adj: dict[tuple, list[tuple]] = {}
    for x, y in sched.duals:
        adj.setdefault(x.cell, []).append(y.cell)
        adj.setdefault(y.cell, []).append(x.cell)
    parity: dict[tuple, int] = {}
    for start in adj:
        if start in parity:
            continue
        comp = {start: 0}
        stack = [start]
        while stack:
            c = stack.pop()
            for d in adj[c]:
                if d not in comp:
                    comp[d] = 1 - comp[c]
                    stack.append(d)
                elif comp[d] == comp[c]:
                    raise FixRefused("the accumulators cannot be split into even and odd registers for this order")
        keep = sum(1 for c, col in comp.items() if old[c] in pool and old[c] % 2 == col)
        flip = 1 if keep * 2 < sum(1 for c in comp if old[c] in pool) else 0
        for c, col in comp.items():
            parity[c] = col ^ flip
    out: dict[tuple, int] = {}
    used: set[int] = set()
    for cell, par in parity.items():
        r = old[cell]
        if r % 2 == par and r in pool and r not in used:
            out[cell] = r
            used.add(r)
    for par in (0, 1):
        rest = sorted(r for r in pool if r % 2 == par and r not in used)
        missing = [c for c, p in parity.items() if p == par and c not in out]
        if len(rest) < len(missing):
            return None
        for cell, r in zip(missing, rest):
            out[cell] = r
            used.add(r)
    return out


# --------------------------------------------------------------------------------------------
# Block walks and variants

def _walks(p: int, q: int) -> dict[str, list[tuple[int, int]]]:
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


def _block_duals(i: int, j: int, variant, a_first: bool) -> list[tuple[Half, Half]]:
    a = (2 * i, 2 * i + 1)
    b = (2 * j, 2 * j + 1)
    d0 = [(a[0], b[0]), (a[1], b[1])]
    d1 = [(a[0], b[1]), (a[1], b[0])]
    first, x1, x2 = variant
    duals = [d0, d1] if first == 0 else [d1, d0]
    out = []
    for d, xsel in zip(duals, (x1, x2)):
        x, y = d[xsel], d[1 - xsel]
        out.append((Half(x[0], x[1], a_first), Half(y[0], y[1], a_first)))
    return out


def dual_regs(duals, layout: Layout, phase: int = 0) -> list[tuple[tuple[int, int, int], tuple[int, int, int]]]:
    """(acc, src0, src1) VGPR numbers of X and Y for each dual (acc -1 when not yet assigned)."""
    out = []
    for x, y in duals:
        out.append((_half_regs(x, layout, phase), _half_regs(y, layout, phase)))
    return out


def _half_regs(h: Half, layout: Layout, phase: int) -> tuple[int, int, int]:
    a = layout.value_reg(phase, "A", h.ai)
    b = layout.value_reg(phase, "B", h.bi)
    acc = layout.acc_reg.get(h.cell, -1)
    return (acc, a, b) if h.a_first else (acc, b, a)


def search(fb: FmaBlock, layout: Layout, model, wait_cost, *, beam: int = 16) -> Schedule:
    """The best schedule over the walks and per-block variants.

    ``model(regs)`` scores a list of dual instructions given as ``dual_regs`` tuples and
    returns a dict with at least ``stalls`` and ``hits``. The beam search extends a block at a
    time and scores the extension on a short window (the model's state only depends on the last
    instructions); the finished candidates are ranked on the whole loop body by (stalls, LDS
    wait cost, -cache hits, X/Y read asymmetry).
    """
    p, q = pair_counts(fb)
    n_phases = len(fb.phases)
    best: Schedule | None = None
    window = 2
    for name, walk in _walks(p, q).items():
        for a_first in (True, False):
            states: list[tuple[tuple, list]] = [((0, 0), [])]
            for (i, j) in walk:
                nxt = []
                for score, duals in states:
                    ctx = dual_regs(duals[-window:], layout)
                    base = model(ctx) if ctx else {"stalls": 0, "hits": 0}
                    for v in VARIANTS:
                        new = _block_duals(i, j, v, a_first)
                        m = model(ctx + dual_regs(new, layout))
                        inc = (m["stalls"] - base["stalls"], -(m["hits"] - base["hits"]))
                        nxt.append(((score[0] + inc[0], score[1] + inc[1]), duals + new))
                nxt.sort(key=lambda t: t[0])
                states = _dedup(nxt)[:beam]
            for _, duals in states[:4]:
                sch = Schedule(duals, walk, f"{name}, SRC0={'A' if a_first else 'B'}")
                regs = [r for k in range(n_phases) for r in dual_regs(duals, layout, k)]
                m = model(regs)
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
        key = (score, tuple(duals[-2:]))
        if key in seen:
            continue
        seen.add(key)
        out.append((score, duals))
    return out
