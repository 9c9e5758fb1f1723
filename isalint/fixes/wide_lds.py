"""``isalint fix --wide-lds``: two ``ds_load_b64`` of adjacent 8 bytes as one ``ds_load_b128``, where
dual issue and the VGPR bank plan survive.

``fix --dual-fmac`` splits each ``ds_load_b128`` of kernel 5's loop in two so that the A values sit on
one pair of VGPR banks and the B values on the other; that doubles the LDS loads (12 per k step), and
under one issue per cycle each costs the SIMD a cycle. This pass puts pairs back together where that
costs nothing: two ``ds_load_b64`` from one address register at offsets ``o`` and ``o + 8`` (``o`` and
every lane's address 16-byte aligned, RDNA3 ISA guide, "DS_LOAD_B128") whose four registers are
loaded only by such pairs and read only in the loop become one 4-register tuple, placed on whichever
of the four bank alignments keeps every VOPD legal and adds no modelled bank stall
(:mod:`isalint.hw.vgpr_banks`) over the loop. The ``lgkmcnt`` waits after a merged pair count one
load fewer where the second load was among the ones they let run on.

What it finds on the worklog's kernels: nothing to merge. A 16-byte tuple spans all four banks, and
every FMA of an outer product multiplies one A value by one B value, so whichever alignment the A
tuple takes, a quarter of the FMAs reading it find their B value in the same bank as their A value
(the same holds for B): two registers of one bank in one instruction, a stall the bank model charges
(and RGP measured on kernel 5). The refusal gives the best placement's count against the issue
cycles the merge would save.
"""
from __future__ import annotations

import re

from . import FixRefused, FixResult
from .toolkit import Edits, free_registers, highest_register, refresh_counts, reparse
from .toolkit.verify import check_no_new_wait_hazards

_REG = re.compile(r"\bv\[(\d+):(\d+)\]|\bv(\d+)\b")


def _dest(ins) -> int | None:
    slot = next((s for s in ins.slots[0] if s.role == "def"), None)
    return int(slot.regs[0][1:]) if slot is not None and len(slot.regs) == 2 else None


def _addr(ins):
    slot = next((s for s in ins.slots[0] if s.name == "addr"), None)
    return slot.regs[0] if slot is not None else None


def _offset(ins) -> int:
    m = ins.stmts[0].modifier("offset")
    return (m.int_value() or 0) if m is not None else 0


def _aligned(program, index: int) -> bool:
    """Every lane's address of the load 16-byte aligned (the lane evaluator's values and the trailing
    zero bits of their wave-uniform part)."""
    from ..model.lanes.evaluator import LaneEvaluator

    lanes = LaneEvaluator(program)
    acc = lanes.lds_access(program.instrs[index])
    if not hasattr(acc, "addresses"):
        return False
    return all(a % 16 == 0 for a in acc.addresses[0]) and lanes.tz(acc.terms) >= 4


def _pairs(program, body) -> list[tuple[int, int]]:
    """(first, second) ds_load_b64 index pairs: same address register, offsets o and o + 8, o 16-aligned,
    nothing writing the address between them."""
    out = []
    loads = [i for i in body if program.instrs[i].opcode == "ds_load_b64" and not program.instrs[i].opaque]
    for i in loads:
        a = program.instrs[i]
        if _offset(a) % 16:
            continue
        for j in loads:
            b = program.instrs[j]
            if j <= i or _addr(b) != _addr(a) or _offset(b) != _offset(a) + 8:
                continue
            if any(_addr(a) in program.instrs[k].defs for k in range(i, j)):
                continue
            out.append((i, j))
            break
    return out


def _rename_text(text: str, mapping: dict[int, int]) -> str:
    def sub(m):
        if m.group(3) is not None:
            n = int(m.group(3))
            return f"v{mapping.get(n, n)}"
        lo, hi = int(m.group(1)), int(m.group(2))
        if lo in mapping:
            return f"v[{mapping[lo]}:{mapping[lo] + hi - lo}]"
        return m.group(0)
    code, sep, comment = text.partition(";")
    return _REG.sub(sub, code) + sep + comment


def _stalls_and_legal(program, body, mapping: dict[int, int]) -> tuple[int, int | None]:
    """(modelled bank stall cycles over the loop, first line of an illegal VOPD or None) with the
    VGPRs of ``mapping`` renamed in the loop's VALU instructions."""
    from ..hw.vgpr_banks import simulate
    from ..hw.vopd import check_pair

    ops = []
    for i in body:
        ins = program.instrs[i]
        if ins.klass not in ("vopd", "valu", "trans") or ins.opaque:
            continue
        text = _rename_text(ins.line.text.strip(), mapping) if mapping else ins.line.text.strip()
        text = text.split(";")[0].strip()
        if ins.is_vopd and mapping:
            x, y = (t.strip() for t in text.split("::"))
            if any(v.severity == "error" for v in check_pair(x, y)):
                return 0, ins.lineno
        ops.append(text)
    return simulate(ops, loop=True).stall_cycles, None


