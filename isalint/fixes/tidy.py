"""``isalint fix --tidy``: the hot loop without the scalar and copy work that computes nothing.

After the worklog's rewrites the outer loop of kernel 5 still carries what the compiler wrote for
the loop it had before them: a branch condition computed twice (``s_cmp_lt`` and ``s_cselect`` to
keep it in an SGPR for a second branch, beside ``s_cmp_ge`` for the first), the reset of an inner
counter no loop reads any more, and a copy of an LDS address register the unrolled loop never
changes. Under one issue per cycle each costs the SIMD a cycle per iteration. In the hot loop
(``--loop``, else the hottest), each step proven or left alone:

* a VCC branch (``s_cbranch_vccnz``/``vccz``) whose VCC is ``exec & mask`` of a condition that SCC
  still holds (the affine evaluator gives both: the same compare on every path, SCC written by
  nothing in between) becomes ``s_cbranch_scc1``/``scc0``; EXEC is never 0 there, since nothing in
  the kernel writes it;
* ``v_mov_b32 vD, vS`` whose every reader is a memory instruction of the loop reading only this
  copy, while nothing in the loop writes ``vS``: the readers take ``vS``;
* then, repeatedly, every SALU or VALU instruction of the loop whose every result is dead goes.

Nothing else changes: the output is the input's machine code less those instructions (and the
branches' encodings), validated by emulation as every pass is.
"""
from __future__ import annotations

from . import FixRefused, FixResult
from .toolkit import Edits, highest_register, refresh_counts, reparse, rewritten_view
from .toolkit.verify import check_no_new_wait_hazards

_DELETABLE = ("salu", "valu", "trans")
_SCC_FORM = {"s_cbranch_vccnz": ("s_cbranch_scc1", "s_cbranch_scc0"),
             "s_cbranch_vccz": ("s_cbranch_scc0", "s_cbranch_scc1")}


def apply(analysis, options: dict | None = None) -> FixResult:
    options = options or {}
    program, cfg = analysis.program, analysis.cfg
    loop = cfg.find_loop(options["loop"]) if options.get("loop") else analysis.hot_loop
    if loop is None:
        raise FixRefused(f"{program.path}: " + (f"no loop headed by {options['loop']}" if options.get("loop")
                                                 else "the kernel has no loop"))
    label = cfg.blocks[loop.header].label or f"line {program.instrs[cfg.blocks[loop.header].first].lineno}"
    body = sorted(loop.indices(cfg))
    kernel = program.kernel_of(body[0])
    branches = _scc_branches(analysis, loop, kernel, body)
    copies = _copies(analysis, loop, kernel, body)
    renamed = {i: (dst, src) for dst, src, readers in copies for i in readers}
    dropped_uses = {i: {dst} for i, (dst, _) in renamed.items()}
    added_uses = {}
    for i, (_, src) in renamed.items():
        added_uses.setdefault(i, set()).add(src)
    dead = _dead(program, body, dropped_uses, added_uses, branches)
    if not (branches or renamed or dead):
        raise FixRefused(f"{program.path}: loop {label}: nothing to tidy: no branch condition computed twice, no "
                         "copy of a register the loop keeps, no dead scalar or vector result")
    edits = Edits(program)
    for i, (new, _) in branches.items():
        ins = program.instrs[i]
        stmt = ins.stmts[0]
        line = ins.line.text
        start = stmt.col - 1
        edits.replace(i, [line[:start] + new + line[start + len(stmt.mnemonic):]])
    for i, (dst, src) in renamed.items():
        edits.replace(i, [_rename_operand(program.instrs[i], dst, src)])
    for i in dead:
        edits.delete(i)
    touched = {cfg.block_of[i] for i in dead}
    for b in touched:
        for i in cfg.blocks[b].indices():
            if program.instrs[i].opcode == "s_delay_alu":
                edits.delete(i)
    text = refresh_counts(edits.render(), program.path, vgprs=highest_register(program, body[0]) + 1,
                          sgprs=highest_register(program, body[0], "s") + 1)
    text = _rehint(text, program.path, {program.instrs[cfg.blocks[b].first].line.text for b in touched})
    new = reparse(text, program.path)
    check_no_new_wait_hazards(program, new.program)
    parts = []
    if branches:
        parts.append(f"{len(branches)} VCC branch(es) on SCC")
    if copies:
        parts.append(", ".join(f"{dst} -> {src} in {len(r)} reader(s)" for dst, src, r in copies))
    kinds: dict[str, int] = {}
    for i in dead:
        kinds[program.instrs[i].opcode] = kinds.get(program.instrs[i].opcode, 0) + 1
    if dead:
        parts.append(f"{len(dead)} dead instruction(s) removed (" +
                     ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) + ")")
    return FixResult(text, f"tidy: loop {label}: " + "; ".join(parts))


def _rehint(text: str, path: str, firsts: set[str]) -> str:
    """The hints of the blocks whose instructions went, written again (their ``s_delay_alu`` lines
    described instructions that are no longer there)."""
    from .toolkit.hints import add_missing_delays

    after = reparse(text, path)
    cfg, instrs = after.cfg, after.program.instrs

    def touched(p) -> bool:
        blk = cfg.blocks[cfg.block_of[p.consumer]]
        return any(instrs[i].line.text in firsts for i in blk.indices())

    hinted, _ = add_missing_delays(after, only=touched)
    return hinted if hinted is not None else text


