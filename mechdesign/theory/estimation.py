"""Frequency estimation through a mechanism: the MLE's asymptotic error (the constrained Cramér–Rao bound).

n secrets X_1..X_n are drawn i.i.d. from P (length N) and released through K (N × M, rows = secrets); the
output counts are Multinomial(n, q) with q = Kᵀ P. The Fisher information of one report about P is

    J(K, P) = Σ_y K(:,y) K(:,y)ᵀ / (Pᵀ K(:,y))          (columns with Pᵀ K(:,y) = 0 are skipped),

and because every row of K sums to 1, J P = Σ_y K(:,y) = 1, so J⁻¹ 1 = P when J is invertible. The MLE of P on
the simplex (the constraint 1ᵀ P = 1 removes one direction) is asymptotically normal with covariance C / n,

    C(K, P) = J⁻¹ − P Pᵀ                                  (constrained Cramér–Rao bound; Gorman and Hero,
                                                           IEEE Trans. Inf. Theory 36 (1990), Theorem 1),

so n · E‖p̂ − P‖² → U(K, P) = tr C = tr J⁻¹ − ‖P‖². When K is square and invertible, U equals n times the
inversion estimator's exact error (:func:`mechdesign.theory.accuracy.inversion_accuracy`). A design with
rank J < N cannot identify P: U = ∞.

Only numpy here. The names and signatures of the three functions are stable (other modules report with them).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "fisher_information",
    "mle_covariance",
    "mle_error",
    "krr_error",
    "subset_selection_error",
    "best_subset_selection_error",
]


def _kernel_and_prior(kernel, prior) -> tuple[np.ndarray, np.ndarray]:
    K = np.asarray(kernel, dtype=float)
    P = np.asarray(prior, dtype=float).reshape(-1)
    if K.ndim != 2 or K.shape[0] != P.shape[0]:
        raise ValueError(f"kernel has shape {K.shape} but the prior has {P.shape[0]} masses: need one row per mass")
    return K, P


def fisher_information(kernel, prior) -> np.ndarray:
    """J = Σ_y K(:,y) K(:,y)ᵀ / (Pᵀ K(:,y)) over the columns with Pᵀ K(:,y) > 0 (N × N, symmetric PSD)."""
    K, P = _kernel_and_prior(kernel, prior)
    q = P @ K
    live = q > 0
    Kl = K[:, live]
    return (Kl / q[live]) @ Kl.T


def _inverse_if_full_rank(J: np.ndarray) -> np.ndarray | None:
    """J⁻¹ by a symmetric eigendecomposition, or None when J is numerically singular (an eigenvalue below
    N · machine ε · the largest one, numpy's matrix_rank tolerance)."""
    w, V = np.linalg.eigh((J + J.T) / 2)
    top = float(w[-1]) if w.size else 0.0
    if top <= 0 or float(w[0]) <= top * J.shape[0] * np.finfo(float).eps:
        return None
    return (V / w) @ V.T


def mle_covariance(kernel, prior) -> np.ndarray:
    """n times the MLE's asymptotic covariance, C = J⁻¹ − P Pᵀ (N × N); all entries +inf when rank J < N."""
    K, P = _kernel_and_prior(kernel, prior)
    Jinv = _inverse_if_full_rank(fisher_information(K, P))
    if Jinv is None:
        return np.full((P.size, P.size), np.inf)
    return Jinv - np.outer(P, P)


def mle_error(kernel, prior) -> float:
    """U = tr J⁻¹ − ‖P‖²: n times the MLE's asymptotic mean squared error E‖p̂ − P‖²; math.inf when rank J < N."""
    K, P = _kernel_and_prior(kernel, prior)
    if np.count_nonzero(K.any(axis=0)) < P.size:  # fewer used outputs than symbols: rank J < N
        return math.inf
    Jinv = _inverse_if_full_rank(fisher_information(K, P))
    if Jinv is None:
        return math.inf
    return float(np.trace(Jinv) - P @ P)


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
        C = lambda a, b: math.comb(a, b) if 0 <= b <= a else 0
        Z = C(n - 1, k - 1) * e + C(n - 1, k)
        q = (k * e + n - k) / (n * Z)
        jxx = (C(n - 1, k - 1) * e * e + C(n - 1, k)) / (Z * Z * q)
        jxy = (C(n - 2, k - 2) * e * e + 2 * C(n - 2, k - 1) * e + C(n - 2, k)) / (Z * Z * q)
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
