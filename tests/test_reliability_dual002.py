"""DUAL002 on one huge block: the pairing search works in groups and stops at a per-file budget
with a LIMIT001 finding; a failure inside it is not swallowed."""
from __future__ import annotations

import gc
import importlib.util
import time

import pytest
from conftest import REPO

from isalint import rules as registry
from isalint.analysis import Analysis
from isalint.lint.engine import check_analysis
from isalint.model import limits
from isalint.parse import parse_text


def _shapes():
    spec = importlib.util.spec_from_file_location("shapes", REPO / "benchmarks" / "shapes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


shapes = _shapes()


def _check(text: str, codes):
    analysis = Analysis.from_source(parse_text(text, "f.s"))
    return analysis, check_analysis(analysis, codes)


def test_candidates_beyond_the_budget_are_counted_in_a_finding(monkeypatch):
    monkeypatch.setattr(limits, "DUAL002_CANDIDATES", 100)
    analysis, found = _check(shapes.fma_block(300), ["DUAL002", "LIMIT001"])
    dual = [d for d in found if d.code == "DUAL002"]
    (limit,) = [d for d in found if d.code == "LIMIT001"]
    first_unchecked = analysis.program.instrs[100].lineno
    assert dual and max(d.line for d in dual) < first_unchecked
    assert (limit.line, limit.severity) == (first_unchecked, "warning")
    assert limit.message == (f"analysis limit reached in DUAL002's pairing search (single VALU instructions from "
                             f"line {first_unchecked}): 200 instructions not checked; it checks at most 100 per file")


def test_integer_code_beyond_the_budget_is_an_info_limit(monkeypatch):
    """Only float math left single can make a DUAL002 warning: an unsearched part of moves and index
    arithmetic could have held info findings at most, and its LIMIT001 says so."""
    monkeypatch.setattr(limits, "DUAL002_CANDIDATES", 100)
    text = shapes.fma_block(300).replace("v_fmac_f32_e32", "v_add_nc_u32_e32")
    _, found = _check(text, ["DUAL002", "LIMIT001"])
    (limit,) = [d for d in found if d.code == "LIMIT001"]
    assert limit.severity == "info" and "200 instructions not checked" in limit.message
    _, found = _check(shapes.fma_block(300), ["DUAL002", "LIMIT001"])
    assert [d.severity for d in found if d.code == "LIMIT001"] == ["warning"]


def test_every_candidate_of_a_long_block_gets_a_verdict():
    """300 FMAs in a loop: three groups; each FMA is in a suggested pair or told why it stays single."""
    analysis, found = _check(shapes.fma_block(300), ["DUAL002"])
    sites = [s for d in found for s in (d.sites or [d])]
    pairs = [s for s in sites if "can issue as one VOPD" in s.message]
    partners = {int(s.message.split("with line ")[1].split(" ")[0]) for s in pairs}
    fmas = {i.lineno for i in analysis.program.instrs if i.opcode == "v_fmac_f32_e32"}
    assert fmas == {s.line for s in sites} | partners
    assert not analysis.program.limits


def test_failure_inside_the_fix_probe_is_not_swallowed(monkeypatch):
    import isalint.model.fma_block as fma_block

    def boom(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(fma_block, "find_block", boom)
    with pytest.raises(MemoryError):
        _check(shapes.fma_block(8), registry.available())


def test_pairing_search_grows_linearly():
    """Eight times the FMAs, about eight times the time (generously: within 3x of that)."""
    def seconds(n):
        analysis = Analysis.from_source(parse_text(shapes.fma_block(n), "f.s"))
        gc.disable()
        try:
            t = time.perf_counter()
            check_analysis(analysis, ["DUAL002"])
            return time.perf_counter() - t
        finally:
            gc.enable()

    small = min(seconds(256) for _ in range(2))
    large = seconds(2048)
    assert large < 3 * 8 * small + 0.2, (small, large)
