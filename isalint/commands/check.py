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
SEVERITIES = ("error", "warning", "info")  # most severe first
_VALUED = {"--select": "select", "--ignore": "ignore", "--extend-select": "extend_select", "--format": "fmt",
           "--target": "target", "--fail-on": "fail_on", "--min-severity": "min_severity",
           "--output-file": "output_file", "-o": "output_file", "--config": "config",
           "--stdin-filename": "stdin_filename", "--kernel": "kernel"}
_FLAGS = {"--color": ("color", True), "--no-color": ("color", False), "--statistics": ("statistics", True),
          "--exit-zero": ("exit_zero", True), "-q": ("quiet", True), "--quiet": ("quiet", True),
          "-v": ("verbose", True), "--verbose": ("verbose", True), "--watch": ("watch", True),
          "--no-cache": ("no_cache", True)}
_CHOICES = {"fmt": FORMATS, "fail_on": SEVERITIES, "min_severity": SEVERITIES}
_RANK = {"error": 0, "warning": 1, "info": 2}
WATCH_INTERVAL = 0.5  # seconds between looks at the watched files
# Files are checked in worker processes (one per processor) when there are at least this many to
# check and this many bytes of them: below that, starting the pool costs more than it saves.
POOL_MIN_FILES = 2
POOL_MIN_BYTES = 200_000
# A worker grows by at most this many bytes before it ends and a fresh one takes its place (it
# frees nothing: see isalint.lint.workers).
WORKER_MEMORY = 768 << 20


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
                 fail_on="warning", min_severity="info", exit_zero=False, statistics=False, output_file=None,
                 quiet=False, verbose=False, config=None, stdin_filename=None, watch=False, no_cache=False,
                 kernel=None):
        self.paths = list(paths)
        self.select, self.ignore, self.extend_select = _codes(select), _codes(ignore) or [], _codes(extend_select) or []
        self.fmt, self.target, self.color = fmt, target, color
        self.fail_on, self.min_severity, self.exit_zero = fail_on, min_severity, exit_zero
        self.statistics, self.output_file, self.quiet, self.verbose = statistics, output_file, quiet, verbose
        self.config, self.stdin_filename, self.watch = config, stdin_filename, watch
        self.no_cache = no_cache
        self.kernel = kernel  # the glob of the kernels of a code object to check


