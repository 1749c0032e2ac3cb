"""The declarative problem: pydantic models of a mechanism-design spec.

A spec names the secret alphabet X (N symbols), the privacy level ε (nats),
the set of priors 𝒫 the guarantee must hold for, the utility to optimise, the
output size M and solver options. Every rule is checked when the spec is
built (``extra="forbid"`` rejects unknown keys); later stages may assume a
valid spec. See docs/explanation/mathematics.md, section 'Contract'.

Probabilities (priors, c, box bounds, radii) are stored as exact fractions:
a number written ``0.05`` means 1/20, not its binary neighbour, and strings
``"1/3"`` are accepted. A prior that sums to 1 within 1e-9 is divided by its
exact sum so that the exact privacy check sees a true distribution.
"""

from __future__ import annotations

import math
import re
import sys
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Union

import mpmath
import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    PlainSerializer,
    Tag,
    ValidationError,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from mechdesign.spec import expr
from mechdesign.spec.errors import SpecError
from mechdesign.spec.input_rules import (
    MAX_M,
    MAX_N,
    MAX_NM,
    DecimalText,
    SpecInputError,
    exact_number_text,
    load_yaml_text,
    plain_python,
    read_spec_file,
    shown_number,
)
from mechdesign.spec.shorthand import expand_prior_set_shorthand

__all__ = [
    "Spec",
    "EpsilonRequirement",
    "AccuracyRequirement",
    "ProtectRequirement",
    "MinMass",
    "Simplex",
    "Point",
    "Hull",
    "Box",
    "L1Ball",
    "PriorSet",
    "Dobrushin",
    "ExpectedLoss",
    "MutualInformation",
    "FrequencyEstimation",
    "FDivergence",
    "AlphaF",
    "BayesVulnerability",
    "VulnerabilityCap",
    "MinVulnerability",
    "AbsoluteMetric",
    "DiscreteMetric",
    "MatrixMetric",
    "GridMetric",
    "Metric",
    "PriorSetGuarantee",
    "MetricGuarantee",
    "Guarantee",
    "metric_diameter_text",
    "rational_expression_text",
    "SUBLINEAR_KINDS",
    "Objective",
    "SolverOptions",
    "Epsilon",
    "load_spec",
    "spec_from_dict",
]

SUM_TOLERANCE = 1e-9


# ---------------------------------------------------------------- scalar types
def _to_fraction(value: Any) -> Fraction:
    """The exact rational a number means: a YAML decimal its text, a float its repr (see input_rules)."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, bool):
        raise ValueError("expected a number, found a boolean")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"expected a finite number, found {value}")
    if isinstance(value, DecimalText):
        return value.exact()
    text = exact_number_text(value)
    if text is not None:
        return _decimal_to_fraction(text)
    if isinstance(value, str):
        return _decimal_to_fraction(value.strip(), value)
    raise ValueError(f"expected a number, found {type(value).__name__}")


def _decimal_to_fraction(text: str, shown: Any = None) -> Fraction:
    if len(text) > 10_000:
        raise ValueError(f"a number is at most 10000 characters long, found {len(text)}")
    exponent = re.search(r"[eE]\s*([-+]?\d+)", text)
    if exponent and abs(int(exponent.group(1))) > expr.MAX_LITERAL_EXPONENT:
        raise ValueError(
            f"decimal exponent out of range (at most {expr.MAX_LITERAL_EXPONENT} in absolute value), found {text!r}"
        )
    try:
        return Fraction(text.replace("_", ""))
    except (ValueError, ZeroDivisionError):
        raise ValueError(
            f"expected a number or a fraction 'p/q', found {shown if shown is not None else text!r}"
        ) from None


def _rational_out(q: Fraction) -> float | str:
    """A rational as JSON/YAML: the double when it is exactly q (dyadic and in range), else the text 'p/q'
    (1/3, or 1e400 written as its digits: no double holds it)."""
    if q.denominator & (q.denominator - 1) == 0:
        try:
            f = float(q)
        except OverflowError:
            return str(q)
        if Fraction(f) == q:
            return f
    return str(q)


Rational = Annotated[
    Fraction,
    BeforeValidator(_to_fraction),
    PlainSerializer(_rational_out, return_type=Any),
    WithJsonSchema({"anyOf": [{"type": "number"}, {"type": "string", "pattern": r"^\s*-?\d+(\s*/\s*\d+)?\s*$"}]}),
]


class Epsilon(BaseModel):
    """ε in nats: the text the user wrote (what ε means, exactly) and its value rounded to a double.

    ``value`` is what the LP and the float formulas use (at most the largest double; a positive ε
    below the double range, such as 1/1e999, rounds to 0.0, which only makes the LP stricter);
    the certificate always works from ``text`` (:meth:`exp_lower_bound`)."""

    model_config = ConfigDict(frozen=True)
    text: str
    value: float

    def exp_lower_bound(self, cap: Fraction | None = None) -> Fraction:
        """A rational number ≤ e^ε (rigorous, from interval arithmetic on the text as written).

        ``cap``: return min(that, cap) without building e^ε when e^ε ≥ cap (large ε; see
        :func:`mechdesign.certify.saturation.ratio_cap`)."""
        return expr.exp_lower_bound(self.text, cap=cap)


def _to_epsilon(value: Any) -> Epsilon:
    """ε from a number or an expression; the text is what the value means exactly (input_rules)."""
    if isinstance(value, Epsilon):
        return value
    if isinstance(value, Fraction):
        value = str(value)
    if isinstance(value, DecimalText) and ":" in value.text:  # YAML 1.1 base-60 decimal
        value = str(value.exact())
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"must be finite, found {float(value)}")
    text = exact_number_text(value)
    if text is None:
        if isinstance(value, bool) or not isinstance(value, str):
            raise ValueError("expected a number or an expression such as 'log(10/3)'")
        text = value
    try:
        lo, hi = expr.enclose(text)
        number = expr.evaluate(text)
    except expr.ExpressionError as exc:
        raise ValueError(str(exc)) from None
    if hi < 0:
        plain = re.fullmatch(r"\s*[-+]?[\d.]+([eE][-+]?\d+)?\s*", text) is not None
        raise ValueError(f"must be >= 0, found {text}" + ("" if plain else f" = {mpmath.nstr(hi, 10)}"))
    # the LP and the float formulas get a finite double; ε beyond the double range (exp(1000)) is
    # the largest double there, which every float path treats as the ε = ∞ problem
    return Epsilon(text=text, value=min(number, sys.float_info.max))


EpsilonField = Annotated[
    Epsilon,
    BeforeValidator(_to_epsilon),
    PlainSerializer(lambda e: e.text, return_type=str),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "number", "minimum": 0},
                {"type": "string", "description": "expression with log, exp, sqrt, e, pi"},
            ]
        }
    ),
]


class _Model(BaseModel):
    """The spec's models: unknown keys are errors, values are frozen. A field's description is the docstring
    written under it; they are attached when a JSON schema is asked for (:func:`_attach_field_docstrings`),
    not when the models are defined (pydantic's ``use_attribute_docstrings`` reads the source of every class at
    import: a third of the time to import this module, paid by every command)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @classmethod
    def model_json_schema(cls, *args, **kwargs):
        _attach_field_docstrings()
        return super().model_json_schema(*args, **kwargs)


