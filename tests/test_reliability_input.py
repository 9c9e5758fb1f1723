"""Hostile input reaches a one-line error or a finding, never a traceback, a hang or an allocation
the size of a number in the file (issue 10's reproducers)."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest
from conftest import KERNELS

from isalint import rules as registry
from isalint.analysis import Analysis
from isalint.lint.engine import check_analysis
from isalint.parse import InputError, parse_text, read_file
from isalint.parse.reading import read_bytes as read_limited

NAIVE = KERNELS / "gemm_naive.s"


def run(*args, timeout=120):
    proc = subprocess.run([sys.executable, "-m", "isalint", *map(str, args)], capture_output=True, timeout=timeout)
    return proc.returncode, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")


def check_all(text: str, path: str = "k.s"):
    """Every rule's findings on ``text`` (in this process)."""
    analysis = Analysis.from_source(parse_text(text, path))
    return check_analysis(analysis, registry.available())


# -- reading files ----------------------------------------------------------------------------

@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.s"
    os.mkfifo(fifo)
    code, out, err = run("check", fifo, timeout=60)
    assert code == 2
    assert f"{fifo}:1: not a regular file (a FIFO)" in err
    assert "Traceback" not in err


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_devices_are_refused_before_reading(device):
    if not stat.S_ISCHR(os.stat(device).st_mode):
        pytest.skip(f"{device} is not a character device here")
    with pytest.raises(InputError, match="not a regular file \\(a character device\\)"):
        read_file(device)


def test_byte_limit_is_checked_on_what_is_read(tmp_path):
    f = tmp_path / "k.s"
    f.write_bytes(b"v_mov_b32 v0, v1\n" * 10)
    assert len(read_limited(str(f), 170)) == 170
    with pytest.raises(InputError, match="more than the 169-byte limit"):
        read_limited(str(f), 169)


def test_directory_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="is a directory"):
        read_file(str(tmp_path))


# -- register numbers ---------------------------------------------------------------------------

@pytest.mark.parametrize("operand, message", [
    ("v[0:4000000000]", "register index is out of range: v[0:4000000000] (gfx11 has v0-v255)"),
    ("v256", "register index is out of range: v256 (gfx11 has v0-v255)"),
    ("v[255:256]", "register index is out of range: v[255:256] (gfx11 has v0-v255)"),
    ("v" + "9" * 5000, "register index is out of range"),
])
def test_vgpr_beyond_the_isa_is_a_parse_finding(operand, message):
    text = f"\tglobal_load_b32 {operand}, v[1:2], off\n\ts_endpgm\n"
    line = parse_text(text).lines[0]
    assert line.kind == "unknown"
    assert line.error.startswith(message)
    found = check_all(text)
    assert [(d.code, d.line) for d in found] == [("PARSE001", 1)]


def test_sgpr_and_ttmp_limits():
    text = "s_mov_b32 s105, 0\ns_mov_b32 s106, 0\ns_mov_b32 ttmp15, 0\ns_mov_b32 ttmp16, 0\ns_endpgm\n"
    kinds = [line.kind for line in parse_text(text).lines]
    assert kinds == ["instruction", "unknown", "instruction", "unknown", "instruction"]


def test_very_long_numbers_are_findings_not_crashes():
    text = (f"s_mov_b32 s0, {'1' * 5000}\ns_endpgm\n; NumVgprs: {'9' * 5000}\n"
            f".amdhsa_kernel k\n.amdhsa_next_free_vgpr {'9' * 5000}\n.end_amdhsa_kernel\n")
    found = check_all(text)
    assert [d.code for d in found] == ["PARSE001"]
    assert "number too long" in found[0].message


# -- metadata -----------------------------------------------------------------------------------

def _with_metadata(document: str) -> str:
    base = NAIVE.read_text()
    start = base.index(".amdgpu_metadata")
    end = base.index(".end_amdgpu_metadata")
    return base[:start] + ".amdgpu_metadata\n" + document + "\n\t" + base[end:]


@pytest.mark.parametrize("document", [
    "---\namdhsa.kernels: 5\n...",
    "---\namdhsa.kernels: [5, 'x', [1]]\n...",
    "--- 7\n...",
    "---\namdhsa.kernels:\n  - .name: gemm_naive\n    .args: 5\n    .reqd_workgroup_size: 7\n"
    "    .max_flat_workgroup_size: big\n...",
    "---\namdhsa.kernels:\n  - .name: gemm_naive\n    .args: [5, {.offset: x, .size: -1}, {.offset: 99999999999999}]\n"
    "    .reqd_workgroup_size: [a, b, c]\n    .private_segment_fixed_size: -4\n...",
    "---\namdhsa.kernels:\n  - .name: [1, 2]\n    .symbol: 5\n...",
])
def test_metadata_of_the_wrong_shape_is_ignored_field_by_field(document):
    text = _with_metadata(document)
    check_all(text)  # no exception
    analysis = Analysis.from_source(parse_text(text, "k.s"))
    from isalint.validate.emu import kernel_args

    for kernel in analysis.program.kernels:
        for arg in kernel_args(kernel):
            assert 0 <= arg.offset < 1 << 32 and 0 <= arg.size < 1 << 32


def test_wrongly_shaped_fields_are_dropped_and_good_ones_kept():
    text = _with_metadata("---\namdhsa.kernels:\n  - .name: kernel\n    .args: [5, {.offset: 8, .size: x}]\n"
                          "    .max_flat_workgroup_size: 256\n    .reqd_workgroup_size: 7\n...")
    kernel = Analysis.from_source(parse_text(text, "k.s")).program.kernels[0]
    assert kernel.metadata == {".name": "kernel", ".args": [{".offset": 8}], ".max_flat_workgroup_size": 256}


@pytest.mark.parametrize("document", [
    "---\namdhsa.kernels: " + "[" * 30000 + "\n...",
    "---\namdhsa.kernels:\n  - .name: " + "[" * 30000 + "]" * 30000 + "\n...",
    "---\n" + "".join(" " * k + f"k{k}:\n" for k in range(3000)) + " " * 3000 + "x: 1\n...",
    "---\namdhsa.kernels:\n" + "- " * 5000 + "x\n...",
])
def test_deeply_nested_metadata_is_not_parsed(tmp_path, document):
    # in a child process: the C YAML loader used to crash the interpreter on these
    f = tmp_path / "deep.s"
    f.write_text(_with_metadata(document))
    code, out, err = run("check", "--format", "json", f)
    assert code in (0, 1), err
    json.loads(out)
    assert err == ""
