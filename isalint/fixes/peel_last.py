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
  step by a constant, so the first copy's offset adds step two tiles and the second copy has none;
* the adds left at the top of the first copy ride as the Y halves (``v_dual_add_nc_u32``) of two
  dual FMAs in the last k step of the iteration before, the two FMAs they displace paired with each
  other, and run once before the loop; an offset moves to a free VGPR (one that keeps the occupancy)
  where the pairs need another parity or bank. Chosen only where the VGPR-bank model shows no stall
  added; otherwise the adds stay.

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
free SGPRs under the kernel's limit; without them the copies keep their adds. It turns the second
copy's address ``base + ((offset + stride) mod 2^32)`` into ``(base + stride) + offset``: the same
while the 32-bit offsets do not wrap, as the loads the input executes need to address their matrix
at all (``batch-gmem``'s offsets are exact up to its ``--max-n``); that is assumed, not proven here,
and the emulator's validation at N = 256, 384 and on sampled workgroups at 4096 checks it. The
folded adds need the offsets read in the loop only by the adds and the global loads, dead after it,
and nothing between the k step they ride in and the next copy's loads touching them.
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
    if not header.label:
        raise FixRefused(f"{program.path}:{instrs[header.first].lineno}: the loop header has no label to branch to")

    def where(i: int) -> str:
        return f"{program.path}:{instrs[i].lineno}"

    copies = _copies(program, cfg, loop, body, inside, header, where)
    followed = {k for c in copies for k in c["followed"]}
    gap = [k for k in range(body[0], body[-1] + 1) if k not in inside and k not in followed]
    if gap:
        raise FixRefused(f"{program.path}:{instrs[gap[0]].lineno}: code outside the loop lies between its blocks")
    keys = {(c["counter"], c["step"], c["bound"]) for c in copies}
    if len(keys) != 1:
        raise FixRefused(f"{where(copies[1]['guard'][0])}: the copies' iteration tests differ in counter, step "
                         "or bound")
    counter, step, bound = next(iter(keys))
    if step <= 0:
        raise FixRefused(f"{where(copies[0]['guard'][0])}: the counter steps by {step}; the carry test needs a "
                         "positive step")
    control = set()
    for c in copies:
        control |= set(c["control"])
    temps = {c["temp"] for c in copies if c["temp"]}
    for i in body:
        ins = instrs[i]
        if i in control:
            continue
        if counter in ins.uses or any(t in ins.uses for t in temps):
            raise FixRefused(f"{where(i)}: '{ins.opcode}' reads the loop counter {counter}")
        hit = [r for r in [counter, bound, *temps, *(c["gbound"] for c in copies if c["gbound"])] if r in ins.defs]
        if hit:
            raise FixRefused(f"{where(i)}: '{ins.opcode}' writes {hit[0]}, a register of the loop's iteration test")
    for c in copies:
        if c["gbound"]:
            _check_guard_bound(program, kernel, body, c["gbound"], bound, step, where(c["guard"][0]))
    if any(c["execz"] for c in copies) and _writes_exec(program, kernel):
        raise FixRefused(f"{where(next(c['execz'] for c in copies if c['execz']))}: the kernel writes EXEC; the "
                         "loop's s_cbranch_execz may be taken")
    labels = Labels(program)
    fresh: dict[int, str] = {}
    for c in copies:
        if c["cont"] is None:
            at = c.pop("new_label")
            if at not in fresh:
                fresh[at] = labels.fresh(f".Lisalint_peel_exit_{len(fresh)}")
            c["cont"], c["cont_at"] = fresh[at], at
        else:
            c["cont_at"] = program.labels[c["cont"]]
    from ..model.liveness import liveness

    live = liveness(program)
    loaded = {r for c in copies for k in c["loads"] for r in instrs[k].defs}
    for c in copies:
        at = c["cont_at"]
        for r in sorted({counter, *temps} | loaded):
            if r in live.live_in(at) and not _only_dead_copies(program, cfg, loop, live, at, r):
                raise FixRefused(f"{where(at)}: {r} is read after the loop; the peeled last iteration would leave "
                                 "it different")
    lds_after = [k for k in range(body[-1] + 1, kernel.last) if instrs[k].klass == "lds"]
    if lds_after:
        raise FixRefused(f"{where(lds_after[0])}: the kernel uses LDS after the loop; the last iteration's stores "
                         "would be missed")
    pre, pre_after = preheader(analysis, loop)
    if instrs[pre].is_unconditional_branch() and instrs[pre].branch_target() != header.label:
        raise FixRefused(f"{where(pre)}: the block before the loop does not branch to its header")
    scc_needed = [c["cont_at"] for c in copies if "scc" in live.live_in(c["cont_at"])]
    if scc_needed:
        raise FixRefused(f"{where(scc_needed[0])}: SCC is read after the loop")

    # -- the second copy's loads one tile further, from SGPR bases of its own ----------------------
    bases = _plan_bases(program, kernel, body, copies, pre) if len(copies) == 2 else None

    # -- write it ------------------------------------------------------------------------------------
    lines = program.source.render().split("\n")
    peel_names = [labels.fresh(f".Lisalint_peel_{label.lstrip('.')}_{n}") for n in range(len(copies))]
    region_start = _label_line(lines, instrs[body[0]].lineno)
    region_end = instrs[body[-1]].lineno  # 1-based, inclusive
    indent = "\t"

    def raw(a: int, b: int, labels_too: bool = True, skip=frozenset()) -> list[str]:
        """Source lines of instructions a..b-1 (less ``skip``) with the labels and comments among them."""
        if a >= b:
            return []
        lo = _label_line(lines, instrs[a].lineno) if labels_too else instrs[a].lineno
        drop = {instrs[k].lineno for k in skip}
        out = [ln for n, ln in enumerate(lines[lo - 1:instrs[b - 1].lineno], lo) if n not in drop]
        if not labels_too:
            out = [ln for ln in out if not re.match(r"^\s*[.\w$]+:", ln)]
        return out

    region: list[str] = []
    spans: dict[str, list[tuple[int, int]]] = {}
    for n, c in enumerate(copies):
        head_skip = set(c["control"]) | {k for k in c["head"] if instrs[k].opcode == "s_delay_alu"}
        head_lines = raw(c["start"], c["guard"][0], skip=head_skip) if c["start"] < c["guard"][0] else []
        if bases is not None:
            head_lines = [x for x in (_rewrite_add(ln, bases, n) for ln in head_lines) if x is not None]
        spans.setdefault("head", []).append((len(region), len(region) + len(head_lines)))
        region += head_lines
        load_lines = raw(c["loads"][0], c["loads"][-1] + 1)
        if bases is not None and n == 1:
            load_lines = [_rewrite_load(ln, bases) for ln in load_lines]
        region += load_lines
        fma_lines = raw(c["fma"][0], c["fma"][1])
        spans.setdefault("fma", []).append((len(region), len(region) + len(fma_lines)))
        region += fma_lines
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
        region.append(f"{indent}s_branch {c['cont']}")

    setup = [f"{indent}; isalint fix --peel-last: {counter} counts to the last iteration, biased by "
             f"{step} - {bound} (the add carries when the next iteration is the last)",
             f"{indent}s_add_i32 {counter}, {counter}, {step}",
             f"{indent}s_cmp_ge_i32 {counter}, {bound}",
             f"{indent}s_cbranch_scc1 {peel_names[0]}",
             f"{indent}s_sub_i32 {counter}, {counter}, {bound}"]
    if bases is not None:
        setup += bases["setup"]
    folded = None
    if bases is not None or len(copies) == 1:
        folded = _fold_adds(program, kernel, body, copies, pre, live, region, spans, setup, bases)
        if folded is not None:
            region, setup = folded["region"], folded["setup"]
    pre_line = instrs[pre].lineno
    if pre_after:
        out = lines[:pre_line] + setup + [f"{indent}s_branch {header.label}"] + lines[pre_line:region_start - 1]
    else:
        out = lines[:pre_line - 1] + setup + lines[pre_line - 1:region_start - 1]
    tail = lines[region_end:]
    for at, name in sorted(fresh.items(), reverse=True):
        k = _label_line(lines, instrs[at].lineno) - region_end - 1
        tail[k:k] = [f"{name}:"]
    out += region + tail
    text = "\n".join(out)
    vgprs = highest_register(program, body[0]) + 1
    sgprs = max(highest_register(program, body[0], "s") + 1, bases["sgprs"] if bases else 0)
    if folded is not None:
        vgprs = max(vgprs, folded["vgprs"])
    text = refresh_counts(text, program.path, vgprs=vgprs, sgprs=sgprs)
    new = reparse(text, program.path)
    check_no_new_wait_hazards(program, new.program)
    removed = len(control) - sum(1 for k in control if instrs[k].opcode == "s_delay_alu")
    added = 2 * len(copies)
    from .toolkit.codesize import code_bytes

    peeled = sum(code_bytes(instrs[k] for k in range(*c["fma"])) for c in copies)
    summary = (f"peel-last: loop {label}: the last iteration after the loop ({len(copies)} "
               f"cop{'y' if len(copies) == 1 else 'ies'}, {peeled} bytes of code run once), {removed} -> {added} "
               f"scalar and branch instructions per pass, {counter} biased by {step} - {bound}")
    if bases is not None:
        summary += (f"; the second copy loads from {len(bases['pairs'])} SGPR base(s) one tile further, "
                    f"{bases['removed']} offset add(s) fewer")
    if folded is not None:
        summary += f"; {folded['what']}"
    return FixResult(text, summary)


def _writes_exec(program, kernel) -> bool:
    return any(any(r.startswith("exec") for r in program.instrs[i].defs) for i in range(kernel.first, kernel.last))


def _only_dead_copies(program, cfg, loop, live, at: int, reg: str) -> bool:
    """Every read of ``reg`` reachable from ``at`` outside the loop is an ``s_mov_b32`` whose result is
    dead, and no write of ``reg`` comes first on the way."""
    seen, todo = set(), [cfg.block_of[at]]
    while todo:
        b = todo.pop()
        if b in seen or b in loop.blocks:
            continue
        seen.add(b)
        blk = cfg.blocks[b]
        first = at if b == cfg.block_of[at] else blk.first
        killed = False
        for k in range(first, blk.last):
            ins = program.instrs[k]
            if reg in ins.uses and (ins.opcode != "s_mov_b32" or any(d in live.live_out(k) for d in ins.defs)):
                return False
            if reg in ins.defs:
                killed = True
                break
        if not killed:
            todo += list(blk.succs)
    return True


def _copies(program, cfg, loop, body, inside, header, where) -> list[dict]:
    """The copies of the loop body, in order from the header: for each, its guard (compare and
    branch around global loads), loads, FMA block, store branch, stores, the latch's control
    instructions, the counter, step and bound of its iteration test and where the last iteration
    continues after its FMAs."""
    instrs = program.instrs
    ops = {i: instrs[i].opcode for i in body}
    text = {i: instrs[i].text() for i in body}
    guards, near = [], []
    for i in body:
        m = _SCMP.match(text[i])
        if not m or i + 1 not in inside or ops[i + 1] != "s_cbranch_scc1":
            continue
        to = program.labels.get(instrs[i + 1].branch_target())
        if to is None or to not in inside or to <= i + 2:
            continue
        loads = list(range(i + 2, to))
        if all(ops[k].startswith("global_load") or ops[k] == "s_clause" for k in loads) and \
                any(ops[k].startswith("global_load") for k in loads):
            guards.append((i, loads, m.group(1), m.group(2)))
        elif any(ops[k].startswith("global_load") for k in loads):
            near.append(next(k for k in loads if not ops[k].startswith("global_load") and ops[k] != "s_clause"))
    if not guards and near:
        raise FixRefused(f"{where(near[0])}: the guard around the next tile's global loads also skips "
                         f"'{ops[near[0]]}'; the peeled loop would run it in every iteration")
    if not guards:
        raise FixRefused(f"{program.path}: loop {header.label}: no compare and 's_cbranch_scc1' around the next "
                         "tile's global loads: no iteration skips a copy")
    copies = []
    start = header.first
    for gc, loads, x, y in guards:
        c = {"guard": (gc, gc + 1), "loads": loads, "start": start, "control": [gc, gc + 1], "execz": None,
             "followed": []}
        head = [k for k in range(start, gc)]
        if any(k not in inside for k in head):
            raise FixRefused(f"{where(gc)}: the guard is not reached straight from the copy's first instruction")
        c["head"] = head
        # the iteration test: the guard compares K + step (computed in the head) with N, or K with N - d
        tdef = [k for k in head if x in instrs[k].defs]
        if tdef:
            m = _SADD.match(text[tdef[-1]])
            if not m or m.group(1) == m.group(2) or len(tdef) != 1:
                raise FixRefused(f"{where(tdef[-1])}: the guard's {x} is not the counter plus a constant")
            c.update(counter=m.group(2), step=_int(m.group(3)), bound=y, temp=x, gbound=None)
            c["control"].append(tdef[-1])
        else:
            c.update(counter=x, step=None, bound=None, temp=None, gbound=y)
        # the store branch: the first branch after the FMAs; SCC untouched since the guard
        k = loads[-1] + 1
        while k in inside and instrs[k].klass != "branch":
            if "scc" in instrs[k].defs:
                raise FixRefused(f"{where(k)}: SCC is written between the guard and the branch around the stores")
            k += 1
        if k not in inside or ops[k] not in ("s_cbranch_scc1", "s_cbranch_scc0"):
            raise FixRefused(f"{where(min(k, body[-1]))}: no branch on the guard's SCC after the FMAs")
        sb = k
        c["fma"] = (loads[-1] + 1, sb)
        c["control"].append(sb)
        target = program.labels.get(instrs[sb].branch_target())
        if ops[sb] == "s_cbranch_scc1":  # stores follow; the guard's path goes to the target
            st_first, cont_at = sb + 1, target
        else:  # the stores are at the target; the guard's path falls through
            st_first, cont_at = target, sb + 1
        if st_first is None or st_first not in inside:
            raise FixRefused(f"{where(sb)}: the stores the guard skips are not in the loop")
        e = st_first
        while e in inside and ops[e] != "s_barrier":
            if not ((instrs[e].klass == "lds" and ops[e].startswith("ds_store")) or ops[e] in ("s_waitcnt",
                                                                                               "s_delay_alu")):
                raise FixRefused(f"{where(e)}: the guard skips '{ops[e]}' besides LDS stores, waits and a barrier")
            e += 1
        if e not in inside:
            raise FixRefused(f"{where(sb)}: no barrier ends the stores the guard skips")
        c["stores"] = (st_first, e)
        # the latch after the barrier (possibly through an unconditional branch)
        a = e + 1
        if a in inside and instrs[a].is_unconditional_branch():
            c["control"].append(a)
            a = program.labels.get(instrs[a].branch_target())
        latch, nxt = _latch(program, inside, ops, text, a, c, where)
        c["control"] += latch
        # where the last iteration goes after its FMAs
        while cont_at is not None and cont_at < len(instrs) and instrs[cont_at].is_unconditional_branch():
            (c["control"] if cont_at in inside else c["followed"]).append(cont_at)
            cont_at = program.labels.get(instrs[cont_at].branch_target())
        if cont_at in inside:
            # through the latch: its exit test holds whenever the guard did
            if c["gbound"] is None or cont_at != latch[0]:
                raise FixRefused(f"{where(sb)}: the guard's path after the FMAs stays in the loop")
            cont = c["exit"]
        else:
            cont = _label_at(program, cfg, cont_at)
            if cont is None:
                if cont_at is None or cont_at <= body[-1]:
                    raise FixRefused(f"{where(sb)}: the guard's path after the FMAs leads to an unlabelled block "
                                     "before the loop")
                c["new_label"] = cont_at  # labelled by the rewrite
        c["cont"] = cont
        copies.append(c)
        start = nxt
    if start != header.first:
        raise FixRefused(f"{where(guards[-1][0])}: the last copy does not lead back to the loop header")
    return copies


def _latch(program, inside, ops, text, a, c, where):
    """The latch at ``a``: ``s_add_i32 K, K, step`` [hints] ``s_cmp_ge_i32 K, N`` ``s_cbranch_scc1 EXIT``
    (the guard compares K with N - d), or ``s_mov_b32 K, T`` [``s_cbranch_execz``] (the guard compared
    T = K + step with N). Returns its instructions and the first instruction of the next copy."""
    instrs = program.instrs
    if a is None or a not in inside:
        raise FixRefused(f"{where(c['stores'][1])}: the barrier is not followed by the loop's iteration test")
    out = []
    if c["temp"] is None:
        m = _SADD.match(text[a])
        if not (m and m.group(1) == m.group(2) == c["counter"]):
            raise FixRefused(f"{where(a)}: the barrier is not followed by 's_add_i32 {c['counter']}, "
                             f"{c['counter']}, step'")
        j = a + 1
        while j in inside and ops[j] == "s_delay_alu":
            j += 1
        t = _SCMP.match(text.get(j, ""))
        if not (t and t.group(1) == c["counter"]) or j + 1 not in inside or ops[j + 1] != "s_cbranch_scc1":
            raise FixRefused(f"{where(a)}: the counter's add is not followed by 's_cmp_ge_i32 {c['counter']}, N' and "
                             "'s_cbranch_scc1'")
        exit_at = program.labels.get(instrs[j + 1].branch_target())
        if exit_at is None or exit_at in inside:
            raise FixRefused(f"{where(j + 1)}: the exit test does not leave the loop")
        c.update(step=_int(m.group(3)), bound=t.group(2), exit=instrs[j + 1].branch_target())
        out = list(range(a, j + 2))
        nxt = j + 2
    else:
        m = re.match(r"^s_mov_b32\s+(s\d+),\s*(s\d+)$", text[a])
        if not (m and m.group(1) == c["counter"] and m.group(2) == c["temp"]):
            raise FixRefused(f"{where(a)}: the barrier is not followed by 's_mov_b32 {c['counter']}, {c['temp']}'")
        out = [a]
        nxt = a + 1
        if nxt in inside and ops[nxt] == "s_cbranch_execz":
            c["execz"] = nxt
            out.append(nxt)
            nxt += 1
        c["exit"] = None
    if nxt in inside and instrs[nxt].is_unconditional_branch():
        out.append(nxt)
        nxt = program.labels.get(instrs[nxt].branch_target())
    if nxt is None or nxt not in inside:
        raise FixRefused(f"{where(out[-1])}: the latch does not lead to the next copy")
    return out, nxt


def _label_at(program, cfg, index):
    if index is None or index >= len(program.instrs):
        return None
    b = cfg.blocks[cfg.block_of[index]]
    return b.label if b.first == index else None


def _label_line(lines: list[str], lineno: int) -> int:
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
    for c in copies:
        adds = []
        for k in c["head"]:
            if k in c["control"] or instrs[k].opcode == "s_delay_alu":
                continue
            m = _VADD.match(instrs[k].text())
            if not m or m.group(1) != m.group(3):
                return None
            adds.append((m.group(1), m.group(2)))
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
        if instrs[k].opcode == "s_clause":
            continue
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
    setup = ["\t; isalint fix --peel-last: the second copy's loads from SGPR bases one tile further"]
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
    m = _VADD.match(_code(line))
    if not m:
        return line
    if copy == 1:
        return None
    r, s = m.group(1), m.group(2)
    if s.startswith("s"):
        return f"\tv_add_nc_u32 {r}, {bases['double'][s]}, {r}"
    return f"\tv_add_nc_u32 {r}, {2 * int(s)}, {r}"


def _rewrite_load(line: str, bases) -> str:
    m = _GLOAD.match(_code(line))
    if not m:
        return line
    r, lo = m.group(2), int(m.group(4))
    stride = bases["step_of"][r]
    if stride.startswith("s"):
        p = bases["pairs"][(lo, stride)]
        return f"\t{m.group(1)}{r}{m.group(3)}s[{p}:{p + 1}]{m.group(6)}"
    return f"\t{m.group(1)}{r}{m.group(3)}s[{lo}:{int(m.group(5))}]{m.group(6)} offset:{int(stride)}"


def _code(line: str) -> str:
    return line.split(";")[0].strip()


def _fold_adds(program, kernel, body, copies, pre, live, region, spans, setup, bases):
    """The offset adds left at the top of the first copy, issued instead as the Y halves of two dual
    FMAs of the last k step of the last copy (the iteration before), the two FMAs they displace paired
    with each other, and once before the loop. Sound when nothing between that k step and the first
    copy's loads reads or writes the offsets, nothing on the way out of the loop reads them, and the
    pairs are legal VOPDs (:func:`isalint.hw.vopd.find_pairing`) that add no VGPR-bank stall
    (:mod:`isalint.hw.vgpr_banks`). None when any of it fails: the adds stay where they are."""
    from ..hw.vgpr_banks import simulate
    from ..hw.vopd import find_pairing
    from .toolkit import waves_with_vgprs

    instrs = program.instrs
    h0, h1 = spans["head"][0]
    adds = [(i, _VADD.match(_code(region[i]))) for i in range(h0, h1) if _VADD.match(_code(region[i]))]
    if len(adds) != 2 or any(m.group(1) != m.group(3) for _, m in adds):
        return None
    regs = [m.group(1) for _, m in adds]
    # the offsets: read in the loop only by the adds and the global loads, dead where the loop leaves
    for i in body:
        ins = instrs[i]
        if any(r in ins.uses for r in regs) and not (ins.opcode.startswith("global_load")
                                                     or _VADD.match(ins.text())):
            return None
    for c in copies:
        if any(r in live.live_in(c["cont_at"]) for r in regs):
            return None
    f0, f1 = spans["fma"][-1]
    block = region[f0:f1]
    last_wait = max((k for k, ln in enumerate(block) if _code(ln).startswith("s_waitcnt lgkmcnt")), default=None)
    if last_wait is None:
        return None
    cands = [k for k in range(last_wait + 1, len(block))
             if re.match(r"^v_dual_fmac_f32 v\d+, v\d+, v\d+ :: v_dual_fmac_f32 v\d+, v\d+, v\d+$", _code(block[k]))]
    tail_ok = re.compile(r"^(v_dual_fmac_f32|s_waitcnt|s_barrier)")
    if len(cands) < 2 or any(_code(block[k]) and not tail_ok.match(_code(block[k]))
                             for k in range(last_wait + 1, len(block))):
        return None

    def halves(k):
        x, y = _code(block[k]).split(" :: ")
        return [h.replace("v_dual_fmac_f32", "v_fmac_f32_e32") for h in (x, y)]

    def operands(h):
        return re.findall(r"v\d+", h)

    def dsts(k):
        return [operands(h)[0] for h in halves(k)]

    # the destinations must differ in parity and the adds' registers avoid the banks their FMA reads:
    # each offset may move to a free VGPR (any bank) that keeps the occupancy
    from .toolkit import free_registers

    used = highest_register(program, body[0]) + 1
    spare = {}
    for v in free_registers(program, list(body) + [pre], "v", limit=256):
        if v % 4 not in spare and not any(re.search(rf"\bv{v}\b", ln) for ln in region) \
                and waves_with_vgprs(kernel, max(used, v + 1)) == waves_with_vgprs(kernel, used):
            spare[v % 4] = f"v{v}"
    base = [_code(block[k]) for k in cands]
    base_stalls = simulate(base).stall_cycles
    best = None
    for r0 in [regs[0], *spare.values()]:
        for r1 in [regs[1], *spare.values()]:
            if r0 == r1 or int(r0[1:]) % 2 == int(r1[1:]) % 2:
                continue
            renames = (r0 != regs[0]) + (r1 != regs[1])
            texts = [f"v_add_nc_u32_e32 {r}, {m.group(2)}, {r}" for (_, m), r in zip(adds, (r0, r1))]
            for a in cands:
                for b in cands:
                    if a >= b:
                        continue
                    ha, hb = halves(a), halves(b)
                    for ka in (0, 1):
                        move_a = ha[1 - ka]
                        # the moved half goes past the VOPDs between a and b: none may touch its registers
                        dst, srcs = operands(move_a)[0], set(operands(move_a)[1:])
                        if any(dst in operands(_code(block[k])) or srcs & set(dsts(k)) for k in cands if a < k < b):
                            continue
                        for kb in (0, 1):
                            keep_a, keep_b, move_b = ha[ka], hb[kb], hb[1 - kb]
                            for order in ((0, 1), (1, 0)):
                                p1 = find_pairing(keep_a, texts[order[0]])
                                p2 = find_pairing(keep_b, texts[order[1]])
                                p3 = find_pairing(move_a, move_b)
                                if not (p1.legal and p2.legal and p3.legal):
                                    continue
                                new = {k: _code(block[k]) for k in cands}
                                new[a] = p1.text
                                new[b] = p2.text + "\n" + p3.text
                                seq = [ln for k in cands for ln in new[k].split("\n")]
                                cost = (simulate(seq).stall_cycles - base_stalls, renames)
                                if best is None or cost < best[0]:
                                    best = (cost, a, b, p1.text, p2.text, p3.text, (r0, r1))
                                if best[0] == (0, 0):
                                    break
    if best is None or best[0][0] > 0:
        return None
    _, a, b, t1, t2, t3, (r0, r1) = best
    renamed = [(o, n) for o, n in zip(regs, (r0, r1)) if o != n]
    regs = [r0, r1]
    rename = renamed or None
    ind = "\t"
    new_block = list(block)
    new_block[a] = f"{ind}{t1}"
    new_block[b] = f"{ind}{t2}\n{ind}{t3}"
    new_block = [x for ln in new_block for x in ln.split("\n")]
    out = region[:f0] + new_block + region[f1:]
    # the adds leave the first copy's head
    drop = {h0 + (i - h0) for i, _ in adds}
    out = [ln for k, ln in enumerate(out) if k not in drop]
    for old, new in rename or ():
        out = [re.sub(rf"\b{old}\b", new, ln) if _code(ln).startswith("global_load") else ln for ln in out]
    # once before the loop: the adds as the first copy made them, after the setup's own
    new_setup = list(setup)
    for (i, m), r in zip(adds, regs):
        new_setup.append(f"{ind}v_add_nc_u32 {r}, {m.group(2)}, {m.group(1)}")
    what = (f"the {len(adds)} offset adds of the first copy issued as the Y halves of 2 dual FMAs of the "
            "iteration before" + (" (" + ", ".join(f"{o} -> {n}" for o, n in rename) +
                                  " for the parity and banks the pairs need)" if rename else ""))
    return {"region": out, "setup": new_setup, "what": what,
            "vgprs": max([int(n[1:]) + 1 for _, n in rename or ()], default=0)}
