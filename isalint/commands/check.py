"""``isalint check PATH...``: run the rules and report findings.

``isalint check`` runs on every save and in pre-commit hooks, so it does not wait for click:
:func:`parse_args` reads the usual command lines by hand and :func:`run` does the work. Anything
else (``--help``, an unknown option, a bad choice, a missing path) goes to the click command
built by :func:`build_command`, which reports it the click way.
"""
from __future__ import annotations

import os
import sys

FORMATS = ("text", "json", "sarif", "github")
SEVERITIES = ("error", "warning", "info")
_VALUED = {"--select": "select", "--ignore": "ignore", "--format": "fmt", "--target": "target",
           "--fail-on": "fail_on"}
_CHOICES = {"fmt": FORMATS, "fail_on": SEVERITIES}


def parse_args(args: list[str]) -> dict | None:
    """The keyword arguments of :func:`run` for the command line after ``check``, or None
    when it is anything but plain paths and well-formed options (click then handles it)."""
    opts: dict = {"paths": [], "select": None, "ignore": None, "fmt": "text", "target": None, "color": None,
                  "fail_on": "info"}
    k = 0
    while k < len(args):
        arg = args[k]
        k += 1
        if not arg.startswith("-"):
            opts["paths"].append(arg)
            continue
        if arg in ("--color", "--no-color"):
            opts["color"] = arg == "--color"
            continue
        name, eq, value = arg.partition("=")
        key = _VALUED.get(name)
        if key is None:
            return None  # --help, --, -x, an unknown option
        if not eq:
            if k >= len(args) or args[k].startswith("-"):
                return None
            value = args[k]
            k += 1
        if key in _CHOICES and value not in _CHOICES[key]:
            return None
        opts[key] = value
    if not opts["paths"] or not all(opts["paths"]):
        return None
    return opts


def _codes(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [c.strip().upper() for c in value.split(",") if c.strip()]


def _echo(message: str, err: bool = False) -> None:
    stream = sys.stderr if err else sys.stdout
    stream.write(message + "\n")
    stream.flush()


def run(paths, select=None, ignore=None, fmt="text", target=None, color=None, fail_on="info",
        hard_exit=False):
    """Check ``paths`` and exit: 0 without findings, 1 with findings, 2 on a usage or input error.

    ``hard_exit`` (the command line's own process only) ends the process without tearing down
    the analysed files' objects one by one, which takes longer than some rules.
    """
    keep: list = []
    try:
        code = _run(list(paths), select, ignore, fmt, target, color, fail_on, keep if hard_exit else None)
        if hard_exit:
            sys.stdout.flush()
            sys.stderr.flush()
    except BrokenPipeError:  # `isalint check ... | head`
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the interpreter's final flush
        except OSError:
            pass
        code = 1
    if hard_exit:
        os._exit(code)
    sys.exit(code)


def _run(paths, select, ignore, fmt, target, color, fail_on, keep: list | None = None) -> int:
    """The check; with ``keep``, the last file's analysis is left in it and the collector off
    (the caller is about to end the process)."""
    import gc

    from .. import rules as registry
    from ..analysis import Analysis
    from ..checker import check_analysis, expand_paths, find_config, selected_codes
    from ..parse.source import InputError
    from ..report import findings as out

    files = expand_paths(paths)
    if not files:
        _echo("isalint: no .s or .asm files found in " + ", ".join(paths), err=True)
        return 2
    available = registry.available()
    cli_select, cli_ignore = _codes(select), _codes(ignore) or []
    unknown = [c for c in (cli_select or []) + cli_ignore if not any(a.startswith(c) for a in available) and c != "ALL"]
    if unknown:
        _echo(f"isalint: unknown rule code(s): {', '.join(unknown)}", err=True)
        return 2
    diagnostics, sources, errors = [], {}, []
    # One file's model is a few hundred thousand small objects with no garbage cycles worth
    # collecting while it is in use: the cyclic collector would only rescan them, over and over.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    froze = False
    try:
        analysis = None
        for n, path in enumerate(files):
            if n:
                analysis = None
                gc.collect()  # the previous file's model; what survives (its source) is not rescanned
                gc.freeze()
                froze = True
            config = find_config(path)
            # an explicit --select on the command line replaces the file's select and ignore lists
            if cli_select is not None:
                codes = selected_codes(available, cli_select, cli_ignore)
            else:
                codes = selected_codes(available, config.select, cli_ignore + config.ignore)
            try:
                analysis = Analysis.from_path(path, {"target": target or config.target})
            except InputError as exc:
                errors.append(str(exc))
                continue
            sources[path] = analysis.program.source
            diagnostics.extend(check_analysis(analysis, codes))
        if keep is not None:
            keep.append(analysis)
    finally:
        if keep is None:
            if froze:
                gc.unfreeze()
            if gc_was_enabled:
                gc.enable()
    for e in errors:
        _echo(f"isalint: {e}", err=True)
    if fmt == "json":
        _echo(out.render_json(diagnostics))
    elif fmt == "sarif":
        _echo(out.render_sarif(diagnostics, registry.all_rules()))
    elif fmt == "github":
        if diagnostics:
            _echo(out.render_github(diagnostics))
    else:
        use_color = out.stdout_is_terminal() if color is None else color
        if diagnostics:
            _echo(out.render_text(diagnostics, sources, use_color))
        _echo(out.summary_line(diagnostics, len(files) - len(errors)))
    if errors:
        return 2
    rank = {"error": 0, "warning": 1, "info": 2}
    failing = [d for d in diagnostics if rank[d.severity] <= rank[fail_on]]
    return 1 if failing else 0


def build_command():
    """The click command (``isalint check --help`` and command lines :func:`parse_args` refuses)."""
    import click

    @click.command("check")
    @click.argument("paths", nargs=-1, required=True, type=click.Path())
    @click.option("--select", help="Comma-separated rule codes (or prefixes) to run.")
    @click.option("--ignore", help="Comma-separated rule codes (or prefixes) to skip.")
    @click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default="text", show_default=True)
    @click.option("--target", help="Target when a file has no .amdgcn_target (default gfx1100).")
    @click.option("--color/--no-color", default=None, help="Color text output (default: when on a terminal).")
    @click.option("--fail-on", type=click.Choice(list(SEVERITIES)), default="info", show_default=True,
                  help="Lowest severity that makes the exit code 1 (all findings are still reported).")
    def command(paths, select, ignore, fmt, target, color, fail_on):
        """Report problems in gfx11 assembly files (directories are searched for .s/.asm).

        Exit 0 when there are no findings, 1 when there are, 2 on a usage or input error.
        """
        run(paths, select, ignore, fmt, target, color, fail_on)

    return command


def __getattr__(name: str):
    if name == "command":
        cmd = globals()["command"] = build_command()
        return cmd
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
