"""Safe arithmetic expressions for ε (``log(10/3)``, ``2*log(2)``, ``0.5``).

The text is parsed with :mod:`ast` and only numbers, ``+ - * / **``, unary
signs, the constants ``e`` and ``pi`` and the functions ``log``, ``exp`` and
``sqrt`` are accepted; nothing is ever passed to ``eval``.

Every literal means its text exactly (``0.1`` is 1/10, a 38-digit decimal is
that decimal, not the double Python's parser rounds it to). The tree is evaluated
in mpmath interval arithmetic with outward rounding, which gives a rigorous
enclosure of ε and hence a *rational lower bound of e^ε* that the exact privacy
check relies on (an emitted kernel checked against a number ≤ e^ε is private at
ε). The double the LP uses is that enclosure rounded (:func:`evaluate`). Huge
values never ask for huge numbers: exp saturates at 2^20 nats (an enclosure
[e^(2^20), ∞]) and callers cap e^ε where no kernel can tell it from ∞
(``cap`` of :func:`exp_lower_bound`).
"""

from __future__ import annotations

import ast
import math
from fractions import Fraction

import mpmath

__all__ = [
    "ExpressionError",
    "enclose",
    "evaluate",
    "exp_lower_bound",
    "exp_upper_bound",
    "exp_exact",
    "exp_saturates",
    "parse",
]

_FUNCTIONS = {"log", "exp", "sqrt"}
_CONSTANTS = {"e", "pi"}
_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)


class ExpressionError(ValueError):
    """The text is not an accepted arithmetic expression."""


def parse(text: str) -> ast.Expression:
    """Parse ``text`` and reject every construct outside the small grammar."""
    if len(text) > 200:
        raise ExpressionError("expression longer than 200 characters")
    source = text.strip()
    try:
        tree = ast.parse(source, mode="eval")
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
            node.exact = _literal(ast.get_source_segment(source, node), node.value)
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
        return ops["const"](node.exact)
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


MAX_LITERAL_EXPONENT = 4000
"""A decimal literal's exponent is at most 4000 in absolute value (``1e999`` is fine, ``1e99999`` is
refused): the literal is turned into an exact integer ratio, whose size grows with the exponent."""


def _literal(segment: str | None, value) -> Fraction:
    """The exact rational a literal denotes: its source text, never its binary double.

    ``2.30258509299404568401799145468436420760`` is that decimal exactly: the
    double Python's parser made of it lies above ln 10, the decimal below.
    """
    if isinstance(value, int):
        return Fraction(value)
    text = (segment or repr(value)).replace("_", "")
    mantissa, _, exponent = text.lower().partition("e")
    if exponent and abs(int(exponent)) > MAX_LITERAL_EXPONENT:
        raise ExpressionError(
            f"the literal {text} is out of range (decimal exponent at most {MAX_LITERAL_EXPONENT} in absolute value)"
        )
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise ExpressionError(f"not a decimal number: {text!r}") from None


EXP_SATURATION = 2**20
"""exp of an argument above 2^20 is enclosed as [e^(2^20), +inf]: still a rigorous enclosure, and
2^20 nats is far beyond any e^ε a kernel can tell apart (see mechdesign.certify.saturation), so
``exp(exp(100))`` never asks for a number with 10^43 digits."""

MAX_INTEGER_POWER = 4096


def _ends(x) -> tuple[mpmath.mpf, mpmath.mpf]:
    """The exact endpoints (lo, hi) of an mpmath interval, as mpf numbers."""
    lo, hi = x._mpi_
    return mpmath.mp.make_mpf(lo), mpmath.mp.make_mpf(hi)


