"""WAIT001: register used before the s_waitcnt that guarantees its load completed.

## What it finds
A register that a memory op still in flight will write (a VMEM, LDS or scalar
load, a returning atomic) is read, or overwritten, before an `s_waitcnt`
guarantees that op completed; and a register an export still reads is
overwritten before `expcnt` says it was read. The check follows every path of
the control-flow graph, loop back edges included, with RDNA3's counters:

- `vmcnt`: vector-memory loads (global, buffer, scratch, FLAT), completing in
  issue order (image sample and BVH ops are streams of their own);
- `vscnt`: stores (they hold no register on gfx11);
- `lgkmcnt`: LDS ops in issue order, scalar loads and messages in any order, so
  a register loaded by `s_load_*` is only covered by `lgkmcnt(0)`;
- `expcnt`: exports and GDS.

What is *not* a hazard:

- A `d16`/`d16_hi` load (`ds_load_u16_d16_hi`, `ds_load_u8_d16`,
  `global_load_d16_hi_b16`, `buffer_load_d16_*`, ...) keeps the other half of its
  VGPR and reads it when its data returns. An earlier load of the same in-order
  stream into that VGPR has landed by then, so `ds_load_u16 v10` followed by
  `ds_load_u16_d16_hi v10` needs no wait between them. A load of another stream
  (a global load, then an LDS d16 load into the same VGPR) still does.
- A FLAT op counts on `vmcnt` and on `lgkmcnt`, in issue order on both on gfx10+
  (one more op of the LDS stream on `lgkmcnt`). A FLAT load is covered by
  `vmcnt` alone when its code provably touches no LDS: no LDS instruction
  (`ds_*`, LDS parameter loads), no read of the shared aperture
  (`src_shared_base`/`src_shared_limit`, `s_getreg` of `SH_MEM_BASES`: without it
  no generic pointer into LDS can be formed), and no kernel descriptor or
  metadata entry asking for LDS (`group_segment_fixed_size` > 0). The proof is
  made for the whole file, or for the one kernel holding the load when that
  kernel makes no call and holds no device function (a callee, or another
  kernel calling a function laid out there, could hand over a pointer into LDS).
  Otherwise a generic address may point into LDS and `lgkmcnt` must retire it too.
- `s_swappc_b64`/`s_call_b64`: the callee waits for every counter but `vscnt` on
  entry and before it returns (AMDGPU calling convention), so after the call
  nothing issued before it is in flight (`v0` after the call is the callee's
  result). The call target the call reads is checked like any other read.
- `s_barrier` is not a release fence: a global or buffer load or store still in
  flight at a barrier is correct, and it is how prefetching kernels overlap the
  next tile's loads with this tile's math. It can only go wrong if another wave
  stores to (or loads) the same address after the barrier. When the kernel both
  loads and stores memory, it gets one *info* finding naming the instructions
  whose buffers would have to alias, its barriers with ops in flight listed as
  sites (each with the op in flight and the wait it would need).

An `s_barrier` still counts as a use of every LDS op the wave has in flight: the
other waves of the workgroup read what this wave wrote once they pass the
barrier (LLVM's memory model waits `lgkmcnt(0)` before the barrier of
`__syncthreads`).

The finding sits on the first unsafe use and says which wait it needs there,
e.g. `needs s_waitcnt lgkmcnt(3)`: the loosest count that retires the load (the
number of later ops of the same in-order stream in flight at that point on the
worst path). Waits stricter than any register needs are WAIT002.

## Severity
Error, wherever it is: a hazard is a wrong result, not a cost. The barrier note
about possibly aliasing buffers is info: it is wrong only if the buffers alias,
which the code cannot show.

## Why it matters
The hardware does not interlock on loads: a VALU instruction that reads a VGPR
whose `ds_load`/`global_load` has not returned reads the old value, silently. A
hand edit that moves a wait, reorders loads, or adds one more load in front of an
`s_waitcnt lgkmcnt(N)` changes which loads N covers.

## Example
```asm
ds_load_b128 v[184:187], v183
ds_load_b128 v[192:195], v204
s_waitcnt lgkmcnt(1)                 ; retires only the first load
v_fmac_f32_e32 v124, v184, v192      ; WAIT001: v192 needs s_waitcnt lgkmcnt(0)
global_load_b32 v20, v[2:3], off
v_add_f32_e32 v21, v20, v21          ; WAIT001: v20 needs s_waitcnt vmcnt(0)
```
Good:
```asm
ds_load_b128 v[184:187], v183
ds_load_b128 v[192:195], v204
s_waitcnt lgkmcnt(0)
v_fmac_f32_e32 v124, v184, v192
ds_load_u16 v10, v36                 ; two f16 packed into v10: LDS returns in order,
ds_load_u16_d16_hi v10, v36 offset:64   ; no wait between the two loads
global_load_b128 v[4:7], v[2:3], off ; prefetch across the barrier: fine
s_waitcnt lgkmcnt(0)                 ; the LDS this wave wrote is done
s_barrier
```

## Fix safety
No automatic fix. Insert the wait the message names (or a stricter one) right
before the instruction; a stricter wait is always safe, only slower. For the
barrier note: add `s_waitcnt vmcnt(0)` (loads) or `s_waitcnt_vscnt null, 0`
(stores) before the barrier only if the buffers may really alias.

## Reference
RDNA3 ISA guide, "Data Dependency Resolution" (Program Flow Control chapter) and
the `S_WAITCNT`/`S_WAITCNT_VSCNT` entries of the SOPP/SOPK instruction lists;
the AMDGPU calling convention and memory model of the LLVM AMDGPU backend
(callee waits on entry and return; a workgroup release fence, not a barrier,
waits for vector memory; FLAT counts in order on gfx10+).
"""
from __future__ import annotations

