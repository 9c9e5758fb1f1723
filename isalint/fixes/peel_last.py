"""``isalint fix --peel-last``: the loop's last iteration written after it, so no iteration tests
whether it is the last.

After the worklog's rewrites and double buffering, every iteration of kernel 5's tile loop still
asks three times whether it is the last one: a compare and a branch around the next tile's global
loads, a branch around its LDS stores, and the loop's own exit test (an add, a compare, a branch),
6 scalar instructions per copy of the loop besides the back edge. Under one issue per cycle each
costs the SIMD a cycle per iteration. Only the last iteration skips the copy; so the loop can run
every iteration but the last in full and the last one, its FMAs alone, after it:

* each copy of the loop keeps its offset adds, global loads, FMAs and stores, and ends with one
  ``s_add_u32`` of the counter and one branch: the counter is biased by ``step - N`` before the
  loop, so the add carries (SCC) exactly when the next iteration is the last;
* the last iteration, the FMA block of the copy that would have run it (the one reading the LDS
  buffer the last tile is in), follows the loop once per copy (``.Lisalint_peel_*``), then goes
  where the loop's exit went; a loop whose first iteration is the last goes there from the
  preheader;
* with two copies, the second copy's global loads take their own SGPR bases, one tile further
  (``s_add_u32``/``s_addc_u32`` before the loop), and an immediate offset for the offsets that
  step by a constant, so the first copy's offset adds step two tiles and the second copy has none.

What it proves, or refuses with the line and the reason: each copy has a guard ``s_cmp_ge_i32 K,
G`` / ``s_cbranch_scc1`` around global loads only, a branch on the same SCC around LDS stores,
waits and a barrier only, and a latch ``s_add_i32 K, K, step`` / ``s_cmp_ge_i32 K, N`` /
``s_cbranch_scc1 EXIT`` (or the branch back to it); ``G`` is ``N - d`` with ``1 <= d <= step``
(so the guard holds only in the last iteration), set before the loop, and neither ``G`` nor ``N``
is written after that; nothing between the guard and the store branch writes SCC; the counter is
read by nothing but this control and is dead at the exit, and so are the registers the guarded
loads write; no LDS access follows the loop (what the original's last iteration may load and store
when N is not a multiple of the step is never read). The SGPR-base step also needs the offset
registers to be written in the loop only by their adds, a stride SGPR the loop does not write, and
free SGPRs under the kernel's limit; without them the copies keep their adds.
"""
from __future__ import annotations

import re

from . import FixRefused, FixResult
from .toolkit import free_registers, highest_register, refresh_counts, reparse, sgpr_budget
from .toolkit.labels import Labels
from .toolkit.loops import preheader
from .toolkit.verify import check_no_new_wait_hazards

__all__ = ["apply", "VALIDATE_SIZES"]

VALIDATE_SIZES = (256, 384)

_SCMP = re.compile(r"^s_cmp_ge_i32\s+(s\d+),\s*(s\d+)$")
_SADD = re.compile(r"^s_add_i32\s+(s\d+),\s*(s\d+),\s*(-?\d+|0x[0-9a-fA-F]+)$")
_VADD = re.compile(r"^v_add_nc_u32(?:_e32)?\s+(v\d+),\s*(s\d+|\d+),\s*(v\d+)$")
_GLOAD = re.compile(r"^(global_load_\w+\s+v\[?[\d:]+\]?,\s*)(v\d+)(,\s*)s\[(\d+):(\d+)\](.*)$")


def _int(text: str) -> int:
    v = int(text, 0)
    return v - (1 << 32) if v >= 1 << 31 else v


