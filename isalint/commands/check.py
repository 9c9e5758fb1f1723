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
_VALUED = {"--select": "select", "--ignore": "ignore", "--extend-select": "extend_select", "--format": "fmt",
           "--target": "target", "--fail-on": "fail_on", "--min-severity": "min_severity",
           "--output-file": "output_file", "-o": "output_file", "--config": "config",
           "--stdin-filename": "stdin_filename"}
_FLAGS = {"--color": ("color", True), "--no-color": ("color", False), "--statistics": ("statistics", True),
          "--exit-zero": ("exit_zero", True), "-q": ("quiet", True), "--quiet": ("quiet", True),
          "-v": ("verbose", True), "--verbose": ("verbose", True), "--watch": ("watch", True)}
_CHOICES = {"fmt": FORMATS, "fail_on": SEVERITIES, "min_severity": SEVERITIES}
_RANK = {"error": 0, "warning": 1, "info": 2}
WATCH_INTERVAL = 0.5  # seconds between looks at the watched files


def parse_args(args: list[str]) -> dict | None:
    """The keyword arguments of :func:`run` for the command line after ``check``, or None
    when it is anything but plain paths and well-formed options (click then handles it)."""
    opts: dict = {"paths": []}
    k = 0
    while k < len(args):
        arg = args[k]
        k += 1
        if arg == "-" or not arg.startswith("-"):
            opts["paths"].append(arg)
            continue
        if arg in _FLAGS:
            key, value = _FLAGS[arg]
            opts[key] = value
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
    return [c.strip() for c in value.split(",") if c.strip()]


def _echo(message: str, err: bool = False) -> None:
    stream = sys.stderr if err else sys.stdout
    stream.write(message + "\n")
    stream.flush()


class Options:
    """What the command line asked for (the keyword arguments of :func:`run`)."""

    def __init__(self, paths, select=None, ignore=None, extend_select=None, fmt="text", target=None, color=None,
                 fail_on="info", min_severity="info", exit_zero=False, statistics=False, output_file=None,
                 quiet=False, verbose=False, config=None, stdin_filename=None, watch=False):
        self.paths = list(paths)
        self.select, self.ignore, self.extend_select = _codes(select), _codes(ignore) or [], _codes(extend_select) or []
        self.fmt, self.target, self.color = fmt, target, color
        self.fail_on, self.min_severity, self.exit_zero = fail_on, min_severity, exit_zero
        self.statistics, self.output_file, self.quiet, self.verbose = statistics, output_file, quiet, verbose
        self.config, self.stdin_filename, self.watch = config, stdin_filename, watch


def run(paths, hard_exit=False, **options):
    """Check ``paths`` and exit: 0 without findings, 1 with findings, 2 on a usage or input error.

    ``hard_exit`` (the command line's own process only) ends the process without tearing down
    the analysed files' objects one by one, which takes longer than some rules.
    """
    opts = Options(paths, **options)
    if opts.watch:
        sys.exit(_watch(opts))
    keep: list = []
    try:
        code = _run(opts, keep if hard_exit else None)
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


def _usage(opts: Options, available: list[str]) -> tuple[str | None, dict]:
    """A usage error's message (or None) and the resolved code lists."""
    from ..checker import resolve_codes

    resolved, unknown = {}, []
    for key in ("select", "ignore", "extend_select"):
        tokens = getattr(opts, key)
        if tokens is None:
            resolved[key] = None
            continue
        codes, bad = resolve_codes(tokens, available)
        resolved[key] = codes
        unknown += bad
    if unknown:
        return f"unknown rule code(s) or name(s): {', '.join(unknown)} (see `isalint rules`)", resolved
    if "-" in opts.paths and opts.watch:
        return "--watch cannot read standard input ('-')", resolved
    if opts.stdin_filename and "-" not in opts.paths:
        return "--stdin-filename names standard input: give '-' as the path", resolved
    return None, resolved


