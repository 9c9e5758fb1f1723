"""Command line: ``isalint check|dump|graph|rules|explain|report|fix|assemble|validate|run|estimate|optimize``.

Subcommands live in ``isalint.commands.<name>`` and are imported only when
invoked, so ``isalint check`` does not pay for numpy, networkx or rich; a
plain ``isalint check`` command line does not even import click (see
:mod:`isalint.commands.check`). Exit codes: 0 clean, 1 findings (or a
difference), 2 usage or input error.
"""
from __future__ import annotations

import sys

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
    "estimate": "isalint.commands.estimate:command",
    "optimize": "isalint.commands.optimize:command",
}

_GROUP = None


def _available(name: str) -> bool:
    import importlib.util

    module = COMMANDS[name].split(":")[0]
    return importlib.util.find_spec(module) is not None


def _build_group():
    """The click group (built on first use: click costs more to import than a small check)."""
    global _GROUP
    if _GROUP is not None:
        return _GROUP
    import click

    class LazyGroup(click.Group):
        def list_commands(self, ctx):
            return [name for name in COMMANDS if _available(name)]

        def get_command(self, ctx, name):
            if name not in COMMANDS or not _available(name):
                return None
            import importlib

            module, attr = COMMANDS[name].split(":")
            return getattr(importlib.import_module(module), attr)

    @click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
    @click.version_option(package_name="isalint")
    def cli():
        """Static analyzer, linter and optimizer for AMD RDNA3 (gfx11) GEMM assembly."""

    _GROUP = cli
    return cli


def __getattr__(name: str):
    if name == "cli":
        return _build_group()
    if name == "LazyGroup":
        return type(_build_group())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        if args[:1] == ["check"]:
            from .commands import check

            opts = check.parse_args(args[1:])
            if opts is not None:
                return check.run(**opts, hard_exit=True)
        return _build_group().main(args=args, prog_name="isalint", standalone_mode=True)
    except KeyboardInterrupt:
        sys.stderr.write("isalint: interrupted\n")
        sys.exit(2)
