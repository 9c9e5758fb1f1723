"""The command-line contract: exit codes, output formats, configuration, suppressions, bad input."""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest
from conftest import KERNEL5, KERNELS, REPO

BAD_FMAC = "v_fmac_f32_e32 v[1:2], v3, v4\n"  # PARSE001: vdst is one register


def run(*args, cwd=None, input_bytes=None):
    proc = subprocess.run([sys.executable, "-m", "isalint", *map(str, args)], capture_output=True, cwd=cwd,
                          input=input_bytes, timeout=300)
    return proc.returncode, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")


def test_clean_file_exits_zero(tmp_path):
    f = tmp_path / "ok.s"
    f.write_text("v_mov_b32 v1, v2\ns_endpgm\n")
    code, out, err = run("check", "--select", "PARSE001", f)
    assert code == 0, out + err
    assert "no findings" in out


def test_findings_exit_one_with_caret(tmp_path):
    f = tmp_path / "bad.s"
    f.write_text("v_mov_b32 v1, v2\n  " + BAD_FMAC)
    code, out, _ = run("check", "--select", "PARSE001", "--no-color", f)
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith(f"{f}:2:18: PARSE001 error: ")
    # the source line under a line-number gutter, the offending operand underlined
    src = next(ln for ln in lines if ln.startswith(" 2 | "))
    caret = lines[lines.index(src) + 1]
    assert src.endswith("  " + BAD_FMAC.strip())
    assert caret.index("^") == src.index("v[1:2]") and caret.count("^") == len("v[1:2]")
    # wrapped at 100 columns (the location of the first line is never broken)
    assert all(len(ln) <= 100 for ln in lines[1:]) and len(lines[0]) <= max(100, len(str(f)) + 70)


def test_json_format_keys(tmp_path):
    f = tmp_path / "bad.s"
    f.write_text(BAD_FMAC + "v_fmac_f23 v1, v2, v3\n")
    code, out, _ = run("check", "--select", "PARSE001", "--format", "json", f)
    assert code == 1
    data = json.loads(out)
    assert [d["line"] for d in data] == [1, 2]
    assert set(data[0]) == {"path", "line", "column", "end_line", "end_column", "code", "severity", "message", "fix",
                            "notes", "sites", "cost"}
    assert data[1]["message"].startswith("unknown instruction 'v_fmac_f23'")
    assert data[0]["severity"] == "error" and data[0]["fix"] is None


def test_sarif_and_github_formats(tmp_path):
    f = tmp_path / "bad.s"
    f.write_text(BAD_FMAC)
    code, out, _ = run("check", "--select", "PARSE001", "--format", "sarif", f)
    sarif = json.loads(out)
    assert code == 1 and sarif["version"] == "2.1.0"
    result = sarif["runs"][0]["results"][0]
    assert result["ruleId"] == "PARSE001"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 1
    code, out, _ = run("check", "--select", "PARSE001", "--format", "github", f)
    assert out.startswith(f"::error file={f},line=1,col=16,")


def test_inline_suppressions(tmp_path):
    f = tmp_path / "s.s"
    f.write_text("; isalint: disable-next-line=PARSE001\n" + BAD_FMAC
                 + BAD_FMAC.rstrip() + " ; isalint: disable=PARSE001\n" + BAD_FMAC)
    code, out, _ = run("check", "--select", "PARSE001", "--format", "json", f)
    assert [d["line"] for d in json.loads(out)] == [4]


def test_pyproject_configuration(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.isalint]\nignore = ["PARSE001"]\n')
    sub = tmp_path / "k"
    sub.mkdir()
    f = sub / "bad.s"
    f.write_text(BAD_FMAC)
    code, out, _ = run("check", f)
    assert code == 0, out
    code, _, _ = run("check", "--select", "PARSE001", f)  # the command line wins over the file
    assert code == 1


