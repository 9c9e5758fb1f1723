"""Model stage: what a program is and does, from the parsed text, the ISA data and the target's facts.

``program`` (instructions with defs/uses, kernels, descriptor, metadata), ``cfg`` (blocks, edges,
natural loops), ``depgraph``, ``liveness``, ``counters`` and ``waitcnt`` (memory wait counters),
``lanes/`` (per-lane values and LDS addresses), ``reaching`` (reaching definitions, VALU slices),
``resources`` (a kernel's used and declared registers, LDS, occupancy), ``loop_stats`` (a loop's VALU
numbers) and ``fma_block`` (the outer products of a GEMM loop).
"""
from .program import Instr, Kernel, Program, Slot, build_program

__all__ = ["Instr", "Kernel", "Program", "Slot", "build_program"]
