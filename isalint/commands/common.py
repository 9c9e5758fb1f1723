"""Shared helpers of the subcommands: loading a file, failing with exit code 2, showing and writing a
rewritten file."""
from __future__ import annotations

import sys

import click


def load_analysis(path: str, target: str | None = None):
    from ..analysis import Analysis
    from ..checker import find_config
    from ..config import ConfigError
    from ..parse.source import InputError

    try:
        config = find_config(path)
        for w in config.warnings:
            click.echo(f"isalint: warning: {w}", err=True)
        return Analysis.from_path(path, {"target": target or config.target})
    except (InputError, ConfigError) as exc:
        fail(str(exc))


def fail(message: str, code: int = 2):
    click.echo(f"isalint: {message}", err=True)
    sys.exit(code)


def select_loop(analysis, label: str | None):
    """The loop named by ``label`` (its header label), else the hottest loop; exit 2 for a label that
    heads no loop."""
    from ..model.cfg import NoSuchLoop

    try:
        return analysis.cfg.select_loop(label)
    except NoSuchLoop as exc:
        fail(f"{analysis.program.path}: {exc}")


def loop_name(analysis, loop) -> str:
    return analysis.cfg.loop_name(loop)


def unified_diff(original: str, new: str, path: str, output: str | None) -> str:
    import difflib

    return "".join(difflib.unified_diff(original.splitlines(True), new.splitlines(True), fromfile=path,
                                        tofile=output or path))


def write_result(destination, text: str) -> None:
    """Write a rewritten file to its checked destination, unless it already holds it; say which."""
    from ..fixes.toolkit.destination import DestinationError, holds, write

    data = text.encode("utf-8", "surrogateescape")
    if holds(destination, data):
        click.echo(f"isalint: {destination.shown} already holds the result; left untouched", err=True)
        return
    try:
        write(destination, data)
    except DestinationError as exc:
        fail(str(exc))
    click.echo(f"isalint: wrote {destination.shown}", err=True)
