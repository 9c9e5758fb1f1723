"""Compile SALU (SOP1, SOP2, SOPK, SOPC) and program control (SOPP) statements.

Scalar values are ``[W]`` vectors (one lane per wave of the group); SCC is a ``[W]`` bool.
Semantics and SCC effects follow the RDNA3 ISA guide, chapter 4 "Scalar ALU operations".
"""
from __future__ import annotations

import numpy as np

from ...model.waitcnt import wait_thresholds
from .errors import Unimplemented
from .machine import EXEC_LO, I32, I64, STOP_BARRIER, STOP_END, STOP_SPLIT, U32, U64, VCC_LO
from .operands import WIDE, scalar_dest, scalar_source
from .valu import _brev, _clz, _ctz, _popcount

_31 = U32(31)
_63 = U64(63)


def _u32(x):
    return np.asarray(x, dtype=U32)


def _nz(r):
    return np.asarray(r) != 0


def _add_ovf(a, b, r):
    a, b, r = _u32(a), _u32(b), _u32(r)
    return (((a ^ r) & (b ^ r)) >> _31) == 1


def _sub_ovf(a, b, r):
    a, b, r = _u32(a), _u32(b), _u32(r)
    return (((a ^ b) & (a ^ r)) >> _31) == 1


def _sext(bits):
    def f(a):
        sh = U32(32 - bits)
        return ((_u32(a) << sh).view(I32) >> (32 - bits)).view(U32), None
    return f


def _bfe(wide, signed):
    def f(a, b):
        b = _u32(b)
        off = (b & (_63 if wide else _31)).astype(U64)
        w = ((b >> U32(16)) & U32(0x7F)).astype(U64)
        if wide:
            w = np.minimum(w, U64(64))
            mask = np.where(w >= 64, U64(0xFFFF_FFFF_FFFF_FFFF), (U64(1) << np.minimum(w, U64(63))) - U64(1))
            t = (np.asarray(a, U64) >> off) & mask
        else:
            w = np.minimum(w, U64(32))
            mask = (U64(1) << w) - U64(1)
            t = (np.asarray(a, U32).astype(U64) >> off) & mask
        if signed:
            nbits = 64 if wide else 32
            sign = np.where(w > 0, (t >> np.maximum(w, U64(1)) - U64(1)) & U64(1), U64(0))
            ext = np.where((sign == 1) & (w < nbits), ~mask, U64(0))
            t = t | ext
        r = t if wide else (t & U64(0xFFFF_FFFF)).astype(U32)
        return r, _nz(r)
    return f


def _shift(kind, wide):
    def f(a, b):
        if wide:
            a = np.asarray(a, U64)
            s = (_u32(b) & U32(63)).astype(U64)
            if kind == "lshl":
                r = a << s
            elif kind == "lshr":
                r = a >> s
            else:
                r = (a.view(I64) >> s.astype(I64)).view(U64)
        else:
            a = _u32(a)
            s = _u32(b) & _31
            if kind == "lshl":
                r = a << s
            elif kind == "lshr":
                r = a >> s
            else:
                r = (a.view(I32) >> s.astype(I32)).view(U32)
        return r, _nz(r)
    return f


def _logic(op, wide):
    T = U64 if wide else U32

    def f(a, b):
        a, b = np.asarray(a, T), np.asarray(b, T)
        r = {"and": lambda: a & b, "or": lambda: a | b, "xor": lambda: a ^ b, "nand": lambda: ~(a & b),
             "nor": lambda: ~(a | b), "xnor": lambda: ~(a ^ b), "and_not1": lambda: a & ~b,
             "or_not1": lambda: a | ~b}[op]()
        return r, _nz(r)
    return f


def _lshl_add(n):
    def f(a, b):
        t = (_u32(a).astype(U64) << U64(n)) + _u32(b).astype(U64)
        return (t & U64(0xFFFF_FFFF)).astype(U32), t >= U64(1 << 32)
    return f


def _cmp(op, typ):
    view = {"i32": I32, "u32": U32, "u64": U64}[typ]
    fn = {"eq": np.equal, "lg": np.not_equal, "gt": np.greater, "ge": np.greater_equal,
          "lt": np.less, "le": np.less_equal}[op]
    return lambda a, b: fn(np.asarray(a).view(view) if typ != "u64" else np.asarray(a, U64),
                           np.asarray(b).view(view) if typ != "u64" else np.asarray(b, U64))


