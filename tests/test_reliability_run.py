"""validate/run refuse what they cannot do, before numpy allocates or Python evaluates anything:
sizes beyond the machine's memory, launch expressions outside a small grammar."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from conftest import KERNELS, examples
from hypothesis import given, settings
from hypothesis import strategies as st

from isalint.validate.gemm import GemmError, geometry
from isalint.validate.launch_expr import ExprError, evaluate

NAIVE = KERNELS / "gemm_naive.s"


def run(*args):
    proc = subprocess.run([sys.executable, "-m", "isalint", *map(str, args)], capture_output=True, timeout=300)
    return proc.returncode, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")


@pytest.mark.parametrize("expr, n, value", [
    ("ceil(N/16)", 100, 7), ("ceil(N/16)", 96, 6), ("N/32", 96, 3), ("N/32", 100, 3), ("N/128", 4096, 32),
    ("(N + 63) / 64", 65, 2), ("2*N - 1", 5, 9), ("-N + 10", 3, 7), ("ceil(ceil(N/2)/2)", 9, 3),
])
def test_launch_expressions(expr, n, value):
    assert evaluate(expr, n) == value


def test_every_fixture_grid_expression_is_in_the_grammar():
    entries = json.loads((KERNELS / "kernels.json").read_text())["kernels"]
    for name, entry in entries.items():
        n = max(entry.get("min_n", 1), entry.get("n_multiple", 1)) * 4
        gx, gy = (evaluate(e, n) for e in entry["grid"].split(","))
        assert geometry(KERNELS / name, n).grid == (gx, gy, 1)
        assert gx >= 1 and gy >= 1


@pytest.mark.parametrize("expr, message", [
    ("9**9**9**9", "unexpected '*'"), ("N/0", "division by zero"), ("N/(N-N)", "division by zero"),
    ("__import__('os')", "cannot read '__import__"), ("(" * 40 + "N" + ")" * 40, "nested deeper than 16"),
    ("1" * 13, "number longer than 12 digits"), ("N" + "+N" * 200, "longer than 200 characters"),
    ("ceil N", "expected '('"), ("N +", "unexpected end of expression"), ("N N", "unexpected 'N'"),
])
def test_expressions_outside_the_grammar_are_refused(expr, message):
    with pytest.raises(ExprError, match=message.replace("(", "\\(").replace("*", "\\*")):
        evaluate(expr, 64)


@settings(max_examples=examples(500), deadline=None)
@given(st.text(alphabet="N0123456789+-*/() ceil,x.", max_size=40), st.integers(1, 1 << 20))
def test_any_expression_is_a_value_or_an_expr_error(expr, n):
    try:
        value = evaluate(expr, n)
    except ExprError:
        return
    assert isinstance(value, int)


def _kernel_with_entry(tmp_path, **changes):
    shutil.copy(NAIVE, tmp_path / "gemm_naive.s")
    entry = json.loads((KERNELS / "kernels.json").read_text())["kernels"]["gemm_naive.s"]
    entry.update(changes)
    (tmp_path / "kernels.json").write_text(json.dumps({"kernels": {"gemm_naive.s": entry}}))
    return tmp_path / "gemm_naive.s"


@pytest.mark.parametrize("changes, message", [
    ({"n_multiple": 0}, "n_multiple must be an integer of at least 1, not 0"),
    ({"n_multiple": "4"}, "n_multiple must be an integer of at least 1, not '4'"),
    ({"grid": "N/0,N"}, "grid expression 'N/0': division by zero"),
    ({"grid": "9**9**9**9,1"}, "grid expression '9**9**9**9': unexpected '*'"),
    ({"grid": "N-N,1"}, "grid expression 'N-N' is 0 for N=64; a grid dimension is 1 to"),
    ({"grid": "N"}, "grid must be two expressions 'X,Y'"),
    ({"block": [16, 16]}, "block must be [X, Y, Z], each 1 to 1024"),
    ({"block": [0, 16, 1]}, "block must be [X, Y, Z], each 1 to 1024"),
    ({"abi": "fft"}, "abi must be one of gemm, gemm_f16, transpose, not 'fft'"),
])
def test_bad_kernels_json_entries_are_gemm_errors(tmp_path, changes, message):
    path = _kernel_with_entry(tmp_path, **changes)
    with pytest.raises(GemmError) as exc:
        geometry(path, 64)
    assert str(exc.value).startswith("kernels.json, gemm_naive.s: " + message)


def test_kernels_json_of_the_wrong_shape_is_no_entry(tmp_path):
    shutil.copy(NAIVE, tmp_path / "gemm_naive.s")
    for doc in ("[1, 2]", '{"kernels": [1]}', '{"kernels": {"gemm_naive.s": 5}}', "[" * 100000):
        (tmp_path / "kernels.json").write_text(doc)
        assert geometry(tmp_path / "gemm_naive.s", 128).source != "kernels.json"


def test_division_by_zero_in_kernels_json_is_exit_2(tmp_path):
    path = _kernel_with_entry(tmp_path, grid="N/0,N")
    code, out, err = run("run", path, "--gemm", 64)
    assert code == 2
    assert err == f"isalint: kernels.json, {path.name}: grid expression 'N/0': division by zero\n"


@pytest.mark.parametrize("args, message", [
    (["--gemm", "99968"], "isalint: --gemm 99968 (three 99968 x 99968 fp32 matrices, their copies in the emulator "
                          "and the float64 reference) needs about 1.7 TiB of memory; "),
    (["--gemm", "2147483648"], "isalint: --gemm 2147483648: N is passed as a 32-bit int: at most 2147483647\n"),
    (["--arg", "a=f32:99999999999", "--grid", "1", "--block", "32"],
     "isalint: --arg buffers of 399999999996 bytes (with their copies in the emulator) needs about 3.6 TiB of "
     "memory; "),
])
def test_runs_larger_than_memory_are_refused_with_the_figure(tmp_path, args, message):
    # a kernel whose 32-bit index limit isalint does not know (kernel5's, N <= 46333, is said first) and
    # without the kernels.json that bounds N
    path = tmp_path / "k.s"
    shutil.copy(KERNELS / "gemm_lds_tiled.s", path)
    code, out, err = run("run", path, *args)
    assert code == 2
    assert err.startswith(message) and err.count("\n") == 1


def test_validate_refuses_a_gemm_larger_than_memory(tmp_path):
    pytest.importorskip("numpy")
    from isalint.validate.toolchain import ToolchainNotFound, find_toolchain

    try:
        find_toolchain(need_linker=False)
    except ToolchainNotFound:
        pytest.skip("validate assembles both files first: no gfx11 assembler here")
    path = tmp_path / "k.s"
    shutil.copy(KERNELS / "gemm_lds_tiled.s", path)
    code, out, err = run("validate", path, path, "--gemm", 99968)
    assert code == 2 and "needs about 1.7 TiB of memory" in err


def test_launch_of_ten_billion_workgroups_is_refused(kernel5):
    args = ["--grid", "100000,100000", "--block", "128"] + [f"--arg=arg{k}=f32:16" for k in range(3)] + \
        ["--arg", "arg3=1", "--arg", "arg4=1.0", "--arg", "arg5=0.0"]
    code, out, err = run("run", kernel5, *args)
    assert code == 2
    assert "a launch of 10000000000 workgroups (0 bytes of scratch) needs about 1.8 TiB of memory" in err


@pytest.mark.parametrize("directive, message", [
    (".amdhsa_next_free_vgpr 100000", ".amdhsa_next_free_vgpr 100000: a gfx11 wave has 256 VGPRs"),
    (".amdhsa_group_segment_fixed_size 99999999", ".amdhsa_group_segment_fixed_size 99999999: a workgroup has at "
                                                  "most 64 KiB of LDS"),
])
def test_descriptor_beyond_the_hardware_is_a_launch_error(tmp_path, directive, message):
    key = directive.split()[0]
    text = "".join(directive + "\n" if line.strip().startswith(key + " ") else line
                   for line in NAIVE.read_text().splitlines(True))
    (tmp_path / "k.s").write_text(text)
    code, out, err = run("run", tmp_path / "k.s", "--gemm", 16, "--grid", "1,1", "--block", "16,16")
    assert code == 2
    assert message in err


def test_gemm_estimate_allows_the_sizes_validation_uses():
    from isalint.validate.memory_budget import gemm_bytes

    assert gemm_bytes(256) < 16 << 20 and gemm_bytes(4096) < 4 << 30
