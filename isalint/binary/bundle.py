"""Clang offload bundles: the device code objects inside a HIP fat binary or host executable.

An uncompressed bundle (clang's ClangOffloadBundler format) is the magic
``__CLANG_OFFLOAD_BUNDLE__``, a 64-bit entry count, then per entry its offset and size (relative to
the bundle's start), the length of its target triple and the triple
(``hipv4-amdgcn-amd-amdhsa--gfx1100``, ``host-x86_64-unknown-linux-gnu``). A compressed bundle
starts with ``CCOB``, a 16-bit format version and a 16-bit compression method, then sizes (32-bit in
versions 1 and 2, 64-bit from 3) and a 64-bit hash before the compressed uncompressed-bundle. zlib
is read with the standard library; zstd (clang's default when it is available) is not, and such a
bundle is named with what to run instead.

In a host executable or library the bundles sit in the ``.hip_fatbin`` section; anywhere else (a
``.hipfb`` file, an offload archive member) the file is searched for the magic.
"""
from __future__ import annotations

import struct
import zlib

MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
COMPRESSED_MAGIC = b"CCOB"
# the compression methods of a CCOB header (llvm::compression::Format)
_ZLIB, _ZSTD = 0, 1


class BundleError(ValueError):
    pass


class Entry:
    """One code object of a bundle: its target triple and its bytes."""

    __slots__ = ("triple", "data", "where")

    def __init__(self, triple: str, data: bytes, where: str):
        self.triple, self.data, self.where = triple, data, where

    @property
    def processor(self) -> str:
        """The processor the triple names (``gfx1100`` of ``hipv4-amdgcn-amd-amdhsa--gfx1100:xnack-``)."""
        last = self.triple.rsplit("-", 1)[-1]
        return last.split(":", 1)[0]


def is_bundle(data) -> bool:
    return data[:len(MAGIC)] == MAGIC or data[:4] == COMPRESSED_MAGIC


def entries(data, start: int = 0, where: str = "") -> list[Entry]:
    """The entries of the bundle at ``data[start:]`` (compressed or not)."""
    if data[start:start + 4] == COMPRESSED_MAGIC:
        return entries(decompress(data, start), 0, where)
    if data[start:start + len(MAGIC)] != MAGIC:
        raise BundleError("not a clang offload bundle")
    k = start + len(MAGIC)
    count, = _unpack("<Q", data, k)
    k += 8
    if count > 1 << 16:
        raise BundleError(f"a bundle of {count} entries")
    out = []
    for _ in range(count):
        offset, size, triple_size = _unpack("<QQQ", data, k)
        k += 24
        triple = bytes(data[k:k + triple_size]).decode("utf-8", "replace")
        k += triple_size
        if start + offset + size > len(data):
            raise BundleError(f"entry {triple} lies outside the bundle")
        out.append(Entry(triple, bytes(data[start + offset:start + offset + size]),
                         f"{where}bundle entry {triple}"))
    return out


def decompress(data, start: int = 0) -> bytes:
    """The uncompressed bundle of the ``CCOB`` bundle at ``data[start:]``."""
    version, method = _unpack("<HH", data, start + 4)
    if version == 1:
        header = 4 + 4 + 4 + 8
        total = None
    elif version == 2:
        header = 4 + 4 + 4 + 4 + 8
        total, = _unpack("<I", data, start + 8)
    elif version == 3:
        header = 4 + 4 + 8 + 8 + 8
        total, = _unpack("<Q", data, start + 8)
    else:
        raise BundleError(f"compressed bundle format version {version} is not known")
    end = start + total if total else len(data)
    payload = bytes(data[start + header:end])
    if method == _ZLIB:
        try:
            return zlib.decompress(payload)
        except zlib.error as exc:
            raise BundleError(f"the zlib-compressed bundle does not decompress: {exc}") from None
    if method == _ZSTD:
        raise BundleError("the bundle is compressed with zstd, which this Python cannot read; unpack it with "
                          "`clang-offload-bundler --unbundle --type=o --targets=hipv4-amdgcn-amd-amdhsa--gfx1100 "
                          "--input=FILE --output=kernel.co` and check kernel.co")
    raise BundleError(f"compression method {method} is not known")


def find_bundles(data, lo: int = 0, hi: int | None = None) -> list[int]:
    """Offsets of the bundles in ``data[lo:hi]``: every place a magic starts."""
    hi = len(data) if hi is None else hi
    found = []
    for magic in (MAGIC, COMPRESSED_MAGIC):
        k = data.find(magic, lo, hi)
        while k >= 0:
            found.append(k)
            k = data.find(magic, k + len(magic), hi)
    return sorted(found)


def _unpack(fmt: str, data, k: int):
    size = struct.calcsize(fmt)
    if k + size > len(data):
        raise BundleError("truncated bundle header")
    return struct.unpack_from(fmt, data, k)
