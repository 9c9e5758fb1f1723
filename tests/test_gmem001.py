"""GMEM001 on kernel5 (the worklog's kernel 7 address chains), the chained/SGPR-base fixtures and a mutation."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from conftest import KERNELS

from isalint.analysis import Analysis
from isalint.lint.engine import check_analysis
from isalint.parse.source import parse_text
from isalint.rules import gmem001


def gmem001_of(analysis):
    return [d for d in check_analysis(analysis, ["GMEM001"]) if d.code == "GMEM001"]


def fixture(name):
    path = KERNELS / name
    if not path.is_file():
        pytest.skip(f"fixture kernel {name} not built")
    return path


def test_kernel5_loop_loads_are_one_finding_with_two_chains_of_eight(kernel5):
    found = gmem001_of(Analysis.from_path(str(kernel5)))
    assert len(found) == 1
    d = found[0]
    lines = kernel5.read_text().splitlines()
    assert lines[d.line - 1].strip() == "global_load_b32 v167, v[169:170], off"
    assert d.severity == "warning"
    assert "16 global loads in the loop at .LBB0_6" in d.message
    assert "2 chains of 8 loads" in d.message
    valu, per_load = re.search(r"(\d+) VALU instructions \(([\d.]+) per load\)", d.message).groups()
    # the 16 loads of %bb.7 are preceded by 83 address instructions of their own (one v_add_co_u32
    # of the A base is shared by the 8 A loads), 5.2 per load
    assert (int(valu), per_load) == (83, "5.2")
    assert any("global_load_b32 vD, vOff, s[base:base+1]" in n for n in d.notes)
    # the cost: 83 VALU instructions per outer iteration, the outer loop's trip count is N's
    assert d.cost["cycles_per_execution"] == 83 and not d.cost["executions_known"]
    assert d.cost["share"] >= 0.05


def test_chained_fixture_warns_and_sgpr_base_fixture_does_not():
    found = gmem001_of(Analysis.from_path(str(fixture("gmem_chained.s"))))
    assert len(found) == 1 and "2 chains of 8 loads" in found[0].message
    assert gmem001_of(Analysis.from_path(str(fixture("gmem_sgpr_base.s")))) == []


def test_rewriting_kernel5_loads_with_sgpr_bases_removes_the_finding(kernel5):
    """Replace each chained B load by an SGPR-base load: the remaining A chain is still reported, alone."""
    text = kernel5.read_text()
    start = text.index("; %bb.7:")
    end = text.index("global_load_b32 v174, v[174:175], off", start) + len("global_load_b32 v174, v[174:175], off")
    body = "\n".join(f"\tglobal_load_b32 v{167 + i}, v203, s[{16 + 2 * i}:{17 + 2 * i}]" for i in range(8))
    head = "; %bb.7:\n\tv_add_co_u32 v183, s15, v118, s12\n\tv_add_co_ci_u32_e64 v184, null, 0, s14, s15\n"
    mutated = text[:start] + head + body + text[end:]
    found = gmem001_of(Analysis.from_source(parse_text(mutated, "k5_sgpr_b.s")))
    assert len(found) == 1 and "8 global loads" in found[0].message and "a chain of 8 loads" in found[0].message


def test_json_output():
    path = fixture("gmem_chained.s")
    proc = subprocess.run([sys.executable, "-m", "isalint", "check", "--format", "json", "--select", "GMEM001",
                           str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert len(data) == 1 and data[0]["code"] == "GMEM001" and data[0]["severity"] == "warning"


def test_rule_documentation():
    doc = gmem001.__doc__
    for section in ("## What it finds", "## Severity", "## Why it matters", "## Example", "## Fix safety",
                    "## Reference"):
        assert section in doc
    assert "sgpr pairs" in doc.lower() and "RDNA3 ISA guide" in doc
