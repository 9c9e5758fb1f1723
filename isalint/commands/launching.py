"""The launch options ``isalint run`` and ``isalint validate`` share: how a kernel is launched (``--gemm``,
``--alpha``, ``--beta``, ``--arg``, ``--grid``, ``--block``, ``--workgroups``, ``--seed``, ``--kernel``, ``--latency``), read
once and turned into the launcher both commands run."""
from __future__ import annotations

import click

from .common import fail


def launch_options(alpha: float, beta: float, seed_help: str | None = None, latency_help: str = ""):
    """The shared options as one decorator (``alpha``/``beta``: the defaults of the GEMM scalars)."""
    options = [
        click.option("--gemm", "gemm_n", type=int, help="Use the GEMM ABI (a, b, c, N, alpha, beta) at size N."),
        click.option("--alpha", type=float, default=alpha, show_default=True, help="alpha for --gemm."),
        click.option("--beta", type=float, default=beta, show_default=True, help="beta for --gemm."),
        click.option("--arg", "arg_items", multiple=True, metavar="NAME=VALUE",
                     help="Kernel argument by its metadata .name, position or argK: int, float, an expression over "
                          "bound scalars (lda=K), a buffer as matrix(ROWS,COLS[,TYPE]) (random values, shape "
                          "expressions over bound scalars, TYPE f32 by default, f16, bf16, i8, i32 ...) or the "
                          "raw buffers f32:COUNT / u32:COUNT / bytes:COUNT / zeros:COUNT."),
        click.option("--expect", "expect", metavar="FORMULA",
                     help="What a launch by --arg computes, checked against numpy: 'C = alpha*A@B + beta*C' "
                          "(names of bound arguments, + - * @, .T), or 'gemm' for that formula."),
        click.option("--grid", help="Workgroups X[,Y[,Z]] (default for --gemm: kernels.json or N/128 x N/128)."),
        click.option("--block", help="Work-items per workgroup X[,Y[,Z]] (default for --gemm: kernels.json, the "
                                     "kernel's .reqd_workgroup_size, or 128)."),
        click.option("--workgroups", "sample", type=click.IntRange(min=1),
                     help="With --gemm: run only K workgroups of the grid (the four corners, the centre, then "
                          "random ones chosen with --seed), each through its whole K loop, and check their tiles "
                          "of C."),
        click.option("--seed", type=int, default=0, show_default=True, help=seed_help),
        click.option("--kernel", "kernel_name", help="Kernel to launch when the file has several."),
        click.option("--latency", help="Memory latency in instructions LO:HI (default 64:4096), or 'never'"
                                       + latency_help + "."),
    ]

    def decorate(fn):
        for option in reversed(options):
            fn = option(fn)
        return fn
    return decorate


def is_bound(path: str, gemm_n, arg_items, expect) -> bool:
    """The launch is described by bindings (matrix() buffers, expressions, --expect, a kernels.json entry
    with "args"), not by --gemm or raw --arg values."""
    import re

    from ..validate.gemm import fixture_entry

    if gemm_n is not None:
        if expect:
            fail("--expect describes a launch by --arg bindings; --gemm N checks C = alpha*A*B + beta*C itself")
        return False
    if expect:
        return True
    entry = fixture_entry(path)
    if entry and entry.get("args"):
        return True
    plain = re.compile(r"\s*(?:[-+]?(?:0x[0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)|(?:f32|u32|i32|bytes|zeros):\d+)\s*\Z")
    return any("=" in i and not plain.match(i.split("=", 1)[1]) for i in arg_items)


