"""``isalint fix --wide-copy``: the loop's global-to-LDS copy in 16-byte pieces.

After ``fix --batch-gmem`` kernel 5's outer loop copies the next tile with 16 ``global_load_b32``
(one word per work-item per row of the tile) and 16 LDS stores (8 as ``ds_store_2addr`` pairs in the
clang-19 build). Each lane can instead load 4 consecutive words of one row with ``global_load_b128``
and store them with one ``ds_store_b128`` (B, whose LDS rows keep a row's words together) or two
``ds_store_2addr_b32`` (A, which LDS holds transposed): 4 loads and 6 stores where there were 32
memory instructions, per 8 k steps. Which lane copies which words changes; what lands where in LDS
does not.

Steps (each proves what it needs or refuses with the line and the reason; the input is never
touched):

1. :mod:`.copies` finds the copies: saddr ``global_load_b32`` whose word only a DS store reads.
2. :mod:`.mapping` proves the new tiling: the old offsets (affine evaluator) fall into runs of 4
   consecutive words, the old LDS addresses (lane evaluator) differ by exact amounts, and the
   new per-lane offsets and addresses differ from the old registers by functions of the work-item id
   that VALU code can compute (:mod:`.lanefn`).
3. :mod:`.emit` finds registers (free quads over the loop for the loaded words, in-place updates of
   the offset and address registers, which nothing else reads) and writes the setup before the loop,
   the new loads and the new stores.
4. The register counts are rewritten; the output is re-read and checked: the new stores' LDS
   addresses (lane evaluator on the output) and the new offsets (affine evaluator) are what the plan
   says, and no wait-counter hazard is new. Every ``vmcnt`` wait in the loop waits for all loads, and
   the stores are followed by ``lgkmcnt(0)`` before anything reads LDS, so no wait changes meaning.
"""
from __future__ import annotations

from .. import FixRefused, FixResult
from ..toolkit import check_no_new_wait_hazards, highest_register, refresh_counts, reparse
from .copies import find_copies, where
from .emit import allocate, render, setup_point
from .mapping import plan_copy

__all__ = ["apply", "VALIDATE_SIZES"]
# the new offsets are multiples of N computed at run time: validated at two sizes
VALIDATE_SIZES = (256, 384)


def apply(analysis, options: dict | None = None) -> FixResult:
    options = options or {}
    program = analysis.program
    loop, copies = _select(analysis, options.get("loop"))
    kernel = program.kernel_of(copies[0].loads[0])
    at, _ = setup_point(analysis, loop)
    _check_waits(analysis, loop, copies)
    plans = [plan_copy(analysis, loop, kernel, c, at) for c in copies]
    regs = allocate(analysis, loop, plans, at)
    label = analysis.cfg.blocks[loop.header].label or f"line {program.instrs[loop.header].lineno}"
    n_loads = sum(len(p.copy.loads) for p in plans)
    n_stores = sum(len(p.copy.stores) for p in plans)
    new_loads = sum(p.loads for p in plans)
    new_stores = sum(len(p.stores) for p in plans)
    note = (f"isalint fix --wide-copy: the copy of loop {label} in 16-byte pieces ({n_loads} -> {new_loads} "
            f"global loads, {n_stores} -> {new_stores} LDS stores)")
    text = render(analysis, loop, plans, regs, note)
    vgprs = max([highest_register(program, at) + 1] + [d + 4 for d in regs.dst.values()]
                + [w + 1 for w in regs.windows.values()] + [t + 1 for t in regs.temps])
    sgprs = max(highest_register(program, at, "s") + 1, regs.wave + 1)
    text = refresh_counts(text, program.path, vgprs=vgprs, sgprs=sgprs)
    new = reparse(text, program.path)
    check_no_new_wait_hazards(program, new.program)
    _verify(new, plans, regs)
    kinds = {}
    for p in plans:
        for op in p.stores:
            name = {"b128": "ds_store_b128", "2addr": "ds_store_2addr_b32", "b32": "ds_store_b32"}[op.kind]
            kinds[name] = kinds.get(name, 0) + 1
    detail = ", ".join(f"{n} {k}" for k, n in kinds.items())
    summary = (f"wide-copy: loop {label}: {n_loads} global_load_b32 -> {new_loads} global_load_b128, "
               f"{n_stores} LDS stores -> {new_stores} ({detail})")
    return FixResult(text, summary)