def apply(analysis, options: dict | None = None) -> FixResult:
    options = options or {}
    program, cfg = analysis.program, analysis.cfg
    loop = cfg.find_loop(options["loop"]) if options.get("loop") else analysis.hot_loop
    if loop is None:
        raise FixRefused(f"{program.path}: " + (f"no loop headed by {options['loop']}" if options.get("loop")
                                                 else "the kernel has no loop"))
    instrs = program.instrs
    body = sorted(loop.indices(cfg))
    inside = set(body)
    header = cfg.blocks[loop.header]
    label = header.label or f"line {instrs[header.first].lineno}"
    kernel = program.kernel_of(body[0])

    def where(i: int) -> str:
        return f"{program.path}:{instrs[i].lineno}"

    text_of = {i: instrs[i].text() for i in body}
    ops = {i: instrs[i].opcode for i in body}

    # -- the latches: s_add_i32 K, K, step ; s_cmp_ge_i32 K, N ; s_cbranch_scc1 EXIT ----------------
    latches = []
    for i in body:
        m = _SADD.match(text_of[i])
        if not (m and m.group(1) == m.group(2)):
            continue
        j = i + 1
        while j in inside and ops[j] == "s_delay_alu":
            j += 1
        c = _SCMP.match(text_of.get(j, ""))
        if not (c and c.group(1) == m.group(1)) or j + 1 not in inside or ops[j + 1] != "s_cbranch_scc1":
            continue
        target = instrs[j + 1].branch_target()
        t = program.labels.get(target)
        if t is None or t in inside:
            continue
        latches.append((i, j, j + 1, m.group(1), _int(m.group(3)), c.group(2), target))
    if not latches:
        raise FixRefused(f"{program.path}: loop {label}: no exit test 's_add_i32 K, K, step' / 's_cmp_ge_i32 K, N' / "
                         "'s_cbranch_scc1' out of the loop: the trip count is not a counter this pass follows")
    keys = {(k, step, n, exit_) for _, _, _, k, step, n, exit_ in latches}
    if len(keys) != 1:
        raise FixRefused(f"{where(latches[1][0])}: the loop's exit tests differ in counter, step, bound or target")
    counter, step, bound, exit_label = next(iter(keys))
    if step <= 0:
        raise FixRefused(f"{where(latches[0][0])}: the counter steps by {step}; the carry test needs a positive step")

    # -- the guards and the store branches ------------------------------------------------------------
    guards = []
    for i in body:
        c = _SCMP.match(text_of[i])
        if not (c and c.group(1) == counter and c.group(2) != bound):
            continue
        if i + 1 not in inside or ops[i + 1] != "s_cbranch_scc1":
            raise FixRefused(f"{where(i)}: the compare of the counter with {c.group(2)} is not followed by "
                             "'s_cbranch_scc1'")
        skip_to = program.labels.get(instrs[i + 1].branch_target())
        if skip_to is None or skip_to not in inside or skip_to <= i + 1:
            raise FixRefused(f"{where(i + 1)}: the guard does not branch forward inside the loop")
        loads = list(range(i + 2, skip_to))
        if not loads or any(not ops[k].startswith("global_load") for k in loads):
            bad = next((k for k in loads if not ops[k].startswith("global_load")), i + 1)
            raise FixRefused(f"{where(bad)}: the guard skips more than global loads")
        guards.append((i, i + 1, loads, c.group(2)))
    if not guards:
        raise FixRefused(f"{program.path}: loop {label}: no guard 's_cmp_ge_i32 {counter}, G' / 's_cbranch_scc1' "
                         "around the next tile's loads: no iteration skips a copy")
    if len(guards) != len(latches):
        raise FixRefused(f"{where(guards[0][0])}: {len(guards)} guard(s) for {len(latches)} exit test(s): the copies "
                         "of the loop are not all alike")
    gregs = {g[3] for g in guards}
    if len(gregs) != 1:
        raise FixRefused(f"{where(guards[1][0])}: the guards compare with different registers")
    greg = next(iter(gregs))
    _check_guard_bound(program, kernel, body, greg, bound, step, where(guards[0][0]))

    latch_at = {lt[0]: lt for lt in latches}
    latch_labels = {}
    for lt in latches:
        b = cfg.blocks[cfg.block_of[lt[0]]]
        if b.first == lt[0] and b.label:
            latch_labels[b.label] = lt
    copies = []
    order = sorted(guards)
    for n, (gc, gb, loads, _) in enumerate(order):
        nxt = order[n + 1][0] if n + 1 < len(order) else body[-1] + 1
        skip = [k for k in range(loads[-1] + 1, nxt) if k in inside and ops[k] == "s_cbranch_scc1"
                and instrs[k].branch_target() in latch_labels]
        if len(skip) != 1:
            raise FixRefused(f"{where(gb)}: no single branch on the guard's SCC to the exit test after the FMAs")
        sk = skip[0]
        scc = [k for k in range(gc + 1, sk) if "scc" in instrs[k].defs]
        if scc:
            raise FixRefused(f"{where(scc[0])}: SCC is written between the guard and the branch around the stores")
        end = sk + 1
        while end in inside and ops[end] != "s_barrier":
            if instrs[end].klass != "lds" and ops[end] not in ("s_waitcnt", "s_delay_alu"):
                raise FixRefused(f"{where(end)}: the guard skips '{ops[end]}' besides LDS stores, waits and a barrier")
            end += 1
        if end not in inside:
            raise FixRefused(f"{where(sk)}: no barrier ends the stores the guard skips")
        if any(instrs[k].klass == "lds" and not ops[k].startswith("ds_store") for k in range(sk + 1, end)):
            raise FixRefused(f"{where(sk)}: the guard skips LDS reads")
        # what follows the barrier: this copy's latch, or a branch to one
        after = end + 1
        if after in latch_at:
            latch = latch_at[after]
        elif after in inside and instrs[after].is_unconditional_branch() and \
                instrs[after].branch_target() in latch_labels:
            latch = latch_labels[instrs[after].branch_target()]
        else:
            raise FixRefused(f"{where(end)}: the barrier is not followed by the loop's exit test")
        copies.append({"guard": (gc, gb), "loads": loads, "fma": (loads[-1] + 1, sk), "stores": (sk + 1, end),
                       "latch": latch, "after": after})

    # every instruction of the loop belongs to a copy's parts, its head or a latch
    # the counter: only this control reads it; it and the guarded loads' registers are dead at the exit
    control = {k for c in copies for k in c["guard"]} | {k for lt in latches for k in lt[:3]}
    for i in body:
        if counter in instrs[i].uses and i not in control:
            raise FixRefused(f"{where(i)}: '{ops[i]}' reads the loop counter {counter}")
        if (counter in instrs[i].defs and i not in control) or greg in instrs[i].defs or bound in instrs[i].defs:
            raise FixRefused(f"{where(i)}: '{ops[i]}' writes a register of the loop's exit test")
    from ..model.liveness import liveness

    live = liveness(program)
    exit_at = program.labels[exit_label]
    dead_needed = {counter} | {r for c in copies for k in c["loads"] for r in instrs[k].defs}
    alive = sorted(r for r in dead_needed if r in live.live_in(exit_at))
    if alive:
        raise FixRefused(f"{where(exit_at)}: {alive[0]} is read after the loop; the last iteration would leave "
                         "it different")
    lds_after = [k for k in range(body[-1] + 1, kernel.last) if instrs[k].klass == "lds"]
    if lds_after:
        raise FixRefused(f"{where(lds_after[0])}: the kernel uses LDS after the loop; the last iteration's stores "
                         "would be missed")
    pre, pre_after = preheader(analysis, loop)
    if instrs[pre].is_unconditional_branch() and instrs[pre].branch_target() != header.label:
        raise FixRefused(f"{where(pre)}: the block before the loop does not branch to its header")

    # -- the second copy's loads one tile further, from SGPR bases of its own ----------------------
    bases = _plan_bases(program, kernel, body, copies, pre) if len(copies) == 2 else None

    # -- write it ------------------------------------------------------------------------------------
    lines = program.source.render().split("\n")
    labels = Labels(program)
    peel_names = [labels.fresh(f".Lisalint_peel_{label.lstrip('.')}_{n}") for n in range(len(copies))]
    first_line = min(instrs[i].lineno for i in body)
    blk0 = cfg.blocks[cfg.block_of[body[0]]]
    region_start = _label_line(program, lines, blk0, first_line)
    region_end = instrs[body[-1]].lineno  # 1-based, inclusive
    indent = "\t"

    def raw(a: int, b: int, labels_too: bool = True) -> list[str]:
        """Source lines of instructions a..b-1 with the labels and comments among them."""
        if a >= b:
            return []
        lo = _label_line(program, lines, cfg.blocks[cfg.block_of[a]], instrs[a].lineno) \
            if labels_too else instrs[a].lineno
        hi = instrs[b - 1].lineno
        out = lines[lo - 1:hi]
        if not labels_too:
            out = [ln for ln in out if not re.match(r"^\s*[.\w$]+:", ln)]
        return out

    region: list[str] = []
    for n, c in enumerate(copies):
        gc, gb = c["guard"]
        # the copy's head: from the end of the previous copy (or the loop's first instruction) to the guard
        start = body[0]
        if n:
            prev_latch = copies[n - 1]["latch"]
            start = prev_latch[2] + 1 if copies[n - 1]["after"] in latch_at else copies[n - 1]["after"] + 1
        head = [k for k in range(start, gc) if k in inside and k not in {x for lt in latches for x in lt[:3]}]
        head_lines = raw(start, gc) if head else []
        head_lines = _drop_head_latch(head_lines, latches, instrs)
        if bases is not None:
            head_lines = [_rewrite_add(ln, bases, n) for ln in head_lines]
            head_lines = [ln for ln in head_lines if ln is not None]
        region += head_lines
        load_lines = raw(c["loads"][0], c["loads"][-1] + 1)
        if bases is not None and n == 1:
            load_lines = [_rewrite_load(ln, bases) for ln in load_lines]
        region += load_lines
        region += raw(c["fma"][0], c["fma"][1])
        region += raw(c["stores"][0], c["stores"][1] + 1)
        region.append(f"{indent}s_add_u32 {counter}, {counter}, {step}")
        if n + 1 < len(copies):
            region.append(f"{indent}s_cbranch_scc1 {peel_names[n + 1]}")
        else:
            region.append(f"{indent}s_cbranch_scc0 {header.label}")
    for n, c in enumerate(copies):
        region.append(f"{peel_names[n]}:")
        region.append(f"{indent}; isalint fix --peel-last: the last iteration of loop {label}, its FMAs alone")
        region += raw(c["fma"][0], c["fma"][1], labels_too=False)
        region.append(f"{indent}s_branch {exit_label}")

    setup = [f"{indent}; isalint fix --peel-last: {counter} counts to the last iteration, biased by "
             f"{step} - {bound} (the add carries when the next iteration is the last)",
             f"{indent}s_add_i32 {counter}, {counter}, {step}",
             f"{indent}s_cmp_ge_i32 {counter}, {bound}",
             f"{indent}s_cbranch_scc1 {peel_names[0]}",
             f"{indent}s_sub_i32 {counter}, {counter}, {bound}"]
    if bases is not None:
        setup += bases["setup"]
    pre_line = instrs[pre].lineno
    if pre_after:
        out = lines[:pre_line] + setup + lines[pre_line:region_start - 1]
    else:
        out = lines[:pre_line - 1] + setup + lines[pre_line - 1:region_start - 1]
    if not header.label:
        raise FixRefused(f"{where(header.first)}: the loop header has no label to branch to")
    out += region + lines[region_end:]
    text = "\n".join(out)
    vgprs = highest_register(program, body[0]) + 1
    sgprs = max(highest_register(program, body[0], "s") + 1, bases["sgprs"] if bases else 0)
    text = refresh_counts(text, program.path, vgprs=vgprs, sgprs=sgprs)
    new = reparse(text, program.path)
    check_no_new_wait_hazards(program, new.program)
    removed = 3 * len(copies) + 3 * len(latches) \
        + (1 if any(instrs[c["after"]].is_unconditional_branch() for c in copies) else 0)
    added = 2 * len(copies)
    summary = (f"peel-last: loop {label}: {len(copies)} cop{'y' if len(copies) == 1 else 'ies'}, "
               f"{removed} -> {added} scalar/branch instructions per pass through them "
               f"(the last iteration after the loop, {counter} biased by {step} - {bound})")
    if bases is not None:
        summary += (f"; copy 2 loads from {len(bases['pairs'])} SGPR base(s) one tile further, "
                    f"{bases['removed']} offset add(s) removed")
    return FixResult(text, summary)


