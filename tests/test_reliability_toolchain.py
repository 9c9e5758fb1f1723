"""Text reaches the assembler as the bytes that were read: a comment that is not valid UTF-8 is
passed through, as the parser keeps it."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest
from conftest import KERNELS

from isalint.parse import read_file
from isalint.validate.elf import section_bytes
from isalint.validate.toolchain import ToolchainNotFound, find_toolchain

NAIVE = KERNELS / "gemm_naive.s"
BAD_COMMENT = b"; caf\xe9 \xff not UTF-8\n"


@pytest.fixture
def assembler():
    try:
        return find_toolchain(need_linker=False)
    except ToolchainNotFound as exc:
        pytest.skip(f"no gfx11 assembler: {exc.reason}")


def _with_bad_comment(tmp_path):
    data = NAIVE.read_bytes()
    cut = data.index(b"\n", data.index(b"s_load_b")) + 1
    path = tmp_path / "k.s"
    path.write_bytes(data[:cut] + BAD_COMMENT + data[cut:])
    return path


def test_text_with_invalid_utf8_assembles_to_the_same_code(assembler, tmp_path):
    path = _with_bad_comment(tmp_path)
    text = read_file(str(path)).render()
    assert "\udce9" in text  # the parser keeps the byte as a surrogate escape
    from_text = assembler.assemble(text, tmp_path / "a.o", source_name=str(path))
    from_file = assembler.assemble(NAIVE, tmp_path / "b.o")
    assert from_text.ok and from_file.ok, from_text.errors
    assert section_bytes((tmp_path / "a.o").read_bytes(), ".text") == \
        section_bytes((tmp_path / "b.o").read_bytes(), ".text")


def test_assembler_error_on_such_a_line_is_reported_not_raised(assembler, tmp_path):
    text = "\t.text\n\tv_bogus v0 ; caf\udce9\n\ts_endpgm\n"
    res = assembler.assemble(text, tmp_path / "c.o", source_name="k.s")
    assert not res.ok
    assert [(d.path, d.line) for d in res.errors] == [("k.s", 2)]


def test_fix_keeps_the_bytes_of_a_comment_that_is_not_utf8(assembler, tmp_path):
    path = _with_bad_comment(tmp_path)
    # a wrong VGPR count for the metadata pass to rewrite (and validate: both texts are assembled)
    path.write_bytes(re.sub(rb"(\.amdhsa_next_free_vgpr) \d+", rb"\1 100", path.read_bytes()))
    out = tmp_path / "fixed.s"
    proc = subprocess.run([sys.executable, "-m", "isalint", "fix", "--metadata", "-o", str(out), str(path)],
                          capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    assert BAD_COMMENT in out.read_bytes()