_FIELD_DOCSTRINGS_ATTACHED = False


def _attach_field_docstrings() -> None:
    """Give every field of this module's models the docstring written under it as its description (what
    pydantic's ``use_attribute_docstrings`` does), once: one parse of this file, then each model rebuilt in
    the order of definition, so that models that hold others see their descriptions."""
    global _FIELD_DOCSTRINGS_ATTACHED
    if _FIELD_DOCSTRINGS_ATTACHED:
        return
    import ast
    import inspect
    import sys

    module = sys.modules[__name__]
    tree = ast.parse(inspect.getsource(module))
    rebuilt = []
    for node in tree.body:
        cls = getattr(module, node.name, None) if isinstance(node, ast.ClassDef) else None
        if not (isinstance(cls, type) and issubclass(cls, _Model) and cls is not _Model):
            continue
        for stmt, after in zip(node.body, node.body[1:]):
            doc = getattr(after, "value", None)
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(doc, ast.Constant)
                and isinstance(doc.value, str)
            ):
                field = cls.model_fields.get(stmt.target.id)
                if field is not None and field.description is None:
                    field.description = inspect.cleandoc(doc.value)
        rebuilt.append(cls)
    for cls in rebuilt:
        cls.model_rebuild(force=True)
    _FIELD_DOCSTRINGS_ATTACHED = True


def _distribution(values: list[Fraction], what: str) -> tuple[Fraction, ...]:
    return checked_distribution(values, what)


def checked_distribution(values: list[Fraction], what: str) -> tuple[Fraction, ...]:
    """The one rule for a prior written as masses, wherever it is given (a spec, ``analyze --prior``): every
    mass >= 0 and the exact sum within :data:`SUM_TOLERANCE` (1e-9) of 1, which is float round-off; the masses
    are then divided by their exact sum. A ValueError states the rule otherwise."""
    if any(v < 0 for v in values):
        raise ValueError(f"{what} has a negative entry (all masses must be >= 0)")
    total = sum(values, Fraction(0))
    if abs(total - 1) > SUM_TOLERANCE:
        raise ValueError(f"{what} must sum to 1 (within {SUM_TOLERANCE:g}), found sum {shown_number(total)}")
    return tuple(v / total for v in values)


def _prior_choice(value):
    """A prior given as a list is checked and divided by its exact sum; names pass through."""
    return list(_distribution(value, "prior")) if isinstance(value, list) else value


# ------------------------------------------------------------------ prior sets
class MinMass(_Model):
    """Q_X(c): every prior whose masses are all >= c (Dobrushin paper, Def. 1). c = 0 is all priors (LDP)."""

    kind: Literal["min_mass"]
    c: Rational
    """Smallest prior mass, 0 <= c <= 1/N."""

    @field_validator("c")
    @classmethod
    def _c_nonnegative(cls, c: Fraction) -> Fraction:
        if c < 0:
            raise ValueError(f"must be >= 0, found {shown_number(c)}")
        return c


class Simplex(_Model):
    """All priors on X: (ε, simplex)-PML is ε-LDP (Dobrushin paper, Proposition 1)."""

    kind: Literal["simplex"]


class Point(_Model):
    """A single known prior: ε-PML."""

    kind: Literal["point"]
    prior: list[Rational]
    """The prior, N masses > 0 summing to 1."""

    @field_validator("prior")
    @classmethod
    def _is_distribution(cls, prior: list[Fraction]) -> list[Fraction]:
        prior = list(_distribution(prior, "prior"))
        if any(p == 0 for p in prior):
            raise ValueError("must have full support (PML is defined for priors with all masses > 0)")
        return prior


class Hull(_Model):
    """The convex hull of listed priors (the vertices are given)."""

    kind: Literal["hull"]
    priors: list[list[Rational]] = Field(min_length=1)
    """The listed priors, each with N masses summing to 1."""

    @field_validator("priors")
    @classmethod
    def _are_distributions(cls, priors: list[list[Fraction]]) -> list[list[Fraction]]:
        return [list(_distribution(p, f"priors[{i}]")) for i, p in enumerate(priors)]


class Box(_Model):
    """Priors with lower <= P <= upper entrywise."""

    kind: Literal["box"]
    lower: list[Rational]
    upper: list[Rational]

    @model_validator(mode="after")
    def _consistent(self) -> "Box":
        if len(self.lower) != len(self.upper):
            raise ValueError(f"lower has {len(self.lower)} entries but upper has {len(self.upper)}")
        for i, (lo, hi) in enumerate(zip(self.lower, self.upper)):
            if lo < 0:
                raise ValueError(f"lower[{i}] must be >= 0, found {shown_number(lo)}")
            if lo > hi:
                raise ValueError(f"lower[{i}] = {shown_number(lo)} exceeds upper[{i}] = {shown_number(hi)}")
        if sum(self.lower) > 1:
            raise ValueError(f"contains no distribution: sum(lower) = {shown_number(sum(self.lower))} > 1")
        if sum(self.upper) < 1:
            raise ValueError(f"contains no distribution: sum(upper) = {shown_number(sum(self.upper))} < 1")
        return self


class L1Ball(_Model):
    """Priors P with ||P - center||_1 <= radius."""

    kind: Literal["l1_ball"]
    center: list[Rational]
    radius: Rational

    @field_validator("center")
    @classmethod
    def _is_distribution(cls, center: list[Fraction]) -> list[Fraction]:
        return list(_distribution(center, "center"))

    @field_validator("radius")
    @classmethod
    def _radius_nonnegative(cls, r: Fraction) -> Fraction:
        if r < 0:
            raise ValueError(f"must be >= 0, found {shown_number(r)}")
        return r


PriorSet = Annotated[Union[MinMass, Simplex, Point, Hull, Box, L1Ball], Field(discriminator="kind")]


# ------------------------------------------------------------------ objectives
NamedLoss = Literal["hamming", "absolute", "squared"]


class Dobrushin(_Model):
    """Maximise the Dobrushin coefficient η_TV(K) = max_{x,x'} TV(K_x, K_x') (Dobrushin paper, eq. 2)."""

    kind: Literal["dobrushin"]


MAX_COEFFICIENT = 10**15
"""Largest |entry| of a loss or gain matrix: HiGHS refuses a model with a matrix value above 1e15 (its
``large_matrix_value``), and the worst-case and vulnerability LPs put these entries in their matrix. Scaling a
loss or gain by a positive factor does not change which mechanisms are optimal."""


