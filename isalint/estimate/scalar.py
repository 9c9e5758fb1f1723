"""The control flow one wave takes: the kernel's scalar program run on concrete values.

A GEMM kernel's loops are uniform: their counters live in SGPRs and their bounds come from the
kernel arguments (``N``) and the workgroup id. So the path of a wave is found by executing the
scalar instructions (SALU, scalar loads of the kernel arguments, the branches) with the launch's
real values, block by block, and ignoring the vector work. Values the scalar program cannot know
(anything a VALU instruction writes to an SGPR, VCC or EXEC, loads from buffers) are *unknown*.

Initial state: the user and system SGPRs of :mod:`isalint.model.launch` (the kernarg pointer, the
workgroup ids), EXEC with every lane of a full wave set.

A branch on an unknown condition is a guess, reported as a note: forward branches are taken to
fall through (for ``s_cbranch_execz`` that is "some lane is active", true for a GEMM whose N is a
multiple of its tile); a loop whose exit depends on an unknown value is an error.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from ..model.launch import AbiError, Launch, initial_sgprs, kernarg_segment, kernel_args, sgpr_layout

M32 = 0xFFFFFFFF
M64 = (1 << 64) - 1
KERNARG_BASE = 0x7F0000000000  # where the walk places the kernel argument segment


class TraceError(Exception):
    """The control flow cannot be followed; ``line`` is where."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


@dataclass
class Trace:
    blocks: list[int]  # block ids in execution order
    instructions: int  # instructions executed
    notes: list[str] = field(default_factory=list)


