"""An exact (ε,𝒫)-PML checker written independently of mechdesign, for the fuzz tests.

Nothing here imports mechdesign. The oracle reads the spec as the raw dict the user wrote, so a
parsing defect in mechdesign (a decimal ε rounded to a double, a prior mass read off its text)
shows up as a disagreement instead of being reproduced.

What it decides, for a kernel K given exactly (Fractions or "p/q" strings):

* K is row-stochastic: every entry ≥ 0 and every row sums to exactly 1;
* K is (ε,𝒫)-PML for ε as written: for every output y,

      max_x K_x(y) ≤ e^ε · min_{P∈𝒫} P·K(:,y)

  (docs/explanation/mathematics.md, section 'Linear constraints': for fixed y the PML denominator Σ_x P(x) K_x(y) is linear in P, so its infimum over
  the polytope 𝒫 is attained at a vertex; Lemma 4 of the Dobrushin paper for Q_X(c)).

How, independently:

* numbers mean their text: ints exactly, a float by its shortest decimal repr ("0.1" is 1/10),
  a string "p/q" or a decimal string exactly (:func:`exact_number`); a distribution that sums to 1
  within 1e-9 is divided by its exact sum (the rule README "Spec reference" documents);
* min_{P∈𝒫} P·k by an exact minimiser per prior set (:class:`PriorSetOracle`), written from the
  geometry of each set, and a separate enumeration of points that include every vertex
  (:meth:`PriorSetOracle.vertex_candidates`, used by the tests' pairwise LP);
* "R ≤ e^ε" for the exact worst ratio R is decided rigorously (:class:`WrittenEpsilon`): ε as an
  exact rational when the text is a number, else the expression is evaluated in mpmath interval
  arithmetic at rising precision, with sympy used only to recognise an e^ε that is exactly rational
  (ε = log 3: a tight kernel has R = 3 = e^ε, which no interval can decide).
"""

from __future__ import annotations

import ast
import itertools
import math
import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, Sequence

import mpmath
import sympy

__all__ = [
    "exact_number",
    "distribution",
    "WrittenEpsilon",
    "PriorSetOracle",
    "Verdict",
    "check_kernel",
    "kernel_from_strings",
    "utility",
    "Undecided",
    "SUM_TOLERANCE",
]

SUM_TOLERANCE = Fraction(1, 10**9)
"""README, Spec reference: 'a prior that sums to 1 within 1e-9 is divided by its exact sum'."""

_DECIMAL = re.compile(r"^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$")
_RATIO = re.compile(r"^\s*[+-]?\d+\s*/\s*\d+\s*$")


class Undecided(Exception):
    """R and e^ε could not be separated at the highest precision tried."""


# ------------------------------------------------------------------------------ numbers
def exact_number(value: Any) -> Fraction:
    """The exact rational a user's number denotes: 0.1 → 1/10, "1/3" → 1/3, "1e-9" → 1/10^9."""
    if isinstance(value, bool):
        raise TypeError("a boolean is not a number")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"not finite: {value}")
        return Fraction(repr(value))  # the shortest decimal that reads back as this float
    if isinstance(value, str) and (_DECIMAL.match(value) or _RATIO.match(value)):
        num, _, den = value.partition("/")
        return Fraction(num.strip()) / (Fraction(den.strip()) if den else 1)
    raise ValueError(f"not a number: {value!r}")


def distribution(values: Sequence[Any]) -> list[Fraction]:
    """Exact masses, divided by their exact sum (which must be within 1e-9 of 1)."""
    masses = [exact_number(v) for v in values]
    total = sum(masses, Fraction(0))
    if any(m < 0 for m in masses) or abs(total - 1) > SUM_TOLERANCE:
        raise ValueError(f"not a distribution: {values!r}")
    return [m / total for m in masses]


def _dot(p: Sequence[Fraction], k: Sequence[Fraction]) -> Fraction:
    return sum((a * b for a, b in zip(p, k)), Fraction(0))


