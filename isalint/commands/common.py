"""Shared helpers of the subcommands: loading a file, failing with exit code 2, showing and writing a
rewritten file."""
from __future__ import annotations

import sys

import click


def load_analysis(path: str, target: str | None = None, kernel: str | None = None, cache: bool = False):
    """The analysis of an assembly file, or of the one kernel of a code object that ``kernel`` (a
    glob) selects (``cache``: keep a kernel named exactly in the result cache, see
    :func:`cached_kernel_source`)."""
    from ..analysis import Analysis
    from ..lint.config import ConfigError, find_config
    from ..parse.reading import is_binary
    from ..parse.source import InputError

    try:
        config = find_config(path)
        for w in config.warnings:
            click.echo(f"isalint: warning: {w}", err=True)
        if is_binary(path):
            source = cached_kernel_source(path, kernel) if cache else kernel_source(path, kernel)
            return Analysis.from_source(source, {"target": target or config.target})
        return Analysis.from_path(path, {"target": target or config.target})
    except (InputError, ConfigError) as exc:
        fail(str(exc))


def kernel_source(path: str, select: str | None):
    """The parsed listing of the one gfx11 kernel of the code object ``path`` that the glob
    ``select`` names (or of its only kernel); InputError otherwise."""
    from ..parse.source import parse_text

    text, display = kernel_listing(path, select)
    return parse_text(text, display)


def kernel_listing(path: str, select: str | None) -> tuple[str, str]:
    """(listing text, display name) of the kernel :func:`kernel_source` parses."""
    from ..binary import codeobject, listing
    from ..parse.reading import map_file
    from ..parse.source import InputError

    try:
        kernels, skipped = codeobject.read(map_file(path), path, select)
    except codeobject.CodeObjectError as exc:
        raise InputError(path, 1, f"not a code object that can be read: {exc}") from None
    if not kernels:
        why = f"; skipped: {skipped[0].what}: {skipped[0].why}" if skipped else ""
        raise InputError(path, 1, f"no gfx11 kernel{' matches --kernel ' + select if select else ''}{why}")
    if len(kernels) > 1:
        names = ", ".join(k.name for k in kernels[:3]) + (", ..." if len(kernels) > 3 else "")
        raise InputError(path, 1, f"{len(kernels)} gfx11 kernels ({names}): choose one with --kernel GLOB")
    k = kernels[0]
    try:
        text = listing.render(k)
    except listing.ListingError as exc:
        raise InputError(k.display, 1, f"cannot decode the kernel: {exc}") from None
    return text, k.display


def cached_kernel_source(path: str, select: str | None):
    """:func:`kernel_source`, with the listing of a kernel named exactly (no glob) kept in the result
    cache (``.isalint_cache``, or ``$ISALINT_CACHE_DIR``; zlib-compressed) under the file's path, size
    and modification time: reading one kernel of a library of thousands costs most of an estimate, and
    the same kernel is estimated at many sizes."""
    import os
    import zlib

    from ..lint import cache
    from ..parse.source import parse_text

    if not select or any(c in select for c in "*?[],"):
        return kernel_source(path, select)
    try:
        st = os.stat(path)
    except OSError:
        return kernel_source(path, select)
    name = cache.key(b"", os.path.realpath(path), ("kernel listing", st.st_size, st.st_mtime_ns, select))
    hit = cache.load(name)
    if isinstance(hit, tuple) and len(hit) == 2 and isinstance(hit[0], str) and isinstance(hit[1], bytes):
        try:
            return parse_text(zlib.decompress(hit[1]).decode("utf-8"), hit[0])
        except (zlib.error, UnicodeDecodeError):
            pass
    text, display = kernel_listing(path, select)
    cache.store(name, (display, zlib.compress(text.encode("utf-8"), 6)))
    return parse_text(text, display)


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
