"""WMMA001: a WMMA reads, as its A or B matrix, what the WMMA just before it writes.

## What it finds
A `v_wmma_*` whose first or second source (matrix A or B) overlaps the
destination (matrix D) of the previous VALU instruction on some path to it,
when that instruction is itself a WMMA. Any other VALU instruction between the
two (a `v_nop` is the usual one) ends the hazard; scalar, memory and wait
instructions do not. Paths are followed across branches and around loops: the
last WMMA of a loop body and the first of the next iteration count as
neighbours.

## Severity
**Error**: the second WMMA may read the old matrix, and the kernel computes
wrong results without any fault.

## Why it matters
On gfx11 the hardware does not check this dependency between back-to-back
WMMAs: the D of one is not yet written when the next reads its A/B operands.
Compilers insert a `v_nop` here; hand-edited kernels (reordered matrix
chains, a removed "useless" `v_nop`) lose it. Reading the result as matrix C
(the accumulator) is safe and is not reported.

## Example
```asm
; bad: B of the second WMMA is the D of the first
v_wmma_f16_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]
v_wmma_f32_16x16x16_f16 v[24:31], v[32:39], v[0:7], v[24:31]   ; WMMA001
; good
v_wmma_f16_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]
v_nop
v_wmma_f32_16x16x16_f16 v[24:31], v[32:39], v[0:7], v[24:31]
```

## Fix safety
No automatic fix. Inserting `v_nop` before the second WMMA is always safe (it
costs one issue cycle).

## Reference
The gfx11 WMMA hazard as LLVM's AMDGPU hazard recognizer handles it
(`fixWMMAHazards`: one VALU instruction between a WMMA and a WMMA that reads
its D as SrcA or SrcB); RDNA3 ISA guide, "Wave Matrix Multiply Accumulate".
"""
from __future__ import annotations

from collections import deque

from isalint.diagnostics import at_instr

CODE = "WMMA001"
NAME = "wmma-back-to-back-dependency"
SEVERITY = "error"
SUMMARY = "A WMMA reads as A or B the matrix the WMMA just before it writes (needs one VALU, e.g. v_nop, between)"
FIXABLE = None

_VALU = ("valu", "trans", "vopd")


def _is_wmma(ins) -> bool:
    return ins.opcode.startswith("v_wmma_")


def _regs(ins, names: tuple[str, ...]) -> set[str]:
    return {r for s in ins.slots[0] for r in s.regs if s.name in names}


def _vgprs(regs) -> int:
    """A mask of the VGPRs among ``regs`` (bit n for vN)."""
    mask = 0
    for r in regs:
        if r[:1] == "v" and r[1:].isdigit():
            mask |= 1 << int(r[1:])
    return mask


def _leaving(instrs, i) -> tuple[int, dict[int, int]]:
    """What VALU instruction ``i``, issued last, leaves: the VGPRs a WMMA writes and who writes each."""
    ins = instrs[i]
    if ins.opaque or not _is_wmma(ins):
        return 0, {}
    mask = _vgprs(_regs(ins, ("vdst",)))
    return mask, {n: i for n in range(mask.bit_length()) if mask >> n & 1}


def _merge(states) -> tuple[int, dict[int, int]]:
    mask, who = 0, {}
    for m, w in states:
        if m & ~mask:
            for n, i in w.items():
                who.setdefault(n, i)
            mask |= m
    return mask, who


def _wmma_writes_at_exit(analysis) -> list[tuple[int, dict[int, int]]]:
    """Per block, the VGPRs a WMMA writes when that WMMA can be the last VALU instruction issued as
    control leaves the block (its own last VALU, else what its predecessors leave: a fixed point over
    VALU-free blocks and loops), with one such WMMA per VGPR. Masks of at most 256 bits keep it
    linear in the blocks whatever the paths."""
    cfg, instrs = analysis.cfg, analysis.program.instrs
    out: list[tuple[int, dict[int, int]]] = []
    free: list[int] = []
    for blk in cfg.blocks:
        last = next((i for i in range(blk.last - 1, blk.first - 1, -1) if instrs[i].klass in _VALU), None)
        out.append((0, {}) if last is None else _leaving(instrs, last))
        if last is None:
            free.append(blk.id)
    is_free = set(free)
    work = deque(free)
    queued = set(free)
    while work:
        b = work.popleft()
        queued.discard(b)
        merged = _merge(out[p] for p in cfg.blocks[b].preds)
        if merged[0] != out[b][0]:
            out[b] = merged
            for s in cfg.blocks[b].succs:
                if s in is_free and s not in queued:
                    queued.add(s)
                    work.append(s)
    return out


def _before(analysis, at_exit, index: int) -> tuple[int, dict[int, int]]:
    """The VGPRs a WMMA issued last before ``index`` can have written, on some path to it."""
    cfg, instrs = analysis.cfg, analysis.program.instrs
    blk = cfg.blocks[cfg.block_of[index]]
    for i in range(index - 1, blk.first - 1, -1):
        if instrs[i].klass in _VALU:
            return _leaving(instrs, i)
    return _merge(at_exit[p] for p in blk.preds)


def check(analysis):
    program = analysis.program
    instrs = program.instrs
    wmmas = [ins for ins in instrs if not ins.opaque and _is_wmma(ins)]
    if not wmmas:
        return
    at_exit = _wmma_writes_at_exit(analysis)
    for ins in wmmas:
        reads = _vgprs(_regs(ins, ("src0", "src1")))
        written, who = _before(analysis, at_exit, ins.index)
        shared = reads & written
        if not shared:
            continue
        regs = [n for n in range(shared.bit_length()) if shared >> n & 1]
        prev = instrs[who[regs[0]]]
        regs = [n for n in regs if who[n] == prev.index]
        which = " and ".join(name for name, slot in (("A", "src0"), ("B", "src1"))
                             if _vgprs(_regs(ins, (slot,))) & sum(1 << n for n in regs))
        shown = f"v{regs[0]}" if len(regs) == 1 else f"v{regs[0]}-v{regs[-1]}"
        yield at_instr(program, ins, CODE, SEVERITY,
                       f"'{ins.opcode}' reads {shown} as matrix {which}, which '{prev.text()}' at line "
                       f"{prev.lineno} writes as its D with no VALU instruction between: the hardware may "
                       "read the old values; put a v_nop before this WMMA")
