"""DUAL002: missed dual-issue.

## What it finds
Single VALU instructions with a VOPD form (`v_fmac_f32`, `v_mul_f32`,
`v_add_nc_u32`, `v_mov_b32`, `v_cndmask_b32`, ...) that could issue together
as one `v_dual_*` instruction but do not:

- two singles that are adjacent, or can be moved next to each other without
  crossing a dependency (from the dependency graph), a memory operation, an
  `s_waitcnt` or an `s_delay_alu`, and whose pair is legal (every DUAL001
  constraint, trying both X/Y roles and, for commutative operations, both
  source orders). The finding shows the pair to write and where to move.
- inside a loop, a single that has candidates in its stretch of code but
  cannot pair with any of them: the finding gives the reason, e.g. for a compiled GEMM loop's
  `v_fmac_f32_e32 v124, v184, v192` and `v_fmac_f32_e32 v133, v184, v193`
  "both SRC0 read v184 (bank 0)", and that commuting the sources does not help.

A single FMA inside a loop whose FMA block `isalint fix --dual-fmac` can
rebuild is marked fixable: that pass re-assigns the block's registers (A on
banks 2-3, B on banks 0-1), so that every FMA pairs.

Wave64 kernels are not searched: dual issue is wave32 only.

## Severity
A cost: a pair left single costs one issue cycle per execution, a single that
cannot pair half of one, times how often the code runs (as for BANK001). One
loop's findings are one finding, the instructions listed as its sites. A
**warning** only when the singles include floating-point math (FMAs, f32/f16
multiplies and adds: the work a GEMM loop exists for) and the saving is at least
1% of the kernel's modelled VALU issue cycles; **info** otherwise. Integer
address arithmetic and moves left single are info even in a hot loop: a loop
that is mostly loads and index math waits on memory, not on VALU issue, so a
saved issue cycle there buys nothing. Code outside loops is info.

## Why it matters
A VOPD issues two operations in one cycle. Every single FMA left in a GEMM's
inner loop costs a cycle per iteration that a pair would not; clang 19 leaves
4 of 128 FMAs single in the inner loop of a 128x128-tile GEMM (8x8 per thread).

## Example
```asm
; bad: two independent singles
v_mul_f32_e32 v0, v1, v2
v_add_f32_e32 v3, v4, v5
; good
v_dual_mul_f32 v0, v1, v2 :: v_dual_add_f32 v3, v4, v5
```

## Limits
Pairs are searched among the candidates of one stretch of code in groups of
128 consecutive candidates (the best pairing of a group is exact; a pair that
would span two groups of a longer stretch is not considered), and for at most
4,096 candidates per file: beyond that, LIMIT001 says how many were not
checked. Real kernels stay far below both.

## Fix safety
`isalint fix --dual-fmac` rewrites a whole GEMM FMA block and validates the
result (legal pairs, waits, register budget). Other pairs are suggestions to
apply by hand: the suggested pair is legal and the move crosses no dependency,
but the VGPR bank timing changes (see BANK001).

## Reference
RDNA3 ISA guide, section 7.6 "Dual Issue VALU" (which opcodes have a VOPD form,
the pairing restrictions), and the VOPD encoding.
"""
from __future__ import annotations

import itertools
import operator

from isalint.hw.vopd import _forms, _pairing, dual_name, first_legal_form, format_pair, legality_class
from isalint.model import limits

from .cost import SiteCost, aggregate, fma_loop_fixable

CODE = "DUAL002"
NAME = "missed-dual-issue"
SEVERITY = "warning"
SUMMARY = "Single VALU instructions that could issue as one VOPD (or why they cannot)"
FIXABLE = "--dual-fmac"

WINDOW = 32  # farthest partner considered, in instructions
MATCH_GROUP = 128  # candidates whose best pairing is searched together (the search grows as its cube)
PAIR_CYCLES = 1.0  # two singles issued as one VOPD: one issue cycle saved
SINGLE_CYCLES = 0.5  # a single that another change would pair: half the pair's cycle
_MOVABLE_KLASSES = frozenset({"valu", "trans", "vopd", "salu"})


