"""`isalint assemble FILE -o K.hsaco`: assemble (and link) a gfx11 .s file with a real LLVM.

Exit status: 0 on success, 1 when the assembler or linker rejects the file (diagnostics are
printed as ``path:line:col: error: message``), 2 when no toolchain is available or the input
cannot be read / the output cannot be written. Nothing is written unless everything succeeded.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import NoReturn

import click

from isalint.validate.toolchain import (
    AssembleResult,
    ToolchainError,
    ToolchainNotFound,
    find_toolchain,
)


def _fail(msg: str) -> NoReturn:
    click.echo(msg, err=True)
    raise SystemExit(2)


def _print_diagnostics(res: AssembleResult) -> None:
    for d in res.diagnostics:
        if d.severity in ("error", "warning"):
            click.echo(d.format(), err=True)


@click.command("assemble")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=True))
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Output file (default: FILE with .hsaco, or .o with --obj-only).")
@click.option("--obj-only", is_flag=True, help="Stop after assembling; write a relocatable .o.")
@click.option("--toolchain", "toolchain_kind", default=None, metavar="KIND",
              help="auto, rocm, llvm, zig, or a path to llvm-mc (default: $ISALINT_ASSEMBLER, else auto).")
@click.option("--mcpu", default=None, metavar="GFX",
              help="Target processor (default: the file's .amdgcn_target, else gfx1100).")
def assemble(file: Path, output: Path | None, obj_only: bool, toolchain_kind: str | None,
             mcpu: str | None) -> None:
    """Assemble FILE into a code object (.hsaco) with a gfx11-capable LLVM."""
    try:
        with open(file, "rb") as fh:
            fh.read(1)
    except OSError as exc:
        _fail(f"{file}: error: cannot read: {exc.strerror or exc}")
    if output is None:
        output = file.with_suffix(".o" if obj_only else ".hsaco")
    from ..fixes.toolkit.destination import DestinationError, check_destination, set_mode

    try:
        dest = check_destination(str(output))
    except DestinationError as exc:
        _fail(f"isalint: error: {exc}")
    shown, output = output, Path(dest.path)  # written through its symlinks, never over a device

    try:
        tc = find_toolchain(toolchain_kind, need_linker=not obj_only)
    except ToolchainNotFound as exc:
        _fail(f"isalint: error: {exc}")

    try:
        if obj_only:
            res = tc.assemble(file, output, mcpu=mcpu, source_name=str(file))
        else:
            with tempfile.TemporaryDirectory(prefix="isalint-") as td:
                obj = Path(td) / (file.stem + ".o")
                res = tc.assemble(file, obj, mcpu=mcpu, source_name=str(file))
                if res.ok:
                    asm_diags = res.diagnostics
                    res = tc.link(obj, output)
                    res.diagnostics = asm_diags + res.diagnostics
    except ToolchainError as exc:
        _fail(f"isalint: error: {exc}")
    except OSError as exc:
        _fail(f"{file}: error: {exc.strerror or exc}")

    _print_diagnostics(res)
    if not res.ok:
        raise SystemExit(1)
    set_mode(dest)
    click.echo(f"{file} -> {shown} ({tc.describe()})", err=True)


command = assemble
