"""Register liveness over the CFG: which registers hold a value some later instruction reads.

Exact at register granularity for what the program model knows: every register an
instruction reads (explicit operands and implicit ones such as ``exec_lo``,
``vcc_lo``, ``scc``) is a use, every register it writes is a def. A def kills
(ends) the earlier value except when it writes only part of the register: a
``.l``/``.h`` half, a 16-bit destination, or a ``*_d16*`` load, which keep the
other half. As in the compiler, a VALU write counts as a whole-register write
even when EXEC masks lanes off. An instruction isalint cannot decode reads every
register written on its line and kills none; ``s_setpc``/``s_swappc``/``s_call``
read everything (the callee is unknown).

Sets are Python ints used as bit sets (v0-v255 are bits 0-255, s0-s105 bits
256-361, other registers get bits from 400 on), so a whole kernel's fixed point
takes a few milliseconds.

API:

* :func:`liveness(program)` -> :class:`Liveness` (cached per program):
  ``live_in(i)``/``live_out(i)`` (frozensets of names) and the ``*_mask`` ints,
  ``block_live_in(b)``/``block_live_out(b)``, ``is_live_in(i, reg)``,
  ``live_vgprs(i)``, ``max_live_vgprs(kernel)``.
* :func:`ignorable_reads(instr, live_after)`: VGPRs an instruction reads that no live result
  depends on (the dead high half of a 64-bit multiply-add), which a rewrite may leave out of the
  liveness it computes.
* :func:`free_vgprs(program, kernel, at_indices)` -> sorted VGPR numbers below the
  kernel's allocation that hold nothing needed at any of those instructions (not
  live across, not read or written there, and not the destination of a load still
  in flight), i.e. safe scratch registers for a rewrite of exactly those
  instructions.
"""
from __future__ import annotations

from collections.abc import Iterable

from ..hw.registers import SGPRS, VGPRS
_BITS: dict[str, int] = {}
_NAMES: dict[int, str] = {}
for _n in range(VGPRS):
    _BITS[f"v{_n}"] = _n
for _n in range(SGPRS):
    _BITS[f"s{_n}"] = VGPRS + _n
_NEXT = [400]
for _name, _b in list(_BITS.items()):
    _NAMES[_b] = _name

VGPR_MASK = (1 << VGPRS) - 1
SGPR_MASK = (1 << SGPRS) - 1  # after shifting the SGPR bits down by VGPRS
_CALLS = ("s_setpc_b64", "s_swappc_b64", "s_call_b64", "s_rfe_b64")


def bit(reg: str) -> int:
    """The bit number of a register name (allocated on first sight for special registers)."""
    b = _BITS.get(reg)
    if b is None:
        b = _NEXT[0]
        _NEXT[0] += 1
        _BITS[reg] = b
        _NAMES[b] = reg
    return b


_ONE: dict[str, int] = {}  # register name -> 1 << bit(name)


def mask(regs: Iterable[str]) -> int:
    m = 0
    one = _ONE
    for r in regs:
        b = one.get(r)
        if b is None:
            b = one[r] = 1 << bit(r)
        m |= b
    return m


def _set_bits(m: int) -> list[int]:
    """The numbers of the bits set in ``m``, ascending."""
    return [n for n, c in enumerate(reversed(bin(m))) if c == "1"] if m else []


def names(m: int) -> frozenset[str]:
    return frozenset(_NAMES[b] for b in _set_bits(m))


def vgpr_numbers(m: int) -> list[int]:
    return _set_bits(m & VGPR_MASK)


def sgpr_numbers(m: int) -> list[int]:
    """The SGPR numbers (s0-s105) in a mask."""
    return _set_bits((m >> VGPRS) & SGPR_MASK)


def vgpr_number(reg: str) -> int | None:
    """N for the register name ``vN``, else None."""
    if reg.startswith("v") and reg[1:].isdigit():
        return int(reg[1:])
    return None


def sgpr_number(reg: str) -> int | None:
    """N for the register name ``sN``, else None."""
    if reg.startswith("s") and reg[1:].isdigit():
        return int(reg[1:])
    return None


_WIDE_MAD = {"v_mad_u64_u32", "v_mad_i64_i32"}


