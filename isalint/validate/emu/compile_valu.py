"""Compile VALU statements (including VOPD halves and DPP) into closures over a wave group.

What each opcode computes is its definition in :mod:`isalint.isa.semantics`, run on
:data:`.algebra.NP`; this module reads the definition's inputs (with DPP lane selection and the fp32
input modifiers), writes its outputs (in the active lanes, lane masks packed into SGPRs) and applies
the denormal mode and the output modifiers (clamp, omod). Packed fp16 math and WMMA are
:mod:`.packed` and :mod:`.wmma`.
"""
from __future__ import annotations

import numpy as np

from ...isa import lookup as isa_lookup
from ...isa.mnemonics import base_mnemonic, is_dpp
from ...isa.semantics import BindingError, binding, definition
from ...isa.semantics.table import NoDefinition
from . import packed, wmma
from .algebra import NP
from .errors import Unimplemented
from .fp import flush_denormals
from .machine import EXEC_LO, F32, LANES, U32, U64, VCC_LO, mask_to_bits
from .operands import VIEW, scalar_dest, scalar_source, sgpr_index, vector_dest, vector_source

_DPP_KEYS = {"quad_perm", "row_shl", "row_shr", "row_ror", "row_mirror", "row_half_mirror", "row_share",
             "row_xmask", "dpp8", "row_mask", "bank_mask", "bound_ctrl", "fi"}
_OUTPUT_KEYS = {"clamp", "mul", "div"}
# the types a definition's inputs are read as: integers raw (a signed operation views them signed),
# i64 read signed (a literal is sign-extended) and passed on raw
_READ = {"u32": "u32", "i32": "u32", "b32": "u32", "f32": "f32", "u64": "u64", "b64": "u64", "i64": "i64",
         "f64": "f64"}


class ValuCtx:
    """What a VALU compile needs to know about the kernel."""

    def __init__(self, nvgpr: int, flush_f32: bool, f16_denorm_mode: int = 3):
        self.nvgpr = nvgpr
        self.flush_f32 = flush_f32
        self.f16_denorm_mode = f16_denorm_mode


def _lane_mask_reader(op):
    """Reader of a lane mask (VCC or an SGPR) as [W, 32] bool."""
    if op.kind == "int":
        bits = np.uint32(int(op.value) & 0xFFFF_FFFF)
        m = ((bits >> LANES) & U32(1)).astype(bool)[None, :]
        return lambda g: m
    idx = sgpr_index(op)
    return lambda g: ((g.S[idx][:, None] >> LANES) & U32(1)).astype(bool)