def _interval(text: str, bits: int):
    """A rigorous enclosure of the expression's exact value (mpmath ``iv``, outward rounding)."""
    iv = mpmath.iv

    def const(q: Fraction):
        return iv.mpf(q.numerator) / iv.mpf(q.denominator)

    def div(a, b):
        lo, hi = _ends(b)
        if lo <= 0 <= hi:
            raise ExpressionError("division by zero")
        return a / b

    def log(a):
        if _ends(a)[0] <= 0:
            raise ExpressionError("log of a non-positive number")
        return iv.log(a)

    def sqrt(a):
        if _ends(a)[0] < 0:
            raise ExpressionError("sqrt of a negative number")
        return iv.sqrt(a)

    def exp(a):
        lo, hi = _ends(a)
        if hi <= EXP_SATURATION:
            return iv.exp(a)
        low, _ = _ends(iv.exp(iv.mpf(min(lo, mpmath.mpf(EXP_SATURATION)))))
        return iv.mpf([low, mpmath.inf])

    def power(a, b):
        (alo, ahi), (blo, bhi) = _ends(a), _ends(b)
        if (
            blo == bhi
            and mpmath.isfinite(blo)
            and blo == int(blo)
            and abs(int(blo)) <= MAX_INTEGER_POWER
            and mpmath.isfinite(alo)
            and mpmath.isfinite(ahi)
        ):
            k = int(blo)
            if k < 0 and alo <= 0 <= ahi:
                raise ExpressionError("power out of range (negative power of zero)")
            return a**k
        if alo <= 0:
            raise ExpressionError(
                f"power of a number that may be <= 0 needs an integer exponent of at most {MAX_INTEGER_POWER}"
            )
        return exp(b * iv.log(a))

    ops = {"const": const, "e": iv.e, "pi": iv.pi, "div": div, "pow": power, "log": log, "exp": exp, "sqrt": sqrt}
    old = iv.prec
    iv.prec = bits
    try:
        value = _walk(parse(text), ops)
    except (OverflowError, ZeroDivisionError, MemoryError) as exc:  # pragma: no cover - guarded above
        raise ExpressionError(f"cannot evaluate {text!r}: {type(exc).__name__}") from None
    finally:
        iv.prec = old
    lo, hi = _ends(value)
    if mpmath.isnan(lo) or mpmath.isnan(hi) or lo == -mpmath.inf:
        raise ExpressionError(f"cannot bound {text!r} rigorously (an infinity times zero or minus infinity)")
    return value


