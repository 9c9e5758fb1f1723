"""A configuration or a suppression isalint cannot follow is said, not silently ignored."""
from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from isalint import rules as registry
from isalint.lint.config import ConfigError, find_config
from isalint.lint.suppressions import suppression_problems
from isalint.parse import parse_text


def run(*args, cwd=None):
    proc = subprocess.run([sys.executable, "-m", "isalint", *map(str, args)], capture_output=True, timeout=120,
                          cwd=cwd)
    return proc.returncode, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")


def _project(tmp_path, toml: str):
    (tmp_path / "pyproject.toml").write_text(toml)
    f = tmp_path / "k.s"
    f.write_text("v_mov_b32 v1, v2\ns_endpgm\n")
    return f


@pytest.mark.parametrize("toml, message", [
    ('[tool.isalint]\nselect = ["XYZ9"]\n', ":2: unknown rule code(s) or name(s) in [tool.isalint] select: XYZ9"),
    ('[tool.isalint]\nignore = ["WAIT001", "NOPE"]\n',
     ":2: unknown rule code(s) or name(s) in [tool.isalint] ignore: NOPE"),
    ("[tool.isalint]\nselect = 5\n",
     ':2: [tool.isalint] select must be a list of rule codes or names, like ["DUAL001", "WAIT"]'),
    ("[tool.isalint]\n\nignore = [1, 2]\n", ":3: [tool.isalint] ignore must be a list of rule codes"),
    ("[tool.isalint]\nextend-select = [\"nope-rule\"]\n",
     ":2: unknown rule code(s) or name(s) in [tool.isalint] extend-select: nope-rule"),
    ("[tool.isalint]\nper-file-ignores = 3\n", ":2: [tool.isalint] per-file-ignores must be a table"),
    ("[tool.isalint]\nper-file-ignores = { \"gen_*.s\" = [\"XYZ\"] }\n",
     ":2: unknown rule code(s) or name(s) in [tool.isalint] per-file-ignores 'gen_*.s': XYZ"),
    ("[tool.isalint.severity]\nBANK001 = \"fatal\"\n",
     ":2: [tool.isalint] severity of BANK001: 'fatal' is not one of error, warning, info"),
    ("[tool.isalint.severity]\nNOPE1 = \"info\"\n", ":2: unknown rule code(s) or name(s) in [tool.isalint] severity: NOPE1"),
    ("[tool.isalint]\ntarget = 5\n", ':2: [tool.isalint] target must be a name like "gfx1100"'),
    ("[tool]\nisalint = 5\n", ":2: [tool.isalint] must be a table of settings"),
    ("[tool.isalint]\nselect = [\n", ":2: invalid TOML: "),
    ('# isalint\n[tool.ruff\n', ":2: invalid TOML: "),
])
def test_invalid_configuration_is_an_input_error(tmp_path, toml, message):
    f = _project(tmp_path, toml)
    with pytest.raises(ConfigError) as exc:
        find_config(str(f))
    assert str(exc.value).startswith(str(tmp_path / "pyproject.toml") + message)
    code, out, err = run("check", f)
    assert code == 2
    assert f"isalint: {tmp_path / 'pyproject.toml'}{message}" in err


def test_cli_and_configuration_agree_on_unknown_codes(tmp_path):
    f = _project(tmp_path, "")
    assert run("check", "--select", "XYZ9", f)[0] == 2
    (tmp_path / "pyproject.toml").write_text('[tool.isalint]\nselect = ["XYZ9"]\n')
    assert run("check", f)[0] == 2


def test_other_tools_configuration_is_not_read(tmp_path):
    f = _project(tmp_path, "[tool.ruff\nbroken = ")  # no mention of this tool: not its business
    assert find_config(str(f)).origin is None


def test_unknown_key_is_a_warning(tmp_path):
    f = _project(tmp_path, '[tool.isalint]\nselct = ["WAIT"]\n')
    assert find_config(str(f)).warnings == [
        f"{tmp_path / 'pyproject.toml'}:2: unknown key 'selct' in [tool.isalint] (known: select, ignore, "
        "extend-select, per-file-ignores, severity, target); ignored"]
    code, out, err = run("check", f)
    assert code == 0
    assert err.startswith("isalint: warning: ") and "unknown key 'selct'" in err


