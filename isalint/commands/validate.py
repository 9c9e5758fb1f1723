"""``isalint validate ORIGINAL.s CANDIDATE.s``: prove a rewritten kernel computes what the original does.

Both files are assembled with a gfx11 toolchain (both must assemble), run on identical random
inputs (in the emulator, or on an AMD GPU with ``--device hip``) and every output buffer is
compared bit for bit; with ``--gemm N`` C is also checked against numpy.  Exit 0 equal,
1 different, 2 error.
"""
from __future__ import annotations

import sys
import time

import click

from .common import fail
from .launching import bound_launcher, formula_check, is_bound, launch_options, launcher, read_launch
from .progress import progress


@click.command("validate")
@click.argument("original", type=click.Path())
@click.argument("candidate", type=click.Path())
@launch_options(alpha=1.5, beta=-0.75, seed_help="Seed of inputs, garbage and memory delays.",
                latency_help=" (complete only when waited for)")
@click.option("--device", type=click.Choice(["emu", "hip"]), default="emu", show_default=True)
@click.option("--toolchain", "toolchain_kind", help="auto, rocm, llvm, zig, or a path to llvm-mc.")
@click.option("--repeats", type=int, default=20, show_default=True, help="Timed launches per kernel (--device hip).")
def command(original, candidate, gemm_n, alpha, beta, arg_items, expect, grid, block, sample, seed, device,
            kernel_name, latency, toolchain_kind, repeats):
    """Validate CANDIDATE against ORIGINAL: exit 0 equal, 1 different, 2 error."""
    from ..parse.source import InputError
    from ..validate import equivalence as eq
    from ..validate.toolchain import ToolchainError, ToolchainNotFound, find_toolchain

    times: dict[str, float] = {}
    bound = is_bound(original, gemm_n, arg_items, expect)
    if bound:
        if sample:
            fail("--workgroups goes with --gemm N; a launch by --arg runs whole")
        grid_d, block_d, lat, values, buffers = read_launch(None, None, latency, (), seed)
    else:
        grid_d, block_d, lat, values, buffers = read_launch(grid, block, latency, arg_items, seed)

    t0 = time.perf_counter()
    try:
        orig = eq.parse_program(original)
        cand = eq.parse_program(candidate)
    except InputError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"{exc.filename}: cannot read: {exc.strerror}")
    times["parse"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    try:
        tc = find_toolchain(toolchain_kind, need_linker=device == "hip")
        for path in (original, candidate):
            with progress(f"assembling {path}"):
                errs = eq.assemble(tc, path)
            if errs:
                for e in errs:
                    click.echo(e, err=True)
                fail(f"{path} does not assemble; both files must assemble")
    except ToolchainNotFound as exc:
        fail(f"error: {exc}")
    except ToolchainError as exc:
        fail(f"error: {exc}")
    times["assemble"] = time.perf_counter() - t0

    if bound:  # both kernels launched with the same bindings; the formula, when one is given, checks both
        make, bl, initial, what = bound_launcher(original, orig, kernel_name, arg_items, grid, block, expect, seed)
        gemm_n = None
        shapes = None
        check = formula_check(bl, initial) if bl.formula is not None else None
    else:
        make, prob, geo, what = launcher(original, orig, gemm_n, alpha, beta, seed, grid_d, block_d, values,
                                         buffers, kernel_name, sample=sample)
        shapes = {k: (gemm_n, gemm_n) for k in ("a", "b", "c")} if prob is not None else None
        check = eq.gemm_check(prob, geo) if prob is not None else None
    what += f"; seed {seed}"

    if device == "hip":
        _validate_on_device(tc, original, candidate, orig, cand, make, check, gemm_n, kernel_name, shapes, what,
                            repeats)
        return

    with progress(f"validating {original} vs {candidate}") as shown:
        out = eq.validate_pair(orig, cand, make, seed=seed, latency=lat, kernel_name=kernel_name, shapes=shapes,
                               check=check, times=times, stage=shown.update)
    verdict = {"equal": "EQUAL", "different": "DIFFERENT", "error": "ERROR"}[out.status]
    text = out.message.split(": ", 1)[-1] if out.status != "error" else out.message
    click.echo(f"{original} vs {candidate}: {verdict}: {text}")
    click.echo(f"  ({what}; emulator)")
    for line in out.details:
        click.echo(f"  {line}")
    tl = ", ".join(f"{k} {v:.2f}s" for k, v in times.items())
    click.echo(f"  time: {tl}")
    sys.exit(out.exit_code)


def _validate_on_device(tc, original, candidate, orig, cand, make, check, gemm_n, kernel_name, shapes, what, repeats):
    from ..validate import equivalence as eq
    from ..validate.emu import Kernel
    from ..validate.emu.errors import LaunchError
    from ..validate.hip import Hip, HipError, NoDevice, run_on_device
    from ..validate.runner import build_hsaco, tflops

    try:
        hip = Hip()
    except NoDevice as exc:
        fail(str(exc))
    runs = []
    for path, prog in ((original, orig), (candidate, cand)):
        image, errs = build_hsaco(tc, path)
        if image is None:
            for e in errs:
                click.echo(e, err=True)
            fail(f"{path} does not link into a code object")
        try:
            k = Kernel(prog, kernel_name)
            runs.append((k, run_on_device(hip, image, k, make(k), repeats)))
        except (LaunchError, eq.gemm_mod.GemmError, HipError) as exc:
            fail(str(exc))
    (ko, ro), (kc, rc) = runs

    class _R:  # the shape compare_runs expects
        def __init__(self, d):
            self.buffers, self.writers, self.wavemap = d.buffers, {}, None
    equal, lines = eq.compare_runs(_R(ro), _R(rc), shapes)
    status = "EQUAL" if equal else "DIFFERENT"
    extra = []
    if check is not None:
        for label, r in (("original", ro), ("candidate", rc)):
            ok, text = check(_R(r))
            extra.append(f"{label}: {text}")
            if not ok and label == "candidate":
                status = "DIFFERENT"
    click.echo(f"{original} vs {candidate}: {status}" + (f": {lines[0]}" if lines else ""))
    click.echo(f"  ({what}; {hip.device_name or 'HIP device'})")
    for line in lines[1:] + extra:
        click.echo(f"  {line}")
    for label, r in (("original", ro), ("candidate", rc)):
        perf = f", {tflops(gemm_n, r.median_ms):.2f} TFLOP/s" if gemm_n else ""
        click.echo(f"  {label}: median {r.median_ms:.3f} ms over {len(r.times_ms)} launches{perf}")
    sys.exit(0 if status == "EQUAL" else 1)