def _dst_parity(h) -> int | None:
    """0 or 1 for an even or odd destination VGPR, else None. Two halves of the same parity never
    pair: every form of the pair (commuting the sources, swapping X and Y) keeps the destinations."""
    d = h.dst
    return d.reg % 2 if d is not None and d.kind == "vgpr" else None


def _is_fma(h) -> bool:
    return "fma" in h.op


def _edge_index(instrs, region):
    """The region's dependency edges by (src, dst): the pairs a RAW/WAR/WAW edge joins (what stops a
    move), the registers of every edge (what the refusal names), and for each instruction the nearest
    later one that depends on it and the farthest earlier one it depends on. An edge between two of
    the region's instructions depends only on what lies between them, so the region alone is walked,
    with the dependency graph's rules (a read depends on the last write, a write on the reads since the
    last write and on that write)."""
    blocking: set[tuple[int, int]] = set()
    regs: dict[tuple[int, int], list[str]] = {}
    first_after: dict[int, int] = {}
    last_before: dict[int, int] = {}
    last_def: dict[str, int] = {}
    readers: dict[str, list[int]] = {}

    def edge(src: int, dst: int, reg: str) -> None:
        key = (src, dst)
        blocking.add(key)
        regs.setdefault(key, []).append(reg)
        if src not in first_after:  # destinations come in increasing order
            first_after[src] = dst
        if last_before.get(dst, -1) < src:
            last_before[dst] = src

    for i in region:
        ins = instrs[i]
        for reg in ins.uses:
            d = last_def.get(reg)
            if d is not None:
                edge(d, i, reg)
            readers.setdefault(reg, []).append(i)
        for reg in ins.defs:
            for r in readers.get(reg, ()):
                if r != i:
                    edge(r, i, reg)
            d = last_def.get(reg)
            if d is not None and d != i:
                edge(d, i, reg)
            last_def[reg] = i
            readers[reg] = []
    return blocking, regs, first_after, last_before


def _move(first_after, last_before, a: int, b: int) -> int | None:
    """None when ``a`` and ``b`` can be brought together, else the instruction in the way.

    They meet at a cut point between them: ``a`` moves down past what lies above the cut, ``b`` up
    past what lies below it. That works unless the last instruction ``b`` depends on lies below the
    first one that depends on ``a``."""
    first_down = first_after.get(a, b)  # a cannot move below it
    if first_down >= b:
        return None
    last_up = last_before.get(b, a)  # b cannot move above it
    if last_up > a and last_up >= first_down:
        return last_up
    return None


def _float_math(ins) -> bool:
    return any(("_f32" in s.mnemonic or "_f16" in s.mnemonic or "fma" in s.mnemonic) and "cvt" not in s.mnemonic
               for s in ins.stmts)


def check(analysis):
    program = analysis.program
    instrs = program.instrs
    sites = list(_sites(analysis))

    def headline(region, group, cost):
        pairs = sum(1 for s in group if s.cycles == PAIR_CYCLES)
        singles = len(group) - pairs
        parts = []
        if pairs:
            parts.append(f"{pairs} pair{'s' if pairs > 1 else ''} of single VALU instructions could issue as "
                         f"one VOPD{' each' if pairs > 1 else ''}")
        if singles:
            parts.append(f"{singles} single{'s' if singles > 1 else ''} cannot pair as written")
        when = "per iteration" if region.loop is not None else "once per wave"
        saved = cost["cycles_per_execution"]
        return (f"missed dual issue in {region.name}: {' and '.join(parts)} (up to {saved:g} issue "
                f"cycle{'s' if saved != 1 else ''} {when})")

    def eligible(region, group):
        return any(_float_math(instrs[s.index]) for s in group)

    def fix(region, group):
        fmas = all(_is_fma(analysis.vopd_half(s.index)) for s in group)
        return FIXABLE if fmas and region.loop is not None and fma_loop_fixable(analysis, region.loop) else None

    yield from aggregate(analysis, CODE, sites, headline, eligible, fix)