def _endpoint(interval, end: int) -> Fraction:
    """The lower (end = 0) or upper (end = 1) endpoint of an mpmath iv interval as an exact rational.

    Read from the raw (sign, mantissa, exponent, bitcount) tuple: converting through ``mpmath.mpf``
    would round to the global 53-bit context and lose the directed rounding.
    """
    sign, man, exp, _ = interval._mpi_[end]
    if not man and exp:  # ±inf or nan
        raise OverflowError("interval endpoint is not finite")
    value = Fraction(int(man) * 2**exp) if exp >= 0 else Fraction(int(man), 2**-exp)
    return -value if sign else value


# ------------------------------------------------------------------------------ ε as written
_FUNCTIONS = ("log", "exp", "sqrt")
_CONSTANTS = ("e", "pi")


class WrittenEpsilon:
    """ε exactly as the spec text says, and a rigorous decision of R ≤ e^ε for rationals R.

    ``rational``: the exact ε when the text is a number (int, float repr, decimal or "p/q" string),
    else None. ``exp_rational``: e^ε exactly when it is a rational that sympy can exhibit
    (ε = 0, log(10/3), 2*log(2) − log(3)), else None.
    """

    MAX_BITS = 8192

    def __init__(self, raw: Any):
        if isinstance(raw, bool):
            raise TypeError("epsilon must be a number or an expression")
        self.raw = raw
        self.text = repr(raw) if isinstance(raw, float) else str(raw)
        try:
            self.rational: Fraction | None = exact_number(raw)
        except ValueError:
            self.rational = None
        if self.rational is not None:
            self._tree = None
            self.symbolic = sympy.Rational(self.rational.numerator, self.rational.denominator)
        else:
            self._tree = ast.parse(self.text.strip(), mode="eval")
            self.symbolic = self._sympy(self._tree.body)
        self.exp_rational = _exp_if_rational(self.symbolic)

    # -- expression walkers (numbers are read from their source text, never through a float)
    def _literal(self, node: ast.Constant) -> Fraction:
        segment = ast.get_source_segment(self.text.strip(), node)
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)) or segment is None:
            raise ValueError(f"unsupported constant in {self.text!r}")
        return exact_number(segment) if isinstance(node.value, float) else Fraction(node.value)

    def _sympy(self, node):
        if isinstance(node, ast.Constant):
            q = self._literal(node)
            return sympy.Rational(q.numerator, q.denominator)
        if isinstance(node, ast.Name) and node.id in _CONSTANTS:
            return sympy.E if node.id == "e" else sympy.pi
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = self._sympy(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp):
            a, b = self._sympy(node.left), self._sympy(node.right)
            ops = {
                ast.Add: lambda: a + b,
                ast.Sub: lambda: a - b,
                ast.Mult: lambda: a * b,
                ast.Div: lambda: a / b,
                ast.Pow: lambda: a**b,
            }
            if type(node.op) in ops:
                return ops[type(node.op)]()
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _FUNCTIONS
            and len(node.args) == 1
            and not node.keywords
        ):
            return getattr(sympy, node.func.id)(self._sympy(node.args[0]))
        raise ValueError(f"unsupported construct in {self.text!r}")

    def _interval(self, node, iv):
        if isinstance(node, ast.Constant):
            q = self._literal(node)
            return iv.mpf(q.numerator) / iv.mpf(q.denominator)
        if isinstance(node, ast.Name):
            return iv.e if node.id == "e" else iv.pi
        if isinstance(node, ast.UnaryOp):
            v = self._interval(node.operand, iv)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp):
            a, b = self._interval(node.left, iv), self._interval(node.right, iv)
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            if isinstance(node.op, ast.Div):
                return a / b
            # a ** b: an exact integer power when b is a point integer, else exp(b log a) (a > 0)
            lo, hi = _endpoint(b, 0), _endpoint(b, 1)
            if lo == hi and lo.denominator == 1:
                n = int(lo)
                r = a ** abs(n)
                return 1 / r if n < 0 else r
            return iv.exp(b * iv.log(a))
        name = node.func.id
        return {"log": iv.log, "exp": iv.exp, "sqrt": iv.sqrt}[name](self._interval(node.args[0], iv))

    def interval(self, bits: int):
        """A rigorous enclosure [lo, hi] of ε (mpmath iv, outward rounding) at ``bits`` of precision."""
        iv = mpmath.iv
        old = iv.prec
        iv.prec = bits
        try:
            if self.rational is not None:
                return iv.mpf(self.rational.numerator) / iv.mpf(self.rational.denominator)
            return self._interval(self._tree.body, iv)
        finally:
            iv.prec = old

    def float_value(self) -> float:
        """ε as a float (for the LPs of the tests; inf when it does not fit)."""
        lo = _endpoint(self.interval(64), 0)
        return float(lo) if lo < 10**300 else math.inf

    def exp_float(self, cap: float = math.inf) -> float:
        """e^ε rounded to a float, capped at ``cap`` (inf past the float range)."""
        lo = _endpoint(self.interval(64), 0)
        if lo > 700:
            return cap
        return min(cap, math.exp(float(lo)))

    def exp_at_least(self, ratio: Fraction) -> bool:
        """Decide ratio ≤ e^ε exactly (raises :class:`Undecided` only if 8192 bits cannot separate them)."""
        ratio = Fraction(ratio)
        if ratio <= 1:  # e^ε ≥ 1 for every ε ≥ 0 (specs with ε < 0 are invalid and never reach here)
            return True
        if self.exp_rational is not None:
            return ratio <= self.exp_rational
        big = (math.ceil(ratio)).bit_length()  # ratio < 2^big
        bits = 64
        while bits <= self.MAX_BITS:
            eps = self.interval(bits)
            if _endpoint(eps, 0) >= big:  # e^ε ≥ 2^ε ≥ 2^big > ratio
                return True
            iv = mpmath.iv
            old = iv.prec
            iv.prec = bits
            try:
                e = iv.exp(eps)
            finally:
                iv.prec = old
            if ratio <= _endpoint(e, 0):
                return True
            if ratio > _endpoint(e, 1):
                return False
            bits *= 4
        raise Undecided(f"cannot separate {ratio} from e^({self.text})")


