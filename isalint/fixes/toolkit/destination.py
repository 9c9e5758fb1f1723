"""Where ``isalint fix`` writes, checked before any work and written safely.

:func:`check_destination` runs before the passes (which may validate for many seconds): the file
named (through its symlinks) must be a regular file or not exist yet, in an existing directory where
a file can be created. :func:`write` goes through a temporary file beside the target and a rename,
so the target is either untouched or complete; an existing file keeps its mode, a new one gets the
mode the umask gives new files. A device, a FIFO or a directory is never replaced.
"""
from __future__ import annotations

import errno
import os
import stat
import tempfile
from dataclasses import dataclass


class DestinationError(Exception):
    """The result cannot be written there; one line, exit code 2."""


@dataclass(frozen=True)
class Destination:
    shown: str  # the name the user gave
    path: str  # the file written: symlinks resolved
    mode: int | None  # the existing file's permission bits, None for a new file


def check_destination(target: str) -> Destination:
    """The checked destination for ``target``, or DestinationError saying why it cannot be written."""
    path = os.path.realpath(target)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise DestinationError(f"{target}: cannot write: {_reason(exc)}") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise DestinationError(f"{target}: not a regular file ({_kind(st.st_mode)}); isalint writes regular files "
                               "only")
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        raise DestinationError(f"{target}: cannot write: no such directory {directory}")
    if st is not None and not os.access(path, os.W_OK):
        raise DestinationError(f"{target}: cannot write: the file is read-only")
    try:  # what the write will need: a new file in that directory (read-only file system, permissions)
        fd, probe = tempfile.mkstemp(prefix=".isalint-probe-", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise DestinationError(f"{target}: cannot write in {directory}: {_reason(exc)}") from None
    return Destination(target, path, stat.S_IMODE(st.st_mode) if st is not None else None)


def holds(dest: Destination, data: bytes) -> bool:
    """Whether the destination already holds exactly ``data``."""
    try:
        with open(dest.path, "rb") as fh:
            return fh.read(len(data) + 1) == data
    except OSError:
        return False


def write(dest: Destination, data: bytes) -> None:
    """Write ``data`` to the destination: temporary file, then rename; DestinationError on failure."""
    directory = os.path.dirname(dest.path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".isalint-", dir=directory)
    except OSError as exc:
        raise DestinationError(f"{dest.shown}: cannot write in {directory}: {_reason(exc)}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, _mode(dest))
        os.replace(tmp, dest.path)
    except OSError as exc:
        _remove(tmp)
        raise DestinationError(f"{dest.shown}: cannot write: {_reason(exc)}; left untouched") from None
    except BaseException:
        _remove(tmp)
        raise


def set_mode(dest: Destination) -> None:
    """Give a file another tool wrote at the destination the mode :func:`write` would have."""
    try:
        os.chmod(dest.path, _mode(dest))
    except OSError:
        pass


def _mode(dest: Destination) -> int:
    return dest.mode if dest.mode is not None else 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "no space left on the device"
    if exc.errno == errno.EROFS:
        return "read-only file system"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    return exc.strerror or str(exc)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a file"
