"""The worklog's VGPR bank table for a loop, and the loop's VALU summary.

One row per VALU instruction with the cells DSTX SRC0X SRC1X DSTY SRC0Y SRC1Y:
``R<bank>`` a register-file read, ``Cache<bank>`` an operand-cache hit,
``W<bank>`` a result landing in that bank during the row's cycle (the previous
VALU instruction's destination, written one cycle after it issued), as in the
worklog's tables. The cells come from :mod:`isalint.bankmodel`.

``loop_summary(analysis, loop)`` gives the numbers (stable keys, one iteration);
``build(analysis, loop)`` the whole report; ``render_text``, ``render_html`` and
``to_json`` print it.
"""
from __future__ import annotations

import html
import json

from ..bankmodel import COLUMNS, Simulation, simulate

VALU_KLASSES = ("valu", "trans", "vopd")

# The worklog's colours: bank 0 yellow, 1 orange, 2 red, 3 blue; cache hits green.
BANK_COLORS = {0: "#f7e463", 1: "#f5a142", 2: "#e8555a", 3: "#5b8ee6"}
CACHE_COLOR = "#7bc96f"
_RICH = {0: "black on yellow", 1: "black on dark_orange", 2: "white on red3", 3: "white on blue",
         "Cache": "black on green3"}

SUMMARY_KEYS = (
    "instructions", "valu", "vopd", "fma", "vopd_fma", "vopd_fma_instructions", "single_fma", "vopd_fma_share",
    "stall_cycles", "stalled_instructions", "rf_reads", "cache_hits", "src2_reads", "lds_ops", "lds_ops_per_fma",
    "issue_cycles",
)


def _indices(analysis, loop) -> list[int]:
    if loop is None:
        return list(range(len(analysis.program.instrs)))
    return analysis.loop_indices(loop)


def _is_fma(mnemonic: str) -> bool:
    return "fma" in mnemonic


def loop_name(analysis, loop) -> str | None:
    if loop is None:
        return None
    return analysis.cfg.blocks[loop.header].label or f"block{loop.header}"


def _simulate(analysis, loop) -> tuple[list[int], Simulation]:
    idx = _indices(analysis, loop)
    instrs = analysis.program.instrs
    return idx, simulate([instrs[i] for i in idx], loop=loop is not None)


def loop_summary(analysis, loop, sim: Simulation | None = None) -> dict:
    """The VALU numbers of one iteration of ``loop`` (the whole file when ``loop`` is None).

    Keys (stable): instructions, valu, vopd, fma (FMA operations), vopd_fma (FMA
    operations issued in VOPD halves), vopd_fma_instructions (VOPD instructions
    with at least one FMA half), single_fma, vopd_fma_share (vopd_fma / fma),
    stall_cycles, stalled_instructions, rf_reads and cache_hits (SRC0/SRC1
    port reads served by the register file vs by the operand caches; a register
    read through two ports counts twice), src2_reads
    (accumulators), lds_ops, lds_ops_per_fma, issue_cycles (VALU instructions +
    stall cycles: the modelled VALU issue time of one iteration), plus loop,
    first_line and last_line.
    """
    idx = _indices(analysis, loop)
    instrs = analysis.program.instrs
    if sim is None:
        sim = simulate([instrs[i] for i in idx], loop=loop is not None)
    valu = [instrs[i] for i in idx if instrs[i].klass in VALU_KLASSES]
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
    lds = sum(1 for i in idx if instrs[i].klass == "lds")
    totals = sim.totals()
    lines = [instrs[i].lineno for i in idx]
    return {
        "loop": loop_name(analysis, loop),
        "first_line": min(lines) if lines else None,
        "last_line": max(lines) if lines else None,
        "instructions": len(idx),
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
    }


def build(analysis, loop) -> dict:
    """The report of ``loop`` (None: the whole file, from cold caches) as plain data."""
    idx, sim = _simulate(analysis, loop)
    rows = []
    for step in sim.steps:
        if not step.valu:
            continue
        rows.append({
            "line": step.op.line,
            "text": step.op.text,
            "cells": step.cells(),
            "stall": step.stall,
            "cycles": step.cycles,
            "conflict_banks": [b for b, _ in step.conflicts],
        })
    return {
        "file": analysis.program.path,
        "loop": loop_name(analysis, loop),
        "summary": loop_summary(analysis, loop, sim),
        "model": sim.params.describe(),
        "columns": list(COLUMNS),
        "rows": rows,
    }


def to_json(report: dict) -> str:
    return json.dumps(report, indent=1)


