"""Register liveness (isalint.model.liveness) against a naive set-based reference and small cases."""
from __future__ import annotations

import time

import pytest
from conftest import all_real_kernels

from isalint.analysis import Analysis
from isalint.model.liveness import free_vgprs, liveness
from isalint.parse.source import parse_text

HEAD = '\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"\nkernel:\n'


def program(body: str):
    return Analysis.from_source(parse_text(HEAD + body, "t.s")).program


def reference_live_in(program) -> list[set[str]]:
    """Per-instruction live-in by iterating the textbook equations on sets until nothing changes."""
    cfg = program.cfg()
    instrs = program.instrs
    n = len(instrs)
    live_in = [set() for _ in range(n)]
    changed = True
    while changed:
        changed = False
        for i in range(n - 1, -1, -1):
            blk = cfg.blocks[cfg.block_of[i]]
            succ = [i + 1] if i + 1 < blk.last else [cfg.blocks[s].first for s in blk.succs]
            out = set().union(*(live_in[j] for j in succ if j < n)) if succ else set()
            ins = instrs[i]
            new = set(ins.uses) | (out - set(ins.defs))
            if new != live_in[i]:
                live_in[i] = new
                changed = True
    return live_in


@pytest.mark.parametrize("path", all_real_kernels(), ids=lambda p: p.name)
def test_matches_reference_on_real_kernels(path):
    p = Analysis.from_path(str(path)).program
    if any(ins.opaque for ins in p.instrs) or any(
            op.half for ins in p.instrs for s in ins.stmts for op in s.operands) or any(
            "_d16" in ins.opcode or "16" in ins.opcode.split("_")[-1] for ins in p.instrs):
        pytest.skip("partial-register writes: the set reference treats them as full kills")
    lv = liveness(p)
    ref = reference_live_in(p)
    for i in range(len(p.instrs)):
        assert lv.live_in(i) == frozenset(ref[i]), f"line {p.instrs[i].lineno}"


def test_kernel5_facts_and_speed(kernel5):
    a = Analysis.from_path(str(kernel5))
    p = a.program
    t0 = time.perf_counter()
    lv = liveness(p)
    assert time.perf_counter() - t0 < 0.5
    assert liveness(p) is lv  # cached
    loop = a.cfg.find_loop(".LBB0_9")
    header = a.loop_indices(loop)[0]
    live = lv.live_in(header)
    # the 128 accumulators, and the 16 global loads that %bb.11 stores to LDS, live through the loop
    for n in list(range(2, 134)) + list(range(167, 183)):
        assert f"v{n}" in live, n
    # the ds_load destinations are written at the top of each iteration: dead at the header
    assert not any(f"v{n}" in live for n in range(184, 208))
    # the kernel's entry reads only its inputs: kernarg pointer, workgroup ids, work-item id
    # (and the %bb.7 load destinations, read in %bb.11 on a path the compiler left undefined)
    entry = lv.live_in(0)
    assert {"s0", "s1", "s14", "s15", "v0"} <= entry
    assert {r for r in entry if r.startswith("v")} == {"v0"} | {f"v{n}" for n in range(167, 183)}
    # every VGPR the kernel allocates is busy somewhere in the inner loop: none free there
    assert free_vgprs(p, None, a.loop_indices(loop)) == []
    assert lv.max_live_vgprs(p.kernels[0])[0] == 208


def test_loop_carried_and_dead_values():
    p = program("\tv_mov_b32_e32 v1, 0\n\tv_mov_b32_e32 v2, 1.0\n\tv_mov_b32_e32 v9, 2.0\n.LBB0_1:\n"
                "\tv_add_f32_e32 v1, v1, v2\n\ts_cbranch_scc1 .LBB0_1\n\tglobal_store_b32 v[4:5], v1, off\n"
                "\ts_endpgm\n")
    lv = liveness(p)
    assert lv.is_live_in(3, "v1") and lv.is_live_in(3, "v2")  # loop-carried
    assert not lv.is_live_out(2, "v9")  # written, never read
    assert lv.live_out(6) == lv.live_in(6) == frozenset()  # s_endpgm
    assert lv.live_in(5) == frozenset({"v1", "v4", "v5", "exec_lo"})
    assert {"v1", "v4", "v5", "exec_lo"} <= lv.block_live_out(p.cfg().block_of[3])


def test_partial_writes_do_not_kill():
    p = program("\tv_mov_b32_e32 v3, 0\n\tv_mov_b16_e32 v3.l, 1\n\tv_add_f32_e32 v6, v3, v3\n"
                "\tv_mov_b32_e32 v7, 0\n\tglobal_load_d16_b16 v7, v[4:5], off\n\ts_waitcnt vmcnt(0)\n"
                "\tv_add_f32_e32 v8, v7, v7\n\ts_endpgm\n")
    lv = liveness(p)
    # the high half of v3 written by the first mov is still read through the 16-bit write
    assert lv.is_live_out(0, "v3")
    assert lv.is_live_out(3, "v7")  # a d16 load keeps the other half


def test_free_vgprs_excludes_live_touched_and_in_flight():
    p = program("\tglobal_load_b32 v10, v[4:5], off\n"  # v10 never read, but the load lands in it later
                "\tv_mov_b32_e32 v1, 0\n\tv_mov_b32_e32 v2, 1.0\n"
                "\tv_add_f32_e32 v3, v1, v2\n"  # region: index 3
                "\tv_mov_b32_e32 v6, v3\n\tglobal_store_b32 v[4:5], v6, off\n\ts_endpgm\n")
    free = free_vgprs(p, None, [3], limit=12)
    # v1, v2 read; v3 written; v4, v5 live (store address); v10 the in-flight load's destination
    assert free == [0, 6, 7, 8, 9, 11]
    assert 10 in free_vgprs(p, None, [3], limit=12, exclude_pending=False)
