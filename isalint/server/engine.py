"""What the server asks of the lint engine: a document's text checked as the contents of its path.

Every call into the engine goes through :class:`Checker` and :func:`explanation`: the findings come
from :func:`isalint.lint.files.check_text` (what ``isalint check PATH`` reports, with the
configuration found for PATH), so that the editor and the command line never disagree.

A document is checked again after every edit. :class:`Checker` keeps the lines it parsed: a line the
edit did not touch is copied from the last parse (``parse_text``'s ``reuse``), and an instruction
whose statements were reused is not decoded again (:mod:`isalint.model.program`). The rules run on
the whole file each time: what they find depends on data flow across blocks (lane values of LDS
addresses, bank state carried around a loop, wait counters along every path), so a finding cannot
be kept for a block merely because the block's text is unchanged.
"""
from __future__ import annotations

import os
import time

from ..diagnostics import Diagnostic

MAX_TEXT_CHARS = 64 * 1024 * 1024  # isalint.parse.reading.MAX_INPUT_BYTES: what `isalint check` reads of a file
_REUSE_PER_LINE = 4  # the parse memo is dropped when it holds more than this many entries per line


class Outcome:
    """One version of a document, checked.

    ``problem``: (line, message) when the text could not be checked (not assembly, a configuration
    error, a failure); ``skipped``: why it was not checked (another processor's assembly).
    """

    def __init__(self, path: str, text: str, version: int | None):
        self.path = path
        self.text = text
        self.version = version
        self.findings: list[Diagnostic] = []
        self.warnings: list[str] = []  # ``path:line: message`` about the file's suppression comments
        self.config_warnings: list[str] = []
        self.config_origin: str | None = None
        self.analysis = None  # the file's model (None when it was checked in pieces, or not at all)
        self.problem: tuple[int, str] | None = None
        self.skipped: str | None = None
        self.seconds = 0.0

    @property
    def checked(self) -> bool:
        return self.problem is None and self.skipped is None


class Checker:
    """Checks documents, reusing each one's last parse."""

    def __init__(self):
        self._reuse: dict[str, dict] = {}  # path -> parse_text's reuse memo

    def forget(self, path: str) -> None:
        self._reuse.pop(path, None)

    def check(self, text: str, path: str, version: int | None = None) -> Outcome:
        """The findings of ``text`` as the contents of ``path`` (a path of this machine; the
        configuration is looked up from it, as ``isalint check`` does)."""
        from ..analysis import OtherProcessor
        from ..lint.config import Config, ConfigError
        from ..lint.files import check_text
        from ..parse.source import InputError

        out = Outcome(path, text, version)
        start = time.perf_counter()
        try:
            if len(text) > MAX_TEXT_CHARS:
                out.problem = (1, f"not checked: the file is larger than the {MAX_TEXT_CHARS}-byte limit of "
                                  "`isalint check`")
                return out
            config = _config(path) if os.path.isabs(path) else Config()
            out.config_warnings, out.config_origin = list(config.warnings), config.origin
            reuse = self._reuse.setdefault(path, {})
            result = check_text(text, path, config, reuse)
            if len(reuse) > _REUSE_PER_LINE * max(result.count, 1000):
                reuse.clear()  # lines edited away: start afresh
            out.findings, out.warnings, out.analysis = result.findings, result.warnings, result.analysis
        except OtherProcessor as exc:
            out.skipped = exc.message
        except InputError as exc:
            out.problem = (exc.line, f"not checked: {exc.message}")
        except ConfigError as exc:
            out.problem = (1, f"not checked: configuration error: {exc}")
        except Exception as exc:  # noqa: BLE001 - a bug: said on the document, the server goes on
            from ..failure import describe

            out.problem = (1, describe(exc))
        finally:
            out.seconds = time.perf_counter() - start
        return out


def _config(path: str):
    from ..lint.config import find_config

    return find_config(path)


def explanation(code: str) -> str | None:
    """``isalint explain CODE``'s text, or None for a code no rule has."""
    from .. import rules as registry
    from ..report.explain import explanation as explain

    if code.upper() not in registry.available():
        return None
    return explain(registry.load(code))


def rule(code: str):
    """The rule module of ``code`` (None: no such rule)."""
    from .. import rules as registry

    return registry.load(code) if code.upper() in registry.available() else None
