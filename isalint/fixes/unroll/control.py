"""The loop to unroll and the proof of its trip count.

A loop qualifies when it is one basic block that ends with its back edge
``s_cbranch_scc0/scc1 <header>`` and falls through to its exit, and the SCC the
branch reads comes from a compare of one SGPR (the induction variable) with a
constant. The induction variable must be written in the loop only by one add of a
constant, and hold the same constant on every edge into the loop. The trip count is
then found by running the loop control on those constants, with the compare's exact
semantics (32-bit wrap-around, signed or unsigned, the ``s_cmpk`` immediate extended
as the opcode says).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...model.reaching import reaching_defs
from .. import FixRefused

MAX_TRIP = 1 << 16  # a loop running longer is not a candidate for unrolling

_CALLS = ("s_call_b64", "s_swappc_b64", "s_setpc_b64", "s_rfe_b64")
_RELATIONS = {"eq", "lg", "gt", "ge", "lt", "le"}
_MIRROR = {"eq": "eq", "lg": "lg", "gt": "lt", "ge": "le", "lt": "gt", "le": "ge"}
# Adds of a constant to an SGPR: opcode -> sign of the constant.
_SALU_ADDS = {"s_add_i32": 1, "s_add_u32": 1, "s_addk_i32": 1, "s_sub_i32": -1, "s_sub_u32": -1}


@dataclass
class LoopControl:
    """What the trip-count proof established about one loop."""

    loop: object  # isalint.model.cfg.Loop
    label: str
    block: int  # the loop's only block
    body: list[int]  # instruction indices, the branch last
    branch: int  # the back edge
    compare: int  # the compare whose SCC the branch reads
    step_at: int  # the induction variable's add
    iv: str  # the induction variable (an SGPR)
    init: int  # its value on entry
    step: int  # added once per iteration (mod 2**32)
    trip: int  # iterations the loop runs
    exit_block: int  # the block the loop falls through to
    exit_scc: int  # the SCC the loop leaves: the compare's value that ends it

    def iv_value(self, iteration: int) -> int:
        """The induction variable at the top of ``iteration`` (0-based), as a 32-bit word."""
        return (self.init + self.step * iteration) & 0xFFFFFFFF


def where(program, index: int) -> str:
    return f"{program.path}:{program.instrs[index].lineno}"


def loop_label(analysis, loop) -> str:
    return analysis.cfg.blocks[loop.header].label or f"block{loop.header}"


def select_loop(analysis, label: str | None):
    """The loop named by ``label``, else the hottest innermost loop."""
    cfg = analysis.cfg
    if label:
        loop = cfg.find_loop(label)
        if loop is None:
            names = ", ".join(loop_label(analysis, lp) for lp in cfg.loops) or "none"
            raise FixRefused(f"{analysis.program.path}: no loop headed by label {label} (loops: {names})")
        return loop
    loop = cfg.hottest_loop()
    if loop is None:
        raise FixRefused(f"{analysis.program.path}: the kernel has no loop to unroll")
    return loop


def prove(analysis, label: str | None = None) -> LoopControl:
    """The loop control of the chosen loop, or FixRefused with the line and the reason."""
    program, cfg = analysis.program, analysis.cfg
    instrs = program.instrs
    loop = select_loop(analysis, label)
    name = loop_label(analysis, loop)
    header = cfg.blocks[loop.header]
    if loop.children:
        inner = loop_label(analysis, loop.children[0])
        raise FixRefused(f"{where(program, header.first)}: loop {name} contains the loop {inner}; "
                         "unroll the inner loop first")
    for i in loop.indices(cfg):
        ins = instrs[i]
        if ins.opaque:
            raise FixRefused(f"{where(program, i)}: {ins.problem}; cannot prove the unrolled loop equal")
        if ins.opcode in _CALLS:
            raise FixRefused(f"{where(program, i)}: loop {name} makes a call ('{ins.text()}'); "
                             "the callee's effect on the loop is unknown")
    if loop.blocks != {loop.header}:
        exits = [i for b in sorted(loop.blocks) if b != loop.latch for i in [cfg.blocks[b].last - 1]
                 if instrs[i].klass == "branch"]
        at = exits[0] if exits else cfg.blocks[loop.latch].last - 1
        raise FixRefused(f"{where(program, at)}: loop {name} has {len(loop.blocks)} basic blocks "
                         f"('{instrs[at].text()}' branches inside it); only a straight-line body with one exit at its "
                         "back edge is unrolled")
    body = list(header.indices())
    for i in body:
        if {"exec_lo", "exec_hi"} & set(instrs[i].defs):
            # VALU results only reach the lanes EXEC enables; an address step the copies defer to
            # a later instruction must see the same lanes as the step it replaces.
            raise FixRefused(f"{where(program, i)}: loop {name} changes EXEC ('{instrs[i].text()}'); only loops "
                             "that run with one EXEC mask are unrolled")
    branch = body[-1]
    term = instrs[branch]
    if term.opcode not in ("s_cbranch_scc0", "s_cbranch_scc1") or program.labels.get(term.branch_target()) != body[0]:
        raise FixRefused(f"{where(program, branch)}: loop {name} ends with '{term.text()}', not with a branch on "
                         "SCC back to its header; its trip count cannot be proven")
    exit_block = header.id + 1
    if exit_block >= len(cfg.blocks) or exit_block not in header.succs:
        raise FixRefused(f"{where(program, branch)}: loop {name} does not fall through to its exit")

    compare = _scc_source(program, body, name)
    rel, kind, iv, bound = _compare(program, compare)
    if isinstance(bound, str):  # an SGPR: a constant when the loop enters with one and keeps it
        if any(bound in instrs[i].defs for i in body):
            raise FixRefused(f"{where(program, compare)}: '{instrs[compare].text()}' compares {iv} with {bound}, "
                             "which the loop changes; the trip count cannot be proven")
        bound = _entry_value(analysis, loop, bound, name, f"the bound of '{instrs[compare].text()}'")
    step_at, step = _step(program, body, iv, name)
    init = _entry_value(analysis, loop, iv, name)
    after_step = body.index(step_at) < body.index(compare)
    continue_on = term.opcode == "s_cbranch_scc1"
    trip = None
    for t in range(MAX_TRIP):
        value = (init + step * (t + after_step)) & 0xFFFFFFFF
        if _holds(rel, kind, value, bound) != continue_on:
            trip = t + 1
            break
    if trip is None:
        raise FixRefused(f"{where(program, compare)}: with {iv} = {_signed(init)} on entry and a step of "
                         f"{_signed(step)}, '{instrs[compare].text()}' does not end loop {name} within "
                         f"{MAX_TRIP} iterations")
    return LoopControl(loop, name, header.id, body, branch, compare, step_at, iv, init, step, trip, exit_block,
                       0 if continue_on else 1)


def _scc_source(program, body: list[int], name: str) -> int:
    """The compare whose SCC the back edge reads; nothing else may read that SCC."""
    instrs = program.instrs
    for i in reversed(body[:-1]):
        ins = instrs[i]
        if "scc" in ins.uses:
            raise FixRefused(f"{where(program, i)}: '{ins.text()}' reads the SCC the back edge of loop {name} "
                             "branches on")
        if "scc" in ins.defs:
            if not ins.opcode.startswith(("s_cmp_", "s_cmpk_")):
                raise FixRefused(f"{where(program, i)}: the back edge of loop {name} branches on the SCC of "
                                 f"'{ins.text()}', not of a compare; its trip count cannot be proven")
            return i
    raise FixRefused(f"{where(program, body[-1])}: the back edge of loop {name} reads an SCC set before the loop")


def _compare(program, index: int) -> tuple[str, str, str, int | str]:
    """(relation, i32|u32, induction SGPR, bound: a constant, or the SGPR holding it) of a compare."""
    ins = program.instrs[index]
    parts = ins.opcode.split("_")  # s, cmp|cmpk, rel, type
    rel, kind = parts[2], parts[3] if len(parts) > 3 else ""
    if rel not in _RELATIONS or kind not in ("i32", "u32"):
        raise FixRefused(f"{where(program, index)}: '{ins.text()}' is not a 32-bit integer compare; the trip count "
                         "cannot be proven")
    a, b = ins.stmts[0].operands[:2]
    if a.kind == "int" and b.kind == "sgpr":
        a, b, rel = b, a, _MIRROR[rel]
    if a.kind != "sgpr" or a.count != 1:
        raise FixRefused(f"{where(program, index)}: '{ins.text()}' does not compare an SGPR; the trip count cannot "
                         "be proven")
    if b.kind == "sgpr" and b.count == 1 and parts[1] == "cmp":
        return rel, kind, a.text, b.text
    if b.kind != "int":
        raise FixRefused(f"{where(program, index)}: '{ins.text()}' compares {a.text} with {b.text}, which is not a "
                         "constant; the trip count cannot be proven")
    bound = int(b.value)
    if parts[1] == "cmpk":
        bound = _sext16(bound) if kind == "i32" else bound & 0xFFFF
    return rel, kind, a.text, bound & 0xFFFFFFFF


def _step(program, body: list[int], iv: str, name: str) -> tuple[int, int]:
    """(index, constant) of the only write of ``iv`` in the loop, an add of a constant."""
    instrs = program.instrs
    writes = [i for i in body if iv in instrs[i].defs]
    if not writes:
        raise FixRefused(f"{where(program, body[-1])}: {iv}, compared by the back edge of loop {name}, does not "
                         "change in the loop")
    if len(writes) > 1:
        raise FixRefused(f"{where(program, writes[1])}: {iv} is written {len(writes)} times in loop {name}; the "
                         "trip count is only proven for one constant step")
    i = writes[0]
    step = salu_add_constant(instrs[i], iv)
    if step is None:
        raise FixRefused(f"{where(program, i)}: {iv} changes by '{instrs[i].text()}', not by a constant step; the "
                         "trip count cannot be proven")
    return i, step


def salu_add_constant(ins, reg: str) -> int | None:
    """K when ``ins`` is ``reg = reg + K`` (as a 32-bit word), else None."""
    sign = _SALU_ADDS.get(ins.opcode)
    if sign is None or ins.is_vopd:
        return None
    ops = ins.stmts[0].operands
    if ins.opcode == "s_addk_i32":
        if len(ops) == 2 and ops[0].text == reg and ops[1].kind == "int":
            return _sext16(int(ops[1].value)) & 0xFFFFFFFF
        return None
    if len(ops) != 3 or ops[0].text != reg:
        return None
    srcs = [ops[1], ops[2]]
    if sign < 0:  # s_sub: only reg - K
        if srcs[0].text == reg and srcs[1].kind == "int":
            return (-int(srcs[1].value)) & 0xFFFFFFFF
        return None
    for x, y in (srcs, srcs[::-1]):
        if x.text == reg and y.kind == "int":
            return int(y.value) & 0xFFFFFFFF
    return None


def _entry_value(analysis, loop, iv: str, name: str, what: str | None = None) -> int:
    """The constant ``iv`` holds on every edge into the loop (``what`` names it in a refusal)."""
    program, cfg = analysis.program, analysis.cfg
    instrs = program.instrs
    header = cfg.blocks[loop.header]
    who = f"{iv} ({what})" if what else iv
    writes: set[int] = set()
    for p in header.preds:
        if p in loop.blocks:
            continue
        last = cfg.blocks[p].last - 1
        writes.update([last] if iv in instrs[last].defs else reaching_defs(program, last, iv))
    if not writes or -1 in writes:
        raise FixRefused(f"{where(program, header.first)}: {who} enters loop {name} with a value the kernel does "
                         "not set on every way in (an argument, or set elsewhere); the trip count cannot be proven")
    values: dict[int, int] = {}
    for i in sorted(writes):
        value = _constant_of(instrs[i], iv)
        if value is None:
            raise FixRefused(f"{where(program, i)}: {who} enters loop {name} with the value of "
                             f"'{instrs[i].text()}', not a constant; the trip count cannot be proven")
        values[i] = value
    if len(set(values.values())) != 1:
        shown = ", ".join(f"{_signed(v)} (line {instrs[i].lineno})" for i, v in values.items())
        raise FixRefused(f"{where(program, header.first)}: {who} enters loop {name} with different values: "
                         f"{shown}; the trip count cannot be proven")
    return next(iter(values.values()))


def _constant_of(ins, reg: str) -> int | None:
    if ins.is_vopd or ins.opcode not in ("s_mov_b32", "s_movk_i32"):
        return None
    ops = ins.stmts[0].operands
    if len(ops) != 2 or ops[0].text != reg or ops[1].kind != "int":
        return None
    v = int(ops[1].value)
    return (_sext16(v) if ins.opcode == "s_movk_i32" else v) & 0xFFFFFFFF


def _holds(rel: str, kind: str, a: int, b: int) -> bool:
    if kind == "i32":
        a, b = _signed(a), _signed(b)
    return {"eq": a == b, "lg": a != b, "gt": a > b, "ge": a >= b, "lt": a < b, "le": a <= b}[rel]


def _sext16(v: int) -> int:
    v &= 0xFFFF
    return v - 0x10000 if v & 0x8000 else v


def _signed(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v
