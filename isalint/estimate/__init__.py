"""``isalint estimate``: a cycle-level throughput model of a GEMM kernel on a Radeon 7900 XTX.

The model simulates the waves of one SIMD (as many as the kernel's occupancy allows) through the
kernel's real instruction stream, with the latencies and bandwidths of :mod:`isalint.hw.timing`,
and scales the result to the whole GPU. It sits on the program model and the target's facts;
nothing below it imports it.
"""
from .prediction import CAUSE_TEXT, Estimate, EstimateError, LoopShare, Work, estimate

__all__ = ["CAUSE_TEXT", "Estimate", "EstimateError", "LoopShare", "Work", "estimate"]
