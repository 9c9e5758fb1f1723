"""Launching a kernel of a parsed program: ABI set-up, compilation and the scheduler.

The initial wave state and the kernel argument segment follow :mod:`isalint.model.launch` (user and
system SGPRs from the kernel descriptor, work-item ids packed in VGPR0). EXEC has one bit per live
lane; everything else starts as seeded garbage, so a kernel that reads a register (or LDS) it never
wrote gets a value no correct kernel depends on.
"""
from __future__ import annotations

import struct
import time
from dataclasses import dataclass, field

import numpy as np

from ...hw.occupancy import LDS_BYTES, MAX_WORKGROUP_SIZE
from ...hw.registers import VGPRS
from ...isa.mnemonics import base_mnemonic
from ...model import launch as abi
from ...model.launch import Launch, kernel_args
from ...records import replace
from .compile_mem import MemCtx, ds, smem, vmem
from .compile_salu import control, salu
from .compile_valu import ValuCtx, fast_fmac, valu_parts
from .errors import EmulationError, LaunchError, Unimplemented
from .machine import EXEC_LO, I64, NSGPR, STOP_BARRIER, STOP_SPLIT, U8, U32, Group, Machine


def sgpr_layout(descriptor: dict[str, int]) -> abi.SgprLayout:
    """:func:`isalint.model.launch.sgpr_layout`, a mismatch raised as a :class:`LaunchError`."""
    try:
        return abi.sgpr_layout(descriptor)
    except abi.AbiError as exc:
        raise LaunchError(str(exc)) from None


def _detach(payload):
    if isinstance(payload, np.ndarray):
        return payload.copy()
    if isinstance(payload, tuple):
        return tuple(_detach(p) for p in payload)
    return payload


def summarize_notes(notes: dict) -> list[str]:
    """One line per kind of note: 'path: lines 435, 443: load reads garbage (outside every buffer)'."""
    by_kind: dict[tuple[str, str], list[int]] = {}
    for (path, line), msg in notes.items():
        kind = msg.split(":")[0]
        by_kind.setdefault((path, kind), []).append(line)
    out = []
    for (path, kind), lines in by_kind.items():
        ls = ", ".join(str(x) for x in sorted(lines))
        out.append(f"{path}: line{'s' if len(lines) > 1 else ''} {ls}: {kind} (outside every buffer; harmless "
                   "unless the values are used)")
    return out


