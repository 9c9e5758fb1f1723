"""Click options of ``isalint fix`` and ``isalint optimize``, built from the pass registry
(:mod:`isalint.fixes.registry`): a pass's flag, options and help are declared there once."""
from __future__ import annotations

import click

from ..fixes import registry
from ..fixes.registry import Option, options


def _click_type(option: Option):
    return {"text": str, "int": int, "int>=1": click.IntRange(min=1)}[option.kind]


def option_decorators(passes=None, for_optimize: bool = False):
    """Decorators adding every option of ``passes``, in the registry's order."""
    out = []
    for o in options(passes):
        if o.kind == "flag":
            out.append(click.option(o.flag, o.dest, is_flag=True, help=o.help))
            continue
        default = o.optimize_default if for_optimize and o.optimize_default is not None else o.default
        out.append(click.option(o.flag, o.dest, type=_click_type(o), default=default,
                                show_default=default is not None, help=o.help))
    return out


def flag_decorators(passes=None):
    """A flag per pass (``--dual-fmac``), in the order the passes run."""
    return [click.option(f"--{p.name}", p.dest, is_flag=True, help=p.help)
            for p in (registry.PASSES if passes is None else passes)]


def apply_all(decorators):
    """One decorator applying ``decorators`` so that the first is listed first in ``--help``."""
    def wrap(f):
        for d in reversed(decorators):
            f = d(f)
        return f
    return wrap
