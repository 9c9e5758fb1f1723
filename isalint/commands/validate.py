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
from .progress import progress


@click.command("validate")
@click.argument("original", type=click.Path())
@click.argument("candidate", type=click.Path())
@click.option("--gemm", "gemm_n", type=int, help="Use the GEMM ABI (a, b, c, N, alpha, beta) at size N.")
@click.option("--alpha", type=float, default=1.5, show_default=True, help="alpha for --gemm.")
@click.option("--beta", type=float, default=-0.75, show_default=True, help="beta for --gemm.")
@click.option("--arg", "arg_items", multiple=True, metavar="NAME=VALUE",
              help="Kernel argument (int, float, or a buffer f32:COUNT / u32:COUNT / bytes:COUNT / zeros:COUNT); "
                   "names are the metadata .name or argK.")
@click.option("--grid", help="Workgroups X[,Y[,Z]] (default for --gemm: kernels.json or N/128 x N/128).")
@click.option("--block", help="Work-items per workgroup X[,Y[,Z]] (default for --gemm: kernels.json, the kernel's "
                              ".reqd_workgroup_size, or 128).")
@click.option("--workgroups", "sample", type=click.IntRange(min=1),
              help="With --gemm: run only K workgroups of the grid (the four corners, the centre, then random "
                   "ones chosen with --seed), each through its whole K loop, and check their tiles of C.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of inputs, garbage and memory delays.")
@click.option("--device", type=click.Choice(["emu", "hip"]), default="emu", show_default=True)
@click.option("--kernel", "kernel_name", help="Kernel to launch when the file has several.")
@click.option("--latency", help="Memory latency in instructions LO:HI (default 64:4096), or 'never' "
                                "(complete only when waited for).")
@click.option("--toolchain", "toolchain_kind", help="auto, rocm, llvm, zig, or a path to llvm-mc.")
@click.option("--repeats", type=int, default=20, show_default=True, help="Timed launches per kernel (--device hip).")
def command(original, candidate, gemm_n, alpha, beta, arg_items, grid, block, sample, seed, device, kernel_name,
            latency, toolchain_kind, repeats):
    """Validate CANDIDATE against ORIGINAL: exit 0 equal, 1 different, 2 error."""
    from ..parse.source import InputError
    from ..validate import equivalence as eq
    from ..validate.runner import UsageError, generic_launcher, parse_args, parse_dims, parse_latency
    from ..validate.toolchain import ToolchainError, ToolchainNotFound, find_toolchain

    times: dict[str, float] = {}
    try:
        grid_d = parse_dims(grid, "grid")
        block_d = parse_dims(block, "block")
        lat = parse_latency(latency)
        values, buffers = parse_args(arg_items, seed)
    except UsageError as exc:
        fail(str(exc))
    if sample is not None and gemm_n is None:
        fail("--workgroups needs --gemm N")

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

    shapes = None
    check = None
    try:
        if gemm_n is not None:
            make, prob, geo = eq.gemm_launcher(original, gemm_n, alpha, beta, seed, grid_d, block_d, values,
                                               required=eq.gemm_mod.required_block(orig, kernel_name),
                                               workgroups=sample)
            if buffers:
                fail("--gemm provides the a, b, c buffers itself; --arg may only override scalars")
            shapes = {k: (gemm_n, gemm_n) for k in ("a", "b", "c")}
            check = eq.gemm_check(prob, geo)
            what = (f"GEMM N={gemm_n}, alpha={alpha:g}, beta={beta:g}; grid {'x'.join(map(str, geo.grid))}, "
                    f"block {'x'.join(map(str, geo.block))} ({geo.source}); {eq.sampling_text(geo)}; seed {seed}")
        else:
            make = generic_launcher(grid_d, block_d, values, buffers)
            what = f"grid {'x'.join(map(str, grid_d))}, block {'x'.join(map(str, block_d))}; seed {seed}"
    except UsageError as exc:
        fail(str(exc))
    except eq.gemm_mod.GemmError as exc:
        fail(str(exc))

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