def _dpp(stmt):
    """Static DPP selection: (source lane [32], statically valid [32], row/bank write mask [32], bc, fi)."""
    lanes = np.arange(32)
    row_base = lanes & ~15
    pos = lanes & 15
    src = lanes.copy()
    valid = np.ones(32, bool)
    ctrl = None
    for mod in stmt.modifiers:
        n, v = mod.name, mod.value
        if n == "quad_perm":
            sel = [int(x, 0) for x in v.strip("[]").split(",")]
            if len(sel) != 4 or any(not 0 <= s <= 3 for s in sel):
                raise Unimplemented(f"bad quad_perm {v}")
            src = (lanes & ~3) + np.array(sel)[lanes & 3]
            ctrl = n
        elif n == "dpp8":
            sel = [int(x, 0) for x in v.strip("[]").split(",")]
            if len(sel) != 8 or any(not 0 <= s <= 7 for s in sel):
                raise Unimplemented(f"bad dpp8 {v}")
            src = (lanes & ~7) + np.array(sel)[lanes & 7]
            ctrl = n
        elif n in ("row_shl", "row_shr", "row_ror"):
            k = mod.int_value()
            if k is None or not 1 <= k <= 15:
                raise Unimplemented(f"bad {n}:{v}")
            if n == "row_shl":
                p = pos + k
                valid = p <= 15
            elif n == "row_shr":
                p = pos - k
                valid = p >= 0
            else:
                p = (pos - k) % 16
            src = row_base + np.clip(p, 0, 15)
            ctrl = n
        elif n == "row_mirror":
            src = row_base + (15 - pos)
            ctrl = n
        elif n == "row_half_mirror":
            src = (lanes & ~7) + (7 - (lanes & 7))
            ctrl = n
        elif n == "row_share":
            k = mod.int_value()
            src = row_base + (k & 15)
            ctrl = n
        elif n == "row_xmask":
            k = mod.int_value()
            src = row_base + (pos ^ (k & 15))
            ctrl = n
    row_mask = stmt.modifier("row_mask")
    bank_mask = stmt.modifier("bank_mask")
    rm = row_mask.int_value() if row_mask else 0xF
    bm = bank_mask.int_value() if bank_mask else 0xF
    bc_mod = stmt.modifier("bound_ctrl")
    bc = bc_mod is not None and (bc_mod.value is None or bc_mod.int_value() != 0)
    fi_mod = stmt.modifier("fi")
    fi = fi_mod is not None and (fi_mod.value is None or fi_mod.int_value() != 0)
    write = (((rm >> (lanes >> 4)) & 1) == 1) & (((bm >> ((lanes >> 2) & 3)) & 1) == 1)
    if ctrl == "dpp8":
        bc = True  # DPP8 has no bound control: lanes it cannot fetch read zero
        write = np.ones(32, bool)
    return src, valid, write, bc, fi


def _dpp_source(op, typ, nvgpr, stmt):
    """Reader of a DPP src0 plus a function giving the extra [W,32] write mask (or None)."""
    if op.kind != "vgpr":
        raise Unimplemented(f"DPP source '{op.text}' must be a VGPR")
    if typ not in ("u32", "i32", "f32", "b32"):
        raise Unimplemented(f"DPP on a {typ} operand")
    n = op.first
    view = VIEW[typ]
    src, valid, write, bc, fi = _dpp(stmt)
    static_bad = ~valid

    def fetch(g):
        x = g.V[n][:, src]
        bad = static_bad if fi else (static_bad[None, :] | ~g.mask[:, src])
        if bc:
            if np.any(bad):
                x = np.where(bad, U32(0), x)
            return x.view(view)
        return x.view(view)

    def lanes_ok(g):
        if bc:
            return np.broadcast_to(write, g.mask.shape)
        bad = static_bad if fi else (static_bad[None, :] | ~g.mask[:, src])
        return write[None, :] & ~bad

    read = fetch
    if op.abs or op.neg:
        if typ != "f32":
            raise Unimplemented(f"input modifier on non-float operand '{op.text}'")
        inner = read
        if op.abs and op.neg:
            read = lambda g: -np.abs(inner(g))  # noqa: E731
        elif op.abs:
            read = lambda g: np.abs(inner(g))  # noqa: E731
        else:
            read = lambda g: -inner(g)  # noqa: E731
    return read, lanes_ok


def _check_modifiers(stmt, allowed):
    for mod in stmt.modifiers:
        if mod.name not in allowed:
            raise Unimplemented(f"modifier '{mod.text}' on {stmt.mnemonic}")


def _output_mods(stmt):
    clamp = stmt.modifier("clamp") is not None
    omod = None
    m = stmt.modifier("mul")
    if m is not None:
        omod = float(m.int_value())
    d = stmt.modifier("div")
    if d is not None:
        omod = 1.0 / float(d.int_value())
    return clamp, omod


def _output_mods_of(stmt, op):
    """(clamp, omod) to apply to the f32 result, after checking the modifiers the opcode allows."""
    clamp, omod = _output_mods(stmt)
    if not clamp and omod is None:
        return False, None
    first = op.outs[0][1]
    if first == "f32":
        return clamp, omod
    if omod is None and all(t == "bit" for _, t in op.outs):
        return False, None  # a compare's clamp only signals on NaN inputs: no result changes
    raise Unimplemented(f"clamp/output modifier on integer op {stmt.mnemonic}")