from isalint.diagnostics import Site, at_instr
from isalint.model.counters import IN_ORDER, STORE_SYNC, VMEM_SYNC, analyze

CODE = "WAIT001"
NAME = "waitcnt-hazard"
SEVERITY = "error"
SUMMARY = "Register used before the s_waitcnt that guarantees its memory op completed"
FIXABLE = None

_ORDER = ("vmcnt", "expcnt", "lgkmcnt", "vscnt")


def _wait_text(need: dict[str, int]) -> str:
    parts = [f"{c}({need[c]})" for c in _ORDER if c in need and c != "vscnt"]
    text = "s_waitcnt " + " ".join(parts) if parts else ""
    if "vscnt" in need:
        text = (text + " and " if text else "") + f"s_waitcnt_vscnt null, {need['vscnt']}"
    return text


def _stmt_of(instr, reg: str) -> int:
    for n, slots in enumerate(instr.slots):
        if any(reg in s.regs for s in slots):
            return n
    return 0


def check(analysis):
    program = analysis.program
    if not program.instrs:
        return
    result = analyze(program)
    cache = analysis.__dict__.setdefault("_derived", {})
    cache["counters"] = result
    by_index: dict[int, list] = {}
    for h in result.hazards:
        by_index.setdefault(h.index, []).append(h)
    instrs = program.instrs
    for index in sorted(by_index):
        hz = by_index[index]
        need: dict[str, int] = {}
        for h in hz:
            need[h.counter] = min(need.get(h.counter, 1 << 30), h.k)
        worst = min(hz, key=lambda h: (h.reg.startswith("@"), h.k, h.origin > h.index, h.origin))
        origin = instrs[worst.origin]
        verb = "read" if worst.kind == "read" else "overwritten"
        what = "export" if worst.cls == "exp" else origin.opcode
        where = f"line {origin.lineno}"
        if worst.origin >= index:
            where += " (issued on an earlier iteration of the loop)"
        regs = sorted({h.reg for h in hz if not h.reg.startswith("@")}, key=_reg_key)
        if worst.reg.startswith("@"):
            space = {"@lds": "LDS", "@vmem": "memory", "@vstore": "memory"}[worst.reg]
            msg = (f"s_barrier while the {what} at {where} may still be in flight: other waves of the "
                   f"workgroup may see {space} before it completes; needs {_wait_text(need)} before the barrier")
        else:
            names = _reg_list(regs)
            msg = (f"{names} {'is' if len(regs) == 1 else 'are'} {verb} while the {what} at {where} "
                   f"may still be in flight: needs {_wait_text(need)} before this instruction")
        if worst.cls not in IN_ORDER:
            msg += " (scalar loads and messages return out of order: only a count of 0 covers them)"
        diag = at_instr(program, instrs[index], CODE, SEVERITY, msg, stmt=_stmt_of(instrs[index], worst.reg))
        span = _operand_span(instrs[index], worst.reg)
        if span is not None:
            diag.column, diag.end_column = span
        yield diag
    yield from _barrier_notes(program, result)


_GLOBAL_STORES = ("vmem_store", "vmem_atomic")
_GLOBAL_LOADS = ("vmem_load", "vmem_atomic")


