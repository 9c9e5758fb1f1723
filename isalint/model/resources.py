"""A kernel's resources: the registers and LDS its code uses, and the counts its file declares.

* :func:`kernel_resources` — the highest VGPR and SGPR the code names (explicit operands and the
  registers the model knows an instruction reads or writes), whether it uses VCC, the LDS bytes its
  DS instructions certainly reach, its lane-mask operands, and why the count may be incomplete (an
  instruction isalint cannot decode, M0-relative register addressing, a call).
* :func:`descriptor_field`, :func:`metadata_fields`, :func:`comment_fields` — where the file declares
  its counts (the ``.amdhsa_*`` descriptor, the ``.amdgpu_metadata`` YAML, the compiler's ``; NumVgprs:``
  comments), as :class:`Field`: the value and the line and columns that hold it, so that a rewrite can
  change the digits and nothing else.
* :func:`occupancy` — the kernel's waves per SIMD (:mod:`isalint.hw.occupancy`) from its descriptor and
  metadata; :func:`compiler_is_legacy` — whether the file's compiler used LLVM's old gfx11 VGPR model.

META001 compares the two sides, OCC001 reports the occupancy, and ``fix --metadata`` rewrites the
declared counts.
"""
from __future__ import annotations

import re

from ..hw.occupancy import MAX_WORKGROUP_SIZE, Occupancy, occupancy_for
from ..hw.registers import SYSTEM_SGPR_FIELDS, VCC_SGPRS
from ..records import Record
from .lanes.lds import ds_shape

_COMMENT = re.compile(r";\s*(NumVgprs|NumSgprs|ScratchSize|Occupancy|LDSByteSize|NumVGPRsForWavesPerEU|"
                      r"NumSGPRsForWavesPerEU|VGPRBlocks|SGPRBlocks):\s*(\d{1,18})(?!\d)")
_YAML_KEY = re.compile(r"^(\s*)(?:-\s+)?(\.[\w.]+):\s*(.*?)\s*$")
_INDIRECT = ("v_movrels", "v_movreld", "v_movrelsd", "s_movrels", "s_movreld")
_CALLS = ("s_setpc_b64", "s_swappc_b64", "s_call_b64")


class Field(Record):
    """One declared number and the line (and column span) that holds it."""

    value: int
    line: object
    start: int  # 0-based offset of the number in line.text
    end: int

    _fields = ("value", "line", "start", "end")

    def __init__(self, value: int, line: object, start: int, end: int):
        self.value = value
        self.line = line
        self.start = start
        self.end = end


class KernelResources(Record):
    kernel: object
    max_vgpr: int
    vgpr_at: object  # first instruction that uses max_vgpr
    max_sgpr: int
    sgpr_at: object
    uses_vcc: bool
    lds_min: int  # bytes certainly addressed
    lds_at: object
    lane_masks: list  # (instr, operand text, width) of lane-mask operands
    unknown: list[str]  # why the usage may be incomplete

    _fields = ("kernel", "max_vgpr", "vgpr_at", "max_sgpr", "sgpr_at", "uses_vcc", "lds_min", "lds_at",
               "lane_masks", "unknown")

    def __init__(self, kernel: object, max_vgpr: int = -1, vgpr_at: object = None, max_sgpr: int = -1,
                 sgpr_at: object = None, uses_vcc: bool = False, lds_min: int = 0, lds_at: object = None,
                 lane_masks: list | None = None, unknown: list[str] | None = None):
        self.kernel = kernel
        self.max_vgpr = max_vgpr
        self.vgpr_at = vgpr_at
        self.max_sgpr = max_sgpr
        self.sgpr_at = sgpr_at
        self.uses_vcc = uses_vcc
        self.lds_min = lds_min
        self.lds_at = lds_at
        self.lane_masks = [] if lane_masks is None else lane_masks
        self.unknown = [] if unknown is None else unknown

    @property
    def vgprs(self) -> int:
        return max(1, self.max_vgpr + 1)

    @property
    def sgprs_used(self) -> int:
        return self.max_sgpr + 1

    @property
    def sgpr_floor(self) -> int:
        """SGPRs the hardware initialises (user + system)."""
        d = self.kernel.descriptor
        return d.get(".amdhsa_user_sgpr_count", 0) + sum(1 for k in SYSTEM_SGPR_FIELDS if d.get(k, 0))

    @property
    def sgprs(self) -> int:
        """The SGPR count LLVM declares: the SGPRs the code names. It leaves out initialised SGPRs the
        code never reads (clang 19 declares 8 for a kernel with 15 user SGPRs that uses s0-s7:
        fixtures/kernels/probes/private_array.s); since gfx10 every wave gets all its SGPRs anyway."""
        return self.sgprs_used

    @property
    def extra_sgprs(self) -> int:
        return VCC_SGPRS if self.uses_vcc else 0