def _within_coefficient_range(matrix, what: str) -> None:
    for i, row in enumerate(matrix):
        for j, v in enumerate(row):
            if abs(v) > MAX_COEFFICIENT:
                raise ValueError(
                    f"{what} matrix entries must be at most 1e15 in absolute value (the LP solver's coefficient "
                    f"range; scaling the {what} by a positive factor keeps the same optimal mechanisms), "
                    f"found {shown_number(Fraction(v))} at [{i}][{j}]"
                )


def _gain_matrix(gain):
    if isinstance(gain, list):
        if not gain or not gain[0]:
            raise ValueError("gain matrix is empty")
        widths = {len(row) for row in gain}
        if len(widths) != 1:
            raise ValueError(f"gain matrix rows have different lengths {sorted(widths)}")
        _within_coefficient_range(gain, "gain")
    return gain


class VulnerabilityCap(_Model):
    """A cap on the adversary's posterior g-vulnerability under the objective's prior P:
    V_g(K) = Σ_y max_w Σ_x G(w, x) P(x) K_x(y) ≤ at_most (Bayes vulnerability: G = identity; libqif's
    ``bayes_vuln`` / ``g_vuln`` mechanisms). Must be at least the prior vulnerability max_w Σ_x G(w, x) P(x),
    which every kernel's posterior vulnerability is (the constant kernel attains it)."""

    at_most: Rational
    """The cap b."""
    gain: Annotated[Union[Literal["bayes"], list[list[Rational]]], AfterValidator(_gain_matrix)] = "bayes"
    """bayes (one guess, gain 1 when right), or a W x N gain matrix G (guesses x secrets)."""


class ExpectedLoss(_Model):
    """Minimise Σ_x P(x) Σ_y K_x(y) L(x, y) under one prior, or its worst case over the prior set;
    optionally subject to a cap on the posterior vulnerability under that prior (``max_vulnerability``)."""

    kind: Literal["expected_loss"]
    loss: Union[NamedLoss, list[list[float]]] = "hamming"
    """hamming 1[x != y], absolute |x - y|, squared (x - y)^2 (x, y are indices), or an N x M matrix."""
    prior: Annotated[Union[Literal["uniform", "worst_case"], list[Rational]], AfterValidator(_prior_choice)] = "uniform"
    """The prior the loss is averaged under: a list of N masses, uniform, or worst_case over the prior set."""
    max_vulnerability: VulnerabilityCap | None = None
    """Also require V_g(K) ≤ at_most under the prior (not with worst_case)."""

    @field_validator("loss")
    @classmethod
    def _finite_loss(cls, loss):
        if isinstance(loss, list):
            if not loss or not loss[0]:
                raise ValueError("loss matrix is empty")
            widths = {len(row) for row in loss}
            if len(widths) != 1:
                raise ValueError(f"loss matrix rows have different lengths {sorted(widths)}")
            if any(not math.isfinite(v) for row in loss for v in row):
                raise ValueError("loss matrix entries must be finite")
            _within_coefficient_range(loss, "loss")
        return loss


class MinVulnerability(_Model):
    """Minimise the posterior g-vulnerability V_g(K) = Σ_y max_w Σ_x G(w, x) P(x) K_x(y) under a prior P,
    subject to expected loss Σ_x P(x) Σ_y K_x(y) L(x, y) ≤ max_loss (libqif's ``min_vuln_given_max_loss``)."""

    kind: Literal["min_vulnerability"]
    gain: Annotated[Union[Literal["bayes"], list[list[Rational]]], AfterValidator(_gain_matrix)] = "bayes"
    """bayes, or a W x N gain matrix G (guesses x secrets)."""
    prior: Annotated[Union[Literal["uniform"], list[Rational]], AfterValidator(_prior_choice)] = "uniform"
    """The prior P of X: a list of N masses summing to 1, or uniform."""
    loss: Union[NamedLoss, list[list[float]]] = "hamming"
    """The loss of the utility constraint, as in expected_loss."""
    max_loss: Rational
    """The largest expected loss allowed."""


class MutualInformation(_Model):
    """Maximise I(X;Y) = Σ_y μ(K(:,y)), μ(k) = Σ_x P(x) k_x log(k_x / P·k), under a prior P (nats).

    Convex and sublinear in each column: designed over the extreme rays of the PML cone
    (docs/explanation/mathematics.md, section 'Objectives'; Grosse et al.; envelopes paper, Theorem 4)."""

    kind: Literal["mutual_information"]
    prior: Annotated[Union[Literal["uniform"], list[Rational]], AfterValidator(_prior_choice)] = "uniform"
    """The prior P of X: a list of N masses summing to 1, or uniform."""


class AlphaF(_Model):
    """f_α(t) = 1 − t^α (α < 1), t log t (α = 1), t^α − 1 (α > 1) (f_α paper, eq. 3)."""

    alpha: float = Field(gt=0, le=100)
    """The order α > 0."""


class FDivergence(_Model):
    """Maximise D_f(K∘P0 ‖ K∘P1) = Σ_y (P1·k_y) f(P0·k_y / P1·k_y): the output laws of two priors
    (hypothesis testing; Dobrushin paper, Example 3). kl: t log t; tv: |t − 1|/2;
    hellinger: (√t − 1)² (squared Hellinger, Σ(√p − √q)²); chi2: (t − 1)²; {alpha: a}: f_α."""

    kind: Literal["f_divergence"]
    f: Union[Literal["kl", "tv", "hellinger", "chi2"], AlphaF] = "kl"
    """kl, tv, hellinger, chi2, or {alpha: a} for f_α."""
    priors: list[list[Rational]] = Field(min_length=2, max_length=2)
    """[P0, P1]: two distributions of N masses each; P1 must have full support where f(0)·P1 matters
    (kl, chi2 and f_α with α > 1 need P0 absolutely continuous w.r.t. P1)."""

    @field_validator("priors")
    @classmethod
    def _are_distributions(cls, priors):
        priors = [list(_distribution(p, f"priors[{i}]")) for i, p in enumerate(priors)]
        if len(priors[0]) != len(priors[1]):
            raise ValueError(f"priors[0] has {len(priors[0])} entries but priors[1] has {len(priors[1])}")
        return priors

    @model_validator(mode="after")
    def _finite(self) -> "FDivergence":
        unbounded = self.f in ("kl", "chi2") or (isinstance(self.f, AlphaF) and self.f.alpha >= 1)
        if unbounded and any(p0 > 0 and p1 == 0 for p0, p1 in zip(*self.priors)):
            raise ValueError(
                "priors[0] must be absolutely continuous w.r.t. priors[1] for this f (the divergence is infinite)"
            )
        return self


class BayesVulnerability(_Model):
    """Maximise the Bayes vulnerability V(K) = Σ_y max_x P(x) K_x(y) (one-guess success probability)."""

    kind: Literal["bayes_vulnerability"]
    prior: Annotated[Union[Literal["uniform"], list[Rational]], AfterValidator(_prior_choice)] = "uniform"
    """The prior P of X: a list of N masses summing to 1, or uniform."""


