"""Golden outputs of every fix pass, as LLVM's MC tests pair an input with what must come out of it.

A case is ``fixtures/fixes/<pass>/<case>.run``: comment lines (``#``) saying what it shows, then one
command line, ``fix --PASS [options] INPUT`` (INPUT relative to the case: a fixture kernel, a small
kernel beside the case, or another case's expected output, so a chain of passes is a chain of cases).
Beside it, ``<case>.expected.s`` is the rewritten file (absent when the pass refuses) and
``<case>.expected.txt`` the expected table: the command, the pass's summary (or its refusal), and the
hot loop's figures before and after. The test runs every case again and compares byte for byte; the
expected outputs must also assemble.

    python tests/test_golden_fixes.py --update [CASE...]   # rewrite the expected files (then review the diff)
"""
from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CASES_DIR = ROOT / "fixtures" / "fixes"
sys.path.insert(0, str(ROOT))


def cases() -> list[Path]:
    """Every case, those of a pass before those of the passes after it (a chain's input comes first)."""
    from isalint.fixes.registry import PASSES

    order = {p.name: i for i, p in enumerate(PASSES)}
    return sorted(CASES_DIR.glob("*/*.run"), key=lambda c: (order.get(c.parent.name, len(order)), c.name))


def read_case(case: Path) -> tuple[list[str], dict, Path]:
    """(pass names, options, input path) of a case's command line."""
    from isalint.fixes.registry import by_name, options

    lines = [ln for ln in case.read_text().splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if len(lines) != 1:
        raise ValueError(f"{case}: expected one command line, found {len(lines)}")
    words = shlex.split(lines[0])
    if words[0] != "fix":
        raise ValueError(f"{case}: the command must be 'fix'")
    known = {o.flag: o for o in options()}
    names, given, rest = [], {}, []
    i = 1
    while i < len(words):
        w = words[i]
        if w.startswith("--") and by_name(w[2:]) is not None and w[2:] not in known:
            names.append(by_name(w[2:]).name)
        elif w in known:
            o = known[w]
            if o.kind == "flag":
                given[o.dest] = True
            else:
                i += 1
                given[o.dest] = int(words[i]) if o.kind.startswith("int") else words[i]
        else:
            rest.append(w)
        i += 1
    if len(rest) != 1 or not names:
        raise ValueError(f"{case}: expected 'fix --PASS... [options] INPUT'")
    return names, given, (case.parent / rest[0]).resolve()


def figures(text: str, path: str) -> dict[str, str]:
    """The hot loop's static figures (per iteration, k-step numbers where the loop has one register
    tile's worth of FMAs), the kernel's register counts and LDS size."""
    from isalint.analysis import Analysis
    from isalint.model.loop_stats import loop_indices, loop_name, loop_summary
    from isalint.parse.source import parse_text

    analysis = Analysis.from_source(parse_text(text, path))
    program = analysis.program
    loop = analysis.hot_loop
    idx = loop_indices(analysis, loop)
    instrs = [program.instrs[i] for i in idx]
    summary = loop_summary(analysis, loop)
    count = lambda *klasses: sum(1 for ins in instrs if ins.klass in klasses)  # noqa: E731
    kernel = program.kernels[0] if program.kernels else None
    desc = (kernel.descriptor or {}) if kernel else {}
    per = summary.get("per_k_step") or {}
    return {
        "hot loop": loop_name(analysis, loop) or "(none)",
        "instructions": str(len(instrs)),
        "VALU (VOPD)": f"{summary['valu']} ({summary['vopd']})",
        "FMAs dual-issued": f"{summary['vopd_fma']} of {summary['fma']}",
        "LDS": str(count("lds")),
        "global memory": str(count("vmem_load", "vmem_store")),
        "SALU + branch": str(summary["salu_branch"]),
        "s_waitcnt": str(summary["waits"]),
        "s_barrier": str(sum(1 for ins in instrs if ins.opcode == "s_barrier")),
        "bank stall cycles": str(summary["stall_cycles"]),
        "k-steps": str(summary["k_steps"] or "-"),
        "instructions per k-step": str(per.get("instructions", "-")),
        "VGPRs, SGPRs (descriptor)": f"{desc.get('.amdhsa_next_free_vgpr', '-')}, "
                                     f"{desc.get('.amdhsa_next_free_sgpr', '-')}",
        "LDS bytes": str(desc.get(".amdhsa_group_segment_fixed_size", "-")),
    }


def render(case: Path) -> tuple[str | None, str]:
    """(the rewritten text or None when refused, the table) of a case, as the pass makes them now."""
    from isalint.analysis import Analysis
    from isalint.fixes.toolkit.pipeline import run_passes
    from isalint.fixes.registry import option_values
    from isalint.parse.source import parse_text

    names, given, source = read_case(case)
    original = source.read_text()
    shown_path = source.relative_to(ROOT).as_posix()
    outcome = run_passes(Analysis.from_source(parse_text(original, shown_path)), names, option_values(given))
    command = [ln for ln in case.read_text().splitlines() if ln.strip() and not ln.startswith("#")][0]
    out = [f"$ isalint {command}"]
    if outcome.refused is not None:
        name, reason = outcome.refused
        out.append(f"fix --{name} refused: {reason}")
        return None, "\n".join(out) + "\n"
    out += [s for s in outcome.summaries if s]
    before, after = figures(original, shown_path), figures(outcome.text, shown_path)
    width = max(len(k) for k in before)
    col = max(12, *(len(v) for v in before.values()))
    out.append("")
    out.append(f"{'':{width}}  {'input':>{col}}  {'output':>{col}}")
    for key in before:
        out.append(f"{key:{width}}  {before[key]:>{col}}  {after[key]:>{col}}")
    return outcome.text, "\n".join(out) + "\n"


def expected_paths(case: Path) -> tuple[Path, Path]:
    stem = case.with_suffix("")
    return stem.with_name(stem.name + ".expected.s"), stem.with_name(stem.name + ".expected.txt")


@pytest.mark.parametrize("case", cases(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_golden_output(case):
    text, table = render(case)
    out_s, out_txt = expected_paths(case)
    assert out_txt.is_file(), f"no {out_txt.name}: run python tests/test_golden_fixes.py --update"
    assert table == out_txt.read_text()
    if text is None:
        assert not out_s.exists(), f"{case.name} refuses now, but {out_s.name} exists"
        return
    assert out_s.is_file() and text == out_s.read_text()


@pytest.mark.parametrize("case", [c for c in cases() if expected_paths(c)[0].exists()],
                         ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_golden_output_assembles(case):
    from conftest import assembler_or_skip
    from isalint.fixes.toolkit.pipeline import _assembles

    assembler_or_skip()
    path = expected_paths(case)[0]
    assert _assembles(str(path), path.read_text()) is None


def test_every_pass_has_golden_cases():
    from isalint.fixes.registry import PASSES

    have = {c.parent.name for c in cases()}
    assert {p.name for p in PASSES} <= have


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "--update":
        print(__doc__)
        return 2
    wanted = set(argv[1:])
    for case in cases():
        if wanted and case.stem not in wanted and f"{case.parent.name}/{case.stem}" not in wanted:
            continue
        text, table = render(case)
        out_s, out_txt = expected_paths(case)
        out_txt.write_text(table)
        if text is None:
            out_s.unlink(missing_ok=True)
        else:
            out_s.write_text(text)
        print(f"{case.relative_to(CASES_DIR)}: {'refused' if text is None else 'rewritten'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
