"""Model stage: program, instructions with defs/uses, kernels, CFG, loops, dependency graph."""
from .program import Instr, Kernel, Program, Slot, build_program

__all__ = ["Instr", "Kernel", "Program", "Slot", "build_program"]
