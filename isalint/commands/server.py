"""``isalint server``: the language server over stdio (:mod:`isalint.server`)."""
from __future__ import annotations

import click

from .common import fail


@click.command("server")
@click.option("--stdio", is_flag=True, help="Talk over standard input and output (the default and only transport).")
def command(stdio):
    """Run the language server for gfx11 assembly: diagnostics as you type, hover on instructions,
    registers and rule codes, suppressions and validated fixes as code actions. An editor starts it;
    see the README for VS Code, Neovim and Helix."""
    from ..server import missing_requirement

    missing = missing_requirement()
    if missing:
        fail(missing)
    from ..server.app import main

    main()