def _positive_prior(value):
    """A prior of the MLE's error: checked as a distribution, every mass > 0 (the Fisher information of a zero
    mass is infinite, and the asymptotic error is defined at interior priors only)."""
    value = _prior_choice(value)
    if isinstance(value, list) and any(v <= 0 for v in value):
        raise ValueError("every mass must be > 0 (the MLE's asymptotic error is defined for priors inside the simplex)")
    return value


class FrequencyEstimation(_Model):
    """Minimise U(K) = tr J(K,P)⁻¹ − ‖P‖²: n times the asymptotic mean squared error of the MLE of P from n
    reports (J = Σ_y K(:,y)K(:,y)ᵀ/(Pᵀ K(:,y)), the constrained Cramér–Rao bound; docs/explanation/frequency-estimation.md).
    Convex over the extreme rays of the PML cone (A-optimal design)."""

    kind: Literal["frequency_estimation"]
    prior: Annotated[Union[Literal["uniform"], list[Rational]], AfterValidator(_positive_prior)] = "uniform"
    """The distribution P of X to be estimated: a list of N masses (> 0) summing to 1, or uniform."""
    priors: Optional[list[Annotated[list[Rational], AfterValidator(_positive_prior)]]] = Field(
        default=None, min_length=1
    )
    """Several distributions: minimise the worst U over them (then ``prior`` is not used)."""

    @model_validator(mode="after")
    def _one_way(self) -> "FrequencyEstimation":
        if self.priors is not None and isinstance(self.prior, list):
            raise ValueError("give prior or priors, not both")
        return self


SUBLINEAR_KINDS = ("mutual_information", "f_divergence", "bayes_vulnerability")
"""Objectives maximised over the extreme rays of the PML cone (mechdesign.engines.sublinear)."""

Objective = Annotated[
    Union[
        Dobrushin,
        ExpectedLoss,
        MutualInformation,
        FDivergence,
        BayesVulnerability,
        MinVulnerability,
        FrequencyEstimation,
    ],
    Field(discriminator="kind"),
]


class SolverOptions(_Model):
    """How the LP is solved."""

    time_limit: float | None = Field(default=None, gt=0)
    """Wall-clock limit in seconds for the LP solver (None: no limit)."""
    method: Literal["auto", "simplex", "ipm", "exact"] = "auto"
    """HiGHS method. auto: interior point with crossover for large LPs, dual simplex for small ones.
    exact: a rational simplex (mechdesign.lp.exact) for small LPs (HiGHS otherwise); design() also
    falls back to it when a small problem's floating-point result is not certified optimal."""
    backend: Literal["highs", "cvxpy"] = "highs"
    """highs calls HiGHS directly on the compiled sparse LP; cvxpy builds the same LP in cvxpy and solves it with cvxpy's HiGHS interface."""
    presolve: bool = True
    verbose: bool = False
    engine: str | None = None
    """Force one engine of the design's route (``mechdesign solve SPEC --plan`` lists the route; the engines are
    described in docs/explanation/engines.md). A design whose forced engine does not apply is refused (exit 2)."""
    denominator_bits: int = Field(default=52, ge=1, le=52)
    """Emit the kernel on the grid 2^-k (every entry p/2^k, rows summing to exactly 1): k = 52 (default)
    is the finest grid of exact doubles; a small k gives a rational kernel with small denominators.
    Either way the kernel is repaired until it is exactly (eps, P)-PML; certificate.rounding_cost
    reports the utility this cost (with k < 52, status optimal refers to the LP solution)."""


def _vulnerability_errors(obj, n: int, output_size) -> list[tuple[str, str]]:
    """Shapes of the gain matrix and loss, and the cap at least the prior vulnerability (exactly)."""
    errors = []
    cap = obj.max_vulnerability if isinstance(obj, ExpectedLoss) else obj
    if cap is None:
        return errors
    where = "objective.max_vulnerability" if isinstance(obj, ExpectedLoss) else "objective"
    if obj.prior == "worst_case":
        return [(f"{where}", "a vulnerability cap needs one prior (a list of N masses or uniform), not worst_case")]
    if isinstance(cap.gain, list) and len(cap.gain[0]) != n:
        return [(f"{where}.gain", f"must have N = {n} columns (one per secret), found {len(cap.gain[0])}")]
    if isinstance(obj, MinVulnerability):
        if isinstance(obj.prior, list) and len(obj.prior) != n:
            return [("objective.prior", f"must have N = {n} entries, found {len(obj.prior)}")]
        if isinstance(obj.loss, list):
            if len(obj.loss) != n:
                errors.append(("objective.loss", f"must have N = {n} rows, found {len(obj.loss)}"))
            if output_size != "auto" and len(obj.loss[0]) != output_size:
                errors.append(
                    ("objective.loss", f"must have M = output_size = {output_size} columns, found {len(obj.loss[0])}")
                )
        if obj.max_loss < 0:
            errors.append(("objective.max_loss", f"must be >= 0, found {shown_number(obj.max_loss)}"))
        return errors
    if isinstance(obj.prior, list) and len(obj.prior) != n:
        return errors  # reported with the objective's prior
    prior = [Fraction(1, n)] * n if obj.prior == "uniform" else list(obj.prior)
    gain = [[Fraction(int(w == x)) for x in range(n)] for w in range(n)] if cap.gain == "bayes" else cap.gain
    v0 = max(sum((g * p for g, p in zip(row, prior)), Fraction(0)) for row in gain)
    if cap.at_most < v0:
        errors.append(
            (
                f"{where}.at_most",
                f"must be >= the prior vulnerability max_w sum_x G(w,x) P(x) = "
                f"{shown_number(v0)} (no kernel has less), found {shown_number(cap.at_most)}",
            )
        )
    return errors


def _length_error(field: str, values, n: int) -> list[tuple[str, str]]:
    """The error for a list of masses that does not have N entries, else none."""
    return [] if len(values) == n else [(field, f"must have N = {n} entries, found {len(values)}")]


def _prior_set_shape_errors(ps, n: int) -> list[tuple[str, str]]:
    """The prior set's lists have N entries, and a min-mass bound c is at most 1/N."""
    errors = []
    if isinstance(ps, MinMass) and ps.c * n > 1:
        errors.append(("prior_set.c", f"must be <= 1/N = 1/{n}, found {shown_number(ps.c)}"))
    if isinstance(ps, Point):
        errors += _length_error("prior_set.prior", ps.prior, n)
    if isinstance(ps, Hull):
        for i, p in enumerate(ps.priors):
            errors += _length_error(f"prior_set.priors[{i}]", p, n)
    if isinstance(ps, Box):
        errors += _length_error("prior_set.lower", ps.lower, n)
    if isinstance(ps, L1Ball):
        errors += _length_error("prior_set.center", ps.center, n)
    return errors


