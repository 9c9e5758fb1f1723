"""DUAL001: illegal VOPD pair.

## What it finds
A `v_dual_*` instruction (`OPX :: OPY`) that breaks a dual-issue constraint:

- an opcode that cannot be the X half: `v_dual_add_nc_u32`, `v_dual_lshlrev_b32`
  and `v_dual_and_b32` only fit the 5-bit OPY field, not the 4-bit OPX field
  (`v_dual_dot2acc_f32_bf16` is legal: the ISA guide lists it; LLVM assembles
  it from release 20, and `isalint assemble` says so when an older one rejects it);
- SRC0X and SRC0Y in the same VGPR bank (register index mod 4), or VSRC1X and
  VSRC1Y in the same bank;
- both destinations even, or both odd;
- both operands read through the SRC2 port even (or both odd): the accumulator
  of `fmac`/`dot2acc` (its destination) and the VGPR addend of `fmamk`;
- two different literal values (fmaak/fmamk's K included): the instruction has
  room for one 32-bit literal, shared by both halves;
- more than 2 scalar values in total (distinct SGPRs, the implicit VCC of
  `v_dual_cndmask_b32`, the literal);
- operands VOPD cannot encode: a non-VGPR VSRC1 or destination, 64-bit
  registers, neg/abs modifiers;
- a VOPD in a wave64 kernel (the hardware skips it).

These are the hardware's constraints as LLVM's assembler (release 20 and newer)
enforces them for gfx1100; isalint's verdict agrees with `llvm-mc` on thousands of
random pairs (tests/test_dual001.py). LLVM 19 departs in two places, where isalint
follows the hardware: it rejects `v_dual_dot2acc_f32_bf16`, and beside an
`fmaak`/`fmamk` it re-encodes a `dot2acc` f16 constant as a 32-bit value to share
the K literal (changing the value the `dot2acc` reads).

The Y half reading the register the X half writes is legal: that is DUAL003.

The message names the broken constraint and the registers, and points at the
offending operand of the Y half, where `llvm-mc` points.

## Severity
Error: the assembler rejects the line (a VOPD in a wave64 kernel assembles, but
the hardware skips it). Never weighed by hotness.

## Why it matters
The assembler rejects the line, so a hand edit (a VOPD-only FMA block is
usually written by hand) fails to build; isalint says which constraint and which
register, in every file at once, without an assembler.

## Example
```asm
; bad: both SRC0 read v184 (bank 0), both destinations even
v_dual_fmac_f32 v124, v184, v192 :: v_dual_fmac_f32 v134, v184, v193
; good: A in banks 2-3 as SRC0, B in banks 0-1 as VSRC1, destinations odd/even
v_dual_fmac_f32 v5, v186, v184 :: v_dual_fmac_f32 v2, v187, v185
```

## Fix safety
No automatic fix: choosing other registers changes the register allocation.
`isalint fix --dual-fmac` rebuilds a whole GEMM loop with legal pairs.

## Reference
RDNA3 ISA guide, section 7.6 "Dual Issue VALU" (VOPD restrictions, VGPR banks
and the source-cache ports), and the VOPD encoding (OPX 4 bits, OPY 5 bits).
"""
from __future__ import annotations

from isalint.diagnostics import Diagnostic

CODE = "DUAL001"
NAME = "illegal-vopd-pair"
SEVERITY = "error"
SUMMARY = "VOPD pair that breaks a dual-issue constraint (banks, parity, literals, SGPRs, OPX opcodes)"
FIXABLE = None


def _span(ins, v, hx, hy) -> tuple[int, int]:
    """Columns of what the violation is about: the Y operand named in it, else the half, else the line."""
    line = ins.line
    targets = (hy, hx) if v.half != "X" else (hx,)
    for target in targets:
        for s in target.operands:
            if s.col and ((s.name and s.name in v.regs) or s.text in v.regs):
                return s.col, s.col + len(s.text)
    stmts = ins.stmts
    if v.half == "X":
        return stmts[0].col, stmts[0].end_col
    if v.half == "Y":
        return stmts[1].col, stmts[1].end_col
    return stmts[0].col, max(stmts[-1].end_col, len(line.text.rstrip()) + 1)


def check(analysis):
    program = analysis.program
    for ins in program.instrs:
        if len(ins.stmts) != 2:
            continue
        hx, hy = analysis.vopd_half(ins.index, 0), analysis.vopd_half(ins.index, 1)
        violations = analysis.vopd_violations(ins.index)
        kernel = program.kernel_of(ins.index)
        if kernel is not None and kernel.wave_size == 64:
            col = ins.stmts[0].col
            yield Diagnostic(program.path, ins.lineno, col, ins.lineno, ins.stmts[-1].end_col, CODE, "error",
                             f"VOPD in the wave64 kernel {kernel.name}: dual issue is wave32 only, the hardware "
                             "skips this instruction")
        for v in violations:
            if v.severity != "error":
                continue  # a legal pair's note: DUAL003
            col, end = _span(ins, v, hx, hy)
            yield Diagnostic(program.path, ins.lineno, col, ins.lineno, max(end, col + 1), CODE, SEVERITY,
                             v.message)
