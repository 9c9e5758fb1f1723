"""A launch described by argument bindings (``--arg NAME=VALUE``, a ``kernels.json`` entry's ``"args"``,
``--tensile M,N,K[,B]``) rather than the GEMM ABI: the values, the grid and block, and what it computes.

Shared by ``estimate``, ``run`` and ``validate``. What the kernel reads and nobody bound is an error
naming it (the emulator needs every argument; the estimate's scalar walk refuses a load of one).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..model.bindings import BindingError, Bindings, bind, eval_int, split_item


@dataclass
class BoundLaunch:
    bindings: Bindings
    values: dict  # argument name -> value (scalars; matrices by buffer name)
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    source: str  # where the grid and block came from
    formula: object | None = None  # isalint.validate.expect.Formula
    work: object | None = None  # isalint.estimate.Work
    notes: list[str] = field(default_factory=list)


def entry_items(entry: dict | None, where: str) -> list[tuple[str, str, str]]:
    """The ``"args"`` of a kernels.json entry as (NAME, VALUE, where) items (a list of NAME=VALUE
    strings, or an object)."""
    if not entry or "args" not in entry:
        return []
    raw = entry["args"]
    if isinstance(raw, dict):
        return [(str(k), str(v), where) for k, v in raw.items()]
    if isinstance(raw, list) and all(isinstance(x, str) for x in raw):
        return [(*split_item(x, where), where) for x in raw]
    raise BindingError(f"{where}: \"args\" must be a list of \"NAME=VALUE\" strings or an object")


def _item_name(item) -> str:
    return split_item(item)[0] if isinstance(item, str) else str(item[0])


def merge_items(base: list, override: list, args) -> list:
    """``base`` items (kernels.json) with those ``override`` (the command line) binds again dropped."""
    from ..model.bindings import resolve_name

    taken = {resolve_name(_item_name(i), args) for i in override}
    return [i for i in base if resolve_name(_item_name(i), args, "kernels.json") not in taken] + list(override)


def _dims(text, env, what: str) -> tuple[int, int, int]:
    parts = [p for p in str(text).replace("x", ",").split(",") if p.strip()] if isinstance(text, str) else list(text)
    if not 1 <= len(parts) <= 3:
        raise BindingError(f"{what} {text!r}: expected 1 to 3 sizes X[,Y[,Z]]")
    vals = [eval_int(str(p), env, what) for p in parts]
    if min(vals) < 1:
        raise BindingError(f"{what} {text!r}: sizes must be positive, got {vals}")
    while len(vals) < 3:
        vals.append(1)
    return vals[0], vals[1], vals[2]


def bound_launch(path: str, kernel, items, grid_text=None, block_text=None, expect: str | None = None,
                 tensile: str | None = None, need_all: bool = False) -> BoundLaunch:
    """Bind ``items`` to ``kernel``'s metadata arguments (raises BindingError, TensileError, ExpectError)."""
    from ..model.launch import kernel_args
    from ..validate.gemm import fixture_entry

    args = kernel_args(kernel)
    visible = [a for a in args if not a.kind.startswith("hidden_")]
    if not visible:
        raise BindingError(f"kernel {kernel.name}: its metadata lists no arguments (.amdgpu_metadata .args), so "
                           "nothing can be bound by name")
    entry = fixture_entry(path)
    where = f"kernels.json, {Path(path).name}"
    items = merge_items(entry_items(entry, where), list(items), args)
    notes: list[str] = []
    tl = None
    if tensile is not None:
        from ..estimate import tensile as tmod

        tl = tmod.launch(kernel.name, tmod.parse_size(tensile))
        given = {a.name for a in visible}
        unknown = [a.name for a in visible if a.name not in tl.values]
        filled = [f"{name}=__tensile_{name}" for name in tl.values if name in given]
        if unknown:
            from ..model.bindings import resolve_name

            mine = {resolve_name(_item_name(i), args) for i in items}
            left = [u for u in unknown if u not in mine]
            if left:
                raise BindingError(f"kernel {kernel.name}: --tensile does not know argument(s) "
                                   f"{', '.join(left)}; give them with --arg NAME=VALUE")
        items = merge_items(filled, items, args)
    b = _bind_with(args, items, tl)
    env = b.env()
    if block_text is not None:
        block = _dims(block_text, env, "--block")
        source = ["block from --block"]
    elif (req := _reqd(kernel)) is not None:
        block, source = req, ["block from .reqd_workgroup_size"]
    elif entry is not None and entry.get("block") is not None:
        block, source = _dims(entry["block"], env, where + " block"), ["block from kernels.json"]
    elif tl is not None:
        block, source = tl.block, ["block from the Tensile name's WG"]
    else:
        bound = (kernel.metadata or {}).get(".max_flat_workgroup_size")
        from ..validate.gemm import COMPILER_FLAT_LIMIT

        if isinstance(bound, int) and bound != COMPILER_FLAT_LIMIT:
            block, source = (bound, 1, 1), ["block from .max_flat_workgroup_size (the kernel's launch bounds)"]
        else:
            raise BindingError("give --block X[,Y[,Z]]: neither the kernel's metadata nor a kernels.json entry says "
                               "how many work-items a workgroup has")
    if grid_text is not None:
        grid = _dims(grid_text, env, "--grid")
        source.append("grid from --grid")
    elif entry is not None and entry.get("args") is not None and entry.get("grid") is not None:
        grid = _dims(entry["grid"], env, where + " grid")
        source.append("grid from kernels.json")
    elif tl is not None:
        grid = tl.grid
        source.append("grid from the Tensile tiles (ceil(M/MT0), ceil(N/MT1), B)")
    else:
        raise BindingError("give --grid X[,Y[,Z]] (sizes may be expressions over the bound arguments, e.g. "
                           "--grid 'ceil(N/16),ceil(M/16)')")
    threads = block[0] * block[1] * block[2]
    req = _reqd(kernel)
    if req is not None and tuple(block) != tuple(req):
        raise BindingError(f"block {'x'.join(map(str, block))} is not the kernel's .reqd_workgroup_size "
                           f"{'x'.join(map(str, req))}")
    bound = (kernel.metadata or {}).get(".max_flat_workgroup_size")
    if isinstance(bound, int) and threads > bound:
        raise BindingError(f"block {'x'.join(map(str, block))} has {threads} work-items, more than the kernel's "
                           f".max_flat_workgroup_size {bound}")
    if need_all:
        missing = [a for a in visible if a.name not in b.scalars and a.name not in b.matrices]
        if missing:
            a = missing[0]
            raise BindingError(f"kernel argument {a.name} (#{a.index}, {a.kind}, {a.size} bytes) is not bound: give "
                               f"--arg {a.name}=VALUE" + (" (a buffer: matrix(ROWS,COLS[,TYPE]))"
                                                          if a.kind == "global_buffer" else ""))
    formula = None
    work = tl.work if tl is not None else None
    expect = expect if expect is not None else (entry or {}).get("expect") if entry and entry.get("args") else expect
    if expect:
        from ..validate import expect as ex

        formula = ex.parse(expect, b, args)
        if work is None:
            work = _work(formula, b)
    values = b.launch_values()
    if tl is not None:
        for name in tl.values:
            if values.get(name) == f"__tensile_{name}":
                values[name] = tl.values[name]
    return BoundLaunch(b, values, grid, block, ", ".join(source), formula, work, notes)


