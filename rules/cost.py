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

from isalint.diagnostics import Diagnostic, Site
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

    _fields = ("index", "column", "end_column", "message", "cycles")

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


def aggregate(analysis, code: str, sites: list[SiteCost], headline, eligible=None, fix=None):
    """One Diagnostic per region holding ``sites``.

    ``headline(region, sites, cost)`` writes the finding's message; ``eligible(region, sites)``
    says whether the region's sites may be a warning at all (default: yes); ``fix(region,
    sites)`` gives the finding's fix flag or None.
    """
    program = analysis.program
    suppressions = getattr(analysis, "suppressions", None)
    if suppressions is not None:
        sites = [s for s in sites if not suppressions.suppresses(code, program.instrs[s.index].lineno)]
    groups: dict = {}
    for s in sites:
        region = region_of(analysis, s.index)
        groups.setdefault(_key(region), (region, []))[1].append(s)
    for region, group in groups.values():
        group.sort(key=lambda s: (s.index, s.column))
        per = sum(s.cycles for s in group)
        cost = cost_of(analysis, region, per)
        ok = True if eligible is None else eligible(region, group)
        first = group[0]
        line = program.instrs[first.index].lineno
        diag = Diagnostic(program.path, line, first.column, line, max(first.end_column, first.column + 1), code,
                          severity_for(region, cost, ok), headline(region, group, cost),
                          fix(region, group) if fix else None)
        diag.cost = cost
        diag.notes.append(cost_note(analysis, region, cost))
        if len(group) > 1:
            diag.sites = [Site(program.instrs[s.index].lineno, s.column, s.end_column, s.message) for s in group]
        else:
            diag.notes.append(first.message)
        yield diag


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
