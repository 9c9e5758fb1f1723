"""The control flow one wave takes: the kernel's scalar program run on concrete values.

A GEMM kernel's loops are uniform: their counters live in SGPRs and their bounds come from the
kernel arguments (``N``) and the workgroup id. So the path of a wave is found by executing the
scalar instructions (SALU, scalar loads of the kernel arguments, the branches) with the launch's
real values, block by block, and ignoring the vector work. Values the scalar program cannot know
(anything a VALU instruction writes to an SGPR, VCC or EXEC, loads from buffers) are *unknown*, except
the mask of a ``v_cmp_*`` of two scalar operands, which every lane computes alike (EXEC or 0). A load
of a kernel argument the launch gives no value is an error naming it (never a guess).

Initial state: the user and system SGPRs of :mod:`isalint.model.launch` (the kernarg pointer, the
workgroup ids), EXEC with every lane of a full wave set.

A branch on an unknown condition is a guess, reported as a note: forward branches are taken to
fall through (for ``s_cbranch_execz`` that is "some lane is active", true for a GEMM whose N is a
multiple of its tile); a loop whose exit depends on an unknown value is an error.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..isa.constants import ConstantError, constant_bits
from ..isa.semantics import BindingError, ExactAlgebra, binding
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


class UnboundArgument(Exception):
    """The kernel loads an argument the launch gives no value: its path would be a guess."""

    def __init__(self, arg):
        super().__init__(arg.name)
        self.arg = arg


class _State:
    __slots__ = ("r", "kernarg", "args")

    def __init__(self):
        self.r: dict[str, int | None] = {}
        self.kernarg: dict[int, int] = {}
        self.args: list = []  # the visible arguments (a load of one without a value is refused)


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
    args = kernel_args(kernel)
    segment, known = kernarg_segment(args, launch, complete=False)
    st.kernarg = {i: b for i, (b, k) in enumerate(zip(segment, known)) if k}
    st.args = [a for a in args if not a.kind.startswith("hidden_")]
    return st


# ---------------------------------------------------------------------------------------------
# The scalar instructions: their definitions (isalint.isa.semantics) on exact integers, where an
# unknown input makes the outputs that depend on it unknown.

_EXACT = ExactAlgebra()
_WIDE = frozenset({"u64", "i64", "b64"})


class _Exec:
    """Executes the scalar effects of one instruction on a :class:`_State`."""

    def __init__(self, wave: int):
        self.mask = M32 if wave == 32 else M64

    @staticmethod
    def read(st: _State, op, width: int = 32) -> int | None:
        kind = op.kind
        if kind in ("int", "float"):
            try:
                return constant_bits(kind, op.value, "u64" if width == 64 else "u32")
            except ConstantError:
                return None
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
            if not self._scalar(st, stmt, ins.infos[0]):
                self._unknown_defs(st, ins)
            return
        if klass == "waitcnt":
            return
        if ins.opcode.startswith("v_cmp_") and self._uniform_compare(st, ins):
            return
        self._unknown_defs(st, ins)

    def _uniform_compare(self, st: _State, ins) -> bool:
        """``v_cmp_*`` of two scalar operands (SGPRs, constants): every lane compares the same values, so
        the mask it writes is EXEC or 0 (Tensile's ``v_cmp_eq_f32 vcc_lo, alpha, 0``). False when it
        is not such a compare or a value is unknown."""
        parts = ins.opcode.split("_")  # v, cmp, op, type[, e64]
        if len(parts) < 4 or parts[1] != "cmp" or parts[3] not in _CMP_TYPES:
            return False
        op, ty = parts[2], parts[3]
        stmt = ins.stmts[0]
        ops = stmt.operands
        if len(ops) != 3 or any(o.kind not in ("sgpr", "int", "float") for o in ops[1:]):
            return False
        if getattr(stmt, "modifiers", None) and any(getattr(m, "name", "") in ("neg", "abs", "clamp")
                                                     for m in stmt.modifiers):
            return False
        width = 64 if ty.endswith("64") else 32
        a, b = self.read(st, ops[1], width), self.read(st, ops[2], width)
        if a is None or b is None:
            return False
        result = _compare(op, ty, a, b)
        if result is None:
            return False
        exec_lo = st.r.get("exec_lo")
        if exec_lo is None:
            return False
        wide = self.mask != M32
        exec_v = exec_lo | ((st.r.get("exec_hi") or 0) << 32 if wide else 0)
        self.write(st, ops[0], exec_v if result else 0, 64 if wide else 32)
        return True

    @staticmethod
    def _unknown_defs(st: _State, ins) -> None:
        for r in ins.defs:
            if r[0] == "s" or r in ("vcc_lo", "vcc_hi", "exec_lo", "exec_hi", "scc", "m0"):
                st.r[r] = None

    def _scalar(self, st: _State, stmt, info) -> bool:
        m = info.mnemonic if info is not None else stmt.mnemonic
        ops = stmt.operands
        if m.startswith("s_load_") and len(ops) >= 3:
            return self._load(st, stmt)
        try:
            b = binding(m, len(ops))
        except BindingError:
            return False
        args = [self._input(st, slot, ops) for slot in b.ins]
        for slot, value in zip(b.outs, b.op.fn(_EXACT, *args)):
            width = 64 if slot.type in _WIDE else 32
            if slot.kind == "operand":
                self.write(st, ops[slot.ref], value, width)
            elif slot.ref == "SCC":
                st.r["scc"] = value
            elif slot.ref == "EXEC":
                st.r["exec_lo"] = None if value is None else value & M32
                if width == 64:
                    st.r["exec_hi"] = None if value is None else value >> 32
            else:
                return False
        return True

    def _input(self, st: _State, slot, ops) -> int | None:
        width = 64 if slot.type in _WIDE else 32
        if slot.kind == "state":
            if slot.ref == "SCC":
                return st.r.get("scc")
            if slot.ref == "EXEC":
                lo, hi = st.r.get("exec_lo"), st.r.get("exec_hi")
                if width == 32 or lo is None:
                    return lo
                return None if hi is None else lo | hi << 32
            return None
        v = self.read(st, ops[slot.ref], width)
        if v is not None and slot.type in ("i16", "u16"):  # SIMM16, sign- or zero-extended
            v &= 0xFFFF
            if slot.type == "i16" and v & 0x8000:
                v = (v - 0x10000) & M32
        return v

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
                else:
                    for a in st.args:
                        if a.offset < addr + 4 and addr < a.offset + a.size:
                            raise UnboundArgument(a)
            st.r[reg] = val
        return True


_CMP_TYPES = frozenset({"f32", "i32", "u32", "f64", "i64", "u64"})


def _compare(op: str, ty: str, a: int, b: int) -> bool | None:
    """The VOPC comparison ``op`` of type ``ty`` on raw operand bits (None: not one modelled)."""
    import math
    import struct

    if ty == "f32":
        x, y = (struct.unpack("<f", struct.pack("<I", v & M32))[0] for v in (a, b))
    elif ty == "f64":
        x, y = (struct.unpack("<d", struct.pack("<Q", v & M64))[0] for v in (a, b))
    elif ty[0] == "i":
        bits = 64 if ty.endswith("64") else 32
        x, y = (v - (1 << bits) if v >> (bits - 1) & 1 else v for v in (a & ((1 << bits) - 1), b & ((1 << bits) - 1)))
    else:
        x, y = a, b
    unordered = ty[0] == "f" and (math.isnan(x) or math.isnan(y))
    table = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y,
             "lg": x != y and not unordered, "f": False, "t": True, "o": not unordered, "u": unordered,
             "neq": not (x == y), "nlg": not (x < y or x > y), "ngt": not (x > y), "nge": not (x >= y),
             "nlt": not (x < y), "nle": not (x <= y)}
    if op not in table or (ty[0] != "f" and op in ("lg", "o", "u", "neq", "nlg", "ngt", "nge", "nlt", "nle")):
        return None
    return table[op]


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
            try:
                ex.step(st, ins)
            except UnboundArgument as exc:
                a = exc.arg
                raise TraceError(f"the kernel reads argument {a.name} (#{a.index}, {a.kind}, {a.size} bytes, "
                                 f"offset {a.offset}) and nothing binds it: give --arg {a.name}=VALUE",
                                 ins.lineno) from None
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
            tblock = cfg.label_block(program, target)
            if tblock is None:
                raise TraceError(f"branch to {target}, after the last instruction: the path leaves the code",
                                 term.lineno)
            taken = _branch_taken(st, term.opcode)
            if taken is None:
                # s_cbranch_execz skips code no lane runs: some lane of a GEMM's middle workgroup does, in
                # whichever direction it jumps (clang places such a skip backwards within a loop body too)
                if blocks[tblock].first <= term.index and term.opcode != "s_cbranch_execz":
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
