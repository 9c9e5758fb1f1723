"""Every fix pass, declared once.

One :class:`Pass` entry gives a pass its name (the ``isalint fix --NAME`` flag and the ``optimize``
step; the package is ``isalint.fixes.<name with underscores>``), its help, its own options and
whether ``optimize`` runs it. The order of :data:`PASSES` is the order passes run in, in ``fix``
(whatever order the flags are given in) and in ``optimize``. ``isalint fix`` and ``isalint optimize``
build their flags, options and help from here; nothing else lists the passes.

Options are plain data (no click here, so reading the registry costs nothing): ``kind`` is ``"flag"``,
``"text"``, ``"int"`` or ``"int>=1"``. An option several passes share (``--loop``) is one :class:`Option` object
named by each of them. ``optimize_default`` is the value ``optimize`` uses when the option is not
given, where it differs from ``fix``'s.

What a pass declares in its own module, because it is a fact about its code rather than about the
command line: ``ONLY_METADATA`` (validated by comparing machine code), ``WRITES_HINTS`` (its output
needs no hint pass after it) and ``VALIDATE_SIZES`` (the GEMM sizes its output is emulated at).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Option:
    flag: str  # "--max-n"
    help: str
    kind: str = "flag"  # flag | text | int | int>=1
    default: object = None
    optimize_default: object = None  # optimize's default, when it differs from fix's

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


@dataclass(frozen=True)
class Pass:
    name: str  # "dual-fmac": the fix flag and the optimize step
    help: str
    options: tuple[Option, ...] = ()
    in_optimize: bool = True

    @property
    def dest(self) -> str:
        return self.name.replace("-", "_")

    @property
    def module(self) -> str:
        return f"isalint.fixes.{self.dest}"

    @property
    def own_options(self) -> tuple[Option, ...]:
        """The options only this pass takes (a usage error without it)."""
        return tuple(o for o in self.options if sum(o in p.options for p in PASSES) == 1)


LOOP = Option("--loop", "Loop header label for loop passes (default: the hottest loop; for --batch-gmem, the loop "
                        "with the most VGPR-addressed global loads).", "text")

PASSES: tuple[Pass, ...] = (
    Pass("dual-fmac", "Rewrite the hot loop's FMAs as bank-conflict-free v_dual_fmac_f32.", (LOOP,)),
    Pass("unroll", "Unroll a loop of proven trip count, folding its address steps into LDS offsets.",
         (LOOP, Option("--factor", "With --unroll: copies per iteration of a shorter loop (a divisor of the trip "
                                   "count; default: unroll fully).", "int"))),
    Pass("batch-gmem", "Load the loop's global loads from SGPR bases with one VGPR byte offset per group.",
         (LOOP, Option("--max-n", "--batch-gmem: the largest N the output must support, when its 32-bit offsets "
                                  "cannot cover every N the original handles.", "int>=1", None, 32768),
          Option("--spread", "--batch-gmem: spread the loads over the loop body in groups of 2."))),
    Pass("wide-lds", "Load adjacent 8-byte LDS pairs as one ds_load_b128 where dual issue and the VGPR bank plan "
                     "survive.", (LOOP,)),
    Pass("wide-copy", "Copy the loop's next tile from global memory to LDS in 16-byte pieces (global_load_b128, "
                      "ds_store_b128) after --batch-gmem.", (LOOP,)),
    Pass("tidy", "Remove what the hot loop computes for nothing: a branch condition computed twice, copies of "
                 "registers the loop keeps, dead scalar and vector results.", (LOOP,)),
    Pass("double-buffer", "Two LDS tiles, the loop written twice (one per tile), one s_barrier per iteration "
                          "instead of two.",
         (LOOP, Option("--keep-occupancy", "--double-buffer: refuse when the second LDS tile would leave room for "
                                           "fewer workgroups per CU."))),
    Pass("peel-last", "Run the loop's last iteration after it (its FMAs alone): no copy guard in the loop, one "
                      "counter add and one branch per copy; with two copies the second loads from SGPR bases of "
                      "its own.", (LOOP,)),
    Pass("delay-alu", "Write the s_delay_alu hints DELAY001 finds missing."),
    Pass("metadata", "Rewrite VGPR/SGPR counts in the descriptor, metadata and comments.", in_optimize=False),
)


def by_name(name: str) -> Pass | None:
    """The pass called ``name`` (``dual-fmac`` or ``dual_fmac``), else None."""
    key = name.replace("_", "-")
    return next((p for p in PASSES if p.name == key), None)


def optimize_steps() -> tuple[str, ...]:
    """The names of the passes ``optimize`` runs, in order."""
    return tuple(p.name for p in PASSES if p.in_optimize)


def options(passes=None) -> tuple[Option, ...]:
    """Every option of ``passes`` (default: every pass), each once, in the order of first mention."""
    seen: list[Option] = []
    for p in PASSES if passes is None else passes:
        seen += [o for o in p.options if o not in seen]
    return tuple(seen)


def option_values(given: dict, passes=None, for_optimize: bool = False) -> dict:
    """The options dict a pass's ``apply`` receives: every option of ``passes`` by its dest, from
    ``given`` (a command's keyword arguments), else its default (``optimize``'s where it has one)."""
    out = {}
    for o in options(passes):
        value = given.get(o.dest)
        if value is None:
            value = o.optimize_default if for_optimize and o.optimize_default is not None else o.default
        out[o.dest] = bool(value) if o.kind == "flag" else value
    return out


def stray_options(given: dict, chosen) -> str | None:
    """Why options belonging to passes not in ``chosen`` may not be given (a usage error), else None."""
    for p in PASSES:
        own = p.own_options
        if p in chosen or not own:
            continue
        if any(given.get(o.dest) not in (None, False) for o in own):
            flags = [o.flag for o in own]
            if len(flags) == 1:
                return f"{flags[0]} goes with --{p.name}"
            return f"{', '.join(flags[:-1])} and {flags[-1]} belong to --{p.name}"
    return None
