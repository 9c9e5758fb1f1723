"""Shared helpers of the subcommands: loading a file or failing with exit code 2."""
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
    """The loop named by ``label`` (its header label), else the hottest loop."""
    cfg = analysis.cfg
    if label:
        loop = cfg.find_loop(label)
        if loop is None:
            names = ", ".join(cfg.blocks[lp.header].label or f"block {lp.header}" for lp in cfg.loops) or "none"
            fail(f"{analysis.program.path}: no loop headed by label {label} (loops: {names})")
        return loop
    return cfg.hottest_loop()


def loop_name(analysis, loop) -> str:
    blk = analysis.cfg.blocks[loop.header]
    return blk.label or f"block{loop.header}"