def _summary_lines(s: dict) -> list[str]:
    share = f"{100 * s['vopd_fma_share']:.1f}%"
    reads = s["rf_reads"] + s["cache_hits"]
    hit = f"{100 * s['cache_hits'] / reads:.0f}%" if reads else "-"
    return [
        f"instructions          {s['instructions']}",
        f"VALU instructions     {s['valu']} ({s['vopd']} VOPD)",
        f"FMAs                  {s['fma']}: {s['vopd_fma_instructions']} VOPD FMA instructions "
        f"({s['vopd_fma']} FMAs), {s['single_fma']} single",
        f"FMAs issued as VOPD   {share}",
        f"stall cycles          {s['stall_cycles']} (in {s['stalled_instructions']} instructions)",
        f"register-file port reads {s['rf_reads']}, operand-cache hits {s['cache_hits']} ({hit} hits); "
        f"{s['src2_reads']} accumulator reads",
        f"LDS operations        {s['lds_ops']} ({s['lds_ops_per_fma']:.4g} per FMA)",
        f"VALU issue cycles     {s['issue_cycles']}{' per iteration' if s['loop'] else ''} (modelled)",
    ]


def _title(report: dict) -> str:
    s = report["summary"]
    where = f"loop {report['loop']}" if report["loop"] else "whole file (no loop)"
    lines = f", lines {s['first_line']}-{s['last_line']}" if s["first_line"] else ""
    return f"{report['file']}: {where}{lines}"


_LEGEND = ("R<k>: register-file read from bank k; Cache<k>: operand-cache hit in bank k; W<k>: a result written "
           "to bank k during this cycle (the previous VALU instruction's destination)")


def render_text(report: dict, color: bool = False, width: int | None = None) -> str:
    """A rich table (colored per bank when ``color``) followed by the summary."""
    from io import StringIO

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    buf = StringIO()
    console = Console(file=buf, force_terminal=color, no_color=not color, width=width or 160,
                      color_system="256" if color else None)
    table = Table(title=_title(report), title_justify="left", show_lines=False, pad_edge=False)
    table.add_column("line", justify="right")
    table.add_column("instruction", overflow="ellipsis", no_wrap=True, max_width=72)
    for c in report["columns"]:
        table.add_column(c, justify="center")
    table.add_column("stall", justify="right")
    for row in report["rows"]:
        cells = []
        for c in report["columns"]:
            cell = row["cells"][c]
            style = None
            if cell.startswith("Cache"):
                style = _RICH["Cache"]
            elif cell[:1] in "RW" and cell[1:2].isdigit():
                style = _RICH[int(cell[1])]
            cells.append(Text(cell, style=style or ""))
        stall = Text(str(row["stall"]) if row["stall"] else "", style="bold red" if row["stall"] else "")
        table.add_row(str(row["line"]), row["text"], *cells, stall)
    console.print(table)
    console.print(_LEGEND)
    console.print()
    for ln in _summary_lines(report["summary"]):
        console.print(ln)
    return buf.getvalue().rstrip("\n")


def render_html(report: dict) -> str:
    """A standalone HTML page: the table with the worklog's bank colours, and the summary."""
    esc = html.escape
    css = "\n".join([
        "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}",
        "table{border-collapse:collapse;font-size:13px}",
        "th,td{border:1px solid #ccc;padding:2px 6px}",
        "td.i{font-family:monospace;white-space:nowrap}",
        "td.c{text-align:center;min-width:4.5em;font-family:monospace}",
        "td.stall{color:#b00;font-weight:bold;text-align:right}",
        *(f".b{b}{{background:{col}}}" for b, col in BANK_COLORS.items()),
        f".cache{{background:{CACHE_COLOR}}}",
        "pre{background:#f5f5f5;padding:.8em}",
    ])
    out = ["<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\">",
           f"<title>isalint report: {esc(_title(report))}</title>", f"<style>{css}</style></head><body>",
           f"<h1>VGPR banks: {esc(_title(report))}</h1>",
           "<h2>Summary</h2>", "<pre>" + esc("\n".join(_summary_lines(report["summary"]))) + "</pre>",
           "<h2>Bank table</h2>", f"<p>{esc(_LEGEND)}</p>", "<table>",
           "<tr><th>line</th><th>instruction</th>" + "".join(f"<th>{esc(c)}</th>" for c in report["columns"])
           + "<th>stall</th></tr>"]
    for row in report["rows"]:
        tds = []
        for c in report["columns"]:
            cell = row["cells"][c]
            cls = "c"
            if cell.startswith("Cache"):
                cls += " cache"
            elif cell[:1] in "RW" and cell[1:2].isdigit():
                cls += f" b{cell[1]}"
            tds.append(f'<td class="{cls}">{esc(cell)}</td>')
        stall = str(row["stall"]) if row["stall"] else ""
        out.append(f'<tr><td>{row["line"]}</td><td class="i">{esc(row["text"])}</td>{"".join(tds)}'
                   f'<td class="stall">{stall}</td></tr>')
    out.append("</table>")
    model = ", ".join(f"{k} = {v}" for k, v in report["model"].items())
    out.append(f"<h2>Model</h2><p>{esc(model)} (see isalint/bankmodel.py for what each means and why).</p>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