def valu_parts(stmt, ctx: ValuCtx):
    """(compute, commit): compute(g) reads every source and returns a payload; commit writes it."""
    base = base_mnemonic(stmt.mnemonic)
    dpp = is_dpp(stmt.mnemonic) or any(m.name in ("quad_perm", "dpp8") or m.name.startswith("row_") and
                                       m.name not in ("row_mask",) for m in stmt.modifiers)
    if base == "v_nop":
        return (lambda g: None), (lambda g, p: None)
    if base in packed.NAMES:
        return packed.packed_parts(stmt, base, ctx, dpp)
    if base in wmma.NAMES:
        return wmma.wmma_parts(stmt, base, ctx, dpp)
    ops = list(stmt.operands)
    try:
        b = binding(stmt.mnemonic, len(ops))
    except NoDefinition:
        raise Unimplemented(f"opcode '{stmt.mnemonic}' is not implemented by the emulator") from None
    except BindingError as exc:
        raise Unimplemented(str(exc)) from None
    op = b.op
    _check_modifiers(stmt, _OUTPUT_KEYS | (_DPP_KEYS if dpp else set()))
    clamp, omod = _output_mods_of(stmt, op)
    specs = isa_lookup(stmt.mnemonic).operands_for(len(ops))
    floats_b32 = any(ops[s.ref].neg or ops[s.ref].abs for s in b.ins if s.kind == "operand" and s.type == "b32")
    readers, extra = [], None
    first_operand = True
    for slot in b.ins:
        if slot.kind == "operand" and first_operand and dpp:
            if slot.type == "bit":
                raise Unimplemented(f"DPP source '{ops[slot.ref].text}' must be a VGPR")
            r, extra = _dpp_source(ops[slot.ref], _typ(slot.type, floats_b32), ctx.nvgpr, stmt)
            readers.append(r)
        else:
            readers.append(_reader(slot, ops, specs, ctx, floats_b32))
        first_operand = first_operand and slot.kind != "operand"
    writers = [_writer(slot, ops, specs, ctx, floats_b32, op.exec_masked) for slot in b.outs]
    fn = op.fn
    if ctx.flush_f32 and "f32" in op.types:
        flush_out = [t == "f32" for _, t in op.outs]
        inner_fn = fn

        def fn(A, *args):  # noqa: F811 - the definition with denormals flushed in and out
            res = inner_fn(A, *[flush_denormals(a) if getattr(a, "dtype", None) == F32 else a for a in args])
            return tuple(flush_denormals(v) if f else v for v, f in zip(res, flush_out))
    if clamp or omod is not None:
        unmodified = fn

        def fn(A, *args):  # noqa: F811
            res = unmodified(A, *args)
            return (apply_output_mods(res[0], clamp, omod),) + tuple(res[1:])
    return _parts(fn, readers, writers, extra)


def _typ(t: str, floats_b32: bool) -> str:
    return "f32" if t == "b32" and floats_b32 else _READ[t]


def _lane_bits(g):
    return ((g.S[VCC_LO][:, None] >> LANES) & U32(1)).astype(bool)


def _reader(slot, ops, specs, ctx, floats_b32):
    """``g -> value`` of one input of a VALU definition."""
    if slot.kind == "state":
        if slot.ref == "VCC":
            return _lane_bits
        if slot.ref == "EXEC":
            return lambda g: g.S[EXEC_LO]
        raise Unimplemented(f"{slot.ref} as a vector source")
    op = ops[slot.ref]
    if slot.type == "bit":
        return _lane_mask_reader(op)
    typ = _typ(slot.type, floats_b32)
    if specs[slot.ref].kind in ("sgpr", "ssrc") and slot.kind == "operand":
        return scalar_source(op, typ)
    r = vector_source(op, typ, ctx.nvgpr)
    if typ == "i64":
        return lambda g: r(g).view(U64)
    return r


