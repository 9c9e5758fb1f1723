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
  `vcc_lo` in a wave64 kernel is an error; 64-bit `exec`/`vcc` in a wave32 kernel
  is worth a look).

A count declared too low is an error; one that is stale or higher than needed
is reported at info level.

## Why it matters
The wave is given `.amdhsa_next_free_vgpr` VGPRs (rounded up to a block of 8 in
wave32). A hand edit that adds a register beyond them - `v208` in a kernel that
declares 208 - reads and writes registers the wave does not own. A count higher
than needed costs occupancy for nothing; stale comments and metadata mislead
the people and tools that read them.

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
"Code Object V5 Metadata" (`.vgpr_count`, `.sgpr_count`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from isalint.diagnostics import at_instr, at_line
from isalint.hw.registers import SGPRS, SYSTEM_SGPR_FIELDS, VCC_SGPRS, VGPRS, sgpr_blocks, vgpr_blocks

CODE = "META001"
NAME = "resource-metadata"
SEVERITY = "error"
SUMMARY = "Declared VGPR/SGPR/LDS counts or wave size do not match the code"
FIXABLE = "--metadata"

_COMMENT = re.compile(r";\s*(NumVgprs|NumSgprs|ScratchSize|Occupancy|LDSByteSize|NumVGPRsForWavesPerEU|"
                      r"NumSGPRsForWavesPerEU|VGPRBlocks|SGPRBlocks):\s*(\d+)")
_YAML_KEY = re.compile(r"^(\s*)(?:-\s+)?(\.[\w.]+):\s*(.*?)\s*$")
_INDIRECT = ("v_movrels", "v_movreld", "v_movrelsd", "s_movrels", "s_movreld")
_CALLS = ("s_setpc_b64", "s_swappc_b64", "s_call_b64")


@dataclass
class Field:
    """One declared number and the line (and column span) that holds it."""

    value: int
    line: object
    start: int  # 0-based offset of the number in line.text
    end: int


@dataclass
class KernelResources:
    kernel: object
    max_vgpr: int = -1
    vgpr_at: object = None  # first instruction that uses max_vgpr
    max_sgpr: int = -1
    sgpr_at: object = None
    uses_vcc: bool = False
    lds_min: int = 0  # bytes certainly addressed
    lds_at: object = None
    lane_masks: list = field(default_factory=list)  # (instr, operand text, width) of lane-mask operands
    unknown: list[str] = field(default_factory=list)  # why the usage may be incomplete

    @property
    def vgprs(self) -> int:
        return max(1, self.max_vgpr + 1)

    @property
    def sgprs_used(self) -> int:
        return self.max_sgpr + 1

    @property
    def sgpr_floor(self) -> int:
        """SGPRs the hardware initialises (user + system): LLVM never declares fewer."""
        d = self.kernel.descriptor
        return d.get(".amdhsa_user_sgpr_count", 0) + sum(1 for k in SYSTEM_SGPR_FIELDS if d.get(k, 0))

    @property
    def sgprs(self) -> int:
        return max(self.sgprs_used, self.sgpr_floor)

    @property
    def extra_sgprs(self) -> int:
        return VCC_SGPRS if self.uses_vcc else 0


def _ds_extent(ins) -> int:
    """Bytes from LDS address 0 a DS load/store certainly touches (offset + width)."""
    from isalint.model.lanes import ds_shape

    shape = ds_shape(ins.opcode)
    if shape is None:
        return 0
    _kind, width, naddr, stride64 = shape
    stmt = ins.stmts[0]
    if naddr == 1:
        mod = stmt.modifier("offset")
        return ((mod.int_value() or 0) if mod else 0) + width
    unit = width * (64 if stride64 else 1)
    offs = [((stmt.modifier(n).int_value() or 0) if stmt.modifier(n) else 0) * unit for n in ("offset0", "offset1")]
    return max(offs) + width


_REG_NUM: dict[str, tuple[str, int] | None] = {}  # register name -> ("v" | "s" | "vcc", number)


def _reg_num(r: str) -> tuple[str, int] | None:
    got = _REG_NUM.get(r, False)
    if got is False:
        if r.startswith("vcc"):
            got = ("vcc", 0)
        elif r[:1] in ("v", "s") and r[1:].isdigit():
            got = (r[0], int(r[1:]))
        else:
            got = None
        if len(_REG_NUM) < 4096:
            _REG_NUM[r] = got
    return got


_LANE_MASKS = frozenset({"exec", "vcc", "exec_lo", "vcc_lo", "exec_hi", "vcc_hi"})


def kernel_resources(program, kernel) -> KernelResources:
    res = KernelResources(kernel)
    for ins in program.instrs[kernel.first:kernel.last]:
        if ins.opaque:
            res.unknown.append(f"line {ins.lineno} cannot be decoded")
        if ins.opcode.startswith(_INDIRECT):
            res.unknown.append(f"line {ins.lineno} addresses registers through M0 ({ins.opcode})")
        if ins.opcode in _CALLS:
            res.unknown.append(f"line {ins.lineno} calls code isalint cannot see")
        # the highest VGPR and SGPR the instruction names: its model registers and every operand as written
        top = {"v": -1, "s": -1, "vcc": -1}
        for regs in (ins.uses, ins.defs):
            for r in regs:
                got = _reg_num(r)
                if got is not None and got[1] > top[got[0]]:
                    top[got[0]] = got[1]
        for stmt in ins.stmts:
            for op in stmt.operands:
                kind = op.kind
                if kind == "vgpr" or kind == "sgpr":
                    if op.count > 0 and op.first + op.count - 1 > top[op.file]:
                        top[op.file] = op.first + op.count - 1
                elif kind == "special":
                    for r in op.registers():
                        if r.startswith("vcc"):
                            top["vcc"] = 0
                    if op.file in _LANE_MASKS:
                        res.lane_masks.append((ins, op.text, op.file))
        if top["vcc"] >= 0:
            res.uses_vcc = True
        if top["v"] > res.max_vgpr:
            res.max_vgpr, res.vgpr_at = top["v"], ins
        if top["s"] > res.max_sgpr:
            res.max_sgpr, res.sgpr_at = top["s"], ins
        if ins.klass == "lds":
            ext = _ds_extent(ins)
            if ext > res.lds_min:
                res.lds_min, res.lds_at = ext, ins
    return res


def _kernel_of_line(program, number: int):
    best = None
    for k in program.kernels:
        start = k.symbol_line.number if k.symbol_line is not None else 0
        if start <= number and (best is None or start >= (best.symbol_line.number if best.symbol_line else 0)):
            best = k
    return best


def comment_fields(program) -> dict[str, dict[str, Field]]:
    """kernel name -> {"NumVgprs": Field, ...} from the compiler's `; Kernel info` comments."""
    out: dict[str, dict[str, Field]] = {}
    for line in program.source.lines:
        if not line.comment or ":" not in line.comment:
            continue
        m = _COMMENT.search(line.text)
        if not m:
            continue
        k = _kernel_of_line(program, line.number)
        if k is None:
            continue
        out.setdefault(k.name, {}).setdefault(m.group(1), Field(int(m.group(2)), line, m.start(2), m.end(2)))
    return out


def metadata_fields(program) -> dict[str, dict[str, Field]]:
    """kernel name -> {".vgpr_count": Field, ...}: the kernel entries' top-level integer keys."""
    out: dict[str, dict[str, Field]] = {}
    entries: list[dict[str, Field]] = []
    names: list[str | None] = []
    in_kernels = False
    item_indent = None
    key_indent = None
    for line in program.source.lines:
        if line.kind != "metadata":
            continue
        text = line.text
        if re.match(r"^amdhsa\.kernels:", text):
            in_kernels = True
            continue
        if re.match(r"^\S", text):
            in_kernels = False
            continue
        if not in_kernels:
            continue
        dash = re.match(r"^(\s*)-\s+", text)
        if dash and (item_indent is None or len(dash.group(1)) == item_indent):
            item_indent = len(dash.group(1))
            key_indent = len(dash.group(0))
            entries.append({})
            names.append(None)
        if not entries:
            continue
        m = _YAML_KEY.match(text)
        if not m:
            continue
        col = text.index(m.group(2))
        if col != key_indent:
            continue
        key, value = m.group(2), m.group(3)
        if key == ".name":
            names[-1] = value.strip("'\"")
        vm = re.fullmatch(r"(\d+)", value)
        if vm:
            start = text.rindex(value)
            entries[-1][key] = Field(int(value), line, start, start + len(value))
    for name, entry in zip(names, entries):
        if name is not None:
            out[name] = entry
    # a document not in the compiler's block style: take the parsed values, without a position
    anchor = next((ln for ln in program.source.lines if ln.kind == "directive" and ln.directive == ".amdgpu_metadata"),
                  None)
    for k in program.kernels:
        if not isinstance(k.metadata, dict) or anchor is None:
            continue
        entry = out.setdefault(k.name, {})
        for key, value in k.metadata.items():
            if key not in entry and isinstance(value, int) and not isinstance(value, bool):
                entry[key] = Field(value, anchor, 0, 0)
    return out


def descriptor_field(kernel, key: str) -> Field | None:
    line = kernel.descriptor_lines.get(key)
    if line is None:
        return None
    m = re.search(re.escape(key) + r"\s+(\d+)", line.text)
    if not m:
        return None
    return Field(int(m.group(1)), line, m.start(1), m.end(1))


def check(analysis):
    program = analysis.program
    comments = comment_fields(program)
    metadata = metadata_fields(program)
    for kernel in program.kernels:
        if not kernel.descriptor:
            continue
        res = kernel_resources(program, kernel)
        yield from _check_kernel(program, kernel, res, comments.get(kernel.name, {}), metadata.get(kernel.name, {}))


def _reg_range(prefix: str, n: int) -> str:
    return f"only {prefix}0-{prefix}{n - 1}" if n > 0 else "no register"


def _check_kernel(program, kernel, res: KernelResources, comments: dict, meta: dict):
    path = program.path
    d = kernel.descriptor
    fix = "isalint fix --metadata"
    # -- VGPRs
    nfv = descriptor_field(kernel, ".amdhsa_next_free_vgpr")
    need_v = res.vgprs
    if nfv is not None:
        if res.vgpr_at is None:
            pass  # the code uses no VGPR: nothing can be too low
        elif need_v > VGPRS:
            yield at_instr(program, res.vgpr_at, CODE, "error", f"v{res.max_vgpr} does not exist: a wave addresses "
                           "at most 256 VGPRs (v0-v255)")
        elif need_v > nfv.value:
            yield at_instr(program, res.vgpr_at, CODE, "error",
                           f"v{res.max_vgpr} is used but .amdhsa_next_free_vgpr is {nfv.value}: the wave owns "
                           f"{_reg_range('v', nfv.value)}; declare {need_v}", fix=fix)
        elif nfv.value > need_v:
            yield at_line(path, nfv.line, CODE, "info",
                          f".amdhsa_next_free_vgpr {nfv.value} is more than the {need_v} VGPRs the code uses "
                          f"(highest v{res.max_vgpr}); the extra registers only cost occupancy", fix=fix)
    yield from _compare(path, meta.get(".vgpr_count"), need_v, "metadata .vgpr_count", "VGPRs", error=True)
    for key in ("NumVgprs", "NumVGPRsForWavesPerEU"):
        yield from _compare(path, comments.get(key), need_v, f"comment {key}", "VGPRs")
    yield from _compare(path, comments.get("VGPRBlocks"), vgpr_blocks(need_v, kernel.wave_size),
                        "comment VGPRBlocks", "VGPR blocks")
    # -- SGPRs
    nfs = descriptor_field(kernel, ".amdhsa_next_free_sgpr")
    if nfs is not None:
        if res.sgprs_used > SGPRS:
            yield at_instr(program, res.sgpr_at, CODE, "error", f"s{res.max_sgpr} does not exist: gfx11 kernels "
                           "address s0-s105")
        elif res.sgprs_used > nfs.value:
            yield at_instr(program, res.sgpr_at, CODE, "error",
                           f"s{res.max_sgpr} is used but .amdhsa_next_free_sgpr is {nfs.value}; declare "
                           f"{res.sgprs}", fix=fix)
        elif nfs.value > res.sgprs:
            yield at_line(path, nfs.line, CODE, "info",
                          f".amdhsa_next_free_sgpr {nfs.value} is more than the {res.sgprs} SGPRs the code uses "
                          f"or the hardware initialises", fix=fix)
        elif nfs.value < res.sgpr_floor:
            yield at_line(path, nfs.line, CODE, "info",
                          f".amdhsa_next_free_sgpr {nfs.value} is below the {res.sgpr_floor} user and system SGPRs "
                          f"the hardware initialises", fix=fix)
    total_s = res.sgprs + res.extra_sgprs
    vcc_note = " (incl. 2 for VCC)" if res.extra_sgprs else ""
    yield from _compare(path, meta.get(".sgpr_count"), total_s, "metadata .sgpr_count", f"SGPRs{vcc_note}",
                        error=True)
    for key in ("NumSgprs", "NumSGPRsForWavesPerEU"):
        yield from _compare(path, comments.get(key), total_s, f"comment {key}", f"SGPRs{vcc_note}")
    yield from _compare(path, comments.get("SGPRBlocks"), sgpr_blocks(total_s), "comment SGPRBlocks", "SGPR blocks")
    rv = descriptor_field(kernel, ".amdhsa_reserve_vcc")
    if rv is not None and rv.value == 0 and res.uses_vcc:
        yield at_line(path, rv.line, CODE, "info", ".amdhsa_reserve_vcc 0 but the code uses VCC")
    # -- LDS
    lds = descriptor_field(kernel, ".amdhsa_group_segment_fixed_size")
    if lds is not None:
        if lds.value > 65536:
            yield at_line(path, lds.line, CODE, "error", f"{lds.value} bytes of LDS: a workgroup can have at most "
                          "65536")
        m = meta.get(".group_segment_fixed_size")
        if m is not None and m.value != lds.value:
            yield at_line(path, m.line, CODE, "error", f"metadata .group_segment_fixed_size {m.value} disagrees with "
                          f".amdhsa_group_segment_fixed_size {lds.value}")
        c = comments.get("LDSByteSize")
        if c is not None and c.value != lds.value:
            yield at_line(path, c.line, CODE, "info", f"comment LDSByteSize {c.value} is stale: the descriptor "
                          f"declares {lds.value} bytes")
        if res.lds_min > lds.value:
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


def _compare(path: str, fld: Field | None, needed: int, what: str, unit: str, error: bool = False):
    if fld is None or fld.value == needed:
        return
    fix = "isalint fix --metadata"
    if fld.value < needed and error:
        yield at_line(path, fld.line, CODE, "error", f"{what} is {fld.value} but the code needs {needed} {unit}",
                      column=fld.start + 1, fix=fix)
    else:
        yield at_line(path, fld.line, CODE, "info", f"{what} {fld.value} is stale: the code needs {needed} {unit}",
                      column=fld.start + 1, fix=fix)
