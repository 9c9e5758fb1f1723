"""What a kernel receives when it is launched: its initial SGPRs and its kernel argument segment.

One description for everything that starts a kernel: the emulator (:mod:`isalint.validate.emu`), the
estimate's scalar walk (:mod:`isalint.estimate.scalar`) and the lane and affine evaluators, which need
to know which SGPR holds what on entry.

Initial wave state (LLVM AMDGPUUsage, "Initial Kernel Execution State"; RDNA3 ISA guide, "Initial wave
state"):

* User SGPRs are filled from s0 upwards in this fixed order, each only when its
  ``.amdhsa_user_sgpr_*`` directive is 1: private segment buffer (4), dispatch ptr (2), queue ptr
  (2), kernarg segment ptr (2), dispatch id (2), flat scratch init (2), private segment size (1).
* ``.amdhsa_user_sgpr_count`` is how many SGPRs the user part occupies; it may exceed the enabled
  fields (kernel5.s says 14 with only the kernarg pointer enabled: s0:1 hold the pointer, s2..s13
  are reserved); without it, the enabled fields are the count. System SGPRs start right after it:
  workgroup id X, Y, Z (each when its ``.amdhsa_system_sgpr_workgroup_id_*`` is 1; X defaults to 1),
  workgroup info, then the private segment wave offset when ``.amdhsa_enable_private_segment`` is 1.
  So kernel5's ``s14``/``s15`` are the workgroup ids X/Y.
* VGPR0 holds the work-item ids packed as X in bits 9:0, Y in 19:10, Z in 29:20 (gfx11 always packs);
  ``.amdhsa_system_vgpr_workitem_id`` N enables X (0), X and Y (1) or all three (2).

The kernel argument segment is laid out by the metadata's ``.args`` (offset, size, value kind); the
hidden arguments after the visible ones describe the launch (block counts, group sizes, grid dims).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

USER_SGPR_FIELDS = (  # (directive, SGPRs, name) in the order the hardware loads user SGPRs
    (".amdhsa_user_sgpr_private_segment_buffer", 4, "private_segment_buffer"),
    (".amdhsa_user_sgpr_dispatch_ptr", 2, "dispatch_ptr"),
    (".amdhsa_user_sgpr_queue_ptr", 2, "queue_ptr"),
    (".amdhsa_user_sgpr_kernarg_segment_ptr", 2, "kernarg_segment_ptr"),
    (".amdhsa_user_sgpr_dispatch_id", 2, "dispatch_id"),
    (".amdhsa_user_sgpr_flat_scratch_init", 2, "flat_scratch_init"),
    (".amdhsa_user_sgpr_private_segment_size", 1, "private_segment_size"),
)
# Where a launch without real buffers places its pointer arguments: argument buffer k at
# (k + 1) * PLACEHOLDER_BUFFER_STRIDE, distinct and 4 GiB apart.
PLACEHOLDER_BUFFER_STRIDE = 0x100000000


class AbiError(ValueError):
    """The descriptor, the metadata or the launch do not fit together."""


@dataclass
class SgprLayout:
    user: dict[str, int]  # field -> first SGPR
    user_count: int
    workgroup_id: dict[str, int]  # "x"/"y"/"z" -> SGPR
    workgroup_info: int | None
    wave_offset: int | None
    workitem_dims: int  # 1..3


def sgpr_layout(descriptor: dict[str, int]) -> SgprLayout:
    """Which SGPR holds what on entry, from the kernel descriptor's directives."""
    user: dict[str, int] = {}
    n = 0
    for directive, size, name in USER_SGPR_FIELDS:
        if descriptor.get(directive, 0):
            user[name] = n
            n += size
    count = descriptor.get(".amdhsa_user_sgpr_count", n)
    if count < n:
        raise AbiError(f".amdhsa_user_sgpr_count {count} is smaller than the {n} SGPRs the enabled user "
                       "SGPR fields need")
    s = count
    wg: dict[str, int] = {}
    for axis, default in (("x", 1), ("y", 0), ("z", 0)):
        if descriptor.get(f".amdhsa_system_sgpr_workgroup_id_{axis}", default):
            wg[axis] = s
            s += 1
    info = None
    if descriptor.get(".amdhsa_system_sgpr_workgroup_info", 0):
        info = s
        s += 1
    wave_off = None
    if descriptor.get(".amdhsa_enable_private_segment", 0) or descriptor.get(
            ".amdhsa_system_sgpr_private_segment_wavefront_offset", 0):
        wave_off = s
        s += 1
    dims = descriptor.get(".amdhsa_system_vgpr_workitem_id", 0) + 1
    return SgprLayout(user, count, wg, info, wave_off, dims)