def run(paths, hard_exit=False, **options):
    """Check ``paths`` and exit: 0 without findings at or above ``fail_on`` (warning), 1 with them, 2 on a
    usage or input error.

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
    from ..lint.selection import resolve_codes

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
    from .. import rules as registry
    from ..lint.config import ConfigError, find_config, load_config
    from ..lint.paths import expand_paths
    from ..lint.selection import codes_for

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
        except ConfigError as exc:
            _echo(f"isalint: {exc}", err=True)
            return 2
    if opts.output_file:
        where = os.path.dirname(os.path.abspath(opts.output_file))
        if os.path.isdir(opts.output_file) or not os.path.isdir(where):
            what = "a directory" if os.path.isdir(opts.output_file) else f"no such directory {where}"
            _echo(f"isalint: {opts.output_file}: cannot write: {what}", err=True)
            return 2
    warnings: list[str] = list(fixed_config.warnings) if fixed_config is not None else []
    config_errors: dict[str, tuple] = {}  # directory -> the ("error", message) of its configuration
    cache = None if opts.no_cache else _cache()
    style = _style(opts)  # how each file's findings are printed, when a file's report can be kept alone
    keys: list = []  # unit number -> its cache key
    outcomes: list = []  # unit number -> its outcome: a unit is a file, or a kernel of a code object
    jobs: list = []  # (unit number, job) of the units the cache does not know
    kernel_units: list[int] = []  # the units that are kernels of code objects
    configs: dict[str, object] = {}  # directory -> its configuration
    selections: dict[int, list[str]] = {}  # id(configuration) -> rules, when they do not depend on the path
    for path in files:
        n = len(outcomes)
        outcomes.append(None)
        keys.append(None)
        name = (opts.stdin_filename or "<stdin>") if path == "-" else path
        config = fixed_config
        if config is None:
            where = name if path == "-" else path
            folder = os.path.dirname(where) or "."
            config = configs.get(folder)
            if config is None and folder not in config_errors:
                try:
                    config = configs[folder] = find_config(where)
                except ConfigError as exc:
                    config_errors[folder] = ("error", str(exc))
                else:
                    warnings.extend(w for w in config.warnings if w not in warnings)
            if config is None:  # its configuration's error, reported once for all its files
                outcomes[n] = ("config", config_errors[folder][1])
                continue
        if opts.verbose and config.origin:
            _echo(f"isalint: {name}: configuration from {config.origin}", err=True)
        codes = selections.get(id(config))
        if codes is None:
            codes = codes_for(available, config, name, cli)
            if not config.per_file_ignores:
                selections[id(config)] = codes
        data = _read(path, name)
        if isinstance(data, tuple):  # could not be read
            outcomes[n] = data
            continue
        if _is_kernels(data):  # a code object: its kernels are checked one by one
            units = _kernel_units(data, name, opts)
        elif opts.kernel is not None:
            outcomes[n] = ("error", f"{name}:1: --kernel selects kernels of a code object; this is not one")
            continue
        else:
            units = [("unit", name, data)]
        for u, unit in enumerate(units):
            if u:
                n = len(outcomes)
                outcomes.append(None)
                keys.append(None)
            if unit[0] != "unit":  # an outcome already: a code object skipped, a file that cannot be read
                outcomes[n] = unit
                continue
            _, unit_name, unit_data = unit
            if unit_data is not data:
                kernel_units.append(n)
            job = (unit_name, unit_data, codes, opts.target or config.target, sorted(config.severity.items()))
            if cache is not None:
                key = cache.key(_cache_bytes(unit_data), unit_name, (tuple(codes), job[3], tuple(job[4])))
                job += (key,)
                keys[n] = key
                if style is not None:  # the unit's findings as this report prints them: nothing to load
                    outcomes[n] = cache.load(cache.derived(key, style))
                    if outcomes[n] is not None:
                        continue
                outcomes[n] = cache.load(key)
            if outcomes[n] is None:
                jobs.append((n, job))
    if jobs:
        from ..lint.workers import WorkerDied

        try:
            checked_jobs = _check_jobs([job for _, job in jobs], keep, style)
        except WorkerDied as exc:
            _echo(f"isalint: {exc}", err=True)
            return 2
        for (n, job), (outcome, report) in zip(jobs, checked_jobs):
            outcomes[n] = outcome if report is None else report
            if cache is not None:
                cache.store(job[5], outcome)
                if report is not None:
                    cache.store(cache.derived(job[5], style), report)
    diagnostics, sources, errors, skipped = [], {}, [], []
    hidden = dict.fromkeys(SEVERITIES, 0)  # findings of each severity below --min-severity
    reports: list = []  # with a style: (printed findings, {severity: number shown}) of each file checked
    for n, outcome in enumerate(outcomes):
        kind = outcome[0]
        if kind == "ok" and style is not None:
            outcome = _report_outcome(outcome, style)
            if cache is not None and keys[n] is not None:
                cache.store(cache.derived(keys[n], style), outcome)
            kind = "report"
        if kind == "report":
            _, name, text, counts, notes = outcome
            reports.append((text, [n if _RANK[s] <= _RANK[opts.min_severity] else 0
                                   for s, n in zip(SEVERITIES, counts)]))
            for s, n in zip(SEVERITIES, counts):
                if _RANK[s] > _RANK[opts.min_severity]:
                    hidden[s] += n
            warnings.extend(w for w in notes if w not in warnings)
        elif kind == "ok":
            _, name, found, count, lines, notes = outcome
            sources[name] = _SourceLines(count, lines)
            diagnostics.extend(_diagnostic(d) for d in found)
            warnings.extend(w for w in notes if w not in warnings)
        elif kind == "config":
            if outcome[1] not in errors:
                errors.append(outcome[1])
        elif kind == "skipped":
            skipped.append(outcome[1])
            if opts.verbose:
                _echo(f"isalint: skipped {outcome[1]}: {outcome[2]}", err=True)
        else:
            errors.append(outcome[1])
    for w in warnings:
        _echo(f"isalint: warning: {w}", err=True)
    for e in errors:
        _echo(f"isalint: {e}", err=True)
    checked = sum(1 for o in outcomes if o[0] in ("ok", "report"))
    kernels = sum(1 for n in kernel_units if outcomes[n][0] in ("ok", "report"))
    failed = len(outcomes) - checked - len(skipped)
    if style is not None:
        totals = [sum(c[k] for _, c in reports) for k in range(len(SEVERITIES))]
        _report_files(opts, style, [t for t, c in reports if sum(c)], dict(zip(SEVERITIES, totals)), checked,
                      len(skipped), failed, hidden, kernels)
    else:
        shown = [d for d in diagnostics if _RANK[d.severity] <= _RANK[opts.min_severity]]
        totals = [sum(1 for d in shown if d.severity == s) for s in SEVERITIES]
        for d in diagnostics:
            if _RANK[d.severity] > _RANK[opts.min_severity]:
                hidden[d.severity] += 1
        _report(opts, shown, sources, checked, len(skipped), failed, hidden, kernels)
    if errors:
        return 2
    if opts.exit_zero:
        return 0
    return 1 if any(t for s, t in zip(SEVERITIES, totals) if _RANK[s] <= _RANK[opts.fail_on]) else 0


def _cache():
    from ..lint import cache

    return cache


def _read(path: str, name: str):
    """The bytes of ``path`` (standard input for ``-``), or an ("error", message) outcome."""
    from ..parse.reading import MAX_INPUT_BYTES, read_bytes

    if path == "-":
        data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
        if len(data) > MAX_INPUT_BYTES:
            return ("error", f"{name}:1: standard input is more than the {MAX_INPUT_BYTES}-byte limit")
        return data

    try:
        from ..parse.reading import is_binary, map_file

        return map_file(path) if is_binary(path) else read_bytes(path)
    except Exception as exc:
        from ..parse.source import (
            InputError,  # not imported before it is needed: a cache hit parses nothing
        )

        if isinstance(exc, InputError):
            return ("error", str(exc))
        raise


def _is_kernels(data) -> bool:
    from ..parse.reading import BINARY_MAGICS

    return bytes(data[:24]).startswith(BINARY_MAGICS)


def _kernel_units(data, name: str, opts: Options) -> list:
    """(display name, kernel) of each gfx11 kernel of the code object ``data`` that ``--kernel``
    selects, and a ("skipped", what, why) for each code object for another processor; or one
    ("error", message) when the file cannot be read as a code object."""
    from ..binary import codeobject

    try:
        kernels, skipped = codeobject.read(data, name, opts.kernel)
    except codeobject.CodeObjectError as exc:
        return [("error", f"{name}:1: not a code object that can be read: {exc}")]
    units: list = [("unit", f"{name}:{k.name}", k) for k in sorted(kernels, key=lambda k: k.code_addr)]
    units += [("skipped", f"{name}: {s.what}", s.why) for s in skipped]
    if not kernels and opts.kernel is not None:
        return [("error", f"{name}:1: no gfx11 kernel matches --kernel {opts.kernel}")]
    if not kernels and not skipped:
        return [("error", f"{name}:1: no kernel found in the code object")]
    return units


def _cache_bytes(data) -> bytes:
    """What a unit's cached findings are keyed on: a file's bytes, a kernel's code, descriptor,
    labels and metadata."""
    return data.fingerprint() if hasattr(data, "fingerprint") else data


def _job_size(job) -> int:
    data = job[1]
    return len(data.code) * 4 if hasattr(data, "code") else len(data)  # a code dword is a line of text


def _report_outcome(outcome: tuple, style: str) -> tuple:
    """The ("report", name, printed findings, [number of each severity], warnings) of an "ok"
    outcome, its findings printed in ``style`` (see :func:`_style`)."""
    _, name, found, count, lines, notes = outcome
    least = _RANK[style.split()[1]]
    every = list(map(_diagnostic, found))
    shown = [d for d in every if _RANK[d.severity] <= least]
    # the counts of all its findings: the summary says how many --min-severity left out
    return ("report", name, _render_file(style, shown, {name: _SourceLines(count, lines)}),
            [sum(1 for d in every if d.severity == s) for s in SEVERITIES], notes)


def _check_jobs(jobs: list, keep: list | None, style: str | None = None) -> list:
    """(outcome, report) of each of ``jobs`` (see :func:`_check_job`): in worker processes when there
    are enough of them to pay for starting those, else here; with a count of what is done on a
    terminal. With a ``style``, the report of an "ok" outcome is its findings printed in that style
    (made where the job ran: the workers print in parallel what a library's kernels found); else
    None."""
    from functools import partial

    from ..lint.workers import map_ordered, usable_cpus
    from .progress import progress

    cpus = usable_cpus()
    if cpus > 1 and len(jobs) >= POOL_MIN_FILES and sum(_job_size(job) for job in jobs) >= POOL_MIN_BYTES:
        _preload({code for job in jobs for code in job[2]})
        import time
        from itertools import accumulate

        what = "kernels" if any(hasattr(job[1], "code") for job in jobs) else "files"
        # the jobs are handed out largest first: the first `count` done are about the largest `count`
        handed = list(accumulate(sorted((_job_size(job) for job in jobs), reverse=True)))
        start = time.monotonic()
        with progress(f"checking {len(jobs)} {what}") as shown:
            def done(count: int) -> None:
                shown.update(progress_text(len(jobs), what, count, handed[count - 1] / max(1, handed[-1]),
                                           time.monotonic() - start))

            return map_ordered(partial(_check_job, style=style), jobs, min(cpus, len(jobs)),
                               initializer=_worker_start, largest_first=_job_size,
                               progress=done if len(jobs) > 1 else None, memory_limit=WORKER_MEMORY)
    import gc

    # One file's model is a few hundred thousand small objects with no garbage cycles worth
    # collecting while it is in use: the cyclic collector would only rescan them, over and over.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    froze = False
    out = []
    try:
        for n, job in enumerate(jobs):
            if n:
                gc.collect()  # the previous file's model; what survives is not rescanned
                gc.freeze()
                froze = True
            outcome, analysis = _analyze(job)
            out.append((outcome, _report_outcome(outcome, style) if style is not None and outcome[0] == "ok"
                        else None))
            if keep is not None and n == len(jobs) - 1:
                keep.append(analysis)  # freed by the process's end, not object by object
            analysis = None
    finally:
        if keep is None:
            if froze:
                gc.unfreeze()
            if gc_was_enabled:
                gc.enable()
    return out


def progress_text(total: int, what: str, count: int, part: float, elapsed: float) -> str:
    """The status line of a check of ``total`` files or kernels of which ``count`` are done, that
    ``part`` of the work (by size) in ``elapsed`` seconds: with the time left once it can be told."""
    text = f"checking {total} {what}: {count} done"
    if elapsed < 5 or not 0 < part < 1:
        return text
    left = elapsed * (1 - part) / part
    if left < 60:
        return f"{text}, less than a minute left" if left >= 10 else text
    minutes = round(left / 60)
    return f"{text}, about {minutes} minute{'s' if minutes != 1 else ''} left"


def _preload(codes) -> None:
    """Import what checking takes before the workers start, so that they share it (forked)."""
    from .. import analysis, lint  # noqa: F401
    from .. import rules as registry
    from ..parse import source  # noqa: F401

    for code in sorted(codes):
        registry.load(code)


def _worker_start() -> None:
    import gc
    import signal

    gc.disable()
    gc.freeze()  # what the worker inherits (the parent's jobs, tables, rules) is never garbage here
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle (exit 130), silently


def _check_job(job, style: str | None = None):
    """A worker's (outcome, report) of one job (see :func:`_check_jobs`). In a worker that ends
    instead of freeing memory (:func:`isalint.lint.workers.recycled`) the file's model is left as it
    is; else it is collected before the next, and what survives it (tables and caches the rules
    fill) is frozen, so that the next collection scans only the next model: rescanning all the
    worker holds after every kernel took as long as the check."""
    import gc

    from ..lint.workers import recycled

    outcome, _ = _analyze(job)
    _ = None
    if not recycled():
        gc.collect()
        gc.freeze()
    return outcome, _report_outcome(outcome, style) if style is not None and outcome[0] == "ok" else None


def _analyze(job):
    """(outcome, analysis or None) of one file. ``job``: (name, bytes, rule codes, target,
    severity overrides[, cache key]). The outcome is plain data (it crosses processes and goes into
    the cache): ("ok", name, findings as tuples, number of lines, {line: text} of the lines the
    findings point at, warnings about its suppression comments), ("skipped", name, why) or
    ("error", message); an exception no check foresaw is an error naming the file, not a traceback."""
    from .. import rules as registry
    from ..analysis import OtherProcessor
    from ..lint.config import Config
    from ..lint.files import check_file
    from ..parse.source import InputError

    name, data, codes, target, severity = job[:5]
    kernel = data if hasattr(data, "code") else None
    try:
        if kernel is not None:
            data, notes = _kernel_listing(kernel)
        result = check_file(name, codes, target, registry.available(),
                            Config(severity=dict(severity)) if severity else None, data)
        if kernel is not None:
            for d in result.findings:
                d.kernel = kernel.name
            result.warnings.extend(notes)
    except OtherProcessor as exc:
        return ("skipped", name, exc.message), None
    except InputError as exc:
        return ("error", str(exc)), None
    except Exception as exc:  # noqa: BLE001 - a bug: one line for this file, the others still checked
        from .. import failure

        failure.print_traceback_if_asked(exc)
        return ("error", failure.describe(exc, name)), None
    lines = result.count
    return ("ok", name, [_plain(d) for d in result.findings], lines, result.lines, result.warnings), result.analysis


def _kernel_listing(kernel) -> tuple[bytes, list[str]]:
    """A kernel's listing (what is checked) and warnings about how it was made."""
    from ..binary import listing
    from ..parse.source import InputError

    try:
        instrs = listing.decode_kernel(kernel)
    except listing.ListingError as exc:
        raise InputError(kernel.display, 1, f"cannot decode the kernel: {exc}") from None
    notes = []
    if instrs.borrowed:
        ops = sorted({op for _, op in instrs.borrowed})
        notes.append(f"{kernel.display}: {len(instrs.borrowed)} instruction(s) printed by llvm-objdump, which "
                     f"isalint does not decode: {', '.join(ops)}")
    return listing.render(kernel, instrs).encode(), notes


def _plain(d) -> tuple:
    return (d.path, d.line, d.column, d.end_line, d.end_column, d.code, d.severity, d.message, d.fix,
            list(d.notes), [(s.line, s.column, s.end_column, s.message) for s in d.sites],
            dict(d.cost) if d.cost is not None else None, d.kernel)


def _diagnostic(t: tuple):
    from ..diagnostics import Diagnostic, Site

    *head, notes, sites, cost, kernel = t
    d = Diagnostic(*head, notes, [Site(*s) for s in sites], cost)
    d.kernel = kernel
    return d


class _SourceLines:
    """What the text report reads of a checked file: its number of lines and the text of those the
    findings point at."""

    def __init__(self, count: int, texts: dict[int, str]):
        self.lines = _Lines(count, texts)


class _Lines:
    def __init__(self, count: int, texts: dict[int, str]):
        self.count, self.texts = count, texts

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: int):
        return _Line(self.texts.get(index + 1, ""))