def _sites(analysis):
    program = analysis.program
    instrs = program.instrs
    cfg = analysis.cfg
    budget = max(0, limits.DUAL002_CANDIDATES)
    skipped: list[int] = []
    plans = _PLANS
    # what a region's plan depends on besides its statements: how the file's instructions were
    # decoded (wave64 changes their registers) and the search's bounds
    head = (program.wave64, WINDOW, MATCH_GROUP, PAIR_CYCLES, SINGLE_CYCLES)
    stmts_of = _STMTS_OF
    for region, potential in _regions(analysis):
        if not potential:
            continue
        in_loop = cfg.loop_of(region[0]) is not None
        if len(potential) > budget:
            skipped.extend(potential[budget:])
            potential = potential[:budget]
            budget = 0
            if potential:  # a cut-down search: not what the region's plan holds
                yield from _render(instrs, region[0], _plan(analysis, region, potential, in_loop))
            continue
        budget -= len(potential)
        key = (head, in_loop, tuple(map(id, map(stmts_of, instrs[region[0]:region[-1] + 1]))))
        got = plans.get(key)
        if got is None:
            plan = _plan(analysis, region, potential, in_loop)
            if len(plans) >= _PLANS_MAX:
                plans.clear()
            # the entry keeps the statements alive: no other statement can take their ids
            plans[key] = (tuple(instrs[i].stmts for i in region), plan)
        else:
            plan = got[1]
        if plan:
            yield from _render(instrs, region[0], plan)
    if skipped:
        line = instrs[skipped[0]].lineno
        # the worst finding the unsearched part could have held: a warning needs float math left single
        worst = SEVERITY if any(_float_math(instrs[i]) for i in skipped) else "info"
        limits.record(program, limits.LimitReached(
            "DUAL002's pairing search", f"single VALU instructions from line {line}", line, len(skipped),
            f"it checks at most {limits.DUAL002_CANDIDATES} per file", severity=worst))


def _regions(analysis):
    """The runs of instructions inside one basic block between boundaries (an instruction that is
    opaque, counts on a memory counter or is not VALU/SALU), each as (its consecutive indices, those
    of its single VALU instructions that have a VOPD form: the possible candidates)."""
    program = analysis.program
    instrs = program.instrs
    # VOPD is wave32 only (RDNA3 ISA guide, 7.6): nothing to pair in a wave64 kernel
    wave64 = [(k.first, k.last) for k in program.kernels if k.wave_size == 64]
    movable = _MOVABLE_KLASSES
    duals = _DUAL_NAMES
    for blk in analysis.cfg.blocks:
        first, last = blk.first, blk.last
        if wave64 and any(lo <= first < hi for lo, hi in wave64):
            continue
        start = first
        potential: list[int] = []
        for i, ins in enumerate(instrs[first:last], first):
            klass = ins.klass
            if ins.opaque or ins.counters or klass not in movable:  # a boundary
                if i > start:
                    yield list(range(start, i)), potential
                    potential = []
                start = i + 1
            elif klass == "valu" and len(ins.stmts) == 1:
                op = ins.opcode
                dual = duals.get(op, duals)
                if dual is duals:
                    dual = duals[op] = dual_name(op)
                if dual is not None:
                    potential.append(i)
        if last > start:
            yield list(range(start, last)), potential


def _render(instrs, base: int, plan):
    """The sites of a region's plan, the region starting at instruction ``base``."""
    for rel, cycles, parts in plan:
        i = base + rel
        stmt = instrs[i].stmts[0]
        if type(parts) is not str:
            parts = "".join(p if type(p) is str else
                            (str(instrs[base + p[1]].lineno) if p[0] == "L" else instrs[base + p[1]].text())
                            for p in parts)
        yield SiteCost(i, stmt.col, max(stmt.end_col, stmt.col + 1), parts, cycles)


