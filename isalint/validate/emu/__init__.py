"""An RDNA3 (gfx11) wave32 emulator that executes isalint's own program model.

It interprets the parsed :class:`~isalint.model.Program` (not the binary): every instruction is
decoded once into a closure over numpy arrays, and all waves that share a program counter run
in lockstep, vectorized over waves and lanes.  See :mod:`.machine` for the memory model (late
completion of memory operations, which makes missing ``s_waitcnt`` visible) and
:mod:`.launch` for how the kernel descriptor sets up the initial wave state.

    >>> from isalint.validate.emu import Kernel, Launch
    >>> k = Kernel(program)
    >>> res = k.run(Launch(grid=(2, 2, 1), block=(128, 1, 1), args={...}, buffers={...}))
"""
from .errors import EmulationError, LaunchError, Unimplemented
from ...model.launch import KernelArg, Launch, kernel_args
from .launch import Kernel, RunResult, sgpr_layout

__all__ = ["EmulationError", "LaunchError", "Unimplemented", "Kernel", "KernelArg", "Launch", "RunResult",
           "kernel_args", "sgpr_layout"]
