"""BANK001: VGPR bank / operand-cache conflict.

## What it finds
VALU instructions that ask one VGPR bank for two different registers in the
same cycle, so they issue late, as modelled by `isalint.hw.vgpr_banks`:

- the VGPR file has 4 banks (register index mod 4), each with an operand cache
  that holds the bank's most recently read value and feeds the SRC0 and SRC1
  ports; a value not in the cache is read from the register file first;
- a bank delivers one value per cycle to the SRC0/SRC1 ports (one value may
  feed several ports), so an instruction whose SRC0/SRC1 operands hold two
  different registers of one bank takes an extra cycle; this holds for a
  single (non-VOPD) instruction as well as for a pair;
- accumulator reads (SRC2: the destination of `v_fmac`, `v_dot2acc`, the addend
  of `v_fmamk`) bypass the operand caches and, like result writes, have their
  own path: they are counted, never stall;
- a WMMA reads its 8-VGPR operands over its own passes, but one two of whose
  A, B and C operands start in the same bank issues 2 cycles late.

Loops are modelled in their steady state (the caches warmed by the previous
iteration, the registers reloaded by memory instructions invalidated); other
code block by block from cold caches. The finding names the bank, the
registers and the ports, and the stall cycles. `isalint report` prints the
whole R / Cache / W table of a loop.

## Severity
A cost, and how sure it is. Each stalled instruction costs its stall cycles
once per execution of its code; one loop's stalled instructions are one finding
with their total, the instructions listed as its sites (`sites` in JSON), and
the message says the cycles per iteration and their share of the iteration
(the stall against the cycles the iteration takes to issue, a WMMA counted for
the 32 cycles it holds the matrix path, as DELAY001 counts them). Not every
kind of conflict is equally sure:
- a VOPD pair that asks one bank for two values: the bank structure is the
  ISA guide's and the stall was measured (RGP, below): **measured**;
- a WMMA two of whose A, B and C operands start in one bank (8 VGPRs from
  `vN` begin in bank `N mod 4`): +2 cycles, measured (a chain of dependent
  `v_wmma_f32_16x16x16_f16` issues every 34 cycles instead of 32 on gfx1151,
  LLVM issue 204254): **measured**;
- a single (non-VOPD) instruction whose SRC0 and SRC1 are two registers of one
  bank: the guide gives the bank rule for VOPD pairs only, and no measurement
  shows the stall: **assumed**, reported, never a warning by itself.
A **warning** when the measured stalls alone are a material cost in a hot loop:
at least 5% of an iteration and 1% of the kernel's modelled VALU issue cycles
per wave (every VALU instruction weighted by its executions), in a loop DELAY001
calls hot (the kernel's hottest loop by issue cycles, a loop around it, or one
whose trip count is in the code and that issues at least half as much; a
remainder loop beside the main loop is not). Everything else is **info**: code
outside loops (it runs once per wave), a loop not shown to be hot, a small
stall, or one that rests on the assumption. The finding's notes and its JSON
`cost` say the numbers (`cycles_per_execution`, `measured_cycles_per_execution`,
`loop_issue_cycles`, `loop_share`, `hot`) and how sure it is (`confidence`: high
when every stalled cycle is measured and the hot loop's trip count is in the
code, medium when part is assumed or the trip count is assumed, low when all of
it is assumed).

## Why it matters
A compiled GEMM loop that keeps its A column and B row in consecutive registers
reads both from the same banks: most of its `v_dual_fmac_f32` took 2-3 cycles
instead of 1 in RGP on a 7900 XTX. Placing A on banks 2-3 and B on banks 0-1
and ordering the FMAs so that every pair reads each bank at most once made
every dual FMA a 1-cycle instruction and that kernel 11% faster.

## Example
```asm
; bad: bank 0 must deliver v184 and v192 in one cycle, bank 1 v185 and v193
v_dual_fmac_f32 v131, v184, v193 :: v_dual_fmac_f32 v128, v185, v192
; good: A (v186, v187) on banks 2-3, B (v184, v185) on banks 0-1
v_dual_fmac_f32 v5, v186, v184 :: v_dual_fmac_f32 v2, v187, v185
```

## Fix safety
`isalint fix --dual-fmac` re-assigns a GEMM loop's registers in that
layout and searches the FMA order against this model; the result is checked
(legal pairs, waits, register budget). By hand: move A and B to disjoint bank
pairs, or reorder the instructions so that consecutive ones reuse cached values.

## Reference and assumptions
Documented (RDNA3 ISA guide, section 7.6 "Dual Issue VALU"): 4 VGPR banks
(register index mod 4); one operand cache per bank with a read port each for
SRC0, SRC1 and SRC2; a VOPD pair needs SRC0X/SRC0Y and VSRC1X/VSRC1Y in
different banks.

Measured (LLVM issue 204254, on gfx1151): a WMMA whose A, B or C operands
start in a common bank issues 2 cycles late (34 instead of 32 between dependent
WMMAs). Tensile lays its WMMA operands out in distinct banks.

Calibrated assumptions (no public source; chosen because they reproduce what
RGP showed on the 7900 XTX: 2-3 cycles for most dual FMAs of the compiler's
loop above, 1 cycle for every dual FMA of the rewritten one):
- a bank delivers one value per cycle to SRC0/SRC1, whether it comes from the
  cache or the register file (one cache entry per bank);
- the same holds within one single instruction: a non-VOPD instruction whose
  SRC0 and SRC1 are two registers of one bank stalls a cycle too (the guide
  states the bank rule for pairs only, and RGP measured pairs only: this one
  is why such sites are never a warning by themselves);
- SRC2 reads and result writes have their own paths (the rewritten loop reads
  two accumulators and writes two results every cycle without stalling).
The parameters and the reasoning are in `isalint/hw/vgpr_banks.py`.
"""
from __future__ import annotations

