"""DELAY001: an ALU instruction reads a recent ALU result that no `s_delay_alu` waits for.

## What it finds
A VALU, transcendental or SALU instruction that reads a register a recent
VALU, transcendental or SALU instruction wrote, while that result can still be
in flight, with no `s_delay_alu` before it that names the dependency (or a
closer one of the same kind). "Recent" is what the hint can express: a VALU
result up to 4 VALU instructions back that is younger than its latency (5
cycles, 6 for 64-bit results and 64-bit compares, 8 for quarter-rate
multiplies, 2 for the SGPR carry of `v_add_co_u32`-style VOP3b instructions),
a transcendental one up to 3 transcendental instructions back (10 cycles), an
SALU one within 2 cycles. Only written operands count, EXEC and VCC included
when they are written out (`s_or_b32 exec_lo, exec_lo, s0`); the VCC the
32-bit forms imply is not followed. LDS and memory instructions wait for
every VALU result before they issue and end what is pending. Paths are
followed across branches and around loops, the states of a block's
predecessors merged, as LLVM's `AMDGPUInsertDelayAlu` does; the adds of a
PC-relative address after `s_getpc_b64` (and a long branch's `s_setpc_b64`)
never get a hint, as in the compiler. On every kernel clang 19 compiled for
the fixtures, on kernel5.s and on a corpus of 16 clang 19 GEMM kernels
(naive, tiled, register-blocked, 64-bit index math, branches, unrolled,
double, half, integer), this rule names exactly the instructions the compiler
hinted, so on compiler output it reports nothing.

## Severity
By what the stall costs and how sure that is. Each site costs at most the
cycles its result still needs, once per execution of its loop (a result from
outside the loop only on entering it). A loop's finding says the stall per
iteration and its share of the iteration (the stall against the cycles the
iteration takes to issue); the numbers are the latencies in `isalint/hw`
(LLVM's gfx11 scheduling model), and a stall is an upper bound, paid only
while another wave on the SIMD has an instruction ready. It is a warning only
for a material stall in a hot loop: at least 5% of an iteration and 1% of the
kernel's modelled VALU issue cycles, in the kernel's hottest loop (by issue
cycles per wave), a loop around it, or a loop whose trip count is in the code
and that issues at least half as much. Everything else is info: code that runs
once per wave, a small stall, or a loop not shown to be hot (a remainder loop
beside the main loop, whose trip count is only assumed). The finding's notes
and its JSON `cost` say how sure it is (`confidence`: high when the loop is
hot and its trip count is in the code, medium when it is the hottest loop but
its trip count is assumed, low otherwise), with `loop_issue_cycles`,
`loop_share` and `hot`.

## Why it matters
On gfx11 the SIMD front end does not switch to another wave when the
instruction it issues must wait for an ALU result: that wave stalls in the
ALU and the ALU does nothing else for those cycles. `s_delay_alu` announces
the dependency so the front end issues other waves meanwhile. The compiler
writes these hints; a hand edit that inserts, moves or reorders instructions
leaves them naming the wrong instruction or missing, and the kernel is still
correct (the hardware interlocks) but slower. In a hot loop that is a stall of
the whole SIMD per iteration.

## Example
```asm
v_lshrrev_b32_e32 v1, 3, v0
v_lshlrev_b32_e32 v1, 12, v1      ; DELAY001: needs VALU_DEP_1 (4 cycles)
```
Good:
```asm
v_lshrrev_b32_e32 v1, 3, v0
s_delay_alu instid0(VALU_DEP_1)
v_lshlrev_b32_e32 v1, 12, v1
```
Not reported (the compiler writes no hint either): a carry read three cycles
after `v_add_co_u32` wrote it, its SGPR result being in flight 2 cycles.
```asm
v_add_co_u32 v5, s7, v9, 2
v_add3_u32 v17, v17, v19, v18
v_mov_b32_e32 v21, s5
v_add_co_ci_u32_e64 v7, s7, 0, v8, s7
```

## Fix safety
`isalint fix --delay-alu` writes the hints of each block that lacks one again
(never between `s_getpc_b64` and its PC-relative adds, where a line would
change the address they compute):
one `s_delay_alu` before each instruction that needs a wait (two waits in one
hint where it needs two, and a single wait carried for the next instruction with
`instskip`, as the compiler writes them). A hint changes no result, only which
wave issues while the dependency resolves, so the fix is validated on machine
code: the output must assemble and, without its hints, be the input's code byte
for byte. That check cannot see an address counted in bytes from `s_getpc_b64`
(a disassembled code object's long jumps: `s_add_i32 s68, 0xc98, 4`), which
any added line can move, so a file that branches that way is refused (so is
any other `fix` pass's output that adds, removes or changes an instruction
there). Every other `fix` pass writes the hints its own new code needs.

## Reference
RDNA3 ISA guide, "S_DELAY_ALU" and its "Data Dependency Resolution" section;
LLVM `AMDGPUInsertDelayAlu.cpp` (which dependencies get a hint: explicit
operands only, states merged over a block's predecessors until they settle, no
hint inside a bundle, every VALU result ended by LDS, memory, export and
`s_waitcnt_depctr va_vdst(0)` but not by `s_waitcnt`; the encodable
distances) and its scheduling model (`SISchedule.td`, and `SchedRW = [Write32Bit,
WriteSALU]` of the VOP3b carries in `VOP2Instructions.td`/`VOP3Instructions.td`); Mesa ACO `aco_insert_delay_alu.cpp` (without the hint the wave
stalls in the ALU and the ALU does nothing else).
"""
from __future__ import annotations

