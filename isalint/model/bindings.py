"""A kernel's arguments bound by name or position, so that any GEMM signature is described without code.

``--arg NAME=VALUE`` (or a ``kernels.json`` entry's ``"args"``) gives each argument of the kernel's
metadata (``.args``: name, offset, size, value kind) a value. NAME is the argument's ``.name``, its
position among the visible arguments (``0``, ``1``, ...) or ``argK``. VALUE is one of

* a number: ``4096``, ``0.5`` (a float argument needs a decimal point or an exponent: ``1.0``);
* an expression over scalars bound before or after it: ``lda=K``, ``strideA=M*K``, ``ceil(N/16)``;
* a matrix for a pointer argument: ``matrix(M,K)``, ``matrix(batch,M,K)``, with an element type as the
  last part: ``matrix(M,K,f16)`` (default ``f32``; also ``bf16``, ``f64``, ``i8``, ``u8``, ``i32``,
  ``u32``). A matrix is stored row-major (C order) with the shape given: a column-major M x K matrix is
  ``matrix(K,M)``, and what it means is said by the description of what the kernel computes
  (``--expect``, see :mod:`isalint.validate.expect`).

Expressions are read by a small grammar (Python's syntax, no ``eval``): integers, floats, bound names,
``+ - * / // %``, parentheses, ``ceil()``, ``min()``, ``max()``. ``/`` divides exactly; where an
integer is needed (a size, an integer argument) the value is rounded down.
"""
from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from fractions import Fraction

MAX_TEXT = 300
MAX_ELEMENTS = 1 << 40

# element type -> (bytes, numpy dtype name; bf16 is held as its 16-bit patterns)
ELEMENT_TYPES = {"f32": (4, "float32"), "f16": (2, "float16"), "bf16": (2, "uint16"), "f64": (8, "float64"),
                 "i8": (1, "int8"), "u8": (1, "uint8"), "i32": (4, "int32"), "u32": (4, "uint32")}


class BindingError(ValueError):
    """A binding that cannot be read or does not fit the kernel's argument list."""


@dataclass(frozen=True)
class Matrix:
    """A buffer argument seen as a (batched) matrix: ``dims`` in elements, row-major, of ``dtype``."""

    dims: tuple[int, ...]
    dtype: str = "f32"
    text: str = ""

    @property
    def count(self) -> int:
        return math.prod(self.dims)

    @property
    def itemsize(self) -> int:
        return ELEMENT_TYPES[self.dtype][0]

    @property
    def nbytes(self) -> int:
        return self.count * self.itemsize

    def describe(self) -> str:
        return f"{'x'.join(map(str, self.dims))} {self.dtype}"


@dataclass
class Bindings:
    """Every bound argument by its metadata name (positions resolved), scalars and matrices apart."""

    scalars: dict[str, int | float]
    matrices: dict[str, Matrix]
    names: dict[str, str]  # what the user wrote -> the metadata name

    def env(self) -> dict[str, int | float]:
        """The names an expression may use: the bound scalars (by metadata name and as written)."""
        out = dict(self.scalars)
        for written, name in self.names.items():
            if name in self.scalars:
                out.setdefault(written, self.scalars[name])
        return out

    def launch_values(self, addresses: dict[str, int] | None = None) -> dict:
        """Argument name -> value for :class:`isalint.model.launch.Launch`: scalars as they are, matrices
        by their own name (the buffer the emulator places) or at ``addresses``."""
        out: dict = dict(self.scalars)
        for name in self.matrices:
            out[name] = addresses[name] if addresses is not None else name
        return out


# ---------------------------------------------------------------------------------------------
# expressions

_BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.Div: lambda a, b: _div(a, b), ast.FloorDiv: lambda a, b: _floordiv(a, b),
           ast.Mod: lambda a, b: _mod(a, b)}


def _div(a, b):
    if b == 0:
        raise BindingError("division by zero")
    if isinstance(a, float) or isinstance(b, float):
        return a / b
    return Fraction(a) / Fraction(b)


def _floordiv(a, b):
    if b == 0:
        raise BindingError("division by zero")
    return a // b


def _mod(a, b):
    if b == 0:
        raise BindingError("division by zero")
    return a % b


class Unbound(BindingError):
    """An expression names a scalar that has no value (yet)."""

    def __init__(self, name: str):
        super().__init__(f"'{name}' is not a bound scalar")
        self.name = name


def evaluate(text: str, env: dict) -> int | float | Fraction:
    """The value of the expression ``text`` with the scalars of ``env``."""
    if len(text) > MAX_TEXT:
        raise BindingError(f"expression longer than {MAX_TEXT} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        raise BindingError(f"cannot read the expression '{text}'") from None
    return _eval(tree.body, env, 0)


def _eval(node, env, depth: int):
    if depth > 40:
        raise BindingError("expression nested too deeply")
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise Unbound(node.id)
        return env[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_eval(node.left, env, depth + 1), _eval(node.right, env, depth + 1))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _eval(node.operand, env, depth + 1)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        args = [_eval(a, env, depth + 1) for a in node.args]
        if node.func.id == "ceil" and len(args) == 1:
            return math.ceil(args[0])
        if node.func.id in ("min", "max") and args:
            return (min if node.func.id == "min" else max)(args)
    raise BindingError(f"'{ast.unparse(node)}' is not part of the expression grammar (numbers, bound names, "
                       "+ - * / // %, ceil(), min(), max())")


def to_int(value, what: str) -> int:
    if isinstance(value, float) and not value.is_integer():
        raise BindingError(f"{what} must be an integer, not {value:g}")
    return math.floor(value)


def eval_int(text: str, env: dict, what: str) -> int:
    return to_int(evaluate(text, env), what)


# ---------------------------------------------------------------------------------------------
# binding the arguments

_MATRIX = re.compile(r"\s*matrix\s*\((.*)\)\s*\Z", re.S)


def split_item(item: str, where: str = "--arg") -> tuple[str, str]:
    name, sep, value = item.partition("=")
    name, value = name.strip(), value.strip()
    if not sep or not name or not value:
        raise BindingError(f"{where} {item!r}: expected NAME=VALUE")
    return name, value


def _split_commas(text: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur).strip())
    return parts