@lru_cache(maxsize=512)
def _exp_if_rational(symbolic) -> Fraction | None:
    """e^ε as a Fraction when sympy shows it is rational (ε = log(10/3) → 10/3), else None."""
    if symbolic == 0:
        return Fraction(1)
    if symbolic.is_Rational:
        return None  # e^q is irrational for every rational q ≠ 0 (Lindemann)
    value = sympy.simplify(sympy.expand_log(sympy.exp(symbolic), force=True))
    if value.is_Rational:
        return Fraction(int(value.p), int(value.q))
    return None


# ------------------------------------------------------------------------------ prior sets
class PriorSetOracle:
    """A prior set as written, with an exact minimiser of P·k and a superset of its vertices."""

    def __init__(self, raw: dict, n: int):
        self.kind = raw["kind"]
        self.n = n
        self.raw = raw
        if self.kind == "min_mass":
            self.c = exact_number(raw["c"])
        elif self.kind == "point":
            self.prior = distribution(raw["prior"])
        elif self.kind == "hull":
            self.priors = [distribution(p) for p in raw["priors"]]
        elif self.kind == "box":
            self.lower = [exact_number(v) for v in raw["lower"]]
            self.upper = [exact_number(v) for v in raw["upper"]]
        elif self.kind == "l1_ball":
            self.center = distribution(raw["center"])
            self.radius = exact_number(raw["radius"])
        elif self.kind != "simplex":
            raise ValueError(f"unknown prior set {self.kind!r}")

    def minimise(self, k: Sequence[Fraction]) -> tuple[Fraction, list[Fraction]]:
        """(min_{P∈𝒫} P·k, a minimising P), exactly."""
        n, k = self.n, [Fraction(v) for v in k]
        low = min(range(n), key=lambda i: k[i])
        if self.kind == "simplex":  # vertices e_j
            return k[low], [Fraction(int(i == low)) for i in range(n)]
        if self.kind == "min_mass":  # vertices c·1 + (1 − Nc) e_j (Dobrushin paper, Lemma 4)
            p = [self.c + (1 - n * self.c) * (i == low) for i in range(n)]
            return _dot(p, k), p
        if self.kind == "point":
            return _dot(self.prior, k), list(self.prior)
        if self.kind == "hull":
            best = min(self.priors, key=lambda p: _dot(p, k))
            return _dot(best, k), list(best)
        if self.kind == "box":
            # start at the lower bounds, then pour the missing mass into the cheapest symbols first
            p = list(self.lower)
            left = 1 - sum(p)
            for i in sorted(range(n), key=lambda i: k[i]):
                add = min(left, self.upper[i] - self.lower[i])
                p[i] += add
                left -= add
            assert left == 0
            return _dot(p, k), p
        # l1_ball ∩ simplex: moving t of mass from x to the cheapest symbol costs 2t of ℓ1 distance and
        # changes P·k by t(k_low − k_x); the best use of the budget r/2 takes from the dearest first
        p = list(self.center)
        budget = self.radius / 2
        for i in sorted(range(n), key=lambda i: k[i], reverse=True):
            if budget == 0 or k[i] <= k[low]:
                break
            move = min(budget, p[i])
            p[i] -= move
            p[low] += move
            budget -= move
        return _dot(p, k), p

    def contains(self, p: Sequence[Fraction]) -> bool:
        """Exact membership test (used by the oracle's own tests)."""
        if any(v < 0 for v in p) or sum(p) != 1:
            return False
        if self.kind == "simplex":
            return True
        if self.kind == "min_mass":
            return all(v >= self.c for v in p)
        if self.kind == "point":
            return list(p) == self.prior
        if self.kind == "box":
            return all(lo <= v <= hi for lo, v, hi in zip(self.lower, p, self.upper))
        if self.kind == "l1_ball":
            return sum(abs(a - b) for a, b in zip(p, self.center)) <= self.radius
        raise NotImplementedError("hull membership is an LP; not needed")

    def vertex_candidates(self) -> list[list[Fraction]]:
        """Points of 𝒫 that include every vertex of 𝒫 (so the constraints for them are exactly (ε,𝒫)-PML).

        box: a vertex has at most one coordinate strictly between its bounds; every other coordinate
        sits at a bound (2^(N−1) patterns per free coordinate). l1_ball ∩ simplex: a vertex is the
        unique minimiser of some generic linear function, which the greedy of :meth:`minimise` builds:
        one receiving symbol j, a set Z of emptied symbols, at most one partly emptied symbol i, the
        rest at the centre; all such points that lie in the set are listed.
        """
        n = self.n
        if self.kind == "simplex":
            pts = [[Fraction(int(i == j)) for i in range(n)] for j in range(n)]
        elif self.kind == "min_mass":
            pts = [[self.c + (1 - n * self.c) * (i == j) for i in range(n)] for j in range(n)]
        elif self.kind == "point":
            pts = [list(self.prior)]
        elif self.kind == "hull":
            pts = [list(p) for p in self.priors]
        elif self.kind == "box":
            pts = []
            for free in range(n):
                others = [i for i in range(n) if i != free]
                for pattern in itertools.product((0, 1), repeat=n - 1):
                    p = [Fraction(0)] * n
                    for i, hi in zip(others, pattern):
                        p[i] = self.upper[i] if hi else self.lower[i]
                    p[free] = 1 - sum(p)
                    if self.lower[free] <= p[free] <= self.upper[free]:
                        pts.append(p)
        else:
            c, half = self.center, self.radius / 2
            pts = [list(c)]
            for j in range(n):
                others = [i for i in range(n) if i != j]
                for size in range(len(others) + 1):
                    for zeroed in itertools.combinations(others, size):
                        taken = sum((c[i] for i in zeroed), Fraction(0))
                        if taken > half:
                            continue
                        base = list(c)
                        for i in zeroed:
                            base[i] = Fraction(0)
                        base[j] = c[j] + taken
                        pts.append(base)  # the budget not exhausted: only whole symbols moved
                        rest = half - taken
                        for i in others:
                            if i in zeroed or not 0 < rest <= c[i]:
                                continue
                            p = list(base)
                            p[i] = c[i] - rest
                            p[j] = base[j] + rest
                            pts.append(p)
        unique = []
        seen = set()
        for p in pts:
            key = tuple(p)
            if key not in seen:
                seen.add(key)
                unique.append(p)
        return unique