def bound_launcher(path, program, kernel_name, arg_items, grid, block, expect, seed):
    """(make_launch, the BoundLaunch, the initial buffers, a line saying what is launched) of a launch by
    bindings; exit 2 when the bindings do not fit the kernel."""
    import numpy as np

    from ..estimate.tensile import TensileError
    from ..model.bindings import BindingError
    from ..model.launch import Launch
    from ..validate.expect import ExpectError, initial_buffer
    from ..validate.memory_budget import EMULATOR_BYTES_PER_BUFFER_BYTE, TooLarge, require
    from .bound_launch import bound_launch

    kernels = [k for k in program.kernels if kernel_name is None or k.name == kernel_name]
    if not kernels:
        fail(f"{path}: no kernel{' named ' + kernel_name if kernel_name else ''}")
    kernel = kernels[0]
    try:
        bl = bound_launch(path, kernel, arg_items, grid, block, expect, need_all=True)
    except (BindingError, TensileError, ExpectError) as exc:
        fail(f"{path}: kernel {kernel.name}: {exc}")
    total = sum(m.nbytes for m in bl.bindings.matrices.values())
    try:
        require(total * (1 + EMULATOR_BYTES_PER_BUFFER_BYTE), f"the bound matrices of {total} bytes (with their "
                                                              "copies in the emulator)")
    except TooLarge as exc:
        fail(str(exc))
    rng = np.random.default_rng(seed + 11)
    buffers = {name: initial_buffer(m, rng) for name, m in bl.bindings.matrices.items()}

    def make(k):
        return Launch(bl.grid, bl.block, dict(bl.values), {n: v.copy() for n, v in buffers.items()})

    mats = ", ".join(f"{n} {m.describe()}" for n, m in bl.bindings.matrices.items())
    scal = ", ".join(f"{n}={v:g}" if isinstance(v, float) else f"{n}={v}" for n, v in bl.bindings.scalars.items())
    what = (f"{scal}; {mats}; grid {'x'.join(map(str, bl.grid))}, block {'x'.join(map(str, bl.block))} "
            f"({bl.source})")
    return make, bl, buffers, what


def formula_check(bl, buffers):
    """``check(result) -> (ok, text)``: the output against the --expect formula on the initial buffers."""
    from ..validate.expect import compare

    def check(result):
        c = compare(bl.formula, bl.bindings, buffers, result.buffers)
        return c.ok, c.text
    return check


def read_launch(grid, block, latency, arg_items, seed):
    """(grid, block, latency, argument values, buffers) of the options; exit 2 on a bad one."""
    from ..validate.runner import UsageError, parse_args, parse_dims, parse_latency

    try:
        return (parse_dims(grid, "grid"), parse_dims(block, "block"), parse_latency(latency),
                *parse_args(arg_items, seed))
    except UsageError as exc:
        fail(str(exc))


def launcher(path, program, gemm_n, alpha, beta, seed, grid, block, values, buffers, kernel_name, inputs=None,
             sample=None):
    """(make_launch, GEMM problem or None, its geometry or None, a line saying what is launched): the GEMM
    ABI at ``gemm_n`` (``sample``: that many of its workgroups), else the arguments and buffers given; exit
    2 when they do not fit."""
    from ..validate import equivalence as eq
    from ..validate.runner import UsageError, generic_launcher

    if sample is not None and gemm_n is None:
        fail("--workgroups needs --gemm N")
    try:
        if gemm_n is None:
            make = generic_launcher(grid, block, values, buffers)
            return make, None, None, f"grid {'x'.join(map(str, grid))}, block {'x'.join(map(str, block))}"
        if buffers:
            fail("--gemm provides the a, b, c buffers itself; --arg may only override scalars")
        # past the kernel's own index limit the run means nothing, however much memory there is: said
        # before the memory check (an N too large for the 32-bit argument is the launch's own error)
        from .size_limit import refusal

        refused = refusal(path, gemm_n, program, kernel_name) if gemm_n <= eq.gemm_mod.MAX_N else None
        if refused:
            fail(refused)
        make, prob, geo = eq.gemm_launcher(path, gemm_n, alpha, beta, seed, grid, block, values, inputs,
                                           required=eq.gemm_mod.required_block(program, kernel_name),
                                           workgroups=sample,
                                           bound=eq.gemm_mod.launch_bound(program, kernel_name))
        what = (f"GEMM N={gemm_n}, alpha={alpha:g}, beta={beta:g}; grid {'x'.join(map(str, geo.grid))}, "
                f"block {'x'.join(map(str, geo.block))} ({geo.source}); {eq.sampling_text(geo)}")
        return make, prob, geo, what
    except UsageError as exc:
        fail(str(exc))
    except eq.gemm_mod.GemmError as exc:
        fail(str(exc))
