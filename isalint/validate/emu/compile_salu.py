"""Compile SALU (SOP1, SOP2, SOPK, SOPC) and program control (SOPP) statements.

Scalar values are ``[W]`` vectors (one lane per wave of the group); SCC is a ``[W]`` bool. What each
opcode computes is its definition in :mod:`isalint.isa.semantics`, run on :data:`.algebra.NP`; this
module binds the definition's inputs and outputs to the statement's operands and the wave state.
"""
from __future__ import annotations

import numpy as np

from ...isa.semantics import BindingError, binding
from ...model.waitcnt import wait_thresholds
from .algebra import NP
from .errors import Unimplemented
from .machine import EXEC_LO, STOP_BARRIER, STOP_END, STOP_SPLIT, U32, U64, VCC_LO
from .operands import WIDE, scalar_dest, scalar_source


def _k16(op, signed):
    if op.kind != "int":
        raise Unimplemented(f"16-bit immediate expected, found '{op.text}'")
    v = int(op.value) & 0xFFFF
    if signed and v & 0x8000:
        v -= 0x10000
    return np.array(v & 0xFFFF_FFFF, dtype=U32)


def _reader(slot, ops):
    """``g -> value`` of one input of a SALU definition."""
    if slot.kind == "state":
        if slot.ref == "SCC":
            return lambda g: g.scc
        if slot.ref == "EXEC":
            if slot.type in WIDE:
                return lambda g: g.S[EXEC_LO].astype(U64) | (g.S[EXEC_LO + 1].astype(U64) << U64(32))
            return lambda g: g.S[EXEC_LO].copy()  # EXEC is written before D0 reads the old value
        raise Unimplemented(f"{slot.ref} as a scalar source")
    op = ops[slot.ref]
    if slot.type in ("i16", "u16"):
        c = _k16(op, slot.type == "i16")
        return lambda g: c
    return scalar_source(op, "u64" if slot.type in WIDE else "u32")


def _writer(slot, ops):
    """``(g, value)`` writing one output of a SALU definition."""
    if slot.kind == "state":
        if slot.ref == "SCC":
            def scc(g, v):
                g.scc = np.broadcast_to(v, (g.waves.size,)).copy()
            return scc
        if slot.ref == "EXEC":
            if slot.type in WIDE:
                def wexec64(g, v):
                    v = np.broadcast_to(np.asarray(v, U64), (g.waves.size,))
                    g.S[EXEC_LO] = (v & U64(0xFFFF_FFFF)).astype(U32)
                    g.S[EXEC_LO + 1] = (v >> U64(32)).astype(U32)
                    g.update_exec()
                return wexec64

            def wexec(g, v):
                g.S[EXEC_LO] = np.broadcast_to(np.asarray(v, U32), (g.waves.size,))
                g.update_exec()
            return wexec
        raise Unimplemented(f"{slot.ref} as a scalar destination")
    typ = "u64" if slot.type in WIDE else "u32"
    w = scalar_dest(ops[slot.ref], typ)
    dtype = U64 if typ == "u64" else U32

    def write(g, v):
        w(g, np.broadcast_to(np.asarray(v, dtype), (g.waves.size,)))
    return write


def salu(stmt):
    """Closure ``g -> None`` executing one SALU statement."""
    if stmt.modifiers:
        raise Unimplemented(f"modifier '{stmt.modifiers[0].text}' on {stmt.mnemonic}")
    ops = list(stmt.operands)
    try:
        b = binding(stmt.mnemonic, len(ops))
    except BindingError:
        raise Unimplemented(f"opcode '{stmt.mnemonic}' is not implemented by the emulator") from None
    fn = b.op.fn
    readers = [_reader(s, ops) for s in b.ins]
    writers = [_writer(s, ops) for s in b.outs]
    if len(writers) == 1:
        (w0,) = writers
        if len(readers) == 1:
            (r0,) = readers
            return lambda g: w0(g, fn(NP, r0(g))[0])
        if len(readers) == 2:
            r0, r1 = readers
            return lambda g: w0(g, fn(NP, r0(g), r1(g))[0])
    if len(writers) == 2 and len(readers) == 2:
        w0, w1 = writers
        r0, r1 = readers

        def run2(g):
            v0, v1 = fn(NP, r0(g), r1(g))
            w0(g, v0)
            w1(g, v1)
        return run2

    def run(g):
        for w, v in zip(writers, fn(NP, *[r(g) for r in readers])):
            w(g, v)
    return run


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