def _writes_exec(program, kernel) -> bool:
    return any(any(r.startswith("exec") for r in program.instrs[i].defs) for i in range(kernel.first, kernel.last))


def _scc_branches(analysis, loop, kernel, body) -> dict[int, tuple[str, int]]:
    """VCC branches of the loop whose condition SCC holds just before VCC is computed, in the same
    block, nothing writing SCC in between: branch index -> (its SCC form, the VCC instruction)."""
    from ..model.affine.evaluator import AffineEvaluator
    from ..model.reaching import reaching_defs

    program, cfg = analysis.program, analysis.cfg
    candidates = [i for i in body if program.instrs[i].opcode in _SCC_FORM]
    if not candidates or _writes_exec(program, kernel):
        return {}
    ev = AffineEvaluator(program, kernel, loop)
    out = {}
    for i in candidates:
        defs = reaching_defs(program, i, "vcc_lo")
        if len(defs) != 1 or defs[0] < 0 or cfg.block_of[defs[0]] != cfg.block_of[i]:
            continue
        d = defs[0]
        if set(program.instrs[d].defs) - {"vcc_lo", "scc"} or program.instrs[d].klass != "salu":
            continue
        if any("scc" in program.instrs[j].defs for j in range(d + 1, i)):
            continue
        vcc, scc = ev.word("vcc_lo", i), ev.word("scc", d)
        if vcc.kind != "execand" or scc.kind != "pred" or vcc.pred is None or scc.pred is None:
            continue
        same, negated = _SCC_FORM[program.instrs[i].opcode]
        if scc.pred == vcc.pred:
            out[i] = (same, d)
        elif scc.pred == vcc.pred.negate():
            out[i] = (negated, d)
    return out


def _copies(analysis, loop, kernel, body) -> list[tuple[str, str, list[int]]]:
    """(vD, vS, readers) of the loop's ``v_mov_b32 vD, vS`` that memory instructions alone read."""
    from ..model.reaching import reaching_defs

    program = analysis.program
    written = {r for i in body for r in program.instrs[i].defs}
    out = []
    for i in body:
        ins = program.instrs[i]
        if ins.opaque or ins.is_vopd or ins.opcode not in ("v_mov_b32", "v_mov_b32_e32"):
            continue
        ops = ins.stmts[0].operands
        if len(ops) != 2 or ops[0].kind != "vgpr" or ops[1].kind != "vgpr" or ops[1].count != 1:
            continue
        dst, src = ops[0].text, ops[1].text
        if src in written or ins.stmts[0].modifiers:
            continue
        readers = []
        ok = True
        for j in range(kernel.first, kernel.last):
            if dst not in program.instrs[j].uses:
                continue
            defs = reaching_defs(program, j, dst)
            if i not in defs:
                continue
            other = program.instrs[j]
            if defs != [i] or j not in body or not other.is_memory() or dst in other.defs:
                ok = False
                break
            readers.append(j)
        if ok and readers and all(_single_operand(program.instrs[j], dst) for j in readers):
            out.append((dst, src, readers))
    return out


def _single_operand(ins, reg: str) -> bool:
    return sum(1 for op in ins.stmts[0].operands if op.text == reg) == 1 and \
        all(op.text == reg or reg not in op.registers() for op in ins.stmts[0].operands if op.is_register)


def _rename_operand(ins, old: str, new: str) -> str:
    text = ins.line.text
    op = next(o for o in ins.stmts[0].operands if o.text == old)
    start = op.col - 1
    if text[start:start + len(old)] != old:
        raise FixRefused(f"internal error: cannot find operand {old} on line {ins.lineno}")
    return text[:start] + new + text[start + len(old):]


def _dead(program, body, drop_uses, add_uses, vcc_branches: dict) -> set[int]:
    """SALU/VALU instructions of the loop whose results nobody reads once the rewrite is done,
    removed repeatedly (removing one may kill the inputs of another). A branch that now reads SCC
    takes the place of the instruction that computed its VCC, which goes unless VCC is read on."""
    from ..model.liveness import Liveness

    drop = {i: set(r) for i, r in drop_uses.items()}
    add = {i: set(r) for i, r in add_uses.items()}
    for i in vcc_branches:
        drop.setdefault(i, set()).add("vcc_lo")
        add.setdefault(i, set()).add("scc")
    dead: set[int] = set()
    lv = Liveness(rewritten_view(program, set(), drop, add))
    for i, (_, d) in vcc_branches.items():
        if "vcc_lo" in lv.live_out(i):
            raise FixRefused(f"internal error: VCC of line {program.instrs[d].lineno} is read after line "
                             f"{program.instrs[i].lineno}")
        dead.add(d)
    while True:
        lv = Liveness(rewritten_view(program, dead, drop, add))
        new = set()
        for i in body:
            ins = program.instrs[i]
            if i in dead or ins.klass not in _DELETABLE or ins.is_vopd or ins.opaque or not ins.defs:
                continue
            if any(r.startswith(("exec", "m0")) for r in ins.defs):
                continue
            if not (lv.def_mask[i] & lv.live_out_mask(i)):
                new.add(i)
        if not new:
            return dead
        dead |= new
