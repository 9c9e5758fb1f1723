"""Checking a text again after an edit, reusing what the edit did not change: each line's parse
(parse_text's ``reuse``) and each instruction's decoding. The result must be what a fresh check finds."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from isalint.analysis import Analysis
from isalint.lint.config import Config
from isalint.lint.files import check_text
from isalint.parse.source import parse_text

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "fixtures" / "kernels"
KERNEL5 = ROOT.parent / "shared" / "corpus" / "kernel5.s"

# the same instruction text as code, inside a block comment and inside the metadata document
STATES = """\
v_mov_b32_e32 v0, v1
/* a block comment
v_mov_b32_e32 v0, v1
*/
v_add_f32_e32 v2, v0, v0 /* opens a comment
v_mov_b32_e32 v0, v1
   still inside */ v_mov_b32_e32 v0, v1
.amdgpu_metadata
v_mov_b32_e32 v0, v1
---
.end_amdgpu_metadata
v_mov_b32_e32 v0, v1
s_endpgm
"""


def test_reused_lines_are_parsed_as_afresh_whatever_the_state_around_them():
    reuse: dict = {}
    first = parse_text(STATES, "k.s", reuse=reuse)
    assert first.lines == parse_text(STATES, "k.s").lines
    # the second parse takes lines from the first: same result, whatever comment or document they sit in
    again = parse_text(STATES, "k.s", reuse=reuse)
    assert again.lines == first.lines
    kinds = [line.kind for line in again.lines]
    assert kinds[:4] == ["instruction", "comment", "comment", "comment"]
    assert kinds[5] == "comment" and kinds[8] == "metadata" and kinds[11] == "instruction"
    # a line seen first inside a comment is read afresh outside it
    moved = "\n".join(STATES.splitlines()[2:4] + ["v_mov_b32_e32 v0, v1", "s_endpgm"]) + "\n"
    assert parse_text(moved, "k.s", reuse=reuse).lines == parse_text(moved, "k.s").lines
    # numbering follows the new text, not the text a line was first read in
    shifted = "\n" * 5 + STATES
    assert [line.number for line in parse_text(shifted, "k.s", reuse=reuse).lines] == list(range(1, 6 + len(kinds)))


def _edits(text: str, count: int, seed: int):
    """``count`` successive hand edits of ``text``: a register renamed, a line deleted, a line duplicated,
    a comment added."""
    rng = random.Random(seed)
    lines = text.splitlines(keepends=True)
    for _ in range(count):
        code = [n for n, line in enumerate(lines) if line.lstrip().startswith(("v_", "s_", "ds_", "global_"))]
        n = rng.choice(code)
        what = rng.randrange(4)
        if what == 0 and "v1" in lines[n]:
            lines[n] = lines[n].replace("v1", "v2", 1)
        elif what == 1:
            del lines[n]
        elif what == 2:
            lines.insert(n, lines[n])
        else:
            lines[n] = lines[n].rstrip("\n") + " ; note\n"
        yield "".join(lines)


def _kernels():
    out = [KERNELS / "gemm_double_buffered.s", KERNELS / "gemm_wmma_f16.s",
           KERNELS / "kernel6_style" / "kernel6_style.s"]
    return out + ([KERNEL5] if KERNEL5.is_file() else [])


@pytest.mark.parametrize("path", _kernels(), ids=lambda p: p.name)
def test_a_check_reusing_the_last_parse_finds_what_a_fresh_check_finds(path):
    text = path.read_text()
    reuse: dict = {}
    config = Config()
    check_text(text, str(path), config, reuse)
    for k, edited in enumerate(_edits(text, 6, seed=len(text))):
        warm = check_text(edited, str(path), config, reuse)
        cold = check_text(edited, str(path), config)
        assert [d.to_json() for d in warm.findings] == [d.to_json() for d in cold.findings], f"edit {k + 1}"
        assert warm.warnings == cold.warnings
        # the model too: every instruction decoded as afresh
        fresh = Analysis.from_source(parse_text(edited, str(path)))
        for a, b in zip(warm.analysis.program.instrs, fresh.program.instrs, strict=True):
            assert (a.index, a.lineno, a.defs, a.uses, a.klass, a.counters, a.problem, a.slots) == \
                   (b.index, b.lineno, b.defs, b.uses, b.klass, b.counters, b.problem, b.slots)
    assert reuse, "the lines were kept for the next parse"


def test_check_text_follows_the_configuration_of_the_path(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.isalint]\nignore = ["OCC001"]\n'
                                             '[tool.isalint.severity]\nDUAL002 = "error"\n')
    kernel = KERNELS / "gemm_double_buffered.s"
    text = kernel.read_text()
    plain = check_text(text, str(kernel), Config())
    configured = check_text(text, str(tmp_path / "k.s"))  # configuration found from the path
    assert any(d.code == "OCC001" for d in plain.findings)
    assert not any(d.code == "OCC001" for d in configured.findings)
    assert {d.severity for d in configured.findings if d.code == "DUAL002"} <= {"error"}