def _ds_extent(ins) -> int:
    """Bytes from LDS address 0 a DS load/store certainly touches (offset + width)."""
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


# id(an instruction's slots) -> (those slots, *_names()): what it names depends on its decoding
# alone (statements, uses, defs), whose instructions share one ``slots`` list (see
# isalint.model.program._make_instr); kept from one file to the next, the entry keeps the list alive
_NAMES: dict[int, tuple] = {}
_NAMES_MAX = 1 << 16


def kernel_resources(program, kernel) -> KernelResources:
    res = KernelResources(kernel)
    known = _REG_NUM
    names = _NAMES
    if len(names) >= _NAMES_MAX:
        names.clear()
    max_vgpr = max_sgpr = -1
    vgpr_at = sgpr_at = None
    for ins in program.instrs[kernel.first:kernel.last]:
        # the highest VGPR and SGPR the instruction names: its model registers and every operand as
        # written; the same decoding names the same registers, and unrolled code repeats its lines
        slots = ins.slots
        seen = names.get(id(slots))
        if seen is None or seen[0] is not slots:
            seen = names[id(slots)] = (slots, *_names(ins, known), _unusual(ins),
                                       _ds_extent(ins) if ins.klass == "lds" else 0)
        _, top_v, top_s, vcc, masks, unusual, ext = seen
        if unusual:
            if ins.opaque:
                res.unknown.append(f"line {ins.lineno} cannot be decoded")
            if ins.opcode.startswith(_INDIRECT):
                res.unknown.append(f"line {ins.lineno} addresses registers through M0 ({ins.opcode})")
            if ins.opcode in _CALLS:
                res.unknown.append(f"line {ins.lineno} calls code isalint cannot see")
        if ext > res.lds_min:
            res.lds_min, res.lds_at = ext, ins
        if masks:
            for text, file in masks:
                res.lane_masks.append((ins, text, file))
        if vcc:
            res.uses_vcc = True
        if top_v > max_vgpr:
            max_vgpr, vgpr_at = top_v, ins
        if top_s > max_sgpr:
            max_sgpr, sgpr_at = top_s, ins
    if max_vgpr > res.max_vgpr:
        res.max_vgpr, res.vgpr_at = max_vgpr, vgpr_at
    if max_sgpr > res.max_sgpr:
        res.max_sgpr, res.sgpr_at = max_sgpr, sgpr_at
    return res


def _unusual(ins) -> bool:
    """Whether :func:`kernel_resources` names the instruction as code it cannot count: it cannot be
    decoded, addresses registers through M0 or calls (all fixed by its decoding)."""
    return ins.opaque or ins.opcode.startswith(_INDIRECT) or ins.opcode in _CALLS


