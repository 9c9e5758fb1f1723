"""Reading an input file's bytes, with the limits every command applies (no parsing: ``isalint check``
answers from its result cache with nothing more)."""
from __future__ import annotations

import os
import stat

from .errors import InputError

MAX_INPUT_BYTES = 64 * 1024 * 1024


def read_bytes(path: str, max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the regular file ``path``, at most ``max_bytes`` of them;
    :class:`isalint.parse.errors.InputError` when it cannot be read, is larger, or is not a regular file.

    FIFOs, devices and sockets are refused before anything is read: a FIFO would block and
    ``/dev/zero`` never ends (their size is 0, so no size check could catch them).
    """
    try:
        # O_NONBLOCK: opening a FIFO without a writer must not wait for one
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except IsADirectoryError:
        raise _error(path, "is a directory") from None
    except FileNotFoundError:
        raise _error(path, "no such file") from None
    except PermissionError:
        raise _error(path, "permission denied") from None
    except (OSError, ValueError) as exc:
        raise _error(path, f"cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise _error(path, "is a directory")
        if not stat.S_ISREG(mode):
            raise _error(path, f"not a regular file ({_file_kind(mode)})")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise _error(path, f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise _error(path, f"file is more than the {max_bytes}-byte limit")
    return data


BINARY_MAGICS = (b"\x7fELF", b"__CLANG_OFFLOAD_BUNDLE__", b"CCOB")
MAX_BINARY_BYTES = 1 << 34  # a code object is mapped, not read: 16 GiB


def is_binary(path: str) -> bool:
    """Whether ``path`` is a regular file that starts like a code object, an offload bundle or a host
    executable (read with :func:`map_file`, not as text). Anything else, or a file that cannot be
    read, is left to :func:`read_bytes` to read or refuse."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as fh:
            head = fh.read(24)
    except (OSError, ValueError):
        return False
    return head.startswith(BINARY_MAGICS)


def map_file(path: str):
    """The bytes of the regular file ``path`` mapped into memory (a code object can be far larger
    than an assembly file)."""
    import mmap

    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise _error(path, f"not a regular file ({_file_kind(st.st_mode)})")
            if st.st_size > MAX_BINARY_BYTES:
                raise _error(path, f"file is more than the {MAX_BINARY_BYTES}-byte limit")
            return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise _error(path, f"cannot read: {exc.strerror or exc}") from None
    except ValueError:  # an empty file cannot be mapped
        return b""


def _file_kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a file"


def _error(path: str, message: str):
    return InputError(path, 1, message)
