"""``isalint run FILE --gemm N``: execute one kernel (in the emulator) and check it against numpy.

Exit 0 when the result matches numpy within fp32 rounding, 1 when it does not (or the kernel
faults: an access outside memory, an endless loop), 2 on errors (bad input, an instruction the
emulator does not implement).
"""
from __future__ import annotations

import hashlib
import sys
import time

import click

from .common import fail
from .launching import bound_launcher, formula_check, is_bound, launch_options, launcher, read_launch


@click.command("run")
@click.argument("path", type=click.Path())
@launch_options(alpha=1.0, beta=0.0)
@click.option("--inputs", metavar="A.npy,B.npy,C.npy",
              help="With --gemm: the A, B and C matrices (N x N float32 .npy files; A and B float16 for an "
                   "fp16 GEMM) instead of random ones.")
@click.option("--save", "save_path", metavar="C.npy", help="With --gemm: write the resulting C (N x N float32) there.")
def command(path, gemm_n, alpha, beta, arg_items, expect, grid, block, sample, seed, kernel_name, latency, inputs,
            save_path):
    """Emulate one kernel; with --gemm, or --arg bindings and --expect, compare its output with numpy (exit 0
    match, 1 mismatch, 2 error)."""
    from ..parse.source import InputError
    from ..validate import equivalence as eq
    from ..validate.emu import EmulationError, Kernel, LaunchError, Unimplemented
    from ..validate.runner import UsageError

    if is_bound(path, gemm_n, arg_items, expect):
        _run_bound(path, arg_items, expect, grid, block, sample, seed, kernel_name, latency, inputs, save_path)
        return
    grid_d, block_d, lat, values, buffers = read_launch(grid, block, latency, arg_items, seed)
    if (inputs or save_path) and gemm_n is None:
        fail("--inputs and --save need --gemm N")
    if save_path:  # checked before the run, which may take minutes
        from ..fixes.toolkit.destination import DestinationError, check_destination

        try:
            check_destination(save_path)
        except DestinationError as exc:
            fail(str(exc))
    matrices = _load_inputs(inputs, gemm_n) if inputs else None
    t0 = time.perf_counter()
    try:
        prog = eq.parse_program(path)
    except InputError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"{exc.filename}: cannot read: {exc.strerror}")
    t_parse = time.perf_counter() - t0
    make, prob, geo, what = launcher(path, prog, gemm_n, alpha, beta, seed, grid_d, block_d, values, buffers,
                                     kernel_name, matrices, sample)
    try:
        kernel = Kernel(prog, kernel_name)
        launch = make(kernel)
        result = kernel.run(launch, seed=seed, latency=lat)
    except UsageError as exc:
        fail(str(exc))
    except (eq.gemm_mod.GemmError,) as exc:
        fail(str(exc))
    except (Unimplemented, LaunchError) as exc:
        fail(f"error: {exc}")
    except EmulationError as exc:  # the kernel faulted: certainly not the reference result
        click.echo(f"{path}: FAULT: {exc}")
        sys.exit(1)
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    t = result.times
    timing = f"parse {t_parse:.2f}s, decode {t.get('compile', 0):.2f}s, execute {t.get('execute', 0):.2f}s"
    if prob is None:
        click.echo(f"{path}: ran ({what}; {result.steps} group steps; {timing})")
        for name, data in result.buffers.items():
            click.echo(f"  {name}: {data.size} bytes, sha256 {hashlib.sha256(data.tobytes()).hexdigest()[:16]}")
        sys.exit(0)
    from ..validate.gemm import check_against_numpy

    if save_path:
        _save(save_path, result.buffers["c"], gemm_n)
    from ..validate.sampling import gemm_tiles

    tiles = gemm_tiles(gemm_n, geo.grid, geo.workgroups) if geo.workgroups is not None else None
    chk = check_against_numpy(prob, result.buffers["c"], tiles)
    click.echo(f"{path}: {'OK' if chk.ok else 'MISMATCH'}: {chk.describe()}")
    click.echo(f"  ({what}; {timing})")
    sys.exit(0 if chk.ok else 1)