def ignorable_reads(ins, live_after: set[int]) -> set[int]:
    """VGPRs an instruction reads without any live result depending on them.

    ``v_mad_u64_u32 v[d:d+1], null, a, b, v[c:c+1]`` whose high result dword is dead: the low
    dword of a 64-bit sum depends only on the low dwords of its addends, so ``v(c+1)`` is not
    really read (clang emits this for 32-bit index arithmetic, with an unrelated register as
    the high addend).
    """
    if ins.is_vopd or ins.opcode not in _WIDE_MAD:
        return set()
    ops = ins.stmts[0].operands
    if len(ops) != 5 or ins.stmts[0].modifiers:
        return set()
    dst, sdst, _, _, addend = ops
    if dst.kind != "vgpr" or dst.count != 2 or addend.kind != "vgpr" or addend.count != 2:
        return set()
    if not (sdst.kind == "special" and sdst.file == "null"):
        return set()
    if dst.first + 1 in live_after:
        return set()
    return {addend.first + 1}


def _written_regs(instr) -> list[str]:
    regs: list[str] = []
    for stmt in instr.stmts:
        for op in stmt.operands:
            if op.is_register:
                regs.extend(op.registers())
    return regs


_NARROW: dict[str, frozenset[str]] = {}  # mnemonic -> its operands narrower than 32 bits


def _narrow(info) -> frozenset[str]:
    names = _NARROW.get(info.mnemonic)
    if names is None:
        bits = {spec.name: spec.bits for spec in info.operands}
        names = _NARROW[info.mnemonic] = frozenset(n for n, b in bits.items() if b < 32)
    return names


def instr_masks(instr, all_mask: int) -> tuple[int, int, int]:
    """(use, kill, def) masks of one instruction."""
    if instr.opaque:
        return mask(_written_regs(instr)), 0, 0
    use = mask(instr.uses)
    if instr.opcode in _CALLS:
        use |= all_mask
    defs = mask(instr.defs)
    if not defs:
        return use, 0, 0
    partial = 0
    for info, slots in zip(instr.infos, instr.slots):
        if info is None:
            continue
        d16, narrow = _PARTIAL.get(info.mnemonic) or _partial(info)
        for slot in slots:
            role = slot.role
            if (role == "def" or role == "defuse") and (d16 or slot.operand.half or slot.name in narrow):
                partial |= mask(slot.regs)
    return use, defs & ~partial, defs


_PARTIAL: dict[str, tuple[bool, frozenset[str]]] = {}  # mnemonic -> (a d16 opcode, _narrow(info))


def _partial(info) -> tuple[bool, frozenset[str]]:
    got = _PARTIAL[info.mnemonic] = ("_d16" in info.mnemonic, _narrow(info))
    return got


