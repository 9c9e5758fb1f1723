"""Byte-exact round trip, columns, and agreement of the fast scanner with the pyparsing grammar."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from isalint.parse import parse_bytes, parse_text
from isalint.parse.grammar import parse_statements as grammar_statements
from isalint.parse.operands import OperandError
from isalint.parse.source import _LABEL
from isalint.parse.source import parse_statements as scanner_statements

from conftest import SNIPPETS, all_real_kernels, examples


def _real_files():
    files = all_real_kernels() + sorted(SNIPPETS.rglob("*.s"))
    return files or [pytest.param(None, marks=pytest.mark.skip(reason="no kernels present"))]


@pytest.mark.parametrize("path", _real_files(), ids=lambda p: p.name if p else "none")
def test_real_files_round_trip_byte_for_byte(path):
    data = path.read_bytes()
    source = parse_bytes(data, str(path))
    assert source.render_bytes() == data


@pytest.mark.parametrize("path", _real_files(), ids=lambda p: p.name if p else "none")
def test_scanner_and_grammar_agree_on_real_files(path):
    source = parse_bytes(path.read_bytes(), str(path))
    lines = [line for line in source.lines if line.kind == "instruction"]
    assert lines, "a real kernel has instructions"
    for line in lines:
        assert grammar_statements(line.code) == line.statements, line.text


def test_line_endings_tabs_and_trailing_blanks_survive():
    text = "\tv_mov_b32 v1, v2   \r\n; c\r\n\r\n  s_endpgm\t\n.L1:\rlast"
    source = parse_text(text)
    assert source.render() == text
    assert [line.eol for line in source.lines] == ["\r\n", "\r\n", "\r\n", "\n", "\r", ""]


def test_non_utf8_bytes_round_trip_and_are_flagged():
    data = b"v_mov_b32 v1, v2 ; caf\xe9\n s_endpgm\n"
    source = parse_bytes(data)
    assert source.render_bytes() == data
    assert source.lines[0].error == "line is not valid UTF-8"


def test_columns_point_at_tokens():
    line = parse_text("\tds_load_b128 v[188:191], v183 offset: 64 ; A\n").lines[0]
    (stmt,) = line.statements
    text = line.text
    assert text[stmt.col - 1:].startswith("ds_load_b128")
    assert [text[op.col - 1:].startswith(op.text) for op in stmt.operands] == [True, True]
    assert stmt.modifiers[0].name == "offset" and stmt.modifiers[0].int_value() == 64
    assert text[line.comment_col - 1:] == "; A"


def test_kinds_of_lines():
    text = (".text\nkernel:   ; entry\n/* block\n still */\n// cpp\n\ts_waitcnt vmcnt(0) lgkmcnt(1)\n"
            ".amdgpu_metadata\n---\namdhsa.kernels: []\n...\n.end_amdgpu_metadata\n")
    kinds = [line.kind for line in parse_text(text).lines]
    assert kinds == ["directive", "label", "comment", "comment", "comment", "instruction", "directive",
                     "metadata", "metadata", "metadata", "directive"]


def test_vopd_dpp_and_special_operands():
    lines = parse_text(
        "v_dual_fmac_f32 v132, v184, v194 :: v_dual_fmac_f32 v129, v185, v192\n"
        "v_mov_b32_dpp v1, v2 quad_perm:[2,2,0,1] row_mask:0xf bank_mask:0xf\n"
        "v_add_co_ci_u32_e64 v184, null, 0, s14, s15\n"
        "v_fma_f32 v1, -v2, |v3|, -4.0\n"
        "s_delay_alu instid0(VALU_DEP_2) | instskip(SKIP_3) | instid1(VALU_DEP_3)\n"
        "global_load_b32 v1, v2, s[0:1] offset:16 glc slc dlc\n"
        "s_mov_b64 exec, ttmp[4:5]\n").lines
    x, y = lines[0].statements
    assert (x.mnemonic, y.mnemonic) == ("v_dual_fmac_f32", "v_dual_fmac_f32")
    assert y.operands[1].registers() == ["v185"]
    dpp = lines[1].statements[0]
    assert [m.name for m in dpp.modifiers] == ["quad_perm", "row_mask", "bank_mask"]
    assert dpp.modifiers[0].value == "[2,2,0,1]"
    assert lines[2].statements[0].operands[1].kind == "special"
    fma = lines[3].statements[0]
    assert (fma.operands[1].neg, fma.operands[2].abs, fma.operands[3].value) == (True, True, -4.0)
    assert [op.file for op in lines[4].statements[0].operands] == ["instid0", "instskip", "instid1"]
    g = lines[5].statements[0]
    assert [m.name for m in g.modifiers] == ["offset", "glc", "slc", "dlc"]
    assert lines[6].statements[0].operands[1].registers() == ["ttmp4", "ttmp5"]


# ---- property tests: generated instruction lines ---------------------------------------------

_regs = st.one_of(
    st.integers(0, 255).map(lambda n: f"v{n}"),
    st.integers(0, 105).map(lambda n: f"s{n}"),
    st.tuples(st.integers(0, 250), st.integers(0, 3)).map(lambda t: f"v[{t[0]}:{t[0] + t[1]}]"),
    st.tuples(st.integers(0, 100), st.integers(0, 3)).map(lambda t: f"s[{t[0]}:{t[0] + t[1]}]"),
    st.sampled_from(["vcc_lo", "vcc", "exec_lo", "exec", "null", "m0", "scc", "off", "ttmp[0:1]"]),
)
_consts = st.one_of(
    st.integers(-16, 64).map(str),
    st.integers(0, 2**32 - 1).map(hex),
    st.sampled_from(["0.5", "-1.0", "4.0", "1.5", "-0.25", "0x3f800000"]),
)
_operand = st.one_of(_regs, _consts, _regs.map(lambda r: f"-{r}" if r[0] in "vs" else r),
                     _regs.map(lambda r: f"|{r}|" if r[0] in "vs" else r))
_modifier = st.one_of(
    st.sampled_from(["glc", "slc", "dlc", "clamp", "row_mask:0xf", "bank_mask:0x3", "bound_ctrl:1", "mul:2"]),
    st.integers(0, 65535).map(lambda n: f"offset:{n}"),
    st.integers(0, 255).map(lambda n: f"offset: {n}"),
    st.lists(st.integers(0, 3), min_size=4, max_size=4).map(lambda q: "quad_perm:[" + ",".join(map(str, q)) + "]"),
)
_mnemonic = st.from_regex(r"[vs]_[a-z][a-z0-9_]{1,18}", fullmatch=True)
_blank = st.sampled_from([" ", "\t", "  ", " \t"])
_sep = st.sampled_from([", ", ",", " ,", ",\t"])


@st.composite
def _statement(draw):
    ops = draw(st.lists(_operand, min_size=0, max_size=4))
    mods = draw(st.lists(_modifier, min_size=0, max_size=3)) if ops else []
    text = draw(_mnemonic)
    if ops:
        text += draw(_blank) + draw(_sep).join(ops)
    for m in mods:
        text += draw(_blank) + m
    return text


@st.composite
def _line(draw):
    text = draw(st.sampled_from(["", "\t", "  "])) + draw(_statement())
    if draw(st.booleans()):
        text += " :: " + draw(_statement())
    text += draw(st.sampled_from(["", "  ", "\t; comment", " // c", " /* c */"]))
    return text + draw(st.sampled_from(["\n", "\r\n", ""]))


@settings(max_examples=examples(400), deadline=None)
@given(_line())
def test_generated_lines_round_trip_and_parsers_agree(text):
    source = parse_text(text)
    assert source.render() == text
    (line,) = source.lines
    assert line.kind == "instruction", line.error
    assert grammar_statements(line.code) == line.statements
    assert scanner_statements(line.code) == line.statements
    for stmt in line.statements:
        assert line.text[stmt.col - 1:].startswith(stmt.mnemonic)
        for op in stmt.operands:
            assert line.text[op.col - 1:].startswith(op.text)


@settings(max_examples=examples(200), deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=80))
def test_arbitrary_text_never_crashes_and_round_trips(text):
    source = parse_text(text)
    assert source.render() == text
    for line in source.lines:
        if line.kind == "instruction":
            label = _LABEL.match(line.code) if line.label else None  # "A:A" is a label, then an instruction
            try:
                assert grammar_statements(line.code, label.end() if label else 0) == line.statements
            except OperandError:
                pytest.fail(f"scanner accepted what the grammar rejects: {line.code!r}")
