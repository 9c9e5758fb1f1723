"""``isalint estimate FILE --gemm N``: predicted time and TFLOP/s of one GEMM launch, and where its cycles go.

Any other signature is launched by its arguments bound by name (``--arg NAME=VALUE``, ``--expect``,
a kernels.json entry's ``"args"``; :mod:`isalint.commands.bound_launch`), a Tensile kernel of a code
object by ``--tensile M,N,K[,B]`` (:mod:`isalint.estimate.tensile`).

Exit 0 with the estimate, 2 on bad input (one line, ``file:line`` when a line is at fault).
"""
from __future__ import annotations

import json

import click

from .common import fail, load_analysis


def parse_params(items) -> dict:
    """``NAME=VALUE`` overrides of :class:`isalint.hw.timing.Timing` fields."""
    from ..hw.timing import GFX1100, PARAMETERS

    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or name not in PARAMETERS:
            fail(f"--param {item!r}: expected NAME=VALUE with NAME one of {', '.join(PARAMETERS)}")
        kind = type(getattr(GFX1100, name))
        try:
            out[name] = kind(float(value)) if kind is int and float(value).is_integer() else kind(value)
        except ValueError:
            fail(f"--param {item!r}: {value!r} is not a {kind.__name__}")
    return out


DEFAULT_TEXT = {"block": "the block (128 work-items)", "grid": "the grid (N/128 x N/128)"}


def defaults_note(defaults) -> str:
    """'the block (128 work-items) and the grid (N/128 x N/128) are assumed, ...': what of the launch
    (``block``, ``grid``) and of the arguments (``arguments``) is a default, not a fact."""
    defaults = list(defaults)
    parts = [DEFAULT_TEXT[d] for d in defaults if d in DEFAULT_TEXT]
    out = []
    if parts:
        what = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
        verb = "is" if len(parts) == 1 else "are"
        out.append(f"{what} {verb} assumed, not read from the kernel or a kernels.json entry: give "
                   "--block/--grid as the kernel is launched")
    if "arguments" in defaults:
        out.append("the kernel's metadata lists no arguments: the GEMM ABI (a, b, c, N, alpha, beta) is assumed")
    return "; ".join(out)


def _abi_problem(kernel) -> str | None:
    """Why the kernel's metadata argument list is not the GEMM ABI the estimate launches (None: it is,
    or the kernel has no argument list)."""
    from ..model.launch import kernel_args
    from ..validate.gemm import has_gemm_abi

    args = [a for a in kernel_args(kernel) if not a.kind.startswith("hidden_")]
    if not args or has_gemm_abi(kernel):
        return None
    listed = ", ".join(f"{a.name} ({a.kind}, {a.size} bytes)" for a in args[:10])
    if len(args) > 10:
        listed += f" and {len(args) - 10} more"
    return (f"kernel {kernel.name} takes {listed}, not the GEMM ABI (float *a, float *b, float *c, int N, float "
            "alpha, float beta) the estimate launches: N would be read from another argument; bind its arguments by "
            "name instead (--arg NAME=VALUE, buffers as matrix(ROWS,COLS), --expect FORMULA)")


def peak_problem(est) -> str | None:
    """Why ``est`` is no estimate: its prediction is above the target's peak for the kernel's data
    type, a sign that the launch or the arguments do not match the kernel (None when it is not)."""
    from ..hw.gpus import DTYPE_TEXT, rate_unit

    if not est.tflops or est.tflops * 1e12 <= est.peak_flops:
        return None
    if "block" in est.launch_defaults or "grid" in est.launch_defaults:
        cause = defaults_note(d for d in est.launch_defaults if d != "arguments")
        cause = "wrong launch? " + cause[0].upper() + cause[1:]
    elif "arguments" in est.launch_defaults:
        cause = defaults_note(["arguments"])
        cause = "wrong ABI? " + cause[0].upper() + cause[1:]
    else:
        cause = (f"wrong launch or wrong ABI? The launch ({est.launch_source or 'as given'}) or the arguments "
                 f"({'as bound' if est.work is not None else 'a, b, c, N, alpha, beta'}) do not match what the "
                 "kernel computes")
    return (f"predicted {est.tflops:.1f} {rate_unit(est.dtype)} is above the {est.timing.gpu} peak of "
            f"{est.peak_flops / 1e12:.1f} for {DTYPE_TEXT[est.dtype]}, so it is no estimate: {cause}")


def check_peak(est) -> None:
    """Exit 2 when :func:`peak_problem` finds one."""
    problem = peak_problem(est)
    if problem:
        fail(f"{est.path}: {problem}")


