"""ELF64 little-endian reading: sections, symbols and notes of an AMDGPU code object.

Only what reading a code object needs, with :mod:`struct` over the file's bytes (a ``bytes`` or a
``mmap``): nothing is copied but the pieces asked for. Layouts are the System V ABI's (ELF-64 Object
File Format, version 1.5): the file header at 0, section headers at ``e_shoff``, 24-byte symbols,
notes as (namesz, descsz, type, name, desc) padded to 4 bytes.
"""
from __future__ import annotations

import struct

ELF_MAGIC = b"\x7fELF"
EM_AMDGPU = 224
EM_X86_64 = 62
SHT_SYMTAB, SHT_NOTE, SHT_NOBITS, SHT_DYNSYM = 2, 7, 8, 11
PT_NOTE = 4
STT_NOTYPE, STT_OBJECT, STT_FUNC, STT_SECTION = 0, 1, 2, 3
SHN_UNDEF, SHN_ABS = 0, 0xFFF1
# e_flags of an AMDGPU code object: the processor in the low byte (LLVM AMDGPUUsage, "ELF Header",
# EF_AMDGPU_MACH) and, for code object v4+, the xnack/sramecc settings in bits 8-11.
EF_AMDGPU_MACH = 0xFF
MACHINES = {
    0x020: "gfx600", 0x021: "gfx601", 0x022: "gfx700", 0x023: "gfx701", 0x024: "gfx702", 0x025: "gfx703",
    0x026: "gfx704", 0x028: "gfx801", 0x029: "gfx802", 0x02A: "gfx803", 0x02B: "gfx810", 0x02C: "gfx900",
    0x02D: "gfx902", 0x02E: "gfx904", 0x02F: "gfx906", 0x030: "gfx908", 0x031: "gfx909", 0x032: "gfx90c",
    0x033: "gfx1010", 0x034: "gfx1011", 0x035: "gfx1012", 0x036: "gfx1030", 0x037: "gfx1031",
    0x038: "gfx1032", 0x039: "gfx1033", 0x03A: "gfx602", 0x03B: "gfx705", 0x03C: "gfx805", 0x03D: "gfx1035",
    0x03E: "gfx1034", 0x03F: "gfx90a", 0x040: "gfx940", 0x041: "gfx1100", 0x042: "gfx1013", 0x043: "gfx1150",
    0x044: "gfx1103", 0x045: "gfx1036", 0x046: "gfx1101", 0x047: "gfx1102", 0x048: "gfx1200",
    0x04A: "gfx1151", 0x04B: "gfx941", 0x04C: "gfx942", 0x04E: "gfx1201", 0x051: "gfx9-generic",
    0x052: "gfx10-1-generic", 0x053: "gfx10-3-generic", 0x054: "gfx11-generic", 0x055: "gfx1152",
    0x058: "gfx1153", 0x059: "gfx12-generic", 0x04F: "gfx950",
}


class ElfError(ValueError):
    """Bytes that are not the ELF file they claim to be (truncated, offsets out of range)."""


class Section:
    __slots__ = ("index", "name", "type", "flags", "addr", "offset", "size", "link", "entsize")

    def __init__(self, index, name, type_, flags, addr, offset, size, link, entsize):
        self.index, self.name, self.type, self.flags = index, name, type_, flags
        self.addr, self.offset, self.size, self.link, self.entsize = addr, offset, size, link, entsize

    def __repr__(self) -> str:
        return f"Section({self.name!r}, addr=0x{self.addr:x}, size=0x{self.size:x})"


class Symbol:
    __slots__ = ("name", "value", "size", "type", "bind", "shndx")

    def __init__(self, name, value, size, type_, bind, shndx):
        self.name, self.value, self.size, self.type, self.bind, self.shndx = name, value, size, type_, bind, shndx

    def __repr__(self) -> str:
        return f"Symbol({self.name!r}, 0x{self.value:x}, size={self.size}, type={self.type})"


