"""Command line: ``isalint check|dump|graph|rules|explain|report|fix|assemble|disasm|validate|run|estimate|optimize|server``.

Subcommands live in ``isalint.commands.<name>`` and are imported only when
invoked, so ``isalint check`` does not pay for numpy, networkx or rich; a
plain ``isalint check`` command line does not even import click (see
:mod:`isalint.commands.check`). Exit codes: 0 clean, 1 findings (or a
difference), 2 usage or input error (or a failure isalint did not foresee), 130 interrupted.
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
    "disasm": "isalint.commands.disasm:command",
    "validate": "isalint.commands.validate:command",
    "run": "isalint.commands.run:command",
    "estimate": "isalint.commands.estimate:command",
    "optimize": "isalint.commands.optimize:command",
    "server": "isalint.commands.server:command",
}

_GROUP = None
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a process ended by Ctrl-C


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

    from . import __version__

    @click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
    @click.version_option(version=__version__, prog_name="isalint")
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
    """The ``isalint`` command: exit 0 clean, 1 findings, 2 usage or input error, 130 interrupted.

    Nothing escapes as a traceback: an unforeseen exception is one line naming the file
    (:mod:`isalint.failure`) and exit code 2.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    sys.exit(_outcome(args))


def _outcome(args: list[str]) -> int:
    """The exit code of ``isalint ARGS``, whenever a Ctrl-C arrives.

    Python raises KeyboardInterrupt wherever the main thread is when SIGINT comes: also inside
    :func:`_run`'s own ``except`` clauses (a usage error being reported), where no sibling clause
    catches it, or after the exit code is known, while the interpreter unwinds and shuts down; an
    uncaught KeyboardInterrupt makes Python end by SIGINT instead of an exit code. So an interrupt
    that escapes :func:`_run` is caught here, and once the outcome is decided further Ctrl-Cs are
    ignored: the process exits with its code (130 when interrupted), never dies of the signal.
    """
    try:
        code = _run(args)
        _ignore_interrupts()
    except KeyboardInterrupt:
        _ignore_interrupts()
        _say("isalint: interrupted")
        code = EXIT_INTERRUPTED
    return code


def _ignore_interrupts() -> None:
    import signal

    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: the signal is not delivered here anyway
        pass


def _run(args: list[str], hard_exit: bool = True) -> int:
    """The exit code of ``isalint ARGS``. ``hard_exit``: a plain ``check`` ends the process itself
    (:func:`isalint.commands.check.run`); off, everything returns here (for running in-process)."""
    try:
        if args[:1] == ["check"]:
            from .commands import check

            opts = check.parse_args(args[1:])
            if opts is not None:
                return check.run(**opts, hard_exit=hard_exit)
        return _run_click(args)
    except KeyboardInterrupt:
        _say("isalint: interrupted")
        return EXIT_INTERRUPTED
    except SystemExit as exc:
        return _exit_code(exc.code)
    except BrokenPipeError:  # `isalint ... | head`
        _silence_stdout()
        return 1
    except Exception as exc:  # noqa: BLE001 - the last line of defence: a bug, reported in one line
        from . import failure

        failure.print_traceback_if_asked(exc)
        _say("isalint: " + failure.describe(exc, failure.current_file() or _named_file(args)))
        return failure.EXIT_ERROR


def _run_click(args: list[str]) -> int:
    import click

    try:
        result = _build_group().main(args=args, prog_name="isalint", standalone_mode=False)
    except click.exceptions.Abort:  # click's name for Ctrl-C (and end of input at a prompt)
        _say("isalint: interrupted")
        return EXIT_INTERRUPTED
    except click.exceptions.ClickException as exc:
        exc.show()
        return exc.exit_code
    return result if isinstance(result, int) else 0


def _exit_code(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    _say(str(code))
    return 1


def _named_file(args: list[str]) -> str | None:
    """The first argument naming an existing file: the file a failure is most likely about."""
    import os

    for a in args[1:]:
        if not a.startswith("-") and os.path.isfile(a):
            return a
    return None


def _say(message: str) -> None:
    try:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _silence_stdout() -> None:
    import os

    try:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the interpreter's final flush must not fail
    except OSError:
        pass
