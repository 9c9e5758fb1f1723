"""The severity policy the performance rules share: a finding's cost is what it costs once times
how often it runs, and one loop's findings of a rule are one finding.

Every performance finding (BANK001, DUAL002, LDS001, GMEM001) is placed in a region: the innermost
loop around it, or the code of its kernel outside every loop. The region runs a number of times per
wave (:mod:`isalint.model.hotness`: the product of the trip counts of the loops around it, inferred
from the code or assumed). A rule states the cycles one execution of each site loses; the sites of
one region become one finding carrying the total, the sites listed in it (``sites`` in JSON, the
first few under the finding in text).

Severity: a warning when the region is a loop and its total is at least :data:`WARN_SHARE` of the
kernel's modelled VALU issue cycles per wave (every VALU instruction weighted by its executions);
info otherwise. Code that runs once per wave is never more than info.
"""
from __future__ import annotations

from operator import attrgetter

from isalint.diagnostics import Diagnostic, Site
from isalint.hw import latency as _lat
from isalint.model.alu_delays import issue_cycles
from isalint.model.hotness import ASSUMED_TRIPS, Executions, hotness
from isalint.records import Record

WARN_SHARE = 0.01  # of the kernel's VALU issue cycles: below it a finding is not worth a warning
SITES_SHOWN = 4  # sites printed under a finding in text output (JSON has all of them)


class SiteCost(Record):
    """One place a rule found, and the cycles one execution of it loses."""

    index: int  # instruction index
    column: int
    end_column: int
    message: str
    cycles: float

    __slots__ = _fields = ("index", "column", "end_column", "message", "cycles")

    def __init__(self, index: int, column: int, end_column: int, message: str, cycles: float):
        self.index = index
        self.column = column
        self.end_column = end_column
        self.message = message
        self.cycles = cycles


class Region(Record):
    kernel: object  # isalint.model.program.Kernel or None
    loop: object  # isalint.model.cfg.Loop or None: code outside every loop
    executions: Executions  # of the region, per wave
    name: str  # "the loop at .LBB0_9 (lines 559-603)" or "the code outside loops of kernel gemm"

    _fields = ("kernel", "loop", "executions", "name")

    def __init__(self, kernel: object, loop: object, executions: Executions, name: str):
        self.kernel = kernel
        self.loop = loop
        self.executions = executions
        self.name = name


def region_of(analysis, index: int) -> Region:
    program, cfg = analysis.program, analysis.cfg
    loop = cfg.loop_of(index)
    kernel = program.kernel_of(index)
    # one Region per (kernel, loop): naming a loop walks its instructions
    cache = analysis.__dict__.setdefault("_regions", {})
    key = (id(kernel), id(loop))
    region = cache.get(key)
    if region is None:
        region = cache[key] = _make_region(analysis, loop, kernel)
    return region


def _make_region(analysis, loop, kernel) -> Region:
    program, cfg = analysis.program, analysis.cfg
    execs = hotness(analysis).of_loop(loop)
    if loop is None:
        several = len(program.kernels) > 1
        where = f" of kernel {kernel.name}" if several and kernel is not None and kernel.name else ""
        return Region(kernel, None, execs, f"the code outside loops{where}")
    idx = loop.indices(cfg)
    lines = (program.instrs[idx[0]].lineno, program.instrs[idx[-1]].lineno)
    label = loop.label or cfg.blocks[loop.header].label or f"line {lines[0]}"
    return Region(kernel, loop, execs, f"the loop at {label} (lines {lines[0]}-{lines[1]})")


def _key(region: Region):
    return (region.kernel.first if region.kernel is not None else -1,
            region.loop.header if region.loop is not None else -1)


def executions_text(analysis, region: Region) -> str:
    """How often the region runs per wave, with where the numbers come from."""
    if region.loop is None:
        return "runs once per wave"
    h = hotness(analysis)
    parts, loop = [], region.loop
    while loop is not None:
        t = h.loop_trips(loop)
        label = loop.label or f"block {loop.header}"
        parts.append(f"{label}: {t.count} iterations" if t.known
                     else f"{label}: trip count not in the code, {ASSUMED_TRIPS} assumed")
        loop = loop.parent
    return f"runs {region.executions.text()} times per wave ({'; '.join(parts)})"


# Execution counts multiply along loop nests (16 per loop of unknown trip count) and can pass what a float
# holds; numbers shown are capped here, shares are computed from the exact integers.
_SHOWN_MAX = 10 ** 300


