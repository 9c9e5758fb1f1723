"""The files a check takes: directories searched for assembly files, each file once."""
from __future__ import annotations

import os

ASM_SUFFIXES = (".s", ".asm")


def expand_paths(paths: list[str]) -> list[str]:
    """The files to check: directories searched for .s/.asm, each file once (the first spelling)."""
    out: list[str] = []
    seen: set[str] = set()

    def add(p: str) -> None:
        key = p if p == "-" else os.path.realpath(p)
        if key not in seen:
            seen.add(key)
            out.append(p)

    for p in paths:
        if p != "-" and os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for f in sorted(files):
                    if f.endswith(ASM_SUFFIXES):
                        add(os.path.join(root, f))
        else:
            add(p)
    return out
