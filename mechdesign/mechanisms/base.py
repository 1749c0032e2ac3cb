"""The common interface of structured mechanisms: privatize, estimate, accuracy before release,
certificate, save/load, without ever forming the N × M kernel.

A structured mechanism is a frequency oracle in the sense of Wang, Blocki, Li and Jha, *Locally
Differentially Private Protocols for Frequency Estimation* (USENIX Security 2017): each report y
*supports* a set of symbols, with

    p* = P(y supports x | X = x),   q* = P(y supports x | X = x') for every x' ≠ x.

The support counts C_x = #{reports supporting x} are sufficient for the unbiased estimator

    f̂_x = (C_x / n − q*) / (p* − q*)

(Wang et al., Theorem 2), whose variance for n reports drawn i.i.d. from P is

    Var f̂_x = π_x (1 − π_x) / (n (p* − q*)²),   π_x = q* + P(x) (p* − q*)

(C_x is Binomial(n, π_x)); for a fixed population with frequencies f it is
(q*(1 − q*) + f_x (p* − q*)(1 − p* − q*)) / (n (p* − q*)²), Wang et al.'s eq. (2). Standard errors use
the plug-in π̂_x = C_x / n; intervals are Wilson's score interval for π_x mapped through the affine map
π ↦ (π − q*)/(p* − q*) (asymptotically f̂_x ± z se_x, and never of width 0 when C_x is 0 or n), clipped to
[0, 1], which keeps every interval that covered P(x) covering it. ``method="projected"`` maps f̂ onto the simplex (Euclidean
projection, Held–Wolfe–Crowder 1974 / Duchi et al. 2008); ``method="mle"`` is the maximum-likelihood
estimate: on the counts where the likelihood depends on them only (k-RR:
:meth:`RandomizedResponse.mle_from_counts`), and on the reports themselves for subset selection, unary encoding,
Hadamard response and local hashing with a seed pool, with asymptotic or parametric-bootstrap intervals
(:mod:`mechdesign.mechanisms.support_likelihood`).
"""

from __future__ import annotations

import json
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, ClassVar, Sequence

import numpy as np

from mechdesign.certify.exact import ExactKernel
from mechdesign.mechanisms.two_level import RATIO_CAP, TwoLevelCertificate, certify_two_level
from mechdesign.spec.errors import InputError

__all__ = ["StructuredMechanism", "Reports", "FrequencyEstimate", "project_to_simplex", "ESTIMATE_METHODS"]

ESTIMATE_METHODS = ("unbiased", "projected", "mle")


@dataclass(frozen=True)
class Reports:
    """n released reports of one family, as arrays.

    * ``values`` (n,) int64: the output index (k-RR: a symbol; Hadamard response: a column of the
      Hadamard matrix; local hashing: the hash value);
    * ``seeds`` (n,) int64: local hashing's hash seed of each report;
    * ``offsets`` (n + 1,) and ``positions``: set-valued reports (subset selection, unary encoding):
      report i is the sorted symbols ``positions[offsets[i]:offsets[i + 1]]``.
    """

    n: int
    values: np.ndarray | None = None
    seeds: np.ndarray | None = None
    offsets: np.ndarray | None = None
    positions: np.ndarray | None = None

    def __len__(self) -> int:
        return self.n

    def sets(self) -> list[list[int]]:
        """Set-valued reports as lists (small n; for tests and display)."""
        o, p = self.offsets, self.positions
        return [p[o[i] : o[i + 1]].tolist() for i in range(self.n)]