def cost_of(analysis, region: Region, per_execution: float) -> dict:
    count = region.executions.count
    issue = hotness(analysis).valu_issue(region.kernel)
    total = per_execution * min(count, _SHOWN_MAX)
    if not issue:
        share = 0.0
    elif count <= _SHOWN_MAX and issue <= _SHOWN_MAX:
        share = total / issue
    else:  # exact: integer division of the counts first, then the float factor
        share = per_execution * (count / issue) if count // issue <= _SHOWN_MAX else float(_SHOWN_MAX)
    return {
        "cycles_per_execution": round(per_execution, 2),
        "executions": min(count, _SHOWN_MAX),
        "executions_known": region.executions.known,
        "cycles": round(total, 2),
        "kernel_valu_issue_cycles": min(issue, _SHOWN_MAX),
        "share": round(share, 4),
    }


def severity_for(region: Region, cost: dict, eligible: bool = True, cold_is_info: bool = True) -> str:
    """warning for a finding that costs at least WARN_SHARE of the kernel's VALU issue cycles (and
    that the rule deems ``eligible``), else info; with ``cold_is_info``, code outside loops is info."""
    if (cold_is_info and region.loop is None) or not eligible:
        return "info"
    return "warning" if cost["share"] >= WARN_SHARE else "info"


def cost_note(analysis, region: Region, cost: dict, unit: str = "cycles") -> str:
    per = _num(cost["cycles_per_execution"])
    approx = "" if cost["executions_known"] else "~"
    total = f"{approx}{_num(cost['cycles'])}"
    share = f"{100 * cost['share']:.1f}%" if cost["share"] >= 0.001 else "<0.1%"
    if unit == "cycles" and cost["cycles_per_execution"] == 1:
        unit_one = "cycle"
    else:
        unit_one = unit
    return (f"cost: {per} {unit_one} per {'iteration' if region.loop is not None else 'run'}; {region.name} "
            f"{executions_text(analysis, region)}: {total} {unit} per wave, {share} of the kernel's "
            f"{approx}{_num(cost['kernel_valu_issue_cycles'])} modelled VALU issue cycles")


