"""Prove that a candidate kernel computes what the original computes.

Both are assembled with a real gfx11 toolchain (both must assemble), then executed in the
emulator on identical inputs with the same seed; every output buffer is compared bit for bit.
:func:`check_rewrite` is the entry point of ``isalint fix``; :func:`compare_runs` and
:func:`validate_pair` are shared with ``isalint validate`` and ``isalint run``.
"""
from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from . import gemm as gemm_mod
from .emu import EmulationError, Kernel, Launch, Unimplemented
from .emu.errors import LaunchError

EQUAL, DIFFERENT, ERROR = "equal", "different", "error"


@dataclass
class Outcome:
    status: str  # equal | different | error
    message: str  # one line
    details: list[str] = field(default_factory=list)
    times: dict[str, float] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return {EQUAL: 0, DIFFERENT: 1}.get(self.status, 2)


def parse_program(path: str, text: str | None = None):
    """Program of ``path`` (or of ``text`` reported as ``path``); raises InputError."""
    from ..model.program import build_program
    from ..parse.source import parse_text, read_file

    source = read_file(path) if text is None else parse_text(text, path)
    return build_program(source)


def assemble(tc, path: str, text: str | None = None) -> list[str]:
    """Assembler errors of the file (``path:line:col: error: ...``), [] when it assembles."""
    with tempfile.TemporaryDirectory(prefix="isalint-") as td:
        obj = Path(td) / "kernel.o"
        src = text if text is not None else Path(path)
        res = tc.assemble(src, obj, source_name=path)
        return [d.format() for d in res.errors] or ([] if res.ok else [f"{path}: error: assembler failed"])


def _f32(word: int) -> str:
    return repr(float(np.array(word, dtype=np.uint32).view(np.float32)))


def compare_runs(orig, cand, shapes: dict[str, tuple[int, int]] | None = None) -> tuple[bool, list[str]]:
    """(equal, lines describing the first difference of each buffer that differs)."""
    lines = []
    for name, a in orig.buffers.items():
        b = cand.buffers.get(name)
        if b is None or a.size != b.size:
            lines.append(f"buffer {name}: sizes differ")
            continue
        if np.array_equal(a, b):
            continue
        n4 = a.size // 4 * 4
        wa = a[:n4].view(np.uint32)
        wb = b[:n4].view(np.uint32)
        diff = np.nonzero(wa != wb)[0]
        if diff.size == 0:
            lines.append(f"buffer {name}: trailing bytes differ")
            continue
        k = int(diff[0])
        where = f"{name}[{k}]"
        if shapes and name in shapes:
            rows, cols = shapes[name]
            if k < rows * cols:
                where = f"{name}[{k // cols},{k % cols}]"
        who_c = cand.wavemap.describe(cand.writers[name][k]) if cand.wavemap is not None else "?"
        who_o = orig.wavemap.describe(orig.writers[name][k]) if orig.wavemap is not None else "?"
        lines.append(f"{where} (dword {k} of {wa.size}; {diff.size} differ): original 0x{int(wa[k]):08x} "
                     f"({_f32(int(wa[k]))}), candidate 0x{int(wb[k]):08x} ({_f32(int(wb[k]))}); written by "
                     f"{who_c} in the candidate, by {who_o} in the original")
    return not lines, lines


def run_kernel(kernel: Kernel, launch: Launch, seed: int, latency):
    return kernel.run(launch, seed=seed, latency=latency)


def validate_pair(orig_prog, cand_prog, make_launch, *, seed: int = 0, latency=(64, 4096),
                  kernel_name: str | None = None, shapes=None, check=None, times=None, stage=None) -> Outcome:
    """Run both programs with ``make_launch(kernel) -> Launch`` and compare every buffer bit for bit.

    ``check(result) -> (ok, text)`` is an extra test of each run (the numpy reference for GEMM);
    ``stage(text)`` is told what is being done (a progress display).
    """
    return validate_pairs(orig_prog, cand_prog, [make_launch], seed=seed, latency=latency,
                          kernel_name=kernel_name, shapes=shapes, checks=[check], times=times, stage=stage)[0]