class _Line:
    def __init__(self, text: str):
        self.text = text


def _style(opts: Options) -> str | None:
    """How a file's findings are printed (format, severities shown, colour and width of text), when
    the report is the files' own reports one after the other: text, JSON and GitHub annotations,
    not SARIF or --statistics (those describe all the findings at once)."""
    if opts.statistics or opts.fmt not in ("text", "json", "github"):
        return None
    if opts.fmt != "text":
        return f"{opts.fmt} {opts.min_severity}"
    from ..report import findings as out

    to_terminal = not opts.output_file
    color = out.use_color(opts.color if to_terminal else False)
    width = out.text_width() if to_terminal else out.WIDTH
    return f"text {opts.min_severity} {int(color)} {width}"


def _render_file(style: str, shown, sources: dict) -> str:
    """One file's findings printed in ``style`` (see :func:`_style`), ``sources`` its {name: lines};
    the files' printed findings one after the other (:func:`_report_files`) are the report of all
    findings at once, byte for byte."""
    from ..report import findings as out

    if not shown:
        return ""
    fmt, *rest = style.split()
    if fmt == "json":
        return out.render_json_items(shown)
    if fmt == "github":
        return out.render_github(shown)
    _, color, width = rest
    return out.render_text(shown, sources, color == "1", int(width))