def _num(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() or x >= 100 else f"{x:,.1f}"


_SITE_ORDER = attrgetter("index", "column")


def aggregate(analysis, code: str, sites: list[SiteCost], headline, eligible=None, fix=None, with_group: bool = False):
    """One Diagnostic per region holding ``sites``.

    ``headline(region, sites, cost)`` writes the finding's message; ``eligible(region, sites)``
    says whether the region's sites may be a warning at all (default: yes); ``fix(region,
    sites)`` gives the finding's fix flag or None. With ``with_group``, yields (region, its sites,
    Diagnostic) instead.
    """
    program = analysis.program
    instrs = program.instrs
    suppressions = getattr(analysis, "suppressions", None)
    if suppressions is not None and _may_suppress(suppressions, code):
        sites = [s for s in sites if not suppressions.suppresses(code, instrs[s.index].lineno)]
    groups: dict = {}
    # a block lies in one kernel and one innermost loop (kernel starts and labels begin blocks): the
    # region of a site is its block's
    block_of = analysis.cfg.block_of
    by_block: dict = {}
    for s in sites:
        index = s.index
        b = block_of[index] if 0 <= index < len(block_of) else -1 - index
        group = by_block.get(b)
        if group is None:
            region = region_of(analysis, index)
            group = by_block[b] = groups.setdefault(_key(region), (region, []))[1]
        group.append(s)
    for region, group in groups.values():
        group.sort(key=_SITE_ORDER)
        per = sum(s.cycles for s in group)
        cost = cost_of(analysis, region, per)
        ok = True if eligible is None else eligible(region, group)
        first = group[0]
        line = instrs[first.index].lineno
        diag = Diagnostic(program.path, line, first.column, line, max(first.end_column, first.column + 1), code,
                          severity_for(region, cost, ok), headline(region, group, cost),
                          fix(region, group) if fix else None)
        diag.cost = cost
        diag.notes.append(cost_note(analysis, region, cost))
        if len(group) > 1:
            diag.sites = [Site(instrs[s.index].lineno, s.column, s.end_column, s.message) for s in group]
        else:
            diag.notes.append(first.message)
        yield (region, group, diag) if with_group else diag


def _may_suppress(suppressions, code: str) -> bool:
    """Whether any of the file's directives names ``code`` (or ALL): else no site of it is suppressed."""
    return any(d.code in (code, "ALL") for d in suppressions.directives)


def fma_loop_fixable(analysis, loop) -> bool:
    """Whether ``loop`` holds an FMA block (:mod:`isalint.model.fma_block`), which ``isalint fix
    --dual-fmac`` rewrites: the fix flag of a performance finding in it."""
    if loop is None or not loop.innermost:
        return False
    from isalint.model.fma_block import NotAnFmaBlock, find_block

    cache = analysis.__dict__.setdefault("_fma_loop_fixable", {})
    if loop.header not in cache:
        label = analysis.cfg.blocks[loop.header].label
        ok = False
        if label:
            try:
                find_block(analysis, label)
                ok = True
            except NotAnFmaBlock:
                ok = False
        cache[loop.header] = ok
    return cache[loop.header]


# -- how a stall stands in its loop (DELAY001 and BANK001 weigh their findings so) ---------------------

LOOP_SHARE_WARN = 0.05  # of an iteration's cycles: a smaller stall in a hot loop is not a material one
MAIN_LOOP_SHARE = 0.5  # a loop with a known trip count is hot from half the main loop's issue cycles on


def _own_issue(analysis, loop) -> int:
    """Cycles one iteration of ``loop`` keeps the SIMD busy with its own instructions (not its inner
    loops'): each as the delay counting sees it (``s_nop N`` N+1, hints none), a WMMA for as long as it
    holds the matrix path (:data:`isalint.hw.latency.WMMA_CYCLES`)."""
    cache = analysis.__dict__.setdefault("_loop_own_issue", {})
    if loop.header not in cache:
        cfg, instrs = analysis.cfg, analysis.program.instrs
        cache[loop.header] = sum(_lat.WMMA_CYCLES if instrs[i].opcode.startswith("v_wmma_") else issue_cycles(instrs[i])
                                 for i in loop.indices(cfg) if cfg.loop_of(i) is loop)
    return cache[loop.header]


def _main_loops(analysis, kernel) -> tuple[set, int]:
    """The kernel's hottest loops by modelled issue cycles per wave (own issue cycles times
    executions), and that weight."""
    key = kernel.first if kernel is not None else -1
    cache = analysis.__dict__.setdefault("_main_loops", {})
    if key not in cache:
        h, cfg = hotness(analysis), analysis.cfg
        weights = {}
        for lp in cfg.loops:
            first = lp.indices(cfg)[0]
            if analysis.program.kernel_of(first) is kernel:
                weights[lp.header] = _own_issue(analysis, lp) * h.of_loop(lp).count
        top = max(weights.values(), default=0)
        cache[key] = ({hd for hd, w in weights.items() if w == top}, top, weights)
    main, top, weights = cache[key]
    return main, top, weights


def loop_standing(analysis, region, stall: float) -> dict:
    """What one region's stall means: its share of an iteration, whether the loop is hot and how sure
    the numbers are."""
    if region.loop is None:
        return {"hot": False, "loop_issue_cycles": None, "loop_share": None, "trips_known": True,
                "confidence": "low", "why": "the code outside loops runs once per wave"}
    loop = region.loop
    issue = _own_issue(analysis, loop)
    share = stall / (issue + stall) if issue + stall else 0.0
    main, top, weights = _main_loops(analysis, region.kernel)
    known = region.executions.known
    is_main = loop.header in main
    around = not is_main and any(_encloses(loop, lp) for lp in analysis.cfg.loops if lp.header in main)
    hot = is_main or around or (known and top and weights.get(loop.header, 0) >= MAIN_LOOP_SHARE * top)
    if is_main:
        why = "the kernel's hottest loop by modelled issue cycles"
    elif around:
        why = "a loop around the kernel's hottest loop (each of its iterations runs that loop)"
    elif hot:
        why = "a hot loop: its trip count is in the code and it issues at least half the main loop's cycles"
    else:
        why = "not the kernel's hottest loop"
    if known:
        why += "; its trip count is in the code"
    else:
        why += f"; its trip count is not in the code ({ASSUMED_TRIPS} assumed)"
    confidence = "high" if hot and known else "medium" if hot else "low"
    return {"hot": bool(hot), "loop_issue_cycles": issue, "loop_share": round(share, 4), "trips_known": known,
            "confidence": confidence, "why": why}


def _encloses(outer, inner) -> bool:
    lp = inner.parent
    while lp is not None:
        if lp is outer:
            return True
        lp = lp.parent
    return False