def resolve_name(written: str, args, where: str = "--arg") -> str:
    """The metadata name of the argument ``written`` names (its name, position or ``argK``)."""
    visible = [a for a in args if not a.kind.startswith("hidden_")]
    for a in visible:
        if a.name == written:
            return a.name
    m = re.fullmatch(r"(?:arg)?(\d+)", written)
    if m and int(m.group(1)) < len(visible):
        return visible[int(m.group(1))].name
    have = ", ".join(f"{a.name}" for a in visible) or "no arguments"
    raise BindingError(f"{where} {written}: the kernel has no such argument (it takes: {have})")


def bind(args, items, where: str = "--arg") -> Bindings:
    """Bind ``items`` (``NAME=VALUE`` strings or ``(NAME, VALUE)`` pairs) to the kernel arguments
    ``args`` (:func:`isalint.model.launch.kernel_args`)."""
    by_name = {a.name: a for a in args}
    pending: dict[str, tuple[str, str, str]] = {}  # metadata name -> (written, value text, where)
    names: dict[str, str] = {}
    for item in items:
        w = where
        if isinstance(item, str):
            written, text = split_item(item, where)
        else:
            written, text = str(item[0]), str(item[1])
            w = item[2] if len(item) > 2 else where
        name = resolve_name(written, args, w)
        if name in pending:
            raise BindingError(f"{w} {written}: argument {name} is bound twice")
        pending[name] = (written, text, w)
        names[written] = name
    scalars: dict[str, int | float] = {}
    matrices: dict[str, Matrix] = {}
    env: dict = {}
    todo = {n: v for n, v in pending.items() if not _MATRIX.match(v[1])}
    while todo:  # scalars may name each other in any order
        progress = False
        last: Unbound | None = None
        for name, (written, text, w) in list(todo.items()):
            try:
                value = evaluate(text, env)
            except Unbound as exc:
                last = exc
                continue
            except BindingError as exc:
                raise BindingError(f"{w} {written}={text}: {exc}") from None
            a = by_name[name]
            if a.kind in ("global_buffer", "dynamic_shared_pointer") and not isinstance(value, int):
                raise BindingError(f"{w} {written}={text}: {name} is a pointer: give matrix(...) or an address")
            if isinstance(value, Fraction):
                value = math.floor(value)
            scalars[name] = value
            env[name] = value
            env[written] = value
            del todo[name]
            progress = True
        if not progress:
            name, (written, text, w) = next(iter(todo.items()))
            raise BindingError(f"{w} {written}={text}: {last}; bind it with --arg {last.name}=VALUE"
                               if last else f"{w} {written}={text}: cannot be evaluated")
    for name, (written, text, w) in pending.items():
        m = _MATRIX.match(text)
        if not m:
            continue
        a = by_name[name]
        if a.kind != "global_buffer":
            raise BindingError(f"{w} {written}={text}: {name} is not a buffer ({a.kind}, {a.size} bytes)")
        parts = _split_commas(m.group(1))
        dtype = "f32"
        if parts and parts[-1] in ELEMENT_TYPES:
            dtype = parts.pop()
        if not parts or any(not p for p in parts):
            raise BindingError(f"{w} {written}={text}: expected matrix(DIM, ...[, TYPE]) with TYPE one of "
                               f"{', '.join(ELEMENT_TYPES)}")
        try:
            dims = tuple(eval_int(p, env, "a matrix dimension") for p in parts)
        except Unbound as exc:
            raise BindingError(f"{w} {written}={text}: {exc}; bind it with --arg {exc.name}=VALUE") from None
        except BindingError as exc:
            raise BindingError(f"{w} {written}={text}: {exc}") from None
        if any(d < 1 for d in dims):
            raise BindingError(f"{w} {written}={text}: dimensions must be positive, not {dims}")
        mat = Matrix(dims, dtype, text)
        if mat.count > MAX_ELEMENTS:
            raise BindingError(f"{w} {written}={text}: {mat.count} elements is more than any GPU holds")
        matrices[name] = mat
    return Bindings(scalars, matrices, names)


def unbound_read(args, bindings_or_names, offset: int, size: int):
    """The visible argument whose bytes ``[offset, offset + size)`` overlap and that is not bound
    (None: every argument there is bound, hidden, or there is none)."""
    bound = set(bindings_or_names)
    for a in args:
        if a.kind.startswith("hidden_") or a.name in bound:
            continue
        if a.offset < offset + size and offset < a.offset + a.size:
            return a
    return None
