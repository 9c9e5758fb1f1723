"""``isalint fix --PASS... IN.s``: rewrite passes, each proven or refused.

The passes, their flags and options come from :mod:`isalint.fixes.registry`;
:mod:`isalint.fixes.toolkit.pipeline` runs them in the registry's order (each sees the previous one's
output re-parsed), validates and writes. Nothing is
written unless every pass succeeded and (unless ``--no-validate``) the validation passed.
"""
from __future__ import annotations

import sys

import click

from ..fixes import registry
from ..fixes.registry import option_values, stray_options
from .common import fail, load_analysis, unified_diff, write_result
from .pass_options import apply_all, flag_decorators, option_decorators


@click.command("fix")
@click.argument("path", type=click.Path())
@apply_all(flag_decorators())
@click.option("-o", "--output", type=click.Path(), help="Write the result here.")
@click.option("--in-place", is_flag=True, help="Overwrite the input.")
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff instead of (or as well as) writing.")
@apply_all(option_decorators())
@click.option("--no-validate", is_flag=True, help="Skip assembling and emulating the result.")
@click.option("--gemm", "gemm_n", type=int, multiple=True,
              help="Matrix size for validating a kernel with the GEMM ABI (repeatable; default 256, and 384 "
                   "as well for a pass whose code depends on N, such as --batch-gmem).")
@click.option("--grid", help="Workgroups X[,Y[,Z]] of the validation launch (default N/128 x N/128).")
@click.option("--block", help="Work-items per workgroup X[,Y[,Z]] of the validation launch (default: the "
                              "kernel's .reqd_workgroup_size, else 128).")
def command(path, output, in_place, show_diff, no_validate, gemm_n, grid, block, **given):
    """Apply fix passes; exit 0 on success, 1 when a pass refused, validation failed or --diff shows a
    change, 2 on input errors (and when the destination cannot be written or no assembler validates)."""
    from ..fixes.toolkit.destination import DestinationError, check_destination
    from ..fixes.toolkit.pipeline import run_passes, validate, validator_missing

    # the registry's order, whatever the order of the flags: each pass sees the previous one's output
    chosen = [p for p in registry.PASSES if given.get(p.dest)]
    if not chosen:
        fail(f"choose at least one pass: {', '.join('--' + p.name for p in registry.PASSES)}")
    stray = stray_options(given, chosen)
    if stray:
        fail(stray)
    max_n = given.get("max_n")
    if output and in_place:
        fail("use either -o/--output or --in-place, not both")
    if not (output or in_place or show_diff):
        fail("say where the result goes: -o OUT.s, --in-place, or --diff")
    from ..validate.runner import UsageError, parse_dims

    try:
        grid_d, block_d = parse_dims(grid, "grid"), parse_dims(block, "block")
    except UsageError as exc:
        fail(str(exc))
    # everything that would make the work useless is checked before it starts
    target = path if in_place else output
    destination = None
    if target:
        try:
            destination = check_destination(target)
        except DestinationError as exc:
            fail(str(exc))
    if not no_validate:
        missing = validator_missing()
        if missing:
            fail(f"{missing}; --no-validate writes the result unvalidated")
    from .progress import progress

    analysis = load_analysis(path)
    with progress(f"fix --{' --'.join(p.name for p in chosen)}: rewriting {path}"):
        outcome = run_passes(analysis, [p.name for p in chosen], option_values(given))
    if outcome.refused is not None:
        name, reason = outcome.refused
        click.echo(f"isalint: fix --{name} refused: {reason}", err=True)
        click.echo("isalint: input left untouched", err=True)
        sys.exit(1)
    for s in outcome.summaries:
        if s:
            click.echo(s, err=True)
    original, text = outcome.original, outcome.text
    if not outcome.changed:
        click.echo("isalint: nothing to change", err=True)
    elif not no_validate:
        sizes = list(gemm_n) or list(outcome.sizes)
        if max_n is not None and max(sizes) > max_n:
            fail(f"--gemm {max(sizes)} is larger than --max-n {max_n}")
        by_code = outcome.only_metadata or outcome.only_hints
        for n in sizes[:1] if by_code else sizes:
            with progress(f"validating the rewrite (GEMM N={n})") as shown:
                verdict = validate(path, original, text, n, code_unchanged=outcome.only_metadata, grid=grid_d,
                                   block=block_d, stage=lambda what, n=n: shown.update(f"validating N={n}: {what}"),
                                   hints_only=outcome.only_hints)
            if verdict is not None:
                click.echo(f"isalint: validation failed, nothing written: {verdict}", err=True)
                sys.exit(1)
        if outcome.only_hints:
            click.echo("isalint: validated: the rewrite assembles, and without its s_delay_alu hints is the "
                       "input's machine code byte for byte", err=True)
        elif not outcome.only_metadata:
            click.echo(f"isalint: validated: the rewrite computes what the input computes "
                       f"(GEMM N={', '.join(map(str, sizes))}, bit-identical)", err=True)
    diff = ""
    if show_diff:
        diff = unified_diff(original, text, path, output)
        click.echo(diff, nl=False)
    if destination is not None:
        write_result(destination, text)
    if diff:
        sys.exit(1)  # as ruff's --diff: a change to make
