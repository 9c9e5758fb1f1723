"""Mnemonic aliases: older names LLVM's gfx11 assembler accepts for gfx11 opcodes.

The table is ``aliases.txt`` next to this file, one ``alias canonical source`` a line. It lists
the aliases LLVM 19 defines for gfx11 (``MnemonicAlias``/``AMDGPUMnemonicAlias`` and the
``*_Renamed``/``*_with_name`` records of its AMDGPU target descriptions, named in the third
column); every pair is checked against ``llvm-mc -mcpu=gfx1100`` by ``tests/test_isa_coverage.py``.

Aliases name the opcode without an encoding suffix; LLVM applies them after taking ``_e32``,
``_e64``, ``_dpp`` or ``_e64_dpp`` off, so ``v_add_u32_e32`` is ``v_add_nc_u32_e32``.
"""
from __future__ import annotations

import os

from .mnemonics import split_encoding

TABLE_PATH = os.path.join(os.path.dirname(__file__), "aliases.txt")
_TABLE: dict[str, str] | None = None


def table() -> dict[str, str]:
    """{alias: canonical name}, both without encoding suffix."""
    global _TABLE
    if _TABLE is None:
        out: dict[str, str] = {}
        with open(TABLE_PATH, encoding="utf-8") as f:
            for line in f:
                words = line.split("#", 1)[0].split()
                if len(words) >= 2:
                    out[words[0]] = words[1]
        _TABLE = out
    return _TABLE


def resolve(mnemonic: str) -> str | None:
    """The canonical spelling of an alias (its encoding suffix kept), or None if it is not one."""
    t = table()
    real = t.get(mnemonic)
    if real is not None:
        return real
    base, suffix = split_encoding(mnemonic)
    if suffix:
        real = t.get(base)
        if real is not None:
            return real + suffix
    return None
