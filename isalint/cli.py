"""Command line: ``isalint check|dump|graph|rules|explain|report|fix|assemble|validate|run``.

Subcommands live in ``isalint.commands.<name>`` and are imported only when
invoked, so ``isalint check`` does not pay for numpy, networkx or rich.
Exit codes: 0 clean, 1 findings (or a difference), 2 usage or input error.
"""
from __future__ import annotations

import sys

import click

COMMANDS = {
    "check": "isalint.commands.check:command",
    "dump": "isalint.commands.dump:command",
    "graph": "isalint.commands.graph:command",
    "rules": "isalint.commands.rules:rules_command",
    "explain": "isalint.commands.rules:explain_command",
    "report": "isalint.commands.report:command",
    "fix": "isalint.commands.fix:command",
    "assemble": "isalint.commands.assemble:command",
    "validate": "isalint.commands.validate:command",
    "run": "isalint.commands.run:command",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return [name for name in COMMANDS if self._available(name)]

    @staticmethod
    def _available(name: str) -> bool:
        import importlib.util

        module = COMMANDS[name].split(":")[0]
        return importlib.util.find_spec(module) is not None

    def get_command(self, ctx, name):
        if name not in COMMANDS or not self._available(name):
            return None
        import importlib

        module, attr = COMMANDS[name].split(":")
        return getattr(importlib.import_module(module), attr)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="isalint")
def cli():
    """Static analyzer, linter and optimizer for AMD RDNA3 (gfx11) GEMM assembly."""


def main(argv=None):
    try:
        return cli.main(args=argv, prog_name="isalint", standalone_mode=True)
    except KeyboardInterrupt:
        click.echo("isalint: interrupted", err=True)
        sys.exit(2)
