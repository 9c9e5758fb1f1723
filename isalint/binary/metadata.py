"""The AMDGPU metadata note as the ``.amdgpu_metadata`` YAML document the assembler reads.

The note (NT_AMDGPU_METADATA, owner ``AMDGPU``) is a MessagePack map (LLVM AMDGPUUsage, "Code
Object V3+ Metadata"); written back as YAML in the layout LLVM's writer uses (two-space indents,
``- `` items, a key padded so that short keys' values line up), which isalint's metadata reader
takes without PyYAML.
"""
from __future__ import annotations

import re

NT_AMDGPU_METADATA = 32
_PLAIN = re.compile(r"[A-Za-z_.$][A-Za-z0-9_.$ *+/<>@()-]*\Z")
_NUMBERISH = re.compile(r"[-+]?\.?[0-9]")
_YAML_WORDS = frozenset("""null Null NULL ~ true True TRUE false False FALSE yes Yes YES no No NO on On ON off Off
OFF y Y n N .inf .Inf .INF .nan .NaN .NAN""".split())


def to_yaml(doc: dict) -> str:
    """The document between ``---`` and ``...``."""
    lines = ["---"]
    _mapping(doc, 0, lines)
    lines.append("...")
    return "\n".join(lines)


def _key(key, indent: int) -> str:
    return " " * indent + f"{_scalar(key) + ':':<16}"


def _mapping(value: dict, indent: int, lines: list[str], first_prefix: str | None = None) -> None:
    for n, (key, item) in enumerate(value.items()):
        head = (first_prefix if n == 0 and first_prefix is not None else " " * indent) + \
            f"{_scalar(key) + ':':<16}"
        _item(head, item, indent, lines)


def _item(head: str, item, indent: int, lines: list[str]) -> None:
    if isinstance(item, dict):
        if not item:
            lines.append(head.rstrip() + " {}")
            return
        lines.append(head.rstrip())
        _mapping(item, indent + 2, lines)
    elif isinstance(item, list):
        if not item:
            lines.append(head.rstrip() + " []")
            return
        lines.append(head.rstrip())
        for element in item:
            if isinstance(element, dict) and element:
                _mapping(element, indent + 4, lines, first_prefix=" " * (indent + 2) + "- ")
            else:
                lines.append(" " * (indent + 2) + "- " + _scalar(element))
    else:
        lines.append(head + " " + _scalar(item))


def _scalar(value) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    text = str(value)
    if (_PLAIN.match(text) and text not in _YAML_WORDS and not _NUMBERISH.match(text) and ": " not in text
            and not text.endswith(" ")):
        return text
    return "'" + text.replace("'", "''") + "'"


def code_object_version(doc: dict | None, abi_version: int) -> int:
    """The code object version: the metadata's ``amdhsa.version`` [1, minor] is v(minor + 3), else the
    ELF header's ABI version (2 is v4, 3 v5, 4 v6)."""
    version = (doc or {}).get("amdhsa.version")
    if isinstance(version, list) and len(version) == 2 and version[0] == 1 and isinstance(version[1], int):
        return version[1] + 3
    return {1: 3, 2: 4, 3: 5, 4: 6}.get(abi_version, 4)
