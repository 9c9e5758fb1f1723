"""The fallback for machine code isalint's decoder does not print: LLVM's disassembler, found on the
machine (``ISALINT_OBJDUMP``, ROCm's ``$ROCM_PATH/llvm/bin``, ``llvm-objdump-N`` or ``llvm-objdump`` on
``PATH``, the first that knows the amdgcn target; ``ISALINT_OBJDUMP=none``: none).

The kernel's code is wrapped in a minimal relocatable ELF (one ``.text`` section, the processor in
``e_flags``) so that ``llvm-objdump -d`` reads it without the rest of the file it came from.
"""
from __future__ import annotations

import glob
import os
import re
import shutil
import struct
import subprocess
import tempfile

from .elf import EM_AMDGPU, MACHINES

ENV = "ISALINT_OBJDUMP"
_FOUND: list = []
_LINE = re.compile(r"^\t(.*?)\s*//\s*([0-9A-Fa-f]+):\s*([0-9A-Fa-f ]+)$")


def find() -> str | None:
    """The path of an llvm-objdump that disassembles gfx11, or None."""
    if _FOUND:
        return _FOUND[0]
    if os.environ.get(ENV) == "none":  # behave as if none were installed
        return None
    candidates = []
    if os.environ.get(ENV):
        candidates.append(os.environ[ENV])
    roots = [os.environ.get("ROCM_PATH") or "/opt/rocm"] + sorted(glob.glob("/opt/rocm-*"), reverse=True)
    candidates += [os.path.join(r, "llvm", "bin", "llvm-objdump") for r in roots]
    candidates += [f"llvm-objdump-{v}" for v in range(22, 15, -1)] + ["llvm-objdump"]
    found = None
    for c in candidates:
        path = shutil.which(c) if os.sep not in c else (c if os.access(c, os.X_OK) else None)
        if path and _knows_amdgcn(path):
            found = path
            break
    _FOUND.append(found)
    return found


def _knows_amdgcn(path: str) -> bool:
    try:
        p = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "amdgcn" in p.stdout


def elf_of(code: bytes, target: str) -> bytes:
    """A relocatable AMDGPU ELF whose ``.text`` is ``code`` (the processor ``target`` in e_flags)."""
    mach = next((m for m, name in MACHINES.items() if name == target), 0x41)
    shstrtab = b"\0.text\0.shstrtab\0"
    text_off = 64
    str_off = text_off + len(code)
    sh_off = (str_off + len(shstrtab) + 7) & ~7
    ident = b"\x7fELF" + bytes([2, 1, 1, 64, 2]) + bytes(7)
    header = ident + struct.pack("<HHIQQQIHHHHHH", 1, EM_AMDGPU, 1, 0, 0, sh_off, mach, 64, 0, 0, 64, 3, 2)
    sections = bytes(64)
    sections += struct.pack("<IIQQQQIIQQ", 1, 1, 6, 0, text_off, len(code), 0, 0, 256, 0)  # .text: AX
    sections += struct.pack("<IIQQQQIIQQ", 7, 3, 0, 0, str_off, len(shstrtab), 0, 0, 1, 0)
    body = header + code + shstrtab
    return body + bytes(sh_off - len(body)) + sections


def disassemble(code: bytes, target: str, wave64: bool, tool: str | None = None) -> dict[int, tuple[int, str]]:
    """Byte offset -> (size, text) of the instructions llvm-objdump prints for ``code``; empty when
    there is no llvm-objdump."""
    tool = tool or find()
    if tool is None:
        return {}
    fd, path = tempfile.mkstemp(suffix=".o", prefix="isalint-kernel-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(elf_of(code, target))
        args = [tool, "-d", f"--mcpu={target}"] + (["--mattr=+wavefrontsize64"] if wave64 else []) + [path]
        try:
            p = subprocess.run(args, capture_output=True, text=True, errors="replace", timeout=600)
        except (OSError, subprocess.TimeoutExpired):
            return {}
    finally:
        os.unlink(path)
    out = {}
    for line in p.stdout.splitlines():
        m = _LINE.match(line)
        if m:
            words = m.group(3).split()
            out[int(m.group(2), 16)] = (4 * len(words), " ".join(m.group(1).split()))
    return out
