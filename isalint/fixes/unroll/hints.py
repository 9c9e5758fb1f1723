"""``s_delay_alu``, ``s_clause`` and ``s_setprio`` in the unrolled code.

``s_delay_alu`` names a dependency by distance ("the VALU instruction 2 back"): copying it
across a removed or inserted instruction would point it at another instruction. Each one of
the loop body is therefore resolved to its producer in the iteration's instruction stream,
and written again with the distance the producer has in the unrolled code (dropped when the
producer is gone or now too far back to matter). Instructions the unroll inserts get the
delays their own register dependencies call for, and a delay after the loop that names an
instruction of the loop is written again the same way. The delay is an issue hint (RDNA3 ISA
guide, ``S_DELAY_ALU``): the hardware still interlocks, so a hint is never needed for
correctness, only for not stalling the VALU.

``s_clause`` groups the next N+1 memory instructions; where a clause's instructions are no
longer consecutive (a wait placed between them), it is written for each consecutive run.

``s_setprio`` is kept in every copy, except where it sets the priority the previous one
already set, or is overridden by the next instruction.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...model.alu_delays import SKIP_NAMES, TRANS_MAX, VALU_MAX, Dep, decode, encode, strongest
from ...model.alu_delays import alu_kind as unit

MAX_DISTANCE = {"valu": VALU_MAX - 1, "trans": TRANS_MAX - 1}  # the farthest producer a hint can name


@dataclass
class Line:
    """A line of the unrolled code, with its parsed instruction."""

    text: str
    ins: object  # isalint.model.program.Instr
    origin: tuple[int, int] | None
    deps: list[Dep] = field(default_factory=list)


# -- s_delay_alu ---------------------------------------------------------------------------------

def body_delays(body_instrs) -> dict[int, list[Dep]]:
    """{position in the body: the dependencies its s_delay_alu lines declare}."""
    out: dict[int, list[Dep]] = {}
    for d, ins in enumerate(body_instrs):
        if ins.opcode != "s_delay_alu":
            continue
        real = [p for p in range(d + 1, len(body_instrs)) if body_instrs[p].opcode != "s_delay_alu"]
        for offset, dep in decode(ins):
            if offset <= len(real):
                out.setdefault(real[offset - 1], []).append(dep)
    return out


def _walk(body_units: list[str | None], k: int, j: int, dep: Dep, copies: int, looping: bool) -> list[tuple]:
    """Where the producer of ``dep`` for copy ``k`` of body position ``j`` is, in the iterations
    as they ran: ``("in", copy, position, passes back)`` (passes back 1: the previous pass of the
    shorter loop) or ``("out", n)``: the n-th unit of its kind before the loop."""
    kind = dep.kind
    need = 1 if kind == "salu" else dep.n
    n = len(body_units)
    if not any(u == kind for u in body_units):
        return [("out", need)]
    found: list[tuple] = []
    copy, p, passes = k, j, 0
    while True:
        p -= 1
        if p < 0:
            copy, p = copy - 1, n - 1
            if copy < 0:
                if passes == 0:
                    found.append(("out", need))
                if not looping or passes == 1:
                    return found
                copy, passes = copies - 1, 1
        if body_units[p] == kind:
            need -= 1
            if need == 0:
                return found + [("in", copy, p, passes)]


def rederive_delays(lines: list[Line], body_instrs, copies: int, looping: bool,
                    indent: str) -> list[tuple[str, tuple[int, int] | None]]:
    """``lines`` as (text, origin) with their ``s_delay_alu`` written again (see the module doc)."""
    units = [unit(ln.ins) for ln in lines]
    where = {ln.origin: k for k, ln in enumerate(lines) if ln.origin is not None}
    body_units = [unit(ins) if ins.opcode != "s_delay_alu" else None for ins in body_instrs]
    prefix = {kind: [0] for kind in ("valu", "trans", "salu")}
    for u in units:
        for kind, acc in prefix.items():
            acc.append(acc[-1] + (u == kind))

    def between(kind: str, a: int, b: int) -> int:
        """Units of ``kind`` among lines a+1 .. b-1."""
        return prefix[kind][b] - prefix[kind][a + 1] if b > a else 0

    for pos, deps in body_delays(body_instrs).items():
        for k in range(copies):
            c = where.get((k, pos))
            if c is None:
                continue  # the consumer is gone
            for dep in deps:
                if dep.kind == "fma":
                    lines[c].deps.append(dep)
                    continue
                kind = dep.kind
                distances = []
                for place in _walk(body_units, k, pos, dep, copies, looping):
                    if place[0] == "out":
                        distances.append(place[1] + prefix[kind][c])
                        continue
                    _, copy, p, passes = place
                    q = where.get((copy, p))
                    if q is None:
                        continue  # the producer is gone: no dependency on this path
                    if passes:
                        distances.append(between(kind, q, len(lines)) + prefix[kind][c] + 1)
                    else:
                        distances.append(between(kind, q, c) + 1)
                if not distances:
                    continue
                if kind == "salu":
                    lines[c].deps.append(dep)
                elif min(distances) <= MAX_DISTANCE[kind]:
                    lines[c].deps.append(Dep(kind, min(distances)))
    _inserted_dependencies(lines, units)
    return _emit(lines, indent)


def exit_delays(region: list[Line], exit_instrs, body_instrs, copies: int, looping: bool,
                indent: str) -> dict[int, list[str]] | None:
    """The ``s_delay_alu`` of the code the loop exits to, when one of them names an instruction of
    the loop: {position among ``exit_instrs``, without their s_delay_alu: the delay lines before
    it}. None when none reaches into the loop (the exit code stays as it is)."""
    real = [ins for ins in exit_instrs if ins.opcode != "s_delay_alu"]
    declared = body_delays(exit_instrs)
    if not declared:
        return None
    order = [j for j, ins in enumerate(exit_instrs) if ins.opcode != "s_delay_alu"]
    rank = {j: n for n, j in enumerate(order)}
    lines = region + [Line(ins.text(), ins, (copies, n)) for n, ins in enumerate(real)]
    units = [unit(ln.ins) for ln in lines]
    where = {ln.origin: k for k, ln in enumerate(lines) if ln.origin is not None}
    body_units = [unit(ins) if ins.opcode != "s_delay_alu" else None for ins in body_instrs]
    reaches = False
    for j, deps in declared.items():
        n = rank[j]
        c = len(region) + n
        for dep in deps:
            if dep.kind == "fma":
                lines[c].deps.append(dep)
                continue
            need = 1 if dep.kind == "salu" else dep.n
            inside = [m for m in range(n - 1, -1, -1) if units[len(region) + m] == dep.kind]
            if len(inside) >= need:
                q = len(region) + inside[need - 1]
            else:
                reaches = True
                places = _walk(body_units, copies - 1, len(body_units), Dep(dep.kind, need - len(inside)),
                               copies, looping)
                found = [where.get((copy, p)) for kind, *rest in places if kind == "in"
                         for copy, p, _ in [rest]]
                found = [q for q in found if q is not None]
                if not found:
                    continue  # the producer is gone
                q = max(found)
            dist = 1 + sum(1 for x in range(q + 1, c) if units[x] == dep.kind)
            if dep.kind == "salu":
                lines[c].deps.append(dep)
            elif dist <= MAX_DISTANCE[dep.kind]:
                lines[c].deps.append(Dep(dep.kind, dist))
    if not reaches:
        return None
    out: dict[int, list[str]] = {}
    pending: list[str] = []
    for text, origin in _emit(lines[len(region):], indent):
        if text.lstrip().startswith("s_delay_alu"):
            pending.append(text)
        else:
            out[origin[1]] = pending
            pending = []
    return out


def _inserted_dependencies(lines: list[Line], units: list[str | None]) -> None:
    """Delays for the register dependencies that involve an inserted instruction."""
    last_writer: dict[str, int] = {}
    for c, ln in enumerate(lines):
        ins = ln.ins
        if units[c] in ("valu", "trans", "salu"):
            for r in ins.uses:
                w = last_writer.get(r)
                if w is None or (ln.origin is not None and lines[w].origin is not None):
                    continue
                kind = units[w]
                if kind not in MAX_DISTANCE:
                    continue
                dist = 1 + sum(1 for x in range(w + 1, c) if units[x] == kind)
                if dist <= MAX_DISTANCE[kind]:
                    ln.deps.append(Dep(kind, dist))
        for r in ins.defs:
            last_writer[r] = c


def _emit(lines: list[Line], indent: str) -> list[tuple[str, tuple[int, int] | None]]:
    """(text, origin) of every line, each ``s_delay_alu`` with the origin of the instruction it
    precedes; a dependency of an instruction up to 5 after the previous one's joins its line."""
    out: list[tuple[str, tuple[int, int] | None]] = []
    open_at = None  # [index in out of an s_delay_alu with one id, lines since, its dependency]
    for ln in lines:
        deps = strongest(ln.deps)
        if deps:
            if open_at is not None and len(deps) == 1:
                k, skip, first = open_at
                out[k] = (encode(indent, [first], skip, deps[0]), out[k][1])
                open_at = None
            else:
                out.append((encode(indent, deps), ln.origin))
                open_at = [len(out) - 1, 0, deps[0]] if len(deps) == 1 else None
        out.append((ln.text, ln.origin))
        if open_at is not None:
            open_at[1] += 1
            if open_at[1] > len(SKIP_NAMES) - 1:
                open_at = None
    return out


