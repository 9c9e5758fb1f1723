"""Cycle-level simulation of the waves that share one SIMD.

What is modelled (parameters in :mod:`isalint.hw.timing`):

* **Issue.** A wave issues at most one instruction per cycle, in order. Across the waves of the
  SIMD, ``issue_per_cycle`` decides how many issue together: by default (5) the rule AMD documents
  for its scheduler and SQ thread traces of a 7900 XTX show - at most one instruction per category
  per cycle, each from a different wave, the categories being VALU (a VOPD pair is one VALU
  instruction), SALU and scalar memory (one category: SMEM does not issue separately from the SALU),
  LDS, vector memory, branch, and messages/other; with 1 the SIMD issues one instruction per cycle,
  whatever its unit. ``s_waitcnt``, ``s_nop``, ``s_barrier`` and the hints are internal: they take no
  category. Ready waves are chosen in round-robin order (the scan starts after the wave that last
  issued to the VALU). The sources: ``issue_per_cycle`` in :mod:`isalint.hw.timing`.
* **VALU.** One instruction per cycle; a VOPD pair is one instruction. A VGPR-bank stall
  (:mod:`isalint.hw.vgpr_banks`) keeps the VALU busy ``bank_stall_exposure`` of its cycles; quarter-rate
  ops keep it busy 4 cycles. A result can be read ``valu_latency`` cycles after issue (6 for 64-bit
  results, 8 for quarter-rate ops, 10 for transcendental ones), by an LDS or vector memory
  instruction ``valu_memory_latency`` cycles after issue: a dependent instruction waits, and the
  SIMD issues for other waves meanwhile.
* **ALU dependencies.** A wave whose next instruction reads an ALU result still in flight waits
  while the SIMD issues other waves' instructions - when an ``s_delay_alu`` names the dependency.
  When none does (:mod:`isalint.model.alu_delays`), the front end stays with the wave that just
  issued and issues that instruction into the ALU: the whole SIMD stalls until the result is there.
* **SALU and branches.** One SALU instruction per cycle, results after ``salu_latency``; a taken
  branch holds its wave ``branch_taken_cycles`` before its next instruction (the loop header is
  fetched again) and, besides, keeps the whole SIMD from issuing for ``branch_simd_cycles``.
* **LDS.** Each access occupies the LDS for its passes of 128 bytes (bank conflicts add passes,
  :mod:`isalint.hw.lds_banks`); the other SIMD of the CU is assumed to load it as much as this one,
  so a pass costs this SIMD two cycles of LDS time. Data arrives ``lds_latency`` after the access,
  in order.
* **Global memory.** Likewise one shared path (128 bytes per cycle per CU), data after
  ``vmem_latency``, loads in order.
* **Waiting.** A wave waits only where the program says so: at ``s_waitcnt`` until its counters
  are low enough, at ``s_barrier`` until every wave of its workgroup has arrived (the waves of the
  workgroup on the other SIMDs are assumed to arrive together with these).

Every cycle in which the VALU issues nothing is charged to what the waves are doing: waiting on LDS,
on global memory, at a barrier, on a dependency, or issuing scalar/branch/memory instructions.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from ..hw.timing import Timing
from .costs import BARRIER, BRANCH, END, LDS, NOP, OTHER, SALU, SMEM, VALU, VMEM, WAIT, Cost
from .path import Stream

# issue categories of the units (AMD's scheduler: VALU | SALU and SMEM | LDS | VMEM | branch | other)
CATEGORY = {VALU: 0, SALU: 1, SMEM: 1, LDS: 2, VMEM: 3, BRANCH: 4, OTHER: 5}
CAUSES = ("valu", "bank_stall", "lds_wait", "gmem_wait", "barrier", "dependency", "unhinted", "salu_branch", "idle")
EPS = 1e-9
_INF = float("inf")


class _Wave:
    __slots__ = ("id", "group", "pc", "ready", "why", "at_barrier", "done", "end", "regs", "lds", "smem", "vm",
                 "vs", "last_lds", "last_vm", "marks", "arrived_pc", "arrived_at", "vregs")

    def __init__(self, wid: int, group: int):
        self.id = wid
        self.group = group
        self.pc = 0
        self.ready = 0.0
        self.why = "salu_branch"
        self.at_barrier = False
        self.done = False
        self.end = 0.0
        self.regs: dict[str, float] = {}
        self.vregs: dict[str, float] = {}  # VALU results: when an LDS or vector memory instruction may read them
        self.lds: list[float] = []
        self.smem: list[float] = []
        self.vm: list[float] = []
        self.vs: list[float] = []
        self.last_lds = 0.0
        self.last_vm = 0.0
        self.marks: dict[tuple[int, int], float] = {}
        self.arrived_pc = -1
        self.arrived_at = 0.0


@dataclass
class RoundResult:
    waves: int
    cycles: float  # until the last wave ends, skipped iterations charged
    simulated: float
    causes: dict[str, float]
    by_loop: dict[object, dict[str, float]]
    periods: list[tuple[object, int, float]] = field(default_factory=list)  # (loop, skipped, cycles/iteration)
    issued: dict[str, int] = field(default_factory=dict)
    waits: dict[int, list[float]] = field(default_factory=dict)  # instruction index -> [passes, cycles waited]


def _new_causes() -> dict[str, float]:
    return dict.fromkeys(CAUSES, 0.0)


def _pending(lst: list[float], t: float) -> list[float]:
    if lst and lst[0] <= t + EPS:
        lst[:] = [x for x in lst if x > t + EPS]
    return lst


def simulate_round(stream: Stream, cost_of, loop_of, timing: Timing, groups: int, waves_per_group: int) -> RoundResult:
    """Run ``groups`` workgroups of ``waves_per_group`` waves (the ones on this SIMD) through ``stream``.

    ``cost_of(index) -> Cost``; ``loop_of(index)`` -> a key naming the innermost loop (or None).
    """
    code = stream.code
    refetch = stream.refetch or stream.taken
    costs: list[Cost] = [cost_of(i) for i in code]
    loops = [loop_of(i) for i in code]
    n_code = len(code)
    mark_at: dict[int, list[tuple[int, int]]] = {}
    for r, run in enumerate(stream.runs):
        for j, pos in enumerate(run.starts):
            mark_at.setdefault(pos, []).append((r, j))
    waves = [_Wave(g * waves_per_group + k, g) for g in range(groups) for k in range(waves_per_group)]
    arrived = [0] * groups
    members: list[list[_Wave]] = [[w for w in waves if w.group == g] for g in range(groups)]
    unit_free = [0.0] * 12
    lds_free = vmem_free = 0.0
    lds_lat, vm_lat, smem_lat = timing.lds_latency, timing.vmem_latency, timing.smem_latency
    mem_lat = timing.valu_memory_latency
    branch_pen, barrier_cyc = timing.branch_taken_cycles, timing.barrier_cycles
    causes = _new_causes()
    by_loop: dict[object, dict[str, float]] = {}
    snapshots: dict[tuple[int, int], tuple[float, dict, dict]] = {}
    waits: dict[int, list[float]] = {}
    issued = {"valu": 0, "vopd": 0, "salu": 0, "lds": 0, "vmem": 0, "branch": 0, "fma": 0}
    alive = len(waves)
    t = 0.0

    def charge(key, cause: str, amount: float) -> None:
        causes[cause] += amount
        d = by_loop.get(key)
        if d is None:
            d = by_loop[key] = _new_causes()
        d[cause] += amount

    def passed(w: _Wave, pos: int, now: float) -> None:
        for r, j in mark_at[pos]:
            if (r, j) not in w.marks:
                w.marks[(r, j)] = now
                if w.id == 0:
                    snapshots[(r, j)] = (now, dict(causes), {k: dict(v) for k, v in by_loop.items()})

    nw = len(waves)
    per_cycle = max(1, int(timing.issue_per_cycle))
    branch_hold = float(timing.branch_simd_cycles)
    category_free = [0.0] * (max(CATEGORY.values()) + 1)  # the cycle each category can issue again
    hold = 0.0  # no instruction issues before this cycle (after a taken branch)
    unhinted_until, unhinted_at = 0.0, None  # the SIMD held by an ALU dependency no hint named, and where
    recent: deque[float] = deque()  # issue times within the last cycle
    first = 0  # round-robin: the scan starts after the wave that last issued to the VALU
    while alive:
        # -- issue -------------------------------------------------------------------------------
        while recent and recent[0] <= t - 1.0 + EPS:
            recent.popleft()  # issues more than a cycle ago
        for w in (waves[first:] + waves[:first]) if first else waves:
            if w.done or w.at_barrier or w.ready > t + EPS:
                continue
            pos = w.pc
            if pos >= n_code:  # ran off the end of the code (no s_endpgm after a wait or nop): ends there
                w.done = True
                w.end = t
                alive -= 1
                continue
            c = costs[pos]
            u = c.unit
            if u == WAIT:
                if w.arrived_pc != pos:
                    w.arrived_pc, w.arrived_at = pos, t
                need, why = t, "salu_branch"
                for counter, n in c.waits.items():
                    if counter == "vmcnt":
                        lst = _pending(w.vm, t)
                        what = "gmem_wait"
                    elif counter == "lgkmcnt":
                        lst = sorted(_pending(w.lds, t) + _pending(w.smem, t))
                        what = "lds_wait"
                    elif counter == "vscnt":
                        lst = _pending(w.vs, t)
                        what = "gmem_wait"
                    else:
                        continue
                    if len(lst) > n:
                        x = lst[len(lst) - n - 1]
                        if x > need:
                            need, why = x, what
                if need > t + EPS:
                    w.ready, w.why = need, why
                    continue
                rec = waits.get(code[pos])
                if rec is None:
                    rec = waits[code[pos]] = [0, 0.0]
                rec[0] += 1
                rec[1] += t - w.arrived_at
            elif u == BARRIER:
                w.at_barrier = True
                w.why = "barrier"
                g = w.group
                arrived[g] += 1
                if pos in mark_at:
                    passed(w, pos, t)
                w.pc += 1
                if arrived[g] == len(members[g]):
                    arrived[g] = 0
                    for m in members[g]:
                        m.at_barrier = False
                        m.ready = t + barrier_cyc
                        m.why = "barrier"
                continue
            elif u == END:
                w.done = True
                w.end = t
                alive -= 1
                continue
            elif u == NOP:
                if pos in mark_at:
                    passed(w, pos, t)
                w.pc += 1
                w.ready = t + c.nop
                w.why = "salu_branch"
                continue
            else:
                regs = w.regs
                dep = 0.0
                for r in c.reads:
                    x = regs.get(r)
                    if x is not None and x > dep:
                        dep = x
                if u == LDS or u == VMEM:
                    vregs = w.vregs
                    for r in c.reads:
                        x = vregs.get(r)
                        if x is not None and x > dep:
                            dep = x
                if dep > t + EPS:
                    w.ready, w.why = dep, "dependency"
                    continue
                cat = CATEGORY[u]
                if unit_free[u] > t + EPS or category_free[cat] > t + EPS or len(recent) >= per_cycle or hold > t + EPS:
                    w.why = "salu_branch"  # another wave holds the unit, the category or the issue slot
                    continue
                category_free[cat] = t + 1.0
                recent.append(t)
                if u == VALU:
                    first = w.id + 1 if w.id + 1 < nw else 0
                    unit_free[VALU] = t + c.occupy
                    key = loops[pos]
                    charge(key, "valu", c.occupy - c.stall)
                    if c.stall:
                        charge(key, "bank_stall", c.stall)
                    issued["valu"] += 1
                    issued["fma"] += c.fma
                    if c.fma == 2:
                        issued["vopd"] += 1
                    lat = t + c.latency
                    mem = t + mem_lat
                    vregs = w.vregs
                    for r in c.writes:
                        regs[r] = lat
                        vregs[r] = mem
                    w.why = "salu_branch"
                else:
                    unit_free[u] = t + 1.0
                    w.why = "salu_branch"
                    if u == SALU:
                        lat = t + c.latency
                        for r in c.writes:
                            regs[r] = lat
                        issued["salu"] += 1
                    elif u == LDS:
                        start = lds_free if lds_free > t else t
                        lds_free = start + c.service
                        done = start + c.service + lds_lat
                        if done < w.last_lds:
                            done = w.last_lds
                        w.last_lds = done
                        w.lds.append(done)
                        issued["lds"] += 1
                    elif u == VMEM:
                        start = vmem_free if vmem_free > t else t
                        vmem_free = start + c.service
                        done = start + c.service + vm_lat
                        if c.counter == "vm":
                            if done < w.last_vm:
                                done = w.last_vm
                            w.last_vm = done
                            w.vm.append(done)
                        else:
                            w.vs.append(done)
                        issued["vmem"] += 1
                    elif u == SMEM:
                        w.smem.append(t + smem_lat)
                    elif u == BRANCH:
                        issued["branch"] += 1
            # the instruction at ``pos`` issued (or the wait passed)
            if pos in mark_at:
                passed(w, pos, t)
            w.pc = pos + 1
            w.ready = t + 1.0
            if u == BRANCH and refetch[pos]:
                w.ready += branch_pen
                if branch_hold:
                    hold = max(hold, t + 1.0 + branch_hold)
            if w.pc >= n_code:
                w.done = True
                w.end = t
                alive -= 1
            elif costs[w.pc].blocking and u != BRANCH:
                # the front end stays with this wave: its next instruction reads an ALU result no
                # s_delay_alu announced, so it issues into the ALU and the SIMD waits with it
                regs = w.regs
                dep = max((regs.get(r, 0.0) for r in costs[w.pc].reads), default=0.0)
                if dep > w.ready + EPS:
                    hold = max(hold, dep)
                    w.ready, w.why = dep, "dependency"
                    if dep > unhinted_until:
                        unhinted_until, unhinted_at = dep, loops[w.pc]
        if not alive:
            break
        # -- advance to the next moment something can happen ------------------------------------
        t_next = _INF
        for w in waves:
            if w.done or w.at_barrier:
                continue
            if w.ready > t + EPS:
                cand = w.ready
            else:
                u = costs[w.pc].unit
                cand = unit_free[u] if u < 7 and unit_free[u] > t + EPS else t + 1.0
                if u < 7:
                    cand = max(cand, category_free[CATEGORY[u]], hold)
                    if len(recent) >= per_cycle:
                        cand = max(cand, recent[0] + 1.0)
            if cand < t_next:
                t_next = cand
        if t_next == _INF:  # every live wave waits at a barrier the others never reach
            raise RuntimeError("deadlock: waves wait at s_barrier forever")
        busy_until = unit_free[VALU]
        idle = t_next - (busy_until if busy_until > t else t)
        if idle > EPS and unhinted_until > t + EPS:
            # the SIMD waits with a wave whose ALU dependency no s_delay_alu named
            held = min(idle, unhinted_until - t)
            charge(unhinted_at, "unhinted", held)
            idle -= held
        if idle > EPS:
            active = [w for w in waves if not w.done]
            if active:
                share = idle / len(active)
                for w in active:
                    why = "barrier" if w.at_barrier else w.why
                    charge(loops[w.pc] if w.pc < n_code else None, why, share)
            else:
                charge(None, "idle", idle)
        t = t_next

    end = max(w.end for w in waves)
    # idle time of finished waves before the last one ends is already charged above
    total = end
    periods: list[tuple[object, int, float]] = []
    extra_causes = _new_causes()
    extra_loop: dict[object, dict[str, float]] = {}
    for r, run in enumerate(stream.runs):
        k = run.kept
        m = max(1, k // 2)
        spans = [(w.marks[(r, k)] - w.marks[(r, k - m)]) / m for w in waves
                 if (r, k) in w.marks and (r, k - m) in w.marks]
        if not spans:
            continue
        period = sum(spans) / len(spans)
        periods.append((run.loop, run.skipped, period))
        charged = period * run.skipped
        total += charged
        a, b = snapshots.get((r, k - m)), snapshots.get((r, k))
        if a is None or b is None or b[0] <= a[0]:
            continue
        scale = charged / (b[0] - a[0])
        for cause in CAUSES:
            extra_causes[cause] += (b[1][cause] - a[1][cause]) * scale
        for key, d in b[2].items():
            before = a[2].get(key, {})
            e = extra_loop.setdefault(key, _new_causes())
            for cause in CAUSES:
                e[cause] += (d[cause] - before.get(cause, 0.0)) * scale
    for cause in CAUSES:
        causes[cause] += extra_causes[cause]
    for key, e in extra_loop.items():
        d = by_loop.setdefault(key, _new_causes())
        for cause in CAUSES:
            d[cause] += e[cause]
    return RoundResult(len(waves), total, end, causes, by_loop, periods, issued, waits)