def _expected_loss_shape_errors(obj, n: int, output_size) -> list[tuple[str, str]]:
    """An expected_loss objective's loss matrix is N x M and its prior has N entries."""
    errors = []
    if isinstance(obj.loss, list):
        rows, cols = len(obj.loss), len(obj.loss[0])
        if rows != n:
            errors.append(("objective.loss", f"must have N = {n} rows, found {rows}"))
        if output_size != "auto" and cols != output_size:
            errors.append(("objective.loss", f"must have M = output_size = {output_size} columns, found {cols}"))
    if isinstance(obj.prior, list):
        errors += _length_error("objective.prior", obj.prior, n)
    return errors


def _objective_shape_errors(obj, n: int, output_size, m: int) -> list[tuple[str, str]]:
    """The objective's matrices and priors fit N (and M), in the order the objective kinds are listed."""
    errors = []
    if isinstance(obj, ExpectedLoss):
        errors += _expected_loss_shape_errors(obj, n, output_size)
    if isinstance(obj, (ExpectedLoss, MinVulnerability)):
        errors += _vulnerability_errors(obj, n, output_size)
    if isinstance(obj, (MutualInformation, BayesVulnerability, FrequencyEstimation)) and isinstance(obj.prior, list):
        errors += _length_error("objective.prior", obj.prior, n)
    if isinstance(obj, FrequencyEstimation):
        for i, p in enumerate(obj.priors or []):
            errors += _length_error(f"objective.priors[{i}]", p, n)
    if isinstance(obj, FDivergence):
        for i, p in enumerate(obj.priors):
            errors += _length_error(f"objective.priors[{i}]", p, n)
    if isinstance(obj, Dobrushin) and m < 2:
        errors.append(("output_size", f"must be >= 2 for the dobrushin objective, found {m}"))
    return errors


def _kernel_size_errors(n: int, m: int) -> list[tuple[str, str]]:
    """M and N*M within the limits MAX_M and MAX_NM."""
    if m > MAX_M:
        return [("output_size", f"M must be <= {MAX_M}, found {m}")]
    if n * m > MAX_NM:
        return [("output_size", f"N*M must be <= {MAX_NM}, found {n}*{m} = {n * m}")]
    return []


# ----------------------------------------------------- privacy constraints
# The privacy guarantee as a list of constraints.
#
# A spec may state its guarantee as ``privacy:``, a list of constraints that must all hold::
#
#     privacy:
#       - {epsilon: 1.0, prior_set: {kind: min_mass, c: 0.02}}   # (ε,𝒫)-PML
#       - {epsilon: 3.0, prior_set: {kind: simplex}}             # ε-LDP as a backstop
#       - {epsilon: 0.5, metric: {kind: absolute}}               # ε·d-privacy, d(x,x') = |x − x'|
#
# The single ``epsilon`` + ``prior_set`` form is shorthand for a list of one (ε,𝒫)-PML entry.
#
# A metric constraint is *not* a prior set: metric (d-)privacy (Chatzikokolakis et al., "Broadening the scope
# of differential privacy using metrics", 2013) asks K_x(y) ≤ e^{ε d(x,x')} K_{x'}(y) for every x, x', y, which
# is not a sup over priors of PML. It is modelled as its own constraint kind, compiled and checked by
# :mod:`mechdesign.privacy.metric`.
#
# Distances are exact: ``absolute`` is |x − x'| on symbol indices, ``discrete`` is 1[x ≠ x'] (ε-LDP), ``matrix``
# an N × N matrix of exact rationals (``0.1`` means 1/10), and ``grid`` the Euclidean distance between the
# points of a rows × cols grid with the given spacing (symbol i is the point (i // cols, i mod cols)):
# spacing·√(Δr² + Δc²), irrational in general, so every use of it in a certificate goes through the rigorous
# interval bounds of :mod:`mechdesign.spec.expr`.
#


class AbsoluteMetric(_Model):
    """d(x, x') = |x − x'| on symbol indices (a path graph with unit edges)."""

    kind: Literal["absolute"]


class DiscreteMetric(_Model):
    """d(x, x') = 1 for x ≠ x': metric privacy with this d is ε-LDP."""

    kind: Literal["discrete"]


class MatrixMetric(_Model):
    """d given as an N × N matrix of exact rationals: d(x, x) = 0, d(x, x') ≥ 0 (symmetry is not required:
    the constraint K_x(y) ≤ e^{ε d(x,x')} K_{x'}(y) is read with the ordered pair)."""

    kind: Literal["matrix"]
    d: list[list[Rational]] = Field(min_length=2)

    @field_validator("d")
    @classmethod
    def _square_zero_diagonal(cls, d: list[list[Fraction]]) -> list[list[Fraction]]:
        n = len(d)
        for i, row in enumerate(d):
            if len(row) != n:
                raise ValueError(f"must be square: row {i} has {len(row)} entries, expected {n}")
            if row[i] != 0:
                raise ValueError(f"d[{i}][{i}] must be 0, found {shown_number(row[i])}")
            for j, v in enumerate(row):
                if v < 0:
                    raise ValueError(f"d[{i}][{j}] must be >= 0, found {shown_number(v)}")
        return d


class GridMetric(_Model):
    """Euclidean distance between points of a rows × cols grid (geo-indistinguishability):
    symbol i is the point (i // cols, i mod cols) · spacing."""

    kind: Literal["grid"]
    shape: tuple[Annotated[int, Field(ge=1)], Annotated[int, Field(ge=1)]]
    """[rows, cols]; rows · cols must equal N."""
    spacing: Rational = Fraction(1)
    """The distance between neighbouring grid points (> 0)."""

    @field_validator("spacing")
    @classmethod
    def _positive(cls, s: Fraction) -> Fraction:
        if s <= 0:
            raise ValueError(f"must be > 0, found {shown_number(s)}")
        return s


Metric = Annotated[Union[AbsoluteMetric, DiscreteMetric, MatrixMetric, GridMetric], Field(discriminator="kind")]


class PriorSetGuarantee(_Model):
    """(ε,𝒫)-PML: sup_{P∈𝒫} max_y ℓ(X→y) ≤ ε."""

    epsilon: EpsilonField
    prior_set: PriorSet


class MetricGuarantee(_Model):
    """ε·d-privacy: K_x(y) ≤ e^{ε d(x,x')} K_{x'}(y) for all x, x', y."""

    epsilon: EpsilonField
    metric: Metric


def _guarantee_tag(value: Any) -> str:
    if isinstance(value, dict):
        return "metric_guarantee" if "metric" in value else "prior_set_guarantee"
    return "metric_guarantee" if isinstance(value, MetricGuarantee) else "prior_set_guarantee"


Guarantee = Annotated[
    Union[
        Annotated[PriorSetGuarantee, Tag("prior_set_guarantee")], Annotated[MetricGuarantee, Tag("metric_guarantee")]
    ],
    Discriminator(_guarantee_tag),
]