from isalint.hw import latency as _lat
from isalint.model.alu_delays import pending_dependencies
from isalint.model.hotness import hotness

from .cost import LOOP_SHARE_WARN, SiteCost, aggregate, loop_standing

CODE = "DELAY001"
NAME = "missing-delay-alu"
SEVERITY = "warning"
SUMMARY = "An ALU instruction reads a recent ALU result with no s_delay_alu naming it (the SIMD stalls)"
FIXABLE = "--delay-alu"

_KIND = {"valu": "VALU", "trans": "transcendental", "salu": "SALU"}


def _sites(analysis):
    instrs = analysis.program.instrs
    cfg = analysis.cfg
    block_of, innermost, count = cfg.block_of, cfg.innermost, len(cfg.block_of)
    pending = pending_dependencies(analysis)  # in consumer order
    n, k = len(pending), 0
    while k < n:
        p = pending[k]
        i = p.consumer
        j = k + 1
        while j < n and pending[j].consumer == i:
            j += 1
        # a result that comes from outside the instruction's loop is in flight only when the loop is
        # entered, not on every iteration (one from the same loop: every time); cfg.loop_of, inline
        mine = innermost[block_of[i]] if 0 <= i < count else None
        if j == k + 1:  # one dependency, as most sites have
            message, stall = _part(analysis, instrs, p, i, mine, block_of, innermost, count)
        else:
            stall = None
            parts = []
            for p in pending[k:j]:
                part, cycles = _part(analysis, instrs, p, i, mine, block_of, innermost, count)
                if stall is None or cycles > stall:
                    stall = cycles
                parts.append(part)
            message = "; ".join(parts)
        k = j
        stmts = instrs[i].stmts
        first, last = stmts[0], stmts[-1]
        yield SiteCost(i, first.col, max(last.end_col, first.col + 1), message, float(stall))


def _part(analysis, instrs, p, i: int, mine, block_of, innermost, count) -> tuple[str, float]:
    """What a site's message says of one dependency, and the cycles it stalls per execution."""
    producer = p.producer
    if producer >= 0:
        theirs = innermost[block_of[producer]] if producer < count else None
        scale = 1.0 if theirs is mine else _entries_per_execution(analysis, producer, i)
        line = instrs[producer].lineno
        what = f"{p.reg} from line {line}" if p.reg else f"line {line}"
    else:
        scale = 1.0
        what = "an earlier instruction"
    need, stall = p.need, p.stall
    tail = _WHY.get((need.kind, need.n, stall, scale < 1))
    if tail is None:
        tail = _why(need, stall, scale < 1)
    return what + tail, stall * scale