# name -> (dst type or None, source types, fn(*sources) -> (value, scc or None) / scc for compares)
SOP: dict[str, tuple] = {
    "s_mov_b32": ("u32", ("u32",), lambda a: (a, None)),
    "s_mov_b64": ("u64", ("u64",), lambda a: (a, None)),
    "s_movk_i32": ("u32", ("k16s",), lambda a: (a, None)),
    "s_not_b32": ("u32", ("u32",), lambda a: ((~_u32(a)), _nz(~_u32(a)))),
    "s_not_b64": ("u64", ("u64",), lambda a: ((~np.asarray(a, U64)), _nz(~np.asarray(a, U64)))),
    "s_brev_b32": ("u32", ("u32",), lambda a: (_brev(a), None)),
    "s_bcnt1_i32_b32": ("u32", ("u32",), lambda a: (_popcount(a), _nz(_popcount(a)))),
    "s_bcnt0_i32_b32": ("u32", ("u32",), lambda a: (U32(32) - _popcount(a), _nz(U32(32) - _popcount(a)))),
    "s_ctz_i32_b32": ("u32", ("u32",), lambda a: (_ctz(a), None)),
    "s_clz_i32_u32": ("u32", ("u32",), lambda a: (_clz(a), None)),
    "s_sext_i32_i8": ("u32", ("u32",), _sext(8)),
    "s_sext_i32_i16": ("u32", ("u32",), _sext(16)),
    "s_abs_i32": ("u32", ("u32",), lambda a: (np.abs(_u32(a).view(I32)).view(U32), _nz(a))),
    "s_add_u32": ("u32", ("u32", "u32"), lambda a, b: ((_u32(a) + _u32(b)),
                                                       _u32(a).astype(U64) + _u32(b) >= U64(1 << 32))),
    "s_sub_u32": ("u32", ("u32", "u32"), lambda a, b: ((_u32(a) - _u32(b)), _u32(b) > _u32(a))),
    "s_add_i32": ("u32", ("u32", "u32"), lambda a, b: ((_u32(a) + _u32(b)), _add_ovf(a, b, _u32(a) + _u32(b)))),
    "s_sub_i32": ("u32", ("u32", "u32"), lambda a, b: ((_u32(a) - _u32(b)), _sub_ovf(a, b, _u32(a) - _u32(b)))),
    "s_addk_i32": ("u32", ("dst", "k16s"), lambda d, k: ((_u32(d) + _u32(k)), _add_ovf(d, k, _u32(d) + _u32(k)))),
    "s_mulk_i32": ("u32", ("dst", "k16s"), lambda d, k: ((_u32(d) * _u32(k)), None)),
    "s_mul_i32": ("u32", ("u32", "u32"), lambda a, b: ((_u32(a) * _u32(b)), None)),
    "s_mul_hi_u32": ("u32", ("u32", "u32"),
                     lambda a, b: (((_u32(a).astype(U64) * _u32(b).astype(U64)) >> U64(32)).astype(U32), None)),
    "s_mul_hi_i32": ("u32", ("u32", "u32"),
                     lambda a, b: (((_u32(a).view(I32).astype(I64) * _u32(b).view(I32).astype(I64)) >> 32)
                                   .astype(I32).view(U32), None)),
    "s_min_i32": ("u32", ("u32", "u32"), lambda a, b: _minmax(a, b, I32, True)),
    "s_min_u32": ("u32", ("u32", "u32"), lambda a, b: _minmax(a, b, U32, True)),
    "s_max_i32": ("u32", ("u32", "u32"), lambda a, b: _minmax(a, b, I32, False)),
    "s_max_u32": ("u32", ("u32", "u32"), lambda a, b: _minmax(a, b, U32, False)),
    "s_absdiff_i32": ("u32", ("u32", "u32"),
                      lambda a, b: _absdiff(a, b)),
    "s_lshl_b32": ("u32", ("u32", "u32"), _shift("lshl", False)),
    "s_lshr_b32": ("u32", ("u32", "u32"), _shift("lshr", False)),
    "s_ashr_i32": ("u32", ("u32", "u32"), _shift("ashr", False)),
    "s_lshl_b64": ("u64", ("u64", "u32"), _shift("lshl", True)),
    "s_lshr_b64": ("u64", ("u64", "u32"), _shift("lshr", True)),
    "s_ashr_i64": ("u64", ("u64", "u32"), _shift("ashr", True)),
    "s_lshl1_add_u32": ("u32", ("u32", "u32"), _lshl_add(1)),
    "s_lshl2_add_u32": ("u32", ("u32", "u32"), _lshl_add(2)),
    "s_lshl3_add_u32": ("u32", ("u32", "u32"), _lshl_add(3)),
    "s_lshl4_add_u32": ("u32", ("u32", "u32"), _lshl_add(4)),
    "s_bfe_u32": ("u32", ("u32", "u32"), _bfe(False, False)),
    "s_bfe_i32": ("u32", ("u32", "u32"), _bfe(False, True)),
    "s_bfe_u64": ("u64", ("u64", "u32"), _bfe(True, False)),
    "s_bfe_i64": ("u64", ("u64", "u32"), _bfe(True, True)),
    "s_bfm_b32": ("u32", ("u32", "u32"),
                  lambda a, b: ((((U64(1) << (_u32(a) & _31).astype(U64)) - U64(1)).astype(U32) << (_u32(b) & _31)),
                                None)),
    "s_pack_ll_b32_b16": ("u32", ("u32", "u32"), lambda a, b: ((_u32(a) & U32(0xFFFF)) | (_u32(b) << U32(16)), None)),
    "s_pack_lh_b32_b16": ("u32", ("u32", "u32"),
                          lambda a, b: ((_u32(a) & U32(0xFFFF)) | (_u32(b) & U32(0xFFFF0000)), None)),
    "s_pack_hh_b32_b16": ("u32", ("u32", "u32"), lambda a, b: ((_u32(a) >> U32(16)) | (_u32(b) & U32(0xFFFF0000)),
                                                               None)),
}
for _op in ("and", "or", "xor", "nand", "nor", "xnor", "and_not1", "or_not1"):
    SOP[f"s_{_op}_b32"] = ("u32", ("u32", "u32"), _logic(_op, False))
    SOP[f"s_{_op}_b64"] = ("u64", ("u64", "u64"), _logic(_op, True))
