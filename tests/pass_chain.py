"""Inputs of the passes after batch-gmem, built the way ``optimize`` builds them, and the checks their
tests share: apply a pass to a (possibly hand-edited) text, and prove the output equal to that text in
the emulator."""
from __future__ import annotations

import re
from functools import lru_cache

import pytest
from conftest import KERNEL5, REPO

from isalint.analysis import Analysis
from isalint.fixes import FixRefused, by_name
from isalint.fixes.registry import option_values
from isalint.parse.source import parse_text

GOLDEN = REPO / "fixtures" / "fixes"
CHAIN = ("dual-fmac", "unroll", "batch-gmem", "wide-copy", "tidy", "double-buffer", "peel-last")


def golden_input(step: str) -> tuple[str, str]:
    """(path, text) of the clang-19 build of kernel 5 as the golden cases hand it to ``step``."""
    before = {"wide-copy": "batch-gmem", "tidy": "wide-copy", "double-buffer": "tidy"}[step]
    path = GOLDEN / before / "gemm_lds_padded.expected.s"
    return str(path), path.read_text()


@lru_cache(maxsize=None)
def kernel5_before(step: str) -> tuple[str, str]:
    """kernel5.s after every pass of the chain before ``step`` (skip when the corpus is absent)."""
    if not KERNEL5.is_file():
        pytest.skip("../shared/corpus/kernel5.s is not present beside this checkout")
    from isalint.commands.optimize import run_steps

    steps = CHAIN[:CHAIN.index(step)]
    outs = run_steps(str(KERNEL5), KERNEL5.read_text(), steps)
    assert all(o.applied for o in outs), [o.note for o in outs]
    return str(KERNEL5), outs[-1].text


def apply(step: str, path: str, text: str, **options) -> str:
    """The pass's output, with the hints every pass's new code gets (as ``fix`` writes it)."""
    import importlib

    from isalint.fixes.toolkit.pipeline import finish_pass

    module = importlib.import_module(by_name(step).module)
    result = module.apply(Analysis.from_source(parse_text(text, path)), option_values(options))
    return finish_pass(module, text, result.text, path)[0]


def equal(path: str, original: str, candidate: str, n: int = 256, grid=None, block=None) -> None:
    """The candidate computes bit for bit what the original does (GEMM N, beta 0 and not)."""
    from conftest import assembler_or_skip

    from isalint.validate.equivalence import check_rewrite

    assembler_or_skip()
    verdict = check_rewrite(path, original, candidate, gemm_n=n, grid=grid, block=block)
    assert verdict is None, verdict


def same_bits(path: str, original: str, candidate: str, n: int = 256) -> None:
    """Bit for bit the same buffers at GEMM N (no numpy reference: a hand edit may change what the
    kernel computes; the rewrite must compute the same)."""
    from conftest import assembler_or_skip

    from isalint.validate import equivalence as eq

    assembler_or_skip()
    for alpha, beta in ((1.0, 0.0), (1.5, -0.75)):
        make, _, _ = eq.gemm_launcher(path, n, alpha, beta, 7)
        out = eq.validate_pair(eq.parse_program(path, original), eq.parse_program(path, candidate), make, seed=7)
        assert out.status == "equal", out.message


def equal_on_grid(path: str, original: str, candidate: str, n: int, grid) -> None:
    """Equal on a launch of ``grid`` (which need not tile C: the trip count N/8 may be odd), every
    buffer compared bit for bit."""
    from conftest import assembler_or_skip

    from isalint.validate import equivalence as eq

    assembler_or_skip()
    make, _, _ = eq.gemm_launcher(path, n, 1.5, -0.75, 5, grid=grid, block=(128, 1, 1))
    out = eq.validate_pair(eq.parse_program(path, original), eq.parse_program(path, candidate), make, seed=5)
    assert out.status == "equal", out.message


def refused_with_line(step: str, path: str, text: str, match: str) -> str:
    with pytest.raises(FixRefused) as info:
        apply(step, path, text)
    message = str(info.value)
    assert re.search(match, message), message
    return message


def edit(text: str, old: str, new: str, count: int = 1) -> str:
    assert text.count(old) >= count, f"{old!r} not in the input"
    return text.replace(old, new, count)