def enclose(text: str) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(lo, hi) with lo ≤ value ≤ hi, the value of ``text`` taken exactly; hi may be +inf.

    When the enclosure straddles 0 the precision is raised (160, 640, 2560 bits); an expression
    whose sign is still undecided (and that is not evidently 0, see :func:`exp_exact`) is refused.
    """
    for bits in (160, 640, 2560):
        lo, hi = _ends(_interval(text, bits))
        if lo >= 0 or hi < 0:
            return lo, hi
    if exp_exact(text) == 1:
        return mpmath.mpf(0), mpmath.mpf(0)
    raise ExpressionError(f"cannot decide the sign of {text!r} (it lies within 2^-2500 of 0)")


def evaluate(text: str) -> float:
    """The expression's exact value rounded to a double (the value the LP is given).

    0.0 for a positive value below the double range (``1/1e999``: the LP then designs for ε = 0,
    which is private at every ε ≥ 0) and ``inf`` above it (``exp(1000)``).
    """
    lo, hi = enclose(text)
    if lo == 0 and hi == 0:
        return 0.0
    mid = lo if not mpmath.isfinite(hi) else (lo + hi) / 2
    try:
        return float(mid)
    except OverflowError:  # pragma: no cover - mpmath returns inf
        return math.inf


def exp_lower_bound(text: str, bits: int = 160, cap: Fraction | None = None) -> Fraction:
    """A rational number ≤ e^ε, where ε is the exact value of ``text``.

    ε is enclosed in an interval with ``bits`` of working precision, and the
    lower end of the interval exponential is returned as an exact fraction. It
    is within a relative 2^-(bits-10) of e^ε for moderate ε. When e^ε is an
    evident rational (ε = 0, log(10/3), 2*log(2) − log(3)) it is returned
    exactly (:func:`exp_exact`), so mechanisms that are tight at ε pass.

    ``cap``: when e^ε ≥ cap (rigorously), ``cap`` itself is returned — a rational ≤ e^ε that a caller
    chooses so large that no kernel it checks can tell it from ∞
    (:func:`mechdesign.certify.saturation.ratio_cap`). Without a cap, ε above 2^16 nats is refused
    (e^ε would have more than 28,000 digits).
    """
    exact = exp_exact(text)
    if exact is not None:
        return exact if cap is None else min(exact, cap)
    if _saturated(text, bits, cap):
        return cap
    value = _exp_endpoint(text, bits, 0)
    if value < 1:  # ε ≥ 0 is checked elsewhere; e^ε ≥ 1 always holds then
        value = Fraction(1)
    return value if cap is None else min(value, cap)


def exp_upper_bound(text: str, bits: int = 160, cap: Fraction | None = None) -> Fraction | None:
    """A rational number ≥ e^ε (the upper end of the interval exponential); exact when e^ε is rational.

    None when e^ε ≥ ``cap`` (then no finite ratio of the caller's kernels exceeds e^ε) or when the
    enclosure of ε is unbounded above.
    """
    exact = exp_exact(text)
    if exact is not None:
        return None if cap is not None and exact >= cap else exact
    if _saturated(text, bits, cap):
        return None
    if not mpmath.isfinite(_ends(_interval(text, bits))[1]):
        return None
    return _exp_endpoint(text, bits, 1)


def exp_saturates(text: str, cap: Fraction) -> bool:
    """True when e^ε ≥ cap is proved (interval arithmetic), i.e. ε behaves as ∞ below ``cap``."""
    exact = exp_exact(text)
    if exact is not None:
        return exact >= cap
    return _saturated(text, 160, cap)


def _saturated(text: str, bits: int, cap: Fraction | None) -> bool:
    lo = _ends(_interval(text, bits))[0]
    if cap is None:
        if lo > 2**16:
            raise ExpressionError(
                f"epsilon = {text} is too large for an explicit rational e^eps "
                "(a caller must cap it; see mechdesign.certify.saturation)"
            )
        return False
    iv = mpmath.iv
    old = iv.prec
    iv.prec = bits
    try:
        log_cap = _ends(iv.log(iv.mpf(cap.numerator) / iv.mpf(cap.denominator)))[1]
    finally:
        iv.prec = old
    return lo >= log_cap


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


def _exact_sum(op: str, a, b):
    """a + b or a - b over rationals and logs: log r ± log s = log(r s^±1); 0 ± log r; log r + 0."""
    lg = isinstance(a, _Log), isinstance(b, _Log)
    if isinstance(a, Fraction) and a == 0 and lg[1]:
        return b if op == "add" else _Log(1 / b.r)
    if isinstance(b, Fraction) and b == 0 and lg[0]:
        return a
    if lg == (True, True):
        return _Log(a.r * b.r if op == "add" else a.r / b.r)
    if lg == (False, False):
        return a + b if op == "add" else a - b
    raise _NotRational


def _exact_product(a, b):
    """a * b over rationals, or k log r = log(r^k) for a small integer k (|k| <= 64)."""
    lg = isinstance(a, _Log), isinstance(b, _Log)
    if lg == (False, False):
        return a * b
    k, g = (a, b) if lg[1] else (b, a)
    if isinstance(k, Fraction) and k.denominator == 1 and abs(k) <= 64:
        return _Log(g.r ** int(k))
    raise _NotRational


def _exact_quotient(a, b):
    """a / b over rationals (b != 0), or log r / 1."""
    lg = isinstance(a, _Log), isinstance(b, _Log)
    if lg == (False, False):
        if b == 0:
            raise _NotRational
        return a / b
    if lg == (True, False) and b == 1:
        return a
    raise _NotRational


def _exact_power(a, b):
    """a ** b for rationals with a small integer exponent (|b| <= 64), never 0 to a negative power."""
    if not isinstance(a, _Log) and not isinstance(b, _Log):
        if b.denominator == 1 and abs(b) <= 64 and not (a == 0 and b < 0):
            return a ** int(b)
    raise _NotRational


def _exact_log(a, b=None):
    """log a of a positive rational a, held exactly as :class:`_Log`."""
    if not isinstance(a, _Log) and a > 0:
        return _Log(a)
    raise _NotRational


_EXACT_OPS = {
    "add": lambda a, b: _exact_sum("add", a, b),
    "sub": lambda a, b: _exact_sum("sub", a, b),
    "mul": _exact_product,
    "div": _exact_quotient,
    "pow": _exact_power,
    "log": _exact_log,
}


def _exact_op(op: str, a, b=None):
    """``op`` applied exactly to rationals and logs of rationals; :class:`_NotRational` when the result is
    not of that form in an evident way."""
    rule = _EXACT_OPS.get(op)
    if rule is None:
        raise _NotRational
    return rule(a, b)


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

    ops = {
        "const": lambda v: _V(v),
        "div": lambda a, b: _V(_exact_op("div", a.v, b.v)),
        "pow": lambda a, b: _V(_exact_op("pow", a.v, b.v)),
        "log": lambda a: _V(_exact_op("log", a.v)),
        "exp": unsupported,
        "sqrt": unsupported,
    }
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
