"""What a hover shows, from the model of the last check (Markdown).

- On an instruction: its opcode (and the gfx11 opcode an alias stands for), class and encoding; each
  operand with its role, registers, width and VGPR banks; implicit registers; the operand-cache
  reads of the bank model in the loop it sits in (register-file read or cache hit per source, stall
  cycles); the result latency it has for ``s_delay_alu``, or the counter it waits on; whether it can
  dual-issue, and the partner DUAL002 found for it (or why there is none); the loop, its trip count
  and how many times the instruction runs per wave.
- On a register: its bank, which instruction last wrote it before this one (the definitions that
  reach it), and its live range in this basic block.
- On a rule code or rule name in a comment (``; isalint: disable=DUAL002``): the rule's summary.
"""
from __future__ import annotations

import re

_WORD = re.compile(r"[A-Za-z0-9_-]+")


def hover(outcome, line: int, column: int, docs=None) -> str | None:
    """The hover text at 1-based ``line`` and ``column`` of the checked document, or None."""
    analysis = outcome.analysis
    if analysis is None:
        return None
    lines = analysis.program.source.lines
    if not lines or not 1 <= line <= len(lines):
        return None
    src = lines[line - 1]
    if src.comment is not None and src.comment_col and column >= src.comment_col:
        return _rule_in_comment(src.comment, column - src.comment_col, docs)
    if src.kind != "instruction":
        return None
    ins = _instr_at(analysis, src)
    if ins is None:
        return None
    for stmt_index, stmt in enumerate(ins.stmts):
        for op in stmt.operands:
            if op.is_register and op.col <= column < op.col + len(op.text):
                return register_hover(analysis, ins, stmt_index, op)
    return instruction_hover(analysis, ins, outcome.findings)


def _instr_at(analysis, src):
    instrs = analysis.program.instrs
    index = analysis.__dict__.get("_server_index")
    if index is None:
        index = analysis.__dict__["_server_index"] = {ins.lineno: ins.index for ins in instrs}
    k = index.get(src.number)
    return instrs[k] if k is not None else None


# ----------------------------------------------------------------------------- rules


def _rule_in_comment(comment: str, offset: int, docs) -> str | None:
    from .. import rules as registry

    for m in _WORD.finditer(comment):
        if m.start() <= offset < m.end():
            word = m.group()
            code = word.upper() if word.upper() in registry.available() else registry.names().get(word.lower())
            return rule_hover(code, docs) if code else None
    return None


def rule_hover(code: str, docs=None) -> str | None:
    from .engine import rule

    m = rule(code)
    if m is None:
        return None
    head = f"**{m.CODE}** `{m.NAME}` ({m.SEVERITY}{', fix: `isalint fix ' + m.FIXABLE + '`' if m.FIXABLE else ''})"
    parts = [head, m.SUMMARY]
    link = docs.link(m.CODE) if docs is not None else None
    if link:
        parts.append(f"[Documentation]({link}) (`isalint explain {m.CODE}`)")
    else:
        parts.append(f"`isalint explain {m.CODE}` prints its documentation.")
    return "\n\n".join(parts)


# ----------------------------------------------------------------------------- instructions


def _banks(regs: list[str]) -> str:
    banks = [str(int(r[1:]) % 4) for r in regs if r[:1] == "v" and r[1:].isdigit()]
    return f" bank{'s' if len(banks) > 1 else ''} {' '.join(banks)}" if banks else ""


def _regs(regs: list[str]) -> str:
    if len(regs) <= 2:
        return ", ".join(regs)
    return f"{regs[0]}..{regs[-1]}"


