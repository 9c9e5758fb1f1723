"""Register moves: a parallel copy ordered into single moves (cycles broken through a free register),
written as instructions, and placed on CFG edges.

A parallel copy ``{dst: src}`` (numbers of one register file; a source may also be a literal string)
means every destination receives its source's old value. :func:`sequential_moves` orders it so that no
move overwrites a source still to be read; where only cycles are left it saves one register of the cycle
in a free temporary first. :func:`move_lines` writes VGPR moves two at a time as ``v_dual_mov_b32`` where
the pair is a legal VOPD (:mod:`isalint.hw.vopd`), SGPR moves as ``s_mov_b32``.

:class:`EdgePlacer` puts lines on a CFG edge (:class:`Edge`, from :func:`block_edges`): at the end of its
source block when that block has one successor (before its branch), at the start of its target when the
target has one predecessor, right after the source's last instruction when the edge falls through, and
otherwise in a *trampoline*: the source's branch is retargeted to a fresh label placed after the
kernel's last instruction, where the moves run and branch on to the old target.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...hw.vopd import is_legal
from .. import FixRefused
from .labels import Labels

_FILE_NAMES = {"v": "VGPR", "s": "SGPR"}


def sequential_moves(moves: dict[int, object], temp_choices: list[int], *, file: str = "v",
                     what: str = "accumulator moves") -> list[tuple[int, object]]:
    """Order the parallel copy ``{dst: src}`` (src a register number or a literal string) into single
    moves, breaking cycles through one temporary register, the first of ``temp_choices`` not involved;
    FixRefused when a cycle needs one and there is none."""
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
                raise FixRefused(f"no free {_FILE_NAMES[file]} to break a cycle of {what}")
            temp = avail[0]
        d = min(pending)
        out.append((temp, d))
        for k, s in pending.items():
            if s == d:
                pending[k] = temp
    return out


def move_lines(indent: str, moves: list[tuple[int, object]], file: str = "v") -> list[str]:
    """Moves as text. VGPR moves go two at a time as ``v_dual_mov_b32`` where the pair is legal and the
    two moves are independent (neither reads or writes what the other writes: a half reading the
    other's destination is legal, but DUAL001 rightly warns about it); SGPR moves as ``s_mov_b32``."""
    if file == "s":
        return [f"{indent}s_mov_b32 s{d}, {_src(s, 's')}" for d, s in moves]
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


def _src(s, file: str = "v") -> str:
    return f"{file}{s}" if isinstance(s, int) else str(s)


@dataclass
class Edge:
    src: int  # block id
    dst: int  # block id
    fallthrough: bool  # taken by falling off the end of src (else by its branch)


def block_edges(program, cfg, blk) -> list[Edge]:
    """The edges out of basic block ``blk``, each marked taken by falling through or by the branch."""
    out = []
    if blk.last == blk.first:
        return [Edge(blk.id, s, True) for s in blk.succs]
    term = program.instrs[blk.last - 1]
    target = term.branch_target()
    tblock = cfg.label_block(program, target)
    for s in blk.succs:
        fall = not (s == tblock and (term.is_unconditional_branch() or s != blk.id + 1))
        out.append(Edge(blk.id, s, fall))
    return out


def entry_edges(program, cfg, blocks: set[int], header: int) -> list[Edge]:
    """The edges from outside ``blocks`` (a loop or a region) into its ``header``."""
    return [e for p in cfg.blocks[header].preds if p not in blocks
            for e in block_edges(program, cfg, cfg.blocks[p]) if e.dst == header]


def exit_edges(program, cfg, blocks: set[int]) -> list[Edge]:
    """The edges leaving ``blocks``, by source block."""
    return [e for b in sorted(blocks) for e in block_edges(program, cfg, cfg.blocks[b]) if e.dst not in blocks]


class EdgePlacer:
    """Places lines on CFG edges through :class:`~isalint.fixes.toolkit.edits.Edits`; the trampolines it
    needs are added by :meth:`add_trampolines` once every edge is placed. ``stem`` starts the trampoline
    labels (``{stem}_{n}_{target}``, made unique by :class:`~isalint.fixes.toolkit.labels.Labels`)."""

    def __init__(self, analysis, edits, indent: str, stem: str, labels: Labels | None = None):
        self.analysis = analysis
        self.edits = edits
        self.indent = indent
        self.stem = stem
        self.labels = labels if labels is not None else Labels(analysis.program)
        self.trampolines: list[list[str]] = []

    def place(self, edge: Edge, lines: list[str]) -> None:
        if not lines:
            return
        program, cfg, edits = self.analysis.program, self.analysis.cfg, self.edits
        instrs = program.instrs
        src, dst = cfg.blocks[edge.src], cfg.blocks[edge.dst]
        if len(src.succs) == 1:
            term = instrs[src.last - 1]
            if term.klass == "branch":
                edits.insert_before(src.last - 1, lines)
            else:
                edits.insert_after(src.last - 1, lines)
            return
        if len(dst.preds) == 1:
            edits.insert_before(dst.first, lines)
            return
        if edge.fallthrough:
            edits.insert_after(src.last - 1, lines)
            return
        term = instrs[src.last - 1]
        target = term.branch_target()
        label = self.labels.fresh(f"{self.stem}_{len(self.trampolines)}_{target.lstrip('.')}")
        old = term.line.text
        col = old.rfind(target)
        edits.replace(src.last - 1, [old[:col] + label + old[col + len(target):]])
        self.trampolines.append([f"{label}:"] + lines + [f"{self.indent}s_branch {target}"])

    def add_trampolines(self, kernel) -> None:
        """Put the trampolines after the kernel's last instruction; FixRefused when execution could fall
        into them (the kernel does not end with ``s_endpgm`` or an unconditional branch)."""
        if not self.trampolines:
            return
        program = self.analysis.program
        last = program.instrs[kernel.last - 1]
        if not (last.ends_program() or last.is_unconditional_branch()):
            raise FixRefused(f"{program.path}:{last.lineno}: no place after the kernel's last instruction "
                             "for the moves of a branch edge")
        for t in self.trampolines:
            self.edits.insert_after(kernel.last - 1, t)