def _barrier_notes(program, result):
    """Info: global/buffer ops in flight at s_barrier in a kernel that both loads and stores memory,
    one finding per kernel with its barriers as sites.

    A bare barrier is no release fence, so this is only wrong when another wave stores (or loads)
    the same address after the barrier: the buffers would have to alias."""
    instrs = program.instrs
    spans = [(k.first, k.last, k) for k in program.kernels] or [(0, len(instrs), None)]
    for first_i, last_i, kernel in spans:
        own = instrs[first_i:last_i]
        stores = [ins for ins in own if ins.klass in _GLOBAL_STORES and not ins.opaque]
        loads = [ins for ins in own if ins.klass in _GLOBAL_LOADS and not ins.opaque and
                 (ins.klass == "vmem_load" or ins.defs)]
        if not stores or not loads:
            continue
        barriers = []  # (barrier, ops in flight, whether a load is among them)
        for i in range(first_i, last_i):
            if instrs[i].klass != "barrier":
                continue
            st = result.state_before(i)
            flying = sorted({p.origin for (r, _c, _cls), p in st.pending.items()
                             if r in (VMEM_SYNC, STORE_SYNC) and instrs[p.origin].klass in _GLOBAL_STORES + _GLOBAL_LOADS})
            if flying:
                load = any(instrs[o].klass == "vmem_load" or instrs[o].defs for o in flying)
                barriers.append((instrs[i], [instrs[o] for o in flying], load))
        if barriers:
            yield _barrier_note(program, kernel, barriers, stores, loads)


def _text(ins) -> str:
    return ins.line.text.split(';')[0].strip()


def _named(others) -> str:
    named = "; ".join(f"line {o.lineno}: {_text(o)}" for o in others[:3])
    return named + (f" and {len(others) - 3} more" if len(others) > 3 else "")


def _barrier_note(program, kernel, barriers, stores, loads):
    any_load = any(load for _b, _f, load in barriers)
    any_store_only = any(not load for _b, _f, load in barriers)
    alias = []
    if any_load:
        alias.append(f"stores memory ({_named(stores)})")
    if any_store_only:
        alias.append(f"loads memory ({_named(loads)})")
    waits = " or ".join(w for w, on in (("s_waitcnt vmcnt(0)", any_load), ("s_waitcnt_vscnt null, 0", any_store_only))
                        if on)
    who = ("stores to" if not any_store_only else "loads" if not any_load else "stores to or loads")
    fence = (f"a barrier is no release fence, so this is only wrong if another wave of the workgroup {who} "
             f"that address after the barrier; this kernel also {' and '.join(alias)}: if those buffers may "
             f"alias, put {waits} before the barrier")

    def flight(fly, _load):
        more = f" (and {len(fly) - 1} more)" if len(fly) > 1 else ""
        return f"s_barrier while the {fly[0].opcode} at line {fly[0].lineno} ({_text(fly[0])}){more} may still be in flight"

    first_b, first_fly, first_load = barriers[0]
    if len(barriers) == 1:
        return at_instr(program, first_b, CODE, "info", f"{flight(first_fly, first_load)}: {fence}")
    where = f" of kernel {kernel.name}" if kernel is not None and len(program.kernels) > 1 else ""
    diag = at_instr(program, first_b, CODE, "info",
                    f"{len(barriers)} s_barriers{where} have global or buffer memory ops in flight: {fence}s")
    sites = []
    for b, fly, load in barriers:
        col, end = (b.stmts[0].col, b.stmts[0].end_col) if b.stmts else (1, 2)
        wait = "s_waitcnt vmcnt(0)" if load else "s_waitcnt_vscnt null, 0"
        sites.append(Site(b.lineno, col, end, f"{flight(fly, load)}; if the buffers may alias: {wait} before it"))
    diag.sites = sites
    return diag


def _operand_span(instr, reg: str) -> tuple[int, int] | None:
    """Columns of the written operand that holds ``reg`` (the register used too early)."""
    for slots in instr.slots:
        for slot in slots:
            if reg in slot.regs and slot.operand.col:
                return slot.operand.col, slot.operand.col + len(slot.operand.text)
    return None


def _reg_key(r: str):
    head = r.rstrip("0123456789")
    tail = r[len(head):]
    return (head, int(tail) if tail else -1)


def _reg_list(regs: list[str]) -> str:
    if len(regs) <= 4:
        return ", ".join(regs)
    return ", ".join(regs[:4]) + f" and {len(regs) - 4} more"
