"""Parse stage: text -> lines and statements, printable back byte for byte.

``reading`` (an input's bytes, with the limits every command applies) and ``errors`` (InputError)
need nothing of the parser: the parser's names below are loaded on first use, so that importing
those two (``isalint check`` answered from its result cache) does not import the parser."""
from .errors import InputError

_NODES = ("Line", "Modifier", "Operand", "Statement")
_SOURCE = ("SourceFile", "parse_bytes", "parse_text", "read_file")

__all__ = ["InputError", *_NODES, *_SOURCE]


def __getattr__(name: str):
    if name in _NODES:
        from . import nodes

        return getattr(nodes, name)
    if name in _SOURCE:
        from . import source

        return getattr(source, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
