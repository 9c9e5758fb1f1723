"""What a long command is doing, on a terminal: a rich status line on standard error that
disappears when the work is done. Nothing is shown when standard error is not a terminal (a pipe,
a file, CI logs), so output that programs read never holds it."""
from __future__ import annotations

import sys
from contextlib import contextmanager


class _Quiet:
    def update(self, text: str) -> None:
        pass


@contextmanager
def progress(text: str):
    """``with progress("validating") as p: ... p.update("emulating the candidate")``."""
    if not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
        yield _Quiet()
        return
    from rich.console import Console

    console = Console(stderr=True)
    with console.status(text) as status:
        yield _Status(status)


class _Status:
    def __init__(self, status):
        self._status = status

    def update(self, text: str) -> None:
        self._status.update(text)