def metric_diameter_text(metric, n: int) -> str:
    """max_{x,x'} d(x, x') as an exact expression (a rational, or spacing·sqrt(k) for a grid)."""
    if isinstance(metric, AbsoluteMetric):
        return str(n - 1)
    if isinstance(metric, DiscreteMetric):
        return "1"
    if isinstance(metric, MatrixMetric):
        return rational_expression_text(max(max(row) for row in metric.d))
    rows, cols = metric.shape
    return f"({rational_expression_text(metric.spacing)})*sqrt({(rows - 1) ** 2 + (cols - 1) ** 2})"


def rational_expression_text(q: Fraction) -> str:
    """q exactly, in the expression language, with trailing zeros as exponents (10^400 is ``1e400``, not 401
    digits: an expression is at most 200 characters)."""

    def digits(k: int) -> str:
        text = str(k)
        stripped = text.rstrip("0")
        return f"{stripped}e{len(text) - len(stripped)}" if len(text) - len(stripped) > 3 else text

    q = Fraction(q)
    return digits(q.numerator) if q.denominator == 1 else f"{digits(q.numerator)}/{digits(q.denominator)}"


# ------------------------------------------------- ε chosen from a requirement
# ``epsilon: {protect: {...}}`` instead of a number: the largest ε for which the disclosure paper's theorems
# guarantee the requirement for every prior of the prior set (the same three requirements as
# ``mechdesign epsilon``'s flags, one meaning each). The spec only checks the form; the value needs the
# prior set's extreme masses and is resolved above this layer, at the start of design()
# (:mod:`mechdesign.theory.epsilon_requirement`), to an exact decimal that the rest of the pipeline treats
# like a number the user wrote.


class ProtectRequirement(_Model):
    """What the chosen ε must guarantee, for every prior of the prior set (disclosure paper, §3.3)."""

    min_entropy: EpsilonField | None = None
    """h in nats (>= 0, a number or an expression): no attribute U of X with H∞(P_U) > h is disclosed, to any
    adversary (Theorem 4; ``--protect-min-entropy h``)."""
    no_disclosure: bool = False
    """true: no attribute of X at all is disclosed (Proposition 7 + Theorem 6; ``--no-disclosure``)."""
    no_singling_out: bool = False
    """true: the value of X is never singled out (Corollary 8; ``--no-singling-out``)."""

    @model_validator(mode="after")
    def _at_least_one(self) -> "ProtectRequirement":
        if self.min_entropy is None and not self.no_disclosure and not self.no_singling_out:
            raise ValueError(
                "give at least one requirement: min_entropy: H (nats), no_disclosure: true or no_singling_out: true"
            )
        return self

    def as_written(self) -> dict:
        """The requirement with only the keys that ask for something (min_entropy as its text)."""
        out: dict = {}
        if self.min_entropy is not None:
            out["min_entropy"] = self.min_entropy.text
        if self.no_disclosure:
            out["no_disclosure"] = True
        if self.no_singling_out:
            out["no_singling_out"] = True
        return out


class AccuracyRequirement(_Model):
    """The accuracy the analyst needs from n reports, for ε chosen by accuracy: the MLE's asymptotic root mean
    squared error sqrt(U/n) ≤ ``rmse``, or its largest per-symbol standard deviation ≤ ``max_sd``
    (``frequency_estimation`` objective; docs/explanation/frequency-estimation.md)."""

    n: int = Field(ge=1)
    """The number of reports."""
    rmse: Optional[float] = Field(default=None, gt=0)
    """Target for sqrt(E‖p̂ − P‖²) (asymptotic, the MLE)."""
    max_sd: Optional[float] = Field(default=None, gt=0)
    """Target for max_x sd(p̂_x) (asymptotic, the MLE)."""
    width: float = Field(default=1e-6, gt=0)
    """Largest width of the certified bracket [ε_lo, ε_hi] (nats)."""

    @model_validator(mode="after")
    def _one_target(self) -> "AccuracyRequirement":
        if (self.rmse is None) == (self.max_sd is None):
            raise ValueError("give exactly one target: rmse: R or max_sd: S")
        return self


class EpsilonRequirement(_Model):
    """ε chosen from a requirement: ``epsilon: {protect: {min_entropy: 2.0}}`` (the largest ε that guarantees it;
    several requirements: the smallest of their ε; :func:`mechdesign.theory.epsilon_requirement.resolve_spec`), or
    ``epsilon: {accuracy: {rmse: 0.01, n: 100000}}`` (the smallest ε whose optimal frequency-estimation design
    meets the accuracy; :mod:`mechdesign.engines.accuracy_epsilon`)."""

    protect: Optional[ProtectRequirement] = None
    accuracy: Optional[AccuracyRequirement] = None

    @model_validator(mode="after")
    def _one_kind(self) -> "EpsilonRequirement":
        if (self.protect is None) == (self.accuracy is None):
            raise ValueError("give exactly one of protect: {...} or accuracy: {...}")
        return self


def _epsilon_tag(value: Any) -> str:
    return "epsilon_requirement" if isinstance(value, (dict, EpsilonRequirement)) else "epsilon_number"


EpsilonOrRequirement = Annotated[
    Union[Annotated[EpsilonField, Tag("epsilon_number")], Annotated[EpsilonRequirement, Tag("epsilon_requirement")]],
    Discriminator(_epsilon_tag),
]


