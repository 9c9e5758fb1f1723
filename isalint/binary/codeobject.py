"""Kernels out of AMDGPU code objects: ``.co``/``.hsaco``/``.o`` files, clang offload bundles and the
HIP fat binaries inside host executables and libraries.

A kernel is found by its descriptor symbol ``NAME.kd`` (64 bytes, usually in ``.rodata``); its code
starts at the function symbol ``NAME`` (else at the descriptor's entry offset) and runs for the
symbol's size, or, when the size is 0 (hand-written kernels), up to the next function or the end
of the section, without the zero fill after it. Local symbols inside the code are its labels; the
metadata note holds its arguments and register counts. Code objects for processors other than
gfx11 are skipped and named.
"""
from __future__ import annotations

import bisect
import fnmatch
import struct

from . import bundle, msgpack
from .elf import EM_AMDGPU, SHN_ABS, SHN_UNDEF, STT_FUNC, STT_NOTYPE, STT_OBJECT, Elf, ElfError
from .metadata import NT_AMDGPU_METADATA, code_object_version

ET_REL = 1
MAX_KERNEL_BYTES = 64 * 1024 * 1024


class CodeObjectError(ValueError):
    """A file that claims to be a code object and is not one that can be read."""


class KernelImage:
    """One kernel of a code object: what its listing is made of (plain data: it crosses processes)."""

    __slots__ = ("source", "name", "target", "code", "code_addr", "descriptor", "descriptor_addr", "labels",
                 "note", "abi_version", "where")

    def __init__(self, source: str, name: str, target: str, code: bytes, code_addr: int, descriptor: bytes,
                 descriptor_addr: int, labels: dict, note: bytes | None, abi_version: int, where: str = ""):
        self.source = source  # the file as given
        self.name = name
        self.target = target  # gfx1100
        self.code = code
        self.code_addr = code_addr
        self.descriptor = descriptor
        self.descriptor_addr = descriptor_addr
        self.labels = labels  # byte offset in code -> [symbol names]
        self.note = note  # the metadata note (MessagePack) that describes it
        self.abi_version = abi_version  # the ELF header's
        self.where = where  # "" or the bundle entry it came from

    def __getstate__(self):
        return tuple(getattr(self, n) for n in self.__slots__)

    def __setstate__(self, state):
        for n, v in zip(self.__slots__, state):
            setattr(self, n, v)

    @property
    def display(self) -> str:
        """``lib.co:KERNEL``: how findings name the kernel."""
        return f"{self.source}:{self.name}"

    def metadata(self) -> tuple[dict | None, dict, int]:
        """(its entry of the metadata, the document's other keys, the code object version)."""
        entry, header = kernel_metadata(self.note, self.name + ".kd")
        return entry, header, code_object_version(header, self.abi_version)

    def fingerprint(self) -> bytes:
        """Everything the kernel's listing is made of, as bytes (the result cache's key)."""
        parts = [self.name.encode(), self.target.encode(), struct.pack("<QQI", self.code_addr,
                 self.descriptor_addr, self.abi_version), self.code, self.descriptor,
                 repr(sorted(self.labels.items())).encode(), self.note or b"", self.where.encode()]
        return b"\0".join(parts)


class Skipped:
    __slots__ = ("what", "why")

    def __init__(self, what: str, why: str):
        self.what, self.why = what, why


def is_code_object(data) -> bool:
    """Whether ``data`` is read as a binary (an ELF file or an offload bundle) rather than as text."""
    head = bytes(data[:24])
    return head.startswith(b"\x7fELF") or bundle.is_bundle(head)


def read(data, source: str, select: str | None = None) -> tuple[list[KernelImage], list[Skipped]]:
    """The gfx11 kernels of the file ``data`` (named ``source``), those whose name matches the glob
    ``select`` (or one of its comma-separated globs); and what was skipped (code objects for other
    processors, host code)."""
    kernels: list[KernelImage] = []
    skipped: list[Skipped] = []
    try:
        for obj, where in _code_objects(data, skipped):
            _read_elf(obj, source, where, select, kernels, skipped)
    except (ElfError, bundle.BundleError, msgpack.MsgpackError, struct.error) as exc:
        raise CodeObjectError(str(exc)) from None
    return kernels, skipped


def _code_objects(data, skipped: list[Skipped]):
    """(Elf, where) of every AMDGPU code object in the file."""
    if bundle.is_bundle(data):
        yield from _bundled(data, 0, "", skipped)
        return
    elf = Elf(data)
    if elf.machine == EM_AMDGPU:
        yield elf, ""
        return
    # a host executable or library: its fat binary section holds offload bundles
    section = elf.section(".hip_fatbin") or elf.section(".hipFatBinSegment")
    lo, hi = (section.offset, section.offset + section.size) if section is not None else (0, len(data))
    found = bundle.find_bundles(data, lo, hi)
    if not found:
        raise CodeObjectError("an ELF file for another processor without HIP device code (no .hip_fatbin "
                              "section and no offload bundle)")
    for start in found:
        yield from _bundled(data, start, "", skipped)


def _bundled(data, start: int, where: str, skipped: list[Skipped]):
    for entry in bundle.entries(data, start, where):
        if entry.triple.startswith("host-"):
            continue
        if "amdgcn" not in entry.triple:
            skipped.append(Skipped(entry.where, "not an AMDGPU code object"))
            continue
        if not entry.data:
            continue
        if bundle.is_bundle(entry.data):
            yield from _bundled(entry.data, 0, entry.where + ": ", skipped)
            continue
        yield Elf(entry.data), entry.where


