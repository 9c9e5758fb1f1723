"""How big the unrolled code gets, against the instruction cache it must live in.

RDNA3 instruction sizes (RDNA3 ISA guide, chapter 15 "Microcode formats"): SOP1, SOP2,
SOPK, SOPP, SOPC, VOP1, VOP2 and VOPC are one dword; VOP3, VOP3P, VOPD, DS, SMEM and the
vector memory formats two; a 32-bit literal constant adds a dword. The instruction cache
is 32 KiB, shared by the two CUs of a WGP (AMD, "RDNA 3 Instruction Set Architecture",
1.2 and the RDNA whitepaper); a loop unrolled past half of it competes with the rest of
the kernel and with the other CU's waves, which is what unrolling was meant to avoid.
"""
from __future__ import annotations

ONE_DWORD = frozenset({"SOP1", "SOP2", "SOPK", "SOPP", "SOPC", "VOP1", "VOP2", "VOPC"})
TAKES_LITERAL = frozenset({"SOP1", "SOP2", "SOPC", "VOP1", "VOP2", "VOPC", "VOP3", "VOP3P", "VOP3SD", "VOPD"})
ICACHE_BYTES = 32 * 1024
BUDGET_BYTES = ICACHE_BYTES // 2


def _inline(op) -> bool:
    """An integer the instruction encodes without a literal (-16..64) or a float constant."""
    if op.kind == "float":
        return True
    return op.kind == "int" and -16 <= int(op.value) <= 64


def instruction_bytes(ins) -> int:
    info = ins.infos[0] if ins.infos else None
    enc = info.encoding if info is not None else "VOP3"
    size = 4 if enc in ONE_DWORD else 8
    if enc in TAKES_LITERAL and any(op.kind in ("int", "float") and not _inline(op)
                                    for stmt in ins.stmts for op in stmt.operands):
        size += 4
    return size


def code_bytes(instrs) -> int:
    return sum(instruction_bytes(ins) for ins in instrs)