def _open_report(opts: Options):
    if opts.output_file:
        try:
            return open(opts.output_file, "w", encoding="utf-8")  # noqa: SIM115 - closed by the caller
        except OSError as exc:
            _echo(f"isalint: {opts.output_file}: cannot write: {exc.strerror or exc}", err=True)
            raise SystemExit(2) from None
    return sys.stdout


def _report_files(opts: Options, style: str, texts: list[str], counts: dict, checked: int, skipped: int,
                  failed: int, hidden: dict, kernels: int = 0) -> None:
    """The report made of the files' printed findings ``texts`` (those with findings, in order)."""
    stream = _open_report(opts)
    try:
        # written piece by piece: a library's report is gigabytes, not to be copied into one string
        if opts.fmt == "json" and not texts:
            stream.write("[]\n")
        elif texts:
            sep = ",\n" if opts.fmt == "json" else "\n\n" if opts.fmt == "text" else "\n"
            if opts.fmt == "json":
                stream.write("[\n")
            for n, text in enumerate(texts):
                if n:
                    stream.write(sep)
                stream.write(text)
            stream.write("\n]\n" if opts.fmt == "json" else "\n")
        if opts.fmt == "text" and not opts.quiet and (checked or skipped or not failed):
            from ..report import findings as out

            stream.write(out.summary_counts(counts, checked, skipped, failed, hidden, opts.min_severity, kernels) + "\n")
        stream.flush()
    finally:
        if stream is not sys.stdout:
            stream.close()


