"""The proof: which lane loads which 16 bytes, and where its four words go in LDS.

For one copy (:mod:`.copies`) of a workgroup of 4 waves, every old load ``j`` fetches one word per
work-item ``t`` from ``S_j + V(t)``: ``S_j`` its SGPR base, ``V`` the shared VGPR offset, whose value
the affine evaluator gives as ``U + lambda(t)`` (``U`` the same in every lane, ``lambda`` the per-lane
part, a polynomial in the kernel's arguments once the lane's id is put in). The words of one old load
fall into 32 runs of 4 consecutive words (``lambda`` of the next word is 4 more); run ``l`` (in
address order) becomes lane ``l``'s 16 bytes. Wave ``w``'s ``q``-th new load reads from the base of
old load ``order[q * 4 + w]`` (old loads ordered by where their first word goes in LDS), so:

* the new offset of lane ``t`` is ``V(t) + mu(t)`` with ``mu(t) = lambda(run start) - lambda(t)``, the
  same for every ``q`` (every old load of the copy shares ``lambda``);
* each of the 4 words lands where the old store of that word put it (the lane evaluator gives those
  addresses: a per-lane number plus wave-uniform terms that must be the same for every word of the
  copy, so that differences are exact). The new store address is one old store's address register
  plus ``nu(t)``; the rest must be offsets the same in every lane, so that they can be instruction
  offsets (``ds_store_b128 ... offset:N`` when the 4 words are consecutive and 16-byte aligned,
  else ``ds_store_2addr_b32`` pairs from one base per 1 KiB window).

``mu`` and ``nu`` must be affine in the bits of the work-item id (:mod:`.lanefn`), each term of ``mu``
a multiple of a kernel argument some SGPR holds before the loop. The new offsets are old offsets of
other lanes, so they stay in the range the input's own offsets keep (the input is exact where its
32-bit offsets do not wrap, and so is the output).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...model.affine.evaluator import AffineEvaluator
from ...model.affine.poly import Poly
from ...model.lanes.evaluator import LaneEvaluator
from .. import FixRefused
from . import lanefn
from .copies import Copy, where

WAVES = 4  # a workgroup of 128 work-items: each old load's 128 words are one wave-load of 16-byte pieces
WAVE = 32


@dataclass
class StoreOp:
    kind: str  # b128 | 2addr | b32
    window: int  # byte offset of the base register used, from the new store address register
    words: list[tuple[int, int]]  # (q, e) of each word stored, in operand order
    offsets: list[int]  # byte offsets from that base (one per word)


@dataclass
class CopyPlan:
    copy: Copy
    loads: int  # new loads per lane (Q)
    order: list[int]  # old load indices, in the order of their first word's LDS address
    imm: int  # the loads' offset: field
    runs: list[list[int]]  # run l: the 4 lanes whose words it holds, in address order
    mu: dict[tuple, lanefn.LaneFunction]  # monomial of kernel arguments -> its per-lane factor
    mu_sgpr: dict[tuple, str]  # monomial -> the SGPR holding it before the loop
    addr_reg: str  # the old store address register the new one starts from
    nu: lanefn.LaneFunction
    stores: list[StoreOp] = field(default_factory=list)
    expected_lds: dict[tuple[int, int, int], int] = field(default_factory=dict)  # (t, q, e) -> byte address
    lds_terms: tuple = ()
    offset_polys: list = field(default_factory=list)  # per work-item: U + lambda(its run's start), the new V


def threads_of(kernel) -> int:
    md = kernel.metadata or {}
    reqd = md.get(".reqd_workgroup_size")
    if reqd:
        return int(reqd[0]) * int(reqd[1]) * int(reqd[2])
    return int(md.get(".max_flat_workgroup_size", 1024))


def plan_copy(analysis, loop, kernel, copy: Copy, at: int) -> CopyPlan:
    program = analysis.program
    first = copy.elements[0].load
    threads = threads_of(kernel)
    if threads != WAVES * WAVE or (kernel.descriptor or {}).get(".amdhsa_system_vgpr_workitem_id", 0):
        raise FixRefused(f"{where(program, first)}: the copy is re-tiled for one-dimensional workgroups of "
                         f"{WAVES * WAVE} work-items; this kernel's have {threads}")
    n = len(copy.elements)
    if n % 4 or n // 4 * WAVES != n:
        raise FixRefused(f"{where(program, first)}: the copy has {n} words per work-item; 4 are needed (one per "
                         f"wave) for each 16-byte load of a lane")
    imms = {e.offset for e in copy.elements}
    if len(imms) != 1:
        raise FixRefused(f"{where(program, first)}: the copy's loads have different offset: fields")
    bases = [e.base for e in copy.elements]
    if len(set(bases)) != n:
        raise FixRefused(f"{where(program, first)}: two loads of the copy share an SGPR base")
    ev = AffineEvaluator(program, kernel, loop)
    lam, uniform = _lane_offsets(program, ev, copy)
    runs = _runs(program, copy, lam)
    lanes = LaneEvaluator(program, kernel)
    lds, terms = _old_lds(program, lanes, copy)
    order = sorted((e.load for e in copy.elements), key=lambda i: (lds[i][0], i))
    plan = CopyPlan(copy, n // WAVES, order, imms.pop(), runs, {}, {}, "", lanefn.LaneFunction(0, ()))
    plan.lds_terms = terms
    start = [lam[runs[t % WAVE][0]] for t in range(threads)]
    plan.offset_polys = [uniform + s for s in start]
    _mu(program, ev, plan, lam, start, at)
    _nu(program, lanes, plan, lds, terms, at)
    return plan


def _lane_offsets(program, ev, copy: Copy) -> tuple[list[Poly], Poly]:
    """lambda(t) for every work-item (a polynomial over uniform atoms), and U."""
    first = copy.elements[0].load
    w = ev.word(copy.offset_reg, first)
    if not w.known or w.kind != "low":
        raise FixRefused(f"{where(program, first)}: the offset {copy.offset_reg} of the copy is not a value isalint "
                         f"can follow: {w.reason or w.kind}")
    for e in copy.elements[1:]:
        other = ev.word(copy.offset_reg, e.load)
        if not other.known or other.poly != w.poly:
            raise FixRefused(f"{where(program, e.load)}: {copy.offset_reg} changes between the loads of the copy")
    lane_atoms = {a for a in w.poly.atoms() if ev.atoms[a].kind == "lane"}
    lam_poly, uniform = w.poly.split(lambda m: any(a in lane_atoms for a in m))
    threads = len(ev.atoms[next(iter(lane_atoms))].values) if lane_atoms else WAVES * WAVE
    lam = []
    for t in range(threads):
        lam.append(lam_poly.substitute({a: ev.atoms[a].values[t] for a in lane_atoms}))
    return lam, uniform


def _key(p: Poly):
    return tuple(sorted((m, c) for m, c in p.terms if m)), p.constant


def _runs(program, copy: Copy, lam: list[Poly]) -> list[list[int]]:
    first = copy.elements[0].load
    index = {}
    for t, p in enumerate(lam):
        if p in index:
            raise FixRefused(f"{where(program, first)}: work-items {index[p]} and {t} load the same word")
        index[p] = t
    taken: set[int] = set()
    runs = []
    for t in sorted(range(len(lam)), key=lambda t: _key(lam[t])):
        if t in taken:
            continue
        run = [index.get(lam[t] + 4 * e) for e in range(4)]
        if None in run or taken & set(run):
            raise FixRefused(f"{where(program, first)}: the words of '{program.instrs[first].text()}' do not fall "
                             "into runs of 4 consecutive words (one 16-byte load per lane)")
        taken |= set(run)
        runs.append(run)
    runs.sort(key=lambda r: _key(lam[r[0]]))
    return runs


def _old_lds(program, lanes, copy: Copy):
    """Per old load: the LDS byte address its word of each work-item goes to; the uniform terms."""
    out, terms = {}, None
    for e in copy.elements:
        acc = lanes.lds_access(program.instrs[e.store])
        if acc is None or not hasattr(acc, "addresses"):
            reason = getattr(acc, "reason", None) or "not a DS store isalint understands"
            raise FixRefused(f"{where(program, e.store)}: the LDS address of '{program.instrs[e.store].text()}' is not "
                             f"known per work-item: {reason}")
        if terms is None:
            terms = acc.terms
        elif acc.terms != terms:
            raise FixRefused(f"{where(program, e.store)}: the LDS addresses of the copy's stores differ by amounts "
                             "isalint cannot compute (different wave-uniform parts)")
        out[e.load] = list(acc.addresses[e.slot])
    return out, terms


def _sgpr_holding(ev, atom: str, at: int) -> str | None:
    want = Poly.atom(atom)
    for n in range(106):
        w = ev.word(f"s{n}", at)
        if w.known and w.kind == "low" and w.poly == want:
            return f"s{n}"
    return None


def _mu(program, ev, plan: CopyPlan, lam, start, at: int) -> None:
    first = plan.copy.elements[0].load
    mus = [start[t] - lam[t] for t in range(len(lam))]
    monos = sorted({m for p in mus for m, _ in p.terms})
    for m in monos:
        factors = [dict(p.terms).get(m, 0) for p in mus]
        f = lanefn.fit(factors)
        if f is None:
            raise FixRefused(f"{where(program, first)}: the new offsets differ from the old by a per-lane amount that "
                             "is not affine in the bits of the work-item id")
        if m:
            if len(m) != 1:
                raise FixRefused(f"{where(program, first)}: the new offsets need a product of kernel arguments")
            reg = _sgpr_holding(ev, m[0], at)
            if reg is None:
                raise FixRefused(f"{where(program, first)}: no SGPR holds {ev.atoms[m[0]].origin} before the loop, "
                                 "which the new offsets are a multiple of")
            plan.mu_sgpr[m] = reg
        plan.mu[m] = f


def _nu(program, lanes, plan: CopyPlan, lds, terms, at: int) -> None:
    copy = plan.copy
    store0 = copy.elements[0].store
    addr = next(s for s in program.instrs[store0].slots[0] if s.name == "addr").regs[0]
    v = lanes.value(addr, store0)
    if not v.known or v.terms != terms:
        raise FixRefused(f"{where(program, store0)}: the store address {addr} is not known per work-item")
    before = lanes.value(addr, at)
    if not before.known or before.lanes != v.lanes or before.terms != v.terms:
        raise FixRefused(f"{where(program, store0)}: {addr} does not hold the store address before the loop")
    plan.addr_reg = addr
    threads = len(v.lanes)
    base_of = {}  # t -> LDS address of word (q=0, e=0)
    offs: dict[tuple[int, int], int] = {}
    for t in range(threads):
        w, l = divmod(t, WAVE)
        for q in range(plan.loads):
            j = plan.order[q * WAVES + w]
            for e in range(4):
                a = lds[j][plan.runs[l][e]]
                plan.expected_lds[(t, q, e)] = a
                if (q, e) == (0, 0):
                    base_of[t] = a
                off = a - base_of[t]
                if offs.setdefault((q, e), off) != off:
                    raise FixRefused(f"{where(program, store0)}: the new stores' offsets would differ between "
                                     "work-items; they cannot be instruction offsets")
    nu = lanefn.fit([base_of[t] - v.lanes[t] for t in range(threads)])
    if nu is None:
        raise FixRefused(f"{where(program, store0)}: the new LDS addresses differ from {addr} by a per-lane amount "
                         "that is not affine in the bits of the work-item id")
    plan.nu = nu
    aligned = all(base_of[t] % 16 == 0 for t in range(threads)) and lanes.tz(terms) >= 4
    plan.stores = _store_ops(plan.loads, offs, aligned)


def _store_ops(loads: int, offs: dict[tuple[int, int], int], aligned: bool) -> list[StoreOp]:
    ops: list[StoreOp] = []
    scatter = []
    for q in range(loads):
        o = [offs[(q, e)] for e in range(4)]
        if aligned and all(o[e] == o[0] + 4 * e for e in range(4)) and o[0] % 16 == 0 and 0 <= o[0] < 65536:
            ops.append(StoreOp("b128", 0, [(q, e) for e in range(4)], [o[0]]))
        else:
            scatter += [((q, e), o[e]) for e in range(4)]
    scatter.sort(key=lambda x: x[1])
    while scatter:
        window = scatter[0][1]
        inside = [x for x in scatter if x[1] - window < 1024]
        scatter = scatter[len(inside):]
        for k in range(0, len(inside) - 1, 2):
            (w0, o0), (w1, o1) = inside[k], inside[k + 1]
            ops.append(StoreOp("2addr", window, [w0, w1], [o0 - window, o1 - window]))
        if len(inside) % 2:
            w0, o0 = inside[-1]
            ops.append(StoreOp("b32", window, [w0], [o0 - window]))
    return ops
