"""The before/after figures of ``fix --unroll``, per k-step so that a loop and its unrolled
form compare (:mod:`isalint.model.ksteps`)."""
from __future__ import annotations

from ...hw.vgpr_banks import simulate
from ...model.ksteps import k_steps


def figures(instrs, vgprs: int | None) -> dict:
    """Per-k-step figures of one loop iteration (or of the unrolled code)."""
    ks = k_steps(instrs) or 1
    sim = simulate(list(instrs), loop=True)
    totals = sim.totals()
    fma = vopd_fma = 0
    for ins in instrs:
        n = sum(1 for s in ins.stmts if "fma" in s.mnemonic) if ins.klass in ("valu", "vopd") else 0
        fma += n
        vopd_fma += n if ins.is_vopd else 0
    return {
        "k_steps": ks,
        "instructions": len(instrs) / ks,
        "salu_branch": sum(1 for ins in instrs if ins.klass in ("salu", "branch")) / ks,
        "waits": sum(1 for ins in instrs if ins.klass == "waitcnt") / ks,
        "valu": sum(1 for ins in instrs if ins.klass in ("valu", "vopd", "trans")) / ks,
        "issue_cycles": totals["issue_cycles"] / ks,
        "stall_cycles": totals["stall_cycles"] / ks,
        "vopd_fma_share": vopd_fma / fma if fma else 0.0,
        "vgprs": vgprs,
    }


ROWS = (
    ("instructions per k-step", "instructions", "{:.1f}"),
    ("VALU per k-step", "valu", "{:.1f}"),
    ("SALU+branch per k-step", "salu_branch", "{:.1f}"),
    ("s_waitcnt per k-step", "waits", "{:.1f}"),
    ("VALU issue cycles/k-step", "issue_cycles", "{:.1f}"),
    ("bank stalls per k-step", "stall_cycles", "{:.1f}"),
    ("VOPD share of FMAs", "vopd_fma_share", "{:.1%}"),
    ("VGPRs", "vgprs", "{}"),
)


def table(before: dict, after: dict) -> list[str]:
    lines = [f"  {'':26}{'before':>10}{'after':>10}"]
    for name, key, fmt in ROWS:
        b, a = before.get(key), after.get(key)
        cell = (lambda v: "-" if v is None else fmt.format(v))
        lines.append(f"  {name:26}{cell(b):>10}{cell(a):>10}")
    return lines