from isalint.hw.vgpr_banks import stalls_of

from .cost import LOOP_SHARE_WARN, WARN_SHARE, SiteCost, aggregate, cost_of, fma_loop_fixable, loop_standing

CODE = "BANK001"
NAME = "vgpr-bank-conflict"
SEVERITY = "warning"
SUMMARY = "VALU instruction that asks one VGPR bank for two registers in a cycle (modelled stall)"
FIXABLE = "--dual-fmac"

_PORT = {"SRC0": "SRC0", "SRC1": "VSRC1", "SRC2": "SRC2"}


def _slot(slot: str) -> str:
    return _PORT.get(slot[:4], slot[:4]) + slot[4:]


def simulations(analysis):
    """(loop or None, Simulation, steady) for every innermost loop (steady state) and
    every basic block outside them (cold caches); a Simulation keeps its stalled steps only. Cached
    on the analysis."""
    cache = analysis.__dict__.get("_bank001_sims")
    if cache is not None:
        return cache
    program, cfg = analysis.program, analysis.cfg
    instrs = program.instrs

    half_of = analysis.vopd_half
    out = []
    covered: set[int] = set()  # blocks of innermost loops (a loop's instructions are its blocks')
    for loop in cfg.loops:
        if not loop.innermost:
            continue
        covered.update(loop.blocks)
        out.append((loop, stalls_of(instrs, loop.indices(cfg), loop=True, half_of=half_of), True))
    for blk in cfg.blocks:
        if blk.id in covered:
            continue
        idx = blk.indices()
        if not idx or not any(instrs[i].klass in ("valu", "vopd", "trans") for i in idx):
            continue
        out.append((cfg.loop_of(idx[0]), stalls_of(instrs, idx, half_of=half_of), False))
    analysis.__dict__["_bank001_sims"] = out
    return out


def _operand_span(ins, access) -> tuple[int, int]:
    """Columns of the operand an access reads (X half or Y half), else of the whole instruction."""
    stmt = ins.stmts[1] if access.slot.endswith("Y") and len(ins.stmts) > 1 else ins.stmts[0]
    for op in stmt.operands[1:]:
        if op.col and access.reg in op.registers():
            return op.col, op.col + len(op.text)
    return ins.stmts[0].col, max(ins.stmts[-1].end_col, ins.stmts[0].col + 1)


# How sure each kind of site is (the facts behind it are in the module doc):
# "vopd": a dual-issue pair that asks one bank for two values; the bank structure is the ISA guide's
#   and the stall was measured (RGP on a 7900 XTX: 2-3 cycles per dual FMA of such pairs);
# "wmma": a WMMA whose A, B or C operands start in one bank; measured (+2 cycles on a dependent WMMA
#   chain, 34 instead of 32, on gfx1151), not documented;
# "single": a single (non-VOPD) instruction whose SRC0 and SRC1 are two registers of one bank; the
#   guide states the bank rule for VOPD pairs only and no measurement shows this stall: assumed.
MEASURED = ("vopd", "wmma")
WMMA_BANK_CYCLES = 2


def _sites(analysis):
    """(SiteCost, kind) for every stalled instruction: kind "vopd", "single" or "wmma"."""
    program = analysis.program
    for _loop, sim, steady in simulations(analysis):
        for step in sim.steps:
            if not step.stall or step.op.index is None:
                continue
            ins = program.instrs[step.op.index]
            parts = []
            for b, accs in step.conflicts:
                regs = ", ".join(f"{a.reg} ({_slot(a.slot)}, {'cached' if a.kind == 'Cache' else 'read'})"
                                 for a in accs)
                parts.append(f"bank {b} must deliver {regs}")
            where = "steady state" if steady else "cold caches"
            kind = "vopd" if ins.klass == "vopd" else "single"
            assumed = "" if kind == "vopd" else ", assumed: a single instruction"
            msg = f"{'; '.join(parts)}: +{step.stall} cycle{'s' if step.stall > 1 else ''} ({where}{assumed})"
            col, end = _operand_span(ins, step.conflicts[0][1][-1])
            yield SiteCost(step.op.index, col, end, msg, step.stall), kind
    yield from _wmma_sites(analysis)


