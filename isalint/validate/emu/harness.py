"""Run a few instructions with chosen register and LDS contents: the emulator's test bench.

    >>> st = run_snippet("v_add_nc_u32_e32 v2, v0, v1", vgprs={0: 5, 1: np.arange(32)})
    >>> st.v(2)  # [32] (or [waves, 32]) uint32

The body is wrapped into a minimal kernel (``kernel_text``) so it goes through exactly the same
parser, program model and compiler as a real kernel; the text also assembles with LLVM, which
the tests use to check that every snippet is valid gfx1100 syntax.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...hw.registers import SGPRS, VCC_SGPRS, VGPRS
from .launch import Kernel
from .machine import EXEC_LO, I64, NSGPR, U8, U32, Group, Machine

_TEMPLATE = """\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
\t.text
\t.globl snippet
\t.p2align 8
\t.type snippet,@function
snippet:
{body}
\ts_endpgm
\t.rodata
\t.p2align 6
\t.amdhsa_kernel snippet
\t\t.amdhsa_next_free_vgpr {nvgpr}
\t\t.amdhsa_next_free_sgpr {nsgpr}
\t\t.amdhsa_group_segment_fixed_size {lds}
\t\t.amdhsa_private_segment_fixed_size {private}
\t\t.amdhsa_float_denorm_mode_32 {denorm}
\t\t.amdhsa_user_sgpr_kernarg_segment_ptr 1
\t.end_amdhsa_kernel
"""


def kernel_text(body: str, *, nvgpr: int = VGPRS, nsgpr: int = SGPRS - VCC_SGPRS, lds: int = 0, private: int = 0,
                denorm: int = 3) -> str:
    lines = "\n".join("\t" + ln.strip() if ln.strip() and not ln.strip().endswith(":") else ln.strip()
                      for ln in body.strip("\n").splitlines())
    return _TEMPLATE.format(body=lines, nvgpr=nvgpr, nsgpr=nsgpr, lds=lds, private=private, denorm=denorm)


@dataclass
class SnippetState:
    V: np.ndarray  # [nvgpr, waves, 32]
    S: np.ndarray  # [128, waves]
    scc: np.ndarray  # [waves]
    lds: np.ndarray  # uint8, per workgroup region concatenated
    steps: int
    addresses: dict  # buffer name -> device address
    buffers: dict  # buffer name -> final bytes (uint8)
    notes: list

    def v(self, n: int, dtype=U32) -> np.ndarray:
        r = self.V[n].view(dtype)
        return r[0] if r.shape[0] == 1 else r

    def s(self, n: int) -> np.ndarray | int:
        r = self.S[n]
        return int(r[0]) if r.shape[0] == 1 else r

    @property
    def exec(self):
        return self.s(EXEC_LO)


def _fill(shape, value, dtype):
    a = np.zeros(shape, dtype=dtype)
    a[...] = np.asarray(value).view(dtype) if np.asarray(value).dtype.itemsize == np.dtype(dtype).itemsize \
        else np.asarray(value).astype(dtype)
    return a


def run_snippet(body: str, *, vgprs: dict | None = None, sgprs: dict | None = None, exec_mask=0xFFFF_FFFF,
                scc=False, waves: int = 1, waves_per_group: int | None = None, lds: bytes | np.ndarray | None = None,
                lds_size: int = 0, denorm: int = 3, nvgpr: int = VGPRS, latency=None, seed: int = 0,
                private: int = 0, path: str = "<snippet>", buffers: dict | None = None,
                max_steps: int = 1_000_000) -> SnippetState:
    """Execute ``body`` (instructions, one per line) on ``waves`` waves and return the final state.

    ``vgprs``/``sgprs`` map register numbers to a scalar, a [32] per-lane array or a [waves, 32] /
    [waves] array; float values are stored as fp32 bits.  Unset registers are 0.  All waves form
    one workgroup (sharing LDS) unless ``waves_per_group`` says otherwise.  ``buffers`` (name ->
    array) are placed in global memory; their addresses are in ``SnippetState.addresses`` (put them
    into SGPRs/VGPRs yourself with a second call, or use :func:`buffer_address`).
    """
    from ...model.program import build_program
    from ...parse.source import parse_text

    size = lds_size or (len(lds) if lds is not None else 0)
    text = kernel_text(body, nvgpr=nvgpr, lds=size, denorm=denorm, private=private)
    program = build_program(parse_text(text, path))
    kernel = Kernel(program)
    machine = Machine(seed=seed, latency=latency, max_steps=max_steps)
    kernel.compile(machine)
    addresses = {name: machine.mem.alloc(name, arr) for name, arr in (buffers or {}).items()}
    wpg = waves_per_group or waves
    n_wg = (waves + wpg - 1) // wpg
    mem = machine.mem
    mem.setup_lds(n_wg, size)
    if lds is not None:
        raw = np.frombuffer(bytes(lds), dtype=U8) if not isinstance(lds, np.ndarray) else lds.view(U8).reshape(-1)
        stride = (size + 3) // 4 * 4
        for w in range(n_wg):
            mem.lds[w * stride: w * stride + raw.size] = raw
    mem.setup_scratch(waves, private)
    mem.track_writers()
    V = np.zeros((kernel.nvgpr, waves, 32), dtype=U32)
    S = np.zeros((NSGPR, waves), dtype=U32)
    def resolve(regs):
        out = {}
        for k, v in (regs or {}).items():
            if isinstance(v, tuple):  # buffer(name, offset): a 64-bit address fills a register pair
                a = np.uint64(addresses[v[1]]) + np.asarray(v[2], dtype=np.uint64)
                out[k], out[k + 1] = (a & np.uint64(0xFFFF_FFFF)).astype(U32), (a >> np.uint64(32)).astype(U32)
            else:
                out[k] = v
        return out
    vgprs, sgprs = resolve(vgprs), resolve(sgprs)
    for n, val in vgprs.items():
        arr = np.asarray(val)
        if arr.dtype.kind == "f":
            arr = arr.astype(np.float32).view(U32)
        V[n] = np.broadcast_to(arr.astype(np.int64).astype(U32) if arr.dtype.kind in "iu" and arr.dtype != U32
                               else arr, (waves, 32))
    for n, val in sgprs.items():
        arr = np.asarray(val)
        if arr.dtype.kind == "f":
            arr = arr.astype(np.float32).view(U32)
        S[n] = np.broadcast_to(arr.astype(np.int64).astype(U32) if arr.dtype.kind in "iu" and arr.dtype != U32
                               else arr, (waves,))
    S[EXEC_LO] = np.broadcast_to(np.asarray(exec_mask, dtype=np.int64).astype(U32), (waves,))
    wg = np.arange(waves, dtype=I64) // wpg
    g = Group(V, S, np.broadcast_to(np.asarray(scc, bool), (waves,)).copy(), np.arange(waves, dtype=I64), wg,
              wg * ((size + 3) // 4 * 4), kernel.kernel.first)
    finished: list[Group] = []
    with np.errstate(all="ignore"):
        steps = kernel._schedule(machine, g, finished)
    final = Group.merge(finished) if len(finished) > 1 else finished[0]
    out = {b.name: mem.heap[b.offset:b.offset + b.size].copy() for b in mem.buffers}
    from .launch import summarize_notes
    return SnippetState(final.V, final.S, final.scc, mem.lds.copy(), steps, addresses, out,
                        summarize_notes(machine.notes))


def buffer(name: str, offset: int = 0) -> tuple:
    """Placeholder for a register value: the device address of buffer ``name`` plus ``offset``."""
    return ("buffer", name, offset)