class Liveness:
    """Live registers before and after every instruction and at every block boundary."""

    def __init__(self, program):
        self.program = program
        cfg = program.cfg()
        self.cfg = cfg
        instrs = program.instrs
        # every register read or written; a call reads them all
        triples = [instr_masks(ins, 0) for ins in instrs]
        all_mask = 0
        for use, _, defs in triples:
            all_mask |= use | defs
        self.all_mask = all_mask
        for n, ins in enumerate(instrs):
            if not ins.opaque and ins.opcode in _CALLS:
                use, kill, defs = triples[n]
                triples[n] = (use | all_mask, kill, defs)
        self.use_mask = [t[0] for t in triples]
        self.kill_mask = [t[1] for t in triples]
        self.def_mask = [t[2] for t in triples]
        nb = len(cfg.blocks)
        gen = [0] * nb
        kill = [0] * nb
        for blk in cfg.blocks:
            g = k = 0
            for i in reversed(blk.indices()):
                g = self.use_mask[i] | (g & ~self.kill_mask[i])
                k |= self.kill_mask[i]
            gen[blk.id], kill[blk.id] = g, k
        live_in = [0] * nb
        live_out = [0] * nb
        order = list(range(nb - 1, -1, -1))
        changed = True
        while changed:
            changed = False
            for b in order:
                blk = cfg.blocks[b]
                out = 0
                for s in blk.succs:
                    out |= live_in[s]
                if blk.last > blk.first and instrs[blk.last - 1].opcode in _CALLS:
                    out |= all_mask
                new_in = gen[b] | (out & ~kill[b])
                if out != live_out[b] or new_in != live_in[b]:
                    live_out[b], live_in[b] = out, new_in
                    changed = True
        self._block_in, self._block_out = live_in, live_out
        n = len(instrs)
        self._in = [0] * n
        self._out = [0] * n
        for blk in cfg.blocks:
            cur = live_out[blk.id]
            for i in reversed(blk.indices()):
                self._out[i] = cur
                cur = self.use_mask[i] | (cur & ~self.kill_mask[i])
                self._in[i] = cur

    # masks
    def live_in_mask(self, index: int) -> int:
        return self._in[index]

    def live_out_mask(self, index: int) -> int:
        return self._out[index]

    def block_in_mask(self, block: int) -> int:
        return self._block_in[block]

    def block_out_mask(self, block: int) -> int:
        return self._block_out[block]

    # names
    def live_in(self, index: int) -> frozenset[str]:
        return names(self._in[index])

    def live_out(self, index: int) -> frozenset[str]:
        return names(self._out[index])

    def block_live_in(self, block: int) -> frozenset[str]:
        return names(self._block_in[block])

    def block_live_out(self, block: int) -> frozenset[str]:
        return names(self._block_out[block])

    def is_live_in(self, index: int, reg: str) -> bool:
        return bool(self._in[index] >> bit(reg) & 1)

    def is_live_out(self, index: int, reg: str) -> bool:
        return bool(self._out[index] >> bit(reg) & 1)

    def live_vgprs(self, index: int) -> int:
        """How many VGPRs hold a live value just before instruction ``index``."""
        return (self._in[index] & VGPR_MASK).bit_count()

    def max_live_vgprs(self, kernel=None) -> tuple[int, int]:
        """(largest number of VGPRs live at once, an instruction index where it happens)."""
        lo, hi = (kernel.first, kernel.last) if kernel is not None else (0, len(self._in))
        best, where = 0, lo
        for i in range(lo, hi):
            c = ((self._in[i] | self._out[i]) & VGPR_MASK).bit_count()
            if c > best:
                best, where = c, i
        return best, where


def liveness(program) -> Liveness:
    """The liveness of ``program`` (computed once per Program object)."""
    cached = program.__dict__.get("_isalint_liveness")
    if cached is None or cached.program is not program or len(cached._in) != len(program.instrs):
        cached = Liveness(program)
        program.__dict__["_isalint_liveness"] = cached
    return cached


def busy_mask(program, at_indices: Iterable[int], *, exclude_pending: bool = True, counters=None) -> int:
    """Registers that hold something needed at, or are touched by, any of ``at_indices``."""
    lv = liveness(program)
    at = list(at_indices)
    m = 0
    for i in at:
        m |= lv._in[i] | lv._out[i] | lv.def_mask[i] | lv.use_mask[i]
    if exclude_pending and at:
        if counters is None:
            from .counters import analyze

            counters = analyze(program)
        for i in at:
            m |= mask(counters.state_before(i).regs())
    return m


def free_vgprs(program, kernel=None, at_indices: Iterable[int] = (), *, limit: int | None = None,
               exclude_pending: bool = True, counters=None) -> list[int]:
    """VGPR numbers below ``limit`` free at every instruction of ``at_indices``.

    ``limit`` defaults to the kernel's ``.amdhsa_next_free_vgpr`` (the registers it
    already allocates), else 256. A free register is not live into or out of any
    of those instructions, not read or written by them, and (``exclude_pending``)
    not the destination of a memory load still in flight there, whose return
    would overwrite it. ``counters`` may pass a precomputed counters.analyze(program).
    """
    at = list(at_indices)
    if kernel is None and program.kernels:
        kernel = program.kernel_of(at[0]) if at else program.kernels[0]
    if limit is None:
        limit = VGPRS
        if kernel is not None and ".amdhsa_next_free_vgpr" in kernel.descriptor:
            limit = kernel.descriptor[".amdhsa_next_free_vgpr"]
    busy = busy_mask(program, at, exclude_pending=exclude_pending, counters=counters)
    return [n for n in range(min(limit, VGPRS)) if not busy >> n & 1]