def initial_sgprs(layout: SgprLayout, workgroup: tuple[int, int, int], pointers: dict[str, int],
                  private_size: int = 0) -> dict[int, int]:
    """SGPR number -> the 32-bit value the hardware loads, for the user fields whose pointer
    (``kernarg_segment_ptr``, ``dispatch_ptr``, ``queue_ptr``) is in ``pointers`` and the system
    fields; fields left out (flat scratch, the private segment buffer) are not set."""
    out: dict[int, int] = {}
    user = layout.user
    for name, addr in pointers.items():
        if name in user:
            s = user[name]
            out[s], out[s + 1] = addr & 0xFFFF_FFFF, addr >> 32
    if "dispatch_id" in user:
        s = user["dispatch_id"]
        out[s] = out[s + 1] = 0
    if "private_segment_size" in user:
        out[user["private_segment_size"]] = private_size
    for axis, val in zip("xyz", workgroup):
        if axis in layout.workgroup_id:
            out[layout.workgroup_id[axis]] = val
    if layout.workgroup_info is not None:
        out[layout.workgroup_info] = 0
    if layout.wave_offset is not None:
        out[layout.wave_offset] = 0
    return out


@dataclass
class KernelArg:
    index: int
    name: str
    offset: int
    size: int
    kind: str  # global_buffer | by_value | hidden_* | ...


def kernel_args(kernel) -> list[KernelArg]:
    """The kernel's arguments as its metadata lists them (hidden ones included)."""
    md = kernel.metadata or {}
    out = []
    for i, a in enumerate(md.get(".args", []) or []):
        out.append(KernelArg(i, str(a.get(".name", f"arg{i}")), int(a.get(".offset", 0)), int(a.get(".size", 0)),
                             str(a.get(".value_kind", "by_value"))))
    return out


@dataclass
class Launch:
    """One launch of a kernel.

    ``args`` maps an argument's name, its index among ``.args`` or ``argN`` to its value: an int, a
    float (packed as fp32 or fp64 by the argument's size), bytes, or for a pointer the name of one of
    ``buffers`` (the emulator places them). ``group`` is the workgroup whose path a single-wave walk
    follows (the estimate's)."""

    grid: tuple[int, int, int]  # workgroups
    block: tuple[int, int, int]  # work-items per workgroup
    args: dict  # arg name or index -> int/float/bytes or a buffer name (str) for pointers
    buffers: dict = field(default_factory=dict)  # name -> initial contents (numpy arrays)
    group: tuple[int, int, int] = (0, 0, 0)
    # run only these workgroup ids of the grid (a sample of a launch too large to emulate whole); the
    # kernel still sees the whole grid (its dispatch packet and hidden arguments)
    workgroups: tuple[tuple[int, int, int], ...] | None = None

    def workgroup_ids(self) -> list[tuple[int, int, int]]:
        """The workgroups this launch runs, in the order the hardware would dispatch them."""
        gx, gy, gz = self.grid
        if self.workgroups is None:
            return [(x, y, z) for z in range(gz) for y in range(gy) for x in range(gx)]
        return list(self.workgroups)

    def workgroup_count(self) -> int:
        """How many workgroups this launch runs (without listing a whole grid's)."""
        gx, gy, gz = self.grid
        return gx * gy * gz if self.workgroups is None else len(self.workgroups)