_WHY: dict[tuple, str] = {}


def _why(need, stall: int, on_entry: bool) -> str:
    """The rest of a dependency's part of a site's message, after what it reads (kept in ``_WHY``,
    where :func:`_part` looks it up first)."""
    entry = " on entering the loop" if on_entry else ""
    text = _WHY[(need.kind, need.n, stall, on_entry)] = (
        f" ({_KIND[need.kind]} result, {stall} cycle{'s' if stall != 1 else ''} left{entry}): needs {need.name}")
    return text


def _entries_per_execution(analysis, producer: int, consumer: int) -> float:
    """How often the producer's code runs per run of the consumer's, at most 1."""
    if producer < 0:
        return 1.0
    mine, theirs = _executions(analysis, consumer), _executions(analysis, producer)
    return 1.0 if not mine or theirs >= mine else theirs / mine


def _executions(analysis, index: int) -> int:
    cache = analysis.__dict__.setdefault("_delay001_executions", {})
    loop = analysis.cfg.loop_of(index)
    key = id(loop)
    if key not in cache:
        cache[key] = hotness(analysis).of_loop(loop).count
    return cache[key]


def check(analysis):
    sites = list(_sites(analysis))
    if not sites:
        return
    standing: dict = {}

    def facts(region, group):
        key = (id(region.kernel), id(region.loop))
        if key not in standing:
            standing[key] = loop_standing(analysis, region, sum(s.cycles for s in group))
        return standing[key]

    def material(region, group):
        f = facts(region, group)
        return f["hot"] and f["loop_share"] is not None and f["loop_share"] >= LOOP_SHARE_WARN

    def headline(region, group, cost):
        n = len(group)
        f = facts(region, group)
        total = cost["cycles_per_execution"]
        avg = " on average" if any(s.cycles != int(s.cycles) for s in group) else ""
        if region.loop is not None:
            when = (f"per iteration{avg} ({100 * f['loop_share']:.0f}% of an iteration's "
                    f"{f['loop_issue_cycles'] + total:.3g} cycles)")
        else:
            when = f"once per wave{avg}"
        return (f"{n} ALU instruction{'s' if n > 1 else ''} in {region.name} read{'' if n > 1 else 's'} a result "
                f"still in flight with no s_delay_alu naming it: the SIMD stalls up to {total:.3g} "
                f"cycle{'s' if total != 1 else ''} {when} instead of issuing other waves")

    for region, _group, diag in aggregate(analysis, CODE, sites, headline, eligible=material,
                                          fix=lambda region, group: FIXABLE, with_group=True):
        f = standing[(id(region.kernel), id(region.loop))]
        diag.cost.update({k: f[k] for k in ("loop_issue_cycles", "loop_share", "hot", "confidence")})
        verdict = ("a material stall in a hot loop" if diag.severity == "warning" else
                   "small or unproven: " + ("the loop is not shown to be hot" if region.loop is not None and not f["hot"]
                                            else "under 5% of an iteration" if region.loop is not None
                                            and f["loop_share"] < LOOP_SHARE_WARN else
                                            "under 1% of the kernel's VALU issue" if region.loop is not None
                                            else "code that runs once per wave"))
        diag.notes.insert(1, f"how sure ({f['confidence']}): {f['why']}; dependencies and latencies are LLVM's gfx11 "
                             f"scheduling facts (VALU {_lat.VALU_LATENCY} cycles, 64-bit {_lat.VALU64_LATENCY}, "
                             f"transcendental {_lat.TRANS_LATENCY}, SALU {_lat.SALU_LATENCY}); each stall is an upper "
                             f"bound, paid only while another wave on the SIMD has an instruction ready; {verdict}")
        yield diag
