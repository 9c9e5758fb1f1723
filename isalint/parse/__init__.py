"""Parse stage: text -> lines and statements, printable back byte for byte."""
from .nodes import Line, Modifier, Operand, Statement
from .source import InputError, SourceFile, parse_bytes, parse_text, read_file

__all__ = ["Line", "Modifier", "Operand", "Statement", "InputError", "SourceFile",
           "parse_bytes", "parse_text", "read_file"]
