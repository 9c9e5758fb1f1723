"""Just enough ELF64 reading to compare the code of two assembled kernels."""
from __future__ import annotations

import struct


def section_bytes(data: bytes, name: str) -> bytes | None:
    """The contents of section ``name`` of a little-endian ELF64 file, or None."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)

    def header(i):
        # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size
        return struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)

    strtab = header(shstrndx)
    names = data[strtab[4]: strtab[4] + strtab[5]]
    for i in range(shnum):
        h = header(i)
        end = names.find(b"\0", h[0])
        if names[h[0]:end].decode(errors="replace") == name:
            return data[h[4]: h[4] + h[5]]
    return None
