"""Fresh labels: names a pass can add to a file without clashing with any name already in it."""
from __future__ import annotations

import re


class Labels:
    """Hands out label names unique in one file.

    A name is taken when the file defines it as a label or mentions it anywhere as a whole symbol
    (a branch target, a ``.set``, a kernel name, a comment), or when this object gave it out before.
    """

    def __init__(self, program):
        self._taken = set(program.labels)
        self._text = program.source.render()

    def taken(self, name: str) -> bool:
        if name in self._taken:
            return True
        return re.search(r"(?<![\w.$])" + re.escape(name) + r"(?![\w.$])", self._text) is not None

    def fresh(self, name: str) -> str:
        """``name`` itself when free, else ``name_2``, ``name_3`` ...; the result is then taken."""
        candidate, n = name, 1
        while self.taken(candidate):
            n += 1
            candidate = f"{name}_{n}"
        self._taken.add(candidate)
        return candidate