def validate_pairs(orig_prog, cand_prog, make_launches, *, seed: int = 0, latency=(64, 4096),
                   kernel_name: str | None = None, shapes=None, checks=None, times=None,
                   stage=None) -> list[Outcome]:
    """:func:`validate_pair` for several launches (``checks[k]`` goes with ``make_launches[k]``): each
    program runs them all at once (:meth:`Kernel.run_many`), and when a run fails the launches are run
    one by one so that the failure is the first launch's that fails, as if they had never run together.
    One Outcome per launch, up to the first that is not EQUAL."""
    times = times if times is not None else {}
    checks = checks or [None] * len(make_launches)
    stage = stage or (lambda text: None)
    try:
        ko = Kernel(orig_prog, kernel_name)
        kc = Kernel(cand_prog, kernel_name)
        los = [make(ko) for make in make_launches]
        lcs = [make(kc) for make in make_launches]
    except (LaunchError, gemm_mod.GemmError) as exc:
        return [Outcome(ERROR, str(exc), times=times)]
    if len(los) == 1:
        try:
            stage(f"emulating the original ({_workgroups(los[0])})")
            ros = [ko.run(los[0], seed=seed, latency=latency)]
        except EmulationError as exc:
            return [Outcome(ERROR, f"the original cannot be emulated: {exc}", times=times)]
        try:
            stage(f"emulating the candidate ({_workgroups(lcs[0])})")
            rcs = [kc.run(lcs[0], seed=seed, latency=latency)]
        except Unimplemented as exc:
            return [Outcome(ERROR, f"the candidate cannot be emulated: {exc}", times=times)]
        except EmulationError as exc:
            return [Outcome(DIFFERENT, f"the candidate faults: {exc}", times=times)]
    else:
        try:
            stage(f"emulating the original ({len(los)} launches of {_workgroups(los[0])})")
            ros = ko.run_many(los, seed=seed, latency=latency)
            stage(f"emulating the candidate ({len(lcs)} launches of {_workgroups(lcs[0])})")
            rcs = kc.run_many(lcs, seed=seed, latency=latency)
        except EmulationError:
            out = []
            for make, check in zip(make_launches, checks):
                out.append(validate_pair(orig_prog, cand_prog, make, seed=seed, latency=latency,
                                         kernel_name=kernel_name, shapes=shapes, check=check, times=times,
                                         stage=stage))
                if out[-1].status != EQUAL:
                    break
            return out
    out = []
    for ro, rc, check in zip(ros, rcs, checks):
        stage("comparing the buffers")
        out.append(_compare(ro, rc, shapes, check, times))
        if out[-1].status != EQUAL:
            break
    return out


def _compare(ro, rc, shapes, check, times) -> Outcome:
    for key in ("compile", "execute"):
        times[key] = times.get(key, 0.0) + ro.times.get(key, 0.0) + rc.times.get(key, 0.0)
    t0 = time.perf_counter()
    equal, lines = compare_runs(ro, rc, shapes)
    notes = [f"note (original): {n}" for n in ro.notes] + [f"note (candidate): {n}" for n in rc.notes]
    extra: list[str] = []
    status = EQUAL if equal else DIFFERENT
    if check is not None:
        ok_o, text_o = check(ro)
        ok_c, text_c = check(rc)
        if not ok_o:
            times["compare"] = times.get("compare", 0.0) + time.perf_counter() - t0
            return Outcome(ERROR, f"the original does not compute the reference result ({text_o}); wrong launch "
                                  "geometry or arguments?", lines + notes, times)
        extra.append(f"original: {text_o}")
        extra.append(f"candidate: {text_c}")
        if not ok_c:
            status = DIFFERENT
    times["compare"] = times.get("compare", 0.0) + time.perf_counter() - t0
    if status == EQUAL:
        msg = f"equal: all {len(ro.buffers)} buffers bit-identical"
    else:
        msg = "different: " + (lines[0] if lines else extra[-1])
    return Outcome(status, msg, lines[1:] + extra + notes, times)


def _workgroups(launch) -> str:
    n = len(launch.workgroup_ids())
    total = launch.grid[0] * launch.grid[1] * launch.grid[2]
    of = f" (sampled of {total})" if n != total else ""
    return f"{n} workgroup{'s' if n != 1 else ''}{of} of {launch.block[0] * launch.block[1] * launch.block[2]} threads"


def gemm_launcher(path: str, n: int, alpha: float, beta: float, seed: int, grid=None, block=None,
                  overrides: dict | None = None, inputs: tuple | None = None, required=None,
                  workgroups: int | None = None, bound: int | None = None):
    """(make_launch, problem, geometry) for the GEMM ABI of the file at ``path``; ``inputs`` are
    the A, B, C matrices to use instead of seeded random ones; ``required``: the kernel's
    ``.reqd_workgroup_size``, ``bound`` its ``.max_flat_workgroup_size``; ``workgroups``: run only that many of the grid's workgroups, chosen by
    :func:`isalint.validate.sampling.sample_workgroups` with ``seed`` (``geometry.workgroups``)."""
    from .sampling import gemm_tiles, sample_workgroups

    geo = gemm_mod.geometry(path, n, grid, block, required, bound)
    if workgroups is not None:
        geo = replace(geo, workgroups=sample_workgroups(geo.grid, workgroups, seed))
        if geo.workgroups is not None:
            if geo.abi not in ("gemm", "gemm_f16"):
                raise gemm_mod.GemmError(f"{path}: --workgroups samples a GEMM's tiles of C; ABI '{geo.abi}' has none")
            try:
                gemm_tiles(n, geo.grid, geo.workgroups)
            except ValueError as exc:
                raise gemm_mod.GemmError(f"--workgroups: {exc}") from None
    prob = gemm_mod.problem(n, alpha, beta, seed, geo.abi)
    if inputs is not None:
        for name, m, want in zip("ABC", inputs, gemm_mod.input_dtypes(geo.abi)):
            if m.dtype != want:
                raise gemm_mod.GemmError(f"{path}: --inputs {name} must be {np.dtype(want).name} for a kernel "
                                         f"of ABI '{geo.abi}', not {m.dtype}")
        prob = replace(prob, a=inputs[0], b=inputs[1], c=inputs[2])

    def make(kernel: Kernel) -> Launch:
        if not gemm_mod.has_gemm_abi(kernel.kernel):
            raise gemm_mod.GemmError(f"{kernel.path}: kernel {kernel.kernel.name} does not have the GEMM ABI "
                                     "(3 global buffers, then N, alpha, beta: 4 bytes each)")
        args = prob.args(kernel.kernel)
        for k, v in (overrides or {}).items():
            args[k] = v
        return Launch(geo.grid, geo.block, args, prob.buffers(), workgroups=geo.workgroups)
    return make, prob, geo


