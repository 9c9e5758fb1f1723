"""``isalint graph FILE``: the dependency graph of a loop or of the whole kernel."""
from __future__ import annotations

import json

import click

from .common import fail, load_analysis, select_loop


def _dot(graph, program) -> str:
    lines = ["digraph deps {", '  node [shape=box, fontname="monospace"];']
    for i in graph.nodes:
        ins = program.instrs[i]
        label = f"{ins.lineno}: {ins.text()}".replace("\\", "\\\\").replace('"', '\\"')
        lines.append(f'  n{i} [label="{label}"];')
    style = {"RAW": "solid", "WAR": "dashed", "WAW": "dotted", "WAITS_FOR": "bold"}
    for e in graph.edges:
        label = f"{e.kind} {','.join(e.regs)}" + (" (carried)" if e.carried else "")
        lines.append(f'  n{e.src} -> n{e.dst} [label="{label}", style={style[e.kind]}];')
    lines.append("}")
    return "\n".join(lines)


@click.command("graph")
@click.argument("path", type=click.Path())
@click.option("--kernel", "kernel", metavar="GLOB", help="The kernel of a code object (.co, .hsaco, fat binary) to read.")
@click.option("--loop", "loop_label", help="Label of a loop header (default: the whole kernel).")
@click.option("--hot", is_flag=True, help="Use the hottest (innermost, deepest) loop.")
@click.option("--format", "fmt", type=click.Choice(["dot", "json"]), default="json", show_default=True)
def command(path, kernel, loop_label, hot, fmt):
    """Dependency graph: RAW/WAR/WAW edges labelled by register, s_waitcnt -> memory op edges."""
    analysis = load_analysis(path, kernel=kernel)
    if loop_label or hot:
        loop = select_loop(analysis, loop_label)
        if loop is None:
            fail(f"{analysis.program.path}: --hot: the file has no loop (without --hot: the whole kernel's graph)")
        graph = analysis.depgraph(analysis.loop_indices(loop), loop=True)
    else:
        graph = analysis.depgraph()
    if fmt == "dot":
        click.echo(_dot(graph, analysis.program))
        return
    import networkx as nx

    g = graph.to_networkx(analysis.program)
    click.echo(json.dumps(nx.node_link_data(g, edges="links"), indent=1))
