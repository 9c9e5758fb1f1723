"""DELAY001: an ALU instruction reads a recent ALU result that no `s_delay_alu` waits for.

## What it finds
A VALU, transcendental or SALU instruction that reads a register a recent
VALU, transcendental or SALU instruction wrote, while that result can still be
in flight, with no `s_delay_alu` before it that names the dependency (or a
closer one of the same kind). "Recent" is what the hint can express: a VALU
result up to 4 VALU instructions back that is younger than its latency (5
cycles, 6 for 64-bit results, 8 for quarter-rate multiplies), a
transcendental one up to 3 transcendental instructions back (10 cycles), an
SALU one within 2 cycles. LDS and memory instructions wait for every VALU
result before they issue and end what is pending. Paths are followed across
branches and around loops, as LLVM's `AMDGPUInsertDelayAlu` follows them: on
every kernel clang 19 compiled for the fixtures, and on the corpus's
kernel5.s, this rule and the compiler agree hint for hint.

## Severity
Cost-weighted like the other performance rules: each site costs the cycles
the result still needs, once per execution of its loop; a warning when one
loop's sites add up to 1% of the kernel's VALU issue cycles, info otherwise
and always info in code that runs once per wave.

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

## Fix safety
`isalint fix --delay-alu` writes the hints of each block that lacks one again:
one `s_delay_alu` before each instruction that needs a wait (two waits in one
hint where it needs two, and a single wait carried for the next instruction with
`instskip`, as the compiler writes them). A hint changes no result, only which
wave issues while the dependency resolves, so the fix is validated on machine
code: the output must assemble and, without its hints, be the input's code byte
for byte. Every other `fix` pass writes the hints its own new code needs.

## Reference
RDNA3 ISA guide, "S_DELAY_ALU" and its "Data Dependency Resolution" section;
LLVM `AMDGPUInsertDelayAlu.cpp` (which dependencies get a hint, the encodable
distances); Mesa ACO `aco_insert_delay_alu.cpp` (without the hint the wave
stalls in the ALU and the ALU does nothing else).
"""
from __future__ import annotations

from isalint.model.alu_delays import pending_dependencies

from isalint.model.hotness import hotness

from .cost import SiteCost, aggregate

CODE = "DELAY001"
NAME = "missing-delay-alu"
SEVERITY = "warning"
SUMMARY = "An ALU instruction reads a recent ALU result with no s_delay_alu naming it (the SIMD stalls)"
FIXABLE = "--delay-alu"

_KIND = {"valu": "VALU", "trans": "transcendental", "salu": "SALU"}


def _sites(analysis):
    instrs = analysis.program.instrs
    by_consumer: dict[int, list] = {}
    for p in pending_dependencies(analysis):
        by_consumer.setdefault(p.consumer, []).append(p)
    for i, deps in sorted(by_consumer.items()):
        ins = instrs[i]
        # a result that comes from outside the instruction's loop is in flight only when the loop is
        # entered, not on every iteration
        scale = {id(p): _entries_per_execution(analysis, p.producer, i) for p in deps}
        stall = max(p.stall * scale[id(p)] for p in deps)
        parts = []
        for p in deps:
            prod = instrs[p.producer] if p.producer >= 0 else None
            what = f"{p.reg} from line {prod.lineno}" if prod is not None and p.reg else (
                f"line {prod.lineno}" if prod is not None else "an earlier instruction")
            entry = " on entering the loop" if scale[id(p)] < 1 else ""
            parts.append(f"{what} ({_KIND[p.need.kind]} result, {p.stall} cycle{'s' if p.stall != 1 else ''} "
                         f"left{entry}): needs {p.need.name}")
        first, last = ins.stmts[0], ins.stmts[-1]
        yield SiteCost(i, first.col, max(last.end_col, first.col + 1), "; ".join(parts), float(stall))


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

    def headline(region, group, cost):
        n = len(group)
        when = "per iteration" if region.loop is not None else "once per wave"
        total = cost["cycles_per_execution"]
        avg = " on average" if any(s.cycles != int(s.cycles) for s in group) else ""
        return (f"{n} ALU instruction{'s' if n > 1 else ''} in {region.name} read{'' if n > 1 else 's'} a result "
                f"still in flight with no s_delay_alu naming it: the SIMD stalls {total:.3g} "
                f"cycle{'s' if total != 1 else ''} {when}{avg} instead of issuing other waves")

    yield from aggregate(analysis, CODE, sites, headline, fix=lambda region, group: FIXABLE)
