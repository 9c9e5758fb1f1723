"""A loop's VALU numbers: instructions, FMAs and how many are dual-issued, modelled bank stalls,
operand-cache hits, LDS operations, issue cycles — one iteration, in the steady state — and the
same per k-step (:mod:`isalint.model.ksteps`), so that a loop compares with its unrolled form.

The bank numbers come from :func:`isalint.hw.vgpr_banks.simulate` run over the loop twice (the
second pass, with the caches warmed by the first, is counted). ``isalint report`` prints them above
its table; the ``--dual-fmac`` pass prints them before and after its rewrite.
"""
from __future__ import annotations

from ..hw.vgpr_banks import Simulation, simulate
from .ksteps import k_steps

VALU_KLASSES = ("valu", "trans", "vopd")

SUMMARY_KEYS = (
    "instructions", "valu", "vopd", "fma", "vopd_fma", "vopd_fma_instructions", "single_fma", "vopd_fma_share",
    "stall_cycles", "stalled_instructions", "rf_reads", "cache_hits", "src2_reads", "lds_ops", "lds_ops_per_fma",
    "issue_cycles", "salu_branch", "waits", "k_steps", "per_k_step",
)


def loop_indices(analysis, loop) -> list[int]:
    """The instructions of ``loop`` (every instruction of the file when ``loop`` is None)."""
    if loop is None:
        return list(range(len(analysis.program.instrs)))
    return analysis.loop_indices(loop)


def _is_fma(mnemonic: str) -> bool:
    return "fma" in mnemonic


def loop_name(analysis, loop) -> str | None:
    if loop is None:
        return None
    return analysis.cfg.loop_name(loop)


def simulate_loop(analysis, loop) -> tuple[list[int], Simulation]:
    """The loop's instructions and the bank model's run over them (a loop: steady state)."""
    idx = loop_indices(analysis, loop)
    instrs = analysis.program.instrs
    return idx, simulate([instrs[i] for i in idx], loop=loop is not None)


def loop_summary(analysis, loop, sim: Simulation | None = None) -> dict:
    """The VALU numbers of one iteration of ``loop`` (the whole file when ``loop`` is None).

    Keys (stable): those of :func:`sequence_summary`, plus loop, first_line and last_line. A loop
    holding another runs that one's body many times per iteration: its static counts are no
    per-iteration figures, so it gets no k-steps.
    """
    idx = loop_indices(analysis, loop)
    instrs = analysis.program.instrs
    lines = [instrs[i].lineno for i in idx]
    out = {
        "loop": loop_name(analysis, loop),
        "first_line": min(lines) if lines else None,
        "last_line": max(lines) if lines else None,
    }
    out.update(sequence_summary([instrs[i] for i in idx], steady=loop is not None, sim=sim,
                                per_k_step=loop is None or not loop.children))
    return out


def sequence_summary(instrs, steady: bool = True, sim: Simulation | None = None, per_k_step: bool = True) -> dict:
    """The numbers of a stretch of instructions: run in a loop (``steady``, the caches warmed by a
    first pass) or once.

    Keys (stable): instructions, valu, vopd, fma (FMA operations), vopd_fma (FMA
    operations issued in VOPD halves), vopd_fma_instructions (VOPD instructions
    with at least one FMA half), single_fma, vopd_fma_share (vopd_fma / fma),
    stall_cycles, stalled_instructions, rf_reads and cache_hits (SRC0/SRC1
    port reads served by the register file vs by the operand caches; a register
    read through two ports counts twice), src2_reads
    (accumulators), lds_ops, lds_ops_per_fma, issue_cycles (VALU instructions +
    stall cycles: the modelled VALU issue time), salu_branch (SALU and branch instructions), waits
    (``s_waitcnt``), k_steps (outer products, :func:`isalint.model.ksteps.k_steps`; None without one
    register tile or when not asked for) and per_k_step (instructions, valu, salu_branch, waits,
    stall_cycles and issue_cycles divided by k_steps; None without k-steps).
    """
    instrs = list(instrs)
    if sim is None:
        sim = simulate(instrs, loop=steady)
    valu = [ins for ins in instrs if ins.klass in VALU_KLASSES]
    fma = vopd_fma = vopd_fma_instrs = single_fma = 0
    for ins in valu:
        halves = [s.mnemonic for s in ins.stmts]
        n = sum(1 for m in halves if _is_fma(m))
        fma += n
        if ins.is_vopd:
            vopd_fma += n
            vopd_fma_instrs += 1 if n else 0
        else:
            single_fma += n
    lds = sum(1 for ins in instrs if ins.klass == "lds")
    totals = sim.totals()
    salu_branch = sum(1 for ins in instrs if ins.klass in ("salu", "branch"))
    waits = sum(1 for ins in instrs if ins.klass == "waitcnt")
    ks = k_steps(instrs) if per_k_step else None
    per = None
    if ks:
        per = {key: round(value / ks, 2) for key, value in (
            ("instructions", len(instrs)), ("valu", len(valu)), ("salu_branch", salu_branch), ("waits", waits),
            ("stall_cycles", totals["stall_cycles"]), ("issue_cycles", totals["issue_cycles"]))}
    return {
        "instructions": len(instrs),
        "valu": len(valu),
        "vopd": sum(1 for ins in valu if ins.is_vopd),
        "fma": fma,
        "vopd_fma": vopd_fma,
        "vopd_fma_instructions": vopd_fma_instrs,
        "single_fma": single_fma,
        "vopd_fma_share": round(vopd_fma / fma, 4) if fma else 0.0,
        "stall_cycles": totals["stall_cycles"],
        "stalled_instructions": totals["stalled_instructions"],
        "rf_reads": totals["rf_reads"],
        "cache_hits": totals["cache_hits"],
        "src2_reads": totals["src2_reads"],
        "lds_ops": lds,
        "lds_ops_per_fma": round(lds / fma, 4) if fma else 0.0,
        "issue_cycles": totals["issue_cycles"],
        "salu_branch": salu_branch,
        "waits": waits,
        "k_steps": ks,
        "per_k_step": per,
    }