def gemm_launch(grid, block, n: int, alpha: float = 1.0, beta: float = 0.0) -> Launch:
    """The GEMM ABI ``(a, b, c, N, alpha, beta)``: N and the two scalars are arguments 3, 4 and 5; the path
    followed is the middle workgroup's."""
    gx, gy, gz = grid
    return Launch(tuple(grid), tuple(block), {3: n & M32, 4: float(alpha), 5: float(beta)},
                  group=(gx // 2, gy // 2, gz // 2))


class _State:
    __slots__ = ("r", "kernarg")

    def __init__(self):
        self.r: dict[str, int | None] = {}
        self.kernarg: dict[int, int] = {}


def _entry(kernel, launch: Launch) -> _State:
    st = _State()
    d = kernel.descriptor
    try:
        layout = sgpr_layout(d)
    except AbiError as exc:
        raise TraceError(str(exc)) from None
    for s, value in initial_sgprs(layout, launch.group, {"kernarg_segment_ptr": KERNARG_BASE}).items():
        st.r[f"s{s}"] = value
    wave = 32 if d.get(".amdhsa_wavefront_size32", 1) else 64
    st.r["exec_lo"] = M32
    st.r["exec_hi"] = 0 if wave == 32 else M32
    segment, known = kernarg_segment(kernel_args(kernel), launch, complete=False)
    st.kernarg = {i: b for i, (b, k) in enumerate(zip(segment, known)) if k}
    return st


# ---------------------------------------------------------------------------------------------
# Scalar semantics (RDNA3 ISA guide, chapter "Scalar ALU operations"): ``fn(a, b, scc) -> (result,
# scc)``; ``None`` for scc means "unchanged". Values are Python ints, masked to the width.

def _s32(x: int) -> int:
    x &= M32
    return x - (1 << 32) if x & 0x80000000 else x


def _ovf(r: int) -> int:
    return int(r < -(1 << 31) or r > (1 << 31) - 1)


def _bfe(a: int, b: int, signed: bool, width: int = 32) -> int:
    off, w = b & (width - 1), (b >> 16) & 0x7F
    if w == 0:
        return 0
    v = (a >> off) & ((1 << w) - 1)
    if signed and w < width and v >> (w - 1) & 1:
        v -= 1 << w
    return v & ((1 << width) - 1)


_BIN32 = {
    "s_add_u32": lambda a, b, c: ((a + b) & M32, int(a + b > M32)),
    "s_addc_u32": lambda a, b, c: ((a + b + c) & M32, int(a + b + c > M32)),
    "s_sub_u32": lambda a, b, c: ((a - b) & M32, int(b > a)),
    "s_subb_u32": lambda a, b, c: ((a - b - c) & M32, int(b + c > a)),
    "s_add_i32": lambda a, b, c: ((a + b) & M32, _ovf(_s32(a) + _s32(b))),
    "s_sub_i32": lambda a, b, c: ((a - b) & M32, _ovf(_s32(a) - _s32(b))),
    "s_mul_i32": lambda a, b, c: ((_s32(a) * _s32(b)) & M32, None),
    "s_mul_hi_u32": lambda a, b, c: ((a * b) >> 32, None),
    "s_mul_hi_i32": lambda a, b, c: (((_s32(a) * _s32(b)) >> 32) & M32, None),
    "s_lshl_b32": lambda a, b, c: (r := (a << (b & 31)) & M32, int(r != 0)),
    "s_lshr_b32": lambda a, b, c: (r := a >> (b & 31), int(r != 0)),
    "s_ashr_i32": lambda a, b, c: (r := (_s32(a) >> (b & 31)) & M32, int(r != 0)),
    "s_lshl1_add_u32": lambda a, b, c: ((r := (a << 1) + b) & M32, int(r > M32)),
    "s_lshl2_add_u32": lambda a, b, c: ((r := (a << 2) + b) & M32, int(r > M32)),
    "s_lshl3_add_u32": lambda a, b, c: ((r := (a << 3) + b) & M32, int(r > M32)),
    "s_lshl4_add_u32": lambda a, b, c: ((r := (a << 4) + b) & M32, int(r > M32)),
    "s_and_b32": lambda a, b, c: (r := a & b, int(r != 0)),
    "s_or_b32": lambda a, b, c: (r := a | b, int(r != 0)),
    "s_xor_b32": lambda a, b, c: (r := a ^ b, int(r != 0)),
    "s_and_not1_b32": lambda a, b, c: (r := a & ~b & M32, int(r != 0)),
    "s_andn2_b32": lambda a, b, c: (r := a & ~b & M32, int(r != 0)),
    "s_or_not1_b32": lambda a, b, c: (r := (a | ~b) & M32, int(r != 0)),
    "s_orn2_b32": lambda a, b, c: (r := (a | ~b) & M32, int(r != 0)),
    "s_nand_b32": lambda a, b, c: (r := ~(a & b) & M32, int(r != 0)),
    "s_nor_b32": lambda a, b, c: (r := ~(a | b) & M32, int(r != 0)),
    "s_xnor_b32": lambda a, b, c: (r := ~(a ^ b) & M32, int(r != 0)),
    "s_min_i32": lambda a, b, c: (a if _s32(a) < _s32(b) else b, int(_s32(a) < _s32(b))),
    "s_max_i32": lambda a, b, c: (a if _s32(a) > _s32(b) else b, int(_s32(a) > _s32(b))),
    "s_min_u32": lambda a, b, c: (min(a, b), int(a < b)),
    "s_max_u32": lambda a, b, c: (max(a, b), int(a > b)),
    "s_absdiff_i32": lambda a, b, c: (r := abs(_s32(a) - _s32(b)) & M32, int(r != 0)),
    "s_bfe_u32": lambda a, b, c: (r := _bfe(a, b, False), int(r != 0)),
    "s_bfe_i32": lambda a, b, c: (r := _bfe(a, b, True), int(r != 0)),
    "s_bfm_b32": lambda a, b, c: ((((1 << (a & 31)) - 1) << (b & 31)) & M32, None),
    "s_cselect_b32": lambda a, b, c: (a if c else b, None),
    "s_pack_ll_b32_b16": lambda a, b, c: ((a & 0xFFFF) | ((b & 0xFFFF) << 16), None),
    "s_pack_lh_b32_b16": lambda a, b, c: ((a & 0xFFFF) | (b & 0xFFFF0000), None),
    "s_pack_hh_b32_b16": lambda a, b, c: ((a >> 16) | (b & 0xFFFF0000), None),
}

_BIN64 = {
    "s_and_b64": lambda a, b, c: (r := a & b, int(r != 0)),
    "s_or_b64": lambda a, b, c: (r := a | b, int(r != 0)),
    "s_xor_b64": lambda a, b, c: (r := a ^ b, int(r != 0)),
    "s_and_not1_b64": lambda a, b, c: (r := a & ~b & M64, int(r != 0)),
    "s_andn2_b64": lambda a, b, c: (r := a & ~b & M64, int(r != 0)),
    "s_or_not1_b64": lambda a, b, c: (r := (a | ~b) & M64, int(r != 0)),
    "s_cselect_b64": lambda a, b, c: (a if c else b, None),
    "s_lshl_b64": lambda a, b, c: (r := (a << (b & 63)) & M64, int(r != 0)),
    "s_lshr_b64": lambda a, b, c: (r := a >> (b & 63), int(r != 0)),
    "s_ashr_i64": lambda a, b, c: (r := ((a - (1 << 64) if a >> 63 else a) >> (b & 63)) & M64, int(r != 0)),
    "s_bfe_u64": lambda a, b, c: (r := _bfe(a, b, False, 64), int(r != 0)),
    "s_bfe_i64": lambda a, b, c: (r := _bfe(a, b, True, 64), int(r != 0)),
}
_SHIFT_B_IS_32 = frozenset({"s_lshl_b64", "s_lshr_b64", "s_ashr_i64", "s_bfe_u64", "s_bfe_i64"})

_UN32 = {
    "s_mov_b32": lambda a, c: (a, None),
    "s_not_b32": lambda a, c: (r := ~a & M32, int(r != 0)),
    "s_abs_i32": lambda a, c: (r := abs(_s32(a)) & M32, int(r != 0)),
    "s_brev_b32": lambda a, c: (int(f"{a:032b}"[::-1], 2), None),
    "s_sext_i32_i8": lambda a, c: ((a & 0xFF) - (0x100 if a & 0x80 else 0) & M32, None),
    "s_sext_i32_i16": lambda a, c: ((a & 0xFFFF) - (0x10000 if a & 0x8000 else 0) & M32, None),
    "s_bcnt1_i32_b32": lambda a, c: (r := bin(a).count("1"), int(r != 0)),
    "s_bcnt0_i32_b32": lambda a, c: (r := 32 - bin(a).count("1"), int(r != 0)),
}
_UN64 = {
    "s_mov_b64": lambda a, c: (a, None),
    "s_not_b64": lambda a, c: (r := ~a & M64, int(r != 0)),
}

_CMP = {
    "eq": lambda a, b: a == b, "lg": lambda a, b: a != b, "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
}

# s_<op>_saveexec_b32 sdst, ssrc: sdst = EXEC; EXEC = f(ssrc, EXEC); SCC = EXEC != 0
_SAVEEXEC = {
    "and": lambda s, e: s & e, "or": lambda s, e: s | e, "xor": lambda s, e: s ^ e,
    "and_not1": lambda s, e: s & ~e, "andn2": lambda s, e: s & ~e,
    "and_not0": lambda s, e: ~e & s, "andn1": lambda s, e: ~e & s,
    "or_not1": lambda s, e: s | ~e, "orn2": lambda s, e: s | ~e,
    "nand": lambda s, e: ~(s & e), "nor": lambda s, e: ~(s | e), "xnor": lambda s, e: ~(s ^ e),
}


class _Exec:
    """Executes the scalar effects of one instruction on a :class:`_State`."""

    def __init__(self, wave: int):
        self.mask = M32 if wave == 32 else M64

    @staticmethod
    def read(st: _State, op, width: int = 32) -> int | None:
        kind = op.kind
        if kind == "int":
            v = int(op.value)
            return v & (M32 if width == 32 else M64)
        if kind == "float":
            bits = struct.unpack("<I", struct.pack("<f", float(op.value)))[0]
            return bits
        if kind in ("sgpr", "special", "ttmp"):
            if op.kind == "special" and op.file == "scc":
                return st.r.get("scc")
            regs = op.registers()
            if not regs:
                return 0 if op.file == "null" else None
            if width == 64 and len(regs) == 1:
                regs = regs + [None]
            vals = [st.r.get(x) if x else 0 for x in regs[: 2 if width == 64 else 1]]
            if any(v is None for v in vals):
                return None
            return vals[0] if width == 32 else vals[0] | (vals[1] << 32)
        return None

    @staticmethod
    def write(st: _State, op, value: int | None, width: int = 32) -> None:
        regs = op.registers()
        if width == 64:
            lo = None if value is None else value & M32
            hi = None if value is None else (value >> 32) & M32
            for r, v in zip(regs, (lo, hi)):
                st.r[r] = v
        elif regs:
            st.r[regs[0]] = value

    def step(self, st: _State, ins) -> None:
        """Apply ``ins`` (one instruction, not a branch) to the scalar state."""
        klass = ins.klass
        if klass in ("salu", "smem"):
            stmt = ins.stmts[0]
            if not self._scalar(st, stmt):
                self._unknown_defs(st, ins)
            return
        if klass == "waitcnt":
            return
        self._unknown_defs(st, ins)

    @staticmethod
    def _unknown_defs(st: _State, ins) -> None:
        for r in ins.defs:
            if r[0] == "s" or r in ("vcc_lo", "vcc_hi", "exec_lo", "exec_hi", "scc", "m0"):
                st.r[r] = None

    def _scalar(self, st: _State, stmt) -> bool:
        m = stmt.mnemonic
        ops = stmt.operands
        r = self.read
        if m.startswith("s_load_") and len(ops) >= 3:
            return self._load(st, stmt)
        if m in _BIN32 and len(ops) == 3:
            a, b, c = r(st, ops[1]), r(st, ops[2]), st.r.get("scc")
            if a is None or b is None or (c is None and m in ("s_addc_u32", "s_subb_u32", "s_cselect_b32")):
                return False
            res, scc = _BIN32[m](a, b, c)
            self.write(st, ops[0], res & M32)
            if scc is not None:
                st.r["scc"] = scc
            return True
        if m in _BIN64 and len(ops) == 3:
            a = r(st, ops[1], 64)
            b = r(st, ops[2], 32 if m in _SHIFT_B_IS_32 else 64)
            c = st.r.get("scc")
            if a is None or b is None or (c is None and m == "s_cselect_b64"):
                return False
            res, scc = _BIN64[m](a, b, c)
            self.write(st, ops[0], res, 64)
            if scc is not None:
                st.r["scc"] = scc
            return True
        if m in _UN32 and len(ops) == 2:
            a = r(st, ops[1])
            if a is None:
                return False
            res, scc = _UN32[m](a, st.r.get("scc"))
            self.write(st, ops[0], res & M32)
            if scc is not None:
                st.r["scc"] = scc
            return True
        if m in _UN64 and len(ops) == 2:
            a = r(st, ops[1], 64)
            if a is None:
                return False
            res, scc = _UN64[m](a, st.r.get("scc"))
            self.write(st, ops[0], res, 64)
            if scc is not None:
                st.r["scc"] = scc
            return True
        if m in ("s_cmov_b32", "s_cmovk_i32") and len(ops) == 2:
            c = st.r.get("scc")
            if c is None:
                return False
            if c:
                v = r(st, ops[1])
                if m == "s_cmovk_i32" and v is not None:
                    v = _simm16(v)
                self.write(st, ops[0], v)
            return True
        if m.startswith("s_cmp_") or m.startswith("s_cmpk_"):
            return self._compare(st, stmt)
        if m in ("s_movk_i32",):
            v = r(st, ops[1])
            self.write(st, ops[0], None if v is None else _simm16(v))
            return True
        if m in ("s_addk_i32", "s_mulk_i32") and len(ops) == 2:
            a, v = r(st, ops[0]), r(st, ops[1])
            if a is None or v is None:
                return False
            k = _s32(_simm16(v))
            if m == "s_addk_i32":
                self.write(st, ops[0], (a + k) & M32)
                st.r["scc"] = _ovf(_s32(a) + k)
            else:
                self.write(st, ops[0], (_s32(a) * k) & M32)
            return True
        if m.endswith("_saveexec_b32") or m.endswith("_saveexec_b64"):
            op = m[2:].rsplit("_saveexec", 1)[0]
            fn = _SAVEEXEC.get(op)
            width = 64 if m.endswith("b64") else 32
            exec_now = st.r.get("exec_lo") if width == 32 else None
            if width == 64 and st.r.get("exec_lo") is not None and st.r.get("exec_hi") is not None:
                exec_now = st.r["exec_lo"] | (st.r["exec_hi"] << 32)
            src = r(st, ops[1], width)
            self.write(st, ops[0], exec_now, width)
            if fn is None or src is None or exec_now is None:
                st.r["exec_lo"] = None
                st.r["scc"] = None
                return True
            new = fn(src, exec_now) & (M32 if width == 32 else M64)
            st.r["exec_lo"] = new & M32
            if width == 64:
                st.r["exec_hi"] = new >> 32
            st.r["scc"] = int(new != 0)
            return True
        return False

    def _compare(self, st: _State, stmt) -> bool:
        m = stmt.mnemonic
        ops = stmt.operands
        parts = m.split("_")  # s_cmp_eq_u32 / s_cmpk_lg_i32 / s_bitcmp...
        if len(parts) != 4 or len(ops) != 2:
            st.r["scc"] = None
            return True
        rel, typ = parts[2], parts[3]
        width = 64 if typ.endswith("64") else 32
        a, b = self.read(st, ops[0], width), self.read(st, ops[1], width)
        if a is None or b is None or rel not in _CMP:
            st.r["scc"] = None
            return True
        if parts[1] == "cmpk":
            b = b & 0xFFFF
            if typ == "i32":
                b = _simm16(b)
        if typ.startswith("i"):
            a, b = _s32(a), _s32(b)
        st.r["scc"] = int(_CMP[rel](a, b))
        return True

    def _load(self, st: _State, stmt) -> bool:
        m = stmt.mnemonic
        ops = stmt.operands
        dwords = {"s_load_b32": 1, "s_load_b64": 2, "s_load_b96": 3, "s_load_b128": 4, "s_load_b256": 8,
                  "s_load_b512": 16}.get(m)
        if dwords is None:
            return False
        base = self.read(st, ops[1], 64)
        off = self.read(st, ops[2]) if ops[2].kind != "int" else int(ops[2].value)
        mod = stmt.modifier("offset")
        if mod is not None and mod.int_value() is not None:
            off = (off or 0) + mod.int_value()
        regs = ops[0].registers()
        for k, reg in enumerate(regs[:dwords]):
            val = None
            if base is not None and off is not None:
                addr = base + off + 4 * k - KERNARG_BASE
                bs = [st.kernarg.get(addr + i) for i in range(4)]
                if all(x is not None for x in bs):
                    val = bs[0] | bs[1] << 8 | bs[2] << 16 | bs[3] << 24
            st.r[reg] = val
        return True


def _simm16(v: int) -> int:
    v &= 0xFFFF
    return (v - 0x10000 if v & 0x8000 else v) & M32


def _branch_taken(st: _State, mnemonic: str) -> bool | None:
    if mnemonic == "s_branch":
        return True
    cond = mnemonic[len("s_cbranch_"):] if mnemonic.startswith("s_cbranch_") else ""
    if cond in ("scc0", "scc1"):
        c = st.r.get("scc")
        return None if c is None else bool(c) == (cond == "scc1")
    if cond in ("vccz", "vccnz"):
        v = st.r.get("vcc_lo")
        return None if v is None else (v == 0) == (cond == "vccz")
    if cond in ("execz", "execnz"):
        v = st.r.get("exec_lo")
        return None if v is None else (v == 0) == (cond == "execz")
    return False  # s_cbranch_cdbg*: debugger branches, never taken in a normal run


_SCALAR_DEFS = frozenset({"vcc_lo", "vcc_hi", "exec_lo", "exec_hi", "scc", "m0"})


def trace(program, kernel, cfg, launch: Launch, limit: int = 20_000_000) -> Trace:
    """The blocks one wave of ``launch.group`` executes, in order, from the kernel's entry to s_endpgm."""
    instrs = program.instrs
    blocks = cfg.blocks
    wave = kernel.wave_size
    ex = _Exec(wave)
    st = _entry(kernel, launch)
    # per block: the instructions with scalar effects, and the terminator
    effects: dict[int, list] = {}
    out: list[int] = []
    notes: dict[int, str] = {}
    b = cfg.block_of[kernel.first] if kernel.first < len(instrs) else None
    count = 0
    while b is not None:
        blk = blocks[b]
        out.append(b)
        count += blk.last - blk.first
        if count > limit:
            raise TraceError(f"the control flow did not reach s_endpgm within {limit} instructions "
                             "(a loop whose exit the scalar program does not decide?)",
                             instrs[blk.first].lineno)
        ops = effects.get(b)
        if ops is None:
            ops = effects[b] = [i for i in instrs[blk.first:blk.last]
                                if i.klass in ("salu", "smem", "endpgm")
                                or (i.klass != "branch" and any(r[0] == "s" or r in _SCALAR_DEFS for r in i.defs))]
        for ins in ops:
            if ins.klass == "branch":
                continue
            if ins.ends_program():
                b = None
                break
            ex.step(st, ins)
        if b is None:
            break
        term = instrs[blk.last - 1] if blk.last > blk.first else None
        if term is not None and term.ends_program():
            break
        nxt = blk.id + 1 if blk.id + 1 < len(blocks) else None
        if term is not None and term.klass == "branch":
            target = term.branch_target()
            if target is None or target not in program.labels:
                raise TraceError(f"branch to an unknown target {target!r}", term.lineno)
            tblock = cfg.block_of[program.labels[target]]
            taken = _branch_taken(st, term.opcode)
            if taken is None:
                if blocks[tblock].first <= term.index:
                    raise TraceError(f"the exit of the loop at line {instrs[blocks[tblock].first].lineno} depends "
                                     f"on a value the scalar program does not know ({term.opcode}); its trip "
                                     "count cannot be found from the kernel arguments", term.lineno)
                notes[term.lineno] = (f"line {term.lineno}: {term.opcode} on a value only the vector unit "
                                      "knows; assumed to fall through")
                taken = False
            if taken:
                nxt = tblock
            elif term.opcode == "s_branch":
                nxt = tblock
        elif term is not None and term.opcode in ("s_setpc_b64", "s_swappc_b64"):
            raise TraceError("indirect jump: the path cannot be followed", term.lineno)
        b = nxt
    return Trace(out, count, list(notes.values()))
