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
                     help="Kernel argument (int, float, or a buffer f32:COUNT / u32:COUNT / bytes:COUNT / "
                          "zeros:COUNT); names are the metadata .name or argK."),
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
