"""META001: resource counts that do not match what the code uses.

## What it finds
For each kernel, the registers and LDS its instructions use against every
place that declares them:

- the highest VGPR used against `.amdhsa_next_free_vgpr` (the count the
  hardware allocates from), the metadata's `.vgpr_count` and the `; NumVgprs:`,
  `; NumVGPRsForWavesPerEU:` and `; VGPRBlocks:` comments;
- the highest SGPR used against `.amdhsa_next_free_sgpr` and the metadata's
  `.sgpr_count` / `; NumSgprs:` comment. These follow LLVM's convention: the
  descriptor counts `s0`..`sN` only, the metadata and comments add 2 when the
  kernel uses VCC (on gfx10+ FLAT_SCRATCH and XNACK are not SGPRs and add
  nothing);
- LDS: the bytes a `ds_*` instruction addresses for certain (its immediate
  offset plus its width, since the address register is never negative) against
  `.amdhsa_group_segment_fixed_size`, which must also agree with the metadata's
  `.group_segment_fixed_size` and the `; LDSByteSize:` comment;
- wave size: `.amdhsa_wavefront_size32` against the metadata's
  `.wavefront_size`, and lane-mask operands of the other width (`exec_lo`/
  `vcc_lo` as the lane mask of a wave64 instruction - a carry, a compare result,
  a select mask, a saveexec operand - is an error, while reading EXEC's halves
  as data, as wave64 code does for the lane id with `v_mbcnt_lo/hi`, is not;
  64-bit `exec`/`vcc` in a wave32 kernel is worth a look).

A kernel that declares no static LDS addresses dynamic LDS (`extern
__shared__`, sized at launch), and one whose metadata passes
`hidden_dynamic_lds_size` may address beyond its static size: neither is
compared. A kernel that calls code isalint cannot see has counts that include
the callee's registers: only counts lower than its own code needs are
reported.

## Severity
Error where the hardware acts on the number: `.amdhsa_next_free_vgpr` below the
VGPRs the code uses (the wave uses registers it does not own), LDS beyond 64 KiB,
and contradictory declarations. A warning for the metadata's `.vgpr_count` below
the code's VGPRs (the runtime's occupancy queries and debuggers read it, the
allocation does not) and for LDS addressed beyond the declared size by an
immediate offset. Info for a count that is stale or higher than needed, for SGPR
counts declared too low (since gfx10 every wave gets all its SGPRs whatever the
descriptor says: LLVM writes 0 to the descriptor's SGPR-block field there), and
for 64-bit lane masks in a wave32 kernel.

## Why it matters
The wave is given `.amdhsa_next_free_vgpr` VGPRs (rounded up to a block of 24 in
wave32 on gfx1100). A hand edit that adds a register beyond them - `v216` in a
kernel that declares 216 - reads and writes registers the wave does not own. A
count higher than needed costs occupancy for nothing; stale comments and
metadata mislead the people and tools that read them (a too-low `.vgpr_count`
makes the runtime report more waves per SIMD than the kernel gets).

## Example
```asm
    v_mov_b32_e32 v208, 0              ; META001: v208 is used but .amdhsa_next_free_vgpr is 208
    .amdhsa_next_free_vgpr 208
```
Good: `.amdhsa_next_free_vgpr 209` (and `.vgpr_count: 209`, `; NumVgprs: 209`).

## Fix safety
`isalint fix --metadata` rewrites the numbers in `.amdhsa_next_free_vgpr`,
`.amdhsa_next_free_sgpr`, the metadata's `.vgpr_count`/`.sgpr_count` and the
`NumVgprs`/`NumSgprs`/`NumVGPRsForWavesPerEU`/`NumSGPRsForWavesPerEU`/
`VGPRBlocks`/`SGPRBlocks`/`Occupancy` comments, and leaves every other byte as
it was. It refuses when the kernel has an instruction isalint cannot decode or
one that addresses registers indirectly (`v_movrel*`, `s_movrel*`), or calls
code it cannot see. LDS sizes and the wave size are not rewritten: they follow
from the source, not from the code.

## Reference
RDNA3 ISA guide, "Vector General-Purpose Registers (VGPRs)" and "Scalar
General-Purpose Registers (SGPRs)" (allocation); LLVM AMDGPUUsage, "Kernel
Descriptor" (`.amdhsa_next_free_vgpr`, `GRANULATED_WORKITEM_VGPR_COUNT`) and
"Code Object V5 Metadata" (`.vgpr_count`, `.sgpr_count`); LLVM
AMDGPUAsmPrinter (GFX10+: "will always allocate 128 SGPRs and this field must
be 0").
"""
from __future__ import annotations

from isalint.diagnostics import at_instr, at_line
from isalint.hw.occupancy import LDS_BYTES, allocated_vgprs, vgpr_model
from isalint.hw.registers import SGPRS, VGPRS, sgpr_blocks, vgpr_blocks
from isalint.model.resources import (Field, KernelResources, comment_fields, descriptor_field, kernel_resources,
                                     metadata_fields)