def hidden_argument(kind: str, launch: Launch) -> int | None:
    """The value of a hidden argument this launch defines (None for those it does not)."""
    g, b = launch.grid, launch.block
    table = {
        "hidden_block_count_x": g[0], "hidden_block_count_y": g[1], "hidden_block_count_z": g[2],
        "hidden_group_size_x": b[0], "hidden_group_size_y": b[1], "hidden_group_size_z": b[2],
        "hidden_remainder_x": 0, "hidden_remainder_y": 0, "hidden_remainder_z": 0,
        "hidden_grid_dims": 3 if g[2] > 1 else (2 if g[1] > 1 else 1),
        "hidden_global_offset_x": 0, "hidden_global_offset_y": 0, "hidden_global_offset_z": 0,
    }
    return table.get(kind)


def _argument_key(a: KernelArg, given: dict):
    if a.name in given:
        return a.name
    if a.index in given:
        return a.index
    if f"arg{a.index}" in given:
        return f"arg{a.index}"
    return None


def kernarg_segment(args: list[KernelArg], launch: Launch, addresses: dict[str, int] | None = None,
                    size: int = 0, complete: bool = True) -> tuple[bytes, bytes]:
    """(segment, known): the kernel argument segment of ``launch`` and, per byte, 1 when it is known.

    ``addresses`` gives the device address of each buffer a pointer argument names. ``complete``: every
    visible argument must have a value (else :class:`AbiError`), as must the names in ``launch.args``,
    and hidden arguments the launch does not define are 0. Otherwise what is missing stays unknown, and
    a pointer argument without a value points at a placeholder buffer of its own."""
    length = max(16, (max(size, max((a.offset + a.size for a in args), default=0)) + 15) // 16 * 16)
    buf = bytearray(length)
    known = bytearray(length)
    used = set()
    pointers = 0
    for a in args:
        if a.kind.startswith("hidden_"):
            val = hidden_argument(a.kind, launch)
            if val is None:
                if not complete:
                    continue
                val = 0
            raw = int(val).to_bytes(8, "little")[:a.size]
        else:
            key = _argument_key(a, launch.args)
            pointer = a.kind in ("global_buffer", "dynamic_shared_pointer")
            if a.kind == "global_buffer":
                pointers += 1
            if key is None:
                if complete:
                    raise AbiError(f"no value for kernel argument {a.name} (#{a.index}, {a.kind}, {a.size} bytes)")
                if a.kind != "global_buffer":
                    continue
                val = pointers * PLACEHOLDER_BUFFER_STRIDE
            else:
                used.add(key)
                val = launch.args[key]
            raw = _argument_bytes(a, val, pointer, addresses)
        buf[a.offset:a.offset + a.size] = raw
        known[a.offset:a.offset + a.size] = b"\x01" * a.size
    extra = set(launch.args) - used
    if extra and complete:
        names = ", ".join(str(x) for x in sorted(extra, key=str))
        have = ", ".join(a.name for a in args if not a.kind.startswith("hidden_"))
        raise AbiError(f"unknown kernel argument(s) {names} (the kernel takes: {have})")
    return bytes(buf), bytes(known)


def _argument_bytes(a: KernelArg, val, pointer: bool, addresses: dict[str, int] | None) -> bytes:
    if pointer or isinstance(val, str):
        if isinstance(val, str):
            if addresses is None or val not in addresses:
                raise AbiError(f"argument {a.name} names an unknown buffer {val}")
            val = addresses[val]
        raw = int(val).to_bytes(8, "little")[:a.size]
    elif isinstance(val, (bytes, bytearray)):
        raw = bytes(val)
    elif isinstance(val, float) or getattr(getattr(val, "dtype", None), "kind", "") == "f":
        raw = struct.pack({2: "<e", 4: "<f"}.get(a.size, "<d"), float(val))
    else:
        raw = (int(val) & ((1 << (8 * a.size)) - 1)).to_bytes(a.size, "little")
    if len(raw) != a.size:
        raise AbiError(f"argument {a.name} takes {a.size} bytes, got {len(raw)}")
    return raw
