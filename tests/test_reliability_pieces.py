"""Large files are analysed piece by piece: concatenated kernels give what each kernel gives alone,
a kernel cut inside and a report cut short are said with LIMIT001."""
from __future__ import annotations

import pytest
from conftest import KERNELS, examples
from hypothesis import given, settings
from hypothesis import strategies as st

from isalint import rules as registry
from isalint.analysis import Analysis
from isalint.lint.engine import check_analysis
from isalint.lint.files import check_file
from isalint.model import limits
from isalint.parse import pieces as pieces_mod
from isalint.parse.pieces import count_lines, split_pieces
from isalint.parse.source import parse_text

A, B = KERNELS / "gemm_naive.s", KERNELS / "lds_transpose_conflict.s"


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.sampled_from(["\t.amdgcn_target \"x\"", ".L1:", "\tv_mov_b32 v0, v1", "", "k:", "\r", "x:\r\n"]),
                max_size=60).map("\n".join), st.integers(1, 12))
def test_pieces_cover_the_text_in_order(text, max_lines):
    ps = split_pieces(text, max_lines)
    assert "".join(text[p.start:p.end] for p in ps) == text
    assert all(a.end == b.start for a, b in zip(ps, ps[1:]))
    total = 0
    for p in ps:
        n = count_lines(text[p.start:p.end])
        assert n <= max_lines and p.first_line == total + 1
        total += n
    assert total == count_lines(text)


def test_cuts_go_at_a_new_target_then_at_a_label():
    text = "".join(f"\t.amdgcn_target \"t\"\nk{u}:\n" + "\tv_mov_b32 v0, v1\n.L:\n" * 5 for u in range(2))
    ps = split_pieces(text, 8)
    firsts = [(p.first_line, p.cut_inside_unit) for p in ps]
    # unit 1 is lines 1-12: cut at its last label before line 9 (line 8); unit 2 starts on line 13
    assert firsts == [(1, False), (8, True), (13, False), (20, True)]
    assert text[ps[1].start:].startswith(".L:\n")


def _findings(path, text):
    analysis = Analysis.from_source(parse_text(text, path))
    return [(d.line, d.code, d.message) for d in check_analysis(analysis, registry.available())]


def test_concatenated_kernels_give_what_each_gives_alone(tmp_path, monkeypatch):
    a, b = A.read_text(), B.read_text()
    path = tmp_path / "both.s"
    path.write_text(a + b)
    monkeypatch.setattr(pieces_mod, "PIECE_LINES", max(count_lines(a), count_lines(b)) + 10)
    got = check_file(str(path), registry.available(), "gfx1100", registry.available())
    offset = count_lines(a)
    want = _findings(str(path), a) + [(n + offset, c, m) for n, c, m in _findings(str(path), b)]
    want = [(n, c, m) for n, c, m in want]
    assert sorted((d.line, d.code, d.message) for d in got.findings) == sorted(want)
    assert all(got.lines[d.line] == (a + b).splitlines()[d.line - 1] for d in got.findings)


def test_a_kernel_cut_inside_is_said(tmp_path, monkeypatch):
    path = tmp_path / "k.s"
    path.write_text(A.read_text())
    monkeypatch.setattr(pieces_mod, "PIECE_LINES", 100)
    got = check_file(str(path), registry.available(), "gfx1100", registry.available())
    (cut,) = [d for d in got.findings if d.code == "LIMIT001"]
    assert cut.message.startswith("analysis limit reached in the whole-file analysis (from line ")
    assert cut.message.endswith("cut(s) inside one kernel; the file is analysed in pieces of 100 lines; control flow "
                                "across a cut is not followed")


def test_findings_beyond_the_cap_are_counted(tmp_path, monkeypatch):
    path = tmp_path / "k.s"
    path.write_text("".join(f"\tv_fmac_f32_e32 v[{k % 100}:{k % 100 + 1}], v1, v2\n" for k in range(40))
                    + "\ts_endpgm\n")
    monkeypatch.setattr(limits, "FINDINGS_PER_FILE", 10)
    got = check_file(str(path), ["PARSE001", "LIMIT001"], "gfx1100", registry.available())
    assert [d.code for d in got.findings].count("PARSE001") == 10
    (limit,) = [d for d in got.findings if d.code == "LIMIT001"]
    assert limit.message == ("analysis limit reached in the report (after line 10): 30 findings not shown; "
                             "isalint reports at most 10 per file")
    assert sorted(got.lines) == list(range(1, 11))


def test_file_of_pieces_without_instructions(tmp_path, monkeypatch):
    from isalint.parse import InputError

    monkeypatch.setattr(pieces_mod, "PIECE_LINES", 10)
    path = tmp_path / "k.s"
    path.write_text("; just words\n" * 50)  # no code, no finding: as when the file is analysed whole
    assert check_file(str(path), ["PARSE001"], "gfx1100", registry.available()).findings == []
    path.write_text("just words\n" * 50)  # prose
    with pytest.raises(InputError, match="no RDNA3 instruction found"):
        check_file(str(path), ["PARSE001"], "gfx1100", registry.available())


def test_sites_of_an_aggregated_finding_beyond_the_cap_are_counted(tmp_path, monkeypatch):
    import importlib.util

    from conftest import REPO

    spec = importlib.util.spec_from_file_location("shapes", REPO / "benchmarks" / "shapes.py")
    shapes = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shapes)
    path = tmp_path / "k.s"
    path.write_text(shapes.fma_block(40))
    whole = check_file(str(path), registry.available(), "gfx1100", registry.available())
    many = [d for d in whole.findings if len(d.sites) > 3]
    assert many, "the loop's aggregated findings list their sites"
    monkeypatch.setattr(limits, "SITES_PER_FINDING", 3)
    got = check_file(str(path), registry.available(), "gfx1100", registry.available())
    assert all(len(d.sites) <= 3 for d in got.findings)
    (limit,) = [d for d in got.findings if d.code == "LIMIT001"]
    dropped = sum(len(d.sites) - 3 for d in many)
    assert limit.message.startswith(f"analysis limit reached in the report (sites of aggregated findings from line ")
    assert f"): {dropped} sites not listed; a finding lists at most 3 of its sites" in limit.message
    assert limit.severity == "info"  # every site was checked and counted: only the listing is short
