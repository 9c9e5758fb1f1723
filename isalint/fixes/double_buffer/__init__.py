"""``isalint fix --double-buffer``: two LDS tiles, one ``s_barrier`` per iteration.

The worklog's kernels 5-8 load the next tile from global memory during the current one, but keep a
single LDS tile: every iteration reads it, waits at a barrier until every wave has, writes the next
tile, and waits at a second barrier until every wave has written. The worklog names what it did not
try: "LDS double buffering could eliminate one of the barriers". With two tiles the loop alternates:
iteration ``t`` reads buffer ``t % 2`` and writes buffer ``(t + 1) % 2``, and the first barrier has
nothing left to order (:mod:`.phases` proves it from the loop's LDS accesses and barriers).

Steps (each proves what it needs or refuses with the line and the reason; the input is never
touched):

1. :mod:`.phases`: every path of one iteration reads LDS, passes a barrier, writes LDS, passes a
   barrier, and touches LDS no more; no LDS access after the loop.
2. The budget: the two tiles (the kernel's LDS size, rounded up to 16 bytes, twice) must fit the
   64 KiB of LDS, two copies of the loop half the instruction cache. The whole workgroups a CU (a WGP
   in WGP mode) holds are counted before and after, by VGPRs and by LDS: the summary says when the
   second tile costs some (``--keep-occupancy`` refuses then; ``optimize`` keeps a step only when
   the prediction improves).
3. :mod:`.clone`: the loop is written twice, copy A reading buffer 0 and writing buffer 1, copy B
   the reverse; the edges back to the header cross to the other copy; the first barrier goes from
   both. The trip count needs no parity: each copy keeps the loop's own exit test.
4. The LDS size in the descriptor and the metadata doubles, the register counts are rewritten, and
   the result is re-read and checked (no new wait hazard).
"""
from __future__ import annotations

import re

from ...hw.occupancy import LDS_BYTES
from ...model.resources import occupancy
from .. import FixRefused, FixResult
from ..toolkit import (Edits, Labels, check_no_new_wait_hazards, free_registers, highest_register, indent_of_text,
                       refresh_counts, reparse, rewritten_view)
from ..toolkit.codesize import BUDGET_BYTES, ICACHE_BYTES, code_bytes
from ..toolkit.loops import preheader
from .clone import label_of_line, needs_base, region_lines, retarget, shifted
from .phases import lds_phases

__all__ = ["apply"]