def _writer(slot, ops, specs, ctx, floats_b32, exec_masked):
    """``(g, value, mask or None)`` writing one output of a VALU definition."""
    if slot.type == "bit":
        if slot.kind == "state" and slot.ref == "EXEC":
            def wexec(g, v, mask):
                m = g.mask if mask is None else mask
                g.S[EXEC_LO] = mask_to_bits(np.broadcast_to(v, m.shape) & m)
                g.update_exec()
            return wexec
        if slot.kind == "state":
            def wvcc(g, v, mask):
                m = g.mask if mask is None else mask
                g.S[VCC_LO] = mask_to_bits(np.broadcast_to(v, m.shape) & m)
            return wvcc
        w = scalar_dest(ops[slot.ref], "u32")

        def wbits(g, v, mask):
            m = g.mask if mask is None else mask
            w(g, mask_to_bits(np.broadcast_to(v, m.shape) & m))
        return wbits
    if slot.kind == "state":
        raise Unimplemented(f"{slot.ref} as a vector destination")
    op = ops[slot.ref]
    typ = _typ(slot.type, floats_b32)
    if specs[slot.ref].kind == "sgpr":
        w = scalar_dest(op, typ)
        return lambda g, v, mask: w(g, v)
    write = vector_dest(op, typ, ctx.nvgpr)
    if not exec_masked:
        n = op.first
        view = VIEW[typ]

        def wall(g, v, mask):
            g.V[n][...] = np.asarray(v, view).view(U32)
        return wall
    return write


def _parts(fn, readers, writers, extra):
    """(compute, commit) of a bound definition; the payload is (results, DPP lane mask or None)."""
    if extra is None and len(writers) == 1:
        (w0,) = writers

        def commit1(g, p):
            w0(g, p[0], None)
        if len(readers) == 1:
            (r0,) = readers
            return (lambda g: fn(NP, r0(g))), commit1
        if len(readers) == 2:
            r0, r1 = readers
            return (lambda g: fn(NP, r0(g), r1(g))), commit1
        if len(readers) == 3:
            r0, r1, r2 = readers
            return (lambda g: fn(NP, r0(g), r1(g), r2(g))), commit1
    if extra is None:
        def compute(g):
            return fn(NP, *[r(g) for r in readers])

        def commit(g, p):
            for w, v in zip(writers, p):
                w(g, v, None)
        return compute, commit

    def compute_dpp(g):
        return fn(NP, *[r(g) for r in readers]), g.mask & extra(g)

    def commit_dpp(g, p):
        vals, mask = p
        for w, v in zip(writers, vals):
            w(g, v, mask)
    return compute_dpp, commit_dpp


def apply_output_mods(value, clamp: bool, omod: float | None):
    v = np.asarray(value, F32)
    if omod is not None:
        v = (v * F32(omod)).astype(F32)
    if clamp:
        v = np.where(np.isnan(v), F32(0), np.clip(v, F32(0), F32(1))).astype(F32)
    return v


def fast_fmac(stmt, ctx: ValuCtx):
    """The hot path: v_fmac_f32 / v_dual_fmac_f32 with plain register or constant sources."""
    ops = stmt.operands
    if len(ops) != 3 or stmt.modifiers or ctx.flush_f32 or any(o.neg or o.abs for o in ops):
        return None
    d, a, b = ops
    if d.kind != "vgpr" or b.kind != "vgpr":
        return None
    ra = vector_source(a, "f32", ctx.nvgpr)
    rb = vector_source(b, "f32", ctx.nvgpr)
    vector_source(d, "f32", ctx.nvgpr)
    n = d.first
    fn = definition("v_fmac_f32").fn

    def compute(g):
        return fn(NP, ra(g), rb(g), g.V[n].view(F32))[0].view(U32)

    def commit(g, p):
        if g.full:
            g.V[n] = p
        else:
            np.copyto(g.V[n], p, where=g.mask)
    return compute, commit