# ------------------------------------------------------------------------------ the check
@dataclass(frozen=True)
class Verdict:
    """The oracle's finding for one kernel."""

    stochastic: bool
    private: bool
    """Row-stochastic and (ε,𝒫)-PML for ε as written."""
    worst_output: int | None
    worst_ratio: Fraction | None
    """max_y max_x K_x(y) / min_P P·K(:,y) exactly (None: all columns zero or an unbounded ratio)."""
    unbounded_output: int | None
    """An output with max_x K_x(y) > 0 but min_P P·K(:,y) = 0 (infinite leakage), if any."""
    worst_prior: list[Fraction] | None
    reason: str


def kernel_from_strings(rows: Sequence[Sequence[Any]]) -> list[list[Fraction]]:
    """A kernel from Fractions or exact strings ("p/q", the ``kernel_exact`` of ``solve --json``)."""
    return [[Fraction(v) for v in row] for row in rows]


def check_kernel(kernel: Sequence[Sequence[Any]], raw_spec: dict) -> Verdict:
    """Is ``kernel`` row-stochastic and (ε,𝒫)-PML for the spec exactly as written?"""
    K = kernel_from_strings(kernel)
    n = _alphabet_size(raw_spec["alphabet"])
    if len(K) != n or len({len(r) for r in K}) != 1:
        return Verdict(False, False, None, None, None, None, f"kernel has shape {len(K)} x ?, N = {n}")
    for x, row in enumerate(K):
        if any(v < 0 for v in row):
            return Verdict(False, False, None, None, None, None, f"row {x} has a negative entry")
        if sum(row) != 1:
            return Verdict(False, False, None, None, None, None, f"row {x} sums to {sum(row)}, not 1")
    prior_set = PriorSetOracle(raw_spec["prior_set"], n)
    eps = WrittenEpsilon(raw_spec["epsilon"])
    worst: tuple[int, Fraction, list[Fraction]] | None = None
    for y in range(len(K[0])):
        column = [K[x][y] for x in range(n)]
        top = max(column)
        if top == 0:
            continue
        low, prior = prior_set.minimise(column)
        if low == 0:
            return Verdict(
                True, False, y, None, y, prior, f"output {y}: max_x K_x(y) = {top} > 0 but P·K(:,y) = 0 for P = {prior}"
            )
        ratio = top / low
        if worst is None or ratio > worst[1]:
            worst = (y, ratio, prior)
    if worst is None:
        return Verdict(True, True, None, None, None, None, "all columns are zero")
    y, ratio, prior = worst
    ok = eps.exp_at_least(ratio)
    reason = (
        f"output {y}: ratio {float(ratio)!r} {'<=' if ok else '>'} e^({eps.text}) (prior {[str(p) for p in prior]})"
    )
    return Verdict(True, ok, y, ratio, None, prior, reason)


