"""SCRATCH001: registers spilled to scratch memory.

## What it finds
- `scratch_load_*` / `scratch_store_*` instructions, grouped per basic block:
  an **error** inside a loop (the spill traffic repeats every iteration), a
  warning elsewhere; with the bytes moved and the scratch offsets used;
- a kernel with a private segment (`.amdhsa_private_segment_fixed_size`, the
  `; ScratchSize:` comment, the metadata's `.private_segment_fixed_size`): the
  bytes per work-item, the spill counts the compiler recorded
  (`.vgpr_spill_count`, `.sgpr_spill_count`), and the VGPR budget the
  workgroup size leaves the compiler;
- SGPRs spilled to VGPR lanes: `v_writelane_b32 vN, sX, k` with a constant lane
  `k`, read back by `v_readlane_b32 sY, vN, k` (warning inside a loop, info
  elsewhere);
- scratch accesses beyond the declared private segment (error);
- a private array the compiler keeps in scratch (an array indexed at run time:
  `float t[64]; ... t[idx[k]]`), told apart from spills: an access at a
  computed address (a VGPR or SGPR address operand) is an array element, and
  when the metadata records no spilled register (`.vgpr_spill_count` and
  `.sgpr_spill_count` both 0) no access is a spill. Its cost is **info**: each
  access is a memory access at global-memory latency, and the bytes per
  work-item count against the scratch memory of a launch.

The usual remedy is to give the compiler more registers or need fewer:
`__launch_bounds__(threads)` with the real workgroup size (without it the
compiler assumes 1024 work-items, and 32 waves of a workgroup on the two SIMDs
of a CU must fit 16 waves per SIMD, so only 96 VGPRs each), or smaller
register tiles / fewer values kept live across the loop.

## Severity
By where the spill traffic runs: scratch loads and stores inside a loop are an
**error** (they repeat every iteration, each with global-memory latency),
elsewhere a **warning**; accesses beyond the declared private segment are an
error; SGPR spills to VGPR lanes are a warning inside a loop, info elsewhere;
the private-segment summary follows its spills. A private array is info: it is
the program's own data, not a register the allocator ran out of room for.

## Why it matters
Scratch is private per-lane memory in the global memory hierarchy: every spill
and reload is a vector memory access with global-memory latency and a wait
(`vmcnt`/`vscnt`). A register-double-buffered GEMM spilled to scratch, and ran
2.7 times slower, until `__launch_bounds__` told the compiler how many threads a
workgroup has.

## Example
```asm
.LBB0_6:                                  ; loop
    scratch_load_b32 v0, off, off offset:4  ; SCRATCH001 (error): reload inside the loop
```

## Fix safety
No automatic fix: spills come from register allocation; rebuild with
`__launch_bounds__` or a smaller tile.

## Reference
RDNA3 ISA guide, "Scratch (private) memory" in the Flat, Scratch and Global
instructions chapter, and `V_WRITELANE_B32` / `V_READLANE_B32` (VOP3).
"""
from __future__ import annotations

import re

from isalint.diagnostics import at_instr, at_line
from isalint.hw.registers import VGPRS

CODE = "SCRATCH001"
NAME = "scratch-spill"
SEVERITY = "error"
SUMMARY = "Registers spilled to scratch memory (error inside a loop) or to VGPR lanes"
FIXABLE = None

_WIDTH = re.compile(r"_[bui](8|16|32|64|96|128)(?:_|$)|_dwordx?(\d)?")
_REMEDY = "give the compiler the real workgroup size with __launch_bounds__ or use a smaller register tile"


def _bytes(mnemonic: str) -> int:
    m = _WIDTH.search(mnemonic)
    if not m:
        return 4
    if m.group(1):
        return int(m.group(1)) // 8
    return 4 * int(m.group(2) or 1)


def _offset(ins) -> int | None:
    """The byte offset of a scratch access when its address is the immediate alone."""
    if ins.opaque or any(s.name in ("addr", "vaddr", "saddr") and s.regs for s in ins.slots[0]):
        return None
    mod = ins.stmts[0].modifier("offset")
    return (mod.int_value() or 0) if mod else 0


_ARRAY_COST = ("each access is a memory access at global-memory latency; an array indexed only by "
               "compile-time constants (fully unrolled loops) would stay in registers")