# compares: name -> (source types, fn) ; SOPK compares take a 16-bit immediate
SOPC: dict[str, tuple] = {}
for _op in ("eq", "lg", "gt", "ge", "lt", "le"):
    for _t in ("i32", "u32"):
        SOPC[f"s_cmp_{_op}_{_t}"] = (("u32", "u32"), _cmp(_op, _t))
        SOPC[f"s_cmpk_{_op}_{_t}"] = (("u32", "k16s" if _t == "i32" else "k16u"), _cmp(_op, _t))
SOPC["s_cmp_eq_u64"] = (("u64", "u64"), _cmp("eq", "u64"))
SOPC["s_cmp_lg_u64"] = (("u64", "u64"), _cmp("lg", "u64"))
SOPC["s_bitcmp0_b32"] = (("u32", "u32"), lambda a, b: ((_u32(a) >> (_u32(b) & _31)) & U32(1)) == 0)
SOPC["s_bitcmp1_b32"] = (("u32", "u32"), lambda a, b: ((_u32(a) >> (_u32(b) & _31)) & U32(1)) == 1)
SOPC["s_bitcmp0_b64"] = (("u64", "u32"), lambda a, b: ((np.asarray(a, U64) >> (_u32(b) & U32(63)).astype(U64))
                                                       & U64(1)) == 0)
SOPC["s_bitcmp1_b64"] = (("u64", "u32"), lambda a, b: ((np.asarray(a, U64) >> (_u32(b) & U32(63)).astype(U64))
                                                       & U64(1)) == 1)

# saveexec family: new exec as a function of (source, old exec); "wrexec" forms write the new exec to sdst
SAVEEXEC = {
    "and": lambda s, e: s & e, "or": lambda s, e: s | e, "xor": lambda s, e: s ^ e,
    "nand": lambda s, e: ~(s & e), "nor": lambda s, e: ~(s | e), "xnor": lambda s, e: ~(s ^ e),
    "and_not0": lambda s, e: ~s & e, "and_not1": lambda s, e: s & ~e,
    "or_not0": lambda s, e: ~s | e, "or_not1": lambda s, e: s | ~e,
}


def _minmax(a, b, view, is_min):
    x, y = _u32(a).view(view), _u32(b).view(view)
    c = (x < y) if is_min else (x >= y)
    return np.where(c, x, y).view(U32) if view is U32 else np.where(c, x, y).astype(view).view(U32), c