def run_estimate(path: str, n: int, grid=None, block=None, params=None, kernel_name: str | None = None,
                 gpu: str = "7900xtx", use_cache: bool = False):
    """Load ``path`` and estimate it; exits 2 with a one-line message on bad input (and on a prediction
    above the peak, see :func:`check_peak`)."""
    from ..estimate import EstimateError, estimate
    from ..hw.gpus import UnknownGpu
    from ..hw.timing import for_gpu
    from ..validate.gemm import GemmError, geometry, launch_bound, required_block

    from ..parse.reading import is_binary

    if is_binary(path):  # a code object: --kernel selects the kernel (a glob), whose listing is estimated
        analysis = load_analysis(path, kernel=kernel_name, cache=use_cache)
        kernel_name = None
    else:
        analysis = load_analysis(path)
    program = analysis.program
    kernel = None
    if kernel_name is not None:
        kernel = next((k for k in program.kernels if k.name == kernel_name), None)
        if kernel is None:
            fail(f"{path}: no kernel named {kernel_name} (kernels: {', '.join(k.name for k in program.kernels)})")
    try:
        timing = for_gpu(gpu).with_(**(params or {}))
    except UnknownGpu as exc:
        fail(str(exc))
    try:
        geo = geometry(path, n, grid, block, required_block(program, kernel_name), launch_bound(program, kernel_name))
    except GemmError as exc:
        fail(f"{path}: {exc}")
    target = kernel or (program.kernels[0] if program.kernels else None)
    defaults = list(geo.defaults)
    if target is not None:
        problem = _abi_problem(target)
        if problem:
            fail(f"{path}: {problem}")
        if not any(not a.kind.startswith("hidden_") for a in _args(target)):
            defaults.append("arguments")
    from .size_limit import refusal

    refused = refusal(path, n, program, kernel.name if kernel is not None else None)
    if refused:
        fail(refused)
    try:
        est = estimate(program, n, geo.grid, geo.block, timing, kernel, abi=geo.abi)
    except EstimateError as exc:
        where = f"{path}:{exc.line}" if exc.line else path
        fail(f"{where}: {exc}")
    est.launch_source = geo.source
    est.launch_defaults = defaults
    if defaults:
        est.notes.insert(0, defaults_note(defaults))
    check_peak(est)
    return est