def _wmma_sites(analysis):
    """WMMAs two of whose A, B and C operands start in the same bank."""
    for i, ins in enumerate(analysis.program.instrs):
        if not ins.opcode.startswith("v_wmma_") or not ins.stmts:
            continue
        ops = ins.stmts[0].operands[1:4]
        named = [(role, op) for role, op in zip("ABC", ops) if op.kind == "vgpr" and type(op.value) is not tuple]
        by_bank: dict[int, list] = {}
        for role, op in named:
            by_bank.setdefault(op.first % 4, []).append((role, op))
        shared = [(b, group) for b, group in sorted(by_bank.items()) if len(group) > 1]
        if not shared:
            continue
        parts = []
        for b, group in shared:
            names = " and ".join(f"{role} {op.text}" for role, op in group)
            parts.append(f"{names} start in bank {b}")
        last = shared[0][1][-1][1]
        msg = (f"{'; '.join(parts)}: +{WMMA_BANK_CYCLES} cycles (a WMMA whose operands share a bank issues "
               f"{32 + WMMA_BANK_CYCLES} cycles after the previous one instead of 32)")
        yield SiteCost(i, last.col, last.col + len(last.text), msg, WMMA_BANK_CYCLES), "wmma"


def _headline(facts):
    def headline(region, sites, cost):
        n = len(sites)
        per = cost["cycles_per_execution"]
        what = f"{n} VALU instructions" if n > 1 else "a VALU instruction"
        if region.loop is not None:
            f = facts(region, sites)
            when = (f"per iteration ({100 * f['loop_share']:.0f}% of an iteration's "
                    f"{f['loop_issue_cycles'] + per:.3g} cycles)")
        else:
            when = "once per wave"
        return (f"VGPR bank conflicts: {what} of {region.name} stall{'s' if n == 1 else ''} "
                f"{per:g} cycle{'s' if per != 1 else ''} {when}: a bank feeds one value per cycle")
    return headline


def check(analysis):
    found = list(_sites(analysis))
    if not found:
        return

    kinds = {(s.index, s.column): kind for s, kind in found}
    sites = [s for s, _ in found]
    standing: dict = {}

    def facts(region, group):
        key = (id(region.kernel), id(region.loop))
        if key not in standing:
            measured = sum(s.cycles for s in group if kinds[(s.index, s.column)] in MEASURED)
            total = sum(s.cycles for s in group)
            f = dict(loop_standing(analysis, region, total))
            if region.loop is not None:
                issue = f["loop_issue_cycles"]
                f["measured_share"] = measured / (issue + total) if issue + total else 0.0
            f["measured_cycles"] = measured
            f["kernel_share"] = cost_of(analysis, region, measured)["share"]
            standing[key] = f
        return standing[key]

    def material(region, group):
        f = facts(region, group)
        return (region.loop is not None and f["hot"] and f["measured_share"] >= LOOP_SHARE_WARN
                and f["kernel_share"] >= WARN_SHARE)

    for region, group, diag in aggregate(analysis, CODE, sites, _headline(facts), eligible=material,
                                         fix=lambda region, group: FIXABLE if fma_loop_fixable(analysis, region.loop)
                                         else None, with_group=True):
        f = standing[(id(region.kernel), id(region.loop))]
        per = diag.cost["cycles_per_execution"]
        assumed = per - f["measured_cycles"]
        diag.cost.update({k: f.get(k) for k in ("loop_issue_cycles", "loop_share", "hot")})
        diag.cost["measured_cycles_per_execution"] = round(f["measured_cycles"], 2)
        confidence = ("low" if not f["measured_cycles"] else
                      "high" if f["hot"] and f["trips_known"] and not assumed else "medium")
        diag.cost["confidence"] = confidence
        basis = []
        if f["measured_cycles"]:
            what = {"vopd": "VOPD pairs", "wmma": "WMMA operands in one bank"}
            present = sorted({kinds[(s.index, s.column)] for s in group} & set(MEASURED))
            basis.append(f"{f['measured_cycles']:g} of {per:g} cycles measured ({' and '.join(what[k] for k in present)})")
        if assumed:
            basis.append(f"{assumed:g} assumed (single instructions, unmeasured)")
        if region.loop is None:
            verdict = "code that runs once per wave"
        elif diag.severity == "warning":
            verdict = "a material measured stall in a hot loop"
        elif not f["measured_cycles"]:
            verdict = "only the assumed single-instruction stall"
        elif not f["hot"]:
            verdict = "the loop is not shown to be hot"
        elif f["measured_share"] < LOOP_SHARE_WARN:
            verdict = "the measured stall is under 5% of an iteration"
        else:
            verdict = "the measured stall is under 1% of the kernel's VALU issue"
        diag.notes.insert(1, f"how sure ({confidence}): {f['why']}; {'; '.join(basis)}; "
                             f"{diag.severity}: {verdict}")
        yield diag
