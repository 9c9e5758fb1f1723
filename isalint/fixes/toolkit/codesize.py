"""How big the unrolled code gets, against the instruction cache it must live in
(:mod:`isalint.hw.encoding`): copies past half of the cache compete with the rest of the kernel and
with the other CU's waves, which is what unrolling was meant to avoid."""
from __future__ import annotations

from ...hw.encoding import ICACHE_BYTES, inline_integer, instruction_bytes

BUDGET_BYTES = ICACHE_BYTES // 2


def _literal(ins) -> bool:
    return any((op.kind == "int" and not inline_integer(int(op.value))) for stmt in ins.stmts for op in stmt.operands)


def code_bytes(instrs) -> int:
    total = 0
    for ins in instrs:
        info = ins.infos[0] if ins.infos else None
        total += instruction_bytes(info.encoding if info is not None else "VOP3", _literal(ins))
    return total
