"""GMEM001: global loads serialized behind a chain of 64-bit address math.

## What it finds
Inside a loop, `global_load*` / `flat_load*` instructions that take a 64-bit
VGPR address (`global_load_b32 vD, v[a:a+1], off`) rebuilt every iteration by
VALU instructions (`v_add_nc_u32`, `v_ashrrev_i32`, `v_lshlrev_b64`,
`v_add_co_u32`, `v_add_co_ci_u32`, `v_mad_u64_u32` ...), where each load's
address computation reuses the previous load's (the next row index is the
previous one plus the row stride, or all addresses hang off one freshly
computed base). For every loop block it reports the chained loads, the VALU
instructions they need (in total and per load) and the longest chain of
dependent VALU instructions in front of the last load.

isalint takes, for each load, the VALU instructions of the current iteration
whose results reach its address (reaching definitions inside the loop, not
around the back edge); a load is chained to the one before it when they share
part of that computation and it still needs VALU work of its own.

## Severity
A cost: the VALU instructions that build the addresses, per iteration, times
how often the loop runs (as for BANK001). A **warning** when that is at least 1%
of the kernel's modelled VALU issue cycles per wave, **info** below. Only loops
are examined: outside them an address is built once.

## Why it matters
A compiled GEMM loop on a 7900 XTX spent 128 lines of VALU code computing 16 global-load
addresses: five dependent VALU instructions per load, each chain starting from
the previous load's index. The loads cannot issue before their own chain, the
chains cannot start before the previous one, and the VALU cycles are taken
from the FMAs of the waves sharing the SIMD. Keeping the 16 row bases in
SGPR pairs and one 32-bit byte offset per lane, so each load became a single
`global_load_b32 vD, vOff, s[base:base+1]` and the offset is bumped once per
iteration; that kernel took 16% less time.

## Example
```asm
v_add_nc_u32_e32 v169, s4, v168            ; next row index
v_ashrrev_i32_e32 v170, 31, v169
v_lshlrev_b64 v[170:171], 2, v[169:170]
v_add_co_u32 v170, vcc_lo, s10, v170
v_add_co_ci_u32_e32 v171, vcc_lo, s11, v171, vcc_lo
global_load_b32 v168, v[170:171], off      ; GMEM001 (with the loads before and after it)
```
Good (bases in SGPRs, one offset VGPR advanced once per iteration):
```asm
global_load_b32 v167, v203, s[24:25]
global_load_b32 v168, v203, s[26:27]
```

## Fix safety
`isalint fix --batch-gmem` makes this rewrite when it can prove it: it evaluates each address
exactly, computes the bases once before the loop with SALU in SGPR pairs proven free over the loop
(2 SGPRs per base), keeps one 32-bit VGPR byte offset per group of loads, and validates the result.
The offset must fit in 32 bits unsigned, which can lower the largest N the kernel supports (for
kernel 5, N <= 32768, where its int32 indices allow 46333): the pass then refuses unless
`--max-n` accepts the limit.

## Reference
RDNA3 ISA guide, "Global, Scratch and Flat memory" (address computation: SADDR
64-bit base + 32-bit VGPR offset, or a 64-bit VGPR address with SADDR off).
"""
from __future__ import annotations

from isalint.diagnostics import at_instr
from isalint.model.reaching import reaching_defs, valu_slice

from .cost import cost_note, cost_of, region_of, severity_for

CODE = "GMEM001"
NAME = "serialized-global-address-chain"
SEVERITY = "warning"
SUMMARY = "Global loads in a loop whose 64-bit addresses are rebuilt by chained VALU math"
FIXABLE = "--batch-gmem"

MIN_VALU_PER_LOAD = 2


def _address_regs(ins) -> list[str] | None:
    """The 64-bit VGPR address of a global/flat load, or None (SGPR base, other ops)."""
    op = ins.opcode
    if not (op.startswith("global_load") or op.startswith("flat_load")) or ins.opaque:
        return None
    slots = ins.slots[0]
    addr = next((s for s in slots if s.name in ("addr", "vaddr")), None)
    if addr is None or len(addr.regs) != 2:
        return None
    return addr.regs


