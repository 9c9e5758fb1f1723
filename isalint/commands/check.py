"""``isalint check PATH...``: run the rules and report findings."""
from __future__ import annotations

import sys

import click

from ..checker import check_analysis, expand_paths, find_config, selected_codes


def _codes(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [c.strip().upper() for c in value.split(",") if c.strip()]


@click.command("check")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--select", help="Comma-separated rule codes (or prefixes) to run.")
@click.option("--ignore", help="Comma-separated rule codes (or prefixes) to skip.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif", "github"]), default="text",
              show_default=True)
@click.option("--target", help="Target when a file has no .amdgcn_target (default gfx1100).")
@click.option("--color/--no-color", default=None, help="Color text output (default: when on a terminal).")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default="info", show_default=True,
              help="Lowest severity that makes the exit code 1 (all findings are still reported).")
def command(paths, select, ignore, fmt, target, color, fail_on):
    """Report problems in gfx11 assembly files (directories are searched for .s/.asm).

    Exit 0 when there are no findings, 1 when there are, 2 on a usage or input error.
    """
    from .. import rules as registry
    from ..analysis import Analysis
    from ..parse.source import InputError
    from ..report import diagnostics as out

    files = expand_paths(list(paths))
    if not files:
        click.echo("isalint: no .s or .asm files found in " + ", ".join(paths), err=True)
        sys.exit(2)
    available = registry.available()
    cli_select, cli_ignore = _codes(select), _codes(ignore) or []
    unknown = [c for c in (cli_select or []) + cli_ignore if not any(a.startswith(c) for a in available) and c != "ALL"]
    if unknown:
        click.echo(f"isalint: unknown rule code(s): {', '.join(unknown)}", err=True)
        sys.exit(2)
    diagnostics, sources, errors = [], {}, []
    for path in files:
        config = find_config(path)
        # an explicit --select on the command line replaces the file's select and ignore lists
        if cli_select is not None:
            codes = selected_codes(available, cli_select, cli_ignore)
        else:
            codes = selected_codes(available, config.select, cli_ignore + config.ignore)
        try:
            analysis = Analysis.from_path(path, {"target": target or config.target})
        except InputError as exc:
            errors.append(str(exc))
            continue
        sources[path] = analysis.program.source
        diagnostics.extend(check_analysis(analysis, codes))
    for e in errors:
        click.echo(f"isalint: {e}", err=True)
    if fmt == "json":
        click.echo(out.render_json(diagnostics))
    elif fmt == "sarif":
        click.echo(out.render_sarif(diagnostics, registry.all_rules()))
    elif fmt == "github":
        if diagnostics:
            click.echo(out.render_github(diagnostics))
    else:
        use_color = out.stdout_is_terminal() if color is None else color
        if diagnostics:
            click.echo(out.render_text(diagnostics, sources, use_color))
        click.echo(out.summary_line(diagnostics, len(files) - len(errors)), err=bool(diagnostics) and False)
    if errors:
        sys.exit(2)
    rank = {"error": 0, "warning": 1, "info": 2}
    failing = [d for d in diagnostics if rank[d.severity] <= rank[fail_on]]
    sys.exit(1 if failing else 0)
