"""``isalint fix --PASS... IN.s``: rewrite passes, each proven or refused.

A pass lives in ``isalint.fixes.<name>`` and exposes
``apply(analysis, options: dict) -> FixResult``; it raises ``FixRefused`` with a
clear reason when it cannot prove the rewrite safe. Passes run in the order
given; each sees the previous one's output re-parsed. Nothing is written unless
every pass succeeded and (unless ``--no-validate``) the validation passed.
"""
from __future__ import annotations

import difflib
import os
import sys
import tempfile

import click

from ..fixes import FixRefused, FixResult  # noqa: F401  (re-exported for passes)
from .common import fail, load_analysis

PASSES = {
    "dual_fmac": "isalint.fixes.dual_fmac",
    "metadata": "isalint.fixes.metadata",
    "unroll": "isalint.fixes.unroll",
}


@click.command("fix")
@click.argument("path", type=click.Path())
@click.option("--dual-fmac", is_flag=True, help="Rewrite the hot loop's FMAs as bank-conflict-free v_dual_fmac_f32.")
@click.option("--metadata", is_flag=True, help="Rewrite VGPR/SGPR counts in the descriptor, metadata and comments.")
@click.option("--unroll", is_flag=True, help="Unroll a loop of proven trip count, folding its address steps into "
                                             "LDS offsets.")
@click.option("-o", "--output", type=click.Path(), help="Write the result here.")
@click.option("--in-place", is_flag=True, help="Overwrite the input.")
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff instead of (or as well as) writing.")
@click.option("--loop", "loop_label", help="Loop header label for loop passes (default: the hottest loop).")
@click.option("--factor", type=int, help="With --unroll: copies per iteration of a shorter loop (a divisor of the "
                                         "trip count; default: unroll fully).")
@click.option("--no-validate", is_flag=True, help="Skip assembling and emulating the result.")
@click.option("--gemm", "gemm_n", type=int, default=256, show_default=True,
              help="Matrix size for validating a kernel with the GEMM ABI.")
def command(path, dual_fmac, metadata, unroll, output, in_place, show_diff, loop_label, factor, no_validate, gemm_n):
    """Apply fix passes; exit 0 on success, 1 when a pass refused or validation failed, 2 on input errors."""
    import importlib

    chosen = [name for name, on in (("dual_fmac", dual_fmac), ("unroll", unroll), ("metadata", metadata)) if on]
    if not chosen:
        fail("choose at least one pass: --dual-fmac, --unroll, --metadata")
    if factor is not None and not unroll:
        fail("--factor goes with --unroll")
    if output and in_place:
        fail("use either -o/--output or --in-place, not both")
    if not (output or in_place or show_diff):
        fail("say where the result goes: -o OUT.s, --in-place, or --diff")
    analysis = load_analysis(path)
    original = analysis.program.source.render()
    text = original
    summaries: list[str] = []
    for name in chosen:
        module = importlib.import_module(PASSES[name])
        try:
            result = module.apply(analysis, {"loop": loop_label, "factor": factor})
        except FixRefused as exc:
            click.echo(f"isalint: fix --{name.replace('_', '-')} refused: {exc}", err=True)
            click.echo("isalint: input left untouched", err=True)
            sys.exit(1)
        text = result.text
        summaries.append(result.summary)
        if name != chosen[-1]:
            from ..analysis import Analysis
            from ..parse.source import parse_text

            analysis = Analysis.from_source(parse_text(text, path))
    for s in summaries:
        if s:
            click.echo(s, err=True)
    if text == original:
        click.echo("isalint: nothing to change", err=True)
    elif not no_validate:
        verdict = _validate(path, original, text, gemm_n, code_unchanged=chosen == ["metadata"])
        if verdict is not None:
            click.echo(f"isalint: validation failed, nothing written: {verdict}", err=True)
            sys.exit(1)
    if show_diff:
        click.echo("".join(difflib.unified_diff(original.splitlines(True), text.splitlines(True),
                                                fromfile=path, tofile=output or path)), nl=False)
    target = path if in_place else output
    if target:
        _write_atomic(target, text, analysis.program.source)
        click.echo(f"isalint: wrote {target}", err=True)


def _validate(path: str, original: str, candidate: str, gemm_n: int, code_unchanged: bool = False) -> str | None:
    """None when the candidate is proven equal to the original, else the reason it is not.

    A pass that only rewrites metadata must leave the machine code byte-identical: both files are
    assembled and their ``.text`` sections compared. Other passes are run against the original in
    the emulator.
    """
    if code_unchanged:
        return _same_code(path, original, candidate)
    try:
        from ..validate import equivalence
    except ImportError:
        return "the validator is not available in this installation"
    return equivalence.check_rewrite(path, original, candidate, gemm_n=gemm_n)


def _same_code(path: str, original: str, candidate: str) -> str | None:
    from ..validate.elf import section_bytes
    from ..validate.toolchain import ToolchainError, find_toolchain

    try:
        tc = find_toolchain(need_linker=False)
    except ToolchainError as exc:
        return f"cannot assemble to check the result: {exc}"
    with tempfile.TemporaryDirectory() as tmp:
        texts = []
        for name, source in (("original", original), ("candidate", candidate)):
            obj = os.path.join(tmp, f"{name}.o")
            result = tc.assemble(source, obj, source_name=path)
            if not result.ok:
                first = result.errors[0].format() if result.errors else result.stderr.strip()[:200]
                return f"the {name} does not assemble: {first}"
            with open(obj, "rb") as fh:
                texts.append(section_bytes(fh.read(), ".text"))
    if texts[0] is None or texts[0] != texts[1]:
        return "the machine code changed, but this pass may only change metadata"
    return None


def _write_atomic(target: str, text: str, source) -> None:
    data = text.encode("utf-8", "surrogateescape")
    directory = os.path.dirname(os.path.abspath(target))
    fd, tmp = tempfile.mkstemp(prefix=".isalint-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
