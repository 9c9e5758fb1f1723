"""Compile VALU statements (including VOPD halves and DPP) into closures over a wave group."""
from __future__ import annotations

import numpy as np

from . import packed, wmma
from .errors import Unimplemented
from .fp import fma_f32, flush_denormals
from .machine import EXEC_LO, F32, I64, LANES, U32, U64, VCC_LO, mask_to_bits
from .operands import VIEW, scalar_dest, sgpr_index, vector_dest, vector_source
from .valu import ACCUMULATE, FP_OPS, VOP, apply_output_mods, flush_in, vopc_semantics

_DPP_KEYS = {"quad_perm", "row_shl", "row_shr", "row_ror", "row_mirror", "row_half_mirror", "row_share",
             "row_xmask", "dpp8", "row_mask", "bank_mask", "bound_ctrl", "fi"}
_OUTPUT_KEYS = {"clamp", "mul", "div"}

CARRY = {
    "v_add_co_u32": (lambda a, b, c: a + b, "add"),
    "v_sub_co_u32": (lambda a, b, c: a - b, "sub"),
    "v_subrev_co_u32": (lambda a, b, c: b - a, "subrev"),
    "v_add_co_ci_u32": (None, "add"),
    "v_sub_co_ci_u32": (None, "sub"),
    "v_subrev_co_ci_u32": (None, "subrev"),
}


def base_name(mnemonic: str) -> tuple[str, bool]:
    """('v_add_f32', is_dpp) for v_add_f32_e64_dpp and friends; v_dual_X -> v_X."""
    m = mnemonic
    if m.startswith("v_dual_"):
        return "v_" + m[len("v_dual_"):], False
    for suf, dpp in (("_e64_dpp", True), ("_e32_dpp", True), ("_dpp", True), ("_e32", False), ("_e64", False)):
        if m.endswith(suf):
            return m[: -len(suf)], dpp
    return m, False


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


def _sources(stmt, ops, types, ctx, dpp):
    readers = []
    extra = None
    for i, (op, t) in enumerate(zip(ops, types)):
        if i == 0 and dpp:
            r, extra = _dpp_source(op, t, ctx.nvgpr, stmt)
            readers.append(r)
        else:
            readers.append(vector_source(op, t, ctx.nvgpr))
    return readers, extra


def valu_parts(stmt, ctx: ValuCtx):
    """(compute, commit): compute(g) reads every source and returns a payload; commit writes it."""
    base, dpp_form = base_name(stmt.mnemonic)
    dpp = dpp_form or any(m.name in ("quad_perm", "dpp8") or m.name.startswith("row_") and m.name not in
                          ("row_mask",) for m in stmt.modifiers)
    ops = list(stmt.operands)
    allowed = _OUTPUT_KEYS | (_DPP_KEYS if dpp else set())

    if base in ("v_nop",):
        return (lambda g: None), (lambda g, p: None)
    if base in packed.NAMES:
        return packed.packed_parts(stmt, base, ctx, dpp)
    if base in wmma.NAMES:
        return wmma.wmma_parts(stmt, base, ctx, dpp)

    if base in ACCUMULATE or base in VOP:
        _check_modifiers(stmt, allowed)
        acc = base in ACCUMULATE
        dtype, stypes, fn = VOP[ACCUMULATE.get(base, base)]
        nsrc = len(stypes) - (1 if acc else 0)
        if len(ops) != 1 + nsrc:
            raise Unimplemented(f"{stmt.mnemonic} with {len(ops)} operands")
        readers, extra = _sources(stmt, ops[1:], stypes, ctx, dpp)
        if acc:
            readers.append(vector_source(ops[0], stypes[-1], ctx.nvgpr))
        write = vector_dest(ops[0], dtype, ctx.nvgpr)
        fp = ACCUMULATE.get(base, base) in FP_OPS
        if ctx.flush_f32 and fp:
            fn = flush_in(fn, len(readers))
        clamp, omod = _output_mods(stmt)
        if (clamp or omod is not None) and dtype != "f32":
            raise Unimplemented(f"clamp/output modifier on integer op {stmt.mnemonic}")
        if clamp or omod is not None:
            inner_fn = fn
            fn = lambda *a: apply_output_mods(inner_fn(*a), clamp, omod)  # noqa: E731
        return _generic(readers, fn, write, extra)

    if base in CARRY:
        return _carry(stmt, base, ops, ctx, dpp)
    if base in ("v_mad_u64_u32", "v_mad_i64_i32"):
        _check_modifiers(stmt, set())
        return _mad64(stmt, base, ops, ctx)
    if base == "v_cndmask_b32":
        _check_modifiers(stmt, allowed)
        return _cndmask(stmt, ops, ctx, dpp)
    if base.startswith("v_cmp"):
        _check_modifiers(stmt, allowed - {"mul", "div"})
        return _vopc(stmt, base, ops, ctx, dpp)
    if base in ("v_readfirstlane_b32", "v_readlane_b32", "v_writelane_b32", "v_mbcnt_lo_u32_b32",
                "v_mbcnt_hi_u32_b32"):
        _check_modifiers(stmt, set())
        return _lanes(stmt, base, ops, ctx)
    raise Unimplemented(f"opcode '{stmt.mnemonic}' is not implemented by the emulator")


