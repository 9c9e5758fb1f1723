"""``isalint rules`` and ``isalint explain CODE``."""
from __future__ import annotations

import click

from .common import fail


@click.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules_command(fmt):
    """List the rule codes with severity, summary and whether a fix exists."""
    from .. import rules as registry

    mods = registry.all_rules()
    if fmt == "json":
        import json

        click.echo(json.dumps([{"code": m.CODE, "name": m.NAME, "severity": m.SEVERITY, "summary": m.SUMMARY,
                                "fix": m.FIXABLE} for m in mods], indent=1))
        return
    import sys

    if not sys.stdout.isatty():  # a pipe or a file: one row per line, whatever its length
        click.echo(plain_table(mods))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="isalint rules")
    for col in ("code", "name", "severity", "fix", "summary"):
        table.add_column(col)
    for m in mods:
        table.add_row(m.CODE, m.NAME, m.SEVERITY, m.FIXABLE or "-", m.SUMMARY)
    Console().print(table)


def plain_table(mods) -> str:
    """The rule table as text, one rule per line: columns padded to their widest cell, the summary last."""
    rows = [("code", "name", "severity", "fix", "summary")]
    rows += [(m.CODE, m.NAME, m.SEVERITY, m.FIXABLE or "-", m.SUMMARY) for m in mods]
    widths = [max(len(r[k]) for r in rows) for k in range(4)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[4] for r in rows)


@click.command("explain")
@click.argument("code")
def explain_command(code):
    """Print a rule's full documentation (CODE is a rule code like DUAL001 or a name like illegal-vopd-pair)."""
    from .. import rules as registry

    if code.upper() in registry.available():
        m = registry.load(code)
    elif code.lower() in registry.names():
        m = registry.load(registry.names()[code.lower()])
    else:
        fail(f"unknown rule code or name {code}; see `isalint rules`")
    from ..report.explain import explanation

    click.echo(explanation(m))