def _report(opts: Options, shown, sources, checked: int, skipped: int, failed: int, hidden: dict,
            kernels: int = 0) -> None:
    from .. import rules as registry
    from ..report import findings as out

    stream = _open_report(opts)
    try:
        def emit(text: str) -> None:
            stream.write(text + "\n")

        if opts.statistics and opts.fmt == "json":
            emit(out.render_statistics_json(shown, {m.CODE: m for m in registry.all_rules()}))
        elif opts.statistics:
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
            emit(out.summary_line(shown, checked, skipped, failed, hidden, opts.min_severity, kernels))
        stream.flush()
    finally:
        if stream is not sys.stdout:
            stream.close()


def _watch(opts: Options) -> int:
    """Check, then check again whenever a watched file changes (polling), until interrupted."""
    import time

    from ..lint.paths import expand_paths

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
    @click.option("--fail-on", type=click.Choice(list(SEVERITIES)), default="warning", show_default=True,
                  help="Lowest severity of a reported finding that makes the exit code 1 (info findings are "
                       "notes: shown, failing only with --fail-on info).")
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
    @click.option("--no-cache", is_flag=True,
                  help="Neither read nor write the result cache (.isalint_cache, or $ISALINT_CACHE_DIR).")
    @click.option("--kernel", metavar="GLOB", help="Check only the kernels of a code object whose names match (several globs: "
                                                "separated by commas).")
    def command(paths, **options):
        """Report problems in gfx11 assembly files (directories are searched for .s/.asm; '-' reads
        standard input) and in the kernels of code objects (.co, .hsaco, .o, HIP fat binaries and
        the executables and libraries that hold them). Files that are another processor's assembly
        (the host's x86-64 .s that hipcc --save-temps writes beside the device's) and code objects
        for other processors are skipped.

        Exit 0 when there are no findings at or above --fail-on (warning), 1 when there are, 2 on a usage
        or input error.
        """
        run(paths, **options)

    return command


def __getattr__(name: str):
    if name == "command":
        cmd = globals()["command"] = build_command()
        return cmd
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