def instruction_hover(analysis, ins, findings=()) -> str:
    from ..model.hotness import hotness

    info = ins.infos[0] if ins.infos else None
    name = ins.mnemonic if ins.canonical == ins.mnemonic else f"{ins.mnemonic} (= {ins.canonical})"
    head = f"**{name}**: {_klass(ins)}"
    if info is not None and not ins.is_vopd:
        head += f", {info.encoding} encoding"
    out = [head]
    if ins.problem:
        out.append(f"Not decoded: {ins.problem}.")
        return "\n\n".join(out)
    rows = ["| | operand | registers |", "|---|---|---|"]
    explicit: set[str] = set()
    for k, slots in enumerate(ins.slots):
        half = ("X: " if k == 0 else "Y: ") if ins.is_vopd else ""
        for slot in slots:
            explicit.update(slot.regs)
            role = {"def": "writes", "use": "reads", "defuse": "reads, writes"}[slot.role]
            if slot.regs:
                width = f"{32 * len(slot.regs)}-bit" if slot.operand.kind in ("vgpr", "sgpr", "ttmp") else ""
                regs = f"{_regs(slot.regs)} {width}{_banks(slot.regs)}".strip()
            else:
                regs = "constant" if slot.operand.kind in ("int", "float", "expr", "label") else "-"
            rows.append(f"| {half}{slot.name} ({role}) | `{slot.operand.text}` | {regs} |")
    if len(rows) > 2:
        out.append("\n".join(rows))
    implicit_uses = [r for r in ins.uses if r not in explicit]
    implicit_defs = [r for r in ins.defs if r not in explicit]
    if implicit_uses or implicit_defs:
        out.append("Implicit: " + "; ".join(
            x for x in (f"reads {', '.join(implicit_uses)}" if implicit_uses else "",
                        f"writes {', '.join(implicit_defs)}" if implicit_defs else "") if x) + ".")
    cache = _operand_cache(analysis, ins)
    if cache:
        out.append(cache)
    out.append(_timing(ins))
    vopd = _dual_issue(analysis, ins, findings)
    if vopd:
        out.append(vopd)
    cfg = analysis.cfg
    loop = cfg.loop_of(ins.index)
    runs = hotness(analysis)
    if loop is None:
        out.append("Outside any loop: runs once per wave.")
    else:
        trips = runs.loop_trips(loop)
        trip_text = (f"{trips.count} iterations" if trips.known
                     else f"trip count not stated in the code (assumed {trips.count})")
        out.append(f"In loop `{_loop_name(analysis, loop)}` (depth {loop.depth}, {trip_text}): runs "
                   f"{runs.of(ins.index).text()} times per wave.")
    return "\n\n".join(out)


def _klass(ins) -> str:
    names = {"valu": "VALU", "vopd": "VOPD (dual-issue VALU)", "trans": "transcendental VALU", "salu": "SALU",
             "lds": "LDS", "vmem_load": "vector memory load", "vmem_store": "vector memory store",
             "smem": "scalar memory load", "branch": "branch", "waitcnt": "wait", "delay": "ALU delay hint",
             "wmma": "WMMA (matrix)", "endpgm": "end of program"}
    return names.get(ins.klass, ins.klass)


def _timing(ins) -> str:
    from ..model.alu_delays import alu_kind, issue_cycles, result_latency

    kind = alu_kind(ins)
    if kind is not None and ins.defs:
        return (f"Latency: result readable {result_latency(ins)} cycles after issue ({kind.upper()}; "
                f"`s_delay_alu` names it); issues in {issue_cycles(ins)} cycle{'s' if issue_cycles(ins) != 1 else ''}.")
    if ins.counters:
        return f"Completes asynchronously: counted by {', '.join(ins.counters)} (`s_waitcnt`)."
    return f"Issues in {issue_cycles(ins)} cycle{'s' if issue_cycles(ins) != 1 else ''}."


def _operand_cache(analysis, ins) -> str | None:
    """The bank model's view of ``ins`` in its loop (from cold caches outside loops)."""
    if ins.klass not in ("valu", "vopd", "trans"):
        return None
    from ..model.loop_stats import simulate_loop

    cfg = analysis.cfg
    loop = cfg.loop_of(ins.index)
    sims = analysis.__dict__.setdefault("_server_sims", {})
    key = loop.header if loop is not None else ("block", cfg.block_of[ins.index])
    if key not in sims:
        if loop is None:  # the instruction's basic block, from cold caches
            from ..hw.vgpr_banks import simulate

            idx = list(cfg.blocks[cfg.block_of[ins.index]].indices())
            sim = simulate([analysis.program.instrs[i] for i in idx])
        else:
            idx, sim = simulate_loop(analysis, loop)
        sims[key] = {i: step for i, step in zip(idx, sim.steps)}
    step = sims[key].get(ins.index)
    if step is None:
        return None
    cells = [f"{slot} {value}" for slot, value in step.cells().items() if value]
    reads = {"R": "register-file read", "Cache": "operand-cache hit"}
    detail = ", ".join(f"{a.slot} {a.reg} ({reads.get(a.kind, a.kind)}, bank {a.bank})" for a in step.reads)
    where = "in the loop's steady state" if loop is not None else "in its block, from cold caches"
    text = f"Operand cache ({where}): {detail or 'no VGPR source'}"
    if cells:
        text += f"; row `{' '.join(cells)}`"
    if step.stall:
        banks = ", ".join(str(b) for b, _ in step.conflicts)
        text += f"; **stalls {step.stall} cycle{'s' if step.stall > 1 else ''}** (bank conflict on bank {banks})"
    else:
        text += "; no stall"
    return text + " (bank model: `isalint report`)."