def _alphabet_size(alphabet: Any) -> int:
    return alphabet if isinstance(alphabet, int) else len(alphabet)


# ------------------------------------------------------------------------------ utilities
def loss_matrix(objective: dict, n: int, m: int) -> list[list[Fraction]]:
    """The N×M loss of an expected_loss objective as written (named losses on symbol indices)."""
    loss = objective.get("loss", "hamming")
    if isinstance(loss, list):
        return [[exact_number(v) for v in row] for row in loss]
    f = {
        "hamming": lambda x, y: int(x != y),
        "absolute": lambda x, y: abs(x - y),
        "squared": lambda x, y: (x - y) ** 2,
    }[loss]
    return [[Fraction(f(x, y)) for y in range(m)] for x in range(n)]


def named_prior(value: Any, n: int) -> list[Fraction]:
    if value is None or value == "uniform":
        return [Fraction(1, n)] * n
    return distribution(value)


def _f_perspective(f: Any, p, q):
    """q·f(p/q) with its limits at q = 0 (p·lim f(t)/t) and p = 0 (q·f(0)), for the spec's f."""
    mp = mpmath
    if isinstance(f, dict):
        a = mp.mpf(exact_number(f["alpha"]).numerator) / exact_number(f["alpha"]).denominator
        if a == 1:
            f = "kl"
        elif a < 1:  # f_α(t) = 1 − t^α: q f(p/q) = q − p^α q^(1−α); lim f(t)/t = 0
            return q - (p**a) * (q ** (1 - a)) if q > 0 else mp.mpf(0)
        else:  # t^α − 1: q f(p/q) = p^α q^(1−α) − q; infinite at q = 0 < p
            if q == 0:
                return mp.inf if p > 0 else mp.mpf(0)
            return (p**a) * (q ** (1 - a)) - q
    if f == "kl":
        if p == 0:
            return mp.mpf(0)
        return p * mp.log(p / q) if q > 0 else mp.inf
    if f == "tv":
        return abs(p - q) / 2
    if f == "hellinger":
        return (mp.sqrt(p) - mp.sqrt(q)) ** 2
    if f == "chi2":
        if q == 0:
            return mp.inf if p > 0 else mp.mpf(0)
        return (p - q) ** 2 / q
    raise ValueError(f"unknown f {f!r}")


