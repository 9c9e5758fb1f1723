"""The launch-size expressions of ``kernels.json`` (``"ceil(N/16),ceil(N/16)"``), read by a small
grammar instead of Python's ``eval``: integers, ``N``, ``+ - * /``, parentheses and ``ceil()``.

``/`` divides exactly (fractions); the value of the whole expression is rounded down, so
``N/32`` is integer division when N is not a multiple of 32 and ``ceil(N/16)`` rounds up.
"""
from __future__ import annotations

import math
import re
from fractions import Fraction

MAX_LENGTH = 200
MAX_DEPTH = 16
MAX_DIGITS = 12
_TOKEN = re.compile(r"\s*(?:(\d+)|(N|ceil)\b|([-+*/(),]))")


class ExprError(ValueError):
    """An expression outside the grammar, or one that divides by zero."""


def evaluate(expr: str, n: int) -> int:
    """The integer value of ``expr`` for N = ``n``."""
    if len(expr) > MAX_LENGTH:
        raise ExprError(f"expression longer than {MAX_LENGTH} characters")
    tokens = _tokens(expr)
    parser = _Parser(tokens, n)
    value = parser.sum(0)
    if parser.pos != len(tokens):
        raise ExprError(f"unexpected '{tokens[parser.pos]}'")
    return math.floor(value)


def _tokens(expr: str) -> list[str]:
    out: list[str] = []
    pos = 0
    while pos < len(expr):
        if expr[pos:].strip() == "":
            break
        m = _TOKEN.match(expr, pos)
        if m is None:
            raise ExprError(f"cannot read '{expr[pos:].strip()[:10]}'")
        token = m.group(m.lastindex)
        if m.group(1) and len(token) > MAX_DIGITS:
            raise ExprError(f"number longer than {MAX_DIGITS} digits")
        out.append(token)
        pos = m.end()
    return out


class _Parser:
    def __init__(self, tokens: list[str], n: int):
        self.tokens, self.pos, self.n = tokens, 0, n

    def _peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _take(self, want: str | None = None) -> str:
        tok = self._peek()
        if tok is None or (want is not None and tok != want):
            raise ExprError(f"expected '{want}'" if want else "unexpected end of expression")
        self.pos += 1
        return tok

    def sum(self, depth: int) -> Fraction:
        value = self.product(depth)
        while self._peek() in ("+", "-"):
            op = self._take()
            rhs = self.product(depth)
            value = value + rhs if op == "+" else value - rhs
        return value

    def product(self, depth: int) -> Fraction:
        value = self.unary(depth)
        while self._peek() in ("*", "/"):
            op = self._take()
            rhs = self.unary(depth)
            if op == "*":
                value *= rhs
            elif rhs == 0:
                raise ExprError("division by zero")
            else:
                value /= rhs
        return value

    def unary(self, depth: int) -> Fraction:
        if self._peek() == "-":
            self._take()
            return -self.unary(depth)
        return self.atom(depth)

    def atom(self, depth: int) -> Fraction:
        if depth >= MAX_DEPTH:
            raise ExprError(f"nested deeper than {MAX_DEPTH} parentheses")
        tok = self._take()
        if tok == "N":
            return Fraction(self.n)
        if tok.isdigit():
            return Fraction(int(tok))
        if tok == "ceil":
            self._take("(")
            value = self.sum(depth + 1)
            self._take(")")
            return Fraction(math.ceil(value))
        if tok == "(":
            value = self.sum(depth + 1)
            self._take(")")
            return value
        raise ExprError(f"unexpected '{tok}'")