def apply(analysis, options: dict | None = None) -> FixResult:
    options = options or {}
    program, cfg = analysis.program, analysis.cfg
    loop = _loop(analysis, options.get("loop"))
    header = cfg.blocks[loop.header]
    label = header.label
    where = f"{program.path}:{program.instrs[header.first].lineno}"
    if not label:
        raise FixRefused(f"{where}: the loop header has no label to branch to")
    body = sorted(loop.indices(cfg))
    kernel = program.kernel_of(body[0])
    if len(program.kernels) != 1:
        raise FixRefused(f"{program.path}: the file holds {len(program.kernels)} kernels; double buffering rewrites "
                         "the LDS size of one")
    phases = lds_phases(analysis, loop)
    after = [i for i in range(body[-1] + 1, kernel.last) if program.instrs[i].klass == "lds"]
    if after:
        raise FixRefused(f"{program.path}:{program.instrs[after[0]].lineno}: the kernel uses LDS after the loop; "
                         "which buffer holds the last tile would depend on the trip count's parity")
    d = kernel.descriptor or {}
    size = d.get(".amdhsa_group_segment_fixed_size", 0)
    if any(a.get(".value_kind") == "dynamic_shared_pointer" for a in (kernel.metadata or {}).get(".args", [])):
        raise FixRefused(f"{program.path}: the kernel takes dynamic LDS; its size is not known here")
    shift = -(-size // 16) * 16
    doubled = shift + size
    if doubled > LDS_BYTES:
        raise FixRefused(f"{where}: two tiles need {doubled} bytes of LDS; a workgroup has at most {LDS_BYTES}")
    before, after_groups = _resident_groups(kernel, size), _resident_groups(kernel, doubled)
    unit = "WGP" if kernel.wgp_mode else "CU"
    fewer = before is not None and after_groups is not None and after_groups < before
    if fewer and options.get("keep_occupancy"):
        raise FixRefused(f"{where}: two tiles of {size} bytes would cut the workgroups a {unit} holds from {before} "
                         f"to {after_groups} (LDS: {doubled} bytes per workgroup), and --keep-occupancy was given")
    nbytes = code_bytes(program.instrs[i] for i in body)
    if 2 * nbytes > BUDGET_BYTES:
        raise FixRefused(f"{where}: two copies of the loop take {2 * nbytes} bytes, more than half the "
                         f"{ICACHE_BYTES // 1024} KiB instruction cache")
    bases = _shifted_bases(analysis, loop, phases, shift)
    text, branches = _render(analysis, loop, phases, shift, bases)
    text = _lds_size(text, size, doubled)
    vgprs = max([highest_register(program, body[0]) + 1] + [int(v[1:]) + 1 for v in bases.values()])
    text = refresh_counts(text, program.path, vgprs=vgprs, sgprs=highest_register(program, body[0], "s") + 1)
    new = reparse(text, program.path)
    check_no_new_wait_hazards(program, new.program)
    if after_groups is None:
        occ = "occupancy unknown"
    elif fewer:
        occ = f"workgroups per {unit} {before} -> {after_groups}: the LDS now limits them"
    else:
        occ = f"{after_groups} workgroups per {unit} kept"
    extra = f", {len(bases)} shifted base register(s)" if bases else ""
    summary = (f"double-buffer: loop {label}: LDS {size} -> {doubled} bytes ({occ}), two copies of the loop "
               f"({2 * nbytes} bytes of code){extra}, {len(phases.b1)} barrier(s) per iteration removed"
               + (f", {branches} branch(es) added where a fall-through changed" if branches > 0 else "")
               + (f", {-branches} branch(es) to the next block removed" if branches < 0 else ""))
    return FixResult(text, summary)


def _loop(analysis, label):
    cfg = analysis.cfg
    if label:
        loop = cfg.find_loop(label)
        if loop is None:
            raise FixRefused(f"{analysis.program.path}: no loop headed by {label}")
        return loop
    # the loop whose iterations read and write LDS around barriers: the outermost loop holding barriers
    program = analysis.program
    holding = [lp for lp in cfg.loops if any(program.instrs[i].opcode == "s_barrier" for i in lp.indices(cfg))]
    if not holding:
        raise FixRefused(f"{program.path}: no loop holds a barrier: nothing shares an LDS tile")
    return max(holding, key=lambda lp: len(lp.blocks))


def _resident_groups(kernel, lds: int) -> int | None:
    """Whole workgroups one CU (one WGP in WGP mode) holds with ``lds`` bytes of LDS each: by VGPRs, by
    LDS and by the hardware's limit (LLVM's occupancy counts waves; a workgroup is resident whole)."""
    from ...hw.occupancy import max_groups_per_cu, simds_per_group, waves_per_group

    occ = occupancy(kernel)
    if occ is None:
        return None
    per_group = waves_per_group(occ.group_size, occ.wave_size)
    by_vgprs = occ.by_vgprs * simds_per_group(occ.wgp_mode) // per_group
    by_lds = LDS_BYTES // max(1, lds)
    return min(by_vgprs, by_lds, max_groups_per_cu(occ.group_size, occ.wave_size, occ.wgp_mode))


def _shifted_bases(analysis, loop, phases, shift: int) -> dict[str, str]:
    """Address register -> a free VGPR holding it plus ``shift``, for the DS instructions whose offset
    fields have no room (copy A's stores, copy B's loads)."""
    program, cfg = analysis.program, analysis.cfg
    body = sorted(loop.indices(cfg))
    written = {r for i in body for r in program.instrs[i].defs}
    want = []
    for i in phases.reads + phases.writes:
        ins = program.instrs[i]
        if needs_base(ins, shift):
            reg = next(s for s in ins.slots[0] if s.name == "addr").regs[0]
            if reg in written:
                raise FixRefused(f"{program.path}:{ins.lineno}: '{ins.text()}' has no room for {shift} more bytes in "
                                 f"its offset, and its address {reg} changes in the loop")
            if reg not in want:
                want.append(reg)
    if not want:
        return {}
    at, _ = preheader(analysis, loop)
    view = rewritten_view(program, set(), None, {body[0]: set(want)})
    free = [r for r in free_registers(view, body + [at], "v", limit=256)]
    if len(free) < len(want):
        raise FixRefused(f"{program.path}: no free VGPRs for the second buffer's base addresses")
    return {reg: f"v{n}" for reg, n in zip(want, free)}


def _render(analysis, loop, phases, shift: int, bases: dict[str, str]) -> tuple[str, int]:
    """The file with the loop written twice. When blocks of the loop come before its header (a latch
    laid out ahead of it, as compilers do) each copy's are put ahead of the other copy's header, so that
    they fall into it as they fell into their own: copy B's, copy A's header and the rest of it, copy
    A's, copy B's header and the rest. Else copy B follows copy A."""
    program, cfg = analysis.program, analysis.cfg
    lines = program.source.lines
    first, last = region_lines(analysis, loop)
    labels = Labels(program)
    header = cfg.blocks[loop.header].label
    rename = {line.label: labels.fresh(f".Lisalint_db_{line.label.lstrip('.')}")
              for line in lines[first:last + 1] if label_of_line(line)}
    index = {id(line): n for n, line in enumerate(lines)}
    instr_of_line = {id(ins.line): ins for ins in program.instrs}
    blocks = sorted(loop.blocks)
    segments = {}  # block -> its line range
    start = first
    for b in blocks:
        end = index[id(program.instrs[cfg.blocks[b].last - 1].line)]
        segments[b] = (start, end)
        start = end + 1
    edits = Edits(program)
    exits: dict[int, str] = {}

    def exit_label(succ: int) -> str:
        if succ not in exits:
            target = cfg.blocks[succ].label
            if target is None:
                target = labels.fresh(".Lisalint_db_exit")
                edits.insert_before(cfg.blocks[succ].first, [f"{target}:"])
            exits[succ] = target
        return exits[succ]

    def block_lines(b: int, copy: str) -> list[str]:
        out = []
        lo, hi = segments[b]
        for n in range(lo, hi + 1):
            line = lines[n]
            text = line.text
            if copy == "B" and line.kind == "label" and line.label in rename:
                text = text.replace(f"{line.label}:", f"{rename[line.label]}:", 1)
            ins = instr_of_line.get(id(line))
            if ins is not None:
                i = ins.index
                if i in phases.b1:
                    continue
                if ins.klass == "branch" and ins.branch_target() is not None:
                    t = ins.branch_target()
                    if t == header:
                        text = retarget(ins, text, rename[header] if copy == "A" else header)
                    elif t in rename and copy == "B":
                        text = retarget(ins, text, rename[t])
                if i in (phases.writes if copy == "A" else phases.reads):
                    text = shifted(ins, text, shift, bases)
            out.append(text)
        return out

    pre = [b for b in blocks if b < loop.header]
    post = [b for b in blocks if b >= loop.header]
    rotated = bool(pre) and pre[-1] == loop.header - 1
    order = ([("B", b) for b in pre] + [("A", b) for b in post] + [("A", b) for b in pre] +
             [("B", b) for b in post]) if rotated else [("A", b) for b in blocks] + [("B", b) for b in blocks]
    out: list[str] = []
    added = 0
    removed_branches: list[int] = []
    for k, (copy, b) in enumerate(order):
        body = block_lines(b, copy)
        if copy == "B" and k and order[k - 1][0] == "A" and not (rotated and k == 0):
            body = ["; isalint fix --double-buffer: the loop again, reading LDS buffer 1 and writing buffer 0"] + body
        last_ins = program.instrs[cfg.blocks[b].last - 1]
        if last_ins.is_unconditional_branch() and k + 1 < len(order):
            nxt_copy, nxt = order[k + 1]
            name = cfg.blocks[nxt].label
            if name is not None and body and body[-1].split()[-1] == (rename[name] if nxt_copy == "B" else name):
                body = body[:-1]  # a branch to the next block: it falls there
                removed_branches.append(last_ins.lineno)
        out += body
        if not _falls_through(program, cfg, last_ins, loop):
            continue
        succ = b + 1
        if succ == loop.header:
            want = ("B" if copy == "A" else "A", succ)
        elif succ in loop.blocks:
            want = (copy, succ)
        else:
            want = ("exit", succ)
        following = order[k + 1] if k + 1 < len(order) else ("exit", blocks[-1] + 1)
        if following != want:
            indent = indent_of_text(last_ins.line.text)
            target = exit_label(succ) if want[0] == "exit" else \
                (cfg.blocks[succ].label if want[0] == "A" else rename.get(cfg.blocks[succ].label or ""))
            if target is None:
                raise FixRefused(f"{program.path}:{last_ins.lineno}: a block of the loop falls through to one without "
                                 "a label; the copies cannot reach it")
            out.append(f"{indent}s_branch {target}")
            added += 1
    edits.replace_line(first, out)
    for n in range(first + 1, last + 1):
        edits.replace_line(n, [])
    if bases:
        at, after = preheader(analysis, loop)
        indent = indent_of_text(program.instrs[at].line.text)
        setup = [f"{indent}v_add_nc_u32 {v}, {shift}, {reg}" for reg, v in bases.items()]
        (edits.insert_after if after else edits.insert_before)(at, setup)
    return edits.render(), added - len(removed_branches)


def _falls_through(program, cfg, ins, loop) -> bool:
    """Whether ``ins`` ends a block of the loop whose next block follows it without a branch."""
    b = cfg.block_of[ins.index]
    if ins.index != cfg.blocks[b].last - 1 or b not in loop.blocks:
        return False
    if ins.is_unconditional_branch() or ins.ends_program():
        return False
    return ins.index + 1 < len(program.instrs)


def _lds_size(text: str, old: int, new: int) -> str:
    text = re.sub(rf"(\.amdhsa_group_segment_fixed_size\s+){old}\b", rf"\g<1>{new}", text)
    return re.sub(rf"(\.group_segment_fixed_size:\s+){old}\b", rf"\g<1>{new}", text)
