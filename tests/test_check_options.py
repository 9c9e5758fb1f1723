"""``isalint check`` options a ruff user reaches for, configuration keys, suppressions and the text
output, on the project's fixture kernels (and kernel5 when present)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from conftest import KERNELS

NAIVE = KERNELS / "gemm_naive.s"
K6_SHARED = KERNELS / "kernel6_style" / "kernel6_shared_banks.s"
TRANSPOSE = KERNELS / "lds_transpose_conflict.s"
HOST_X86 = """\t.text
\t.file\t"gemm.hip"
\t.globl\t_Z19__device_stub__gemmPfS_S_iff
\t.p2align\t4, 0x90
_Z19__device_stub__gemmPfS_S_iff:
\t.cfi_startproc
\tpushq\t%rbp
\tmovq\t%rsp, %rbp
\tsubq\t$160, %rsp
\tcallq\t__hipPopCallConfiguration@PLT
\tpopq\t%rbp
\tretq
\t.cfi_endproc
"""


def run(*args, cwd=None, input_bytes=None, env=None):
    proc = subprocess.run([sys.executable, "-m", "isalint", *map(str, args)], capture_output=True, cwd=cwd,
                          input=input_bytes, timeout=300, env=env)
    return proc.returncode, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")


def findings(out: str) -> list[dict]:
    return json.loads(out)


def test_statistics_counts_findings_and_sites_per_rule():
    code, out, _ = run("check", "--statistics", K6_SHARED)
    assert code == 1
    rows = [ln.split() for ln in out.splitlines() if "BANK001" in ln]
    # one aggregated finding covering the loop's 32 stalled instructions
    assert rows == [["1", "(32", "sites)", "BANK001", "warning", "vgpr-bank-conflict"]]
    # the generated loop's counter compare follows its add with no SALU_CYCLE_1 hint: 1 cycle of a
    # 76-cycle iteration, a small stall, info
    assert [ln.split() for ln in out.splitlines() if "DELAY001" in ln] == [
        ["1", "DELAY001", "info", "missing-delay-alu"]]
    assert "1 file checked: 5 findings (0 errors, 1 warning, 4 info)" in out


def test_exit_zero_and_fail_on_and_min_severity():
    assert run("check", "--exit-zero", K6_SHARED)[0] == 0
    assert run("check", "--fail-on", "error", K6_SHARED)[0] == 0
    # --min-severity hides (and does not count) what is below it
    code, out, _ = run("check", "--format", "json", "--min-severity", "warning", TRANSPOSE)
    assert code == 1 and {d["severity"] for d in findings(out)} == {"warning"}
    code, out, _ = run("check", "--min-severity", "error", TRANSPOSE)
    assert code == 0 and "no findings" in out


def test_info_is_a_note_unless_fail_on_info():
    # OCC001 alone: an info finding, shown, and the exit code 0 unless asked
    code, out, _ = run("check", "--select", "OCC001", K6_SHARED)
    assert code == 0 and "OCC001 info" in out and "1 finding (0 errors, 0 warnings, 1 info)" in out
    assert run("check", "--select", "OCC001", "--fail-on", "info", K6_SHARED)[0] == 1
    # a warning still fails by default
    assert run("check", "--select", "BANK001", K6_SHARED)[0] == 1


def test_min_severity_says_how_many_findings_it_hid():
    code, out, _ = run("check", "--no-cache", "--min-severity", "warning", K6_SHARED)
    assert out.splitlines()[-1] == "1 file checked: 1 finding (0 errors, 1 warning); 4 info hidden by " \
                                   "--min-severity warning"
    for cached in ((), ("--no-cache",)):  # the result cache's printed reports, and checking afresh
        code, out, _ = run("check", *cached, "--min-severity", "error", "--select", "OCC001,BANK001", K6_SHARED)
        assert code == 0
        assert out.splitlines()[-1] == "1 file checked: no findings; 1 warning, 1 info hidden by --min-severity error"
    code, out, _ = run("check", "--statistics", "--min-severity", "error", K6_SHARED)
    assert out.splitlines()[-1].endswith("; 1 warning, 4 info hidden by --min-severity error")


def test_statistics_in_json():
    code, out, _ = run("check", "--statistics", "--format", "json", K6_SHARED)
    rows = json.loads(out)
    assert code == 1
    assert {r["code"]: (r["count"], r["sites"], r["severity"]) for r in rows}["BANK001"] == (1, 32, "warning")
    assert [r["count"] for r in rows] == sorted((r["count"] for r in rows), reverse=True)
    assert set(rows[0]) == {"code", "name", "count", "sites", "severity", "fix"}
    assert {r["code"]: r["fix"] for r in rows}["BANK001"] == "--dual-fmac"
    code, out, _ = run("check", "--statistics", "--format", "json", "--select", "LDS001", K6_SHARED)
    assert code == 0 and json.loads(out) == []


def test_rule_names_work_wherever_codes_do():
    by_name = run("check", "--format", "json", "--select", "lds-bank-conflict", TRANSPOSE)
    by_code = run("check", "--format", "json", "--select", "LDS001", TRANSPOSE)
    assert by_name == by_code and findings(by_name[1])
    code, out, _ = run("check", "--format", "json", "--ignore", "lds-bank-conflict,occupancy", TRANSPOSE)
    assert code == 0 and findings(out) == []
    code, out, _ = run("explain", "illegal-vopd-pair")
    assert code == 0 and out.startswith("DUAL001 (illegal-vopd-pair)") and "## Severity" in out
    code, _, err = run("check", "--select", "no-such-rule", TRANSPOSE)
    assert code == 2 and "no-such-rule" in err


def test_extend_select_adds_to_the_configured_selection(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.isalint]\nselect = ["OCC001"]\n')
    kernel = tmp_path / "k.s"
    kernel.write_bytes(K6_SHARED.read_bytes())
    codes = {d["code"] for d in findings(run("check", "--format", "json", kernel)[1])}
    assert codes == {"OCC001"}
    codes = {d["code"] for d in findings(run("check", "--format", "json", "--extend-select", "BANK", kernel)[1])}
    assert codes == {"OCC001", "BANK001"}


def test_output_file_and_quiet(tmp_path):
    report = tmp_path / "report.txt"
    code, out, _ = run("check", "--output-file", report, "--color", TRANSPOSE)
    assert code == 1 and out == ""
    text = report.read_text()
    assert "LDS001 warning:" in text and "\x1b[" not in text and "file checked" in text
    code, out, _ = run("check", "-q", TRANSPOSE)
    assert code == 1 and "LDS001" in out and "file checked" not in out


def test_config_option_replaces_discovery(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.isalint]\nselect = ["OCC001"]\n')
    kernel = tmp_path / "k.s"
    kernel.write_bytes(TRANSPOSE.read_bytes())
    other = tmp_path / "isalint.toml"
    other.write_text('select = ["LDS001"]\n[severity]\nlds-bank-conflict = "error"\n')
    data = findings(run("check", "--format", "json", "--config", other, kernel)[1])
    assert {d["code"] for d in data} == {"LDS001"} and {d["severity"] for d in data} == {"error"}
    code, _, err = run("check", "--config", tmp_path / "missing.toml", kernel)
    assert code == 2 and "missing.toml" in err


def test_per_file_ignores_and_per_rule_severity(tmp_path):
    (tmp_path / "legacy").mkdir()
    for name in ("legacy/old.s", "new.s"):
        (tmp_path / name).write_bytes(K6_SHARED.read_bytes())
    (tmp_path / "pyproject.toml").write_text(
        '[tool.isalint]\nselect = ["BANK", "OCC"]\nper-file-ignores = {"legacy/*.s" = ["vgpr-bank-conflict"]}\n'
        '[tool.isalint.severity]\nOCC001 = "warning"\n')
    data = findings(run("check", "--format", "json", tmp_path)[1])
    by_file = {}
    for d in data:
        by_file.setdefault(os.path.basename(d["path"]), set()).add((d["code"], d["severity"]))
    assert by_file == {"old.s": {("OCC001", "warning")}, "new.s": {("BANK001", "warning"), ("OCC001", "warning")}}


def test_stdin_with_a_filename_for_the_report_and_the_configuration(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.isalint]\nper-file-ignores = {"skip/*.s" = ["ALL"]}\n')
    data = TRANSPOSE.read_bytes()
    code, out, _ = run("check", "--format", "json", "-", "--stdin-filename", "kern/t.s", cwd=tmp_path,
                       input_bytes=data)
    assert code == 1 and {d["path"] for d in findings(out)} == {"kern/t.s"}
    code, out, _ = run("check", "-", "--stdin-filename", "skip/t.s", cwd=tmp_path, input_bytes=data)
    assert code == 0 and "no findings" in out
    code, out, _ = run("check", "-", input_bytes=data)
    assert code == 1 and "<stdin>:" in out
    code, _, err = run("check", "--stdin-filename", "x.s", TRANSPOSE)
    assert code == 2 and "'-'" in err


def test_a_file_given_twice_is_checked_once_and_an_input_error_has_no_summary(tmp_path):
    code, out, _ = run("check", "--format", "json", TRANSPOSE, str(TRANSPOSE).replace("/kernels/", "/kernels/./"))
    assert code == 1 and len({d["line"] for d in findings(out)}) == len(findings(out))
    code, out, err = run("check", tmp_path / "nope.s")
    assert code == 2 and out == "" and "nope.s:1: no such file" in err


def test_host_assembly_is_skipped_and_verbose_says_so(tmp_path):
    host = tmp_path / "gemm-host-x86_64-unknown-linux-gnu.s"
    host.write_text(HOST_X86)
    code, out, err = run("check", host, NAIVE)
    assert code == 0 and "1 file checked, 1 skipped (not AMDGPU assembly)" in out and err == ""
    code, out, err = run("check", "-v", host)
    assert code == 0 and f"skipped {host}: x86-64 assembly, not AMDGPU code" in err
    # other commands need AMDGPU code: for them it is an input error
    code, _, err = run("dump", host)
    assert code == 2 and "x86-64 assembly" in err


def test_no_color_and_force_color():
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    code, out, _ = run("check", TRANSPOSE, env=dict(env, FORCE_COLOR="1"))
    assert "\x1b[" in out
    code, out, _ = run("check", TRANSPOSE, env=dict(env, FORCE_COLOR="1", NO_COLOR="1"))
    assert "\x1b[" not in out
    code, out, _ = run("check", "--color", TRANSPOSE, env=dict(env, NO_COLOR="1"))
    assert "\x1b[" in out


def test_unused_and_file_level_suppressions(tmp_path):
    text = K6_SHARED.read_text()
    first = next(n for n, ln in enumerate(text.splitlines()) if "v_dual_fmac" in ln)
    lines = text.splitlines()
    lines[first - 1] += " ; isalint: disable-file=vgpr-bank-conflict"
    lines[first] += " ; isalint: disable=DUAL001"
    kernel = tmp_path / "k.s"
    kernel.write_text("\n".join(lines) + "\n")
    data = findings(run("check", "--format", "json", "--select", "BANK,DUAL,SUPP", kernel)[1])
    assert [(d["code"], d["line"]) for d in data] == [("SUPP001", first + 1)]
    assert "no DUAL001 finding on this line" in data[0]["message"]


def test_watch_checks_again_when_the_file_changes(tmp_path):
    kernel = tmp_path / "k.s"
    kernel.write_bytes(NAIVE.read_bytes())
    proc = subprocess.Popen([sys.executable, "-m", "isalint", "check", "--watch", "--no-color", kernel],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(proc, "no findings")
        kernel.write_text(NAIVE.read_text() + "\tv_fmac_f32_e32 v[1:2], v3, v4\n")
        _wait_for(proc, "PARSE001 error")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _wait_for(proc, text: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    seen = ""
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            pytest.fail(f"isalint check --watch ended: {seen}{proc.stderr.read()}")
        seen += line
        if text in line:
            return
    pytest.fail(f"no {text!r} within {timeout}s: {seen}")


def test_kernel5_report_is_short_and_loud_where_it_matters(kernel5):
    code, out, _ = run("check", "--format", "json", kernel5)
    data = findings(out)
    assert code == 1
    by = sorted((d["code"], d["severity"], len(d["sites"])) for d in data)
    # 83 findings (58 warnings) before costs were weighed; now one per loop and rule
    assert by == [("BANK001", "info", 4), ("BANK001", "info", 18), ("BANK001", "warning", 49),
                  ("DUAL002", "info", 6), ("DUAL002", "warning", 4), ("GMEM001", "warning", 0),
                  ("OCC001", "info", 0)]
    code, out, _ = run("check", "--min-severity", "warning", "--no-color", kernel5)
    heads = [ln for ln in out.splitlines() if ln.startswith(str(kernel5))]
    assert [h.split()[1:3] for h in heads] == [["GMEM001", "warning:"], ["DUAL002", "warning:"],
                                               ["BANK001", "warning:"]]
    # wrapped at 100 columns; a finding's first line holds the path, however long the checkout's is
    # (its message keeps at least 40 columns)
    assert len(out.splitlines()) < 60 and max(len(ln) for ln in out.splitlines() if ln not in heads) <= 100
    for h in heads:  # `path:line:col: CODE severity: ` and at least 40 columns of message, else 100 in all
        lead = len(h.split(" ")[0]) + len(h.split(" ")[1]) + len(h.split(" ")[2]) + 3
        assert len(h) <= max(100, lead + 40), h


def test_version_is_the_projects():
    import re
    import subprocess
    import sys
    from pathlib import Path

    declared = re.search(r'^version = "([^"]+)"', (Path(__file__).parent.parent / "pyproject.toml").read_text(),
                         re.M).group(1)
    out = subprocess.run([sys.executable, "-m", "isalint", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == f"isalint, version {declared}"


def test_json_items_are_what_the_json_module_writes():
    """The JSON report's items, written without the json module's slow indented encoder, are its output
    byte for byte: on the findings of the fixture kernels (sites, costs, notes) and on odd values."""
    from isalint import rules as registry
    from isalint.lint.files import check_file
    from isalint.diagnostics import Diagnostic, Site
    from isalint.report.findings import render_json_items

    def reference(ds):
        return ",\n".join("  " + json.dumps(d.to_json(), indent=2).replace("\n", "\n  ") for d in ds)

    found = []
    for path in sorted(KERNELS.glob("*.s")):
        found += check_file(str(path), registry.available(), "gfx1100", registry.available()).findings
    assert sum(len(d.sites) for d in found) > 100 and any(d.cost for d in found)
    assert render_json_items(found) == reference(found)
    odd = Diagnostic("p\u00e9\"x\\", 1, 2, 3, 4, "X001", "info", "m\u2603\n\t\x00", "--fix", ["n\u00fcte"],
                     [Site(5, 6, 7, "s\u00e9"), Site(8, 9, 10, "")],
                     {"a": float("nan"), "b": 1e300, "c": -0.0, "d": True, "e": None, "f": [], "g": {},
                      "h": [1, [2, {}], (3,)], 1: 2, None: 3, 2.5: 1, "i": float("inf"), "j": -float("inf"),
                      "k": False, "l": 1.0, "m": 10 ** 30})
    odd.kernel = "k"
    assert render_json_items([odd, odd]) == reference([odd, odd])
    assert render_json_items([]) == reference([]) == ""
