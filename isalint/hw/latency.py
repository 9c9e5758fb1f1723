"""Result latencies of the gfx11 ALU pipelines, as LLVM's ``GFX11SpeedModel`` (``SISchedule.td``)
schedules gfx11 code with them, in cycles from issue until a result can be read.

A module of plain numbers (no dataclasses), so that the check path can read them without paying
for :mod:`isalint.hw.timing`'s imports; :class:`isalint.hw.timing.Timing` takes its defaults from here.
"""
from __future__ import annotations

VALU_LATENCY = 5  # Write32Bit
VALU64_LATENCY = 6  # Write64Bit: 64-bit results
QUARTER_RATE_LATENCY = 8  # WriteQuarterRate32 / WriteIntMul
TRANS_LATENCY = 10  # WriteTrans32
SALU_LATENCY = 2  # WriteSALU
# The SGPR carry or mask a VALU instruction writes beside its VGPR result (v_add_co_u32's carry-out,
# VOP3b): its second write in LLVM's scheduling model (VOP2b SchedRW = [Write32Bit, WriteSALU]), the SALU one.
SGPR_CARRY_LATENCY = 2
# A wave32 v_wmma_* (16x16x16) keeps the SIMD's matrix path this long (see isalint.hw.timing's source note).
WMMA_CYCLES = 32

# 32-bit integer multiplies and 64-bit integer multiply-adds run at quarter rate, their results after
# QUARTER_RATE_LATENCY.
QUARTER_RATE_OPCODES = frozenset({"v_mul_lo_u32", "v_mul_hi_u32", "v_mul_hi_i32", "v_mul_lo_i32", "v_mad_u64_u32",
                                  "v_mad_i64_i32", "v_mad_u32_u16", "v_mad_i32_i16"})
# Those that also keep the VALU four cycles. The 16-bit multiply-adds with a 32-bit result do not: SQ
# thread traces of a 7900 XTX show the next VALU instruction issue one cycle after them, four cycles
# after v_mad_u64_u32, v_mad_i64_i32 and v_mul_hi_i32 (benchmarks/results/issue_rule.md); their result
# latency stays LLVM's, which s_delay_alu follows.
QUARTER_RATE_ISSUE_OPCODES = QUARTER_RATE_OPCODES - {"v_mad_u32_u16", "v_mad_i32_i16"}