def _bind_with(args, items, tl):
    """bind(), with --tensile's values standing in as opaque scalars."""
    if tl is None:
        return bind(args, items)
    plain, opaque = [], {}
    for i in items:
        name, value = split_item(i) if isinstance(i, str) else (str(i[0]), str(i[1]))
        if value.startswith("__tensile_"):
            opaque[name] = tl.values[name]
        else:
            plain.append(i)
    # the Tensile values are known numbers: bind them first so that --arg expressions may use them
    numeric = [(k, repr(v), "--tensile") for k, v in opaque.items() if isinstance(v, (int, float))]
    b = bind(args, numeric + plain)
    for k, v in opaque.items():
        if not isinstance(v, (int, float)):
            b.scalars[k] = v
    return b


def _reqd(kernel):
    dims = (kernel.metadata or {}).get(".reqd_workgroup_size")
    if isinstance(dims, list) and len(dims) == 3 and all(isinstance(d, int) and d >= 1 for d in dims):
        return dims[0], dims[1], dims[2]
    return None


def _work(formula, b):
    from ..estimate import Work
    from ..validate.expect import Shapes

    sh = Shapes(b, formula.names)
    sh.eval(formula.expr)
    import ast

    used = {formula.names[x.id] for x in ast.walk(formula.expr) if isinstance(x, ast.Name) and x.id in formula.names}
    used = {n for n in used if n in b.matrices}
    nbytes = sum(b.matrices[n].nbytes for n in used) + b.matrices[formula.target].nbytes
    dims = {"matrices": {n: b.matrices[n].describe() for n in sorted(b.matrices)}}
    return Work(sh.flop, float(nbytes), sh.k or 1, formula.text, dims)
