"""The worklog's VGPR bank table for a loop, with the loop's VALU summary.

One row per VALU instruction with the cells DSTX SRC0X SRC1X DSTY SRC0Y SRC1Y:
``R<bank>`` a register-file read, ``Cache<bank>`` an operand-cache hit,
``W<bank>`` a result landing in that bank during the row's cycle (the previous
VALU instruction's destination, written one cycle after it issued), as in the
worklog's tables. The cells come from :mod:`isalint.hw.vgpr_banks`, the summary from
:func:`isalint.model.loop_stats.loop_summary`.

``build(analysis, loop)`` gives the whole report; ``render_text``, ``render_html`` and
``to_json`` print it.
"""
from __future__ import annotations

import html
import json

from ..hw.vgpr_banks import COLUMNS
from ..model.loop_stats import loop_name, loop_summary, simulate_loop

# The worklog's colours: bank 0 yellow, 1 orange, 2 red, 3 blue; cache hits green.
BANK_COLORS = {0: "#f7e463", 1: "#f5a142", 2: "#e8555a", 3: "#5b8ee6"}
CACHE_COLOR = "#7bc96f"
_RICH = {0: "black on yellow", 1: "black on dark_orange", 2: "white on red3", 3: "white on blue",
         "Cache": "black on green3"}

def build(analysis, loop) -> dict:
    """The report of ``loop`` (None: the whole file, from cold caches) as plain data."""
    idx, sim = simulate_loop(analysis, loop)
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
    ] + _k_step_lines(s)


def _k_step_lines(s: dict) -> list[str]:
    """Per k-step figures, which compare a loop with its unrolled form (one iteration of an unrolled
    loop is several k-steps)."""
    per = s.get("per_k_step")
    if not per:
        return []
    n = s["k_steps"]
    fmas = s["fma"] // n
    return [
        f"k-steps               {n} per {'iteration' if s['loop'] else 'run'} ({fmas} FMAs each, one per accumulator)",
        f"per k-step            {per['instructions']:g} instructions ({per['valu']:g} VALU, "
        f"{per['salu_branch']:g} SALU/branch, {per['waits']:g} s_waitcnt)",
        f"                      {per['issue_cycles']:g} VALU issue cycles, {per['stall_cycles']:g} stall cycles "
        "(modelled)",
    ]


def _title(report: dict) -> str:
    s = report["summary"]
    where = f"loop {report['loop']}" if report["loop"] else "whole file (no loop)"
    lines = f", lines {s['first_line']}-{s['last_line']}" if s["first_line"] else ""
    return f"{report['file']}: {where}{lines}"


# What the table's columns and cells mean: printed above the table in text and HTML alike.
_LEGEND = ("Columns: DSTX, SRC0X, SRC1X are the destination and the two sources of the instruction (of a VOPD "
           "pair's X half); DSTY, SRC0Y, SRC1Y those of its Y half. Cells: R<k> a register-file read from bank k "
           "(register vN is in bank N mod 4); Cache<k> an operand-cache hit in bank k (no register-file read); "
           "W<k> a result written to bank k during this row's cycle: the previous VALU instruction's destination, "
           "written one cycle after that instruction issued (not the row's own result). stall: the cycles the "
           "instruction waits for its banks (a bank delivers one value per cycle).")


def _model_line(report: dict) -> str:
    return "model: " + ", ".join(f"{k} = {v}" for k, v in report["model"].items())


def render_text(report: dict, color: bool = False, width: int | None = None) -> str:
    """A rich table (colored per bank when ``color``) followed by the summary."""
    from io import StringIO

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    buf = StringIO()
    console = Console(file=buf, force_terminal=color, no_color=not color, width=width or 160,
                      color_system="256" if color else None)
    table = Table(show_lines=False, pad_edge=False)
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
    console.print(_title(report), markup=False)
    console.print(_LEGEND, markup=False)
    console.print(table)
    console.print()
    for ln in _summary_lines(report["summary"]):
        console.print(ln, markup=False)
    console.print(_model_line(report) + " (isalint/hw/vgpr_banks.py says what each means and why)", markup=False)
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
    out.append(f"<h2>Model</h2><p>{esc(model)} (see isalint/hw/vgpr_banks.py for what each means and why).</p>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
