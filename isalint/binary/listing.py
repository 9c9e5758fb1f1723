"""One kernel of a code object as a re-assemblable ``.s`` file: the listing isalint checks and
``isalint disasm`` writes.

The layout is the one a kernel engineer gets from ``llvm-objdump -d`` made re-assemblable: the
target and code object version, the kernel's symbol, its instructions (one per line, tab-indented)
under the labels of the symbol table, a label ``.L<offset>`` for every branch target the symbol
table does not name, the ``.amdhsa_kernel`` block of its descriptor and the ``.amdgpu_metadata``
document of its metadata note. Assembled with the LLVM assembler it gives the kernel's code and
descriptor byte for byte. The listing of a kernel is always the same text, so findings' line
numbers are stable.
"""
from __future__ import annotations

import re

from .codeobject import KernelImage
from .decoder import LONGER, Decoder, UnknownEncoding
from .descriptor import Descriptor
from .metadata import to_yaml


class ListingError(ValueError):
    """A kernel whose machine code the decoder cannot print (``offset``: byte offset in the code)."""

    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.offset = offset


_DECODERS: dict[bool, Decoder] = {}


def decoder(wave64: bool) -> Decoder:
    d = _DECODERS.get(wave64)
    if d is None:
        d = _DECODERS[wave64] = Decoder(wave64=wave64)
    return d


def decode_kernel(kernel: KernelImage, wave64: bool | None = None,
                  fallback: bool = True) -> Decoded:
    """(byte offset, size, text, branch target) of each instruction of the kernel, up to the zero
    fill after its last instruction. An instruction isalint does not decode is taken from
    llvm-objdump (``fallback``) when one is installed, else :class:`ListingError` names it."""
    code = kernel.code
    if wave64 is None:
        wave64 = Descriptor(kernel.descriptor).wave64
    dec = decoder(wave64)
    decode = dec.decode
    # most instructions are one or two dwords seen before (Decoder.decode's first lookups)
    known4, known8 = dec.known_dwords, dec.known_qwords
    end = len(code.rstrip(b"\0"))
    end += -end % 4
    out = Decoded()
    append = out.append
    k = 0
    theirs = None
    while k < end:
        entry = known4.get(code[k:k + 4])
        if entry is not None:
            text, rel = entry
            append((k, 4, text, None if rel is None else k + rel))
            k += 4
            continue
        entry = known8.get(code[k:k + 8])
        if entry is not None and entry is not LONGER:
            text, rel = entry
            append((k, 8, text, None if rel is None else k + rel))
            k += 8
            continue
        try:
            size, text, target = decode(code, k)
        except UnknownEncoding as exc:
            if theirs is None:
                from . import objdump

                theirs = objdump.disassemble(code, kernel.target, wave64) if fallback else {}
            got = theirs.get(k)
            if got is None or got[1].startswith(("<unknown>", ".long", "v_illegal")):
                where = f"{kernel.name}: offset 0x{k:x} (address 0x{kernel.code_addr + k:x})"
                hint = "" if theirs else "; with llvm-objdump installed (apt-get install llvm-19) isalint reads it there"
                raise ListingError(f"{where}: {exc}{hint}", k) from None
            size, text, target = got[0], got[1], None
            out.borrowed.append((k, text.split()[0]))
        out.append((k, size, text, target))
        k += size
    return out


class Decoded(list):
    """A kernel's instructions; ``borrowed``: (offset, opcode) of those llvm-objdump printed."""

    def __init__(self):
        super().__init__()
        self.borrowed: list[tuple[int, str]] = []


def _label_names(kernel: KernelImage, instrs) -> dict[int, list[str]]:
    """Offset -> label names: the symbol table's, and ``.L<offset>`` for the branch targets it does
    not name."""
    labels = {k: list(v) for k, v in kernel.labels.items()}
    for _off, _size, _text, target in instrs:
        if target is not None and target not in labels:
            labels[target] = [f".L{target:x}" if target >= 0 else f".Lm{-target:x}"]
    return labels


_SGPR = re.compile(r"\bs(?:(\d+)|\[\d+:(\d+)\])")


def _highest_sgpr(instrs) -> int:
    top = -1
    for _o, _s, text, _t in instrs:
        if "s" in text:
            for one, last in _SGPR.findall(text.split(" ", 1)[-1]):
                top = max(top, int(one or last))
    return top


def _symbol(name: str) -> str:
    """A symbol name as the assembler reads it (quoted when it is not a plain identifier)."""
    if name and all(c.isalnum() or c in "_.$" for c in name) and not name[0].isdigit():
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(kernel: KernelImage, instrs=None) -> str:
    """The kernel's listing text."""
    desc = Descriptor(kernel.descriptor)
    if instrs is None:
        instrs = decode_kernel(kernel, desc.wave64)
    entry, header, version = kernel.metadata()
    labels = _label_names(kernel, instrs)
    name = _symbol(kernel.name)
    target = header.get("amdhsa.target") or f"amdgcn-amd-amdhsa--{kernel.target}"
    lines = [f"; {kernel.source}{': ' + kernel.where if kernel.where else ''}: kernel {kernel.name}",
             f"; code at 0x{kernel.code_addr:x}, descriptor at 0x{kernel.descriptor_addr:x}",
             f'\t.amdgcn_target "{target}"',
             f"\t.amdhsa_code_object_version {version}",
             "\t.text",
             f"\t.globl {name}",
             "\t.p2align 8",
             f"\t.type {name},@function",
             f"{name}:"]
    append = lines.append
    end = 0
    for offset, size, text, target in instrs:
        here = labels.get(offset)
        if here is not None:
            for label in here:
                append(f"{_symbol(label)}:")
        if target is not None:
            text = text.replace("{}", _symbol(min(labels[target])))  # of several, the one llvm-objdump names
        append("\t" + text)
        end = offset + size
    for offset in sorted(k for k in labels if k >= end or k < 0):
        if offset == end:  # a label just past the last instruction (the end of the code)
            for label in labels[offset]:
                append(f"{_symbol(label)}:")
    end_label = _symbol(".Lfunc_end_" + kernel.name)
    lines += [f"{end_label}:", f"\t.size {name}, {end_label}-{name}", ""]
    # GFX10+ descriptors hold no SGPR count: the metadata's (which counts VCC too), else the code's
    uses_vcc = any("vcc" in text for _o, _s, text, _t in instrs)
    sgprs = entry.get(".sgpr_count") if entry is not None else None
    if isinstance(sgprs, int) and sgprs > 0:
        sgprs = max(1, sgprs - (2 if uses_vcc else 0))
    else:
        sgprs = _highest_sgpr(instrs) + 1
    vgprs = entry.get(".vgpr_count") if entry is not None else None
    lines += desc.directives(name, sgprs, uses_vcc, vgprs if isinstance(vgprs, int) else None)
    if entry is not None:
        doc = {"amdhsa.kernels": [entry], **header}
        lines += ["", "\t.amdgpu_metadata", to_yaml(doc), "\t.end_amdgpu_metadata"]
    return "\n".join(lines) + "\n"