def _depth(program, nodes: set[int], target: int, regs: list[str], blocks, header) -> int:
    """Longest chain of dependent instructions of ``nodes`` that ends at ``target``'s ``regs``."""
    preds = {i: {d for u in program.instrs[i].uses for d in reaching_defs(program, i, u, blocks, header)
                 if d in nodes and d != i} for i in nodes}
    succs: dict[int, list[int]] = {i: [] for i in nodes}
    for i, ps in preds.items():
        for p in ps:
            succs[p].append(i)
    waiting = {i: len(ps) for i, ps in preds.items()}
    ready = [i for i, n in waiting.items() if n == 0]
    depth: dict[int, int] = {}
    while ready:  # topological order: the slice of one iteration has no cycle
        i = ready.pop()
        depth[i] = 1 + max((depth[p] for p in preds[i]), default=0)
        for s in succs[i]:
            waiting[s] -= 1
            if waiting[s] == 0:
                ready.append(s)
    return max((depth.get(d, 0) for r in regs for d in reaching_defs(program, target, r, blocks, header)
                if d in nodes), default=0)


def check(analysis):
    program = analysis.program
    cfg = analysis.cfg
    for blk in cfg.blocks:
        loop = cfg.loop_of(blk.first) if blk.last > blk.first else None
        if loop is None:
            continue
        loads = []
        for i in blk.indices():
            regs = _address_regs(program.instrs[i])
            if regs is not None:
                loads.append((i, regs, valu_slice(program, i, regs, loop.blocks, loop.header)))
        if len(loads) < 2:
            continue
        seen: set[int] = set()
        dedicated = []
        for _, _, sl in loads:
            dedicated.append(sl - seen)
            seen |= sl
        chains: list[list[int]] = [[0]]
        for j in range(1, len(loads)):
            linked = bool(loads[j][2] & loads[j - 1][2]) and len(dedicated[j]) >= 1
            if linked:
                chains[-1].append(j)
            else:
                chains.append([j])
        chains = [c for c in chains if len(c) >= 2]
        chains = [c for c in chains if sum(len(dedicated[j]) for j in c) >= MIN_VALU_PER_LOAD * len(c)]
        if not chains:
            continue
        members = [j for c in chains for j in c]
        valu = sum(len(dedicated[j]) for j in members)
        depth = max(_depth(program, loads[j][2], loads[j][0], loads[j][1], loop.blocks, loop.header)
                    for j in members)
        first = program.instrs[loads[members[0]][0]]
        lengths = [len(c) for c in chains]
        if len(chains) == 1:
            shape = f"a chain of {lengths[0]} loads"
        elif len(set(lengths)) == 1:
            shape = f"{len(chains)} chains of {lengths[0]} loads"
        else:
            shape = f"{len(chains)} chains of {', '.join(map(str, lengths[:-1]))} and {lengths[-1]} loads"
        where = cfg.blocks[loop.header].label or f"line {program.instrs[cfg.blocks[loop.header].first].lineno}"
        last = program.instrs[loads[members[-1]][0]]
        msg = (f"{len(members)} global loads in the loop at {where} (lines {first.lineno}-{last.lineno}) "
               f"rebuild their 64-bit address with VALU math every iteration, {shape}, each address "
               f"computed from the previous load's: {valu} VALU instructions ({valu / len(members):.1f} per load)")
        region = region_of(analysis, first.index)
        cost = cost_of(analysis, region, valu)
        diag = at_instr(program, first, CODE, severity_for(region, cost), msg)
        diag.cost = cost
        diag.notes += [f"up to {depth} dependent VALU instructions before a load can issue",
                       cost_note(analysis, region, cost, "VALU instructions"),
                       "keep the row bases in SGPR pairs and one 32-bit VGPR byte offset advanced once per "
                       "iteration: global_load_b32 vD, vOff, s[base:base+1] (SGPR-base addressing; `isalint fix "
                       "--batch-gmem` rewrites the loads so, or says why it cannot)"]
        yield diag
