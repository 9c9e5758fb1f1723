"""The memory a run will need, checked before numpy allocates it.

The factors are upper estimates from what the emulator and the numpy reference hold at once
(measured with ``benchmarks/worst_cases.py --emulator``): a request the machine cannot hold is
refused with the figure, instead of dying in an allocation or being killed by the kernel.
"""
from __future__ import annotations

import os

# The emulator's heap holds each buffer with guards, a per-dword last-writer table (8 bytes per
# 4) and the copies made while building and reading it back.
EMULATOR_BYTES_PER_BUFFER_BYTE = 9
# check_against_numpy: float64 copies of A, B and C, the product, the error and the tolerance.
GEMM_REFERENCE_BYTES_PER_ELEMENT = 64
WORKGROUP_BYTES = 200  # one entry of the list of workgroups (and of the wave map of the result)


class TooLarge(ValueError):
    """The run would need more memory than the machine has available."""


def gemm_bytes(n: int) -> int:
    """What ``run --gemm N`` / ``validate --gemm N`` hold at most: A, B, C, their emulator copies
    and the float64 reference."""
    elements = n * n
    return elements * (12 + 12 * EMULATOR_BYTES_PER_BUFFER_BYTE + GEMM_REFERENCE_BYTES_PER_ELEMENT)


def available_bytes() -> int | None:
    """Memory this process can still get: MemAvailable, capped by a cgroup limit; None if unknown."""
    found: list[int] = []
    try:
        with open("/proc/meminfo", "rb") as fh:
            for line in fh:
                if line.startswith(b"MemAvailable:"):
                    found.append(int(line.split()[1]) * 1024)
                    break
    except (OSError, ValueError, IndexError):
        pass
    for limit_file, usage_file in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        try:
            with open(limit_file, "rb") as fh:
                raw = fh.read().strip()
            if raw == b"max":
                continue
            limit = int(raw)
            with open(usage_file, "rb") as fh:
                usage = int(fh.read().strip())
            if limit < 1 << 60:
                found.append(max(0, limit - usage))
            break
        except (OSError, ValueError):
            continue
    if not found:
        try:
            found.append(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (ValueError, OSError, AttributeError):
            return None
    return min(found)


def describe(nbytes: int) -> str:
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= size:
            return f"{nbytes / size:.1f} {unit}"
    return f"{nbytes} bytes"


def require(nbytes: int, what: str) -> None:
    """Raise TooLarge when ``nbytes`` is more than the memory available."""
    available = available_bytes()
    if available is not None and nbytes > available:
        raise TooLarge(f"{what} needs about {describe(nbytes)} of memory; {describe(available)} is available")
