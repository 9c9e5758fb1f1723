"""WAIT002: s_waitcnt stricter than any register needs.

## What it finds
An `s_waitcnt` whose `vmcnt` or `lgkmcnt` count is lower than the registers
used after it need: it waits for loads nothing reads before the next wait (or
for more of them than anything reads). The finding names the loosest count that
still covers every use, e.g. `lgkmcnt(1) is enough for the registers used next,
not lgkmcnt(0)`. The counters are followed along every path of the
control-flow graph, loop back edges included (as for WAIT001).

Left alone: a wait right before `s_barrier`, a message or the end of the
program (it orders memory for other waves), a wait that ends its basic block,
and a wait that is too weak for some register (that is WAIT001, at the use).

## Severity
Info: a stricter wait is always correct, only slower (it stalls the wave until
loads complete whose results are not needed yet).

## Why it matters
Memory latency is hidden by doing work while loads are in flight. A wait that
retires every load before the first one is needed serializes the loads with
the math: kernel code that software-pipelines LDS reads (one `s_waitcnt
lgkmcnt(N)` per FMA group) loses the overlap.

## Example
```asm
ds_load_b128 v[4:7], v1
ds_load_b128 v[8:11], v1 offset:64
s_waitcnt lgkmcnt(0)             ; WAIT002: lgkmcnt(1) is enough
v_add_f32_e32 v12, v4, v5
s_waitcnt lgkmcnt(0)
v_add_f32_e32 v13, v8, v9
```
Good:
```asm
s_waitcnt lgkmcnt(1)
v_add_f32_e32 v12, v4, v5
s_waitcnt lgkmcnt(0)
v_add_f32_e32 v13, v8, v9
```

## Fix safety
No automatic fix. Loosening a wait is safe only for the registers this wave
reads; keep a stricter wait that orders memory for other waves (LDS written
for a later barrier, a global store another workgroup polls).

## Reference
RDNA3 ISA guide, "Data Dependency Resolution" (Program Flow Control chapter) and
the `S_WAITCNT` entry of the SOPP instruction list.
"""
from __future__ import annotations

from isalint.diagnostics import at_instr
from isalint.model.counters import analyze
from isalint.model.waitcnt import wait_thresholds, waitcnt_text

CODE = "WAIT002"
NAME = "waitcnt-stricter-than-needed"
SEVERITY = "info"
SUMMARY = "s_waitcnt that waits for more loads than the registers used next need"
FIXABLE = None

_QUIET = ("s_nop", "s_delay_alu", "s_waitcnt", "s_waitcnt_vscnt", "s_waitcnt_vmcnt", "s_waitcnt_lgkmcnt",
          "s_waitcnt_expcnt", "s_clause")


def _counters(analysis):
    """The counter analysis, shared with WAIT001 when it ran first."""
    cache = analysis.__dict__.setdefault("_derived", {})
    if "counters" not in cache:
        cache["counters"] = analyze(analysis.program)
    return cache["counters"]


def check(analysis):
    program = analysis.program
    if not program.instrs:
        return
    result = _counters(analysis)
    for i, ins in enumerate(program.instrs):
        if ins.klass != "waitcnt" or ins.opaque:
            continue
        thr = wait_thresholds(ins)
        if not thr or _guards_memory(program, i):
            continue
        looser: dict[str, int | None] = {}
        for c, n in thr.items():
            if c not in ("vmcnt", "lgkmcnt"):
                continue
            if not result.retires_any(i, c):
                continue  # retires nothing on any path: nothing to judge
            looser_ok, need = result.looser_threshold(i, c)  # needed_threshold(i, c) when None or > n
            if looser_ok:
                looser[c] = need
        if not looser:
            continue
        parts = []
        for c, need in looser.items():
            if need is None:
                parts.append(f"no register read before the next wait needs its {c}({thr[c]})")
            else:
                parts.append(f"{c}({need}) is enough for the registers used next, not {c}({thr[c]})")
        yield at_instr(program, ins, CODE, SEVERITY,
                       f"{waitcnt_text(thr)} waits longer than any register needs: " + "; ".join(parts)
                       + " (keep it if it orders memory for other waves)")


def _guards_memory(program, index: int) -> bool:
    """A wait followed (in its block, past quiet instructions) by a barrier or the end orders memory."""
    cfg = program.cfg()
    blk = cfg.blocks[cfg.block_of[index]]
    for j in range(index + 1, blk.last):
        ins = program.instrs[j]
        if ins.opcode in _QUIET:
            continue
        return ins.klass in ("barrier", "endpgm", "message") or ins.ends_program()
    return True  # a wait that ends its block: leave it alone