CODE = "META001"
NAME = "resource-metadata"
SEVERITY = "error"
SUMMARY = "Declared VGPR/SGPR/LDS counts or wave size do not match the code"
FIXABLE = "--metadata"

def check(analysis):
    program = analysis.program
    comments = comment_fields(program)
    metadata = metadata_fields(program)
    for kernel in program.kernels:
        if not kernel.descriptor or kernel.first == kernel.last:
            continue  # no descriptor, or an empty body (LLVM's for unreachable code): no code to count
        res = kernel_resources(program, kernel)
        yield from _check_kernel(program, kernel, res, comments.get(kernel.name, {}), metadata.get(kernel.name, {}))


def _reg_range(prefix: str, n: int) -> str:
    return f"only {prefix}0-{prefix}{n - 1}" if n > 0 else "no register"


def _check_kernel(program, kernel, res: KernelResources, comments: dict, meta: dict):
    path = program.path
    d = kernel.descriptor
    fix = FIXABLE
    # a call (with a return: s_swappc_b64, s_call_b64) runs code whose registers LLVM's counts include;
    # s_setpc_b64 alone is a jump (Tensile's long branches stay in the kernel)
    incomplete = any(ins.opcode in ("s_swappc_b64", "s_call_b64")
                     for ins in program.instrs[kernel.first:kernel.last])
    # -- VGPRs
    nfv = descriptor_field(kernel, ".amdhsa_next_free_vgpr")
    need_v = res.vgprs
    if nfv is not None:
        if res.vgpr_at is None:
            pass  # the code uses no VGPR: nothing can be too low
        elif need_v > VGPRS:
            yield at_instr(program, res.vgpr_at, CODE, "error", f"v{res.max_vgpr} does not exist: a wave addresses "
                           f"at most {VGPRS} VGPRs (v0-v{VGPRS - 1})")
        elif need_v > nfv.value:
            yield at_instr(program, res.vgpr_at, CODE, "error",
                           f"v{res.max_vgpr} is used but .amdhsa_next_free_vgpr is {nfv.value}: the wave owns "
                           f"{_reg_range('v', nfv.value)}; declare {need_v}", fix=fix)
        elif nfv.value > need_v and not incomplete:
            model = vgpr_model(kernel.wave_size)
            alloc_declared, alloc_needed = allocated_vgprs(nfv.value, model), allocated_vgprs(need_v, model)
            cost = ("the extra registers only cost occupancy" if alloc_declared > alloc_needed else
                    f"no cost: both are allocated as {alloc_declared} (blocks of {model.granule})")
            yield at_line(path, nfv.line, CODE, "info",
                          f".amdhsa_next_free_vgpr {nfv.value} is more than the {need_v} VGPRs the code uses "
                          f"(highest v{res.max_vgpr}); {cost}", fix=fix)
    yield from _compare(path, meta.get(".vgpr_count"), need_v, "metadata .vgpr_count", "VGPRs", low="warning",
                        why="the runtime's occupancy queries and debuggers read it", incomplete=incomplete)
    for key in ("NumVgprs", "NumVGPRsForWavesPerEU"):
        yield from _compare(path, comments.get(key), need_v, f"comment {key}", "VGPRs", incomplete=incomplete)
    yield from _compare(path, comments.get("VGPRBlocks"), vgpr_blocks(need_v, kernel.wave_size),
                        "comment VGPRBlocks", "VGPR blocks", incomplete=incomplete)
    # -- SGPRs
    nfs = descriptor_field(kernel, ".amdhsa_next_free_sgpr")
    if nfs is not None:
        if res.sgprs_used > SGPRS:
            yield at_instr(program, res.sgpr_at, CODE, "error", f"s{res.max_sgpr} does not exist: gfx11 kernels "
                           "address s0-s105")
        elif res.sgprs_used > nfs.value:
            # gfx10+ allocates every SGPR to every wave: the count only informs tools
            yield at_instr(program, res.sgpr_at, CODE, "info",
                           f"s{res.max_sgpr} is used but .amdhsa_next_free_sgpr is {nfs.value}; declare "
                           f"{res.sgprs} (harmless on gfx11, where every wave gets all its SGPRs, but tools read "
                           "the count)", fix=fix)
        elif nfs.value > max(res.sgprs, res.sgpr_floor) and not incomplete:
            yield at_line(path, nfs.line, CODE, "info",
                          f".amdhsa_next_free_sgpr {nfs.value} is more than the {max(res.sgprs, res.sgpr_floor)} "
                          "SGPRs the code uses or the hardware initialises", fix=fix)
    total_s = res.sgprs + res.extra_sgprs
    vcc_note = " (incl. 2 for VCC)" if res.extra_sgprs else ""
    yield from _compare(path, meta.get(".sgpr_count"), total_s, "metadata .sgpr_count", f"SGPRs{vcc_note}",
                        incomplete=incomplete)
    for key in ("NumSgprs", "NumSGPRsForWavesPerEU"):
        yield from _compare(path, comments.get(key), total_s, f"comment {key}", f"SGPRs{vcc_note}",
                            incomplete=incomplete)
    yield from _compare(path, comments.get("SGPRBlocks"), sgpr_blocks(total_s), "comment SGPRBlocks", "SGPR blocks",
                        incomplete=incomplete)
    rv = descriptor_field(kernel, ".amdhsa_reserve_vcc")
    if rv is not None and rv.value == 0 and res.uses_vcc:
        yield at_line(path, rv.line, CODE, "info", ".amdhsa_reserve_vcc 0 but the code uses VCC")
    # -- LDS
    lds = descriptor_field(kernel, ".amdhsa_group_segment_fixed_size")
    if lds is not None:
        if lds.value > LDS_BYTES:
            yield at_line(path, lds.line, CODE, "error", f"{lds.value} bytes of LDS: a workgroup can have at most "
                          f"{LDS_BYTES}")
        m = meta.get(".group_segment_fixed_size")
        if m is not None and m.value != lds.value:
            yield at_line(path, m.line, CODE, "error", f"metadata .group_segment_fixed_size {m.value} disagrees with "
                          f".amdhsa_group_segment_fixed_size {lds.value}")
        c = comments.get("LDSByteSize")
        if c is not None and c.value != lds.value:
            yield at_line(path, c.line, CODE, "info", f"comment LDSByteSize {c.value} is stale: the descriptor "
                          f"declares {lds.value} bytes")
        # A kernel that declares no static LDS addresses dynamic LDS only (extern __shared__, sized at
        # launch): nothing to compare. Dynamic LDS follows the static segment, so beyond a declared
        # size it is the warning below, unless the metadata passes a dynamic size.
        if lds.value > 0 and res.lds_min > lds.value and not _uses_dynamic_lds(kernel):
            yield at_instr(program, res.lds_at, CODE, "warning",
                           f"{res.lds_at.opcode} reaches LDS byte {res.lds_min - 1} (offset + width) but the kernel "
                           f"declares {lds.value} bytes (.amdhsa_group_segment_fixed_size); only dynamic LDS "
                           "allocated at launch would cover it")
    # -- wave size
    w = descriptor_field(kernel, ".amdhsa_wavefront_size32")
    ws = kernel.wave_size
    mw = meta.get(".wavefront_size")
    if mw is not None and mw.value != ws:
        yield at_line(path, mw.line, CODE, "error", f"metadata .wavefront_size {mw.value} disagrees with the "
                      f"descriptor (.amdhsa_wavefront_size32 {w.value if w else 1}: wave{ws})")
    seen = set()
    for ins, text, name in res.lane_masks:
        if ins.index in seen:
            continue
        if ws == 64 and name in ("exec_lo", "vcc_lo"):
            seen.add(ins.index)
            yield at_instr(program, ins, CODE, "error", f"{text} is half a lane mask, but this is a wave64 kernel "
                           "(.amdhsa_wavefront_size32 0): use the 64-bit register")
        elif ws == 32 and name in ("exec", "vcc", "exec_hi", "vcc_hi"):
            seen.add(ins.index)
            yield at_instr(program, ins, CODE, "info", f"{text} in a wave32 kernel: lane masks are 32 bits "
                           "(exec_lo, vcc_lo); the high half is not a lane mask")


