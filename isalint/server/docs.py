"""Where a rule's documentation is, for the link a diagnostic carries (``codeDescription``).

By default the server writes each rule's documentation (``isalint explain CODE``) once into
``$XDG_CACHE_HOME/isalint/rules-VERSION/CODE.md`` (``~/.cache`` without it) and links that file: it
is the documentation of the isalint that is running, and needs no network. A client may give a URL
template instead (``initializationOptions.ruleDocs``, e.g. ``https://example.org/rules/{code}``).
"""
from __future__ import annotations

import os
from pathlib import Path

from .engine import explanation


class RuleDocs:
    def __init__(self, template: str | None = None, folder: str | None = None):
        self.template = template if template and "{code}" in template else None
        self.folder = Path(folder) if folder else _default_folder()
        self._links: dict[str, str | None] = {}

    def link(self, code: str) -> str | None:
        """The URI of ``code``'s documentation (None when it cannot be given)."""
        if code in self._links:
            return self._links[code]
        if self.template:
            uri = self.template.replace("{code}", code)
        else:
            uri = self._write(code)
        self._links[code] = uri
        return uri

    def _write(self, code: str) -> str | None:
        text = explanation(code)
        if text is None:
            return None
        path = self.folder / f"{code}.md"
        try:
            if not path.is_file() or path.read_text(encoding="utf-8") != text + "\n":
                self.folder.mkdir(parents=True, exist_ok=True)
                tmp = path.with_name(f".{path.name}.{os.getpid()}")
                tmp.write_text(text + "\n", encoding="utf-8")
                os.replace(tmp, path)
        except OSError:
            return None  # no writable cache: diagnostics go without a link
        return path.resolve().as_uri()


def _default_folder() -> Path:
    from .. import __version__

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "isalint" / f"rules-{__version__}"
