"""A fix pass is declared once (isalint/fixes/registry.py): ``fix``'s flags and options, ``optimize``'s
steps and options, the chain's order and the help all come from that entry."""
from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap

from click.testing import CliRunner

from conftest import REPO, SNIPPETS
from isalint.commands import fix as fix_command
from isalint.commands import optimize as optimize_command
from isalint.fixes import registry


def test_every_pass_package_is_registered_and_every_entry_is_a_pass():
    fixes = REPO / "isalint" / "fixes"
    on_disk = {p.stem if p.is_file() else p.name for p in fixes.iterdir()
               if (p.is_dir() and (p / "__init__.py").is_file()) or (p.suffix == ".py" and p.stem != "__init__")}
    on_disk -= {"toolkit", "registry"}
    assert on_disk == {p.dest for p in registry.PASSES}
    for p in registry.PASSES:
        assert callable(importlib.import_module(p.module).apply), p.name


def test_fix_and_optimize_take_their_flags_and_options_from_the_registry():
    fix_opts = {o.name: o for o in fix_command.command.params}
    for p in registry.PASSES:
        assert fix_opts[p.dest].opts == [f"--{p.name}"] and fix_opts[p.dest].help == p.help
        for o in p.options:
            assert fix_opts[o.dest].opts == [o.flag] and fix_opts[o.dest].help == o.help
    assert optimize_command.STEPS == tuple(p.name for p in registry.PASSES if p.in_optimize)
    opt_opts = {o.name: o for o in optimize_command.command.params}
    assert opt_opts["max_n"].default == 32768 and fix_opts["max_n"].default is None
    steps = {o.name: o for o in optimize_command.command.params}["steps_text"]
    assert steps.default == ",".join(optimize_command.STEPS)
    assert "--metadata" in CliRunner().invoke(fix_command.command, ["--help"]).output


def test_an_option_without_its_pass_is_named_with_the_pass():
    given = {"factor": 2, "max_n": None, "spread": False}
    assert registry.stray_options(given, []) == "--factor goes with --unroll"
    assert registry.stray_options({"spread": True}, [registry.by_name("unroll")]) == \
        "--max-n and --spread belong to --batch-gmem"
    assert registry.stray_options({"loop": ".L1", "spread": True}, [registry.by_name("batch-gmem")]) is None


def test_option_values_fill_in_each_commands_defaults():
    assert registry.option_values({})["max_n"] is None
    assert registry.option_values({}, for_optimize=True)["max_n"] == 32768
    assert registry.option_values({"max_n": 512}, for_optimize=True)["max_n"] == 512
    assert registry.option_values({})["spread"] is False


ADDED_PASS = '''
from isalint.fixes import FixResult
from isalint.fixes.toolkit import Edits

VALIDATE_SIZES = (256,)


def apply(analysis, options):
    edits = Edits(analysis.program)
    first = analysis.program.instrs[0]
    edits.insert_before(0, [f"\\ts_nop {options['nops']}"])
    return FixResult(edits.render(), f"example: s_nop {options['nops']} before line {first.lineno}")
'''

DRIVER = '''
import sys
import isalint.fixes as fixes
from isalint.fixes import registry
fixes.__path__.append(sys.argv[1])
registry.PASSES += (registry.Pass("example-nop", "Put an s_nop first.",
                                  (registry.Option("--nops", "How long.", "int", 0),)),)
from isalint.cli import main
sys.exit(main(sys.argv[2:]))
'''


def test_a_pass_registered_with_one_entry_runs_in_fix_and_optimize(tmp_path):
    """What adding a pass takes: its package, and one entry in the registry."""
    (tmp_path / "example_nop").mkdir()
    (tmp_path / "example_nop" / "__init__.py").write_text(textwrap.dedent(ADDED_PASS))
    src = SNIPPETS / "delay001" / "good.s"

    def run(*args):
        return subprocess.run([sys.executable, "-c", DRIVER, str(tmp_path), *map(str, args)], capture_output=True,
                              text=True, cwd=REPO, timeout=300)

    out = run("fix", "--help")
    assert "--example-nop" in out.stdout and "--nops" in out.stdout and "Put an s_nop first." in out.stdout
    out = run("fix", "--example-nop", "--nops", "3", src, "--diff", "--no-validate")
    assert out.returncode == 1, out.stderr  # --diff with a change
    assert "+\ts_nop 3" in out.stdout and "example: s_nop 3 before line" in out.stderr
    out = run("fix", "--metadata", "--nops", "3", src, "--diff")
    assert out.returncode == 2 and out.stderr.strip() == "isalint: --nops goes with --example-nop"
    out = run("optimize", src, "--steps", "example-nop", "--nops", "2", "--diff", "--no-validate", "--keep-every-step")
    assert out.returncode == 0, out.stderr
    assert "example-nop" in out.stdout and "+\ts_nop 2" in out.stdout