@dataclass
class WaveMap:
    """Turns the writer ids of a run (wave * 32 + lane) back into workgroup / thread."""

    workgroups: list[tuple[int, int, int]]
    waves_per_group: int
    block: tuple[int, int, int]
    first_wave: int = 0  # the run's number of the launch's first wave (launches run together)

    def describe(self, writer: int) -> str:
        if writer < 0:
            return "no store of the kernel"
        wave, lane = divmod(int(writer) - 32 * self.first_wave, 32)
        wg, wave_in = divmod(wave, self.waves_per_group)
        x, y, z = self.workgroups[wg]
        t = wave_in * 32 + lane
        bx, by, _ = self.block
        tx, ty, tz = t % bx, (t // bx) % by, t // (bx * by)
        tid = f"({tx},{ty},{tz})" if self.block[1] * self.block[2] > 1 else f"{tx}"
        return f"workgroup ({x},{y},{z}) thread {tid} (wave {wave_in}, lane {lane})"


@dataclass
class RunResult:
    buffers: dict[str, np.ndarray]  # final contents (uint8) of every buffer, by name
    steps: int
    times: dict[str, float]
    notes: list[str]
    writers: dict[str, np.ndarray] = field(default_factory=dict)  # per dword: writer id or -1
    wavemap: WaveMap | None = None


class Kernel:
    """A compiled kernel of a program, ready to launch any number of times."""

    def __init__(self, program, name: str | None = None):
        self.program = program
        self.path = program.path
        ks = program.kernels
        if not ks:
            raise LaunchError("no kernel in the file", self.path)
        if name is None:
            self.kernel = ks[0]
        else:
            found = [k for k in ks if k.name == name]
            if not found:
                raise LaunchError(f"no kernel named {name} (have: {', '.join(k.name for k in ks)})", self.path)
            self.kernel = found[0]
        k = self.kernel
        d = k.descriptor
        if not d:
            raise LaunchError(f"kernel {k.name} has no .amdhsa_kernel descriptor", self.path)
        if not d.get(".amdhsa_wavefront_size32", 1):
            raise LaunchError("wave64 kernels are not emulated (only wave32)", self.path)
        self.nvgpr = d.get(".amdhsa_next_free_vgpr") or self._max_vgpr()
        if not 0 <= self.nvgpr <= VGPRS:
            raise LaunchError(f".amdhsa_next_free_vgpr {self.nvgpr}: a gfx11 wave has {VGPRS} VGPRs", self.path)
        self.lds_size = d.get(".amdhsa_group_segment_fixed_size", 0)
        if not 0 <= self.lds_size <= LDS_BYTES:
            raise LaunchError(f".amdhsa_group_segment_fixed_size {self.lds_size}: a workgroup has at most 64 KiB "
                              "of LDS", self.path)
        self.private_size = d.get(".amdhsa_private_segment_fixed_size", 0)
        mode = d.get(".amdhsa_float_denorm_mode_32", 3)
        if mode not in (0, 3):
            raise LaunchError(f".amdhsa_float_denorm_mode_32 {mode} (partial flushing) is not emulated", self.path)
        self.flush_f32 = mode == 0
        self.f16_denorm_mode = d.get(".amdhsa_float_denorm_mode_16_64", 3)
        self.layout = sgpr_layout(d)
        self.args = kernel_args(k)
        self.kernarg_size = max(d.get(".amdhsa_kernarg_size", 0),
                                max((a.offset + a.size for a in self.args), default=0))
        self.ops = None
        self.compile_time = 0.0

    def _max_vgpr(self) -> int:
        hi = 0
        for ins in self.program.instrs[self.kernel.first:self.kernel.last]:
            for r in ins.defs + ins.uses:
                if r.startswith("v") and r[1:].isdigit():
                    hi = max(hi, int(r[1:]) + 1)
        return max(hi, 1)

    # -- compilation ------------------------------------------------------------------
    def compile(self, machine: Machine) -> None:
        t0 = time.perf_counter()
        vctx = ValuCtx(self.nvgpr, self.flush_f32, self.f16_denorm_mode)
        mctx = self._mctx = MemCtx(machine, self.nvgpr, self.path)
        labels = self.program.labels
        ops = []
        for ins in self.program.instrs:
            ops.append(self._compile_one(ins, vctx, mctx, labels))
        ops.append(self._off_end())
        self.ops = ops
        self.compile_time = time.perf_counter() - t0

    def _off_end(self):
        path = self.path

        def run(g):
            raise EmulationError("execution ran past the last instruction (missing s_endpgm?)", path)
        return run

    def _compile_one(self, ins, vctx, mctx, labels):
        try:
            return self._compile(ins, vctx, mctx, labels)
        except EmulationError as exc:
            err = EmulationError(exc.message, self.path, ins.lineno, ins.text())
            err.__class__ = exc.__class__

            def raiser(g, err=err):
                raise err
            return raiser

    def _compile(self, ins, vctx, mctx, labels):
        if ins.problem:
            raise Unimplemented(f"cannot emulate: {ins.problem}")
        stmts = _canonical_statements(ins)
        if _cache_control(ins.infos[0]):
            return lambda g: None
        if ins.is_vopd:
            parts = []
            for stmt in stmts:
                base = base_mnemonic(stmt.mnemonic)
                p = fast_fmac(stmt, vctx) if base == "v_fmac_f32" else None
                parts.append(p or valu_parts(stmt, vctx))
            (cx, wx), (cy, wy) = parts
            # Both halves read their sources before either writes (RDNA3 ISA guide, 7.x "VOPD"):
            # a Y payload that is a view of X's destination must be copied before X commits.
            sx, sy = stmts
            dst_x = {sx.operands[0].first} if sx.operands and sx.operands[0].kind == "vgpr" else set()
            y_srcs = {op.first for op in sy.operands[1:] if op.kind == "vgpr"}
            if dst_x & y_srcs:
                def vopd(g):
                    px = cx(g)
                    py = _detach(cy(g))
                    wx(g, px)
                    wy(g, py)
            else:
                def vopd(g):
                    px = cx(g)
                    py = cy(g)
                    wx(g, px)
                    wy(g, py)
            return vopd
        stmt = stmts[0]
        klass = ins.klass
        if klass in ("valu", "trans"):
            base = base_mnemonic(stmt.mnemonic)
            p = fast_fmac(stmt, vctx) if base == "v_fmac_f32" else None
            c, w = p or valu_parts(stmt, vctx)
            return lambda g: w(g, c(g))
        if klass == "salu":
            return salu(stmt)
        if klass == "smem":
            return smem(ins, stmt, mctx)
        if klass == "lds":
            return ds(ins, stmt, mctx)
        if klass in ("vmem_load", "vmem_store", "scratch_load", "scratch_store"):
            return vmem(ins, stmt, mctx)
        fn = control(ins, stmt, labels)
        if fn is not None:
            return fn
        raise Unimplemented(f"opcode '{stmt.mnemonic}' ({klass}) is not implemented by the emulator")

    def unimplemented(self) -> list[tuple[int, str, str]]:
        """(line, opcode, reason) of every instruction of the kernel the emulator cannot execute."""
        m = Machine()
        out = []
        vctx = ValuCtx(self.nvgpr, self.flush_f32, self.f16_denorm_mode)
        mctx = MemCtx(m, self.nvgpr, self.path)
        for ins in self.program.instrs[self.kernel.first:self.kernel.last]:
            try:
                self._compile(ins, vctx, mctx, self.program.labels)
            except EmulationError as exc:
                out.append((ins.lineno, ins.opcode, exc.message))
        return out

    # -- launching ----------------------------------------------------------------------
    def build_kernarg(self, mem, launch: Launch, addresses: dict[str, int]) -> bytes:
        try:
            segment, _ = abi.kernarg_segment(self.args, launch, addresses, self.kernarg_size)
        except abi.AbiError as exc:
            raise LaunchError(str(exc), self.path) from None
        return segment

    def run(self, launch: Launch, *, seed: int = 0, latency=(64, 4096), max_waves: int = 256,
            max_steps: int = 50_000_000) -> RunResult:
        return self.run_many([launch], seed=seed, latency=latency, max_waves=max_waves, max_steps=max_steps)[0]

    def run_many(self, launches: list[Launch], *, seed: int = 0, latency=(64, 4096), max_waves: int = 256,
                 max_steps: int = 50_000_000) -> list[RunResult]:
        """Run several launches of the kernel together, one result each.

        Each launch has its own buffers, arguments and dispatch packet; their workgroups share the
        lockstep batches (up to ``max_waves`` waves), so two small launches cost little more than one
        (an instruction's numpy work is mostly per call, not per lane). The launches must have the
        same block; the step count, times and notes are the whole run's (given with the first result).
        """
        if len({tuple(l.block) for l in launches}) > 1:
            return [self.run(l, seed=seed, latency=latency, max_waves=max_waves, max_steps=max_steps)
                    for l in launches]
        times = {"compile": 0.0, "execute": 0.0}
        machine = Machine(seed=seed, latency=latency, max_steps=max_steps)
        if self.ops is None:
            self.compile(machine)
            times["compile"] = self.compile_time
        self._bind(machine)
        mem = machine.mem
        several = len(launches) > 1
        addrs = []  # per launch: (kernarg, dispatch packet, queue) addresses
        for k, launch in enumerate(launches):
            prefix = f"{k}/" if several else ""
            addresses = {}
            for name, arr in launch.buffers.items():
                addresses[name] = mem.alloc(prefix + name, arr)
            kernarg = self.build_kernarg(mem, launch, addresses)
            karg_addr = mem.alloc(prefix + "__kernarg", kernarg)
            packet = self._dispatch_packet(launch, karg_addr)
            pkt_addr = mem.alloc(prefix + "__dispatch", packet)
            queue_addr = mem.alloc(prefix + "__queue", bytes(256))
            addrs.append((karg_addr, pkt_addr, queue_addr))

        block = launches[0].block
        bx, by, bz = block
        threads = bx * by * bz
        md = self.kernel.metadata or {}
        mfw = md.get(".max_flat_workgroup_size")
        for launch in launches:
            gx, gy, gz = launch.grid
            if threads < 1 or threads > MAX_WORKGROUP_SIZE or min(gx, gy, gz) < 1:
                raise LaunchError(f"bad launch: grid {launch.grid}, block {launch.block}", self.path)
            if max(bx, by, bz) > MAX_WORKGROUP_SIZE:
                raise LaunchError(f"a block dimension exceeds {MAX_WORKGROUP_SIZE}", self.path)
            if mfw and threads > int(mfw):
                raise LaunchError(f"block of {threads} threads exceeds the kernel's .max_flat_workgroup_size {mfw}",
                                  self.path)
            outside = [w for w in launch.workgroups or () if not all(0 <= c < g for c, g in zip(w, launch.grid))]
            if outside or (launch.workgroups is not None and not launch.workgroups):
                raise LaunchError(f"workgroup {outside[0] if outside else '(none)'} is not one of the grid "
                                  f"{launch.grid}", self.path)
        waves_per_wg = (threads + 31) // 32
        per_batch = max(1, max_waves // waves_per_wg)
        self._check_memory(launches, waves_per_wg, per_batch)
        grids = [l.workgroup_ids() for l in launches]
        wgs = [(k, wg) for k, grid in enumerate(grids) for wg in grid]
        rng = np.random.default_rng(seed ^ 0x5EED)
        steps = 0
        mem.track_writers()
        mem.setup_scratch(len(wgs) * waves_per_wg, self.private_size)
        t0 = time.perf_counter()
        with np.errstate(all="ignore"):
            for start in range(0, len(wgs), per_batch):
                batch = wgs[start:start + per_batch]
                mem.setup_lds(len(batch), self.lds_size)
                if mem.lds.size:
                    mem.lds[:] = rng.integers(0, 256, size=mem.lds.size, dtype=U8)
                group = self._initial_group(batch, start * waves_per_wg, block, rng, addrs)
                steps += self._schedule(machine, group)
        times["execute"] = time.perf_counter() - t0
        results = []
        notes = summarize_notes(machine.notes)
        first_wave = 0
        for k, launch in enumerate(launches):
            prefix = f"{k}/" if several else ""
            out, writers = {}, {}
            for b in mem.buffers:
                if b.name.startswith(prefix) and not b.name[len(prefix):].startswith("__"):
                    name = b.name[len(prefix):]
                    out[name] = mem.heap[b.offset:b.offset + b.size].copy()
                    writers[name] = mem.writer[b.offset // 4:(b.offset + b.size + 3) // 4].copy()
            results.append(RunResult(out, steps, times if k == 0 else {"compile": 0.0, "execute": 0.0}, notes,
                                     writers, WaveMap(grids[k], waves_per_wg, launch.block, first_wave)))
            first_wave += len(grids[k]) * waves_per_wg
        return results

    def _check_memory(self, launches: list[Launch], waves_per_wg: int, per_batch: int) -> None:
        """LaunchError when the launches' scratch, LDS, registers and heap do not fit in memory."""
        from ..memory_budget import (
            EMULATOR_BYTES_PER_BUFFER_BYTE,
            WORKGROUP_BYTES,
            TooLarge,
            require,
        )

        n_wg = sum(l.workgroup_count() for l in launches)
        buffers = sum(int(getattr(b, "nbytes", 0)) for l in launches for b in l.buffers.values())
        scratch = n_wg * waves_per_wg * 32 * ((self.private_size + 3) // 4 * 4)
        per_batch_bytes = per_batch * (self.lds_size + waves_per_wg * 32 * 4 * (self.nvgpr + 128))
        need = buffers * EMULATOR_BYTES_PER_BUFFER_BYTE + scratch + per_batch_bytes + n_wg * WORKGROUP_BYTES
        try:
            require(need, f"a launch of {n_wg} workgroups ({scratch} bytes of scratch)")
        except TooLarge as exc:
            raise LaunchError(str(exc), self.path) from None

    def _bind(self, machine: Machine) -> None:
        """Point the compiled memory closures at this launch's machine."""
        self._mctx.machine = machine

    def _dispatch_packet(self, launch: Launch, karg_addr: int) -> bytes:
        bx, by, bz = launch.block
        gx, gy, gz = launch.grid
        return struct.pack("<HHHHHHIIIIIQQQQ", 0, 3, bx, by, bz, 0, gx * bx, gy * by, gz * bz,
                           self.private_size, self.lds_size, 0, karg_addr, 0, 0)

    def _initial_group(self, batch, first_wave, block, rng, addrs) -> Group:
        """The waves of ``batch``: (launch number, workgroup id) pairs; ``addrs[k]``: launch k's kernarg,
        dispatch packet and queue addresses."""
        bx, by, bz = block
        threads = bx * by * bz
        wpw = (threads + 31) // 32
        W = len(batch) * wpw
        V = rng.integers(0, 1 << 32, size=(self.nvgpr, W, 32), dtype=np.uint64).astype(U32)
        S = rng.integers(0, 1 << 32, size=(NSGPR, W), dtype=np.uint64).astype(U32)
        lay = self.layout
        tid = np.arange(wpw * 32)
        tx, ty, tz = tid % bx, (tid // bx) % by, tid // (bx * by)
        packed = tx.astype(np.uint64)
        if lay.workitem_dims >= 2:
            packed |= ty.astype(np.uint64) << 10
        if lay.workitem_dims >= 3:
            packed |= tz.astype(np.uint64) << 20
        packed = packed.astype(U32).reshape(wpw, 32)
        live = (tid < threads).reshape(wpw, 32)
        exec_bits = np.packbits(live, axis=-1, bitorder="little").view(U32).reshape(wpw)
        wg_index = np.repeat(np.arange(len(batch)), wpw)
        V[0] = np.tile(packed, (len(batch), 1))
        for w in range(W):
            k, wg = batch[wg_index[w]]
            karg_addr, pkt_addr, queue_addr = addrs[k]
            pointers = {"kernarg_segment_ptr": karg_addr, "dispatch_ptr": pkt_addr, "queue_ptr": queue_addr}
            for s, value in abi.initial_sgprs(lay, wg, pointers, self.private_size).items():
                S[s, w] = value
        S[EXEC_LO] = np.tile(exec_bits, len(batch))
        S[EXEC_LO + 1] = 0
        lds_stride = (self.lds_size + 3) // 4 * 4
        g = Group(V, S, np.zeros(W, bool), first_wave + np.arange(W, dtype=I64), wg_index.astype(I64),
                  (wg_index * lds_stride).astype(I64), self.kernel.first)
        return g

    def _schedule(self, machine: Machine, first: Group, finished: list | None = None) -> int:
        runnable = [first]
        waiting: list[Group] = []
        steps0 = machine.clock
        while runnable or waiting:
            while runnable:
                g = runnable.pop()
                r = self._run_group(machine, g)
                if r == STOP_SPLIT:
                    _, cond, target = g.state
                    rows_t = np.nonzero(cond)[0]
                    rows_f = np.nonzero(~cond)[0]
                    gt = g.take(rows_t)
                    gt.pc = target
                    gf = g.take(rows_f)
                    gf.pc = g.pc + 1
                    runnable += [gf, gt]
                elif r == STOP_BARRIER:
                    g.pc += 1
                    waiting.append(g)
                else:
                    g.drain()
                    if finished is not None:
                        finished.append(g)
            if waiting:
                by_pc: dict[int, list[Group]] = {}
                for g in waiting:
                    by_pc.setdefault(g.pc, []).append(g)
                runnable = [Group.merge(gs) for gs in by_pc.values()]
                waiting = []
        return machine.clock - steps0

    def _run_group(self, machine: Machine, g: Group) -> int:
        ops = self.ops
        pc = g.pc
        limit = machine.max_steps
        try:
            while True:
                if machine.clock >= g.next_due:
                    g.retire_due(machine.clock)
                r = ops[pc](g)
                machine.clock += 1
                if r is None:
                    pc += 1
                elif r >= 0:
                    pc = r
                else:
                    g.pc = pc
                    return r
                if machine.clock > limit:
                    ins = self.program.instrs[pc] if pc < len(self.program.instrs) else None
                    raise EmulationError(f"instruction limit of {limit} exceeded (endless loop?)", self.path,
                                         ins.lineno if ins else None, ins.text() if ins else None)
        except EmulationError as exc:
            if exc.line is None and pc < len(self.program.instrs):
                ins = self.program.instrs[pc]
                exc = type(exc)(exc.message, self.path, ins.lineno, ins.text())
                raise exc from None
            raise
        except Exception as exc:  # a bug of the emulator: still say where
            ins = self.program.instrs[pc] if pc < len(self.program.instrs) else None
            raise EmulationError(f"internal emulator error: {type(exc).__name__}: {exc}", self.path,
                                 ins.lineno if ins else None, ins.text() if ins else None) from exc


def _canonical_statements(ins) -> list:
    """The instruction's statements under their gfx11 names: an alias LLVM accepts
    (``v_add_u32_e32``, ``ds_read_b128``) runs as the opcode it stands for."""
    out = []
    for stmt, info in zip(ins.stmts, ins.infos):
        if info is not None and info.mnemonic != stmt.mnemonic:
            stmt = replace(stmt, mnemonic=info.mnemonic)
        out.append(stmt)
    return out


def _cache_control(info) -> bool:
    """Cache invalidations (buffer_gl0_inv, buffer_gl1_inv, s_gl1_inv, s_dcache_inv): operand-less
    MUBUF/SMEM opcodes. The emulator has no caches and completes every access in order of its
    counters, so they change no result."""
    return info is not None and info.encoding in ("MUBUF", "SMEM") and not info.operands