def _dual_issue(analysis, ins, findings) -> str | None:
    from ..hw.vopd import dual_name

    if ins.is_vopd:
        problems = [v.message for v in analysis.vopd_violations(ins.index) if v.severity == "error"]
        halves = " and ".join(f"`{s.mnemonic}`" for s in ins.stmts)
        if problems:
            return f"Dual issue: {halves}, **illegal pair**: {'; '.join(problems)}."
        return f"Dual issue: {halves} in one cycle (a legal VOPD pair)."
    if ins.klass != "valu" or len(ins.stmts) != 1:
        return None
    dual = dual_name(ins.stmts[0].mnemonic)
    if dual is None:
        return "No VOPD form: issues alone."
    for d in findings:
        if d.code != "DUAL002":
            continue
        for site in d.sites:
            if site.line == ins.lineno:
                return f"VOPD form `{dual}`. Pairing (DUAL002): {site.message}."
    return f"VOPD form `{dual}`; DUAL002 found no partner worth reporting for it."


def _loop_name(analysis, loop) -> str:
    return analysis.cfg.blocks[loop.header].label or f"block{loop.header}"


# ----------------------------------------------------------------------------- registers


def register_hover(analysis, ins, stmt_index: int, op) -> str:
    slot = next((s for s in ins.slots[stmt_index] if s.operand is op), None) if ins.slots else None
    regs = slot.regs if slot is not None and slot.regs else op.registers()
    role = {"def": "written", "use": "read", "defuse": "read and written"}.get(slot.role, "") if slot else ""
    head = f"**{op.text}**" + (f": {_regs(regs)}" if len(regs) > 1 or (regs and regs[0] != op.text) else "")
    if regs and regs[0][:1] == "v" and regs[0][1:].isdigit():
        head += f", VGPR{_banks(regs)}"
    if role:
        head += f"; {role} here"
    out = [head]
    if not regs:
        return head
    shown = regs[:8]
    writers = _last_writers(analysis, ins, shown)
    ranges = [_live_range(analysis, ins, r) for r in shown]
    label = "Written before this instruction by" if slot is not None and slot.role != "use" else "Last written by"
    if len(set(writers)) == 1 and len(set(ranges)) == 1:
        out.append(f"{label}: {writers[0]}.")
        out.append(ranges[0])
    else:
        out.append("\n".join(f"- `{r}`: {label.lower()} {w}; {rng[0].lower() + rng[1:]}"
                             for r, w, rng in zip(shown, writers, ranges)))
    if len(regs) > len(shown):
        out.append(f"({len(regs) - len(shown)} more registers not shown.)")
    return "\n\n".join(out)


def _last_writers(analysis, ins, regs: list[str]) -> list[str]:
    from ..model.reaching import reaching_defs

    program = analysis.program
    out = []
    for r in regs:
        found = reaching_defs(program, ins.index, r)
        parts = []
        for i in found:
            if i < 0:
                parts.append("on entry (written before the kernel or on a path from outside)")
            else:
                w = program.instrs[i]
                parts.append(f"line {w.lineno} `{w.text()}`")
        out.append(" or ".join(parts) if parts else "never")
    return out


def _live_range(analysis, ins, reg: str) -> str:
    """The value of ``reg`` that ``ins`` reads or writes, within ``ins``'s basic block."""
    from ..model.liveness import liveness

    program = analysis.program
    instrs = program.instrs
    cfg = analysis.cfg
    blk = cfg.blocks[cfg.block_of[ins.index]]
    name = blk.label or f"block{blk.id}"
    where = f"block `{name}` (lines {instrs[blk.first].lineno}-{instrs[blk.last - 1].lineno})"
    writes_here = reg in ins.defs
    start = ins.index if writes_here else None
    if start is None:
        for i in range(ins.index - 1, blk.first - 1, -1):
            if reg in instrs[i].defs:
                start = i
                break
    last_read = None
    redefined = None
    for i in range((start if start is not None else blk.first - 1) + 1, blk.last):
        if reg in instrs[i].uses:
            last_read = i
        if reg in instrs[i].defs:
            redefined = i
            break
    live_out = redefined is None and liveness(program).is_live_out(blk.last - 1, reg)
    begin = (f"from line {instrs[start].lineno}" if start is not None else "from the block's entry (live into it)")
    if live_out:
        end = "to the block's end (live out of it)"
    elif last_read is not None:
        end = f"to its last read at line {instrs[last_read].lineno}"
    elif start is not None:
        end = "but never read in the block" + (f" (overwritten at line {instrs[redefined].lineno})"
                                                  if redefined is not None else " and dead after it")
    else:
        end = "to its last read here"
    return f"Live range in {where}: {begin} {end}."