def _drop_head_latch(head_lines: list[str], latches, instrs) -> list[str]:
    """The head of the first copy may start with the other copy's latch (the back edge's target):
    its add/compare/branch and hints go (the new latch is at each copy's end)."""
    texts = set()
    for i, j, b, *_ in latches:
        for k in range(i, b + 1):
            texts.add(k)
    out = []
    for ln in head_lines:
        code = ln.split(";")[0].strip()
        if any(code and code == instrs[k].text() for k in texts):
            continue
        out.append(ln)
    # a hint left alone before the first instruction of the head that hinted the dropped compare
    while out and out[0].strip().startswith("s_delay_alu"):
        out.pop(0)
    return out


def _label_line(program, lines: list[str], block, lineno: int) -> int:
    """The first line of the labels and comments directly above instruction line ``lineno`` (1-based)."""
    k = lineno - 1
    while k - 1 >= 0:
        s = lines[k - 1].strip()
        if re.match(r"^[.\w$]+:", s) or s.startswith(";") or not s:
            k -= 1
            continue
        break
    return k + 1


def _check_guard_bound(program, kernel, body, greg: str, bound: str, step: int, where: str) -> None:
    """``greg`` is ``bound - d`` (1 <= d <= step), written once before the loop; ``bound`` is written
    nowhere after that definition."""
    instrs = program.instrs
    defs = [k for k in range(kernel.first, kernel.last) if greg in instrs[k].defs]
    before = [k for k in defs if k < body[0]]
    if not before or any(k > body[0] for k in defs):
        raise FixRefused(f"{where}: {greg} is not set once before the loop")
    last = before[-1]
    m = _SADD.match(instrs[last].text())
    if not m or m.group(2) != bound or not (-step <= _int(m.group(3)) <= -1):
        raise FixRefused(f"{program.path}:{instrs[last].lineno}: the guard's {greg} is not {bound} - d with "
                         f"1 <= d <= {step}: the guard may hold before the last iteration")
    from ..model.reaching import reaching_defs

    g_at = reaching_defs(program, body[0], greg)
    if g_at != [last]:
        raise FixRefused(f"{where}: more than one value of {greg} reaches the loop")
    if any(bound in instrs[k].defs for k in range(last, kernel.last)):
        raise FixRefused(f"{where}: {bound} is written after {greg} is set from it")