def _names(ins, known) -> tuple[int, int, bool, tuple[tuple[str, str], ...]]:
    """(highest VGPR, highest SGPR, VCC named, lane-mask operands as (text, file)) of one instruction."""
    top_v = top_s = -1
    vcc = False
    masks = []
    for regs in (ins.uses, ins.defs):
        for r in regs:
            got = known.get(r, False)
            if got is False:
                got = _reg_num(r)
            if got is not None:
                file, n = got
                if file == "v":
                    if n > top_v:
                        top_v = n
                elif file == "s":
                    if n > top_s:
                        top_s = n
                else:
                    vcc = True
    for stmt in ins.stmts:
        for op in stmt.operands:
            kind = op.kind
            if kind == "vgpr":
                last = max(op.value) if type(op.value) is tuple else op.first + op.count - 1  # [v4, v9]: v9
                if op.count > 0 and last > top_v:
                    top_v = last
            elif kind == "sgpr":
                if op.count > 0 and op.first + op.count - 1 > top_s:
                    top_s = op.first + op.count - 1
            elif kind == "special":
                for r in op.registers():
                    if r.startswith("vcc"):
                        vcc = True
                if op.file in _LANE_MASKS and (op.file in ("exec", "vcc") or _in_mask_slot(ins, stmt, op)):
                    masks.append((op.text, op.file))
    return top_v, top_s, vcc, tuple(masks)


def _in_mask_slot(ins, stmt, op) -> bool:
    """Whether a 32-bit half (``exec_lo``, ``vcc_hi``...) fills a lane-mask operand (a carry out, a
    compare result, a select mask, the e32 forms' explicit VCC, any operand of a ``*saveexec*`` or
    ``*wrexec*`` instruction). Elsewhere it is 32-bit data: wave64
    code reads the halves of EXEC on purpose (``v_mbcnt_lo_u32_b32 v1, exec_lo, 0`` then
    ``v_mbcnt_hi_u32_b32 v1, exec_hi, v1``: the lane id)."""
    from ..isa import lookup

    info = lookup(stmt.mnemonic)
    if info is None or ins.opaque or "exec_" in info.mnemonic:
        return True  # unknown, or an EXEC-mask instruction (s_and_saveexec_b32 s4, vcc_lo): a mask
    k = ins.stmts.index(stmt)
    slots = ins.slots[k] if k < len(ins.slots) else []
    name = next((sl.name for sl in slots if sl.operand is op), None)
    spec = next((sp for sp in info.operands if sp.name == name), None)
    return spec is not None and (spec.mask or spec.kind == "other")


def _kernel_of_line(program, number: int):
    best = None
    for k in program.kernels:
        start = k.symbol_line.number if k.symbol_line is not None else 0
        if start <= number and (best is None or start >= (best.symbol_line.number if best.symbol_line else 0)):
            best = k
    return best


def _once(read):
    """``read(program)``, worked out once per program (several rules read the same fields; the
    result is never changed by its readers)."""
    key = "_fields_" + read.__name__

    def once(program):
        memo = getattr(program, "__dict__", None)
        if memo is None:
            return read(program)
        got = memo.get(key)
        if got is None:
            got = memo[key] = read(program)
        return got

    once.__name__, once.__doc__ = read.__name__, read.__doc__
    return once


@_once
def comment_fields(program) -> dict[str, dict[str, Field]]:
    """kernel name -> {"NumVgprs": Field, ...} from the compiler's `; Kernel info` comments."""
    out: dict[str, dict[str, Field]] = {}
    for line in [line for line in program.source.lines if line.comment]:
        if ":" not in line.comment:
            continue
        m = _COMMENT.search(line.text)
        if not m:
            continue
        k = _kernel_of_line(program, line.number)
        if k is None:
            continue
        out.setdefault(k.name, {}).setdefault(m.group(1), Field(int(m.group(2)), line, m.start(2), m.end(2)))
    return out


_KERNELS_KEY = re.compile(r"amdhsa\.kernels:")
_TOP_LEVEL = re.compile(r"\S")
_ITEM = re.compile(r"(\s*)-\s+")
_DECIMAL = re.compile(r"\d{1,18}")