def _absdiff(a, b):
    d = (_u32(a) - _u32(b)).view(I32)
    r = np.abs(d).view(U32)
    return r, _nz(r)


def _k16(op, signed):
    if op.kind != "int":
        raise Unimplemented(f"16-bit immediate expected, found '{op.text}'")
    v = int(op.value) & 0xFFFF
    if signed and v & 0x8000:
        v -= 0x10000
    return np.array(v & 0xFFFF_FFFF, dtype=U32)


def _src(op, typ, dst_reader=None):
    if typ == "dst":
        return dst_reader
    if typ in ("k16s", "k16u"):
        c = _k16(op, typ == "k16s")
        return lambda g: c
    return scalar_source(op, typ)


def salu(stmt):
    """Closure ``g -> None`` executing one SALU statement."""
    name = stmt.mnemonic
    ops = list(stmt.operands)
    if stmt.modifiers:
        raise Unimplemented(f"modifier '{stmt.modifiers[0].text}' on {stmt.mnemonic}")

    if name in ("s_cmov_b32", "s_cmov_b64", "s_cmovk_i32", "s_cselect_b32", "s_cselect_b64"):
        wide = name.endswith("64")
        typ = "u64" if wide else "u32"
        w = scalar_dest(ops[0], typ)
        if name == "s_cmovk_i32":
            src = _src(ops[1], "k16s")
            old = scalar_source(ops[0], typ)
            return lambda g: w(g, np.where(g.scc, src(g), old(g)))
        if name.startswith("s_cmov"):
            src = scalar_source(ops[1], typ)
            old = scalar_source(ops[0], typ)
            return lambda g: w(g, np.where(g.scc, src(g), old(g)))
        a = scalar_source(ops[1], typ)
        b = scalar_source(ops[2], typ)
        return lambda g: w(g, np.where(g.scc, a(g), b(g)))

    if name in SOP:
        dtype, stypes, fn = SOP[name]
        dst_reader = scalar_source(ops[0], dtype) if "dst" in stypes else None
        srcs_ops = ops[1:] if "dst" not in stypes else [ops[0]] + ops[1:]
        if len(srcs_ops) != len(stypes):
            raise Unimplemented(f"{stmt.mnemonic} with {len(ops)} operands")
        readers = [_src(o, t, dst_reader) for o, t in zip(srcs_ops, stypes)]
        w = scalar_dest(ops[0], dtype)
        W_shape = dtype

        def run(g):
            v, scc = fn(*[r(g) for r in readers])
            W = g.waves.size
            w(g, np.broadcast_to(np.asarray(v, U64 if W_shape in WIDE else U32), (W,)))
            if scc is not None:
                g.scc = np.broadcast_to(scc, (W,)).copy()
        if len(readers) == 1:
            r0, = readers

            def run(g):  # noqa: F811
                v, scc = fn(r0(g))
                W = g.waves.size
                w(g, np.broadcast_to(np.asarray(v, U64 if W_shape in WIDE else U32), (W,)))
                if scc is not None:
                    g.scc = np.broadcast_to(scc, (W,)).copy()
        return run

    if name in ("s_addc_u32", "s_subb_u32"):
        w = scalar_dest(ops[0], "u32")
        a = scalar_source(ops[1], "u32")
        b = scalar_source(ops[2], "u32")
        add = name == "s_addc_u32"

        def run(g):
            x = a(g).astype(U64)
            y = b(g).astype(U64)
            c = g.scc.astype(U64)
            if add:
                t = x + y + c
                carry = t >= U64(1 << 32)
            else:
                t = x - y - c
                carry = (y + c) > x
            W = g.waves.size
            w(g, np.broadcast_to((t & U64(0xFFFF_FFFF)).astype(U32), (W,)))
            g.scc = np.broadcast_to(carry, (W,)).copy()
        return run

    if name in SOPC:
        stypes, fn = SOPC[name]
        if len(ops) != 2:
            raise Unimplemented(f"{stmt.mnemonic} with {len(ops)} operands")
        ra, rb = (_src(o, t) for o, t in zip(ops, stypes))

        def run(g):
            g.scc = np.broadcast_to(fn(ra(g), rb(g)), (g.waves.size,)).copy()
        return run

    if name.startswith("s_") and ("_saveexec_" in name or "_wrexec_" in name) and name.endswith("_b32"):
        kind = name[2:].split("_saveexec")[0].split("_wrexec")[0]
        f = SAVEEXEC.get(kind)
        if f is None:
            raise Unimplemented(f"opcode '{stmt.mnemonic}' is not implemented by the emulator")
        w = scalar_dest(ops[0], "u32")
        src = scalar_source(ops[1], "u32")
        wr = "_wrexec_" in name

        def run(g):
            s = np.broadcast_to(src(g), (g.waves.size,)).astype(U32)
            old = g.S[EXEC_LO].copy()
            new = f(s, old).astype(U32)
            g.S[EXEC_LO] = new
            w(g, new if wr else old)
            g.update_exec()
            g.scc = new != 0
        return run

    if name in ("s_bitset0_b32", "s_bitset1_b32"):
        w = scalar_dest(ops[0], "u32")
        old = scalar_source(ops[0], "u32")
        bit = scalar_source(ops[1], "u32")
        one = name.endswith("1_b32")

        def run(g):
            m = U32(1) << (np.asarray(bit(g), U32) & _31)
            v = old(g) | m if one else old(g) & ~m
            w(g, np.broadcast_to(v, (g.waves.size,)))
        return run
    raise Unimplemented(f"opcode '{stmt.mnemonic}' is not implemented by the emulator")