def _plan_bases(program, kernel, body, copies, pre):
    """With two copies: copy 2's loads read ``base + stride`` SGPR pairs (set before the loop) for the
    offsets that step by an SGPR, and an immediate offset for those that step by a constant; copy 1's
    adds step twice as far. None when the copies' heads are not just such adds."""
    instrs = program.instrs
    heads = []
    for n, c in enumerate(copies):
        gc = c["guard"][0]
        adds = []
        k = gc - 1
        while k >= body[0] and (instrs[k].opcode.startswith("v_add_nc_u32") or instrs[k].opcode == "s_delay_alu"):
            m = _VADD.match(instrs[k].text())
            if m:
                if m.group(1) != m.group(3):
                    return None
                adds.append((m.group(1), m.group(2)))
            k -= 1
        heads.append(sorted(adds))
    if heads[0] != heads[1] or not heads[0]:
        return None
    regs = {r for r, _ in heads[0]}
    step_of = dict(heads[0])
    # the offsets are written in the loop only by these adds, strides are not written in the loop
    for i in body:
        for r in regs:
            if r in instrs[i].defs and not _VADD.match(instrs[i].text()):
                return None
        for _, s in heads[0]:
            if s.startswith("s") and s in instrs[i].defs:
                return None
    pairs = {}
    for k in copies[1]["loads"]:
        m = _GLOAD.match(instrs[k].text())
        if not m or m.group(2) not in regs:
            return None
        if "offset:" in m.group(6):
            return None
        stride = step_of[m.group(2)]
        if stride.startswith("s"):
            pairs.setdefault((int(m.group(4)), stride), None)
        elif not 0 < int(stride) <= 2047:
            return None
    sgpr_strides = sorted({s for _, s in heads[0] if s.startswith("s")})
    need = 2 * len(pairs) + len(sgpr_strides)
    limit = sgpr_budget(program, kernel).limit
    free_pairs = []
    for s in free_registers(program, list(body) + [pre], "s", count=2, limit=limit):
        if s % 2 == 0 and all(abs(s - t) >= 2 for t in free_pairs):
            free_pairs.append(s)
    if len(free_pairs) * 2 < need:
        return None
    taken = iter(free_pairs)
    names = {}
    setup = [f"\t; isalint fix --peel-last: the second copy's loads from SGPR bases one tile further"]
    sgprs = 0
    for (lo, stride) in pairs:
        p = next(taken)
        names[(lo, stride)] = p
        setup += [f"\ts_add_u32 s{p}, s{lo}, {stride}", f"\ts_addc_u32 s{p + 1}, s{lo + 1}, 0"]
        sgprs = max(sgprs, p + 2)
    double = {}
    for s in sgpr_strides:
        p = next(taken)
        double[s] = f"s{p}"
        setup += [f"\ts_lshl_b32 s{p}, {s}, 1"]
        sgprs = max(sgprs, p + 1)
    # the first copy's first add steps two tiles from one tile back: one add of the stride before the loop
    for r, s in heads[0]:
        setup.append(f"\tv_subrev_nc_u32 {r}, {s}, {r}")
    return {"pairs": names, "double": double, "step_of": step_of, "setup": setup, "sgprs": sgprs,
            "removed": len(heads[1])}


def _rewrite_add(line: str, bases, copy: int) -> str | None:
    code = line.split(";")[0].strip()
    m = _VADD.match(code)
    if not m:
        return line
    if copy == 1:
        return None
    r, s = m.group(1), m.group(2)
    if s.startswith("s"):
        return f"\tv_add_nc_u32 {r}, {bases['double'][s]}, {r}"
    return f"\tv_add_nc_u32 {r}, {2 * int(s)}, {r}"


def _rewrite_load(line: str, bases) -> str:
    code = line.split(";")[0].strip()
    m = _GLOAD.match(code)
    if not m:
        return line
    r, lo = m.group(2), int(m.group(4))
    stride = bases["step_of"][r]
    if stride.startswith("s"):
        p = bases["pairs"][(lo, stride)]
        return f"\t{m.group(1)}{r}{m.group(3)}s[{p}:{p + 1}]{m.group(6)}"
    return f"\t{m.group(1)}{r}{m.group(3)}s[{lo}:{int(m.group(5))}]{m.group(6)} offset:{int(stride)}"
