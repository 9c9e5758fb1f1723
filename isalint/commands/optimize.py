"""``isalint optimize IN.s -o OUT.s``: the fix passes in a row, the end result validated, one table.

Each step is a pass of ``isalint fix`` (those :mod:`isalint.fixes.registry` marks for ``optimize``, in
its order, with their options), run on the previous step's output. A step whose pass is not part of this installation, refuses (the reason is
printed) or changes nothing is skipped and the next one runs on the same text. The end result is
assembled and proven equal to the input in the emulator before anything is written. The table
shows, for the input and after each step, the hot-loop numbers and the model's prediction
(:mod:`isalint.estimate`).

Exit 0 when written (or when nothing changed), 1 when validation failed, 2 on bad input.
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from contextlib import nullcontext
from dataclasses import dataclass

import click

from ..fixes import registry
from ..fixes.registry import by_name, optimize_steps, option_values
from .common import fail, load_analysis, unified_diff, write_result
from .pass_options import apply_all, option_decorators

STEPS = optimize_steps()


@dataclass
class StepOutcome:
    step: str  # "input" for the starting point
    applied: bool
    note: str  # the pass's summary, or why the step was skipped
    text: str  # the program after this step
    estimate: object = None
    sizes: tuple[int, ...] = ()  # GEMM sizes the applied pass asks to be validated at (VALIDATE_SIZES)


def _pass_module(step: str) -> str | None:
    spec = by_name(step)
    if spec is None or importlib.util.find_spec(spec.module) is None:
        return None
    return spec.module


def run_steps(path: str, text: str, steps, options: dict | None = None, judge=None) -> list[StepOutcome]:
    """Run ``steps`` in order on ``text``; one outcome per step (skipped steps keep the text).

    ``options``: the passes' options by name (:func:`isalint.fixes.registry.option_values`); those not
    given take ``optimize``'s defaults (batch-gmem's ``max_n`` 32768: its 32-bit byte offsets cover N x N
    fp32 matrices up to N = 32768, 4 GiB each). ``judge(text)``: the prediction of a text (None when
    there is none); given, a step whose prediction is no faster than the text before it is undone."""
    from ..analysis import Analysis
    from ..fixes import FixRefused
    from ..fixes.toolkit.pipeline import apply_pass
    from ..parse.source import parse_text

    values = option_values(options or {}, for_optimize=True)
    analysis = Analysis.from_source(parse_text(text, path))
    out: list[StepOutcome] = []
    current = judge(text) if judge is not None else None
    for step in steps:
        module_name = _pass_module(step)
        if module_name is None:
            out.append(StepOutcome(step, False, f"skipped: this isalint has no {step} pass", text))
            continue
        module = importlib.import_module(module_name)
        try:
            result = apply_pass(step, module, analysis, dict(values))
        except FixRefused as exc:
            out.append(StepOutcome(step, False, f"skipped: {exc}", text))
            continue
        if result.text == text:
            out.append(StepOutcome(step, False, "skipped: nothing to change", text))
            continue
        from ..fixes.toolkit.pipeline import finish_pass

        new, _ = finish_pass(module, text, result.text, path)
        predicted = judge(new) if judge is not None else None
        if current is not None and predicted is not None and predicted.predicted_ms >= current.predicted_ms:
            out.append(StepOutcome(step, False, f"skipped: predicted {predicted.predicted_ms:.3f} ms, no faster than "
                                                f"{current.predicted_ms:.3f} ms before it", text))
            continue
        text = new
        current = predicted if predicted is not None else current
        analysis = Analysis.from_source(parse_text(text, path))
        first = (result.summary or "").strip().splitlines()
        out.append(StepOutcome(step, True, first[0] if first else "applied", text, estimate=predicted,
                               sizes=tuple(getattr(module, "VALIDATE_SIZES", (256,)))))
    return out


def sample_text(geo, count: int) -> str:
    """'8 of 1024 workgroups: (0,0) ...': the workgroups the sampled validation runs."""
    from ..validate.sampling import describe, sample_workgroups

    return describe(sample_workgroups(geo.grid, count, 1), geo.grid)


def _estimate_text(path: str, text: str, n: int, geo):
    from ..analysis import Analysis
    from ..estimate import estimate
    from ..parse.source import parse_text

    program = Analysis.from_source(parse_text(text, path)).program
    return estimate(program, n, geo.grid, geo.block, abi=geo.abi)


def table(rows: list[StepOutcome]) -> str:
    w = max([11] + [len(r.step) for r in rows])
    head = (f"{'step':{w}s} {'VOPD share':>10s} {'bank stalls':>11s} {'instr':>6s} {'VGPRs':>5s} {'SGPRs':>5s} "
            f"{'waves':>5s} {'ms':>7s} {'TFLOP/s':>7s}  result")
    sub = (f"{'':{w}s} {'of FMAs':>10s} {'per k step':>11s} {'/k':>6s} {'':5s} {'':5s} {'/SIMD':>5s}")
    lines = [head, sub]
    for r in rows:
        e = r.estimate
        if e is None:
            lines.append(f"{r.step:{w}s} {'':>10s} {'':>11s} {'':>6s} {'':>5s} {'':>5s} {'':>5s} {'':>7s} {'':>7s}  {r.note}")
            continue
        per = e.mix.per(e.n)
        share = e.mix.vopd_share
        share_s = f"{100 * share:.1f}%" if share is not None else "-"
        sg = e.sgprs if e.sgprs is not None else "-"
        tf = f"{e.tflops:.1f}" if e.tflops else "-"
        lines.append(f"{r.step:{w}s} {share_s:>10s} {per['bank_stall_cycles']:11.1f} {per['instructions']:6.1f} "
                     f"{e.residency.vgprs:5d} {sg!s:>5s} {e.occupancy_waves:5g} {e.predicted_ms:7.3f} {tf:>7s}  {r.note}")
    return "\n".join(lines)


@click.command("optimize")
@click.argument("path", type=click.Path())
@click.option("-o", "--output", type=click.Path(), help="Write the optimized kernel here.")
@click.option("--steps", "steps_text", default=",".join(STEPS), show_default=True,
              help="Comma-separated passes to run in order.")
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff of the input and the result.")
@click.option("--gemm", "gemm_n", type=int, multiple=True,
              help="Matrix size for validating the result in the emulator (repeatable; default: the sizes the "
                   "applied passes ask for, 256 and for batch-gmem 384 as well).")
@click.option("--estimate-n", "estimate_n", type=int, default=4096, show_default=True,
              help="Matrix size N of the predicted times.")
@apply_all(option_decorators([p for p in registry.PASSES if p.in_optimize], for_optimize=True))
@click.option("--no-validate", is_flag=True, help="Skip assembling and emulating the result.")
@click.option("--workgroups", "sample", type=click.IntRange(min=0), default=8, show_default=True,
              help="Also validate at the --estimate-n size on this many sampled workgroups (their whole K "
                   "loop); 0 skips it.")
@click.option("--keep-every-step", is_flag=True,
              help="Keep a step whose predicted time is no better than before it (by default it is undone).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--grid", help="Workgroups X[,Y[,Z]] of the launch (default N/128 x N/128).")
@click.option("--block", help="Work-items per workgroup X[,Y[,Z]] of the launch (default: kernels.json, the "
                              "kernel's .reqd_workgroup_size, else 128).")
def command(path, output, steps_text, show_diff, gemm_n, estimate_n, no_validate, sample, keep_every_step, fmt, grid,
            block, **given):
    """Run the fix passes in order, validate the result, and tabulate each step's predicted speed."""
    from ..estimate import EstimateError
    from ..validate.gemm import GemmError, geometry, launch_bound, required_block
    from ..validate.runner import UsageError, parse_dims
    from .progress import progress

    try:
        grid_d, block_d = parse_dims(grid, "grid"), parse_dims(block, "block")
    except UsageError as exc:
        fail(str(exc))

    steps = [s.strip() for s in steps_text.split(",") if s.strip()]
    unknown = [s for s in steps if s not in STEPS]
    if unknown or not steps:
        fail(f"--steps {steps_text!r}: choose from {', '.join(STEPS)}")
    if not (output or show_diff):
        fail("say where the result goes: -o OUT.s or --diff")
    from ..fixes.toolkit.destination import DestinationError, check_destination

    destination = None
    if output:  # checked before the work, as fix does
        try:
            destination = check_destination(output)
        except DestinationError as exc:
            fail(str(exc))
    analysis = load_analysis(path)
    original = analysis.program.source.render()
    try:
        geo = geometry(path, estimate_n, grid_d, block_d, required_block(analysis.program),
                       launch_bound(analysis.program))
    except GemmError as exc:
        fail(f"{path}: {exc}")
    max_n = given.get("max_n")
    if gemm_n and max_n is not None and max(gemm_n) > max_n:
        fail(f"--gemm {max(gemm_n)} is larger than --max-n {max_n}")
    problems: dict[str, str] = {}

    def judge(text: str):
        from .estimate import peak_problem

        try:
            est = _estimate_text(path, text, estimate_n, geo)
        except EstimateError as exc:
            problems[text] = str(exc)
            return None
        est.launch_source, est.launch_defaults = geo.source, list(geo.defaults)
        problem = peak_problem(est)  # above the peak: not a figure to compare steps by
        if problem:
            problems[text] = problem
            return None
        return est

    rows = [StepOutcome("input", False, "", original, judge(original))]
    rows += run_steps(path, original, steps, given, None if keep_every_step else judge)
    final = [r for r in rows if r.step == "input" or r.applied][-1].text
    for r in rows:
        if r.step != "input" and not r.applied:
            continue
        if r.estimate is None and r.text not in problems:
            r.estimate = judge(r.text)
        if r.estimate is None and r.text in problems:
            r.note = (r.note + "; " if r.note else "") + f"no estimate: {problems[r.text]}"
    verdict = None
    sizes = sorted(set(gemm_n) or {n for r in rows if r.applied for n in r.sizes} or {256})
    sampled = None
    if sample and estimate_n not in sizes and grid_d is None:
        sampled = sample_text(geo, sample)
    if final != original and not no_validate:
        from ..fixes.toolkit.pipeline import validate

        runs = [(n, None) for n in sizes] + ([(estimate_n, sample)] if sampled else [])
        for n, k in runs:
            what = f"GEMM N={n}" + (f", {k} sampled workgroups" if k else "")
            with (progress(f"validating the result ({what})") if fmt != "json" else nullcontext()) as shown:
                def stage(text, what=what, shown=shown):
                    if shown is not None:
                        shown.update(f"validating {what}: {text}")
                verdict = validate(path, original, final, n, grid=grid_d, block=block_d, stage=stage, workgroups=k)
            if verdict is not None:
                break
    if fmt == "json":
        click.echo(json.dumps({
            "input": path, "output": output, "validated": final != original and not no_validate and verdict is None,
            "validation_error": verdict,
            "steps": [{"step": r.step, "applied": r.applied, "note": r.note,
                       "estimate": r.estimate.to_json() if r.estimate is not None else None} for r in rows],
            "sampled_validation": sampled,
        }, indent=2))
    else:
        click.echo(table(rows))
    if verdict is not None:
        click.echo(f"isalint: validation failed, nothing written: {verdict}", err=True)
        sys.exit(1)
    if final == original:
        click.echo("isalint: no step applied; nothing to change", err=True)
    elif not no_validate:
        more = f"; N={estimate_n} on {sampled}" if sampled else ""
        click.echo(f"isalint: validated: the result computes what {path} computes (GEMM N="
                   f"{', '.join(map(str, sizes))} in the emulator, bit-identical{more})", err=True)
    if show_diff:
        click.echo(unified_diff(original, final, path, output), nl=False)
    if destination is not None:
        write_result(destination, final)