# ------------------------------------------------------------------------- program control

# The emulator's memory is coherent, so the cache invalidations a WGP-mode acquire fence emits
# (buffer_gl0_inv, buffer_gl1_inv) change no value.
_NOPS = {"s_nop", "s_delay_alu", "s_clause", "s_set_inst_prefetch_distance", "s_inst_prefetch", "s_setprio",
         "s_sleep", "s_code_end", "s_icache_inv", "s_dcache_inv", "s_wait_idle", "s_waitcnt_expcnt",
         "s_waitcnt_depctr", "s_ttracedata", "s_ttracedata_imm", "buffer_gl0_inv", "buffer_gl1_inv"}


def control(instr, stmt, labels):
    """Closure for SOPP-style statements (branches, waits, barrier, end, no-ops), or None."""
    name = stmt.mnemonic
    if name in _NOPS:
        if name == "s_waitcnt_expcnt":
            return lambda g: None
        return lambda g: None
    if name == "s_endpgm":
        return lambda g: STOP_END
    if name == "s_barrier":
        return lambda g: STOP_BARRIER
    if name == "s_sendmsg":
        text = " ".join(o.text for o in stmt.operands).lower()
        if "dealloc_vgprs" in text:
            return lambda g: None
        raise Unimplemented(f"s_sendmsg {text}")
    if name.startswith("s_waitcnt"):
        th = wait_thresholds(instr)
        if th is None:
            if name == "s_waitcnt_depctr":
                return lambda g: None
            raise Unimplemented(f"cannot decode {stmt.mnemonic} operands")
        waits = [(q, th[c]) for c, q in (("vmcnt", "vm"), ("vscnt", "vs"), ("lgkmcnt", "lgkm")) if c in th]
        if len(waits) == 1:
            (q0, n0), = waits
            return lambda g: g.wait(q0, n0)

        def run(g):
            for q, n in waits:
                g.wait(q, n)
        return run
    if name == "s_branch" or name.startswith("s_cbranch_"):
        target = None
        for op in stmt.operands:
            if op.kind in ("label", "expr"):
                target = op.text
        if target is None or target not in labels:
            raise Unimplemented(f"branch target '{target}' is not a label of this file")
        t = labels[target]
        if name == "s_branch":
            return lambda g: t
        cond = name[len("s_cbranch_"):]
        tests = {
            "scc0": lambda g: ~g.scc,
            "scc1": lambda g: g.scc,
            "vccz": lambda g: g.S[VCC_LO] == 0,
            "vccnz": lambda g: g.S[VCC_LO] != 0,
            "execz": lambda g: g.S[EXEC_LO] == 0,
            "execnz": lambda g: g.S[EXEC_LO] != 0,
        }
        test = tests.get(cond)
        if test is None:
            raise Unimplemented(f"opcode '{name}' is not implemented by the emulator")

        def run(g):
            c = test(g)
            if c.all():
                return t
            if not c.any():
                return None
            g.state = ("split", c, t)
            return STOP_SPLIT
        return run
    return None
