"""Places around a loop where a pass puts code: the one point that runs once before it."""
from __future__ import annotations

from .. import FixRefused


def preheader(analysis, loop) -> tuple[int, bool]:
    """(index, after): where code that must run once before ``loop`` goes, in its single preheader:
    before the preheader's branch to the loop, or after its last instruction when it falls through
    into the loop. Refused when the loop is entered from several blocks, or from a block that also
    leads elsewhere."""
    cfg, program = analysis.cfg, analysis.program
    outside = [p for p in cfg.blocks[loop.header].preds if p not in loop.blocks]
    label = cfg.blocks[loop.header].label or f"line {program.instrs[cfg.blocks[loop.header].first].lineno}"
    if len(outside) != 1:
        raise FixRefused(f"{program.path}: the loop at {label} is entered from {len(outside)} places; the setup needs "
                         "one block before the loop to be computed in")
    pre = cfg.blocks[outside[0]]
    last = program.instrs[pre.last - 1] if pre.last > pre.first else None
    if last is None or pre.succs != [loop.header] or (last.klass == "branch" and not last.is_unconditional_branch()):
        where = f"line {last.lineno}" if last is not None else label
        raise FixRefused(f"{program.path}: {where}: the block before the loop at {label} does not lead to it alone, "
                         "so there is no place that runs once before the loop")
    return pre.last - 1, not last.is_unconditional_branch()


def scc_dead(analysis, at: int, after: bool, what: str) -> None:
    """Refuse when SCC is live at the point (``at``, ``after``): new code there would clobber it."""
    from ...model.liveness import liveness

    live = liveness(analysis.program)
    if "scc" in (live.live_out(at) if after else live.live_in(at)):
        ins = analysis.program.instrs[at]
        raise FixRefused(f"{analysis.program.path}:{ins.lineno}: SCC is live where {what}")
