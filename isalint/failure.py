"""What the command line says when something fails that no check foresaw.

Such a failure is a bug in isalint; the user still gets one line naming the file and exit
code 2, never a traceback (``ISALINT_TRACEBACK=1`` prints it, for a bug report).
"""
from __future__ import annotations

import os
from contextlib import contextmanager

EXIT_ERROR = 2

_files: list[str] = []


@contextmanager
def working_on(path: str):
    """Name ``path`` in the message of a failure raised inside the block."""
    _files.append(path)
    try:
        yield
    finally:
        _files.pop()


def current_file() -> str | None:
    return _files[-1] if _files else None


def describe(exc: BaseException, path: str | None = None) -> str:
    """One line: the file, what went wrong and where to report it."""
    where = f"{path}: " if path else ""
    if isinstance(exc, MemoryError):
        return f"{where}out of memory"
    if isinstance(exc, RecursionError):
        return f"{where}input nested too deeply to analyse"
    text = " ".join(str(exc).split())
    if len(text) > 200:
        text = text[:200] + "..."
    return f"{where}internal error: {type(exc).__name__}{': ' + text if text else ''} (a bug in isalint; " \
           "ISALINT_TRACEBACK=1 shows the traceback)"


def print_traceback_if_asked(exc: BaseException) -> None:
    if os.environ.get("ISALINT_TRACEBACK"):
        import traceback

        traceback.print_exception(type(exc), exc, exc.__traceback__)
