"""Safe arithmetic expressions for ε (``log(10/3)``, ``2*log(2)``, ``0.5``).

The text is parsed with :mod:`ast` and only numbers, ``+ - * / **``, unary
signs, the constants ``e`` and ``pi`` and the functions ``log``, ``exp`` and
``sqrt`` are accepted; nothing is ever passed to ``eval``.

The same tree is evaluated twice: once in floats (the value the LP uses) and
once in mpmath interval arithmetic, which gives a rigorous enclosure of ε and
hence a *rational lower bound of e^ε* that the exact privacy check relies on
(an emitted kernel checked against a number ≤ e^ε is private at ε).
"""
from __future__ import annotations

import ast
import math
from fractions import Fraction

import mpmath

__all__ = ["ExpressionError", "evaluate", "exp_lower_bound", "parse"]

_FUNCTIONS = {"log", "exp", "sqrt"}
_CONSTANTS = {"e", "pi"}
_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)


class ExpressionError(ValueError):
    """The text is not an accepted arithmetic expression."""


def parse(text: str) -> ast.Expression:
    """Parse ``text`` and reject every construct outside the small grammar."""
    if len(text) > 200:
        raise ExpressionError("expression longer than 200 characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"not an arithmetic expression: {text!r}") from exc
    for node in ast.walk(tree):
        if isinstance(node, (ast.Expression, ast.Load, ast.UnaryOp, ast.UAdd, ast.USub) + _BINOPS):
            continue
        if isinstance(node, ast.BinOp):
            if not isinstance(node.op, _BINOPS):
                raise ExpressionError(f"operator not allowed in {text!r}")
            continue
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
                raise ExpressionError(f"only numbers are allowed as constants in {text!r}")
            continue
        if isinstance(node, ast.Name):
            if node.id not in _CONSTANTS and node.id not in _FUNCTIONS:
                raise ExpressionError(f"unknown name {node.id!r} (allowed: log, exp, sqrt, e, pi)")
            continue
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS:
                raise ExpressionError(f"only log, exp and sqrt may be called in {text!r}")
            if len(node.args) != 1 or node.keywords:
                raise ExpressionError(f"{node.func.id} takes exactly one argument")
            continue
        raise ExpressionError(f"construct not allowed in {text!r}: {type(node).__name__}")
    return tree


def _walk(node: ast.AST, ops: dict):
    if isinstance(node, ast.Expression):
        return _walk(node.body, ops)
    if isinstance(node, ast.Constant):
        return ops["const"](node.value)
    if isinstance(node, ast.Name):
        return ops[node.id]
    if isinstance(node, ast.UnaryOp):
        value = _walk(node.operand, ops)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp):
        left, right = _walk(node.left, ops), _walk(node.right, ops)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        if isinstance(node.op, ast.Div):
            return ops["div"](left, right)
        return ops["pow"](left, right)
    if isinstance(node, ast.Call):
        return ops[node.func.id](_walk(node.args[0], ops))
    raise ExpressionError(f"cannot evaluate {type(node).__name__}")  # pragma: no cover


def _float_div(a: float, b: float) -> float:
    if b == 0:
        raise ExpressionError("division by zero")
    return a / b


def _float_log(a: float) -> float:
    if a <= 0:
        raise ExpressionError("log of a non-positive number")
    return math.log(a)


def _float_sqrt(a: float) -> float:
    if a < 0:
        raise ExpressionError("sqrt of a negative number")
    return math.sqrt(a)


def _float_exp(a: float) -> float:
    try:
        return math.exp(a)
    except OverflowError as exc:
        raise ExpressionError("exp overflows") from exc


def _float_pow(a: float, b: float) -> float:
    try:
        result = a ** b
    except (OverflowError, ZeroDivisionError) as exc:
        raise ExpressionError("power out of range") from exc
    if isinstance(result, complex):
        raise ExpressionError("power of a negative number")
    return float(result)


_FLOAT_OPS = {
    "const": float, "e": math.e, "pi": math.pi, "div": _float_div, "pow": _float_pow,
    "log": _float_log, "exp": _float_exp, "sqrt": _float_sqrt,
}


def evaluate(text: str) -> float:
    """Value of the expression in floating point."""
    value = _walk(parse(text), _FLOAT_OPS)
    if not math.isfinite(value):
        raise ExpressionError(f"{text!r} is not finite")
    return float(value)


def _interval(text: str, bits: int):
    iv = mpmath.iv
    def const(v):
        # a float literal denotes the decimal the user wrote, not its binary neighbour
        q = Fraction(repr(v)) if isinstance(v, float) else Fraction(v)
        return iv.mpf(q.numerator) / iv.mpf(q.denominator)
    def div(a, b):
        if 0 in b:
            raise ExpressionError("division by zero")
        return a / b
    def log(a):
        if a.a <= 0:
            raise ExpressionError("log of a non-positive number")
        return iv.log(a)
    def sqrt(a):
        if a.a < 0:
            raise ExpressionError("sqrt of a negative number")
        return iv.sqrt(a)
    ops = {"const": const, "e": iv.e, "pi": iv.pi, "div": div, "pow": lambda a, b: a ** b,
           "log": log, "exp": iv.exp, "sqrt": sqrt}
    old = iv.prec
    iv.prec = bits
    try:
        return _walk(parse(text), ops)
    finally:
        iv.prec = old


def exp_lower_bound(text: str, bits: int = 160) -> Fraction:
    """A rational number ≤ e^ε, where ε is the exact value of ``text``.

    ε is enclosed in an interval with ``bits`` of working precision, and the
    lower end of the interval exponential is returned as an exact fraction. It
    is within a relative 2^-(bits-10) of e^ε for moderate ε.
    """
    iv = mpmath.iv
    old = iv.prec
    iv.prec = bits
    try:
        lower_raw = iv.exp(_interval(text, bits))._mpi_[0]  # exact lower endpoint
    finally:
        iv.prec = old
    p, q = mpmath.libmp.to_rational(lower_raw)
    value = Fraction(int(p), int(q))
    if value < 1:  # ε ≥ 0 is checked elsewhere; e^ε ≥ 1 always holds then
        value = Fraction(1)
    return value