def test_valid_configuration_still_applies(tmp_path):
    f = _project(tmp_path, '[tool.isalint]\nselect = ["parse", "vgpr-bank-conflict"]\nignore = ["WAIT001"]\n'
                           'target = "gfx1101"\nper-file-ignores = { "k*.s" = ["DUAL002"] }\n'
                           '[tool.isalint.severity]\nBANK001 = "Error"\n')
    config = find_config(str(f))
    assert (config.select, config.ignore, config.target, config.warnings) == (["parse", "vgpr-bank-conflict"],
                                                                              ["WAIT001"], "gfx1101", [])
    assert (config.per_file_ignores, config.severity) == ({"k*.s": ["DUAL002"]}, {"BANK001": "error"})
    assert config.ignored_for(str(f)) == ["DUAL002"]


@pytest.mark.parametrize("comment, problem", [
    ("; isalint: disable=NOPE999", "k.s:1: unknown rule code(s) in 'isalint: disable': NOPE999 (suppressions name "
                                   "whole codes or rule names, like WAIT001); not suppressed"),
    ("; isalint: disable", "k.s:1: 'isalint: disable' names no rule: write 'isalint: disable=CODE[,CODE]' (or =ALL); "
                           "nothing suppressed"),
    ("// isalint: disable-next-line", "k.s:1: 'isalint: disable-next-line' names no rule"),
    ("; isalint: disable=WAIT", "k.s:1: unknown rule code(s) in 'isalint: disable': WAIT "),
    ("; isalint: disable-file", "k.s:1: 'isalint: disable-file' names no rule"),
    ("; isalint: disable=PARSE001 because reasons", "k.s:1: unknown rule code(s) in 'isalint: disable': PARSE001 because"),
    ("; isalint: disable=", "k.s:1: 'isalint: disable=' names no rule code; nothing suppressed"),
])
def test_suppression_that_suppresses_nothing_is_reported(comment, problem):
    source = parse_text(f"v_mov_b32 v1, v2 {comment}\ns_endpgm\n", "k.s")
    (found,) = suppression_problems(source, registry.available())
    assert found.startswith(problem)


@pytest.mark.parametrize("comment", [
    "; isalint: disable=PARSE001", "; isalint: disable=parse001, wait001", "; isalint: disable-next-line=ALL",
    "; isalint: disable=vgpr-bank-conflict", "; isalint: disable-file=DUAL002", "; isalint is nice",
])
def test_working_suppressions_are_not_reported(comment):
    source = parse_text(f"v_mov_b32 v1, v2 {comment}\ns_endpgm\n", "k.s")
    assert suppression_problems(source, registry.available()) == []


def test_suppression_problem_is_a_warning_on_the_command_line(tmp_path):
    f = tmp_path / "k.s"
    f.write_text("v_mov_b32 v1, v2 ; isalint: disable=NOPE999\ns_endpgm\n")
    code, out, err = run("check", f)
    assert code == 0
    assert err == (f"isalint: warning: {f}:1: unknown rule code(s) in 'isalint: disable': NOPE999 (suppressions "
                   "name whole codes or rule names, like WAIT001); not suppressed\n")


@settings(max_examples=examples(300), deadline=None)
@given(st.dictionaries(st.sampled_from(["select", "ignore", "target", "isalint", "x"]),
                       st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                                    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c,
                                                                                          max_size=3),
                                    max_leaves=6), max_size=4))
def test_any_configuration_value_is_a_config_or_an_error(tmp_path_factory, section):
    """Whatever the table holds, reading it gives a Config or a ConfigError, nothing else."""
    import json

    def toml_value(v):
        if v is None:
            return '""'
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, str)):
            return json.dumps(v)
        if isinstance(v, list):
            return "[" + ", ".join(toml_value(x) for x in v) + "]"
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(x)}" for k, x in v.items()) + "}"

    d = tmp_path_factory.mktemp("cfg")
    text = "[tool.isalint]\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in section.items())
    f = _project(d, text)
    try:
        config = find_config(str(f))
    except ConfigError:
        return
    assert config.select is None or all(isinstance(c, str) for c in config.select)
    assert all(isinstance(c, str) for c in config.ignore) and isinstance(config.target, str)
