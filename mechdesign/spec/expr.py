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

__all__ = ["ExpressionError", "evaluate", "exp_lower_bound", "exp_upper_bound", "exp_exact", "parse"]

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
    is within a relative 2^-(bits-10) of e^ε for moderate ε. When e^ε is an
    evident rational (ε = 0, log(10/3), 2*log(2) − log(3)) it is returned
    exactly (:func:`exp_exact`), so mechanisms that are tight at ε pass.
    """
    exact = exp_exact(text)
    if exact is not None:
        return exact
    value = _exp_endpoint(text, bits, 0)
    if value < 1:  # ε ≥ 0 is checked elsewhere; e^ε ≥ 1 always holds then
        value = Fraction(1)
    return value


def exp_upper_bound(text: str, bits: int = 160) -> Fraction:
    """A rational number ≥ e^ε (the upper end of the interval exponential); exact when e^ε is rational."""
    exact = exp_exact(text)
    if exact is not None:
        return exact
    return _exp_endpoint(text, bits, 1)


def _exp_endpoint(text: str, bits: int, end: int) -> Fraction:
    """The lower (end = 0) or upper (end = 1) endpoint of the interval e^[ε], exactly."""
    iv = mpmath.iv
    old = iv.prec
    iv.prec = bits
    try:
        raw = iv.exp(_interval(text, bits))._mpi_[end]
    finally:
        iv.prec = old
    p, q = mpmath.libmp.to_rational(raw)
    return Fraction(int(p), int(q))


class _Log:
    """The exact value log(r) of a positive rational r (for :func:`exp_exact`)."""

    __slots__ = ("r",)

    def __init__(self, r: Fraction):
        self.r = r


class _NotRational(Exception):
    pass


def _exact_op(op: str, a, b=None):
    lg = isinstance(a, _Log), isinstance(b, _Log)
    if op in ("add", "sub"):
        if isinstance(a, Fraction) and a == 0 and lg[1]:
            return b if op == "add" else _Log(1 / b.r)
        if isinstance(b, Fraction) and b == 0 and lg[0]:
            return a
        if lg == (True, True):
            return _Log(a.r * b.r if op == "add" else a.r / b.r)
        if lg == (False, False):
            return a + b if op == "add" else a - b
    elif op == "mul":
        if lg == (False, False):
            return a * b
        k, g = (a, b) if lg[1] else (b, a)
        if isinstance(k, Fraction) and k.denominator == 1 and abs(k) <= 64:
            return _Log(g.r ** int(k))
    elif op == "div":
        if lg == (False, False):
            if b == 0:
                raise _NotRational
            return a / b
        if lg == (True, False) and b == 1:
            return a
    elif op == "pow":
        if lg == (False, False) and b.denominator == 1 and abs(b) <= 64 and not (a == 0 and b < 0):
            return a ** int(b)
    elif op == "log":
        if not lg[0] and a > 0:
            return _Log(a)
    raise _NotRational


def exp_exact(text: str) -> Fraction | None:
    """e^ε as an exact fraction when it is rational in an evident way, else None.

    ε = 0 gives 1; ε = log(q), sums and differences of such logs and small
    integer multiples of them (``2*log(2) - log(3)``) give the rational inside.
    This matters for tight mechanisms: randomized response at ε = log 3 has
    ratio exactly 3, which no lower bound strictly below e^ε would accept.
    """
    class _V:  # routes _walk's + - * and unary minus through _exact_op
        __slots__ = ("v",)

        def __init__(self, v):
            self.v = v

        def __add__(self, o):
            return _V(_exact_op("add", self.v, o.v))

        def __sub__(self, o):
            return _V(_exact_op("sub", self.v, o.v))

        def __mul__(self, o):
            return _V(_exact_op("mul", self.v, o.v))

        def __neg__(self):
            return _V(_Log(1 / self.v.r) if isinstance(self.v, _Log) else -self.v)

    def unsupported(*_):
        raise _NotRational

    ops = {"const": lambda v: _V(Fraction(repr(v)) if isinstance(v, float) else Fraction(v)),
           "div": lambda a, b: _V(_exact_op("div", a.v, b.v)), "pow": lambda a, b: _V(_exact_op("pow", a.v, b.v)),
           "log": lambda a: _V(_exact_op("log", a.v)), "exp": unsupported, "sqrt": unsupported}
    try:
        tree = parse(text)
        if any(isinstance(n, ast.Name) and n.id in _CONSTANTS for n in ast.walk(tree)):  # e, pi
            return None
        value = _walk(tree, ops).v
    except (_NotRational, ExpressionError, OverflowError, ZeroDivisionError):
        return None
    if isinstance(value, _Log):
        return value.r if value.r >= 1 else None
    if value == 0:
        return Fraction(1)
    return None
