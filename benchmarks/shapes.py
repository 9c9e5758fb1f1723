"""Generators of the worst-case inputs of the reliability bounds (each returns assembly text).

Used by ``benchmarks/worst_cases.py`` (full sizes) and by the regression tests (small sizes).
"""
from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HEAD = "\t.text\n\t.amdgcn_target \"amdgcn-amd-amdhsa--gfx1100\"\n\t.globl k\n\t.type k,@function\nk:\n"


def back_edges(n: int) -> str:
    """One loop header with ``n`` back edges: n x (v_add_f32; s_cbranch_scc1 .LH)."""
    body = "\tv_add_f32_e32 v0, v0, v1\n\ts_cbranch_scc1 .LH\n" * n
    return HEAD + "\ts_mov_b32 s0, 0\n.LH:\n" + body + "\ts_endpgm\n"


def branch_blocks(n: int) -> str:
    """``n`` blocks, each ending in a conditional branch over the next one."""
    out = [HEAD]
    for k in range(n):
        out.append(f"\ts_cmp_eq_u32 s0, {k & 63}\n\ts_cbranch_scc1 .LB{k}\n\tv_add_f32_e32 v0, v0, v1\n.LB{k}:\n")
    out.append("\ts_endpgm\n")
    return "".join(out)


def nested_loops(n: int) -> str:
    """``n`` loops nested in one another."""
    out = [HEAD]
    out.extend(f".LN{k}:\n\tv_add_f32_e32 v0, v0, v1\n" for k in range(n))
    out.extend(f"\ts_cbranch_scc1 .LN{k}\n" for k in reversed(range(n)))
    out.append("\ts_endpgm\n")
    return "".join(out)


def fma_block(n: int) -> str:
    """One loop whose body is ``n`` independent-looking v_fmac_f32 (the DUAL002 pairing search)."""
    out = [HEAD, ".LOOP:\n"]
    for k in range(n):
        d = 8 + (k % 240)
        out.append(f"\tv_fmac_f32_e32 v{d}, v{k % 4}, v{4 + (k % 4)}\n")
    out.append("\ts_cbranch_scc1 .LOOP\n\ts_endpgm\n")
    return "".join(out)


def straight_lines(n: int) -> str:
    """``n`` lines of straight-line VALU code."""
    return HEAD + "".join(f"\tv_add_f32_e32 v{k % 200}, v{(k + 1) % 200}, v{(k + 2) % 200}\n" for k in range(n)) \
        + "\ts_endpgm\n"


def concatenated_kernels(total_bytes: int, sources: list[Path] | None = None) -> str:
    """Real kernel files (the fixtures, and kernel5 when present) concatenated up to ``total_bytes``."""
    if sources is None:
        sources = sorted((REPO / "fixtures" / "kernels").glob("*.s"))
        kernel5 = REPO.parent / "shared" / "corpus" / "kernel5.s"
        if kernel5.is_file():
            sources.append(kernel5)
    texts = [p.read_text(encoding="utf-8", errors="surrogateescape") for p in sources]
    out: list[str] = []
    size = k = 0
    while size < total_bytes:
        t = texts[k % len(texts)]
        out.append(t)
        size += len(t)
        k += 1
    return "".join(out)


SHAPES = {
    "back_edges": back_edges,
    "branch_blocks": branch_blocks,
    "nested_loops": nested_loops,
    "fma_block": fma_block,
    "straight_lines": straight_lines,
}
