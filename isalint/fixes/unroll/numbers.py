"""The before/after figures of ``fix --unroll``, per k-step so that a loop and its unrolled
form compare (:func:`isalint.model.loop_stats.sequence_summary`)."""
from __future__ import annotations

from ...model.loop_stats import sequence_summary


def figures(instrs, vgprs: int | None) -> dict:
    """Per-k-step figures of one loop iteration (or of the unrolled code), run as in a loop."""
    s = sequence_summary(instrs)
    per = s["per_k_step"] or {key: s[key] for key in ("instructions", "valu", "salu_branch", "waits",
                                                        "stall_cycles", "issue_cycles")}
    return {**per, "k_steps": s["k_steps"] or 1, "vopd_fma_share": s["vopd_fma_share"], "vgprs": vgprs}


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
