"""Compile memory statements: SMEM, DS (LDS), GLOBAL/FLAT and SCRATCH loads and stores.

Addresses (RDNA3 ISA guide, chapters 8 "Scalar memory", 10 "Flat/global/scratch", 11 "LDS"):

* ``s_load_bN sdst, sbase, offset``: sbase (64-bit) + offset (+ soffset), dword aligned.
* ``global_*`` with ``off``: the 64-bit VGPR pair is the address; with an SGPR pair base the VGPR
  is a 32-bit unsigned offset added to it; plus the signed 13-bit ``offset:``.
* ``scratch_*``: per-lane private memory at (vaddr or 0) + (saddr or 0) + offset.
* ``ds_*``: LDS byte address VGPR + ``offset:`` (16 bits); ``2addr`` forms use two 8-bit offsets
  scaled by the element size (and by 64 for ``stride64``).
* ``buffer_*`` (chapter 9 "Vector memory buffer instructions"): the 128-bit resource V# in four
  SGPRs gives base (bits 47:0), stride (61:48), num_records (95:64), ADD_TID_ENABLE (119) and
  OOB_SELECT (125:124). Address = base + soffset + offset + stride * index, where offset is the
  ``offen`` VGPR plus ``offset:`` and index the ``idxen`` VGPR (plus the lane with
  ADD_TID_ENABLE). Range checking by OOB_SELECT: 0 index >= num_records or offset >= stride,
  1 index >= num_records, 2 num_records == 0, 3 (raw) offset + soffset + size > num_records.
  An out-of-range load returns 0 and an out-of-range store writes nothing.
"""
from __future__ import annotations

import numpy as np

from .errors import EmulationError, Unimplemented
from .machine import HEAP_BASE, I64, U8, U32, U64, gather, scatter
from .operands import scalar_source, sgpr_index

_WIDTH = {"b8": 1, "u8": 1, "i8": 1, "b16": 2, "u16": 2, "i16": 2, "b32": 4, "b64": 8, "b96": 12, "b128": 16}
_SMEM_WIDTH = {"b32": 1, "b64": 2, "b128": 4, "b256": 8, "b512": 16}
_MEM_MODS = {"offset", "glc", "slc", "dlc", "nv", "sc0", "sc1", "nt"}
_BUF_MODS = _MEM_MODS | {"offen", "idxen"}


class MemCtx:
    def __init__(self, machine, nvgpr: int, path: str):
        self.machine = machine
        self.nvgpr = nvgpr
        self.path = path


def _suffix(name: str) -> str:
    return name.rsplit("_", 1)[-1]


def _extend(raw: np.ndarray, kind: str) -> np.ndarray:
    """Sub-dword load results: zero- or sign-extend the low bits (raw is uint32 [..., 1])."""
    if kind == "i8":
        return ((raw << U32(24)).view(np.int32) >> 24).view(U32)
    if kind == "i16":
        return ((raw << U32(16)).view(np.int32) >> 16).view(U32)
    if kind == "u8":
        return raw & U32(0xFF)
    if kind == "u16":
        return raw & U32(0xFFFF)
    if kind.startswith("d16"):  # a 16-bit value for one half of the destination
        base = kind.rsplit("_", 1)[-1]
        if base == "i8":
            return ((raw << U32(24)).view(np.int32) >> 24).view(U32) & U32(0xFFFF)
        return raw & (U32(0xFF) if base == "u8" else U32(0xFFFF))
    return raw


def _check_mods(stmt, allowed):
    for m in stmt.modifiers:
        if m.name not in allowed:
            raise Unimplemented(f"modifier '{m.text}' on {stmt.mnemonic}")


def _vreg(op, n, nvgpr, what):
    if op.kind != "vgpr":
        raise Unimplemented(f"{what} '{op.text}' must be a VGPR")
    if op.first + n > nvgpr:
        raise EmulationError(f"v{op.first + n - 1} is beyond the kernel's {nvgpr} VGPRs (.amdhsa_next_free_vgpr)")
    return op.first


def _apply_vload(dst, ndw, data, active, kind):
    """Pending-completion callback: write ``data`` [W,32,ndw] into v[dst..] for active lanes."""
    def apply(g, re, rg):
        V = g.V
        d = data if isinstance(re, slice) else data[re]
        a = active if isinstance(re, slice) else active[re]
        if kind.startswith("d16"):  # D16: one 16-bit half written, the other kept as it is now
            cur = V[dst] if isinstance(rg, slice) else V[dst][rg]
            if kind.startswith("d16hi"):
                d = ((cur & U32(0xFFFF)) | (d[..., 0] << U32(16)))[..., None]
            else:
                d = ((cur & U32(0xFFFF_0000)) | d[..., 0])[..., None]
            full = bool(a.all())
        else:
            full = a.all()
        for k in range(ndw):
            if isinstance(rg, slice):
                if full:
                    V[dst + k] = d[..., k]
                else:
                    np.copyto(V[dst + k], d[..., k], where=a)
            else:
                cur = V[dst + k][rg]
                V[dst + k][rg] = np.where(a, d[..., k], cur)
    return apply


