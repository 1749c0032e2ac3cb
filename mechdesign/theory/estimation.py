"""The maximum-likelihood estimator's asymptotic error, for any kernel (square or not, any rank).

n records X_1..X_n i.i.d. from P are released through K (N × M, rows = secrets); the output counts are
Multinomial(n, q), q = Kᵀ P. The MLE p̂ of P over the simplex has Fisher information (per report)

    J(K, P) = Σ_y K(:,y) K(:,y)ᵀ / (Pᵀ K(:,y))            (N × N, sum over outputs with q_y > 0)

and, constrained to Σ p = 1, asymptotic covariance C/n with C = J⁻¹ − P Pᵀ (the constrained
Cramér–Rao bound: J P = Σ_y K(:,y) = 1 because rows of K sum to 1, so J⁻¹ 1 = P and the projection
onto {Σ d = 0} of J⁻¹ is J⁻¹ − P Pᵀ). Hence

    U(K, P) = lim n E‖p̂ − P‖² = tr J⁻¹ − ‖P‖²,

infinite when rank J < N (some direction of P leaves the likelihood unchanged: P is not identifiable).
When K is square and invertible U equals n times the inversion estimator's exact error
(:func:`mechdesign.theory.accuracy.inversion_accuracy`); with M > N the MLE is better.

Two estimands. For records drawn i.i.d. from P (the default), C includes the sampling variance of the
records, diag(P) − P Pᵀ. For the frequencies f of the collected population (the n records as they
are), only the mechanism's noise counts: C_pop = J⁻¹ − diag(P) at f = P, so
U_pop = tr J⁻¹ − 1 = U − (1 − ‖P‖²) (the law of total variance; for k-RR this is Wang, Blocki, Li, Jha,
USENIX Security 2017, Theorem 2's variance of the GRR frequency estimate, summed over symbols).

Masses with P_x = 0 are on the simplex's boundary, where the MLE is not asymptotically normal; they get
variance 0 here and J is taken on the support of P.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "fisher_information",
    "krr_error",
    "subset_selection_error",
    "best_subset_selection_error",
    "mle_error",
    "mle_covariance",
    "mle_standard_deviations",
    "mle_accuracy_summary",
    "describe_mle_accuracy",
    "accuracy_prior",
    "estimation_columns",
    "ESTIMANDS",
]

ESTIMANDS = ("records", "population")
"""``records``: records i.i.d. from P; ``population``: the frequencies of the collected population."""


def _kernel_prior(kernel, prior) -> tuple[np.ndarray, np.ndarray]:
    from mechdesign.theory.accuracy import kernel_and_prior

    return kernel_and_prior(kernel, prior)


def fisher_information(kernel, prior) -> np.ndarray:
    """J = Σ_y K(:,y) K(:,y)ᵀ / (Pᵀ K(:,y)) over the columns with Pᵀ K(:,y) > 0 (N × N, symmetric PSD)."""
    K, P = _kernel_prior(kernel, prior)
    q = P @ K
    live = q > 0
    Kl = K[:, live]
    return (Kl / q[live]) @ Kl.T


def _inverse_information(K: np.ndarray, P: np.ndarray) -> np.ndarray | None:
    """J⁻¹ (N × N, zero outside the support of P), or None when rank K < N (J singular)."""
    from mechdesign.theory.accuracy import kernel_rank

    n = K.shape[0]
    if np.count_nonzero(K.any(axis=0)) < n or kernel_rank(K) < n:  # fewer used outputs than symbols: rank < N
        return None
    S = np.flatnonzero(P > 0)
    Ks = K[S]
    q = P[S] @ Ks
    used = q > 0
    A = Ks[:, used] / np.sqrt(q[used])
    J = A @ A.T
    try:
        Jinv_s = np.linalg.inv(J)
    except np.linalg.LinAlgError:
        return None
    if not np.all(np.isfinite(Jinv_s)):
        return None
    Jinv = np.zeros((n, n))
    Jinv[np.ix_(S, S)] = (Jinv_s + Jinv_s.T) / 2
    return Jinv


def mle_covariance(kernel, prior, estimand: str = "records") -> np.ndarray | None:
    """C = J⁻¹ − P Pᵀ (``records``) or J⁻¹ − diag(P) (``population``): n times the MLE's asymptotic
    covariance; None when rank K < N (P is not identifiable, the covariance is unbounded)."""
    if estimand not in ESTIMANDS:
        raise ValueError(f"estimand: must be one of {', '.join(ESTIMANDS)}, found {estimand!r}")
    K, P = _kernel_prior(kernel, prior)
    Jinv = _inverse_information(K, P)
    if Jinv is None:
        return None
    return Jinv - (np.outer(P, P) if estimand == "records" else np.diag(P))


def mle_error(kernel, prior, estimand: str = "records") -> float:
    """U = tr J⁻¹ − ‖P‖² = lim n E‖p̂ − P‖² of the MLE (``records``), or tr J⁻¹ − 1 (``population``);
    ``math.inf`` when rank K < N."""
    C = mle_covariance(kernel, prior, estimand)
    if C is None:
        return math.inf
    return float(max(np.trace(C), 0.0))


def mle_standard_deviations(kernel, prior, n: int, estimand: str = "records") -> np.ndarray:
    """sd(p̂_x) ≈ sqrt(C_xx / n) per symbol; +inf everywhere when rank K < N."""
    C = mle_covariance(kernel, prior, estimand)
    if C is None:
        return np.full(np.asarray(prior).size, np.inf)
    return np.sqrt(np.maximum(np.diag(C), 0.0) / n)


def mle_accuracy_summary(kernel, prior, n: int) -> dict:
    """The MLE's asymptotic accuracy from n reports through K under P, as a JSON-ready dict, for both
    estimands: ``records`` (records i.i.d. from P) and ``population`` (the frequencies of the collected
    population: without the sampling term (1 − ‖P‖²)/n). Each holds ``expected_squared_error`` (U/n),
    ``rmse``, ``per_report`` (U), ``standard_deviations`` and ``max_standard_deviation``; all None, with
    ``identifiable`` False and the reason, when rank K < N (U is infinite)."""
    K, P = _kernel_prior(kernel, prior)
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError(f"n: must be an integer >= 1, found {n}")
    out: dict = {"n": int(n), "prior": [float(v) for v in P], "identifiable": True}
    Jinv = _inverse_information(K, P)
    if Jinv is None:
        from mechdesign.theory.accuracy import kernel_rank

        out["identifiable"] = False
        out["error"] = (
            f"the kernel has rank {kernel_rank(K)} < N = {K.shape[0]}: P is not identifiable from the outputs "
            "(U is infinite)"
        )
        for name in ESTIMANDS:
            out[name] = {"expected_squared_error": None, "rmse": None, "per_report": None, "standard_deviations": None}
        return out
    for name, C in (("records", Jinv - np.outer(P, P)), ("population", Jinv - np.diag(P))):
        per_report = float(max(np.trace(C), 0.0))
        sd = np.sqrt(np.maximum(np.diag(C), 0.0) / n)
        out[name] = {
            "expected_squared_error": per_report / n,
            "rmse": math.sqrt(per_report / n),
            "per_report": per_report,
            "max_standard_deviation": float(sd.max()),
            "standard_deviations": [float(v) for v in sd],
        }
    return out


def describe_mle_accuracy(summary: dict) -> list[str]:
    """Report lines for :func:`mle_accuracy_summary`: one per estimand, or the reason it is infinite."""
    if not summary.get("identifiable"):
        return [f"infinite at n = {summary['n']}: {summary['error']}"]
    lines = []
    for name, words in (
        ("records", "records i.i.d. from P"),
        ("population", "frequencies of the collected population"),
    ):
        s = summary[name]
        lines.append(
            f"{words}: E||p_hat - P||^2 = {s['expected_squared_error']:.4g} (rmse {s['rmse']:.4g}), "
            f"max sd(p_hat_x) = {s['max_standard_deviation']:.4g} at n = {summary['n']} (U = n * error = "
            f"{s['per_report']:.4g})"
        )
    return lines


def accuracy_prior(spec) -> list[float]:
    """The prior at which reports state accuracy: the prior set's point prior, else the objective's listed
    prior, else uniform."""
    from mechdesign.privacy.registry import rules

    prior = rules(spec.prior_set, spec.n).point_prior()
    if prior is None:
        listed = getattr(spec.objective, "prior", None)
        prior = listed if isinstance(listed, list) else [1] * spec.n
    return [float(v) for v in prior]


def estimation_columns(kernel, prior) -> dict:
    """Per-report errors for a sweep table's row: ``mle_error`` (U, records i.i.d. from P),
    ``mle_error_population`` (U − (1 − ‖P‖²)), ``inversion_error`` (n · the inversion estimator's exact
    E‖p̂ − P‖², when rank K = N); ``inf`` / None when not defined."""
    from mechdesign.theory.accuracy import inversion_accuracy

    K, P = _kernel_prior(kernel, prior)
    u = mle_error(K, P)
    pop = mle_error(K, P, "population")
    try:
        inv = inversion_accuracy(K, P, 1).per_report
    except ValueError:
        inv = None
    return {"mle_error": u, "mle_error_population": pop, "inversion_error": inv}


# ------------------------------------------------------------------ textbook frequency oracles
def krr_error(n: int, epsilon: float, prior) -> float:
    """U of k-ary randomised response (k-RR, ε-LDP) for any prior: Wang, Blocki, Li, Jha (USENIX Security 2017),
    the variance of the GRR estimate summed over the symbols, n·Σ_x Var f̂_x = N q(1−q)/(p−q)² + (1−p−q)/(p−q),
    plus the sampling term 1 − ‖P‖² (p = e^ε/(e^ε + N − 1), q = 1/(e^ε + N − 1)); k-RR is square and invertible,
    so the MLE and the inversion estimator share this error asymptotically."""
    P = np.asarray(prior, dtype=float)
    if epsilon == 0:
        return math.inf
    d = math.expm1(epsilon)  # p − q = (e^ε − 1)/(e^ε + N − 1)
    s = d + n  # e^ε + N − 1
    p, q = (d + 1) / s, 1 / s
    return n * q * (1 - q) / (d / s) ** 2 + (1 - p - q) / (d / s) + 1 - float(P @ P)


def subset_selection_error(n: int, epsilon: float, k: int, prior=None) -> float:
    """U of k-subset selection (ε-LDP; Ye and Barg, IEEE Trans. Inf. Theory 64 (2018); Wang et al. 2016): each
    report is a k-subset S, with probability ∝ e^ε when x ∈ S and ∝ 1 otherwise.

    At the uniform prior (``prior`` None) in closed form: J = aI + b11ᵀ with, for Z = C(N−1,k−1)e^ε + C(N−1,k) and
    every output's probability q = (k e^ε + N − k)/(N Z),
    J_xx = [C(N−1,k−1)e^{2ε} + C(N−1,k)]/(Z² q), J_xy = [C(N−2,k−2)e^{2ε} + 2C(N−2,k−1)e^ε + C(N−2,k)]/(Z² q),
    so tr J⁻¹ = (N − 1)/a + 1/(a + N b) and U = tr J⁻¹ − 1/N. For another prior, by listing the C(N, k) outputs
    (``ValueError`` past 2·10⁶ kernel entries)."""
    if epsilon == 0:
        return math.inf
    e = math.exp(epsilon)
    if prior is None:
        # every binomial divided by C(N−1,k−1) (no overflow at large N): C(N−1,k)/C(N−1,k−1) = (N−k)/k,
        # C(N−2,k−2), C(N−2,k−1), C(N−2,k) over it = (k−1)/(N−1), (N−k)/(N−1), (N−k)(N−k−1)/(k(N−1))
        alpha = (n - k) / k
        z = e + alpha
        scale = n / (z * (k * e + n - k))  # C(N−1,k−1)/(Z² q), Z² q = C(N−1,k−1)² z² q and q = (ke + N − k)/(N Z)
        jxx = (e * e + alpha) * scale
        jxy = ((k - 1) * e * e + 2 * (n - k) * e + (n - k) * (n - k - 1) / k) / (n - 1) * scale
        a, b = jxx - jxy, jxy
        return (n - 1) / a + 1 / (a + n * b) - 1 / n
    if math.comb(n, k) * n > 2_000_000:
        raise ValueError(f"subset selection with N = {n}, k = {k} has too many outputs to list")
    import itertools

    S = np.zeros((math.comb(n, k), n))
    for i, idx in enumerate(itertools.combinations(range(n), k)):
        S[i, list(idx)] = 1.0
    K = (1 + (e - 1) * S.T) / (math.comb(n - 1, k - 1) * e + math.comb(n - 1, k))
    return mle_error(K, prior)


def best_subset_selection_error(n: int, epsilon: float, prior=None) -> tuple[float, int]:
    """(U, k) of subset selection at its best size k (uniform prior when ``prior`` is None)."""
    best = (math.inf, 1)
    for k in range(1, n):
        u = subset_selection_error(n, epsilon, k, prior)
        if u < best[0]:
            best = (u, k)
    return best