@dataclass(frozen=True)
class FrequencyEstimate:
    """An estimate of P_X with standard errors and intervals (same fields as the explicit decoder's result)."""

    method: str
    labels: tuple[str, ...]
    estimate: np.ndarray
    standard_error: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    confidence: float
    n: int
    uncertainty: str
    simultaneous: bool = False
    diagnostics: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame(
            {
                "label": list(self.labels),
                "estimate": self.estimate,
                "standard_error": self.standard_error,
                "lower": self.lower,
                "upper": self.upper,
            }
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "n": self.n,
            "confidence": self.confidence,
            "simultaneous": self.simultaneous,
            "uncertainty": self.uncertainty,
            "labels": list(self.labels),
            "estimate": self.estimate.tolist(),
            "standard_error": self.standard_error.tolist(),
            "lower": self.lower.tolist(),
            "upper": self.upper.tolist(),
            "diagnostics": self.diagnostics,
            "warnings": list(self.warnings),
        }


def project_to_simplex(v) -> np.ndarray:
    """Euclidean projection of a vector onto {p ≥ 0, Σ p = 1}: p = max(v − τ, 0), τ by sorting
    (Held, Wolfe, Crowder 1974; Duchi et al. 2008)."""
    v = np.asarray(v, dtype=float)
    u = -np.sort(-v)
    css = np.cumsum(u) - 1.0
    k = np.arange(1, v.size + 1)
    rho = np.flatnonzero(u - css / k > 0)[-1]
    return np.maximum(v - css[rho] / (rho + 1), 0.0)


