"""``isalint fix --PASS... IN.s``: rewrite passes, each proven or refused.

The passes are listed in :data:`isalint.fixes.PASSES`; :mod:`isalint.fixes.toolkit.pipeline` runs them
in the order given (each sees the previous one's output re-parsed), validates and writes. Nothing is
written unless every pass succeeded and (unless ``--no-validate``) the validation passed.
"""
from __future__ import annotations

import difflib
import sys

import click

from .common import fail, load_analysis


@click.command("fix")
@click.argument("path", type=click.Path())
@click.option("--dual-fmac", is_flag=True, help="Rewrite the hot loop's FMAs as bank-conflict-free v_dual_fmac_f32.")
@click.option("--metadata", is_flag=True, help="Rewrite VGPR/SGPR counts in the descriptor, metadata and comments.")
@click.option("-o", "--output", type=click.Path(), help="Write the result here.")
@click.option("--in-place", is_flag=True, help="Overwrite the input.")
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff instead of (or as well as) writing.")
@click.option("--loop", "loop_label", help="Loop header label for loop passes (default: the hottest loop).")
@click.option("--no-validate", is_flag=True, help="Skip assembling and emulating the result.")
@click.option("--gemm", "gemm_n", type=int, default=256, show_default=True,
              help="Matrix size for validating a kernel with the GEMM ABI.")
@click.option("--grid", help="Workgroups X[,Y[,Z]] of the validation launch (default N/128 x N/128).")
@click.option("--block", help="Work-items per workgroup X[,Y[,Z]] of the validation launch (default: the "
                              "kernel's .reqd_workgroup_size, else 128).")
def command(path, dual_fmac, metadata, output, in_place, show_diff, loop_label, no_validate, gemm_n, grid, block):
    """Apply fix passes; exit 0 on success, 1 when a pass refused or validation failed, 2 on input errors."""
    from ..fixes.toolkit.pipeline import run_passes, validate, write_atomic

    chosen = [name for name, on in (("dual_fmac", dual_fmac), ("metadata", metadata)) if on]
    if not chosen:
        fail("choose at least one pass: --dual-fmac, --metadata")
    if output and in_place:
        fail("use either -o/--output or --in-place, not both")
    if not (output or in_place or show_diff):
        fail("say where the result goes: -o OUT.s, --in-place, or --diff")
    from ..validate.runner import UsageError, parse_dims

    try:
        grid_d, block_d = parse_dims(grid, "grid"), parse_dims(block, "block")
    except UsageError as exc:
        fail(str(exc))
    from .progress import progress

    analysis = load_analysis(path)
    with progress(f"fix --{' --'.join(n.replace('_', '-') for n in chosen)}: rewriting {path}"):
        outcome = run_passes(analysis, chosen, {"loop": loop_label})
    if outcome.refused is not None:
        name, reason = outcome.refused
        click.echo(f"isalint: fix --{name.replace('_', '-')} refused: {reason}", err=True)
        click.echo("isalint: input left untouched", err=True)
        sys.exit(1)
    for s in outcome.summaries:
        if s:
            click.echo(s, err=True)
    original, text = outcome.original, outcome.text
    if not outcome.changed:
        click.echo("isalint: nothing to change", err=True)
    elif not no_validate:
        with progress("validating the rewrite") as shown:
            verdict = validate(path, original, text, gemm_n, code_unchanged=outcome.only_metadata, grid=grid_d,
                               block=block_d, stage=lambda what: shown.update(f"validating: {what}"))
        if verdict is not None:
            click.echo(f"isalint: validation failed, nothing written: {verdict}", err=True)
            sys.exit(1)
    if show_diff:
        click.echo("".join(difflib.unified_diff(original.splitlines(True), text.splitlines(True),
                                                fromfile=path, tofile=output or path)), nl=False)
    target = path if in_place else output
    if target:
        write_atomic(target, text)
        click.echo(f"isalint: wrote {target}", err=True)