def _generic(readers, fn, write, extra):
    n = len(readers)
    if extra is None:
        if n == 1:
            r0, = readers
            return (lambda g: fn(r0(g))), (lambda g, p: write(g, p))
        if n == 2:
            r0, r1 = readers
            return (lambda g: fn(r0(g), r1(g))), (lambda g, p: write(g, p))
        if n == 3:
            r0, r1, r2 = readers
            return (lambda g: fn(r0(g), r1(g), r2(g))), (lambda g, p: write(g, p))
        return (lambda g: fn(*[r(g) for r in readers])), (lambda g, p: write(g, p))

    def compute(g):
        return fn(*[r(g) for r in readers]), g.mask & extra(g)

    def commit(g, p):
        write(g, p[0], p[1])
    return compute, commit


def _carry(stmt, base, ops, ctx, dpp):
    _check_modifiers(stmt, {"clamp"} | (_DPP_KEYS if dpp else set()))
    if stmt.modifier("clamp") is not None:
        raise Unimplemented(f"clamp on {stmt.mnemonic}")
    with_ci = "_ci_" in base
    want = 5 if with_ci else 4
    if len(ops) != want:
        raise Unimplemented(f"{stmt.mnemonic} with {len(ops)} operands (expected {want}, carry operands written)")
    dst, cdst, a, b = ops[0], ops[1], ops[2], ops[3]
    cin = ops[4] if with_ci else None
    (ra, rb), extra = _sources(stmt, [a, b], ("u32", "u32"), ctx, dpp)
    rc = _lane_mask_reader(cin) if with_ci else None
    write = vector_dest(dst, "u32", ctx.nvgpr)
    wmask = scalar_dest(cdst, "u32")
    kind = CARRY[base][1]

    def compute(g):
        x = ra(g).astype(U64)
        y = rb(g).astype(U64)
        c = rc(g).astype(U64) if with_ci else U64(0)
        if kind == "add":
            t = x + y + c
            carry = t >= U64(1 << 32)
        elif kind == "sub":
            t = x - y - c
            carry = (y + c) > x
        else:
            t = y - x - c
            carry = (x + c) > y
        mask = g.mask if extra is None else g.mask & extra(g)
        t, carry = np.broadcast_arrays(t, carry)
        return t.astype(U32), carry & mask, mask

    def commit(g, p):
        write(g, p[0], None if extra is None else p[2])
        wmask(g, mask_to_bits(p[1]))
    return compute, commit


def _mad64(stmt, base, ops, ctx):
    if len(ops) != 5:
        raise Unimplemented(f"{stmt.mnemonic} with {len(ops)} operands")
    dst, cdst, a, b, c = ops
    signed = base == "v_mad_i64_i32"
    t32, t64 = ("i32", "i64") if signed else ("u32", "u64")
    ra = vector_source(a, t32, ctx.nvgpr)
    rb = vector_source(b, t32, ctx.nvgpr)
    rc = vector_source(c, t64, ctx.nvgpr)
    write = vector_dest(dst, t64, ctx.nvgpr)
    wmask = scalar_dest(cdst, "u32")

    def compute(g):
        if signed:
            p = ra(g).astype(I64) * rb(g).astype(I64)
            cc = rc(g)
            s = p + cc
            overflow = (np.signbit(p) == np.signbit(cc)) & (np.signbit(s) != np.signbit(p))
            carry = np.signbit(s) ^ overflow  # bit 64 of the 65-bit two's complement sum
        else:
            p = ra(g).astype(U64) * rb(g).astype(U64)
            cc = rc(g)
            s = p + cc
            carry = s < cc
        s, carry = np.broadcast_arrays(s, carry)
        return s, carry & g.mask

    def commit(g, p):
        write(g, p[0])
        wmask(g, mask_to_bits(p[1]))
    return compute, commit


def _cndmask(stmt, ops, ctx, dpp):
    if len(ops) == 3:
        cond = None
    elif len(ops) == 4:
        cond = ops[3]
    else:
        raise Unimplemented(f"{stmt.mnemonic} with {len(ops)} operands")
    typ = "f32" if any(o.neg or o.abs for o in ops[1:3]) else "u32"
    (r0, r1), extra = _sources(stmt, ops[1:3], (typ, typ), ctx, dpp)
    if cond is None:
        rc = lambda g: ((g.S[VCC_LO][:, None] >> LANES) & U32(1)).astype(bool)  # noqa: E731
    else:
        rc = _lane_mask_reader(cond)
    write = vector_dest(ops[0], typ, ctx.nvgpr)

    def compute(g):
        v = np.where(rc(g), r1(g), r0(g))
        return v, (None if extra is None else g.mask & extra(g))

    def commit(g, p):
        write(g, p[0], p[1])
    return compute, commit