def _plan(analysis, region, potential, in_loop: bool) -> tuple:
    """The sites of one region as (index relative to the region's first instruction, cycles,
    message), the message a string or a list of strings and ("L", relative index) / ("T", relative
    index) for an instruction's line number / text. It depends on the region's statements alone
    (and on whether it lies in a loop), so it is worked out once per distinct region."""
    instrs = analysis.program.instrs
    # the candidates: the possible ones whose VOPD half is valid
    vopd_half = analysis.vopd_half
    cands = {i: h for i in potential if not (h := vopd_half(i)).problems and h.vopd is not None}
    if not cands:
        return ()
    fma_vopd = any(instrs[i].klass == "vopd" and any("fma" in s.mnemonic for s in instrs[i].stmts)
                   for i in region)
    if len(cands) < 2 and not (fma_vopd and any(_is_fma(h) for h in cands.values())):
        return ()
    lean = _nearest_dependents(instrs, region)
    full: list = []  # _edge_index of the region, made when a message needs it

    def edge_index():
        if not full:
            full.append(_edge_index(instrs, region))
        return full[0]

    pos = {i: n for n, i in enumerate(region)}
    order = sorted(cands)
    out: list = []
    for start in range(0, len(order), MATCH_GROUP):
        group = order[start:start + MATCH_GROUP]
        out.extend(_group_plan(instrs, region, pos, {i: cands[i] for i in group}, group, fma_vopd, in_loop, lean,
                               edge_index))
    return tuple(out)


def _nearest_dependents(instrs, region):
    """The ``first_after`` and ``last_before`` of :func:`_edge_index` alone (what :func:`_move`
    needs), by the same walk."""
    first_after: dict[int, int] = {}
    last_before: dict[int, int] = {}
    last_def: dict[str, int] = {}
    readers: dict[str, list[int]] = {}
    for i in region:
        ins = instrs[i]
        lb = -1
        for reg in ins.uses:
            d = last_def.get(reg)
            if d is not None:
                if d not in first_after:
                    first_after[d] = i
                if d > lb:
                    lb = d
            rs = readers.get(reg)
            if rs is None:
                readers[reg] = [i]
            else:
                rs.append(i)
        for reg in ins.defs:
            rs = readers.get(reg)
            if rs:
                for r in rs:
                    if r != i:
                        if r not in first_after:
                            first_after[r] = i
                        if r > lb:
                            lb = r
            d = last_def.get(reg)
            if d is not None and d != i:
                if d not in first_after:
                    first_after[d] = i
                if d > lb:
                    lb = d
            last_def[reg] = i
            readers[reg] = []
        if lb >= 0:
            last_before[i] = lb
    return first_after, last_before


def _last_dependency(instrs, between: list[int], later) -> int | None:
    """The last of ``between`` (the instructions just above ``later``, in order) that ``later``
    depends on (an edge of :func:`_edge_index`), or None. Scanning up from ``later``, the first
    instruction that writes a register ``later`` reads or writes, or reads one it writes: no
    instruction below it writes that register, so it is the last write before ``later`` or a read
    since that write."""
    writes = set(later.defs)
    touched = writes.union(later.uses)
    for k in reversed(between):
        ins = instrs[k]
        if any(r in touched for r in ins.defs) or any(r in writes for r in ins.uses):
            return k
    return None