class StructuredMechanism(ABC):
    """A frequency oracle with two-level columns, sampled exactly and decoded on support counts.

    Subclasses set ``family`` and implement :meth:`sample_indices`, :meth:`support_counts`,
    :meth:`support_probabilities`, :meth:`components`, :meth:`explicit_columns`,
    :meth:`format_reports`, :meth:`parse_reports` and :meth:`parameters`."""

    family: ClassVar[str]

    def __init__(self, labels: Sequence, epsilon, prior_set=None):
        from mechdesign.mechanisms.privacy_input import epsilon_and_bound, min_mass_of

        self.labels = tuple(str(v) for v in labels)
        if len(self.labels) < 2:
            raise InputError(f"alphabet: needs at least 2 symbols, found {len(self.labels)}")
        if len(set(self.labels)) != len(self.labels):
            twice = next(v for i, v in enumerate(self.labels) if v in self.labels[:i])
            raise InputError(f"alphabet: labels must be distinct, found {twice!r} twice")
        self._index = {lab: i for i, lab in enumerate(self.labels)}
        self.epsilon, self.bound = epsilon_and_bound(epsilon, RATIO_CAP)
        self.c = min_mass_of(prior_set, len(self.labels))

    # ------------------------------------------------------------ family hooks
    @abstractmethod
    def parameters(self) -> dict[str, Any]:
        """The family's parameters as JSON values (enough to rebuild it with :func:`load`)."""

    @abstractmethod
    def components(self) -> list[tuple[Fraction, int]]:
        """(R, q_min) per component: the high/low ratio and the fewest high entries of a non-constant column."""

    @abstractmethod
    def support_probabilities(self) -> tuple[Fraction, Fraction]:
        """(p*, q*) exactly (module docstring)."""

    @abstractmethod
    def sample_indices(self, indices: np.ndarray, rng) -> Reports:
        """One report per input index, drawn exactly (``rng`` resolved by :func:`resolve_rng`)."""

    @abstractmethod
    def support_counts(self, reports: Reports) -> np.ndarray:
        """C_x = number of reports supporting x, for every symbol x (int64, length N)."""

    @abstractmethod
    def explicit_columns(self) -> tuple[list[list[Fraction]], list[str]]:
        """The kernel as columns (each a list of N Fractions) and output labels: small N only."""

    @abstractmethod
    def format_reports(self, reports: Reports) -> list[str]:
        """Each report as the text of one CSV cell (the documented report format)."""

    @abstractmethod
    def parse_reports(self, cells: Sequence[str], first_row: int = 1) -> Reports:
        """Reports from CSV cells; a malformed or impossible report raises InputError naming its row."""

    # ------------------------------------------------------------ common
    @property
    def n_symbols(self) -> int:
        return len(self.labels)

    @property
    def shape(self) -> tuple[int, int | None]:
        return (self.n_symbols, self.output_size())

    def output_size(self) -> int | None:
        """M, the number of outputs (None when it is too large to state as an int worth printing)."""
        return None

    def expected_report_size(self) -> float:
        """Mean number of integers in one report (set-valued families: the mean set size), for sizing blocks."""
        return 1.0

    def index_of(self, value) -> int:
        try:
            return self._index[str(value)]
        except KeyError:
            raise InputError(f"unknown input label {str(value)!r} (labels: {_preview(self.labels)})") from None

    def indices_of(self, values, first_row: int = 0) -> np.ndarray:
        """Input indices of labels; an unknown label raises InputError naming its row."""
        out = np.empty(len(values), dtype=np.int64)
        index = self._index
        for pos, v in enumerate(values):
            i = index.get(str(v))
            if i is None:
                raise InputError(
                    f"row {first_row + pos}: unknown input label {str(v)!r} (labels: {_preview(self.labels)})"
                )
            out[pos] = i
        return out

    def privatize_indices(self, indices, rng=None) -> Reports:
        """Reports for an array of input indices (one independent exact draw each)."""
        from mechdesign.mechanisms.exact_random import resolve_rng

        idx = np.asarray(indices, dtype=np.int64).ravel()
        if idx.size and (idx.min() < 0 or idx.max() >= self.n_symbols):
            raise InputError(f"input indices must be integers in [0, {self.n_symbols})")
        return self.sample_indices(idx, resolve_rng(rng))

    def privatize(self, values, rng=None) -> list[str]:
        """Release every value of a sequence of input labels; returns the reports as text cells."""
        values = list(values)
        return self.format_reports(self.privatize_indices(self.indices_of(values), rng))

    def certificate(self) -> TwoLevelCertificate:
        """Exact privacy: the family's closed-form worst ratio checked against E ≤ e^ε (two_level.py)."""
        return certify_two_level(
            self.family, self.parameters(), self.epsilon.text, self.c, self.bound, self.n_symbols, self.components()
        )

    def to_kernel(self, max_entries: int = 10**6) -> tuple[ExactKernel, tuple[str, ...]]:
        """The explicit kernel (exact rationals) and its output labels, for small N (tests compare with it)."""
        cols, out_labels = self.explicit_columns()
        if len(cols) * self.n_symbols > max_entries:
            raise InputError(f"to_kernel: N x M = {len(cols) * self.n_symbols} exceeds {max_entries}")
        rows = [[col[x] for col in cols] for x in range(self.n_symbols)]
        return ExactKernel.from_fractions(rows), tuple(out_labels)

    # ------------------------------------------------------------ decoding
    def variances(self, n: int, prior=None, population: bool = False) -> np.ndarray:
        """Var f̂_x of the unbiased estimator for n reports (module docstring): i.i.d. records from ``prior``
        (default uniform), or with ``population=True`` Wang et al.'s eq. (2) for fixed frequencies ``prior``."""
        p, q = (float(v) for v in self.support_probabilities())
        f = np.full(self.n_symbols, 1.0 / self.n_symbols) if prior is None else np.asarray(prior, dtype=float)
        if f.shape != (self.n_symbols,):
            raise InputError(f"prior: needs {self.n_symbols} masses, found shape {f.shape}")
        if population:
            return (q * (1 - q) + f * (p - q) * (1 - p - q)) / (n * (p - q) ** 2)
        pi = q + f * (p - q)
        return pi * (1 - pi) / (n * (p - q) ** 2)

    def accuracy(self, n: int, prior=None) -> dict[str, float]:
        """Accuracy before release, in closed form: expected squared error Σ_x Var f̂_x of the unbiased
        estimator, its root, and the largest standard deviation, for n i.i.d. records from ``prior``."""
        v = self.variances(n, prior)
        return {
            "n": int(n),
            "mse": float(v.sum()),
            "rmse": float(math.sqrt(v.sum())),
            "max_sd": float(np.sqrt(v.max())),
        }

    def estimate_from_counts(
        self, counts, n: int, method: str = "unbiased", confidence: float = 0.95, simultaneous: bool = False
    ) -> FrequencyEstimate:
        """Estimate P_X from support counts C (length N) of n reports (module docstring)."""
        from scipy.stats import norm

        if method not in ESTIMATE_METHODS:
            raise InputError(f"--method: must be one of {', '.join(ESTIMATE_METHODS)}, found {method!r}")
        if not (0 < confidence < 1):
            raise InputError(f"--confidence: must lie in (0, 1), found {confidence}")
        if n <= 0:
            raise InputError("reports: empty input: no reports")
        p, q = (float(v) for v in self.support_probabilities())
        if p <= q:
            raise InputError(f"epsilon: {self.epsilon.text} gives reports that carry no information about the symbol")
        pi = np.asarray(counts, dtype=float) / n
        raw = (pi - q) / (p - q)
        se = np.sqrt(pi * (1 - pi) / n) / (p - q)
        alpha = 1 - confidence
        z = norm.ppf(1 - (alpha / self.n_symbols if simultaneous else alpha) / 2)
        # Wilson's score interval for the binomial π_x (Wilson 1927), mapped through f = (π − q*)/(p* − q*):
        # the same asymptotic interval, and not of width 0 when a count is 0 or n
        centre = (pi + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * np.sqrt(pi * (1 - pi) / n + z * z / (4 * n * n))
        lower = np.clip((centre - half - q) / (p - q), 0, 1)
        upper = np.clip((centre + half - q) / (p - q), 0, 1)
        est = {"unbiased": raw, "projected": project_to_simplex(raw) if method == "projected" else None}.get(method)
        if method == "mle":
            est = self.mle_from_counts(np.asarray(counts), n)
        return FrequencyEstimate(
            method=method,
            labels=self.labels,
            estimate=est,
            standard_error=se,
            lower=lower,
            upper=upper,
            confidence=float(confidence),
            n=int(n),
            uncertainty="asymptotic: binomial support counts, plug-in standard errors, Wilson score intervals",
            simultaneous=simultaneous,
            diagnostics={"family": self.family, "support_p": p, "support_q": q},
        )

    def mle_from_counts(self, counts, n: int) -> np.ndarray:
        """The maximum-likelihood estimate on the simplex, where the likelihood is a function of the counts."""
        raise InputError(
            f"--method mle: the likelihood of {self.family} reports is not a function of the support counts; "
            "use unbiased or projected"
        )

    def has_report_likelihood(self) -> bool:
        """True when :meth:`support_sets` groups the reports for the MLE on the reports themselves: the set-valued
        families, whose ``report_ratios`` gives each report's ratio (subset selection, unary encoding); local
        hashing with a seed pool and Hadamard response override it."""
        return callable(getattr(self, "report_ratios", None))

    def support_sets(self, reports: Reports):
        """The reports grouped for the likelihood (:class:`~mechdesign.mechanisms.support_likelihood.SupportSets`):
        each distinct report's support set B, its ratio r and how often it occurs. Set-valued reports: each
        report's set with its ratio (subset selection: R of its size; unary encoding: p(1 − q)/((1 − p) q))."""
        if not self.has_report_likelihood():
            raise InputError(
                f"--method mle: {self.family} has no likelihood on the reports here; use unbiased or projected"
            )
        from mechdesign.mechanisms.support_likelihood import sets_of_reports

        rm1 = np.asarray(self.report_ratios(reports), dtype=float) - 1.0
        return sets_of_reports(reports.offsets, reports.positions, rm1, self.n_symbols)

    def mle_from_reports(self, reports: Reports, tol: float = 1e-9) -> tuple[np.ndarray, int, float] | None:
        """(p, iterations, gap) of the MLE computed on the reports themselves (EM, :func:`support_mle`), or None
        when the family has no such likelihood here (k-RR: the MLE is a function of the support counts,
        :meth:`mle_from_counts`)."""
        if not self.has_report_likelihood():
            return None
        from mechdesign.mechanisms.support_likelihood import support_mle

        P, iters, gaps = support_mle(self.support_sets(reports), self.n_symbols, tol)
        return P[0], int(iters[0]), float(gaps[0])

    def estimate(
        self,
        reports,
        method: str = "unbiased",
        confidence: float = 0.95,
        simultaneous: bool = False,
        intervals: str = "auto",
        bootstrap: int = 200,
        seed: int | None = 0,
    ) -> FrequencyEstimate:
        """Estimate P_X from :class:`Reports` or report text cells.

        ``method="mle"`` for subset selection, unary encoding, Hadamard response and local hashing with a seed pool
        is the MLE on the reports themselves (their likelihood depends on each whole report), by EM, with standard
        errors and intervals (:func:`~mechdesign.mechanisms.support_likelihood.mle_with_intervals`): ``intervals="auto"``
        (default) runs a parametric bootstrap of ``bootstrap`` = B resamples (seeded by ``seed``; percentile
        intervals, as for explicit kernels) when B times the size of the grouped reports is at most
        :data:`~mechdesign.mechanisms.support_likelihood.BOOTSTRAP_AUTO_LIMIT` integers (small alphabets) and
        B · n at most :data:`~mechdesign.mechanisms.support_likelihood.BOOTSTRAP_AUTO_REPORTS`, else the
        asymptotic intervals from the observed information (Wald, clipped to [0, 1]); ``"bootstrap"`` and
        ``"asymptotic"`` force one. The bootstrap is the default where it is cheap because it follows the MLE's
        skewed law near the simplex's boundary, where the normal approximation is poorest; at large n the two
        agree. Other methods and families decode on the support counts (:meth:`estimate_from_counts`)."""
        if not isinstance(reports, Reports):
            reports = self.parse_reports(list(reports))
        if method == "mle" and self.has_report_likelihood():
            from mechdesign.mechanisms.support_likelihood import mle_with_intervals

            fit = mle_with_intervals(self, reports, confidence, simultaneous, intervals, bootstrap, seed)
            return FrequencyEstimate(
                method="mle",
                labels=self.labels,
                confidence=float(confidence),
                n=reports.n,
                simultaneous=bool(simultaneous),
                **fit,
            )
        return self.estimate_from_counts(self.support_counts(reports), reports.n, method, confidence, simultaneous)

    # ------------------------------------------------------------ files
    def to_json(self) -> dict[str, Any]:
        return {
            "mechanism": self.family,
            "labels": list(self.labels),
            "epsilon": self.epsilon.text,
            "prior_set": {"kind": "min_mass", "c": str(self.c)},
            "parameters": self.parameters(),
            "certificate": self.certificate().to_json(),
        }

    def save(self, path) -> None:
        from mechdesign.mechanisms.files import write_json_atomically

        write_json_atomically(self.to_json(), path)

    def parameters_summary(self) -> str:
        """The parameters in one short line (a seed pool by its size)."""
        parts = []
        for k, v in self.parameters().items():
            if k == "pool":
                v = f"{len(v)} seeds"
            elif k == "ratio" or k == "ratios":
                continue
            parts.append(f"{k} = {v}")
        return ", ".join(parts)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(N={self.n_symbols}, epsilon={self.epsilon.text}, c={self.c}, {self.parameters()})"
        )


def _preview(labels: Sequence[str], k: int = 8) -> str:
    shown = ", ".join(labels[:k])
    return shown + (", ..." if len(labels) > k else "")


def dumps(data) -> str:
    return json.dumps(data, indent=2) + "\n"


def read_json(path) -> dict:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"--mechanism-file: file not found: {path}") from None
    except (OSError, ValueError) as exc:
        raise InputError(f"--mechanism-file: cannot read {path}: {exc}") from None