def gemm_check(prob, geo=None):
    """C against numpy; for a sampled launch (``geo.workgroups``), the tiles of the workgroups run."""
    tiles = None
    if geo is not None and geo.workgroups is not None:
        from .sampling import gemm_tiles

        tiles = gemm_tiles(prob.n, geo.grid, geo.workgroups)

    def check(result):
        c = gemm_mod.check_against_numpy(prob, result.buffers["c"], tiles)
        return c.ok, c.describe()
    return check


def check_rewrite(path: str, original_text: str, candidate_text: str, gemm_n: int = 256, grid=None,
                  block=None, stage=None, workgroups: int | None = None) -> str | None:
    """None when the candidate is proven to compute what the original computes, else why not.

    Both texts must assemble with a gfx11 toolchain; a kernel with the GEMM ABI is then emulated
    at size ``gemm_n`` (with beta = 0 and beta != 0) and its buffers compared bit for bit, launched
    with ``grid``/``block`` (default: see :func:`isalint.validate.gemm.geometry`); ``workgroups``:
    only that many of them, sampled (:mod:`isalint.validate.sampling`).
    """
    from ..parse.source import InputError
    from .toolchain import ToolchainError, ToolchainNotFound, find_toolchain

    stage = stage or (lambda text: None)
    stage("assembling the original and the rewritten kernel")
    try:
        tc = find_toolchain(need_linker=False)
    except ToolchainNotFound as exc:
        return f"cannot validate without an assembler: {exc}"
    try:
        for label, text in (("original", original_text), ("rewritten", candidate_text)):
            errs = assemble(tc, path, text)
            if errs:
                return f"the {label} kernel does not assemble: {errs[0]}"
    except ToolchainError as exc:
        return f"cannot validate: {exc}"
    try:
        orig = parse_program(path, original_text)
        cand = parse_program(path, candidate_text)
    except InputError as exc:
        return f"cannot parse: {exc}"
    if not orig.kernels or not gemm_mod.has_gemm_abi(orig.kernels[0]):
        return "the kernel does not have the GEMM ABI (a, b, c, N, alpha, beta), so it cannot be emulated " \
               "automatically; use 'isalint validate' with --grid/--block/--arg"
    makers, checks, geos, cases = [], [], [], ((1.0, 0.0), (1.5, -0.75))
    for alpha, beta in cases:
        try:
            make, prob, geo = gemm_launcher(path, gemm_n, alpha, beta, seed=1, grid=grid, block=block,
                                            required=gemm_mod.required_block(orig), workgroups=workgroups,
                                            bound=gemm_mod.launch_bound(orig))
        except gemm_mod.GemmError as exc:
            return f"cannot validate: {exc}"
        makers.append(make)
        checks.append(gemm_check(prob, geo))
        geos.append(geo)
    cases_text = " and ".join(f"alpha={a:g}, beta={b:g}" for a, b in cases)
    outs = validate_pairs(orig, cand, makers, seed=1, checks=checks,
                          shapes={"a": (gemm_n, gemm_n), "b": (gemm_n, gemm_n), "c": (gemm_n, gemm_n)},
                          stage=lambda text: stage(f"GEMM N={gemm_n}, {cases_text}: {text}"))
    for out, (alpha, beta), geo in zip(outs, cases, geos):
        if out.status != EQUAL:
            sample = "" if geo.workgroups is None else f"; {sampling_text(geo)}"
            return (f"{out.message} (GEMM N={gemm_n}, alpha={alpha}, beta={beta}; grid {'x'.join(map(str, geo.grid))}, "
                    f"block {'x'.join(map(str, geo.block))}: {geo.source}{sample})")
    return None


def sampling_text(geo) -> str:
    """Which workgroups a GEMM launch runs: '8 of 1024 workgroups: (0,0) (31,0) ...'."""
    from .sampling import describe

    return describe(geo.workgroups, geo.grid)
