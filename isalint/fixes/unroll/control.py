"""The loop to unroll and the proof of its trip count.

A loop qualifies when it is one basic block that ends with its back edge
``s_cbranch_scc0/scc1 <header>`` and falls through to its exit, nothing else reads
the SCC of the compare that branch reads, and :mod:`isalint.model.loop_counter`
counts it: the compared SGPR (the induction variable) is written in the loop only by
one add of a constant, and enters it with the same constant on every edge.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...model.cfg import NoSuchLoop
from ...model.loop_counter import NotCounted, constant_step, count_trips, entry_value, read_compare, signed
from .. import FixRefused

MAX_TRIP = 1 << 16  # a loop running longer is not a candidate for unrolling

_CALLS = ("s_call_b64", "s_swappc_b64", "s_setpc_b64", "s_rfe_b64")


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
    return analysis.cfg.loop_name(loop)


def select_loop(analysis, label: str | None):
    """The loop named by ``label``, else the hottest innermost loop."""
    try:
        loop = analysis.cfg.select_loop(label)
    except NoSuchLoop as exc:
        raise FixRefused(f"{analysis.program.path}: {exc}") from None
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
    try:
        rel, kind, iv, bound = read_compare(program, compare)
        if isinstance(bound, str):  # an SGPR: a constant when the loop enters with one and keeps it
            if any(bound in instrs[i].defs for i in body):
                raise NotCounted(compare, f"'{instrs[compare].text()}' compares {iv} with {bound}, which the loop "
                                          "changes")
            bound = entry_value(program, cfg, loop, bound, f"the bound of '{instrs[compare].text()}'")
        step_at, step = _step(program, body, iv, name)
        init = entry_value(program, cfg, loop, iv)
    except NotCounted as e:
        raise FixRefused(f"{where(program, e.index)}: {e.reason.replace('enters the loop', f'enters loop {name}')}; "
                         "the trip count cannot be proven") from None
    after_step = body.index(step_at) < body.index(compare)
    continue_on = term.opcode == "s_cbranch_scc1"
    trip = count_trips(init, step, rel, kind, bound, continue_on, after_step, MAX_TRIP)
    if trip is None:
        raise FixRefused(f"{where(program, compare)}: with {iv} = {signed(init)} on entry and a step of "
                         f"{signed(step)}, '{instrs[compare].text()}' does not end loop {name} within "
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
    step = constant_step(instrs[i], iv)
    if step is None:
        raise FixRefused(f"{where(program, i)}: {iv} changes by '{instrs[i].text()}', not by a constant step; the "
                         "trip count cannot be proven")
    return i, step


