"""The lane evaluator on hostile shapes: a spill slot behind a store with a computed address,
long chains of branches and loops (values stay small), and a work budget with a LIMIT001 finding."""
from __future__ import annotations

from isalint import rules as registry
from isalint.analysis import Analysis
from isalint.lint.engine import check_analysis
from isalint.model import limits
from isalint.model.lanes.evaluator import evaluator_for
from isalint.model.lanes.values import MAX_TERMS
from isalint.parse import parse_text

SCRATCH_RELOAD = """\t.text
k:
\tscratch_store_b32 v1, v0, off offset:176
\tscratch_load_b32 v2, off, off offset:176
\ts_waitcnt vmcnt(0)
\tds_load_b32 v3, v2
\ts_endpgm
"""
HEAD = "\t.text\nk:\n\tv_lshlrev_b32 v1, 2, v0\n"


def _check(text: str, codes=None):
    analysis = Analysis.from_source(parse_text(text, "k.s"))
    return analysis, check_analysis(analysis, codes or registry.available())


def test_reload_after_a_store_with_a_computed_address_is_unknown_not_a_crash():
    _, found = _check(SCRATCH_RELOAD)
    lds = [d for d in found if d.code == "LDS001"]
    assert [(d.line, d.severity) for d in lds] == [(6, "info")]
    assert lds[0].message == (
        "cannot evaluate the per-lane address of this ds_load_b32: scratch:176 may be overwritten by "
        "'scratch_store_b32 v1, v0, off offset:176' (line 3), whose address isalint does not follow; "
        "bank conflicts not checked")


def test_reload_of_a_fixed_slot_is_still_followed():
    text = SCRATCH_RELOAD.replace("scratch_store_b32 v1, v0, off", "v_lshlrev_b32 v0, 2, v0\n\tscratch_store_b32 "
                                  "off, v0, off")
    analysis, found = _check(text, ["LDS001"])
    assert [d for d in found if d.code == "LDS001"] == []  # v2 = 4 * lane: conflict-free, known
    ins = next(i for i in analysis.program.instrs if i.opcode == "ds_load_b32")
    assert evaluator_for(analysis, ins.index).value("v2", ins.index).known


def _diamonds(n: int) -> str:
    out = [HEAD]
    for k in range(n):
        out.append(f"\ts_cbranch_scc1 .LA{k}\n\tv_add_nc_u32 v1, 4, v1\n.LA{k}:\n\tds_load_b32 v3, v1\n")
    return "".join(out) + "\ts_endpgm\n"


def test_values_after_many_joins_keep_a_bounded_number_of_terms():
    analysis, found = _check(_diamonds(300), ["LDS001"])
    assert [d for d in found if d.code == "LDS001"] == []
    last = [i for i in analysis.program.instrs if i.opcode == "ds_load_b32"][-1]
    v = evaluator_for(analysis, last.index).value("v1", last.index)
    assert v.known and len(v.terms) <= MAX_TERMS
    assert v.lanes[:4] == (0, 4, 8, 12)  # the per-lane part survives the folding of the uniform terms


def _nest(n: int) -> str:
    out = [HEAD]
    out.extend(f".LN{k}:\n\tv_add_nc_u32 v1, 4, v1\n\tds_load_b32 v3, v1\n" for k in range(n))
    out.extend(f"\ts_cbranch_scc1 .LN{k}\n" for k in reversed(range(n)))
    return "".join(out) + "\ts_endpgm\n"


def test_evaluation_budget_gives_up_with_a_finding(monkeypatch):
    monkeypatch.setattr(limits, "LANE_STEPS_MIN", 300)
    monkeypatch.setattr(limits, "LANE_STEPS_PER_INSTRUCTION", 1)
    analysis, found = _check(_nest(60))
    (limit,) = [d for d in found if d.code == "LIMIT001"]
    refused = [d for d in found if d.code == "LDS001" and "analysis limit reached" in d.message]
    assert refused and limit.severity == "warning"
    assert limit.message == (f"analysis limit reached in the per-lane evaluation of LDS addresses (kernel <bare>): "
                             f"{len(refused)} instructions not checked; their bank conflicts are not checked")
    assert limit.line == refused[0].line
    ev = evaluator_for(analysis, 0)
    assert ev.steps > ev.max_steps == 300


def test_real_kernel_budget_is_far_above_what_it_needs(kernel5):
    analysis = Analysis.from_path(str(kernel5))
    check_analysis(analysis, ["LDS001"])
    (ev,) = analysis.__dict__["_lane_evaluators"].values()
    assert ev.steps * 20 < ev.max_steps and not analysis.program.limits