def _group_plan(instrs, region, pos, cands, order, fma_vopd, in_loop, lean, edge_index):
    """The plan (see :func:`_plan`) of the candidates ``order`` (sorted) of one region."""
    base = region[0]
    first_after, last_before = lean
    forms: dict[int, list] = {}  # the forms of a candidate (commuted or not), once tried

    def pairing(a, b, stop=False):
        # a pairing depends on the two statements alone, and the parser gives every line of one text
        # the same statements: worked out once per pair of texts (kept alive by the entry)
        sa, sb = instrs[a].stmts[0], instrs[b].stmts[0]
        key = (id(sa), id(sb), stop)
        known = _PAIRINGS.get(key)
        if known is not None and known[0] is sa and known[1] is sb:
            return known[2]
        for i in (a, b):
            if i not in forms:
                forms[i] = _forms(cands[i])
        p = _pairing(cands[a], cands[b], forms[a], forms[b], stop=stop)
        if len(_PAIRINGS) >= _MEMO_MAX:
            _PAIRINGS.clear()
        _PAIRINGS[key] = (sa, sb, p)
        return p

    def line(i):
        return ("L", i - base)

    def text(i):
        return ("T", i - base)

    # Legal, movable pairs among the singles, then a maximum matching of them. A pair of the window
    # that is not an option is refused: by the instruction in the way (_move), else by its pairing
    # (the destination parity rule or another), worked out when a message needs it.
    options: dict[tuple[int, int], object] = {}
    parity = {i: _dst_parity(cands[i]) for i in order}
    facts = {i: _pair_facts(cands[i]) for i in order}
    legal_forms = _LEGAL_FORMS
    for n, a in enumerate(order):
        pa = parity[a]
        fa = facts[a]
        for b in order[n + 1:]:
            if b - a > WINDOW:
                break
            if pa is not None and pa == parity[b]:
                continue  # every form breaks the destination parity rule
            if _move(first_after, last_before, a, b) is not None:
                continue  # an instruction in the way
            fb = facts[b]
            if fa[1] is None or fb[1] is None:  # no legality class: the pairing itself
                p = pairing(a, b, stop=True)
                if p.legal:
                    options[(a, b)] = p.text
                continue
            if fa[3] is not None and fa[3] in fb[4]:
                continue  # b reads what a writes: no form is legal (the dependency rule)
            key = (fa[1], fb[1])
            got = legal_forms.get(key, legal_forms)
            if got is legal_forms:
                got = first_legal_form(fa[2], fb[2])
                if len(legal_forms) >= _MEMO_MAX:
                    legal_forms.clear()
                legal_forms[key] = got
            if got is not None:
                options[(a, b)] = (fa[0], fb[0], got)
    matched = _match(options)
    out: list = []
    paired: set[int] = set()
    for a, b in matched:
        p = options[(a, b)]
        if type(p) is not str:
            forms_a, forms_b, (ia, ib, swap) = p
            x, y = forms_a[ia], forms_b[ib]
            p = format_pair(y, x) if swap else format_pair(x, y)
        paired.update((a, b))
        lo, hi = pos[a] + 1, pos[b]
        if lo >= hi:
            where = ["adjacent"]
        else:
            k = _last_dependency(instrs, region[lo:hi], instrs[b])
            if k is None:
                where = ["move line ", line(b), " up next to line ", line(a)]
            else:
                where = ["move line ", line(a), " down below line ", line(k), " and line ", line(b),
                         " up to it"]
        out.append((a - base, PAIR_CYCLES, ["with line ", line(b), " (", text(b), "): can issue as one VOPD (",
                                            *where, "): ", p]))
    if not in_loop:
        return out  # outside loops only the pairs are worth a note
    for n, i in enumerate(order):
        if i in paired:
            continue
        h = cands[i]
        if len(order) < 2:
            if not (_is_fma(h) and fma_vopd):
                continue
            out.append((i - base, SINGLE_CYCLES, "stays single: no other single VALU instruction between the "
                                                 "boundaries around it to pair with"))
            continue
        j = _nearest(order, n)
        key = x, y = (min(i, j), max(i, j))
        if key in options:
            other = next(b if a == j else a for a, b in matched if j in (a, b))
            why = ["line ", line(j), " is paired with line ", line(other), " instead"]
        elif y - x > WINDOW:
            why = ["line ", line(j), f" is more than {WINDOW} instructions away"]
        else:
            k = _move(first_after, last_before, x, y)
            if k is None:
                why = [pairing(*key).reason()]
            else:
                edge_regs = edge_index()[1]
                regs = sorted(set(edge_regs.get((k, y), ())) | set(edge_regs.get((x, k), ())))
                why = ["they cannot be brought together: line ", line(k), " sits between them with a "
                       f"dependency ({', '.join(regs) or 'registers'})"]
        out.append((i - base, SINGLE_CYCLES, ["cannot pair with line ", line(j), " (", text(j), "): ", *why]))
    return out


def _pair_facts(h):
    """(forms, legality class id, classes of the forms, the VGPR it writes, the VGPRs it reads) of a
    candidate's half (see :func:`isalint.hw.vopd.first_legal_form`), once per half: the id None when
    a form has no class. The registers are the dependency rule's: no form of two halves is legal when
    the later one reads the VGPR the earlier one writes."""
    got = _FACTS.get(id(h))
    if got is not None and got[0] is h:
        return got[1]
    forms = _forms(h)
    classes = tuple(legality_class(f) for f in forms)
    d = h.dst
    writes = d.name if d is not None and d.kind == "vgpr" else None
    reads = frozenset(s.name for s in h.positions if s is not None and s.kind == "vgpr")
    if any(c is None for c in classes):
        facts = (forms, None, classes, writes, reads)
    else:
        cid = _CLASS_IDS.get(classes)
        if cid is None:
            if len(_CLASS_IDS) >= _MEMO_MAX:
                _CLASS_IDS.clear()  # ids are never given twice: what is keyed by the old ones stays right
            cid = _CLASS_IDS[classes] = next(_NEW_CLASS_ID)
        facts = (forms, cid, classes, writes, reads)
    if len(_FACTS) >= _MEMO_MAX:
        _FACTS.clear()
    _FACTS[id(h)] = (h, facts)  # the entry keeps the half alive: no other half can take its id
    return facts