def run_bound_estimate(path: str, items, tensile: str | None, expect: str | None, grid, block, params=None,
                       kernel_name: str | None = None, gpu: str = "7900xtx", use_cache: bool = False):
    """Estimate a launch whose arguments are bound by name (``--arg``, kernels.json ``"args"``, ``--tensile``);
    exits 2 with one line when it cannot be estimated, saying why."""
    from ..estimate import EstimateError, estimate
    from ..estimate.tensile import TensileError
    from ..hw.gpus import UnknownGpu
    from ..hw.timing import for_gpu
    from ..model.bindings import BindingError
    from ..model.launch import AbiError, Launch
    from ..parse.reading import is_binary
    from ..validate.expect import ExpectError
    from .bound_launch import bound_launch

    if is_binary(path):
        analysis = load_analysis(path, kernel=kernel_name, cache=use_cache)
        kernel_name = None
    else:
        analysis = load_analysis(path)
    program = analysis.program
    if not program.kernels:
        fail(f"{path}: no kernel in the file")
    kernel = program.kernels[0]
    if kernel_name is not None:
        kernel = next((k for k in program.kernels if k.name == kernel_name), None)
        if kernel is None:
            fail(f"{path}: no kernel named {kernel_name} (kernels: {', '.join(k.name for k in program.kernels)})")
    try:
        timing = for_gpu(gpu).with_(**(params or {}))
    except UnknownGpu as exc:
        fail(str(exc))
    try:
        bl = bound_launch(path, kernel, items, grid, block, expect, tensile)
    except (BindingError, TensileError, ExpectError) as exc:
        fail(f"{path}: kernel {kernel.name}: {exc}")
    values = dict(bl.values)
    for k, name in enumerate(bl.bindings.matrices):  # placeholder addresses: the estimate reads no buffer
        values[name] = (k + 1) << 32
    g = bl.grid
    launch = Launch(bl.grid, bl.block, values, group=(g[0] // 2, g[1] // 2, g[2] // 2))
    k_steps = bl.work.k if bl.work is not None else 1
    try:
        est = estimate(program, k_steps, bl.grid, bl.block, timing, kernel, launch=launch, abi="arguments",
                       work=bl.work)
    except EstimateError as exc:
        where = f"{path}:{exc.line}" if exc.line and not is_binary(path) else path
        fail(f"{where}: kernel {kernel.name}: cannot be estimated: {exc}")
    except AbiError as exc:  # a bound value that does not fit its argument
        fail(f"{path}: kernel {kernel.name}: {exc}")
    except (ArithmeticError, ValueError, KeyError, IndexError, TypeError, RecursionError) as exc:
        fail(f"{path}: kernel {kernel.name}: cannot be estimated: the model failed on it "
             f"({type(exc).__name__}: {exc})")
    est.launch_source = bl.source
    est.launch_defaults = []
    est.notes[:0] = bl.notes
    if bl.work is None:
        est.notes.insert(0, "no FLOP count: give --expect 'C = alpha*A@B + beta*C' (or --tensile) to rate it")
    check_peak(est)
    return est


def _args(kernel):
    from ..model.launch import kernel_args

    return kernel_args(kernel)


def _entry_has_args(path: str) -> bool:
    from ..validate.gemm import fixture_entry

    entry = fixture_entry(path)
    return bool(entry and entry.get("args"))


def parameter_table() -> str:
    from ..hw.timing import GFX1100, PARAMETERS, REFERENCE_MS, REFERENCE_N

    rows = [f"{'parameter':28s} {'value':>10s}  {'unit':12s} {'source':11s} note"]
    for name, (unit, kind, note) in PARAMETERS.items():
        value = getattr(GFX1100, name)
        shown = f"{value:.3g}" if isinstance(value, float) else str(value)
        rows.append(f"{name:28s} {shown:>10s}  {unit:12s} {kind:11s} {note}")
    rows.append("")
    rows.append(f"reference kernels ({REFERENCE_N}^3 FP32 GEMM measured on a Radeon 7900 XTX; "
                "benchmarks/bench_estimate.py compares the model with them):")
    for k, (what, ms) in REFERENCE_MS.items():
        rows.append(f"  {k}  {ms:9.4f} ms  {what}")
    return "\n".join(rows)


def render(est) -> str:
    from ..estimate import CAUSE_TEXT
    from ..hw.gpus import DTYPE_TEXT, rate_unit

    r = est.residency
    unit = "WGP" if r.wgp_mode else "CU"
    what = f"{'GEMM' if est.abi == 'gemm' else est.abi} N={est.n}"
    if est.abi == "arguments":
        what = "arguments as bound"
    if est.work is not None:
        what = est.work.text + "".join(f", {k}={v}" for k, v in est.work.dims.items() if isinstance(v, int))
    lines = [
        f"{est.path}: kernel {est.kernel}, {what}: "
        f"grid {'x'.join(map(str, est.grid))}, "
        f"block {'x'.join(map(str, est.block))}",
        f"  launch      {est.launch_source or 'as given'}"
        + (f" (defaults: {', '.join(est.launch_defaults)})" if est.launch_defaults else ""),
        f"  predicted   {est.predicted_ms:.3f} ms"
        + (f", {est.tflops:.1f} {rate_unit(est.dtype)} (peak {est.peak_flops / 1e12:.1f} {DTYPE_TEXT[est.dtype]} "
           f"on {est.timing.gpu}; efficiency {100 * est.efficiency:.1f}%)"
           if est.tflops else ""),
        f"  occupancy   {est.occupancy_waves:g} waves per SIMD: {r.groups_per_unit} workgroup(s) of "
        f"{r.waves_per_group} waves per {unit} ({'WGP' if r.wgp_mode else 'CU'} mode), limited by {r.limit} "
        f"({r.vgprs} VGPRs allocated as {r.allocated_vgprs}: {r.waves_by_vgprs} waves per SIMD)",
        f"  rounds      {est.full_rounds} full round(s) of {r.groups_per_unit} workgroup(s) per {unit}"
        + (f", then {est.last_groups} per {unit}" if est.last_groups else ""),
        "  where a SIMD's cycles go:",
    ]
    fr = est.fractions()
    for cause, text in CAUSE_TEXT.items():
        if fr.get(cause, 0) >= 0.0005:
            lines.append(f"    {text:36s} {100 * fr[cause]:5.1f}%")
    lines.append("  per loop (innermost loop of each instruction; share of all cycles):")
    total = sum(est.causes.values()) or 1.0
    short = {"valu": "VALU", "bank_stall": "bank", "lds_wait": "LDS", "gmem_wait": "gmem", "barrier": "barrier",
             "dependency": "dep", "unhinted": "unhint", "salu_branch": "issue", "idle": "idle"}
    head = f"    {'loop':16s} {'line':>5s} {'trips':>7s} {'share':>6s}  " + " ".join(f"{v:>7s}" for v in short.values())
    lines.append(head)
    for lp in est.loops:
        if lp.cycles / total < 0.0005:
            continue
        cells = " ".join(f"{100 * lp.causes[c] / total:6.1f}%" for c in short)
        line = str(lp.line) if lp.line else "-"
        lines.append(f"    {lp.label:16s} {line:>5s} {lp.trips:7d} {100 * lp.cycles / total:5.1f}%  {cells}")
    for note in est.notes:
        lines.append(f"  note: {note}")
    if est.dram_ms >= est.compute_ms:
        lines.append("  note: bound by DRAM bandwidth")
    return "\n".join(lines)


@click.command("estimate")
@click.argument("path", type=click.Path(), required=False)
@click.option("--gemm", "gemm_n", type=int, help="Matrix size N of the GEMM launch (a, b, c, N, alpha, beta).")
@click.option("--gpu", default="7900xtx", show_default=True,
              help="Target GPU of the RDNA3 family, by name (7900xtx, 7900xt, 7900gre, 7800xt, 7700xt, 7600, 780m, "
                   "890m / strix-point, 8060s / strix-halo) or gfx target (gfx1100 ... gfx1151); 'list' shows them "
                   "with their figures and sources.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--grid", help="Workgroups X[,Y[,Z]] (default: kernels.json beside the file, else N/128 x N/128).")
@click.option("--block", help="Work-items per workgroup X[,Y[,Z]] (default: kernels.json, the kernel's "
                              ".reqd_workgroup_size or launch bounds, else 128, which the output marks as a default).")
@click.option("--kernel", "kernel_name", help="Kernel to estimate when the file has several (of a code object: a glob).")
@click.option("--arg", "arg_items", multiple=True, metavar="NAME=VALUE",
              help="Bind a kernel argument by its metadata name or position: a number, an expression over bound "
                   "scalars (lda=K), or a buffer as matrix(ROWS,COLS[,TYPE]) (TYPE f32 by default, f16, bf16, i8, "
                   "i32 ...). Instead of --gemm, for any signature.")
@click.option("--expect", "expect", metavar="FORMULA",
              help="What the bound launch computes, e.g. 'C = alpha*A@B + beta*C' (or 'gemm'): its FLOP count.")
@click.option("--tensile", "tensile", metavar="M,N,K[,B]",
              help="Set a Tensile kernel's arguments (sizes, strides of packed layouts per the name's transposes, "
                   "alpha 1, beta 0, tensor addresses) and its launch for this problem size.")
@click.option("--param", "param_items", multiple=True, metavar="NAME=VALUE",
              help="Override one timing parameter (see --parameters).")
@click.option("--parameters", "show_params", is_flag=True, help="Print the model's parameters and their sources.")
@click.option("--no-cache", "no_cache", is_flag=True,
              help="Of a code object: neither read nor write the kernel's listing in the result cache "
                   "(.isalint_cache, or $ISALINT_CACHE_DIR), which keeps a kernel named exactly by --kernel.")
def command(path, gemm_n, gpu, fmt, grid, block, kernel_name, arg_items, expect, tensile, param_items, show_params,
            no_cache):
    """Predict a GEMM kernel's run time on an RDNA3 GPU (default: Radeon 7900 XTX) and show where the cycles go."""
    from ..validate.runner import UsageError, parse_dims

    if show_params:
        click.echo(parameter_table())
        return
    if gpu.strip().lower() == "list":
        from ..hw.gpus import table

        click.echo(table())
        return
    if path is None:
        fail("give the kernel file: isalint estimate FILE --gemm N")
    if gemm_n is None and (arg_items or tensile or expect or _entry_has_args(path)):
        est = run_bound_estimate(path, arg_items, tensile, expect, grid, block, parse_params(param_items),
                                 kernel_name, gpu, use_cache=not no_cache)
        click.echo(json.dumps(est.to_json(), indent=2) if fmt == "json" else render(est))
        return
    if gemm_n is not None and (arg_items or tensile or expect):
        fail("--gemm N is the GEMM ABI (a, b, c, N, alpha, beta); --arg, --expect and --tensile describe any other "
             "signature: give one or the other")
    if gemm_n is None:
        fail("give the GEMM size: --gemm N (the GEMM ABI), or bind the kernel's arguments with --arg NAME=VALUE "
             "(or --tensile M,N,K[,B] for a Tensile kernel)")
    if gemm_n < 1:
        fail(f"--gemm {gemm_n}: N must be positive")
    try:
        grid_d, block_d = parse_dims(grid, "grid"), parse_dims(block, "block")
    except UsageError as exc:
        fail(str(exc))
    est = run_estimate(path, gemm_n, grid_d, block_d, parse_params(param_items), kernel_name, gpu,
                       use_cache=not no_cache)
    if fmt == "json":
        click.echo(json.dumps(est.to_json(), indent=2))
    else:
        click.echo(render(est))
