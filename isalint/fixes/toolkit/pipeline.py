"""The common tail of ``isalint fix``: run the chosen passes in order, validate the result, write it.

:func:`run_passes` gives each pass the previous one's output re-parsed and stops at the first refusal;
:func:`validate` proves the result equal to the input (assembling both and comparing the machine code
when only metadata changed, else running both in the emulator, :mod:`isalint.validate.equivalence`);
:func:`write_atomic` writes through :mod:`.destination` (a temporary file in the target's directory
and a rename, so the target is either untouched or complete).
"""
from __future__ import annotations

import importlib
import os
import tempfile
from dataclasses import dataclass, field

from .. import FixRefused, by_name


@dataclass
class Outcome:
    original: str  # the input file's text
    text: str  # the last pass's output (the input when a pass refused)
    summaries: list[str] = field(default_factory=list)  # one per pass that ran
    refused: tuple[str, str] | None = None  # (pass name, reason) of the pass that refused
    only_metadata: bool = False  # every pass that ran may change metadata only
    only_hints: bool = False  # every pass that ran changes metadata or s_delay_alu hints only, one hints
    sizes: tuple[int, ...] = (256,)  # GEMM sizes to validate at: every size a pass asks for

    @property
    def changed(self) -> bool:
        return self.text != self.original


def run_passes(analysis, names: list[str], options: dict) -> Outcome:
    """Run the passes ``names`` (:data:`isalint.fixes.registry.PASSES`, e.g. ``dual-fmac``) in that order
    on ``analysis``; the refusal, if any, names the pass as given."""
    from ...analysis import Analysis
    from ...parse.source import parse_text

    path = analysis.program.path
    original = analysis.program.source.render()
    out = Outcome(original, original)
    modules = [importlib.import_module(by_name(name).module) for name in names]
    out.only_metadata = all(getattr(m, "ONLY_METADATA", False) for m in modules)
    out.only_hints = not out.only_metadata and all(
        getattr(m, "ONLY_METADATA", False) or getattr(m, "WRITES_HINTS", False) for m in modules)
    # a pass whose code depends on N (strides computed at run time) asks, with VALIDATE_SIZES, for
    # more than one size
    out.sizes = tuple(sorted({n for m in modules for n in getattr(m, "VALIDATE_SIZES", (256,))}))
    for n, (name, module) in enumerate(zip(names, modules)):
        try:
            result = apply_pass(name, module, analysis, options)
        except FixRefused as exc:
            return Outcome(original, original, out.summaries, (name, str(exc)), out.only_metadata, out.only_hints,
                           out.sizes)
        before = analysis.program.source.render()
        text, notes = finish_pass(module, before, result.text, path)
        out.text = text
        out.summaries.append("\n".join([result.summary, *notes]) if notes else result.summary)
        if n < len(names) - 1:
            analysis = Analysis.from_source(parse_text(out.text, path))
    return out


def apply_pass(name: str, module, analysis, options: dict):
    """``module.apply(analysis, options)``, refused (:class:`FixRefused`, with the line and the reason)
    when it adds, removes or changes an instruction of code that reaches an address by a numeric
    offset from ``s_getpc_b64`` (:mod:`.pcrel`): the one guard every pass that changes code has."""
    result = module.apply(analysis, options)
    if not getattr(module, "ONLY_METADATA", False):
        from .pcrel import guard

        guard(analysis.program, result.text, name)
    return result


def finish_pass(module, before: str, text: str, path: str) -> tuple[str, list[str]]:
    """What every code-changing pass's output gets: the ``s_delay_alu`` hints its new code lacks
    (:func:`isalint.fixes.toolkit.hints.hint_new_code`). Returns the text and what was done."""
    if getattr(module, "ONLY_METADATA", False) or getattr(module, "WRITES_HINTS", False) or text == before:
        return text, []
    from .hints import hint_new_code
    from .verify import reparse

    hinted, notes = hint_new_code(before, reparse(text, path))
    return (hinted, notes) if hinted is not None else (text, [])


def validate(path: str, original: str, candidate: str, gemm_n: int, code_unchanged: bool = False,
             grid=None, block=None, stage=None, hints_only: bool = False, workgroups: int | None = None) -> str | None:
    """None when the candidate is proven equal to the original, else the reason it is not.

    A rewrite that only changes metadata must leave the machine code byte-identical: both files are
    assembled and their ``.text`` sections compared. Other rewrites are run against the original in
    the emulator, launched with ``grid``/``block`` (default: the kernel's ``.reqd_workgroup_size``,
    else 128 threads on N/128 x N/128 workgroups); ``workgroups``: only that many of them, sampled
    (:mod:`isalint.validate.sampling`).
    """
    if code_unchanged:
        return _same_code(path, original, candidate)
    if hints_only:
        # s_delay_alu is an issue hint (RDNA3 ISA guide): the candidate must assemble as written, and
        # without its hints be the original's machine code byte for byte
        problem = _assembles(path, candidate)
        if problem is not None:
            return problem
        return _same_code(path, without_hints(original), without_hints(candidate),
                          "the machine code changed beyond s_delay_alu hints")
    try:
        from ...validate import equivalence
    except ImportError:
        return "the validator is not available in this installation"
    return equivalence.check_rewrite(path, original, candidate, gemm_n=gemm_n, grid=grid, block=block,
                                     stage=stage, workgroups=workgroups)


def _assembled_code(path: str, name: str, source: str) -> tuple[bytes | None, str | None]:
    """The ``.text`` bytes of ``source`` assembled, or why there are none."""
    from ...validate.elf import section_bytes
    from ...validate.toolchain import ToolchainError, find_toolchain

    try:
        tc = find_toolchain(need_linker=False)
    except ToolchainError as exc:
        return None, f"cannot assemble to check the result: {exc}"
    with tempfile.TemporaryDirectory() as tmp:
        obj = os.path.join(tmp, f"{name}.o")
        result = tc.assemble(source, obj, source_name=path)
        if not result.ok:
            first = result.errors[0].format() if result.errors else result.stderr.strip()[:200]
            return None, f"the {name} does not assemble: {first}"
        with open(obj, "rb") as fh:
            return section_bytes(fh.read(), ".text"), None


def _assembles(path: str, text: str) -> str | None:
    return _assembled_code(path, "candidate", text)[1]


def without_hints(text: str) -> str:
    """``text`` without its ``s_delay_alu`` lines."""
    return "".join(ln for ln in text.splitlines(keepends=True) if not ln.lstrip().startswith("s_delay_alu"))


def _same_code(path: str, original: str, candidate: str,
               differs: str = "the machine code changed, but this pass may only change metadata") -> str | None:
    texts = []
    for name, source in (("original", original), ("candidate", candidate)):
        code, problem = _assembled_code(path, name, source)
        if problem is not None:
            return problem
        texts.append(code)
    if texts[0] is None or texts[0] != texts[1]:
        return differs
    return None


def validator_missing() -> str | None:
    """Why the result could not be validated on this machine (no gfx11 assembler), else None."""
    from ...validate.toolchain import ToolchainNotFound, find_toolchain

    try:
        find_toolchain(need_linker=False)
    except ToolchainNotFound as exc:
        return f"cannot validate without an assembler: {exc}"
    return None


def write_atomic(target: str, text: str) -> None:
    """Write ``text`` (surrogate escapes back to their bytes) to ``target`` (:mod:`.destination`: a
    regular file through its symlinks, mode kept, temporary file and rename)."""
    from .destination import check_destination, write

    write(check_destination(target), text.encode("utf-8", "surrogateescape"))
