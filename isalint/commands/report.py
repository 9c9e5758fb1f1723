"""``isalint report FILE``: the VGPR bank / operand-cache table and VALU summary of a loop."""
from __future__ import annotations

import click

from .common import fail, load_analysis, select_loop


@click.command("report")
@click.argument("path", type=click.Path())
@click.option("--kernel", "kernel", metavar="GLOB", help="The kernel of a code object (.co, .hsaco, fat binary) to read.")
@click.option("--loop", "label", help="Label of the loop header (default: the hottest loop).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "html"]), default="text", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True),
              help="Write the report to this file instead of standard output.")
@click.option("--color/--no-color", default=None,
              help="Color the text table (default: on a terminal, unless NO_COLOR is set; FORCE_COLOR forces it).")
def command(path, kernel, label, fmt, output, color):
    """Print the VGPR bank table (R / Cache / W) for each VALU instruction of a loop
    (DSTX SRC0X SRC1X DSTY SRC0Y SRC1Y, colored per VGPR bank) and its summary:
    FMAs issued as VOPD, modelled stall cycles, register-file reads vs cache hits,
    LDS operations per FMA, VALU issue cycles per iteration.

    A file without loops is reported as one straight-line sequence.
    """
    from ..report import regtable

    analysis = load_analysis(path, kernel=kernel)
    loop = select_loop(analysis, label) if (label or analysis.cfg.loops) else None
    report = regtable.build(analysis, loop)
    if fmt == "json":
        text = regtable.to_json(report)
    elif fmt == "html":
        text = regtable.render_html(report)
    else:
        if color is None:
            from ..report.findings import use_color

            color = use_color(None) and output is None
        text = regtable.render_text(report, color=color)
    if output:
        try:
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(text if text.endswith("\n") else text + "\n")
        except OSError as exc:
            fail(f"cannot write {output}: {exc.strerror or exc}")
        click.echo(f"isalint: wrote {output}", err=True)
    else:
        click.echo(text, color=bool(color) if fmt == "text" else None)