def _computed_address(ins) -> bool:
    """A scratch access whose address is computed (a VGPR or SGPR address operand): an element of an
    array indexed at run time. The compiler's spills and reloads address a fixed slot of the frame
    with the immediate offset alone."""
    if ins.opaque:
        return False
    return any(s.name in ("addr", "vaddr", "saddr") and s.regs for s in ins.slots[0])


def _loop_name(cfg, loop) -> str:
    return cfg.blocks[loop.header].label or f"block {loop.header}"


def check(analysis):
    program = analysis.program
    cfg = analysis.cfg
    from isalint.model.resources import comment_fields, descriptor_field, metadata_fields

    comments = comment_fields(program)
    metadata = metadata_fields(program)
    for kernel in program.kernels:
        yield from _kernel(program, cfg, kernel, comments.get(kernel.name, {}), metadata.get(kernel.name, {}),
                           descriptor_field)


def _kernel(program, cfg, kernel, comments, meta, descriptor_field):
    path = program.path
    instrs = program.instrs[kernel.first:kernel.last]
    scratch = [i for i in instrs if i.klass in ("scratch_load", "scratch_store")]
    recorded = [meta.get(k) for k in (".vgpr_spill_count", ".sgpr_spill_count")]
    no_spill = all(f is not None for f in recorded) and not any(f.value for f in recorded)
    array = {i.index for i in scratch if no_spill or _computed_address(i)}
    # -- the private segment
    priv = descriptor_field(kernel, ".amdhsa_private_segment_fixed_size") if kernel.descriptor else None
    size_comment = comments.get("ScratchSize")
    size_meta = meta.get(".private_segment_fixed_size")
    size = next((f.value for f in (priv, size_comment, size_meta) if f is not None), None)
    where = next((f for f in (priv, size_comment, size_meta) if f is not None and f.value > 0), None)
    if where is not None:
        spills = []
        for key, what in ((".vgpr_spill_count", "VGPRs"), (".sgpr_spill_count", "SGPRs")):
            f = meta.get(key)
            if f is not None and f.value:
                spills.append(f"{f.value} {what}")
        msg = f"{where.value} bytes of scratch per work-item"
        if spills:
            msg += f" (the compiler spilled {' and '.join(spills)})"
        if scratch:
            msg += f", used by {len(scratch)} scratch instructions"
        if no_spill or (scratch and len(array) == len(scratch)):
            msg += (" for a private array" + (" (the compiler spilled no register)" if no_spill else "") +
                    f"; {_ARRAY_COST}")
            yield at_line(path, where.line, CODE, "info", msg, column=where.start + 1)
        else:
            msg += "; " + _budget_note(kernel)
            yield at_line(path, where.line, CODE, "warning", msg, column=where.start + 1)
    # -- scratch instructions, one finding per basic block
    by_block: dict[tuple[int, bool], list] = {}
    for ins in scratch:
        by_block.setdefault((cfg.block_of[ins.index], ins.index in array), []).append(ins)
    for (_b, is_array), group in sorted(by_block.items()):
        first = group[0]
        loads = [i for i in group if i.klass == "scratch_load"]
        stores = [i for i in group if i.klass == "scratch_store"]
        nbytes = sum(_bytes(i.opcode) for i in group)
        parts = []
        if stores:
            parts.append(f"{len(stores)} scratch store{'s' if len(stores) > 1 else ''}")
        if loads:
            parts.append(f"{len(loads)} scratch load{'s' if len(loads) > 1 else ''}")
        offs = sorted({o for o in (_offset(i) for i in group) if o is not None})
        at = f" at offsets {offs[0]}-{offs[-1]}" if len(offs) > 1 else (f" at offset {offs[0]}" if offs else "")
        loop = cfg.loop_of(first.index)
        regs = sorted({r for i in loads for r in i.defs if r.startswith("v")} |
                      {r for i in stores for s in i.slots[0] if s.name in ("data", "vdata") for r in s.regs},
                      key=lambda r: int(r[1:]) if r[1:].isdigit() else 0)
        what = f"{' and '.join(parts)} ({nbytes} bytes{at}"
        what += f"; {', '.join(regs[:6])}{' ...' if len(regs) > 6 else ''})" if regs else ")"
        if is_array:
            where_ = f" inside loop {_loop_name(cfg, loop)} (depth {loop.depth})" if loop is not None else ""
            yield at_instr(program, first, CODE, "info", f"{what}{where_}: a private array in scratch memory, not "
                           f"a register spill; {_ARRAY_COST}")
        elif loop is not None:
            msg = (f"{what} inside loop {_loop_name(cfg, loop)} (depth {loop.depth}): spill traffic on every "
                   f"iteration at global-memory latency; {_REMEDY}")
            yield at_instr(program, first, CODE, "error", msg)
        else:
            yield at_instr(program, first, CODE, "warning", f"{what}: registers spilled to scratch memory; {_REMEDY}")
    # -- accesses beyond the declared private segment
    if size is not None and scratch and not kernel.descriptor.get(".amdhsa_uses_dynamic_stack", 0):
        worst = None
        for ins in scratch:
            off = _offset(ins)
            if off is not None and off + _bytes(ins.opcode) > size and (worst is None or off > worst[0]):
                worst = (off, ins)
        if worst is not None:
            off, ins = worst
            yield at_instr(program, ins, CODE, "error",
                           f"{ins.opcode} reaches scratch byte {off + _bytes(ins.opcode) - 1} but the private segment "
                           f"is {size} bytes per work-item (.amdhsa_private_segment_fixed_size)")
    # -- SGPRs spilled to VGPR lanes
    yield from _lane_spills(program, cfg, instrs)


