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

__all__ = ["mle_error", "mle_covariance", "mle_standard_deviations", "ESTIMANDS"]

ESTIMANDS = ("records", "population")
"""``records``: records i.i.d. from P; ``population``: the frequencies of the collected population."""


def _kernel_prior(kernel, prior) -> tuple[np.ndarray, np.ndarray]:
    if hasattr(kernel, "to_float"):
        kernel = kernel.to_float()
    K = np.asarray(kernel, dtype=float)
    if K.ndim != 2:
        raise ValueError(f"kernel: expected an N x M matrix, found shape {K.shape}")
    P = np.asarray(prior, dtype=float).ravel()
    if P.shape != (K.shape[0],):
        raise ValueError(f"prior: must have N = {K.shape[0]} masses, found {P.size}")
    if not np.all(np.isfinite(P)) or P.min() < 0 or P.sum() <= 0:
        raise ValueError("prior: masses must be finite, >= 0 and not all 0")
    return K, P / P.sum()


def _inverse_information(K: np.ndarray, P: np.ndarray) -> np.ndarray | None:
    """J⁻¹ (N × N, zero outside the support of P), or None when rank K < N (J singular)."""
    from mechdesign.theory.accuracy import kernel_rank

    n = K.shape[0]
    if kernel_rank(K) < n:
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
