"""The error of input that is not an assembly file (kept apart from the parser: reading a file's
bytes raises it without importing the parser)."""
from __future__ import annotations


class InputError(Exception):
    """Input that is not an assembly file at all; reported as one line, exit code 2."""

    def __init__(self, path: str, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}")
        self.path, self.line, self.message = path, line, message
