"""A MessagePack reader: the AMDGPU metadata note (NT_AMDGPU_METADATA) is one MessagePack map.

Formats per the MessagePack specification (github.com/msgpack/msgpack, spec.md): fixint, fixmap,
fixarray, fixstr, nil, booleans, bin, ext (read as bytes), float 32/64, unsigned and signed integers
of 8-64 bits, str 8/16/32, array 16/32, map 16/32.
"""
from __future__ import annotations

import struct


class MsgpackError(ValueError):
    pass


_FIXED = {0xCA: (">f", 4), 0xCB: (">d", 8), 0xCC: (">B", 1), 0xCD: (">H", 2), 0xCE: (">I", 4), 0xCF: (">Q", 8),
          0xD0: (">b", 1), 0xD1: (">h", 2), 0xD2: (">i", 4), 0xD3: (">q", 8)}
_MAX_DEPTH = 64


def unpack(data: bytes):
    """The one value ``data`` holds; MsgpackError when it is malformed or has bytes left over."""
    value, end = _read(data, 0, 0)
    if end != len(data):
        raise MsgpackError(f"{len(data) - end} bytes after the value")
    return value


def read_at(data: bytes, k: int):
    """(the value at byte ``k``, the offset after it)."""
    return _read(data, k, 0)


def _read(data: bytes, k: int, depth: int):
    if depth > _MAX_DEPTH:
        raise MsgpackError("nested too deeply")
    if k >= len(data):
        raise MsgpackError("truncated")
    b = data[k]
    k += 1
    if b <= 0x7F:
        return b, k
    if b >= 0xE0:
        return b - 0x100, k
    if 0xA0 <= b <= 0xBF:
        return _str(data, k, b & 0x1F)
    if 0x90 <= b <= 0x9F:
        return _array(data, k, b & 0x0F, depth)
    if 0x80 <= b <= 0x8F:
        return _map(data, k, b & 0x0F, depth)
    if b == 0xC0:
        return None, k
    if b == 0xC2 or b == 0xC3:
        return b == 0xC3, k
    fixed = _FIXED.get(b)
    if fixed is not None:
        fmt, size = fixed
        if k + size > len(data):
            raise MsgpackError("truncated")
        return struct.unpack_from(fmt, data, k)[0], k + size
    if b in (0xD9, 0xDA, 0xDB):
        n, k = _length(data, k, 1 << (b - 0xD9))
        return _str(data, k, n)
    if b in (0xC4, 0xC5, 0xC6):
        n, k = _length(data, k, 1 << (b - 0xC4))
        return _bytes(data, k, n)
    if b in (0xDC, 0xDD):
        n, k = _length(data, k, 2 if b == 0xDC else 4)
        return _array(data, k, n, depth)
    if b in (0xDE, 0xDF):
        n, k = _length(data, k, 2 if b == 0xDE else 4)
        return _map(data, k, n, depth)
    if 0xD4 <= b <= 0xD8:  # fixext 1-16: type byte and data
        return _bytes(data, k + 1, 1 << (b - 0xD4))
    if b in (0xC7, 0xC8, 0xC9):
        n, k = _length(data, k, 1 << (b - 0xC7))
        return _bytes(data, k + 1, n)
    raise MsgpackError(f"unknown type byte 0x{b:02x}")


def _length(data: bytes, k: int, size: int):
    if k + size > len(data):
        raise MsgpackError("truncated")
    return int.from_bytes(data[k:k + size], "big"), k + size


def _str(data: bytes, k: int, n: int):
    if k + n > len(data):
        raise MsgpackError("truncated string")
    return data[k:k + n].decode("utf-8", "replace"), k + n


def _bytes(data: bytes, k: int, n: int):
    if k + n > len(data):
        raise MsgpackError("truncated data")
    return bytes(data[k:k + n]), k + n


def _array(data: bytes, k: int, n: int, depth: int):
    out = []
    for _ in range(n):
        value, k = _read(data, k, depth + 1)
        out.append(value)
    return out, k


def _map(data: bytes, k: int, n: int, depth: int):
    out = {}
    for _ in range(n):
        key, k = _read(data, k, depth + 1)
        value, k = _read(data, k, depth + 1)
        if isinstance(key, (list, dict)):
            raise MsgpackError("a map key that is a map or an array")
        out[key] = value
    return out, k