def _run(opts: Options, keep: list | None = None) -> int:
    """The check; with ``keep``, the last file's analysis is left in it and the collector off
    (the caller is about to end the process)."""
    import gc

    from .. import rules as registry
    from ..analysis import Analysis, OtherProcessor
    from ..checker import check_analysis, expand_paths, find_config, load_config, selected_codes
    from ..parse.source import InputError, parse_bytes

    available = registry.available()
    problem, cli = _usage(opts, available)
    if problem:
        _echo(f"isalint: {problem}", err=True)
        return 2
    files = expand_paths(opts.paths)
    if not files:
        _echo("isalint: no .s or .asm files found in " + ", ".join(opts.paths), err=True)
        return 2
    fixed_config = None
    if opts.config:
        try:
            fixed_config = load_config(opts.config)
        except (OSError, ValueError) as exc:
            _echo(f"isalint: {opts.config}:1: cannot read the configuration: {exc}", err=True)
            return 2
    diagnostics, sources, errors, skipped = [], {}, [], []
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
            name = (opts.stdin_filename or "<stdin>") if path == "-" else path
            config = fixed_config or find_config(name if path == "-" else path)
            if opts.verbose and config.origin:
                _echo(f"isalint: {name}: configuration from {config.origin}", err=True)
            codes = _codes_for(available, cli, config, name, selected_codes)
            try:
                if path == "-":
                    source = parse_bytes(sys.stdin.buffer.read(), name)
                    analysis = Analysis.from_source(source, {"target": opts.target or config.target})
                else:
                    analysis = Analysis.from_path(path, {"target": opts.target or config.target})
            except OtherProcessor as exc:
                skipped.append(name)
                if opts.verbose:
                    _echo(f"isalint: skipped {name}: {exc.message}", err=True)
                continue
            except InputError as exc:
                errors.append(str(exc))
                continue
            sources[analysis.program.path] = analysis.program.source
            diagnostics.extend(check_analysis(analysis, codes, config))
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
    shown = [d for d in diagnostics if _RANK[d.severity] <= _RANK[opts.min_severity]]
    checked = len(files) - len(errors) - len(skipped)
    _report(opts, shown, sources, checked, len(skipped), len(errors))
    if errors:
        return 2
    if opts.exit_zero:
        return 0
    return 1 if any(_RANK[d.severity] <= _RANK[opts.fail_on] for d in shown) else 0


def _codes_for(available, cli: dict, config, path: str, selected_codes) -> list[str]:
    """The rules for one file. An explicit ``--select`` replaces the configuration's select and
    ignore lists; ``extend-select`` (both) adds to the selection; ``--ignore`` and the file's
    ``per-file-ignores`` always apply."""
    from ..checker import resolve_codes

    def resolved(tokens):
        return resolve_codes(tokens, available)[0]

    ignore = list(cli["ignore"] or []) + resolved(config.ignored_for(path))
    if cli["select"] is not None:
        select = cli["select"]
    else:
        select = resolved(config.select) if config.select is not None else None
        ignore += resolved(config.ignore)
    extend = list(cli["extend_select"] or []) + resolved(config.extend_select)
    codes = selected_codes(available, select, ignore)
    if extend:
        more = selected_codes(available, extend, ignore)
        codes = [c for c in available if c in codes or c in more]
    return codes