def _nearest(order: list[int], n: int) -> int:
    """The candidate nearest to ``order[n]`` (the earlier one on a tie)."""
    i = order[n]
    around = [order[k] for k in (n - 1, n + 1) if 0 <= k < len(order)]
    return min(around, key=lambda j: (abs(j - i), j))


# pure-speed memos: the pairings of two statements, and the best matching of a graph of options
_PAIRINGS: dict[tuple, tuple] = {}
_MATCHINGS: dict[tuple, list] = {}
_MEMO_MAX = 1 << 17  # a library's worth of kernels: a worker sees ~50,000 distinct pairs per million instructions
# the plan of a region (see _plan) by its statements: a library's kernels repeat most of their regions
_PLANS: dict[tuple, tuple] = {}
_PLANS_MAX = 1 << 15
_STMTS_OF = operator.attrgetter("stmts")
_DUAL_NAMES: dict[str, str | None] = {}  # dual_name of an opcode
_FACTS: dict[int, tuple] = {}  # _pair_facts of a half, by the half's id
_CLASS_IDS: dict[tuple, int] = {}  # the legality classes of a half's forms -> a small id
_NEW_CLASS_ID = itertools.count()
_LEGAL_FORMS: dict[tuple[int, int], tuple | None] = {}  # first_legal_form by the two halves' class ids


def _match(options) -> list[tuple[int, int]]:
    """A maximum set of disjoint pairs: as many pairs as possible, then the smallest total
    distance between partners; among equally good sets the one whose sorted list of pairs is
    smallest (each instruction takes the nearest partner it can).

    Every set of pairs has a weight of its own (see :func:`_component_match`), so the best set is
    unique, and it is the union of the best sets of the graph's connected components: each is
    matched alone, and a component of the same shape as one seen before (the same edges, shifted)
    takes that one's matching."""
    if not options:
        return []
    adj: dict[int, list[int]] = {}
    for a, b in options:
        adj.setdefault(a, []).append(b)
        adj.setdefault(b, []).append(a)
    seen: set[int] = set()
    out: list[tuple[int, int]] = []
    for root in sorted(adj):
        if root in seen:
            continue
        seen.add(root)
        members, stack = [root], [root]
        while stack:
            for u in adj[stack.pop()]:
                if u not in seen:
                    seen.add(u)
                    members.append(u)
                    stack.append(u)
        base = min(members)
        edges = sorted((a, b) for a in members for b in adj[a] if a < b)
        if len(edges) == 1:
            out.extend(edges)
            continue
        shape = tuple((a - base, b - base) for a, b in edges)
        rel = _MATCHINGS.get(shape)
        if rel is None:
            rel = [(a - base, b - base) for a, b in _component_match(edges)]
            if len(_MATCHINGS) >= _MEMO_MAX:
                _MATCHINGS.clear()
            _MATCHINGS[shape] = rel
        out.extend((a + base, b + base) for a, b in rel)
    return sorted(out)


