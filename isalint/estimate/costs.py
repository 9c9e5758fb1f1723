"""What one instruction costs a wave and the SIMD, from the ISA data and :mod:`isalint.hw.timing`.

Each instruction becomes a :class:`Cost`: the unit that issues it, how long it keeps the VALU busy
(one cycle; more for a VGPR-bank stall of :mod:`isalint.hw.vgpr_banks` or a quarter-rate op), when its
results can be read, which wait counter it increments and how long it occupies its share of the
LDS or of the vector memory path. ``s_waitcnt`` decodes to its thresholds (:mod:`isalint.model.waitcnt`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..hw.encoding import inline_integer, instruction_bytes
from ..hw.lds_banks import bank_conflicts, lanes_per_pass
from ..hw.latency import QUARTER_RATE_ISSUE_OPCODES
from ..hw.timing import Timing
from ..hw.vgpr_banks import ops_from_instrs, simulate
from ..isa.mnemonics import base_mnemonic, split_encoding
from ..model.alu_delays import result_latency
from ..model.lanes.evaluator import LaneEvaluator
from ..model.lanes.lds import LdsAccess, ds_shape, lds_banks
from ..model.waitcnt import wait_thresholds

VALU, SALU, SMEM, LDS, VMEM, BRANCH, OTHER, WAIT, BARRIER, NOP, END, SKIP = range(12)
UNIT_NAMES = ("VALU", "SALU", "SMEM", "LDS", "VMEM", "branch", "other", "s_waitcnt", "s_barrier", "s_nop",
              "s_endpgm", "hint")

_WIDTH = {"b8": 1, "u8": 1, "i8": 1, "b16": 2, "u16": 2, "i16": 2, "d16": 2, "b32": 4, "b64": 8, "b96": 12,
          "b128": 16}


@dataclass(slots=True)
class Cost:
    unit: int
    occupy: float = 1.0  # VALU cycles this instruction keeps the SIMD's VALU busy
    stall: float = 0.0  # of which VGPR-bank stall
    latency: int = 0  # cycles from issue until its register results can be read
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    counter: str | None = None  # lds | smem | vm | vs
    service: float = 0.0  # cycles of this SIMD's share of the LDS or vector memory path
    waits: dict | None = None
    nop: int = 0
    fma: int = 0  # FP32 FMAs (for the FLOP count of the loop table)
    blocking: bool = False  # reads an ALU result no s_delay_alu names: a wait for it stalls the SIMD


def _vmem_bytes(mnemonic: str) -> int:
    last = mnemonic.rsplit("_", 1)[-1]
    if last in _WIDTH:
        return _WIDTH[last]
    parts = mnemonic.split("_")
    for p in reversed(parts):
        if p in _WIDTH:
            return _WIDTH[p]
    return 4


def _bytes(ins) -> int:
    info = ins.infos[0] if ins.infos else None
    literal = any(op.kind == "int" and not inline_integer(int(op.value)) for st in ins.stmts for op in st.operands)
    return instruction_bytes(info.encoding if info is not None else "VOP3", literal)


def _fmas(ins) -> int:
    n = 0
    for s in ins.stmts:
        b = base_mnemonic(s.mnemonic)
        if b in ("v_fmac_f32", "v_fma_f32", "v_fmaak_f32", "v_fmamk_f32", "v_mac_f32"):
            n += 1
    return n


class CostModel:
    """Costs of every instruction of a program under one :class:`Timing`."""

    def __init__(self, program, kernel, timing: Timing, blocking: frozenset[int] = frozenset()):
        self.program = program
        self.kernel = kernel
        self.t = timing
        self.blocking = blocking  # instructions with a dependency no s_delay_alu covers
        self._stalls: list[int] | None = None
        self._lanes: LaneEvaluator | None = None
        self._costs: dict[int, Cost] = {}
        self._offsets: dict[int, int] | None = None
        self.lds_notes: list[str] = []

    def code_offset(self, index: int) -> int:
        """Byte offset of instruction ``index`` from the kernel's entry: the RDNA3 encodings'
        sizes (:mod:`isalint.hw.encoding`) and the padding of ``.p2align`` directives between them."""
        if self._offsets is None:
            instrs = self.program.instrs
            first = self.kernel.first
            last = getattr(self.kernel, "last", len(instrs))
            align_at: dict[int, int] = {}  # line number of an instruction -> alignment before it
            pending = 0
            for line in self.program.source.lines:
                if line.kind == "directive" and line.directive == ".p2align":
                    head = line.args.split(",")[0].strip()
                    if head.isdigit():
                        pending = max(pending, 1 << int(head))
                elif line.kind == "instruction":
                    if pending:
                        align_at[line.number] = pending
                    pending = 0
            self._offsets, at = {}, 0
            for i in range(first, last):
                align = align_at.get(instrs[i].lineno)
                if align and i != first:
                    at = -(-at // align) * align
                self._offsets[i] = at
                at += _bytes(instrs[i])
        return self._offsets.get(index, 0)

    def refetches(self, branch: int, target: int) -> bool:
        """Whether a taken branch at ``branch`` to ``target`` leaves the wave's prefetched code.

        A wave keeps four 64-byte lines of code: the one of its PC, one behind and two ahead
        (``timing.icache_line_bytes``, ``prefetch_lines_behind``/``_ahead``); a target outside them is
        fetched again."""
        t = self.t
        here = self.code_offset(branch) // t.icache_line_bytes
        there = self.code_offset(target) // t.icache_line_bytes
        return not (here - t.prefetch_lines_behind <= there <= here + t.prefetch_lines_ahead)

    def stalls(self) -> list[int]:
        if self._stalls is None:
            sim = simulate(ops_from_instrs(self.program.instrs))
            self._stalls = [s.stall for s in sim.steps]
        return self._stalls

    def cost(self, index: int) -> Cost:
        c = self._costs.get(index)
        if c is None:
            c = self._costs[index] = self._make(self.program.instrs[index])
            if index in self.blocking:
                c.blocking = True
        return c

    def _make(self, ins) -> Cost:  # noqa: C901 - one table of instruction classes
        t = self.t
        klass = ins.klass
        name = ins.opcode
        reads = tuple(ins.uses)
        if klass in ("valu", "vopd", "trans"):
            stall = self.stalls()[ins.index]
            base = split_encoding(name)[0]
            occupy = 1.0 + t.bank_stall_exposure * stall
            latency = result_latency(ins, t)
            if klass != "trans" and base in QUARTER_RATE_ISSUE_OPCODES:
                occupy = max(occupy, float(t.quarter_rate_cycles))
            elif base.startswith("v_wmma_"):
                # the matrix path reads its operands its own way: the VALU bank model does not apply.
                # A 16x16x16 block takes wmma_cycles at the FP16/BF16/INT8 rate; INT4's rate is twice it
                # (isalint/hw/gpus.py RATE_PER_CU), so its block takes half as long
                from ..hw.gpus import RATE_PER_CU

                cycles = t.wmma_cycles * RATE_PER_CU["fp16"] / RATE_PER_CU["int4"] if base.endswith("_iu4") \
                    else t.wmma_cycles
                occupy, latency, stall = cycles, cycles, 0
            return Cost(VALU, occupy, t.bank_stall_exposure * stall, latency, reads, tuple(ins.defs), fma=_fmas(ins))
        if klass == "salu":
            return Cost(SALU, latency=t.salu_latency, reads=reads, writes=tuple(ins.defs))
        if klass == "smem":
            return Cost(SMEM, reads=reads, counter="smem", latency=t.smem_latency)
        if klass == "lds":
            shape = ds_shape(name)
            passes = self._lds_passes(ins, shape)
            sharing = t.simds_per_cu * (t.lds_wgp_mode_factor if self.kernel.wgp_mode else 1)
            service = passes * sharing * 128 / t.lds_bytes_per_cycle_per_cu
            return Cost(LDS, reads=reads, counter="lds", service=service)
        if klass in ("vmem_load", "scratch_load", "vmem_atomic", "vmem_store", "scratch_store"):
            nbytes = _vmem_bytes(name) * self.kernel.wave_size
            service = nbytes / t.vmem_bytes_per_cycle_per_cu * t.simds_per_cu
            store = klass in ("vmem_store", "scratch_store") or (klass == "vmem_atomic" and not ins.defs)
            return Cost(VMEM, reads=reads, counter="vs" if store else "vm", service=service)
        if klass == "branch":
            return Cost(BRANCH, reads=reads)
        if klass == "waitcnt":
            return Cost(WAIT, waits=wait_thresholds(ins) or {})
        if klass == "barrier":
            return Cost(BARRIER)
        if klass == "nop":
            n = 0
            if ins.stmts[0].operands and ins.stmts[0].operands[0].kind == "int":
                n = int(ins.stmts[0].operands[0].value)
            return Cost(NOP, nop=n + 1)
        if klass == "endpgm":
            return Cost(END)
        if klass in ("delay",) or name in ("s_clause", "s_set_inst_prefetch_distance"):
            return Cost(SKIP)
        return Cost(OTHER, reads=reads)

    def _lds_passes(self, ins, shape) -> float:
        """Passes of 32 dwords (128 bytes) one wave's access needs, bank conflicts included."""
        wave = self.kernel.wave_size
        if shape is None:
            return math.ceil(wave / 32)
        kind, width, naddr, _ = shape
        ideal = naddr * math.ceil(wave / lanes_per_pass(width))
        if self._lanes is None:
            self._lanes = LaneEvaluator(self.program, self.kernel)
        access = self._lanes.lds_access(ins)
        if not isinstance(access, LdsAccess):  # an address the evaluator cannot follow: no conflict assumed
            return ideal
        conflict = bank_conflicts(access, lds_banks(self.kernel), wave, pad_search=False)
        if conflict is None:
            return ideal
        return max(ideal, conflict.cycles)