def selects(select: str, name: str) -> bool:
    """Whether the kernel ``name`` matches ``select``: a glob, or several separated by commas (a
    symbol's name has no comma)."""
    return any(fnmatch.fnmatchcase(name, glob) for glob in select.split(",") if glob)


def _read_elf(elf: Elf, source: str, where: str, select, kernels: list, skipped: list) -> None:
    what = where or "the code object"
    if elf.machine != EM_AMDGPU:
        skipped.append(Skipped(what, "not an AMDGPU code object"))
        return
    target = elf.machine_name
    if not target.startswith("gfx11"):
        skipped.append(Skipped(f"{what} ({target})", f"{target} is not RDNA3 (gfx11)"))
        return
    notes, owner_of = _metadata_notes(elf)
    symbols = elf.symbols(lambda t, b, shndx: shndx not in (SHN_UNDEF, SHN_ABS) and t in (STT_NOTYPE, STT_FUNC,
                                                                                           STT_OBJECT))
    sections = elf.sections
    relocatable = elf.type == ET_REL

    def file_offset(shndx: int, value: int) -> int:
        s = sections[shndx]
        return s.offset + (value if relocatable else value - s.addr)

    # code symbols by section, in address order: where each function ends when its size is 0
    funcs = [s for s in symbols if s.type == STT_FUNC and s.shndx < len(sections)]
    by_name = {s.name: s for s in funcs}
    starts: dict[int, list[int]] = {}
    for s in funcs:
        starts.setdefault(s.shndx, []).append(s.value)
    for values in starts.values():
        values.sort()
    # label candidates by section, in address order
    marks: dict[int, list] = {}
    for s in symbols:
        if s.type in (STT_NOTYPE, STT_FUNC) and s.name and not s.name.startswith("$"):
            marks.setdefault(s.shndx, []).append((s.value, s.name))
    for values in marks.values():
        values.sort(key=lambda mark: mark[0])  # several labels at one address keep the table's order
    mark_addrs = {shndx: [value for value, _ in values] for shndx, values in marks.items()}
    descriptors = [s for s in symbols if s.type == STT_OBJECT and s.name.endswith(".kd") and s.size == 64]
    for kd in descriptors:
        name = kd.name[:-3]
        if select is not None and not selects(select, name):
            continue
        raw = elf.bytes_at(file_offset(kd.shndx, kd.value), 64)
        func = by_name.get(name)
        if func is not None:
            shndx, start = func.shndx, func.value
        else:
            entry, = struct.unpack_from("<q", raw, 16)
            if relocatable or not entry:
                skipped.append(Skipped(f"{what}: kernel {name}", "no code symbol and no entry offset"))
                continue
            start = kd.value + entry
            section = elf.section_at(start)
            if section is None:
                skipped.append(Skipped(f"{what}: kernel {name}", "its code lies in no section"))
                continue
            shndx = section.index
        sec = sections[shndx]
        base = 0 if relocatable else sec.addr
        size = func.size if func is not None and func.size else 0
        if not size:
            values = starts.get(shndx, [])
            k = bisect.bisect_right(values, start)
            end = values[k] if k < len(values) else base + sec.size
            size = end - start
        size = min(size, base + sec.size - start)
        if size <= 0 or size > MAX_KERNEL_BYTES:
            skipped.append(Skipped(f"{what}: kernel {name}", f"code of {size} bytes"))
            continue
        code = elf.bytes_at(file_offset(shndx, start), size)
        labels: dict[int, list[str]] = {}
        here = marks.get(shndx, [])
        addrs = mark_addrs.get(shndx, [])
        for value, label in here[bisect.bisect_left(addrs, start):bisect.bisect_left(addrs, start + size)]:
            if label != name:
                labels.setdefault(value - start, []).append(label)
        note = owner_of.get(kd.name)
        kernels.append(KernelImage(source, name, target, code, start, raw, kd.value, labels,
                                   notes[note] if note is not None else None, elf.abiversion, where))


def _metadata_notes(elf: Elf) -> tuple[list[bytes], dict[str, int]]:
    """The metadata notes, and which note describes each kernel (by its ``.symbol``). A linked
    library has one note per kernel: the notes are not decoded here but in the process that checks
    the kernel (:func:`kernel_metadata`); the symbols are read straight from the MessagePack."""
    notes: list[bytes] = []
    owner_of: dict[str, int] = {}
    for owner, type_, desc in elf.notes():
        if owner != "AMDGPU" or type_ != NT_AMDGPU_METADATA:
            continue
        for symbol in _symbols_in(desc):
            owner_of.setdefault(symbol, len(notes))
        notes.append(desc)
    return notes, owner_of


_SYMBOL_KEY = b"\xa7.symbol"  # the key ".symbol" as a MessagePack fixstr


def _symbols_in(desc: bytes):
    k = desc.find(_SYMBOL_KEY)
    while k >= 0:
        try:
            value, _ = msgpack.read_at(desc, k + len(_SYMBOL_KEY))
        except msgpack.MsgpackError:
            value = None
        if isinstance(value, str):
            yield value
        k = desc.find(_SYMBOL_KEY, k + 1)


def kernel_metadata(note: bytes | None, symbol: str) -> tuple[dict | None, dict]:
    """(the kernel's entry of ``amdhsa.kernels``, the document's other keys) from its note."""
    if not note:
        return None, {}
    doc = msgpack.unpack(note)
    if not isinstance(doc, dict):
        return None, {}
    entry = None
    for k in doc.get("amdhsa.kernels") or []:
        if isinstance(k, dict) and (k.get(".symbol") == symbol or str(k.get(".name", "")) + ".kd" == symbol):
            entry = k
            break
    return entry, {key: value for key, value in doc.items() if key != "amdhsa.kernels"}