def _vopc(stmt, base, ops, ctx, dpp):
    sem = vopc_semantics(base)
    if sem is None:
        raise Unimplemented(f"opcode '{stmt.mnemonic}' is not implemented by the emulator")
    (ta, tb), fn = sem
    cmpx = base.startswith("v_cmpx")
    if cmpx:
        dst = None
        srcs = ops
    else:
        if len(ops) == 3:
            dst, srcs = ops[0], ops[1:]
        elif len(ops) == 2:
            dst, srcs = None, ops  # e32 with the implicit vcc_lo left out
        else:
            raise Unimplemented(f"{stmt.mnemonic} with {len(ops)} operands")
    if len(srcs) != 2:
        raise Unimplemented(f"{stmt.mnemonic} with {len(ops)} operands")
    (ra, rb), extra = _sources(stmt, srcs, (ta, tb), ctx, dpp)
    if ctx.flush_f32 and ta == "f32":
        inner = fn
        fn = lambda a, b: inner(flush_denormals(a), b if tb != "f32" else flush_denormals(b))  # noqa: E731
    if cmpx:
        def commit(g, p):
            g.S[EXEC_LO] = mask_to_bits(p)
            g.update_exec()
    else:
        w = scalar_dest(dst, "u32") if dst is not None else None

        def commit(g, p):
            bits = mask_to_bits(p)
            if w is None:
                g.S[VCC_LO] = bits
            else:
                w(g, bits)

    def compute(g):
        r = fn(ra(g), rb(g))
        mask = g.mask if extra is None else g.mask & extra(g)
        return np.broadcast_to(r, mask.shape) & mask
    return compute, commit


def _lanes(stmt, base, ops, ctx):
    if base == "v_readfirstlane_b32":
        w = scalar_dest(ops[0], "u32")
        r = vector_source(ops[1], "u32", ctx.nvgpr)

        def compute(g):
            v = np.broadcast_to(r(g), g.mask.shape)
            first = np.where(g.mask.any(axis=1), g.mask.argmax(axis=1), 0)
            return v[np.arange(v.shape[0]), first]
        return compute, (lambda g, p: w(g, p))
    if base == "v_readlane_b32":
        w = scalar_dest(ops[0], "u32")
        r = vector_source(ops[1], "u32", ctx.nvgpr)
        from .operands import scalar_source
        lane = scalar_source(ops[2], "u32")

        def compute(g):
            v = np.broadcast_to(r(g), g.mask.shape)
            ln = np.broadcast_to(lane(g) & U32(31), (v.shape[0],)).astype(np.int64)
            return v[np.arange(v.shape[0]), ln]
        return compute, (lambda g, p: w(g, p))
    if base == "v_writelane_b32":
        from .operands import scalar_source
        if ops[0].kind != "vgpr":
            raise Unimplemented("v_writelane_b32 destination must be a VGPR")
        n = ops[0].first
        val = scalar_source(ops[1], "u32")
        lane = scalar_source(ops[2], "u32")

        def compute(g):
            W = g.waves.size
            return (np.broadcast_to(val(g), (W,)).copy(),
                    np.broadcast_to(lane(g) & U32(31), (W,)).astype(np.int64))

        def commit(g, p):
            g.V[n][np.arange(p[0].size), p[1]] = p[0]
        return compute, commit
    # v_mbcnt_lo/hi: count the mask bits below this lane (lo: bits 0..31; hi: wave32 has none)
    r0 = vector_source(ops[1], "u32", ctx.nvgpr)
    r1 = vector_source(ops[2], "u32", ctx.nvgpr)
    write = vector_dest(ops[0], "u32", ctx.nvgpr)
    below = ((U64(1) << LANES.astype(U64)) - U64(1)).astype(U32)
    hi = base == "v_mbcnt_hi_u32_b32"

    def compute(g):
        if hi:
            return np.broadcast_to(r1(g), g.mask.shape).astype(U32)
        m = np.broadcast_to(r0(g), g.mask.shape) & below
        cnt = np.unpackbits(np.ascontiguousarray(m).view(np.uint8).reshape(m.shape + (4,)), axis=-1).sum(
            axis=-1, dtype=U32)
        return cnt + r1(g)
    return compute, (lambda g, p: write(g, p))


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

    def compute(g):
        return fma_f32(ra(g), rb(g), g.V[n].view(F32)).view(U32)

    def commit(g, p):
        if g.full:
            g.V[n] = p
        else:
            np.copyto(g.V[n], p, where=g.mask)
    return compute, commit
