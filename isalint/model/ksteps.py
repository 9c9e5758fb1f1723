"""How many k-steps (outer products of a GEMM's inner loop) a stretch of code performs.

A GEMM's register tile is updated once per k-step: every accumulator gets one FMA. A
loop iteration (or an unrolled stretch) holding N FMAs into A distinct accumulators
therefore performs N / A k-steps; per-k-step figures make a loop comparable with its
unrolled form, whose one "iteration" is a whole pass of the outer loop.
"""
from __future__ import annotations


def fma_destinations(instrs) -> list[str]:
    """The accumulator of every FMA operation (each half of a VOPD counts), in order."""
    out: list[str] = []
    for ins in instrs:
        if ins.klass not in ("valu", "vopd"):
            continue
        for stmt in ins.stmts:
            if "fma" in stmt.mnemonic and stmt.operands and stmt.operands[0].kind == "vgpr":
                out.append(stmt.operands[0].text)
    return out


def k_steps(instrs) -> int | None:
    """The k-steps of ``instrs``: FMAs per distinct accumulator, None when there is no FMA or the
    accumulators are not all updated equally often (not one register tile)."""
    dests = fma_destinations(instrs)
    if not dests:
        return None
    counts: dict[str, int] = {}
    for d in dests:
        counts[d] = counts.get(d, 0) + 1
    values = set(counts.values())
    if len(values) != 1:
        return None
    return values.pop()
