"""``isalint report``, isalint.report.regtable and isalint.model.loop_stats."""
from __future__ import annotations

import html
import json

from click.testing import CliRunner
from conftest import KERNELS

from isalint.analysis import Analysis
from isalint.cli import cli
from isalint.model.loop_stats import SUMMARY_KEYS, loop_summary

K6 = KERNELS / "kernel6_style"


def _run(*args):
    return CliRunner().invoke(cli, ["report", *map(str, args)])


def test_kernel5_summary_counts_62_vopd_fmas_and_4_singles(kernel5):
    result = _run("--format", "json", kernel5)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    s = report["summary"]
    assert report["loop"] == ".LBB0_9" and s["loop"] == ".LBB0_9"
    assert s["vopd_fma_instructions"] == 62 and s["vopd_fma"] == 124 and s["single_fma"] == 4
    assert s["fma"] == 128 and s["vopd_fma_share"] == round(124 / 128, 4)
    assert s["lds_ops"] == 6 and s["valu"] == 68
    assert s["stall_cycles"] > 0 and s["issue_cycles"] == s["valu"] + s["stall_cycles"]
    assert s["rf_reads"] + s["cache_hits"] == 2 * 128 + 2  # SRC0/SRC1 of every FMA + the two adds' VGPRs
    assert set(SUMMARY_KEYS) <= set(s)
    rows = report["rows"]
    assert len(rows) == 68 and set(rows[0]["cells"]) == {"DSTX", "SRC0X", "SRC1X", "DSTY", "SRC0Y", "SRC1Y"}
    row = next(r for r in rows if r["line"] == 572)
    assert row["cells"]["SRC0X"] == "Cache0" and row["stall"] == 1


def test_summary_function_matches_the_cli(kernel5):
    analysis = Analysis.from_path(str(kernel5))
    s = loop_summary(analysis, analysis.cfg.find_loop(".LBB0_9"))
    cli_summary = json.loads(_run("--format", "json", "--loop", ".LBB0_9", kernel5).output)["summary"]
    assert s == cli_summary


def test_text_report(kernel5):
    result = _run("--no-color", kernel5)
    assert result.exit_code == 0
    out = result.output
    assert "loop .LBB0_9, lines 559-639" in out
    assert "62 VOPD FMA instructions (124 FMAs), 4 single" in out and "96.9%" in out
    assert "v_dual_fmac_f32 v132, v184, v194" in out and "Cache0" in out
    assert "\x1b[" not in out
    colored = _run("--color", kernel5).output
    assert "\x1b[" in colored


def test_text_and_html_reports_explain_the_columns_alike(tmp_path):
    text = _run("--no-color", K6 / "kernel6_style.s").output
    lines = text.splitlines()
    legend = " ".join(lines[1:lines.index(next(ln for ln in lines if ln.startswith("┏")))])
    legend = " ".join(legend.split())  # the terminal's wrapping undone
    for words in ("DSTY, SRC0Y, SRC1Y those of its Y half", "Cache<k> an operand-cache hit in bank k",
                  "W<k> a result written to bank k during this row's cycle: the previous VALU instruction's "
                  "destination", "stall: the cycles"):
        assert words in legend
    assert lines[-1].startswith("model: banks = 4") or "model: banks = 4" in " ".join(lines[-2:])
    _run("--format", "html", "-o", tmp_path / "k6.html", K6 / "kernel6_style.s")
    page = html.unescape((tmp_path / "k6.html").read_text())
    assert legend in " ".join(page.split())


def test_html_report_is_standalone(tmp_path):
    out = tmp_path / "k6.html"
    result = _run("--format", "html", "-o", out, K6 / "kernel6_style.s")
    assert result.exit_code == 0
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<script" not in page and "http" not in page  # nothing to fetch
    assert 'class="c b2">R2<' in page and 'class="c cache">Cache0<' in page
    assert "FMAs issued as VOPD   100.0%" in page


def test_kernel6_fixture_summary():
    s = json.loads(_run("--format", "json", K6 / "kernel6_style.s").output)["summary"]
    assert s["vopd_fma_share"] == 1.0 and s["single_fma"] == 0 and s["stall_cycles"] == 0
    assert s["issue_cycles"] == s["valu"] == 65
    shared = json.loads(_run("--format", "json", K6 / "kernel6_shared_banks.s").output)["summary"]
    assert shared["vopd_fma_share"] == 1.0 and shared["stall_cycles"] > 0
    assert shared["issue_cycles"] > s["issue_cycles"]


def test_loop_selection_and_errors(kernel5, tmp_path):
    outer = json.loads(_run("--format", "json", "--loop", ".LBB0_6", kernel5).output)
    assert outer["loop"] == ".LBB0_6" and outer["summary"]["instructions"] > 81
    bad = _run("--loop", ".LBB9_9", kernel5)
    assert bad.exit_code == 2 and "no loop headed by label .LBB9_9" in bad.output
    missing = _run(tmp_path / "nope.s")
    assert missing.exit_code == 2 and "no such file" in missing.output
    # a file without loops is one straight-line sequence
    bare = tmp_path / "pairs.s"
    bare.write_text("v_fmac_f32_e32 v0, v4, v8\nv_dual_mul_f32 v1, v2, v3 :: v_dual_add_f32 v4, v5, v8\n")
    s = json.loads(_run("--format", "json", bare).output)["summary"]
    assert s["loop"] is None and s["valu"] == 2 and s["stall_cycles"] == 1