def _apply_store(arr_name, idx, nbytes, data, active, waves):
    """Pending-completion callback of a store: write bytes for the active lanes."""
    def apply(g, re, rg, _m=None):
        mem = apply.mem
        arr8 = getattr(mem, arr_name)
        arr32 = getattr(mem, arr_name + "32")
        i = idx if isinstance(re, slice) else idx[re]
        d = data if isinstance(re, slice) else data[re]
        a = active if isinstance(re, slice) else active[re]
        for part in range(i.shape[-1]):
            ii = i[..., part][a]
            dd = d[..., part, :][a]
            scatter(arr8, arr32, ii, nbytes, dd)
            if arr_name == "heap" and mem.writer is not None:
                w = waves if isinstance(re, slice) else waves[re]
                who = (w[:, None] * 32 + np.arange(32))[a]
                first = ii >> 2
                last = (ii + nbytes - 1) >> 2
                for k in range(int((last - first).max(initial=0)) + 1):
                    sel = first + k <= last
                    mem.writer[(first + k)[sel]] = who[sel]
    return apply


def _store_keys(idx, nbytes, active):
    """[W, 32, parts*nbytes] byte indices (-1 for inactive lanes) and for store forwarding."""
    k = idx[..., :, None] + np.arange(nbytes)
    k = k.reshape(idx.shape[0], idx.shape[1], -1)
    return np.where(active[..., None], k, -1)


def _load(ctx, g, instr, space, arr_name, idx, nbytes, active, dst, ndw_out, kind, queue, fwd_queue, zero=None):
    """Read memory now (with own-wave store forwarding) and queue the register write; lanes in
    ``zero`` (out-of-range buffer lanes) receive 0."""
    mem = ctx.machine.mem
    arr8 = getattr(mem, arr_name)
    arr32 = getattr(mem, arr_name + "32")
    safe = np.where(active[..., None], idx, 0) if not active.all() else idx
    parts = []
    for p in range(safe.shape[-1]):
        parts.append(gather(arr8, arr32, safe[..., p], nbytes))
    data = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=-1)
    if any(e.store and e.space == space for e in g.queues[fwd_queue]):
        keys = _store_keys(safe, nbytes, active)
        raw = np.ascontiguousarray(data).view(U8)
        if nbytes < 4:  # sub-dword: bytes beyond the access are padding
            raw = raw[..., :nbytes]
        raw = ctx.machine.forward(g, fwd_queue, space, np.where(keys >= 0, keys, -1), raw.reshape(keys.shape))
        if nbytes < 4:
            pad = np.zeros(raw.shape[:-1] + (4 - nbytes,), dtype=U8)
            raw = np.concatenate([raw, pad], axis=-1)
        data = np.ascontiguousarray(raw).view(U32).reshape(data.shape)
    if kind in ("u8", "i8", "u16", "i16") or kind.startswith("d16"):
        data = _extend(data, kind)
    data = np.array(data, copy=True)
    if zero is not None:
        data[zero] = 0
        active = active | zero
    ctx.machine.issue(g, queue, _apply_vload(dst, ndw_out, data, active, kind), instr)


def _store(ctx, g, instr, space, arr_name, idx, nbytes, data, active, queue):
    if space == "scratch":
        # Private memory is seen only by its own wave, whose later accesses are ordered after this
        # one: writing now is exact.  The entry still counts on vscnt.
        ap = _apply_store(arr_name, idx, nbytes, data, active, g.waves)
        ap.mem = ctx.machine.mem
        ap(g, slice(None), slice(None))
        ctx.machine.issue(g, queue, lambda *a: None, instr)
        return
    keys = _store_keys(idx, nbytes, active)
    vals = np.ascontiguousarray(data).view(U8)[..., :nbytes].reshape(keys.shape)
    ap = _apply_store(arr_name, idx.copy(), nbytes, np.array(data, copy=True), active.copy(), g.waves.copy())
    ap.mem = ctx.machine.mem
    ctx.machine.issue(g, queue, ap, instr, store=True, space=space, keys=keys, vals=vals)


