"""Exit codes and messages under faults: an unforeseen exception is one line naming the file and
exit 2, Ctrl-C is exit 130, JSON stays JSON."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest
from conftest import KERNELS

LDS_NO_LOOP = KERNELS / "lds_transpose_conflict.s"
NAIVE = KERNELS / "gemm_naive.s"


def run(*args, prelude: str = "", timeout=120):
    """``isalint ARGS`` in a child process; ``prelude`` runs first (to inject a fault)."""
    code = f"{prelude}\nfrom isalint.cli import main\nmain({[str(a) for a in args]!r})"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=timeout)
    return proc.returncode, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")


BOOM = "import isalint.rules.wait001 as rule\ndef check(analysis):\n    raise {exc}\nrule.check = check\n"


def test_internal_error_is_one_line_naming_the_file(tmp_path):
    code, out, err = run("check", NAIVE, prelude=BOOM.format(exc="KeyError('scratch:176')"))
    assert code == 2
    assert err == (f"isalint: {NAIVE}: internal error: KeyError: 'scratch:176' (a bug in isalint; "
                   "ISALINT_TRACEBACK=1 shows the traceback)\n")


def test_internal_error_keeps_json_valid_and_checks_the_other_files(tmp_path):
    bad = tmp_path / "bad.s"
    bad.write_text("v_fmac_f32_e32 v[1:2], v3, v4\ns_endpgm\n")
    good = tmp_path / "good.s"
    good.write_text("v_fmac_f32_e32 v[1:2], v3, v4\ns_endpgm\n")
    prelude = ("import isalint.rules.parse001 as rule\noriginal = rule.check\n"
               "def check(analysis):\n"
               "    if analysis.program.path.endswith('bad.s'):\n        raise ZeroDivisionError('x')\n"
               "    return original(analysis)\nrule.check = check\n")
    code, out, err = run("check", "--format", "json", bad, good, prelude=prelude)
    assert code == 2
    assert [(d["path"], d["code"]) for d in json.loads(out)] == [(str(good), "PARSE001")]
    assert err == f"isalint: {bad}: internal error: ZeroDivisionError: x (a bug in isalint; " \
                  "ISALINT_TRACEBACK=1 shows the traceback)\n"


def test_out_of_memory_is_one_line(tmp_path):
    code, out, err = run("graph", NAIVE, prelude="import isalint.model.depgraph as g\n"
                                                  "def boom(*a, **k):\n    raise MemoryError()\n"
                                                  "g.build_depgraph = boom\n")
    assert code == 2
    assert err == f"isalint: {NAIVE}: out of memory\n"


def test_traceback_on_request(tmp_path):
    code, out, err = run("check", NAIVE, prelude="import os\nos.environ['ISALINT_TRACEBACK'] = '1'\n"
                         + BOOM.format(exc="KeyError('k')"))
    assert code == 2
    assert "Traceback (most recent call last)" in err and err.rstrip().endswith("shows the traceback)")


def test_graph_hot_without_a_loop_is_a_usage_error():
    code, out, err = run("graph", LDS_NO_LOOP, "--hot")
    assert code == 2 and out == ""
    assert err == f"isalint: {LDS_NO_LOOP}: --hot: the file has no loop (without --hot: the whole kernel's graph)\n"


def _interrupt(args: list[str], after: float) -> tuple[int, str]:
    proc = subprocess.Popen([sys.executable, "-m", "isalint", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(after)
    assert proc.poll() is None, "finished before the interrupt"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, err.decode(errors="replace")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_exits_130_without_a_traceback():
    # an emulated GEMM of N=1024 runs for minutes: the interrupt lands in the middle of it
    code, err = _interrupt(["run", str(NAIVE), "--gemm", "1024"], after=3.0)
    assert code == 130
    assert err.strip().splitlines()[-1] == "isalint: interrupted"
    assert "Traceback" not in err and "Aborted" not in err


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_during_check_exits_130(tmp_path):
    f = tmp_path / "long.s"
    f.write_text("".join(f"v_add_f32_e32 v{k % 200}, v1, v2\n" for k in range(400000)))
    code, err = _interrupt(["check", str(f)], after=1.5)
    assert code == 130
    assert err.strip() == "isalint: interrupted"


# A Ctrl-C that lands while the outcome is being decided: SIGINT sent to the process itself from a
# function the command line calls, so Python raises KeyboardInterrupt right there (the race a child
# of test_fuzz.py's test_commands_in_child_processes lost under load: usage error printed, then
# dead of the signal).
LATE_INTERRUPT = ("import os, signal\nimport isalint.cli as cli\nreal = cli.{name}\n"
                  "def late(*args, **kwargs):\n    out = real(*args, **kwargs)\n"
                  "    os.kill(os.getpid(), signal.SIGINT)\n    return out\ncli.{name} = late\n")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("name", ["_exit_code", "_run"])  # inside _run's except clause; after _run returned
def test_ctrl_c_as_a_usage_error_is_reported_exits_with_a_code(tmp_path, name):
    kernel = tmp_path / "c5.s"  # no kernels.json beside it: the default grid cannot launch N = 16
    kernel.write_bytes(NAIVE.read_bytes())
    code, out, err = run("run", kernel, "--gemm", "16", prelude=LATE_INTERRUPT.format(name=name))
    assert code in (2, 130), (code, err)  # never -2: dead of SIGINT
    assert "needs N a multiple of 128" in err and "Traceback" not in err
