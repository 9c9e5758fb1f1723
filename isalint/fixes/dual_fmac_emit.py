"""Text edits of the ``--dual-fmac`` pass: new loads, the dual FMAs, register moves, trampolines.

Edits are keyed by line index in the source file and applied in one pass, so the rest of the
file is reproduced byte for byte.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import FixRefused
from ..hw.vopd import is_legal


@dataclass
class Edits:
    replace: dict[int, list[str]] = field(default_factory=dict)  # line index -> new lines (may be empty)
    before: dict[int, list[str]] = field(default_factory=dict)  # line index -> lines inserted before it
    after: dict[int, list[str]] = field(default_factory=dict)  # line index -> lines inserted after it

    def add_before(self, line: int, lines: list[str]) -> None:
        self.before.setdefault(line, []).extend(lines)

    def add_after(self, line: int, lines: list[str]) -> None:
        self.after.setdefault(line, []).extend(lines)

    def render(self, source) -> str:
        eol = next((ln.eol for ln in source.lines if ln.eol), "\n")
        out: list[str] = []
        for n, line in enumerate(source.lines):
            for t in self.before.get(n, ()):
                out.append(t + eol)
            if n in self.replace:
                for t in self.replace[n]:
                    out.append(t + eol)
            else:
                out.append(line.text + line.eol)
            for t in self.after.get(n, ()):
                out.append(t + eol)
        return "".join(out)


def indent_of(line) -> str:
    text = line.text
    return text[: len(text) - len(text.lstrip())] or "\t"


def fmac_line(indent: str, x: tuple[int, int, int], y: tuple[int, int, int]) -> str:
    return (f"{indent}v_dual_fmac_f32 v{x[0]}, v{x[1]}, v{x[2]} :: "
            f"v_dual_fmac_f32 v{y[0]}, v{y[1]}, v{y[2]}")


def load_line(indent: str, reg: int, addr: str, offset: int) -> str:
    off = f" offset:{offset}" if offset else ""
    return f"{indent}ds_load_b64 v[{reg}:{reg + 1}], {addr}{off}"


# --------------------------------------------------------------------------------------------
# Parallel register moves

def sequential_moves(moves: dict[int, object], temp_choices: list[int]) -> list[tuple[int, object]]:
    """Order the parallel copy ``{dst: src}`` (src a VGPR number or a literal string) into
    single moves, breaking cycles through one temporary register."""
    pending = {d: s for d, s in moves.items() if d != s}
    out: list[tuple[int, object]] = []
    temp = None
    while pending:
        sources = {s for s in pending.values() if isinstance(s, int)}
        ready = [d for d in sorted(pending) if d not in sources]
        if ready:
            for d in ready:
                out.append((d, pending.pop(d)))
            continue
        # Only cycles remain: save one register, then the cycle opens into a chain.
        if temp is None:
            avail = [t for t in temp_choices if t not in pending and t not in sources]
            if not avail:
                raise FixRefused("no free VGPR to break a cycle of accumulator moves")
            temp = avail[0]
        d = min(pending)
        out.append((temp, d))
        for k, s in pending.items():
            if s == d:
                pending[k] = temp
    return out


def move_lines(indent: str, moves: list[tuple[int, object]]) -> list[str]:
    """Moves as text, two at a time as ``v_dual_mov_b32`` where the pair is legal and the two
    moves are independent (neither reads or writes what the other writes: a half reading the
    other's destination is legal, but DUAL001 rightly warns about it)."""
    lines: list[str] = []
    todo = list(moves)
    while todo:
        d, s = todo.pop(0)
        partner = None
        written = set()
        read = set()
        for k, (d2, s2) in enumerate(todo[:12]):
            ok = (d2 != d and s2 != d and s != d2 and d2 not in read and d2 not in written
                  and not (isinstance(s2, int) and s2 in written))
            if ok and is_legal(("v_dual_mov_b32", f"v{d}", _src(s)), ("v_dual_mov_b32", f"v{d2}", _src(s2))):
                partner = k
                break
            written.add(d2)
            if isinstance(s2, int):
                read.add(s2)
        if partner is None:
            lines.append(f"{indent}v_mov_b32_e32 v{d}, {_src(s)}")
        else:
            d2, s2 = todo.pop(partner)
            lines.append(f"{indent}v_dual_mov_b32 v{d}, {_src(s)} :: v_dual_mov_b32 v{d2}, {_src(s2)}")
    return lines


def _src(s) -> str:
    return f"v{s}" if isinstance(s, int) else str(s)
