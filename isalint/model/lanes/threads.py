"""Which work-items the lane evaluator follows: the workgroup's shape and each item's thread ids.

Without ``.reqd_workgroup_size`` a kernel that uses ``threadIdx.y``/``z`` is analysed for wave 0
only, with ``x`` spanning the whole wave and ``y``/``z`` uniform (stated in the LDS001
documentation).
"""
from __future__ import annotations

from ...hw.occupancy import MAX_WORKGROUP_SIZE
from ...records import Record


class ThreadLayout(Record):
    threads: int
    wave_size: int
    x: tuple[int, ...]
    y: tuple[int, ...] | None  # None: uniform and symbolic
    z: tuple[int, ...] | None
    note: str

    _fields = ("threads", "wave_size", "x", "y", "z", "note")

    def __init__(self, threads: int, wave_size: int, x: tuple[int, ...], y: tuple[int, ...] | None,
                 z: tuple[int, ...] | None, note: str):
        self.threads = threads
        self.wave_size = wave_size
        self.x = x
        self.y = y
        self.z = z
        self.note = note

    @property
    def waves(self) -> int:
        return max(1, self.threads // self.wave_size)

    @property
    def lane(self) -> tuple[int, ...]:
        """The lane index of each work-item."""
        lane = self.__dict__.get("_lane")
        if lane is None:
            lane = self.__dict__["_lane"] = tuple(t % self.wave_size for t in range(self.threads))
        return lane


def thread_layout(kernel, override: tuple[int, int, int] | None = None) -> ThreadLayout:
    """Which work-items the evaluator models, from the kernel metadata.

    With ``.reqd_workgroup_size`` (or ``override``) the whole workgroup; else
    ``.max_flat_workgroup_size`` work-items along x when the kernel only uses
    ``threadIdx.x``; else (no metadata, or y/z used with an unknown shape)
    wave 0 only.
    """
    ws = kernel.wave_size if kernel is not None else 32
    meta = (kernel.metadata or {}) if kernel is not None else {}
    dims = override or meta.get(".reqd_workgroup_size")
    workitem = (kernel.descriptor.get(".amdhsa_system_vgpr_workitem_id", 0) if kernel is not None else 0)
    flat = meta.get(".max_flat_workgroup_size")
    try:
        # with the types: 256.0 or True would take another path than 256 or 1
        key = (ws, tuple((type(d), d) for d in dims) if isinstance(dims, (list, tuple)) else (type(dims), dims),
               (type(workitem), workitem), (type(flat), flat))
        hash(key)
    except TypeError:  # metadata of an unexpected shape: worked out, not kept
        return _layout(ws, dims, workitem, flat)
    got = _LAYOUTS.get(key)
    if got is None:
        if len(_LAYOUTS) >= 256:
            _LAYOUTS.clear()
        got = _LAYOUTS[key] = _layout(ws, dims, workitem, flat)
    return got


# The layouts of the kernels of a library repeat (a few workgroup shapes): each is made once. A
# layout is not changed once made (only its ``lane`` tuple is added, on demand).
_LAYOUTS: dict[tuple, ThreadLayout] = {}


def _layout(ws: int, dims, workitem, flat) -> ThreadLayout:
    if dims and len(dims) == 3 and all(isinstance(d, int) and d > 0 for d in dims):
        bx, by, bz = dims
        t = min(bx * by * bz, MAX_WORKGROUP_SIZE)
        x = tuple(i % bx for i in range(t))
        y = tuple((i // bx) % by for i in range(t))
        z = tuple(i // (bx * by) for i in range(t))
        return ThreadLayout(t, ws, x, y, z, f"workgroup {bx}x{by}x{bz}")
    if workitem == 0 and isinstance(flat, int) and flat > 0:
        t = max(ws, min(flat, MAX_WORKGROUP_SIZE))
        return ThreadLayout(t, ws, tuple(range(t)), (0,) * t, (0,) * t,
                            f"{t} work-items along x")
    x = tuple(range(ws))
    if workitem == 0:
        return ThreadLayout(ws, ws, x, (0,) * ws, (0,) * ws, "wave 0")
    return ThreadLayout(ws, ws, x, None, None, "wave 0, threadIdx.y/z taken as uniform")