def _lane(ins, slot_name: str):
    for s in ins.slots[0]:
        if s.name == slot_name and s.operand.kind == "int":
            return int(s.operand.value)
    return None


def _lane_spills(program, cfg, instrs):
    writes: dict[tuple[str, int], list] = {}
    reads: dict[tuple[str, int], list] = {}
    for ins in instrs:
        if ins.opaque or ins.is_vopd:
            continue
        if ins.opcode == "v_writelane_b32":
            lane = _lane(ins, "src1")
            vreg = next((r for s in ins.slots[0] if s.name == "vdst" for r in s.regs), None)
            if lane is not None and vreg:
                writes.setdefault((vreg, lane), []).append(ins)
        elif ins.opcode == "v_readlane_b32":
            lane = _lane(ins, "src1")
            vreg = next((r for s in ins.slots[0] if s.name == "src0" for r in s.regs), None)
            if lane is not None and vreg:
                reads.setdefault((vreg, lane), []).append(ins)
    by_vgpr: dict[str, list] = {}
    for key in writes:
        if key in reads:
            by_vgpr.setdefault(key[0], []).append(key)
    for vreg, keys in sorted(by_vgpr.items()):
        ws = [i for k in keys for i in writes[k]]
        rs = [i for k in keys for i in reads[k]]
        in_loop = [i for i in ws + rs if cfg.loop_of(i.index) is not None]
        first = min(ws, key=lambda i: i.index)
        msg = (f"{len(keys)} SGPR{'s' if len(keys) > 1 else ''} spilled to lanes of {vreg} "
               f"({len(ws)} v_writelane_b32, {len(rs)} v_readlane_b32)")
        if in_loop:
            loop = cfg.loop_of(in_loop[0].index)
            msg += f", {len(in_loop)} of them inside loop {_loop_name(cfg, loop)}"
            yield at_instr(program, first, CODE, "warning", msg + f"; {_REMEDY}")
        else:
            yield at_instr(program, first, CODE, "info", msg)


def _budget_note(kernel) -> str:
    """How many VGPRs the workgroup size lets the compiler use, and what __launch_bounds__ would allow."""
    from isalint.hw.occupancy import simds_per_group, vgpr_model, vgprs_for_waves, waves_per_group

    meta = kernel.metadata or {}
    group = meta.get(".max_flat_workgroup_size")
    if not isinstance(group, int) or group <= 0:
        return _REMEDY
    model = vgpr_model(kernel.wave_size)

    def budget(threads: int) -> int:
        per_simd = -(-waves_per_group(threads, kernel.wave_size) // simds_per_group(kernel.wgp_mode))
        return min(VGPRS, vgprs_for_waves(max(1, per_simd), model))

    now = budget(group)
    if now < VGPRS:
        options = [t for t in (512, 256, 128) if t < group and budget(t) > now]
        better = ", ".join(f"__launch_bounds__({t}) allows {budget(t)}" for t in options[:2])
        return (f"a workgroup of up to {group} work-items leaves each wave at most {now} VGPRs"
                + (f"; {better}" if better else "") + "; or use a smaller register tile")
    return f"the workgroup size ({group}) already allows {VGPRS} VGPRs: use a smaller register tile"