# -- s_clause ------------------------------------------------------------------------------------

def body_clauses(body_instrs) -> list[list[int]]:
    """For each s_clause of the body: the body positions of the instructions it groups."""
    out = []
    for d, ins in enumerate(body_instrs):
        if ins.opcode != "s_clause" or not ins.stmts[0].operands or ins.stmts[0].operands[0].kind != "int":
            continue
        n = int(ins.stmts[0].operands[0].value) + 1
        real = [p for p in range(d + 1, len(body_instrs)) if body_instrs[p].opcode not in ("s_delay_alu",)]
        out.append(real[:n])
    return out


def place_clauses(lines: list[Line], body_instrs, copies: int, indent: str) -> list[Line]:
    """``lines`` with an ``s_clause`` before each consecutive run of a body clause's instructions."""
    where = {ln.origin: k for k, ln in enumerate(lines) if ln.origin is not None}
    starts: dict[int, int] = {}  # line index -> clause length
    for covered in body_clauses(body_instrs):
        for k in range(copies):
            idx = sorted(where[(k, p)] for p in covered if (k, p) in where)
            run: list[int] = []
            for x in idx + [None]:
                if run and (x is None or x != run[-1] + 1):
                    if len(run) >= 2:
                        starts[run[0]] = min(len(run), 64)
                    run = []
                if x is not None:
                    run.append(x)
    if not starts:
        return lines
    from .render import parse_lines

    out: list[Line] = []
    for k, ln in enumerate(lines):
        if k in starts:
            text = f"{indent}s_clause 0x{starts[k] - 1:x}"
            out.append(Line(text, parse_lines([text])[0], None))
        out.append(ln)
    return out


# -- s_setprio -----------------------------------------------------------------------------------

def prune_setprio(lines: list[Line]) -> tuple[list[Line], int]:
    """Drop each ``s_setprio`` that changes nothing: same value as the one before it, or followed
    directly by another. Returns the lines and how many were dropped."""
    keep = [True] * len(lines)
    known = None
    for k, ln in enumerate(lines):
        if ln.ins.opcode != "s_setprio":
            continue
        ops = ln.ins.stmts[0].operands
        value = int(ops[0].value) if ops and ops[0].kind == "int" else None
        if value is not None and value == known:
            keep[k] = False
            continue
        if k + 1 < len(lines) and lines[k + 1].ins.opcode == "s_setprio":
            keep[k] = False
            continue
        known = value
    return [ln for k, ln in enumerate(lines) if keep[k]], keep.count(False)