def utility(kernel: Sequence[Sequence[Any]], raw_spec: dict):
    """The spec's objective evaluated on ``kernel``: a Fraction for the linear objectives, an mpmath
    number (60 digits) for mutual information and f-divergences. Written from the definitions in
    README "Spec reference" (f_α of the f_α paper, eq. 3)."""
    K = kernel_from_strings(kernel)
    n, m = len(K), len(K[0])
    obj = raw_spec["objective"]
    kind = obj["kind"]
    if kind == "dobrushin":  # η_TV(K) = max_{x,x'} ½ Σ_y |K_x(y) − K_x'(y)| (Dobrushin paper, eq. 2)
        return max(sum((abs(a - b) for a, b in zip(K[x], K[z])), Fraction(0)) / 2 for x in range(n) for z in range(n))
    if kind == "expected_loss":
        L = loss_matrix(obj, n, m)
        row_loss = [sum((K[x][y] * L[x][y] for y in range(m)), Fraction(0)) for x in range(n)]
        if obj.get("prior") == "worst_case":
            prior_set = PriorSetOracle(raw_spec["prior_set"], n)
            return -prior_set.minimise([-v for v in row_loss])[0]
        return _dot(named_prior(obj.get("prior"), n), row_loss)
    if kind == "bayes_vulnerability":
        P = named_prior(obj.get("prior"), n)
        return sum((max(P[x] * K[x][y] for x in range(n)) for y in range(m)), Fraction(0))
    with mpmath.workdps(60):
        mp = lambda q: mpmath.mpf(q.numerator) / q.denominator  # noqa: E731
        if kind == "mutual_information":
            P = named_prior(obj.get("prior"), n)
            total = mpmath.mpf(0)
            for y in range(m):
                py = _dot(P, [K[x][y] for x in range(n)])
                for x in range(n):
                    if P[x] * K[x][y] > 0:
                        total += mp(P[x] * K[x][y]) * mpmath.log(mp(K[x][y] / py))
            return +total
        if kind == "f_divergence":
            P0, P1 = (distribution(p) for p in obj["priors"])
            total = mpmath.mpf(0)
            for y in range(m):
                col = [K[x][y] for x in range(n)]
                total += _f_perspective(obj.get("f", "kl"), mp(_dot(P0, col)), mp(_dot(P1, col)))
            return +total
    raise ValueError(f"unknown objective {kind!r}")