def _run_bound(path, arg_items, expect, grid, block, sample, seed, kernel_name, latency, inputs, save_path):
    """A launch by argument bindings: run it, and with a formula (--expect, kernels.json) check the output."""
    from ..parse.source import InputError
    from ..validate import equivalence as eq
    from ..validate.emu import EmulationError, Kernel, LaunchError, Unimplemented
    from ..validate.runner import UsageError, parse_latency

    if inputs or save_path or sample:
        fail("--inputs, --save and --workgroups go with --gemm N; a launch by --arg runs whole, on random matrices")
    try:
        lat = parse_latency(latency)
    except UsageError as exc:
        fail(str(exc))
    t0 = time.perf_counter()
    try:
        prog = eq.parse_program(path)
    except InputError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"{exc.filename}: cannot read: {exc.strerror}")
    t_parse = time.perf_counter() - t0
    make, bl, buffers, what = bound_launcher(path, prog, kernel_name, arg_items, grid, block, expect, seed)
    try:
        kernel = Kernel(prog, kernel_name)
        result = kernel.run(make(kernel), seed=seed, latency=lat)
    except (Unimplemented, LaunchError) as exc:
        fail(f"error: {exc}")
    except EmulationError as exc:
        click.echo(f"{path}: FAULT: {exc}")
        sys.exit(1)
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    t = result.times
    timing = f"parse {t_parse:.2f}s, decode {t.get('compile', 0):.2f}s, execute {t.get('execute', 0):.2f}s"
    if bl.formula is None:
        click.echo(f"{path}: ran ({what}; {result.steps} group steps; {timing})")
        for name, data in result.buffers.items():
            click.echo(f"  {name}: {data.size} bytes, sha256 {hashlib.sha256(data.tobytes()).hexdigest()[:16]}")
        sys.exit(0)
    ok, text = formula_check(bl, buffers)(result)
    click.echo(f"{path}: {'OK' if ok else 'MISMATCH'}: {text}")
    click.echo(f"  ({what}; {timing})")
    sys.exit(0 if ok else 1)


def _load_inputs(text: str, n: int) -> tuple:
    """The A, B, C matrices of ``--inputs A.npy,B.npy,C.npy``: N x N float32 each."""
    import os
    import stat

    import numpy as np

    paths = [p.strip() for p in text.split(",")]
    if len(paths) != 3 or not all(paths):
        fail(f"--inputs takes three .npy files A,B,C separated by commas, got '{text}'")
    out = []
    for name, p in zip("ABC", paths):
        try:
            if not stat.S_ISREG(os.stat(p).st_mode):
                fail(f"{p}: not a regular file")
            m = np.load(p, mmap_mode="r", allow_pickle=False)  # the header first: the shape is checked unread
        except (OSError, ValueError) as exc:
            fail(f"{p}: cannot read {name} as .npy: {exc}")
        ok = (np.float32, np.float16) if name != "C" else (np.float32,)
        if m.shape != (n, n) or m.dtype not in ok:
            kind = "float32" if name == "C" else "float32 (float16 for an fp16 GEMM)"
            fail(f"{p}: {name} must be a {n} x {n} {kind} matrix, not {'x'.join(map(str, m.shape))} {m.dtype}")
        out.append(np.array(m))  # a copy in memory, not the mapped file
    return tuple(out)


def _save(path: str, c_bytes, n: int) -> None:
    import numpy as np

    c = np.frombuffer(c_bytes.tobytes(), dtype=np.float32)[: n * n].reshape(n, n)
    try:
        np.save(path, c, allow_pickle=False)
    except OSError as exc:
        fail(f"{path}: cannot write: {exc.strerror}")
