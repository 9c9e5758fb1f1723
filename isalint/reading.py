"""Reading an input file's bytes, with the limits every command applies (no parsing: ``isalint check``
answers from its result cache with nothing more)."""
from __future__ import annotations

import os

MAX_INPUT_BYTES = 64 * 1024 * 1024


def read_bytes(path: str, max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of ``path``; :class:`isalint.parse.source.InputError` when it cannot be read or is
    larger than ``max_bytes``."""
    try:
        size = os.path.getsize(path)
        if size > max_bytes:
            raise _error(path, f"file is {size} bytes, more than the {max_bytes}-byte limit")
        with open(path, "rb") as fh:
            return fh.read()
    except IsADirectoryError:
        raise _error(path, "is a directory") from None
    except FileNotFoundError:
        raise _error(path, "no such file") from None
    except PermissionError:
        raise _error(path, "permission denied") from None
    except OSError as exc:
        raise _error(path, f"cannot read: {exc.strerror or exc}") from None


def _error(path: str, message: str):
    from .parse.source import InputError

    return InputError(path, 1, message)