def _note(ctx, instr, msg):
    key = (ctx.path, instr.lineno)
    if key not in ctx.machine.notes:
        ctx.machine.notes[key] = msg


def _fault(ctx, instr, msg):
    raise EmulationError(msg, ctx.path, instr.lineno, instr.text())


# --------------------------------------------------------------------------------- SMEM

def smem(instr, stmt, ctx: MemCtx):
    name = stmt.mnemonic
    if not name.startswith("s_load_"):
        raise Unimplemented(f"opcode '{name}' is not implemented by the emulator")
    ndw = _SMEM_WIDTH.get(_suffix(name))
    if ndw is None:
        raise Unimplemented(f"opcode '{name}' is not implemented by the emulator")
    _check_mods(stmt, _MEM_MODS)
    ops = stmt.operands
    dst = sgpr_index(ops[0])
    base = scalar_source(ops[1], "u64")
    imm = 0
    soff = None
    for op in ops[2:]:
        if op.kind == "int":
            imm += int(op.value)
        elif op.kind == "special" and op.file == "null":
            pass
        else:
            soff = scalar_source(op, "u32")
    m = stmt.modifier("offset")
    if m is not None:
        imm += m.int_value() or 0
    mem = ctx.machine.mem

    def run(g):
        addr = np.broadcast_to(base(g), (g.waves.size,)).astype(U64) + U64(imm & 0xFFFF_FFFF_FFFF_FFFF)
        if soff is not None:
            addr = addr + soff(g).astype(U64)
        off = (addr.astype(I64) - HEAP_BASE) & ~3
        err, fatal = mem.check_global(off, 4 * ndw)
        if err:
            if fatal:
                _fault(ctx, instr, f"scalar load from {err}")
            _note(ctx, instr, f"scalar load reads garbage: {err}")
        data = mem.heap32[(off >> 2)[:, None] + np.arange(ndw)].copy()  # [W, ndw]

        def apply(g2, re, rg):
            d = data if isinstance(re, slice) else data[re]
            for k in range(ndw):
                if isinstance(rg, slice):
                    g2.S[dst + k] = d[:, k]
                else:
                    g2.S[dst + k][rg] = d[:, k]
        ctx.machine.issue(g, "lgkm", apply, instr)
    return run


# --------------------------------------------------------------------------------- DS

