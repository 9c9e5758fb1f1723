"""Errors raised by the emulator: always one line naming the file, line and instruction."""
from __future__ import annotations


class EmulationError(Exception):
    """The kernel did something the emulator refuses to guess about (or that faults on hardware)."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None, text: str | None = None):
        self.message = message
        self.path = path
        self.line = line
        self.text = text
        super().__init__(self.format())

    def format(self) -> str:
        where = ""
        if self.path is not None and self.line is not None:
            where = f"{self.path}:{self.line}: "
        elif self.path is not None:
            where = f"{self.path}: "
        what = f" [{self.text}]" if self.text else ""
        return f"{where}{self.message}{what}"


class Unimplemented(EmulationError):
    """The emulator has no semantics for this opcode (or this form of it)."""


class LaunchError(EmulationError):
    """The launch configuration does not fit the kernel (bad args, geometry, descriptor)."""