class Elf:
    """An ELF64 little-endian file held in ``data`` (from ``start`` to ``start + size``: an ELF may sit
    inside a larger file, as the code objects of an offload bundle do)."""

    def __init__(self, data, start: int = 0, size: int | None = None):
        self.data = data
        self.start = start
        self.size = (len(data) - start) if size is None else size
        if self.size < 64 or data[start:start + 4] != ELF_MAGIC:
            raise ElfError("not an ELF file")
        if data[start + 4] != 2 or data[start + 5] != 1:
            raise ElfError("not a 64-bit little-endian ELF file")
        (self.type, self.machine, _version, self.entry, self.phoff, self.shoff, self.flags, _ehsize,
         self.phentsize, self.phnum, self.shentsize, self.shnum, self.shstrndx) = struct.unpack_from(
            "<HHIQQQIHHHHHH", data, start + 16)
        self.osabi, self.abiversion = data[start + 7], data[start + 8]
        self._sections: list[Section] | None = None

    # -- raw access ------------------------------------------------------------------------------
    def bytes_at(self, offset: int, size: int) -> bytes:
        """``size`` bytes at file offset ``offset`` of this ELF."""
        if offset < 0 or size < 0 or offset + size > self.size:
            raise ElfError(f"data at offset 0x{offset:x} (+{size}) lies outside the file ({self.size} bytes)")
        return bytes(self.data[self.start + offset:self.start + offset + size])

    @property
    def machine_name(self) -> str:
        """The processor of an AMDGPU code object (``gfx1100``), from ``e_flags``."""
        mach = self.flags & EF_AMDGPU_MACH
        return MACHINES.get(mach, f"AMDGPU processor 0x{mach:03x}")

    # -- sections --------------------------------------------------------------------------------
    @property
    def sections(self) -> list[Section]:
        if self._sections is None:
            self._sections = self._read_sections()
        return self._sections

    def _read_sections(self) -> list[Section]:
        if not self.shoff or not self.shnum:
            return []
        if self.shentsize < 64 or self.shoff + self.shnum * self.shentsize > self.size:
            raise ElfError("section headers lie outside the file")
        base = self.start + self.shoff
        raw = [struct.unpack_from("<IIQQQQIIQQ", self.data, base + i * self.shentsize) for i in range(self.shnum)]
        names = b""
        if 0 < self.shstrndx < len(raw):
            h = raw[self.shstrndx]
            names = self.bytes_at(h[4], h[5])
        out = []
        for i, (name, type_, flags, addr, offset, size, link, _info, _align, entsize) in enumerate(raw):
            end = names.find(b"\0", name)
            text = names[name:end if end >= 0 else len(names)].decode("utf-8", "replace")
            out.append(Section(i, text, type_, flags, addr, offset, size, link, entsize))
        return out

    def section(self, name: str) -> Section | None:
        return next((s for s in self.sections if s.name == name), None)

    def section_data(self, section: Section) -> bytes:
        if section.type == SHT_NOBITS:
            return b""
        return self.bytes_at(section.offset, section.size)

    def section_at(self, addr: int) -> Section | None:
        """The allocated section holding virtual address ``addr``."""
        for s in self.sections:
            if s.addr and s.type != SHT_NOBITS and s.addr <= addr < s.addr + s.size:
                return s
        return None

    def read_addr(self, addr: int, size: int) -> bytes:
        """``size`` bytes at virtual address ``addr`` (a section's contents)."""
        s = self.section_at(addr)
        if s is None or addr + size > s.addr + s.size:
            raise ElfError(f"address 0x{addr:x} (+{size}) is in no section of the file")
        return self.bytes_at(s.offset + addr - s.addr, size)

    # -- symbols ---------------------------------------------------------------------------------
    def symbols(self, want=None) -> list[Symbol]:
        """The symbols of ``.symtab`` (else ``.dynsym``). ``want(type, bind, shndx)`` chooses which to
        keep before their names are read (a library has hundreds of thousands)."""
        table = next((s for s in self.sections if s.type == SHT_SYMTAB), None)
        if table is None:
            table = next((s for s in self.sections if s.type == SHT_DYNSYM), None)
        if table is None or not table.size:
            return []
        if table.link >= len(self.sections):
            raise ElfError("the symbol table names no string table")
        strtab = self.section_data(self.sections[table.link])
        raw = self.bytes_at(table.offset, table.size - table.size % 24)
        out = []
        find = strtab.find
        for name, info, _other, shndx, value, size in struct.iter_unpack("<IBBHQQ", raw):
            type_, bind = info & 0xF, info >> 4
            if want is not None and not want(type_, bind, shndx):
                continue
            end = find(b"\0", name)
            text = strtab[name:end if end >= 0 else len(strtab)].decode("utf-8", "replace")
            out.append(Symbol(text, value, size, type_, bind, shndx))
        return out

    # -- notes -----------------------------------------------------------------------------------
    def notes(self):
        """(owner name, type, descriptor bytes) of every note (SHT_NOTE sections, else PT_NOTE segments)."""
        spans = [(s.offset, s.size) for s in self.sections if s.type == SHT_NOTE]
        if not spans and self.phoff and self.phnum:
            for i in range(self.phnum):
                p_type, _flags, offset, _va, _pa, filesz = struct.unpack_from(
                    "<IIQQQQ", self.data, self.start + self.phoff + i * self.phentsize)
                if p_type == PT_NOTE:
                    spans.append((offset, filesz))
        for offset, size in spans:
            blob = self.bytes_at(offset, size)
            k = 0
            while k + 12 <= len(blob):
                namesz, descsz, type_ = struct.unpack_from("<III", blob, k)
                k += 12
                name = blob[k:k + namesz].rstrip(b"\0").decode("ascii", "replace")
                k += (namesz + 3) & ~3
                if k + descsz > len(blob):
                    raise ElfError("a note runs past the end of its section")
                desc = blob[k:k + descsz]
                k += (descsz + 3) & ~3
                yield name, type_, desc
