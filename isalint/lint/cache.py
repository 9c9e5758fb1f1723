"""The result cache of ``isalint check``: a file's findings, kept under a key of all they depend on.

The key hashes the file's bytes, the path as given (findings carry it), the effective configuration
for that file (the rules that run, the target, severity overrides) and the isalint that made them:
its version, the Python version and a fingerprint of its own source files, so that an edited
checkout never serves what older code found. An entry holds the outcome (findings, a skip, or an
input error) and the source lines the text report shows, so that a hit needs neither the parser nor
the rules; a derived entry (:func:`derived`) holds the file's findings as one report style prints
them, so that a hit for that style does not even build the findings again.

Entries live in ``.isalint_cache/`` in the working directory (``ISALINT_CACHE_DIR`` moves it), one
file per key, written whole through a rename so that concurrent runs never read half an entry. The
directory ignores itself for git (its own ``.gitignore``) and may be deleted at any time; a missing,
unreadable or foreign entry is a miss. ``isalint check --no-cache`` neither reads nor writes it.
"""
from __future__ import annotations

import marshal
import os
import sys

try:  # hashlib would load OpenSSL, which costs more than a cached check
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - every CPython has _blake2
    from hashlib import blake2b

DEFAULT_DIR = ".isalint_cache"
ENV_DIR = "ISALINT_CACHE_DIR"
_FORMAT = 2  # the layout of an entry
_GITIGNORE = "# created by isalint: the result cache is safe to delete\n*\n"
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# the isalint result cache (https://bford.info/cachedir/)\n"
_FINGERPRINT: list[str] = []


def cache_dir() -> str:
    return os.environ.get(ENV_DIR) or DEFAULT_DIR


def fingerprint() -> str:
    """What identifies the running isalint: version, Python, and the size and time of every source
    file of the package and its rules (computed once per process)."""
    if _FINGERPRINT:
        return _FINGERPRINT[0]
    from .. import __version__

    h = blake2b(digest_size=16)
    h.update(f"{_FORMAT} {__version__} {sys.version}".encode())
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the package (this file is in lint/)
    roots = [here]
    rules = _rules_dir()
    if rules and not rules.startswith(here + os.sep):
        roots.append(rules)
    for root in roots:
        start = len(root) + 1
        h.update("".join(sorted(f"{path[start:]} {size} {mtime}\n" for path, size, mtime in _sources(root))).encode())
    _FINGERPRINT.append(h.hexdigest())
    return _FINGERPRINT[0]


def _rules_dir() -> str | None:
    from .. import rules

    return os.path.dirname(os.path.abspath(rules.__file__))


def _sources(root: str):
    stack = [root]
    while stack:
        top = stack.pop()
        try:
            entries = list(os.scandir(top))
        except OSError:
            continue
        for e in entries:
            if e.is_dir(follow_symlinks=False):
                if e.name != "__pycache__" and not e.name.startswith("."):
                    stack.append(e.path)
            elif e.name.endswith((".py", ".json", ".txt")):
                st = e.stat()
                yield e.path, st.st_size, st.st_mtime_ns


def key(data: bytes, path: str, settings: tuple) -> str:
    """The entry name of one file's results: ``settings`` is everything else the findings depend on
    (a tuple of strings, numbers, tuples and None)."""
    h = blake2b(digest_size=20)
    h.update(fingerprint().encode())
    h.update(marshal.dumps((path, settings)))
    h.update(data)
    return h.hexdigest()


def derived(name: str, what: str) -> str:
    """The entry name of something made from entry ``name``'s outcome (``what`` says how: the file's
    findings printed in one style)."""
    h = blake2b(digest_size=20)
    h.update(f"{name} {what}".encode())
    return h.hexdigest()


def load(name: str):
    """The outcome stored under ``name``, or None."""
    try:
        with open(os.path.join(cache_dir(), name[:2], name), "rb") as fh:
            fmt, outcome = marshal.load(fh)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return outcome if fmt == _FORMAT else None


def store(name: str, outcome) -> None:
    """Keep ``outcome`` (plain data: tuples, lists, dicts, strings, numbers, None) under ``name``; a
    cache that cannot be written is no error."""
    root = cache_dir()
    folder = os.path.join(root, name[:2])
    try:
        if not os.path.isdir(folder):
            _make(root)
            os.makedirs(folder, exist_ok=True)
        tmp = os.path.join(folder, f".{name}.{os.getpid()}")
        with open(tmp, "wb") as fh:
            marshal.dump((_FORMAT, outcome), fh)
        os.replace(tmp, os.path.join(folder, name))
    except (OSError, ValueError):
        pass


def _make(root: str) -> None:
    """The cache directory, with what keeps it out of version control and backups."""
    os.makedirs(root, exist_ok=True)
    for name, text in ((".gitignore", _GITIGNORE), ("CACHEDIR.TAG", _TAG)):
        path = os.path.join(root, name)
        if not os.path.exists(path):
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
