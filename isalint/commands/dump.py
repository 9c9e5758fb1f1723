"""``isalint dump FILE``: the program model, one row per instruction."""
from __future__ import annotations

import json

import click

from .common import load_analysis, loop_name


def _banks(ins) -> list[int]:
    banks = []
    for stmt_slots in ins.slots:
        for slot in stmt_slots:
            for r in slot.regs:
                if r[0] == "v" and r[1:].isdigit():
                    banks.append(int(r[1:]) % 4)
    return banks


def _name(row: dict) -> str:
    """The opcode as written, with the gfx11 opcode it stands for when it is an alias."""
    if row["canonical"] != row["opcode"]:
        return f"{row['opcode']} (= {row['canonical']})"
    return row["opcode"]


def rows(analysis) -> list[dict]:
    cfg = analysis.cfg
    out = []
    for ins in analysis.program.instrs:
        loop = cfg.loop_of(ins.index)
        out.append({
            "index": ins.index,
            "line": ins.lineno,
            "opcode": ins.mnemonic,
            "canonical": ins.canonical,
            "class": ins.klass,
            "defs": ins.defs,
            "uses": ins.uses,
            "vgpr_banks": _banks(ins),
            "counters": list(ins.counters),
            "block": cfg.block_of[ins.index],
            "loop": loop_name(analysis, loop) if loop else None,
            "loop_depth": loop.depth if loop else 0,
        })
    return out


@click.command("dump")
@click.argument("path", type=click.Path())
@click.option("--kernel", "kernel", metavar="GLOB", help="The kernel of a code object (.co, .hsaco, fat binary) to read.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def command(path, kernel, fmt):
    """Print every instruction with its class, defs, uses, VGPR banks, block and loop."""
    analysis = load_analysis(path, kernel=kernel)
    data = rows(analysis)
    if fmt == "json":
        click.echo(json.dumps(data, indent=1))
        return
    click.echo(f"{'idx':>5} {'line':>5}  {'class':<13} {'block':>5} {'loop':<10} opcode / defs <- uses [banks]")
    for r in data:
        click.echo(f"{r['index']:>5} {r['line']:>5}  {r['class']:<13} {r['block']:>5} {(r['loop'] or '-'):<10} "
                   f"{_name(r)}  {','.join(r['defs']) or '-'} <- {','.join(r['uses']) or '-'}"
                   f"  [{''.join(map(str, r['vgpr_banks']))}]")