def _component_match(edges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """:func:`_match` of one connected graph of options (``edges`` sorted)."""
    adj: dict[int, list[int]] = {}
    for a, b in edges:
        adj.setdefault(a, []).append(b)
        adj.setdefault(b, []).append(a)
    # No pair is nearer than the nearest of the graph (``near``) apart: when the pairs that near alone
    # hold as many disjoint pairs as the graph can (half its vertices), those are the best set. They
    # make chains v, v + near, v + 2 * near, ...; taking their pairs from the left pairs up every
    # chain of even length the one way it can and leaves out the last vertex of a chain of odd
    # length, the set whose sorted list of pairs is smallest (with vertices that many, at most one
    # chain is odd).
    near = min(b - a for a, b in edges)
    taken: list[tuple[int, int]] = []
    used: set[int] = set()
    if near < 999:  # farther ones all weigh as 999 apart
        for a, b in edges:
            if b - a == near and a not in used and b not in used:
                taken.append((a, b))
                used.add(a)
                used.add(b)
    if len(taken) == len(adj) // 2:
        return taken
    # Partners always have one even and one odd destination (DUAL001's parity rule), so the
    # graph of options is bipartite: colour it.
    side: dict[int, int] = {}
    for root in adj:
        if root in side:
            continue
        side[root] = 0
        stack = [root]
        while stack:
            v = stack.pop()
            for u in adj[v]:
                if u not in side:
                    side[u] = 1 - side[v]
                    stack.append(u)
                elif side[u] == side[v]:
                    raise ValueError("DUAL002: pairing options are not bipartite")
    # One weight per pair that orders matchings by (pairs, -distance, earliest pairs): the
    # distance term outweighs any sum of tie-breaking bits, the pair term any sum of both.
    m = len(edges)
    unit = 1 << m
    big = (1000 * len(adj) + 1) * unit
    weight = {e: big - min(999, e[1] - e[0]) * unit + (1 << (m - 1 - r)) for r, e in enumerate(edges)}
    return sorted(_max_weight_bipartite(adj, side, weight))


def _max_weight_bipartite(adj, side, weight) -> list[tuple[int, int]]:
    """Maximum-weight matching of a bipartite graph whose heavier matchings always have more
    pairs: successive shortest augmenting paths (cost = -weight), Dijkstra on reduced costs."""
    import heapq

    def cost(u, v):
        return -weight[(u, v) if u < v else (v, u)]

    # each left vertex's edges with their costs, in the order of its neighbours (the order the
    # search relaxes them in), and the cost of each edge from its left end
    out_costs = {x: [(v, cost(x, v)) for v in adj[x]] for x in adj if not side[x]}
    costs = {x: dict(edges) for x, edges in out_costs.items()}
    heappop, heappush = heapq.heappop, heapq.heappush
    right = [v for v in adj if side[v]]
    mate: dict[int, int] = {}
    # Potentials keep every reduced cost >= 0: 0 on the left (and the source), the cheapest
    # edge on the right, the cheapest of those at the sink.
    pot = {v: (min(cost(u, v) for u in adj[v]) if side[v] else 0) for v in adj}
    sink_pot = min(pot[v] for v in right)
    while True:
        dist: dict[int, int] = {}
        best: dict[int, int] = {}
        prev: dict[int, int] = {}
        heap = [(0, u) for u in adj if not side[u] and u not in mate]
        for _, u in heap:
            best[u] = 0
        heapq.heapify(heap)
        end = None  # (distance to the sink, free right vertex) of the best path found so far
        while heap:
            d, x = heappop(heap)
            if x in dist:
                continue
            if end is not None and d > end[0]:
                break  # nothing farther can end a shorter (or equally short, smaller) path
            dist[x] = d
            if side[x]:
                u = mate.get(x)
                if u is None:
                    here = (d + pot[x] - sink_pot, x)
                    if end is None or here < end:
                        end = here
                    continue
                if u not in dist:  # back along the matched edge
                    nd = d - costs[u][x] + pot[x] - pot[u]
                    known = best.get(u)
                    if known is None or nd < known:
                        best[u], prev[u] = nd, x
                        heappush(heap, (nd, u))
            else:
                mx, base = mate.get(x), d + pot[x]
                for v, c in out_costs[x]:
                    if v == mx or v in dist:
                        continue
                    nd = base + c - pot[v]
                    known = best.get(v)
                    if known is None or nd < known:
                        best[v], prev[v] = nd, x
                        heappush(heap, (nd, v))
        if end is None:
            break
        to_sink, v = end
        while True:  # flip the path: each left vertex takes the right one after it
            u = prev[v]
            nxt = mate.get(u)
            mate[u], mate[v] = v, u
            if nxt is None:
                break
            v = nxt
        # Johnson's update cut at the sink's distance (what the search stopped at): every
        # reduced cost stays >= 0
        for x in pot:
            pot[x] += dist.get(x, to_sink)
        sink_pot += to_sink
    return [(min(u, v), max(u, v)) for u, v in mate.items() if not side[u]]