def ds(instr, stmt, ctx: MemCtx):
    name = stmt.mnemonic
    _check_mods(stmt, {"offset", "offset0", "offset1", "gds"})
    if stmt.modifier("gds") is not None:
        raise Unimplemented(f"GDS access {name}")
    parts = name.split("_")
    if len(parts) < 3 or parts[1] not in ("load", "store", "read", "write"):
        raise Unimplemented(f"opcode '{name}' is not implemented by the emulator")
    is_load = parts[1] in ("load", "read")
    two = "2addr" in parts
    stride = 64 if "stride64" in parts else 1
    if "d16" in parts or "addtid" in parts:
        raise Unimplemented(f"opcode '{name}' is not implemented by the emulator")
    kind = parts[-1]
    nbytes = _WIDTH.get(kind)
    if nbytes is None:
        raise Unimplemented(f"opcode '{name}' is not implemented by the emulator")
    ops = stmt.operands
    nvgpr = ctx.nvgpr
    if two:
        o0 = stmt.modifier("offset0")
        o1 = stmt.modifier("offset1")
        offs = [(o0.int_value() if o0 else 0) * nbytes * stride, (o1.int_value() if o1 else 0) * nbytes * stride]
    else:
        o = stmt.modifier("offset")
        offs = [o.int_value() if o else 0]
    offs_arr = np.array(offs, dtype=I64)
    mem = ctx.machine.mem
    ndw = max(1, nbytes // 4)
    if is_load:
        dst = _vreg(ops[0], ndw * len(offs), nvgpr, "destination")
        addr_r = _vreg(ops[1], 1, nvgpr, "address")
        data_regs = None
    else:
        addr_r = _vreg(ops[0], 1, nvgpr, "address")
        data_regs = [_vreg(op, ndw, nvgpr, "data") for op in ops[1:1 + len(offs)]]
        if len(data_regs) != len(offs):
            raise Unimplemented(f"{name} with {len(ops)} operands")

    def addresses(g):
        a = g.V[addr_r].astype(I64)[..., None] + offs_arr  # [W, 32, parts]
        active = g.mask
        lim = mem.lds_size
        act = a[active] if not g.full else a
        if act.size and (int(act.max()) + nbytes > lim or int(act.min()) < 0):
            bad = int(act.max()) if int(act.max()) + nbytes > lim else int(act.min())
            _fault(ctx, instr, f"LDS address {bad} (+{nbytes} bytes) is outside the workgroup's "
                               f"{lim} bytes (.amdhsa_group_segment_fixed_size)")
        return a + g.lds_base[:, None, None], active

    if is_load:
        def run(g):
            idx, active = addresses(g)
            _load(ctx, g, instr, "lds", "lds", idx, nbytes, active, dst, ndw * len(offs), kind, "lgkm", "lgkm")
        return run

    def run_store(g):
        idx, active = addresses(g)
        data = np.stack([np.stack([g.V[r + k] for k in range(ndw)], axis=-1) for r in data_regs], axis=-2)
        _store(ctx, g, instr, "lds", "lds", idx, nbytes, data, active, "lgkm")
    return run_store


# --------------------------------------------------------------------------------- GLOBAL / FLAT / SCRATCH

def vmem(instr, stmt, ctx: MemCtx):
    name = stmt.mnemonic
    seg = name.split("_", 1)[0]
    if seg == "buffer":
        return _buffer(instr, stmt, ctx)
    _check_mods(stmt, _MEM_MODS)
    parts = name.split("_")
    if parts[1] not in ("load", "store") or "lds" in parts or "addtid" in parts:
        raise Unimplemented(f"opcode '{name}' is not implemented by the emulator")
    is_load = parts[1] == "load"
    kind = parts[-1]
    nbytes = _WIDTH.get(kind)
    d16 = "d16" in parts
    if d16:
        # D16 forms (RDNA3 ISA guide, "Global, scratch and flat"): a load writes one 16-bit half of
        # its VGPR (low, or high for _hi), keeping the other; a _hi store writes the high half.
        hi = "hi" in parts
        if kind not in ("b16", "u8", "i8", "b8") or (not is_load and (not hi or kind not in ("b16", "b8"))):
            raise Unimplemented(f"opcode '{name}' is not implemented by the emulator")
        if is_load:
            kind = ("d16hi_" if hi else "d16_") + kind
    if nbytes is None:
        raise Unimplemented(f"opcode '{name}' is not implemented by the emulator")
    ndw = max(1, nbytes // 4)
    ops = list(stmt.operands)
    nvgpr = ctx.nvgpr
    o = stmt.modifier("offset")
    imm = o.int_value() if o else 0
    mem = ctx.machine.mem
    if is_load:
        dst = _vreg(ops[0], ndw, nvgpr, "destination")
        addr_op, saddr_op = ops[1], (ops[2] if len(ops) > 2 else None)
        data_r = None
    else:
        addr_op, data_op = ops[0], ops[1]
        saddr_op = ops[2] if len(ops) > 2 else None
        data_r = _vreg(data_op, ndw, nvgpr, "data")
    has_saddr = saddr_op is not None and saddr_op.kind != "off" and not (
        saddr_op.kind == "special" and saddr_op.file == "null")
    has_vaddr = addr_op.kind != "off"

    if seg in ("global", "flat"):
        if has_saddr:
            sbase = scalar_source(saddr_op, "u64")
            voff = _vreg(addr_op, 1, nvgpr, "address")
        else:
            vaddr = _vreg(addr_op, 2, nvgpr, "address")

        def addresses(g):
            if has_saddr:
                a = sbase(g).astype(U64)[:, None] + g.V[voff].astype(U64)
            else:
                a = g.V[vaddr].astype(U64) | (g.V[vaddr + 1].astype(U64) << U64(32))
            off = (a.view(I64) + (imm - HEAP_BASE))
            active = g.mask
            chk = off[active] if not g.full else off.reshape(-1)
            err, fatal = mem.check_global(chk, nbytes, store=not is_load)
            if err:
                if fatal:
                    _fault(ctx, instr, f"global {'load' if is_load else 'store'} at {err}")
                _note(ctx, instr, f"load reads garbage: {err}")
            return off[..., None], active
        space, arr, lq = "global", "heap", "vm"
    elif seg == "scratch":
        vaddr = _vreg(addr_op, 1, nvgpr, "address") if has_vaddr else None
        soff = scalar_source(saddr_op, "u32") if has_saddr else None
        lanes = np.arange(32, dtype=I64)

        def addresses(g):
            a = np.full(g.mask.shape, imm, dtype=I64)
            if vaddr is not None:
                a = a + g.V[vaddr].astype(I64)
            if soff is not None:
                a = a + soff(g).astype(I64)[:, None]
            psize = mem.private_size
            active = g.mask
            act = a[active]
            if act.size and (int(act.min()) < 0 or int(act.max()) + nbytes > psize):
                _fault(ctx, instr, f"scratch address {int(act.max())} (+{nbytes} bytes) is outside the "
                                   f"{psize}-byte private segment (.amdhsa_private_segment_fixed_size)")
            base = (g.waves.astype(I64)[:, None] * 32 + lanes) * psize
            return (a + base)[..., None], active
        space, arr, lq = "scratch", "scratch", "vm"
    else:
        raise Unimplemented(f"opcode '{name}' is not implemented by the emulator")

    if is_load:
        def run(g):
            idx, active = addresses(g)
            _load(ctx, g, instr, space, arr, idx, nbytes, active, dst, ndw, kind, lq, "vs")
        return run

    def run_store(g):
        idx, active = addresses(g)
        data = np.stack([g.V[data_r + k] for k in range(ndw)], axis=-1)[..., None, :]
        if d16:
            data = data >> U32(16)
        _store(ctx, g, instr, space, arr, idx, nbytes, data, active, "vs")
    return run_store


def _buffer_access(stmt):
    """(is_load, kind, bytes) of a MUBUF load/store the emulator runs, else Unimplemented."""
    parts = stmt.mnemonic.split("_")
    if parts[1] not in ("load", "store") or len(parts) != 3 or parts[2] not in _WIDTH:
        raise Unimplemented(f"opcode '{stmt.mnemonic}' is not implemented by the emulator")
    return parts[1] == "load", parts[2], _WIDTH[parts[2]]


def _buffer(instr, stmt, ctx: MemCtx):
    """MUBUF load/store through a buffer resource (see the module docstring)."""
    _check_mods(stmt, _BUF_MODS)
    is_load, kind, nbytes = _buffer_access(stmt)
    ndw = max(1, nbytes // 4)
    ops = list(stmt.operands)
    nvgpr = ctx.nvgpr
    data_r = _vreg(ops[0], ndw, nvgpr, "destination" if is_load else "data")
    offen, idxen = stmt.modifier("offen") is not None, stmt.modifier("idxen") is not None
    vaddr = _vreg(ops[1], idxen + offen, nvgpr, "address") if (offen or idxen) else None
    if ops[2].kind != "sgpr" or ops[2].count != 4:
        raise Unimplemented(f"buffer resource '{ops[2].text}' must be four SGPRs")
    rsrc = sgpr_index(ops[2])
    soff = scalar_source(ops[3], "u32")
    o = stmt.modifier("offset")
    imm = o.int_value() if o else 0
    mem = ctx.machine.mem
    lanes = np.arange(32, dtype=I64)

    def addresses(g):
        w0, w1, w2, w3 = (g.S[rsrc + k].astype(I64)[:, None] for k in range(4))
        base = w0 | ((w1 & 0xFFFF) << 32)
        stride = (w1 >> 16) & 0x3FFF
        oob = (w3 >> 28) & 3
        soffset = np.asarray(soff(g), dtype=U32).astype(I64).reshape(-1, 1)
        offset = np.full(g.mask.shape, imm, dtype=I64)
        index = np.zeros(g.mask.shape, dtype=I64)
        if idxen:
            index = index + g.V[vaddr].astype(I64)
        if offen:
            offset = offset + g.V[vaddr + idxen].astype(I64)
        index = index + np.where((w3 >> 23) & 1 == 1, lanes, 0)
        out = np.where(oob == 0, (index >= w2) | ((stride != 0) & (offset >= stride)),
                       np.where(oob == 1, index >= w2,
                                np.where(oob == 2, w2 == 0, offset + soffset + nbytes > w2)))
        partial = (oob == 3) & (offset + soffset < w2) & out
        active = g.mask
        if partial[active].any():
            raise Unimplemented("a buffer access partly out of range (hardware checks each dword)")
        addr = base + soffset + offset + stride * index
        off = addr - HEAP_BASE
        inside = active & ~out
        chk = off[inside]
        err, fatal = mem.check_global(chk, nbytes, store=not is_load)
        if err:
            if fatal:
                _fault(ctx, instr, f"buffer {'load' if is_load else 'store'} at {err}")
            _note(ctx, instr, f"load reads garbage: {err}")
        return off[..., None], inside, active & out

    if is_load:
        def run(g):
            idx, inside, outside = addresses(g)
            _load(ctx, g, instr, "global", "heap", idx, nbytes, inside, data_r, ndw, kind, "vm", "vs",
                  outside if outside.any() else None)
        return run

    def run_store(g):
        idx, inside, _ = addresses(g)
        data = np.stack([g.V[data_r + k] for k in range(ndw)], axis=-1)[..., None, :]
        _store(ctx, g, instr, "global", "heap", idx, nbytes, data, inside, "vs")
    return run_store
