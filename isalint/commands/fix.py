"""``isalint fix --PASS... IN.s``: rewrite passes, each proven or refused.

The passes are listed in :data:`isalint.fixes.PASSES`; :mod:`isalint.fixes.toolkit.pipeline` runs them
in the order given (each sees the previous one's output re-parsed), validates and writes. Nothing is
written unless every pass succeeded and (unless ``--no-validate``) the validation passed.
"""
from __future__ import annotations

import sys

import click

from .common import fail, load_analysis, unified_diff, write_result


@click.command("fix")
@click.argument("path", type=click.Path())
@click.option("--dual-fmac", is_flag=True, help="Rewrite the hot loop's FMAs as bank-conflict-free v_dual_fmac_f32.")
@click.option("--batch-gmem", is_flag=True,
              help="Load the loop's global loads from SGPR bases with one VGPR byte offset per group.")
@click.option("--delay-alu", is_flag=True, help="Write the s_delay_alu hints DELAY001 finds missing.")
@click.option("--metadata", is_flag=True, help="Rewrite VGPR/SGPR counts in the descriptor, metadata and comments.")
@click.option("--unroll", is_flag=True, help="Unroll a loop of proven trip count, folding its address steps into "
                                             "LDS offsets.")
@click.option("-o", "--output", type=click.Path(), help="Write the result here.")
@click.option("--in-place", is_flag=True, help="Overwrite the input.")
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff instead of (or as well as) writing.")
@click.option("--loop", "loop_label", help="Loop header label for loop passes (default: the hottest loop; for "
                                             "--batch-gmem, the loop with the most VGPR-addressed global loads).")
@click.option("--factor", type=int, help="With --unroll: copies per iteration of a shorter loop (a divisor of the "
                                         "trip count; default: unroll fully).")
@click.option("--no-validate", is_flag=True, help="Skip assembling and emulating the result.")
@click.option("--max-n", type=click.IntRange(min=1), default=None,
              help="--batch-gmem: the largest N the output must support, when its 32-bit offsets cannot "
                   "cover every N the original handles.")
@click.option("--spread", is_flag=True, help="--batch-gmem: spread the loads over the loop body in groups of 2.")
@click.option("--gemm", "gemm_n", type=int, multiple=True,
              help="Matrix size for validating a kernel with the GEMM ABI (repeatable; default 256, and 384 "
                   "as well for a pass whose code depends on N, such as --batch-gmem).")
@click.option("--grid", help="Workgroups X[,Y[,Z]] of the validation launch (default N/128 x N/128).")
@click.option("--block", help="Work-items per workgroup X[,Y[,Z]] of the validation launch (default: the "
                              "kernel's .reqd_workgroup_size, else 128).")
def command(path, dual_fmac, batch_gmem, delay_alu, metadata, unroll, output, in_place, show_diff, loop_label, factor,
            no_validate, max_n, spread, gemm_n, grid, block):
    """Apply fix passes; exit 0 on success, 1 when a pass refused, validation failed or --diff shows a
    change, 2 on input errors (and when the destination cannot be written or no assembler validates)."""
    from ..fixes.toolkit.destination import DestinationError, check_destination
    from ..fixes.toolkit.pipeline import run_passes, validate, validator_missing

    # the order of the chain kernel 5 -> 6 -> 7 -> 8: each pass sees the previous one's output
    chosen = [name for name, on in (("dual_fmac", dual_fmac), ("unroll", unroll), ("batch_gmem", batch_gmem),
                                    ("delay_alu", delay_alu), ("metadata", metadata)) if on]
    if not chosen:
        fail("choose at least one pass: --dual-fmac, --unroll, --batch-gmem, --delay-alu, --metadata")
    if factor is not None and not unroll:
        fail("--factor goes with --unroll")
    if (max_n is not None or spread) and not batch_gmem:
        fail("--max-n and --spread belong to --batch-gmem")
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
    with progress(f"fix --{' --'.join(n.replace('_', '-') for n in chosen)}: rewriting {path}"):
        outcome = run_passes(analysis, chosen, {"loop": loop_label, "factor": factor, "max_n": max_n,
                                                "spread": spread})
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
