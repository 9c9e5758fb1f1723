"""``--expect``: what a kernel computes, as a numpy-style formula over its bound arguments.

``--expect "C = alpha*A@B + beta*C"`` says that after the launch the buffer argument ``C`` holds
``alpha * A @ B + beta * C`` computed from the buffers' contents before it. The formula uses the
arguments' names (metadata ``.name``, or as they were bound), numbers, ``+ - *``, ``@`` (matrix product,
batched over leading dimensions as numpy's), ``X.T`` or ``T(X)`` (the last two dimensions swapped).
Matrices are the shapes they were bound with (:mod:`isalint.model.bindings`): a column-major M x K
matrix bound as ``matrix(K,M)`` is ``A.T`` in the formula. ``--expect gemm`` is short for
``C = alpha*A@B + beta*C`` (arguments named A, B, C, alpha and beta, in any case).

The formula is read by a small grammar on Python's syntax tree (never ``eval``). It gives

* the FLOP count and reduction length ``estimate`` rates a launch by (2 per multiply-accumulate of
  each ``@``);
* the reference ``run`` compares the output buffer with, computed in float64 (int64 for integer
  matrices) from the inputs, within a bound of the rounding a K-long fp32 sum may make.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

import numpy as np

MAX_TEXT = 400
GEMM = "C = alpha*A@B + beta*C"


class ExpectError(ValueError):
    """A formula outside the grammar, or one whose shapes do not fit."""


@dataclass
class Formula:
    target: str  # the output buffer (metadata name)
    expr: ast.expr
    text: str
    names: dict  # name as written -> metadata name


def parse(text: str, bindings, args=None) -> Formula:
    """Read ``text`` (``OUT = EXPR`` or ``gemm``) against ``bindings``."""
    text = text.strip()
    if len(text) > MAX_TEXT:
        raise ExpectError(f"--expect: longer than {MAX_TEXT} characters")
    names = _names(bindings)
    if text.lower() == "gemm":
        lower = {k.lower(): v for k, v in names.items()}
        missing = [x for x in ("a", "b", "c", "alpha", "beta") if x not in lower]
        if missing:
            raise ExpectError("--expect gemm means C = alpha*A@B + beta*C over arguments named A, B, C, alpha and "
                              f"beta; {', '.join(missing)} not bound: write the formula instead")
        names = {**names, **{k.upper() if len(k) == 1 else k: v for k, v in lower.items()}}
        text = GEMM
    try:
        tree = ast.parse(text, mode="exec")
    except SyntaxError:
        raise ExpectError(f"--expect {text!r}: expected OUT = EXPRESSION") from None
    if (len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assign) or len(tree.body[0].targets) != 1
            or not isinstance(tree.body[0].targets[0], ast.Name)):
        raise ExpectError(f"--expect {text!r}: expected OUT = EXPRESSION with OUT a buffer argument")
    target = tree.body[0].targets[0].id
    if target not in names or names[target] not in bindings.matrices:
        raise ExpectError(f"--expect {text!r}: {target} is not a bound matrix (bind it with --arg {target}=matrix(...))")
    f = Formula(names[target], tree.body[0].value, text, names)
    shape = Shapes(bindings, names).eval(f.expr)
    want = bindings.matrices[f.target].dims
    if not isinstance(shape, _Shape) or shape.dims != want:
        got = "a scalar" if not isinstance(shape, _Shape) else "x".join(map(str, shape.dims))
        raise ExpectError(f"--expect {text!r}: the right-hand side is {got}, {target} is {'x'.join(map(str, want))}")
    return f


def _names(bindings) -> dict:
    out = {n: n for n in list(bindings.scalars) + list(bindings.matrices)}
    for written, name in bindings.names.items():
        out.setdefault(written, name)
    return out


@dataclass
class _Shape:
    dims: tuple[int, ...]


class _Walker:
    def __init__(self, names: dict):
        self.names = names

    def eval(self, node, depth: int = 0):
        if depth > 40:
            raise ExpectError("--expect: formula nested too deeply")
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return self.number(node.value)
        if isinstance(node, ast.Name):
            if node.id not in self.names:
                raise ExpectError(f"--expect: {node.id} is not a bound argument")
            return self.name(self.names[node.id])
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.MatMult)):
            a, b = self.eval(node.left, depth + 1), self.eval(node.right, depth + 1)
            return self.binop(type(node.op), a, b)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = self.eval(node.operand, depth + 1)
            return self.binop(ast.Mult, self.number(-1 if isinstance(node.op, ast.USub) else 1), v)
        if isinstance(node, ast.Attribute) and node.attr == "T":
            return self.transpose(self.eval(node.value, depth + 1))
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("T", "transpose")
                and len(node.args) == 1 and not node.keywords):
            return self.transpose(self.eval(node.args[0], depth + 1))
        raise ExpectError(f"--expect: '{ast.unparse(node)}' is not part of the formula grammar (names, numbers, "
                          "+ - * @, .T)")


class Shapes(_Walker):
    """Shapes and the FLOPs of the products (``flop``, ``k``: the first product's reduction length)."""

    def __init__(self, bindings, names):
        super().__init__(names)
        self.b = bindings
        self.flop = 0.0
        self.k: int | None = None

    def number(self, v):
        return v

    def name(self, n):
        if n in self.b.matrices:
            return _Shape(self.b.matrices[n].dims)
        return self.b.scalars[n]

    def transpose(self, v):
        if not isinstance(v, _Shape) or len(v.dims) < 2:
            raise ExpectError("--expect: .T needs a matrix")
        return _Shape(v.dims[:-2] + (v.dims[-1], v.dims[-2]))

    def binop(self, op, a, b):
        sa, sb = isinstance(a, _Shape), isinstance(b, _Shape)
        if op is ast.MatMult:
            if not (sa and sb) or len(a.dims) < 2 or len(b.dims) < 2:
                raise ExpectError("--expect: @ needs two matrices")
            (m, k), (k2, n) = a.dims[-2:], b.dims[-2:]
            if k != k2:
                raise ExpectError(f"--expect: {'x'.join(map(str, a.dims))} @ {'x'.join(map(str, b.dims))}: inner "
                                  "dimensions differ")
            batch = _broadcast(a.dims[:-2], b.dims[:-2])
            self.flop += 2.0 * m * n * k * int(np.prod(batch, dtype=np.float64))
            self.k = self.k or k
            return _Shape(batch + (m, n))
        if sa and sb:
            return _Shape(_broadcast(a.dims, b.dims))
        return a if sa else b


def _broadcast(x: tuple, y: tuple) -> tuple:
    try:
        return tuple(np.broadcast_shapes(x, y))
    except ValueError:
        raise ExpectError(f"--expect: shapes {x} and {y} do not broadcast") from None


class Values(_Walker):
    """The formula on numpy arrays (float64, int64 for integer matrices)."""

    def __init__(self, arrays: dict, scalars: dict, names):
        super().__init__(names)
        self.arrays, self.scalars = arrays, scalars

    def number(self, v):
        return v

    def name(self, n):
        return self.arrays[n] if n in self.arrays else self.scalars[n]

    def transpose(self, v):
        return np.swapaxes(v, -1, -2)

    def binop(self, op, a, b):
        if op is ast.MatMult:
            return np.matmul(a, b)
        if op is ast.Add:
            return a + b
        if op is ast.Sub:
            return a - b
        return a * b


def as_numbers(data: np.ndarray, mat) -> np.ndarray:
    """A buffer's bytes as the matrix's values (float64, or int64 for integers), shaped."""
    raw = np.frombuffer(np.ascontiguousarray(data).tobytes()[: mat.nbytes], dtype=_np_dtype(mat.dtype))
    if mat.dtype == "bf16":
        vals = (raw.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    elif mat.dtype in ("i8", "u8", "i32", "u32"):
        vals = raw.astype(np.int64)
    else:
        vals = raw.astype(np.float64)
    return vals.reshape(mat.dims)


def _np_dtype(dtype: str):
    from ..model.bindings import ELEMENT_TYPES

    return np.dtype(ELEMENT_TYPES[dtype][1])


EPS = {"f32": 2.0 ** -24, "f16": 2.0 ** -11, "bf16": 2.0 ** -8, "f64": 2.0 ** -53}


def initial_buffer(mat, rng) -> np.ndarray:
    """Random contents for a bound matrix: floats uniform in [-1, 1) (exact in the type), small integers."""
    count = mat.count
    if mat.dtype in ("f32", "f64", "f16"):
        return rng.uniform(-1, 1, size=count).astype(_np_dtype(mat.dtype))
    if mat.dtype == "bf16":
        f = rng.uniform(-1, 1, size=count).astype(np.float32)
        return (f.view(np.uint32) >> 16).astype(np.uint16)
    if mat.dtype in ("i8",):
        return rng.integers(-8, 8, size=count).astype(np.int8)
    if mat.dtype == "u8":
        return rng.integers(0, 16, size=count).astype(np.uint8)
    return rng.integers(-64, 64, size=count).astype(_np_dtype(mat.dtype))


@dataclass
class Comparison:
    ok: bool
    text: str


def compare(formula: Formula, bindings, before: dict, after: dict) -> Comparison:
    """The output buffer after the launch against the formula on the buffers before it."""
    arrays = {n: as_numbers(before[n], m) for n, m in bindings.matrices.items() if n in before}
    ref = Values(arrays, bindings.scalars, formula.names).eval(formula.expr)
    mat = bindings.matrices[formula.target]
    got = as_numbers(after[formula.target], mat)
    ref = np.broadcast_to(np.asarray(ref), got.shape)
    if mat.dtype not in EPS:  # integers: exact, in the width of the type
        bits = 8 * mat.itemsize
        wrapped = ((ref.astype(np.int64) + (1 << (bits - 1))) % (1 << bits)) - (1 << (bits - 1)) \
            if mat.dtype.startswith("i") else ref.astype(np.int64) % (1 << bits)
        bad = int(np.count_nonzero(wrapped != got))
        return Comparison(bad == 0, f"{formula.target} {'equals' if not bad else 'differs from'} {formula.text} "
                                    f"({bad} of {got.size} elements differ, exact integers)")
    absarrays = {n: np.abs(a) for n, a in arrays.items()}
    absscalars = {n: abs(v) for n, v in bindings.scalars.items()}
    bound = np.abs(Values(absarrays, absscalars, formula.names).eval(_abs_tree(formula.expr)))
    shapes = Shapes(bindings, formula.names)
    shapes.eval(formula.expr)
    k = shapes.k or 1
    eps = max(EPS.get(m.dtype, 0) for m in bindings.matrices.values())
    tol = (2 * k + 8) * EPS["f32"] * bound + 2 * eps * np.abs(ref) + 1e-30
    err = np.abs(got - ref)
    bad = ~(err <= tol)
    nbad = int(np.count_nonzero(bad))
    worst = float(np.max(err / np.maximum(tol, 1e-300))) if err.size else 0.0
    if nbad:
        idx = np.unravel_index(int(np.argmax(np.where(bad, err, -1))), got.shape)
        where = ",".join(map(str, idx))
        return Comparison(False, f"{formula.target} differs from {formula.text}: {nbad} of {got.size} elements "
                                 f"outside the rounding bound, e.g. [{where}] = {got[idx]:.7g}, expected "
                                 f"{ref[idx]:.7g}")
    return Comparison(True, f"{formula.text} within the rounding bound ({got.size} elements, "
                            f"worst at {worst:.2f} of the bound)")


def _abs_tree(node):
    """The formula with every subtraction an addition: evaluated on |values| it bounds the rounding."""
    class _T(ast.NodeTransformer):
        def visit_BinOp(self, n):
            self.generic_visit(n)
            if isinstance(n.op, ast.Sub):
                n.op = ast.Add()
            return n

        def visit_UnaryOp(self, n):
            self.generic_visit(n)
            return n.operand if isinstance(n.op, (ast.USub, ast.UAdd)) else n

    import copy

    return _T().visit(copy.deepcopy(node))