@_once
def metadata_fields(program) -> dict[str, dict[str, Field]]:
    """kernel name -> {".vgpr_count": Field, ...}: the kernel entries' top-level integer keys."""
    out: dict[str, dict[str, Field]] = {}
    entries: list[dict[str, Field]] = []
    names: list[str | None] = []
    in_kernels = False
    item_indent = None
    key_indent = None
    for line in [line for line in program.source.lines if line.kind == "metadata"]:
        text = line.text
        if _KERNELS_KEY.match(text):
            in_kernels = True
            continue
        if _TOP_LEVEL.match(text):
            in_kernels = False
            continue
        if not in_kernels:
            continue
        dash = _ITEM.match(text)
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
        vm = _DECIMAL.fullmatch(value)
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
    m = re.search(re.escape(key) + r"\s+(\d{1,18})(?!\d)", line.text)
    if not m:
        return None
    return Field(int(m.group(1)), line, m.start(1), m.end(1))


_CLANG = re.compile(r"clang version (\d{1,9})(?!\d)")


def compiler_is_legacy(program) -> bool:
    """True when the file's .ident names a clang older than 16 (no gfx1100 1.5x VGPR model)."""
    for line in program.source.lines:
        if line.kind == "directive" and line.directive == ".ident":
            m = _CLANG.search(line.args)
            if m:
                return int(m.group(1)) < 16
    return False


def occupancy(kernel, vgprs: int | None = None, legacy: bool = False, group_size: int | None = None) -> Occupancy | None:
    """The kernel's occupancy (:func:`isalint.hw.occupancy.occupancy_for`) from its descriptor and
    metadata (None without a descriptor): the VGPRs the descriptor allocates (or ``vgprs``), its LDS,
    in workgroups of ``group_size`` work-items (default: the metadata's ``.max_flat_workgroup_size``)."""
    d = kernel.descriptor
    if ".amdhsa_next_free_vgpr" not in d and vgprs is None:
        return None
    n = d.get(".amdhsa_next_free_vgpr", 0) if vgprs is None else vgprs
    meta = kernel.metadata or {}
    group = meta.get(".max_flat_workgroup_size") if group_size is None else group_size
    if not isinstance(group, int) or group <= 0:
        group = MAX_WORKGROUP_SIZE  # the compiler's default flat workgroup size range is 1..1024
    lds = d.get(".amdhsa_group_segment_fixed_size", meta.get(".group_segment_fixed_size", 0)) or 0
    return occupancy_for(n, lds, group, kernel.wave_size, kernel.wgp_mode, legacy)


def launch_size(kernel, path: str) -> tuple[int, str]:
    """The work-items of one workgroup and where that number comes from: the metadata's
    ``.reqd_workgroup_size``, the launch recorded in a ``kernels.json`` beside the file (its
    ``"block"``), the launch bounds (``.max_flat_workgroup_size`` below 1024), or else an assumption:
    with no launch bounds the metadata allows up to 1024 work-items and the compiler plans for them."""
    meta = kernel.metadata or {}
    reqd = meta.get(".reqd_workgroup_size")
    if isinstance(reqd, list) and len(reqd) == 3 and all(isinstance(d, int) and d >= 1 for d in reqd):
        return min(reqd[0] * reqd[1] * reqd[2], MAX_WORKGROUP_SIZE), "the metadata's .reqd_workgroup_size"
    block = _recorded_block(path)
    if block is not None:
        return block, "the launch in kernels.json"
    bound = meta.get(".max_flat_workgroup_size")
    if isinstance(bound, int) and 0 < bound < MAX_WORKGROUP_SIZE:
        return bound, "the launch bounds (.max_flat_workgroup_size)"
    return MAX_WORKGROUP_SIZE, ""


def _recorded_block(path: str) -> int | None:
    """Work-items per workgroup of the ``"block"`` a ``kernels.json`` beside ``path`` records for it."""
    import json
    from pathlib import Path

    try:
        p = Path(path)
        data = json.loads((p.parent / "kernels.json").read_text(encoding="utf-8"))
        block = data["kernels"][p.name]["block"]
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None
    if not (isinstance(block, list) and 1 <= len(block) <= 3
            and all(isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in block)):
        return None
    n = 1
    for d in block:
        n *= d
    return n if n <= MAX_WORKGROUP_SIZE else None

