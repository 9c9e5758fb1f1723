"""Register counts, the checks on the rewritten text, and the before/after summary."""
from __future__ import annotations

from ...hw.registers import SGPRS
from .. import FixRefused
from ..toolkit import check_no_new_wait_hazards, check_understood, refresh_counts, reparse
from .select import loads_of, own_blocks

MAX_SGPRS = SGPRS


def update_counts(text: str, path: str, vgprs: int, sgprs: int) -> str:
    """``.amdhsa_next_free_sgpr``/``_vgpr``, ``.sgpr_count``/``.vgpr_count`` and the compiler's comments
    made to match the code (:func:`isalint.fixes.toolkit.refresh_counts`)."""
    return refresh_counts(text, path, vgprs, sgprs)


def _loop_again(analysis, new, plan):
    label = analysis.cfg.blocks[plan.loop.header].label
    loop = new.cfg.find_loop(label) if label else None
    if loop is None:
        raise FixRefused("internal error: the rewritten loop is not found again")
    return loop


def verify(analysis, plan, text: str):
    new = reparse(text, analysis.program.path)
    loop = _loop_again(analysis, new, plan)
    for i in loop.indices(new.cfg):
        check_understood(new.program.instrs[i])
    left = loads_of(new.program, new.cfg, loop)
    if left:
        raise FixRefused(f"internal error: line {new.program.instrs[left[0]].lineno} still loads from a VGPR pair")
    check_no_new_wait_hazards(analysis.program, new.program)
    kernel = next(k for k in new.program.kernels if k.name == plan.kernel.name)
    md = kernel.metadata or {}
    if int(md.get(".sgpr_count", 0)) > MAX_SGPRS:
        raise FixRefused(f"internal error: the rewrite uses {md.get('.sgpr_count')} SGPRs, more than {MAX_SGPRS}")
    return new


def numbers(analysis, loop, kernel_name: str) -> dict:
    """Counts of one loop (its own blocks, not its inner loops') and of the kernel."""
    program, cfg = analysis.program, analysis.cfg
    own = own_blocks(cfg, loop)
    idx = [i for b in own for i in cfg.blocks[b].indices()]
    valu = sum(1 for i in idx if program.instrs[i].klass in ("valu", "vopd", "trans"))
    salu = sum(1 for i in idx if program.instrs[i].klass == "salu")
    loads = [i for i in idx if program.instrs[i].opcode.startswith("global_load")]
    sgpr_based = sum(1 for i in loads if not _off(program.instrs[i]))
    kernel = next(k for k in program.kernels if k.name == kernel_name)
    md = kernel.metadata or {}
    return {"valu": valu, "salu": salu, "loads": len(loads), "sgpr_based": sgpr_based,
            "vgprs": kernel.descriptor.get(".amdhsa_next_free_vgpr"), "sgprs": md.get(".sgpr_count"),
            "lines": sum(len(cfg.blocks[b].indices()) for b in own)}


def _off(ins) -> bool:
    s = next((s for s in ins.slots[0] if s.name == "saddr"), None)
    return s is None or s.operand.kind == "off"


def summary(analysis, new, plan, limits, out, spread=None) -> str:
    loop_new = _loop_again(analysis, new, plan)
    a = numbers(analysis, plan.loop, plan.kernel.name)
    b = numbers(new, loop_new, plan.kernel.name)
    label = analysis.cfg.blocks[plan.loop.header].label
    rows = [
        ("instructions in the loop body", a["lines"], b["lines"]),
        ("VALU instructions", a["valu"], b["valu"]),
        ("SALU instructions", a["salu"], b["salu"]),
        ("global loads from an SGPR base", f"{a['sgpr_based']}/{a['loads']}", f"{b['sgpr_based']}/{b['loads']}"),
        ("SGPRs (.sgpr_count)", a["sgprs"], b["sgprs"]),
        ("VGPRs", a["vgprs"], b["vgprs"]),
    ]
    lines = [f"batch-gmem: loop {label} (outside its inner loops): {len(plan.loads)} global loads, "
             f"{len(plan.groups)} offset group(s), {len(out.dead)} address instructions removed",
             f"{'':30s}{'before':>10s}{'after':>10s}"]
    lines += [f"  {name:28s}{x!s:>10s}{y!s:>10s}" for name, x, y in rows]
    if spread is not None:
        how = f", each group predicated on {spread.mask}" if spread.mask else ""
        lines.append(f"  loads spread through the loop body in {len(spread.points)} groups{how}")
    size = "N" if limits.size else "the size"
    lines.append(f"  proven for 1 <= {size} <= {limits.limit}: offsets fit 32 bits up to {limits.offsets_fit}, the "
                 f"original's indices are exact (workgroup 0) up to {limits.original}")
    if limits.assumed:
        lines.append(f"  as in the original, {len(limits.assumed)} sign-extended 32-bit indices with a workgroup id "
                     "must not overflow (its int32 indexing)")
    return "\n".join(lines)