def _select(analysis, label: str | None):
    cfg = analysis.cfg
    if label:
        loop = cfg.find_loop(label)
        if loop is None:
            raise FixRefused(f"{analysis.program.path}: no loop with header label {label}")
        candidates = [loop]
    else:
        candidates = sorted(cfg.loops, key=lambda lp: -len(lp.blocks))
    for loop in candidates:
        copies = find_copies(analysis, loop)
        if copies:
            return loop, copies
    raise FixRefused(f"{analysis.program.path}: no loop copies global memory to LDS with saddr global_load_b32 "
                     "(run fix --batch-gmem first)")


def _check_waits(analysis, loop, copies) -> None:
    """The rewrite changes how many loads and stores are in flight: every ``vmcnt`` wait of the loop
    must wait for all of them, and after each store ``lgkmcnt(0)`` must come before another wait."""
    from ...model.waitcnt import wait_thresholds

    program, cfg = analysis.program, analysis.cfg
    stores = {s for c in copies for s in c.stores}
    for b in sorted(loop.blocks):
        pending = False
        for i in cfg.blocks[b].indices():
            ins = program.instrs[i]
            if i in stores:
                pending = True
            counts = wait_thresholds(ins) if ins.klass == "waitcnt" else None
            if counts is None:
                continue
            if counts.get("vmcnt", 0) not in (0, None):
                raise FixRefused(f"{where(program, i)}: '{ins.text()}' waits for some of the loop's global loads "
                                 "only; their number changes")
            if pending and counts.get("lgkmcnt") not in (0, None):
                raise FixRefused(f"{where(program, i)}: '{ins.text()}' lets some LDS stores of the copy run on; "
                                 "their number changes")
            if counts.get("lgkmcnt") == 0:
                pending = False


def _verify(new, plans, regs) -> None:
    """The output computes the plan: the stores' addresses per work-item, the loads' offsets."""
    from ...model.affine.evaluator import AffineEvaluator
    from ...model.lanes.evaluator import LaneEvaluator

    program = new.program
    lanes = LaneEvaluator(program)
    loads = [i for i, ins in enumerate(program.instrs) if ins.opcode == "global_load_b128"]
    stores = [i for i, ins in enumerate(program.instrs) if ins.opcode.startswith("ds_store")]
    for k, p in enumerate(plans):
        where_of = {}  # data VGPR -> (q, e)
        for (kk, q), d in regs.dst.items():
            if kk == k:
                for e in range(4):
                    where_of[f"v{d + e}"] = (q, e)
        seen = set()
        for i in stores:
            ins = program.instrs[i]
            data = [s.regs for s in ins.slots[0] if s.role == "use" and s.name != "addr"]
            flat = [r for regs_ in data for r in regs_]
            if not flat or flat[0] not in where_of:
                continue
            acc = lanes.lds_access(ins)
            if not hasattr(acc, "addresses") or acc.terms != p.lds_terms:
                raise FixRefused(f"internal error: the LDS address of line {ins.lineno} is not what the plan says")
            if len(acc.addresses) == 2:
                words = list(zip(flat, acc.addresses))
            else:
                words = [(r, [a + 4 * m for a in acc.addresses[0]]) for m, r in enumerate(flat)]
            for reg, addrs in words:
                q, e = where_of[reg]
                for t, a in enumerate(addrs):
                    if a != p.expected_lds[(t, q, e)]:
                        raise FixRefused(f"internal error: line {ins.lineno} stores work-item {t}'s word {e} at "
                                         f"{a}, not {p.expected_lds[(t, q, e)]}")
                seen.add((q, e))
        if len(seen) != 4 * p.loads:
            raise FixRefused("internal error: not every loaded word is stored")
    if loads:
        loop = program.cfg().loops
        owner = next((lp for lp in loop if loads[0] in lp.indices(program.cfg())), None)
        ev = AffineEvaluator(program, program.kernel_of(loads[0]), owner)
        for k, p in enumerate(plans):
            mine = [i for i in loads if p.copy.offset_reg in program.instrs[i].uses]
            w = ev.word(p.copy.offset_reg, mine[0])
            lane_atoms = {a for a in w.poly.atoms() if ev.atoms[a].kind == "lane"} if w.known else set()
            for t, want in enumerate(p.offset_polys):
                got = w.poly.substitute({a: ev.atoms[a].values[t] for a in lane_atoms}) if w.known else None
                if got is None or not got.congruent(want, 32):
                    raise FixRefused(f"internal error: the new offset of work-item {t} is not the one planned")