# ------------------------------------------------------------------------ spec
class Spec(_Model):
    """A mechanism-design problem (docs/explanation/mathematics.md, section 'Contract')."""

    alphabet: Union[Annotated[int, Field(ge=2)], list[Union[str, int]]]
    """N >= 2 secret symbols, or a list of N >= 2 distinct labels."""
    epsilon: EpsilonOrRequirement | None = None
    """Privacy level in nats (>= 0): a number or an expression such as log(10/3), or a requirement
    ``{protect: {min_entropy: H | no_disclosure: true | no_singling_out: true}}`` from which design()
    chooses the largest ε the disclosure paper guarantees it for. With ``privacy``: the ε of its first
    prior-set entry (or, with metric entries only, the ε·max d-LDP they imply)."""
    prior_set: Optional[Annotated[PriorSet, BeforeValidator(expand_prior_set_shorthand)]] = None
    """The set of priors the (ε, 𝒫)-PML guarantee holds for: a mapping, or the shorthand ``simplex``,
    ``min_mass:0.05``, ``point:0.2,0.3,0.5`` (with ``privacy``: its first prior-set entry)."""
    privacy: list[Guarantee] | None = None
    """Several constraints that must all hold, instead of epsilon + prior_set (spec/models.py, "privacy constraints")."""
    objective: Objective
    """The utility to optimise."""
    output_size: Union[Annotated[int, Field(ge=1)], Literal["auto"]] = "auto"
    """M output symbols, or auto (2 for dobrushin, N or the loss matrix width for expected_loss)."""
    solver: SolverOptions = SolverOptions()
    """Solver options."""

    @field_validator("alphabet", mode="before")
    @classmethod
    def _no_booleans(cls, alphabet):
        # YAML reads unquoted yes/no/true/false as booleans; taking them as 1/0 would silently
        # rename the labels, so they must be quoted
        if isinstance(alphabet, bool) or (isinstance(alphabet, list) and any(isinstance(a, bool) for a in alphabet)):
            raise ValueError(
                "labels must be strings or integers, found a boolean "
                "(YAML reads yes/no/true/false as booleans: quote them, e.g. ['no', 'yes'])"
            )
        return alphabet

    @field_validator("alphabet")
    @classmethod
    def _labels(cls, alphabet):
        if isinstance(alphabet, list):
            if len(alphabet) < 2:
                raise ValueError(f"needs at least 2 labels, found {len(alphabet)}")
            spaced = next((a for a in alphabet if isinstance(a, str) and a != a.strip()), None)
            if spaced is not None:
                raise ValueError(
                    f"label {spaced!r} has white space at an end; labels are matched exactly as written "
                    "(in data and counts files too), so remove the spaces"
                )
            if len(set(map(str, alphabet))) != len(alphabet):
                raise ValueError("labels must be distinct")
            if len(alphabet) > MAX_N:
                raise ValueError(f"at most N = {MAX_N} labels, found {len(alphabet)}")
        elif alphabet > MAX_N:
            raise ValueError(f"N must be <= {MAX_N}, found {alphabet}")
        return alphabet

    @field_validator("output_size")
    @classmethod
    def _m_limit(cls, m):
        if m != "auto" and m > MAX_M:
            raise ValueError(f"M must be <= {MAX_M}, found {m}")
        return m

    @property
    def n(self) -> int:
        """N, the number of secret symbols."""
        return self.alphabet if isinstance(self.alphabet, int) else len(self.alphabet)

    @property
    def labels(self) -> list[str]:
        return [str(a) for a in self.alphabet] if isinstance(self.alphabet, list) else [str(i) for i in range(self.n)]

    @property
    def m(self) -> int:
        """M, the number of outputs (output_size with auto resolved)."""
        if self.output_size != "auto":
            return self.output_size
        if isinstance(self.objective, (ExpectedLoss, MinVulnerability)):
            return len(self.objective.loss[0]) if isinstance(self.objective.loss, list) else self.n
        if self.objective.kind == "frequency_estimation":  # the design sets M; auto is checked against N*M <= MAX_NM
            return max(1, min(self.n, MAX_NM // self.n))
        if self.objective.kind in SUBLINEAR_KINDS:
            return self.n  # a basic solution of the extreme-ray LP uses at most N rays
        return 2

    @model_validator(mode="after")
    def _privacy_list(self) -> "Spec":
        """Resolve ``privacy`` into the primary (ε,𝒫)-PML constraint plus :attr:`extra_guarantees`."""
        if self.privacy is None:
            missing = [
                (k, "required key is missing (or give privacy: a list of constraints)")
                for k in ("epsilon", "prior_set")
                if getattr(self, k) is None
            ]
            if missing:
                raise SpecError(missing)
            return self
        if self.epsilon is not None or self.prior_set is not None:
            raise SpecError(
                [("privacy", "give either privacy (a list of constraints) or epsilon and prior_set, not both")]
            )
        if not self.privacy:
            raise SpecError([("privacy", "must list at least one constraint, found an empty list")])
        primary = next((g for g in self.privacy if isinstance(g, PriorSetGuarantee)), None)
        if primary is not None:
            eps, prior_set = primary.epsilon, primary.prior_set
        else:  # metric only: d-privacy implies (ε·max d)-LDP, stated as a redundant primary constraint
            g = self.privacy[0]
            try:
                eps = _to_epsilon(f"({g.epsilon.text})*({metric_diameter_text(g.metric, self.n)})")
            except ValueError as exc:
                raise SpecError([("privacy[0]", f"the LDP level it implies, epsilon * max d: {exc}")]) from None
            prior_set = Simplex(kind="simplex")
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "prior_set", prior_set)
        return self

    @property
    def epsilon_requirement(self) -> "EpsilonRequirement | None":
        """The requirement when ``epsilon`` was given as ``{protect: ...}`` (not yet resolved to a number)."""
        return self.epsilon if isinstance(self.epsilon, EpsilonRequirement) else None

    @property
    def extra_guarantees(self) -> list:
        """The constraints of ``privacy`` other than the primary (ε, prior_set) one, each compiled and checked
        by its own module (privacy/constraints.py); empty for the epsilon + prior_set form."""
        if self.privacy is None:
            return []
        primary = next((g for g in self.privacy if isinstance(g, PriorSetGuarantee)), None)
        return [g for g in self.privacy if g is not primary]

    @property
    def primary_is_implied(self) -> bool:
        """True when ``privacy`` lists metric constraints only: epsilon + prior_set are then the (ε·max d)-LDP
        that the first metric constraint implies (K_x(y) ≤ e^{ε d(x,x')} K_x'(y) ≤ e^{ε max d} K_x'(y)), so the
        kernel LP needs no rows for it; the certificate still checks it exactly."""
        return self.privacy is not None and not any(isinstance(g, PriorSetGuarantee) for g in self.privacy)

    @model_validator(mode="after")
    def _guarantees_match(self) -> "Spec":
        """Each entry of ``privacy`` fits N, and the objective can take extra constraints."""
        if self.privacy is None:
            return self
        n, errors = self.n, []
        for i, g in enumerate(self.privacy):
            if isinstance(g, MetricGuarantee):
                if isinstance(g.metric, MatrixMetric) and len(g.metric.d) != n:
                    errors.append(
                        (f"privacy[{i}].metric.d", f"must be N x N = {n} x {n}, found {len(g.metric.d)} rows")
                    )
                if isinstance(g.metric, GridMetric) and g.metric.shape[0] * g.metric.shape[1] != n:
                    errors.append(
                        (
                            f"privacy[{i}].metric.shape",
                            f"rows * cols must equal N = {n}, found {g.metric.shape[0]} * {g.metric.shape[1]}",
                        )
                    )
            else:
                try:  # the prior-set rules of the shorthand form, on a copy with this entry as the prior set
                    Spec._shapes_match(self.model_copy(update={"prior_set": g.prior_set}))
                except SpecError as exc:
                    errors += [(f"privacy[{i}].{f}" if f.startswith("prior_set") else f, r) for f, r in exc.pairs]
        if self.extra_guarantees and self.objective.kind in SUBLINEAR_KINDS:
            errors.append(
                (
                    "privacy",
                    f"objective {self.objective.kind} is designed over the extreme rays of one "
                    "prior set's cone; several constraints or a metric constraint are supported "
                    "with expected_loss, dobrushin and min_vulnerability",
                )
            )
        if errors:
            raise SpecError.from_pairs(errors)
        return self

    @model_validator(mode="after")
    def _shapes_match(self) -> "Spec":
        """The prior set's and the objective's lists fit N (and M), and N x M is within the limits."""
        errors = (
            _prior_set_shape_errors(self.prior_set, self.n)
            + _objective_shape_errors(self.objective, self.n, self.output_size, self.m)
            + _kernel_size_errors(self.n, self.m)
        )
        if errors:
            raise SpecError.from_pairs(errors)
        return self

    def to_dict(self) -> dict:
        """The spec as plain data (exact fractions as 'p/q' strings)."""
        if self.privacy is not None:  # epsilon and prior_set were derived from privacy
            return self.model_dump(mode="json", exclude={"epsilon", "prior_set"})
        return self.model_dump(mode="json")


# --------------------------------------------------------------------- loading
def _format_location(loc: tuple) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        elif item in {
            "min_mass",
            "simplex",
            "point",
            "hull",
            "box",
            "l1_ball",
            "dobrushin",
            "expected_loss",
            "mutual_information",
            "f_divergence",
            "bayes_vulnerability",
            "AlphaF",
            "int",
            "prior_set_guarantee",
            "metric_guarantee",
            "epsilon_number",
            "epsilon_requirement",
            "absolute",
            "discrete",
            "matrix",
            "grid",
            "list[union[str,int]]",
            "constrained-int",
            "literal['auto']",
            "function-after[_labels(), union[constrained-int,list[union[str,int]]]]",
        }:
            continue  # union / discriminator branch names are noise for a user
        elif str(item).startswith(("function-", "list[", "literal[", "constrained-", "union[")):
            continue
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts) or "spec"


