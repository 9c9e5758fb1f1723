"""Instruction sizes and immediate fields: how much code an instruction takes, what an offset can hold.

Sources: RDNA3 ISA guide, chapter 15 "Microcode formats" (SOP1, SOP2, SOPK, SOPP, SOPC, VOP1, VOP2
and VOPC are one dword; VOP3, VOP3P, VOPD, DS, SMEM and the vector-memory formats two; a 32-bit
literal constant follows as one more dword; integers -16..64 and a few floats are inline constants),
and chapter 11 "Data Share Operations" (a DS instruction addresses ``ADDR + OFFSET``: a 16-bit
unsigned ``offset``, or for the ``2addr`` forms two 8-bit offsets counted in elements of 4 or 8
bytes, times 64 for ``stride64``). The instruction cache is 32 KiB, shared by the two CUs of a
workgroup processor (RDNA3 ISA guide, 1.2 "Hardware overview"; AMD's RDNA whitepaper).
"""
from __future__ import annotations

from ..isa.constants import INLINE_INTS

ONE_DWORD = frozenset({"SOP1", "SOP2", "SOPK", "SOPP", "SOPC", "VOP1", "VOP2", "VOPC"})
TAKES_LITERAL = frozenset({"SOP1", "SOP2", "SOPC", "VOP1", "VOP2", "VOPC", "VOP3", "VOP3P", "VOP3SD", "VOPD"})
ICACHE_BYTES = 32 * 1024

DS_OFFSET_MAX = 0xFFFF  # ``offset:`` of the single-address DS instructions
DS_OFFSET2_MAX = 0xFF  # each of ``offset0:``/``offset1:`` of the 2addr forms
_DS_ELEMENT = {"b32": 4, "b64": 8}


def inline_integer(value: int) -> bool:
    """An integer an ALU instruction encodes without a literal."""
    return value in INLINE_INTS


def instruction_bytes(encoding: str, literal: bool) -> int:
    """Bytes of one instruction of ``encoding``, with a 32-bit literal or not."""
    size = 4 if encoding in ONE_DWORD else 8
    return size + 4 if literal and encoding in TAKES_LITERAL else size


def ds_offset2_scale(mnemonic: str) -> int | None:
    """Bytes per unit of ``offset0``/``offset1`` of a 2addr DS instruction (None for other forms)."""
    parts = mnemonic.split("_")
    if "2addr" not in parts:
        return None
    size = _DS_ELEMENT.get(parts[-1])
    if size is None:
        return None
    return size * (64 if "stride64" in parts else 1)