def _report(opts: Options, shown, sources, checked: int, skipped: int, failed: int) -> None:
    from .. import rules as registry
    from ..report import findings as out

    if opts.output_file:
        stream = open(opts.output_file, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    else:
        stream = sys.stdout
    try:
        def emit(text: str) -> None:
            stream.write(text + "\n")

        if opts.statistics:
            if shown:
                emit(out.render_statistics(shown, {m.CODE: m for m in registry.all_rules()}))
        elif opts.fmt == "json":
            emit(out.render_json(shown))
        elif opts.fmt == "sarif":
            emit(out.render_sarif(shown, registry.all_rules()))
        elif opts.fmt == "github":
            if shown:
                emit(out.render_github(shown))
        elif shown:
            to_terminal = stream is sys.stdout
            color = out.use_color(opts.color if to_terminal else False)
            emit(out.render_text(shown, sources, color, out.text_width() if to_terminal else out.WIDTH))
        if opts.fmt == "text" and not opts.quiet and (checked or skipped or not failed):
            emit(out.summary_line(shown, checked, skipped, failed))
        stream.flush()
    finally:
        if stream is not sys.stdout:
            stream.close()


def _watch(opts: Options) -> int:
    """Check, then check again whenever a watched file changes (polling), until interrupted."""
    import time

    from ..checker import expand_paths

    def stamps():
        out = {}
        for p in expand_paths(opts.paths):
            try:
                st = os.stat(p)
                out[p] = (st.st_mtime_ns, st.st_size)
            except OSError:
                out[p] = None
        return out

    last = None
    while True:
        now = stamps()
        if now != last:
            if last is not None:
                _echo("", err=False)
            code = _run(opts)
            _echo(f"isalint: watching {len(now)} file(s) for changes (Ctrl-C stops)", err=True)
            if code == 2 and last is None and not now:
                return 2
            last = now
        time.sleep(WATCH_INTERVAL)


def build_command():
    """The click command (``isalint check --help`` and command lines :func:`parse_args` refuses)."""
    import click

    @click.command("check")
    @click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
    @click.option("--select", help="Comma-separated rule codes, prefixes or names to run (replaces the "
                                   "configuration's select and ignore).")
    @click.option("--extend-select", help="Rule codes, prefixes or names to run on top of the selection.")
    @click.option("--ignore", help="Comma-separated rule codes, prefixes or names to skip.")
    @click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default="text", show_default=True)
    @click.option("--target", help="Target when a file has no .amdgcn_target (default gfx1100).")
    @click.option("--color/--no-color", default=None,
                  help="Color text output (default: on a terminal, unless NO_COLOR is set; FORCE_COLOR forces it).")
    @click.option("--min-severity", type=click.Choice(list(SEVERITIES)), default="info", show_default=True,
                  help="Report only findings of this severity or higher (the rest are neither shown nor counted).")
    @click.option("--fail-on", type=click.Choice(list(SEVERITIES)), default="info", show_default=True,
                  help="Lowest severity of a reported finding that makes the exit code 1.")
    @click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings (2 still means an error).")
    @click.option("--statistics", is_flag=True, help="Print the number of findings per rule instead of the findings.")
    @click.option("-o", "--output-file", type=click.Path(dir_okay=False),
                  help="Write the report to this file instead of standard output.")
    @click.option("-q", "--quiet", is_flag=True, help="Print the findings only, without the summary line.")
    @click.option("-v", "--verbose", is_flag=True,
                  help="Say which configuration each file uses and which files are skipped (not AMDGPU assembly).")
    @click.option("--config", type=click.Path(dir_okay=False),
                  help="Use this pyproject.toml ([tool.isalint]) or isalint.toml instead of finding one.")
    @click.option("--stdin-filename", help="The name to report for standard input ('-'), also used to find "
                                           "the configuration and match per-file-ignores.")
    @click.option("--watch", is_flag=True, help="Check again whenever a file changes, until Ctrl-C.")
    def command(paths, **options):
        """Report problems in gfx11 assembly files (directories are searched for .s/.asm; '-' reads
        standard input). Files that are another processor's assembly (the host's x86-64 .s that
        hipcc --save-temps writes beside the device's) are skipped.

        Exit 0 when there are no findings, 1 when there are, 2 on a usage or input error.
        """
        run(paths, **options)

    return command


def __getattr__(name: str):
    if name == "command":
        cmd = globals()["command"] = build_command()
        return cmd
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