def test_directories_are_searched(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.s").write_text(BAD_FMAC)
    (tmp_path / "a" / "y.asm").write_text(BAD_FMAC)
    (tmp_path / "a" / "z.txt").write_text(BAD_FMAC)
    code, out, _ = run("check", "--select", "PARSE001", "--format", "json", tmp_path)
    assert sorted(os.path.basename(d["path"]) for d in json.loads(out)) == ["x.s", "y.asm"]


def test_unknown_rule_code_is_a_usage_error(tmp_path):
    f = tmp_path / "ok.s"
    f.write_text("s_endpgm\n")
    code, _, err = run("check", "--select", "NOPE999", f)
    assert code == 2 and "NOPE999" in err


# ---- bad input: one clear line, exit 2, never a traceback -----------------------------------

def _assert_clean_error(code, out, err, path, expect):
    assert code == 2, (out, err)
    assert "Traceback" not in out + err
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1, err
    assert str(path) in lines[0] and expect in lines[0], lines[0]


def test_random_bytes(tmp_path):
    f = tmp_path / "rand.s"
    rng = random.Random(7)
    f.write_bytes(bytes(rng.randrange(256) for _ in range(4096)))
    code, out, err = run("check", f)
    _assert_clean_error(code, out, err, f, "binary")


def test_random_bytes_without_nul(tmp_path):
    rng = random.Random(11)
    f = tmp_path / "rand2.s"
    f.write_bytes(bytes(rng.randrange(1, 256) for _ in range(4096)))
    code, out, err = run("check", f)
    _assert_clean_error(code, out, err, f, "binary")


def test_non_utf8_garbage(tmp_path):
    f = tmp_path / "latin1.s"
    f.write_bytes("caf\xe9 cr\xe8me br\xfbl\xe9e\n".encode("latin-1") * 5)
    code, out, err = run("check", f)
    _assert_clean_error(code, out, err, f, "UTF-8")


def test_non_utf8_comment_in_real_code_is_a_diagnostic(tmp_path):
    f = tmp_path / "k.s"
    f.write_bytes(b"v_mov_b32 v1, v2\n; r\xe9sum\xe9\ns_endpgm\n")
    code, out, _ = run("check", "--format", "json", "--select", "PARSE001", f)
    assert code == 1 and json.loads(out)[0]["line"] == 2


def test_wrong_target(tmp_path):
    f = tmp_path / "mi200.s"
    f.write_text('\t.amdgcn_target "amdgcn-amd-amdhsa--gfx90a"\n\tv_mov_b32 v1, v2\n')
    code, out, err = run("check", f)
    _assert_clean_error(code, out, err, f"{f}:1", "gfx90a")


def test_prose_is_not_assembly(tmp_path):
    f = tmp_path / "notes.s"
    f.write_text("Dear diary,\ntoday the kernel was slow.\n")
    code, out, err = run("check", f)
    _assert_clean_error(code, out, err, f, "no RDNA3 instruction")


def test_empty_and_missing_files(tmp_path):
    # no code is no finding: an empty file, blank lines, comments only
    for name, text in (("empty.s", ""), ("blank.s", "\n\n"), ("notes.s", "; nothing yet\n")):
        f = tmp_path / "dir" / name
        f.parent.mkdir(exist_ok=True)
        f.write_text(text)
        code, out, err = run("check", f)
        assert (code, out, err) == (0, "1 file checked: no findings\n", ""), name
    (tmp_path / "dir" / "k.s").write_bytes((KERNELS / "gemm_lds_padded.s").read_bytes())
    code, out, err = run("check", tmp_path / "dir")
    assert code == 1 and err == "" and out.splitlines()[-1].startswith("4 files checked: ")
    _assert_clean_error(*run("check", tmp_path / "missing.s"), tmp_path / "missing.s", "no such file")


def test_a_kernel_with_an_empty_body_is_a_kernel():
    """clang's output for a kernel whose code is unreachable: symbol, descriptor and metadata, no instruction."""
    empty = REPO / "fixtures" / "inputs" / "empty_kernel.s"
    assert "never:" in empty.read_text() and "s_endpgm" not in empty.read_text()
    assert run("check", empty) == (0, "1 file checked: no findings\n", "")
    code, out, err = run("dump", "--format", "json", empty)
    assert (code, json.loads(out), err) == (0, [], "")
    code, _, err = run("fix", "--metadata", "--diff", empty)
    assert code == 0 and "every count already matches the code" in err


def test_truncated_kernel_is_analyzed(kernel5, tmp_path):
    data = kernel5.read_bytes()
    f = tmp_path / "trunc.s"
    f.write_bytes(data[: len(data) // 3] + b"\tv_fmac_f32_e32 v1")  # cut mid-instruction
    code, out, err = run("check", "--format", "json", f)
    assert "Traceback" not in err
    assert code in (0, 1)
    found = json.loads(out)
    assert any(d["code"] == "PARSE001" and d["line"] == data[: len(data) // 3].count(b"\n") + 1 for d in found)


def test_crlf_kernel(kernel5, tmp_path):
    f = tmp_path / "crlf.s"
    f.write_bytes(kernel5.read_bytes().replace(b"\n", b"\r\n"))
    code_crlf, out_crlf, _ = run("check", "--format", "json", f)
    code_lf, out_lf, _ = run("check", "--format", "json", kernel5)
    strip = lambda out: [(d["line"], d["column"], d["code"], d["message"]) for d in json.loads(out)]  # noqa: E731
    assert code_crlf == code_lf and strip(out_crlf) == strip(out_lf)


def test_hundred_thousand_lines(tmp_path):
    f = tmp_path / "big.s"
    body = "".join(f"\tv_add_nc_u32_e32 v{i % 200}, v{(i * 7) % 200}, v{(i * 3) % 200}\n" for i in range(100_000))
    f.write_text(body + "\ts_endpgm\n")
    code, out, err = run("check", "--select", "PARSE001", f)
    assert code == 0 and "Traceback" not in err


# ---- dump / graph / rules / explain on the real kernel -----------------------------------------

def test_dump_and_graph_on_kernel5(kernel5):
    code, out, _ = run("dump", "--format", "json", kernel5)
    rows = json.loads(out)
    assert code == 0
    hot = [r for r in rows if r["loop"] == ".LBB0_9"]
    assert sum(r["opcode"] == "ds_load_b128" for r in hot) == 6
    assert sum("fmac" in r["opcode"] for r in hot) == 66  # 62 VOPD lines + 4 single FMAs
    assert {r["loop_depth"] for r in hot} == {2}
    fmac = next(r for r in hot if r["opcode"] == "v_fmac_f32_e32")
    assert fmac["defs"] == ["v124"] and fmac["uses"][:3] == ["v124", "v184", "v192"]
    code, out, _ = run("graph", "--hot", "--format", "json", kernel5)
    graph = json.loads(out)
    assert code == 0 and graph["directed"] and len(graph["nodes"]) == len(hot)
    kinds = {e["kind"] for e in graph["links"]}
    assert {"RAW", "WAR", "WAITS_FOR"} <= kinds
    raw = [e for e in graph["links"] if e["kind"] == "RAW" and "v184" in e["regs"]]
    assert raw, "the FMAs read v184 from the first ds_load_b128"
    code, out, _ = run("graph", "--loop", ".LBB0_9", "--format", "dot", kernel5)
    assert code == 0 and out.startswith("digraph") and "WAITS_FOR lgkmcnt" in out


def test_rules_and_explain():
    code, out, _ = run("rules", "--format", "json")
    codes = {r["code"] for r in json.loads(out)}
    assert code == 0 and "PARSE001" in codes
    from click.testing import CliRunner

    from isalint.cli import cli

    for c in codes:  # in this process: one child per rule would cost a second of interpreter starts
        result = CliRunner().invoke(cli, ["explain", c])
        out = result.output
        assert result.exit_code == 0 and "## What it finds" in out and "## Why it matters" in out, c
        assert "## Severity" in out and "worklog" not in out, c
    code, _, err = run("explain", "XYZ999")
    assert code == 2 and "unknown rule" in err


def test_rules_through_a_pipe_is_one_row_per_line():
    code, out, _ = run("rules")  # stdout is a pipe here
    rules = json.loads(run("rules", "--format", "json")[1])
    lines = out.splitlines()
    assert code == 0 and len(lines) == 1 + len(rules)
    assert lines[0].split() == ["code", "name", "severity", "fix", "summary"]
    for line, rule in zip(lines[1:], rules):
        assert line.split()[:4] == [rule["code"], rule["name"], rule["severity"], rule["fix"] or "-"]
        assert line.endswith("  " + rule["summary"])


@pytest.mark.parametrize("path", sorted(KERNELS.rglob("*.s")) + ([KERNEL5] if KERNEL5.is_file() else []),
                         ids=lambda p: p.name)
def test_no_parse_problems_on_real_compiler_output(path):
    code, out, err = run("check", "--select", "PARSE001", "--format", "json", path)
    assert code == 0, out[:2000] + err