def _did_you_mean(found, candidates) -> str:
    """ "; did you mean 'x'?" for a near miss (difflib), else ""."""
    import difflib

    close = difflib.get_close_matches(str(found), list(candidates), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _spec_models():
    """Spec and every model it nests, each once."""
    todo, seen = [Spec], set()
    while todo:
        model = todo.pop()
        if model in seen:
            continue
        seen.add(model)
        yield model
        for info in model.model_fields.values():
            todo.extend(t for t in _models_in(info.annotation) if t not in seen)


def _all_field_names() -> set[str]:
    """Every key a spec may contain, at any depth (the fields of Spec and of every model it nests)."""
    return {info.alias or name for model in _spec_models() for name, info in model.model_fields.items()}


def _owners_of(key) -> list[str]:
    """The models of the spec that have the field ``key``, by their ``kind`` when they have one."""
    owners: list[str] = []
    for model in _spec_models():
        fields = model.model_fields
        if any((info.alias or name) == key for name, info in fields.items()):
            kind = fields.get("kind")
            tags = getattr(kind.annotation, "__args__", ()) if kind is not None else ()
            owners.append(f"{tags[0]} {_model_role(model)}" if tags else _model_role(model))
    return sorted(set(owners))


def _model_role(model) -> str:
    """How a message names a model: by the union of the spec it belongs to ('objective', 'prior_set', 'metric')."""
    if model is Spec:
        return "the spec's top level"
    for union, role in ((Objective, "objective"), (PriorSet, "prior_set"), (Metric, "metric")):
        if model in _models_in(union):
            return role
    return model.__name__


def _models_in(annotation) -> list:
    from typing import get_args

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for a in get_args(annotation) for m in _models_in(a)]


def _rule(err: dict) -> str:
    msg = err["msg"]
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            msg = msg[len(prefix) :]
    msg = re.sub(r" or instance of [A-Z]\w*", "", msg)  # pydantic's class names mean nothing in a YAML spec
    if err["type"] == "extra_forbidden":
        key = err["loc"][-1]
        owners = _owners_of(key)
        if owners:  # a key of another part of the spec: "did you mean 'max_loss'?" for max_loss would puzzle
            where = f"of the {', '.join(owners)}" if len(owners) <= 3 else "of other parts of the spec"
            return f"unknown key here ({key!r} is a key {where} only)"
        return "unknown key (not part of the spec)" + _did_you_mean(key, _all_field_names())
    if err["type"] == "missing":
        return "required key is missing"
    if err["type"] == "union_tag_invalid":
        expected = (err.get("ctx") or {}).get("expected_tags", "")
        found = err["input"].get("kind") if isinstance(err.get("input"), dict) else err.get("input")
        tags = [t.strip(" '") for t in str(expected).split(",")]
        return f"unknown kind {found!r} (expected one of {expected})" + _did_you_mean(found, tags)
    if err["type"] == "union_tag_not_found":
        return "needs a 'kind' key"
    found = err.get("input")
    if err["type"] not in {"value_error"} and found is not None and not isinstance(found, (dict, list)):
        msg = f"{msg}, found {found!r}"
    return msg


def spec_from_dict(data: Any) -> Spec:
    """Build and validate a :class:`Spec`; raise :class:`SpecError` naming each bad field."""
    if isinstance(data, Spec):
        return data
    try:
        data = plain_python(data)
    except SpecInputError as exc:
        raise SpecError([(exc.field, exc.rule)]) from None
    if not isinstance(data, dict):
        raise SpecError([("spec", f"must be a mapping of keys to values, found {type(data).__name__}")])
    try:
        return Spec.model_validate(data)
    except SpecError:
        raise
    except ValidationError as exc:
        pairs = []
        seen = set()
        for err in exc.errors(include_url=False):
            ctx = err.get("ctx") or {}
            inner = ctx.get("error")
            if isinstance(inner, SpecError):
                pairs.extend(inner.pairs)
                continue
            loc = _format_location(err["loc"])
            rule = _rule(err)
            # a union of alternatives reports one error per branch; keep one per field
            if loc in seen and loc in {"alphabet", "output_size", "objective.loss", "objective.prior", "objective.f"}:
                continue
            seen.add(loc)
            pairs.append((loc, rule))
        raise SpecError(pairs) from None


def load_spec(source: Any) -> Spec:
    """Load a spec from a :class:`Spec`, a dict, a YAML file path, or YAML text."""
    if isinstance(source, (Spec, dict)):
        return spec_from_dict(source)
    if isinstance(source, Path) or (
        isinstance(source, str) and "\n" not in source and source.endswith((".yaml", ".yml"))
    ):
        try:
            text = read_spec_file(Path(source))  # refused by size before it is read
        except SpecInputError as exc:
            raise SpecError([(exc.field, exc.rule)]) from None
    elif isinstance(source, str):
        text = source
    else:
        raise SpecError([("spec", f"expected a dict, a YAML path or YAML text, found {type(source).__name__}")])
    try:
        data = load_yaml_text(text)  # exact decimals, plain types, no duplicate keys, depth limit
    except SpecInputError as exc:
        raise SpecError([(exc.field, exc.rule)]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SpecError([("spec", f"malformed YAML{where}: {problem}")]) from None
    return spec_from_dict(data)
