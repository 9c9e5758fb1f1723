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
  own path: they are counted, never stall.

Loops are modelled in their steady state (the caches warmed by the previous
iteration, the registers reloaded by memory instructions invalidated); other
code block by block from cold caches. The finding names the bank, the
registers and the ports, and the stall cycles. `isalint report` prints the
whole R / Cache / W table of a loop.

## Severity
A cost: the stall cycles of one execution times how often the code runs (the
product of the trip counts of the loops around it: inferred when a counter
states it, as `s_addk_i32 s14, 0x200` up to `0x1000` does, else 16 assumed).
One loop's stalled instructions are one finding with their total, the
instructions listed as its sites (`sites` in JSON). A **warning** when the
total is at least 1% of the kernel's modelled VALU issue cycles per wave (every
VALU instruction weighted by its executions); **info** below that, and always
info for code outside loops (a prologue runs once per wave). The finding's
`cost` (JSON) and its `cost:` note give the numbers.

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

Calibrated assumptions (no public source; chosen because they reproduce what
RGP showed on the 7900 XTX: 2-3 cycles for most dual FMAs of the compiler's
loop above, 1 cycle for every dual FMA of the rewritten one):
- a bank delivers one value per cycle to SRC0/SRC1, whether it comes from the
  cache or the register file (one cache entry per bank);
- the same holds within one single instruction: a non-VOPD instruction whose
  SRC0 and SRC1 are two registers of one bank stalls a cycle too (the guide
  states the bank rule for pairs only);
- SRC2 reads and result writes have their own paths (the rewritten loop reads
  two accumulators and writes two results every cycle without stalling).
The parameters and the reasoning are in `isalint/hw/vgpr_banks.py`.
"""
from __future__ import annotations

from isalint.hw.vgpr_banks import _op_from_instr, simulate

from .cost import SiteCost, aggregate, fma_loop_fixable

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

    def ops(idx):
        return [_op_from_instr(instrs[i], analysis.vopd_half) for i in idx]

    out = []
    covered: set[int] = set()
    for loop in cfg.loops:
        if not loop.innermost:
            continue
        idx = loop.indices(cfg)
        covered.update(idx)
        out.append((loop, simulate(ops(idx), loop=True, stalls_only=True), True))
    for blk in cfg.blocks:
        idx = [i for i in blk.indices() if i not in covered]
        if not idx or not any(instrs[i].klass in ("valu", "vopd", "trans") for i in idx):
            continue
        out.append((cfg.loop_of(idx[0]), simulate(ops(idx), stalls_only=True), False))
    analysis.__dict__["_bank001_sims"] = out
    return out


def _operand_span(ins, access) -> tuple[int, int]:
    """Columns of the operand an access reads (X half or Y half), else of the whole instruction."""
    stmt = ins.stmts[1] if access.slot.endswith("Y") and len(ins.stmts) > 1 else ins.stmts[0]
    for op in stmt.operands[1:]:
        if op.col and access.reg in op.registers():
            return op.col, op.col + len(op.text)
    return ins.stmts[0].col, max(ins.stmts[-1].end_col, ins.stmts[0].col + 1)


def _sites(analysis):
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
            msg = f"{'; '.join(parts)}: +{step.stall} cycle{'s' if step.stall > 1 else ''} ({where})"
            col, end = _operand_span(ins, step.conflicts[0][1][-1])
            yield SiteCost(step.op.index, col, end, msg, step.stall)


def _headline(analysis):
    def headline(region, sites, cost):
        n = len(sites)
        per = cost["cycles_per_execution"]
        when = "per iteration" if region.loop is not None else "once per wave"
        what = f"{n} VALU instruction{'s' if n > 1 else ''}" if n > 1 else "a VALU instruction"
        return (f"VGPR bank conflicts: {what} of {region.name} stall{'s' if n == 1 else ''} "
                f"{per:g} cycle{'s' if per != 1 else ''} {when}: a bank's operand cache feeds one value per cycle")
    return headline


def check(analysis):
    yield from aggregate(analysis, CODE, list(_sites(analysis)), _headline(analysis),
                         fix=lambda region, sites: FIXABLE if fma_loop_fixable(analysis, region.loop) else None)
