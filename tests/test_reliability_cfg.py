"""Control flow on pathological shapes: dominators and loops in near-linear time, a cap with a
LIMIT001 finding where the loop nest itself is too large, and the same loops as the textbook
algorithm on every generated CFG."""
from __future__ import annotations

import gc
import importlib.util
import time

import pytest
from conftest import REPO, all_real_kernels, examples
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from isalint import rules as registry
from isalint.analysis import Analysis
from isalint.lint.engine import check_analysis
from isalint.model import limits
from isalint.model.program import build_program
from isalint.parse import parse_text, read_file


def _shapes():
    spec = importlib.util.spec_from_file_location("shapes", REPO / "benchmarks" / "shapes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


shapes = _shapes()


def _reference_loops(blocks) -> dict[int, set[int]]:
    """header -> loop blocks, from dominator sets computed by the plain iterative algorithm."""
    n = len(blocks)
    entries = {b.id for b in blocks if not b.preds} | {0}
    dom = [({b} if b in entries else set(range(n))) for b in range(n)]
    changed = True
    while changed:
        changed = False
        for b in range(n):
            if b in entries:
                continue
            new = set.intersection(*(dom[p] for p in blocks[b].preds)) | {b}
            if new != dom[b]:
                dom[b], changed = new, True
    loops: dict[int, set[int]] = {}
    for blk in blocks:
        for s in blk.succs:
            if s in dom[blk.id]:
                body, stack = {s, blk.id}, [blk.id]
                while stack:
                    x = stack.pop()
                    if x != s:
                        for p in blocks[x].preds:
                            if p not in body:
                                body.add(p)
                                stack.append(p)
                loops.setdefault(s, set()).update(body)
    return loops


def _reachable_from_entries(blocks) -> bool:
    seen = set()
    stack = [b.id for b in blocks if not b.preds or b.id == 0]
    while stack:
        b = stack.pop()
        if b not in seen:
            seen.add(b)
            stack.extend(blocks[b].succs)
    return len(seen) == len(blocks)


@st.composite
def _programs(draw):
    n = draw(st.integers(1, 14))
    out = ["\t.text\nk:\n"]
    for k in range(n):
        out.append(f".L{k}:\n\tv_add_f32_e32 v0, v0, v1\n")
        kind = draw(st.sampled_from(["fall", "fall", "cond", "cond", "jump", "end"]))
        target = draw(st.integers(0, n - 1))
        if kind == "cond":
            out.append(f"\ts_cbranch_scc1 .L{target}\n")
        elif kind == "jump":
            out.append(f"\ts_branch .L{target}\n")
        elif kind == "end":
            out.append("\ts_endpgm\n")
    out.append("\ts_endpgm\n")
    return "".join(out)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(_programs())
def test_loops_match_the_textbook_algorithm(text):
    cfg = build_program(parse_text(text)).cfg()
    assume(_reachable_from_entries(cfg.blocks))
    want = _reference_loops(cfg.blocks)
    assert {lp.header: lp.blocks for lp in cfg.loops} == want
    for lp in cfg.loops:
        around = [o for o in cfg.loops if o is not lp and lp.blocks < o.blocks]
        assert lp.depth == len(around) + 1
        assert (lp.parent.header if lp.parent else None) == (
            min(around, key=lambda o: len(o.blocks)).header if around else None)
    for i in range(len(cfg.block_of)):
        inside = [lp for lp in cfg.loops if cfg.block_of[i] in lp.blocks]
        assert cfg.loop_of(i) is (max(inside, key=lambda lp: lp.depth) if inside else None)


@pytest.mark.parametrize("path", all_real_kernels(), ids=lambda p: p.name)
def test_real_kernels_have_the_textbook_loops(path):
    cfg = build_program(read_file(str(path))).cfg()
    assert {lp.header: lp.blocks for lp in cfg.loops} == _reference_loops(cfg.blocks)


# The sizes (20,000 back edges, 30,000 branch blocks) are measured by benchmarks/worst_cases.py.
def test_thousands_of_back_edges_make_one_loop():
    program = build_program(parse_text(shapes.back_edges(5000)))
    cfg = program.cfg()
    (loop,) = cfg.loops
    assert cfg.blocks[loop.header].label == ".LH"
    assert len(loop.blocks) == 5000 and not program.limits  # the header is the first latch too


def test_thousands_of_branch_blocks_have_no_loop():
    cfg = build_program(parse_text(shapes.branch_blocks(5000))).cfg()
    assert len(cfg.blocks) == 10001 and cfg.loops == []


def test_deep_loop_nest_is_capped_with_a_finding(monkeypatch):
    monkeypatch.setattr(limits, "LOOP_MEMBERSHIPS", 5 * 6)  # room for the 5 innermost loops
    analysis = Analysis.from_source(parse_text(shapes.nested_loops(40), "nest.s"))
    cfg = analysis.cfg
    assert [cfg.blocks[lp.header].label for lp in cfg.loops] == [f".LN{k}" for k in range(35, 40)]
    assert max(lp.depth for lp in cfg.loops) == 5
    found = [d for d in check_analysis(analysis, registry.available()) if d.code == "LIMIT001"]
    assert [(d.line, d.severity) for d in found] == [(7, "warning")]
    assert found[0].message == ("analysis limit reached in the loop analysis (35 enclosing loop(s) from line 7): "
                                "70 instructions not checked; those loops are checked as straight-line code")


def test_limit_finding_shows_whatever_is_selected_unless_ignored(monkeypatch):
    from isalint.lint.selection import selected_codes

    codes = registry.available()
    assert "LIMIT001" in selected_codes(codes, ["WAIT001"], [])
    assert "LIMIT001" not in selected_codes(codes, ["WAIT001"], ["LIMIT001"])
    assert "LIMIT001" not in selected_codes(codes, None, ["LIMIT"])


def test_many_back_edges_check_in_linear_time():
    """Eight times the back edges, about eight times the time (generously: within 3x of that)."""
    def seconds(n):
        analysis = Analysis.from_source(parse_text(shapes.back_edges(n), "be.s"))
        gc.disable()  # as `isalint check` runs
        try:
            t = time.perf_counter()
            check_analysis(analysis, ["WAIT001", "GMEM001", "SCRATCH001"])
            return time.perf_counter() - t
        finally:
            gc.enable()

    small = min(seconds(500) for _ in range(3))
    large = min(seconds(4000) for _ in range(2))
    assert large < 3 * 8 * small + 0.1, (small, large)


def test_a_branch_to_a_label_after_the_last_instruction_leaves_the_code(tmp_path):
    """A label with no instruction after it: every rule runs, and the estimate says the path leaves
    the code (it once indexed past the last block)."""
    import subprocess
    import sys

    text = ("\t.text\nk:\n\ts_load_b32 s2, s[0:1], 0x0\n\ts_waitcnt lgkmcnt(0)\n\ts_cmp_eq_u32 s2, 0\n"
            "\ts_cbranch_scc1 .Lend\n\tv_mov_b32 v0, s2\n\ts_cbranch_execz .Lend\n\ts_mov_b32 s3, 1\n.Lend:\n")
    analysis = Analysis.from_source(parse_text(text, "f.s"))
    assert analysis.cfg.label_block(analysis.program, ".Lend") is None
    assert analysis.cfg.label_block(analysis.program, ".Lnowhere") is None
    check_analysis(analysis, registry.available())
    path = tmp_path / "f.s"
    path.write_text(text)
    proc = subprocess.run([sys.executable, "-m", "isalint", "estimate", "--gemm", "256", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "internal error" not in proc.stderr, proc.stderr