def _uses_dynamic_lds(kernel) -> bool:
    """The metadata passes the dynamic LDS size (``hidden_dynamic_lds_size``, code object v5), which
    LLVM emits only for a kernel that uses dynamic LDS (``extern __shared__``): it sits after the
    static segment, so addresses beyond the declared size are that memory."""
    args = (kernel.metadata or {}).get(".args")
    return isinstance(args, list) and any(isinstance(a, dict) and a.get(".value_kind") == "hidden_dynamic_lds_size"
                                          for a in args)


def _compare(path: str, fld: Field | None, needed: int, what: str, unit: str, low: str | None = None,
             why: str = "", incomplete: bool = False):
    """A declared count against the code's: ``low`` is the severity of one declared too low (else info).
    ``incomplete``: the code isalint sees is not all the kernel runs (a call), so a count higher than
    it needs is no finding."""
    if fld is None or fld.value == needed or (incomplete and fld.value > needed):
        return
    fix = FIXABLE
    if fld.value < needed and low:
        yield at_line(path, fld.line, CODE, low, f"{what} is {fld.value} but the code needs {needed} {unit}"
                      + (f" ({why})" if why else ""), column=fld.start + 1, fix=fix)
    else:
        yield at_line(path, fld.line, CODE, "info", f"{what} {fld.value} is stale: the code needs {needed} {unit}",
                      column=fld.start + 1, fix=fix)