def apply(analysis, options: dict | None = None) -> FixResult:
    options = options or {}
    program, cfg = analysis.program, analysis.cfg
    loop = cfg.find_loop(options["loop"]) if options.get("loop") else analysis.hot_loop
    if loop is None:
        raise FixRefused(f"{program.path}: the kernel has no loop")
    body = sorted(loop.indices(cfg))
    label = cfg.blocks[loop.header].label or "the hot loop"
    pairs = _pairs(program, body)
    if not pairs:
        raise FixRefused(f"{program.path}: loop {label} has no two ds_load_b64 of adjacent, 16-byte aligned 8 bytes "
                         "from one address register")
    groups = _groups(program, body, pairs)
    base, _ = _stalls_and_legal(program, body, {})
    taken: set[int] = set()
    chosen: list[tuple[tuple[int, int], dict[int, int]]] = []
    best_refusal = None
    for (ra, rb), members in groups.items():
        free = [q for q in free_registers(program, body, "v", count=4, limit=256) if not taken & set(range(q, q + 4))]
        tried = []
        for q in sorted(free, key=lambda q: q % 4)[:16]:
            if q % 4 in [t[0] % 4 for t in tried]:
                continue
            mapping = {ra: q, ra + 1: q + 1, rb: q + 2, rb + 1: q + 3}
            for (_, m) in chosen:
                mapping.update(m)
            stalls, illegal = _stalls_and_legal(program, body, mapping)
            tried.append((q, stalls, illegal))
            if illegal is None and stalls <= base:
                chosen.append(((ra, rb), {ra: q, ra + 1: q + 1, rb: q + 2, rb + 1: q + 3}))
                taken |= set(range(q, q + 4))
                break
        else:
            legal = [t for t in tried if t[2] is None]
            first = program.instrs[members[0][0]]
            if legal:
                q, stalls, _ = min(legal, key=lambda t: t[1])
                why = (f"its best placement (v[{q}:{q + 3}]) models {stalls - base} more bank stall cycles per "
                       f"iteration of the loop than the {base} it has, against {len(members)} issue cycles saved")
            elif tried:
                why = f"no placement keeps every VOPD legal (line {tried[0][2]})"
            else:
                why = "no 4 consecutive VGPRs are free over the loop"
            reason = (f"{program.path}:{first.lineno}: 'ds_load_b64 v[{ra}:{ra + 1}]' and 'ds_load_b64 v[{rb}:{rb + 1}]' "
                      f"({len(members)} pair(s) in the loop) as one ds_load_b128: {why}")
            if best_refusal is None:
                best_refusal = reason
    if not chosen:
        raise FixRefused(best_refusal + "; a 16-byte tuple spans all four VGPR banks, so every FMA that also reads a "
                         "value of another load meets it in one bank for a quarter of its pairs")
    return _rewrite(analysis, loop, body, groups, chosen, label)


def _groups(program, body, pairs) -> dict[tuple[int, int], list[tuple[int, int]]]:
    """Pairs by their destination registers, kept only when those registers are loaded by such pairs alone
    in the loop, and read there only (not live into or out of it)."""
    from ..model.liveness import liveness

    by: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for i, j in pairs:
        by.setdefault((_dest(program.instrs[i]), _dest(program.instrs[j])), []).append((i, j))
    live = liveness(program)
    header_in = live.live_in(body[0])
    cfg = program.cfg()
    loop_blocks = {cfg.block_of[i] for i in body}
    exits = {s for b in loop_blocks for s in cfg.blocks[b].succs if s not in loop_blocks}
    after = set()
    for b in exits:
        if cfg.blocks[b].last > cfg.blocks[b].first:
            after |= live.live_in(cfg.blocks[b].first)
    out = {}
    for (ra, rb), members in by.items():
        regs = {f"v{r}" for r in (ra, ra + 1, rb, rb + 1)}
        loaders = {i for pair in members for i in pair}
        if any(regs & set(program.instrs[k].defs) for k in body if k not in loaders):
            continue
        if regs & (header_in | after) or not all(_aligned(program, i) for i, _ in members):
            continue
        out[(ra, rb)] = members
    if not out:
        raise FixRefused(f"{program.path}:{program.instrs[pairs[0][0]].lineno}: the loop's adjacent ds_load_b64 "
                         "pairs load registers it also writes otherwise, or that live on around it, or read "
                         "addresses not known to be 16-byte aligned in every lane")
    return out


def _rewrite(analysis, loop, body, groups, chosen, label) -> FixResult:
    from ..model.waitcnt import wait_thresholds

    program = analysis.program
    mapping: dict[int, int] = {}
    for _, m in chosen:
        mapping.update(m)
    firsts, seconds = {}, set()
    for key, m in chosen:
        for i, j in groups[key]:
            firsts[i] = m[key[0]]
            seconds.add(j)
    edits = Edits(program)
    for i in body:
        ins = program.instrs[i]
        if i in seconds:
            edits.delete(i)
            continue
        if i in firsts:
            q = firsts[i]
            off = _offset(ins)
            edits.replace(i, [f"{ins.line.text[:len(ins.line.text) - len(ins.line.text.lstrip())]}ds_load_b128 "
                              f"v[{q}:{q + 3}], {_addr(ins)}" + (f" offset:{off}" if off else "")])
            continue
        if ins.klass == "waitcnt":
            thr = wait_thresholds(ins)
            k = (thr or {}).get("lgkmcnt")
            if k:
                lds_before = [x for x in body if x < i and program.instrs[x].klass == "lds"
                              and program.instrs[x].line is not None]
                window = lds_before[-k:] if k <= len(lds_before) else lds_before
                drop = sum(1 for x in window if x in seconds)
                if drop:
                    edits.replace(i, [ins.line.text.replace(f"lgkmcnt({k})", f"lgkmcnt({k - drop})")])
            continue
        new = _rename_text(ins.line.text, mapping)
        if new != ins.line.text:
            edits.replace(i, [new])
    text = refresh_counts(edits.render(), program.path,
                          vgprs=max(highest_register(program, body[0]) + 1, max(mapping.values()) + 1))
    new = reparse(text, program.path)
    check_no_new_wait_hazards(program, new.program)
    return FixResult(text, f"wide-lds: loop {label}: {len(seconds)} ds_load_b64 pairs as ds_load_b128 "
                           f"({len(chosen)} register tuple(s) placed on new banks)")
