"""Accuracy before release: how well the analyst will recover P_X from n released outputs.

A mechanism K (N × M, rows = secrets) releases n independent reports Y_1..Y_n, each drawn by
X_i ~ P and Y_i ~ K_{X_i}, so the output counts are Multinomial(n, q) with q = Kᵀ P. The
inversion (least-squares) estimator is linear in the empirical output distribution q̂:

    p̂ = B q̂,   B = (Kᵀ)⁺ (the Moore–Penrose pseudo-inverse of Kᵀ, N × M),

and when rank K = N, B Kᵀ = I so E p̂ = B q = P: unbiased, for every n. Its covariance is exact
(not asymptotic), because Cov(q̂) = (diag q − q qᵀ)/n for a multinomial:

    Cov(p̂) = B (diag q − q qᵀ) Bᵀ / n,
    E‖p̂ − P‖² = tr Cov(p̂) = (Σ_{x,y} B_xy² q_y − ‖P‖²) / n      (B q = P).

For k-RR this is Wang, Blocki, Li, Jha (USENIX Security 2017), Var of the GRR estimate, plus the
sampling variance P_x(1−P_x)/n of drawing X from P (the law of total variance; tests/release/test_estimate.py
checks the identity). A user compares two designs by :func:`inversion_accuracy` at their n.

Only numpy here: the estimators in :mod:`mechdesign.release.estimate` use the same covariance
with q replaced by the observed q̂ (the plug-in, asymptotic covariance).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "InversionAccuracy",
    "inversion_accuracy",
    "accuracy_summary",
    "describe_accuracy",
    "inversion_matrix",
    "inversion_covariance",
    "inversion_variances",
    "kernel_rank",
]


def kernel_rank(K) -> int:
    """Numerical rank of K (numpy's default SVD tolerance: σ_max · max(N, M) · machine ε).

    Past N = 200 a cheaper test runs first (:func:`_full_rank_gram_factor`); when it does not show full row
    rank, the SVD decides."""
    K = np.asarray(K, dtype=float)
    if _full_rank_gram_factor(K) is not None:
        return K.shape[0]
    return int(np.linalg.matrix_rank(K))


def _full_rank_gram_factor(K: np.ndarray) -> np.ndarray | None:
    """For N > 200 and M ≥ N: the upper Cholesky factor R of the Gram matrix G = K Kᵀ = RᵀR when LAPACK's
    estimate of G's reciprocal condition number (dpocon, ≈ (σ_min/σ_max)²) shows σ_min comfortably above
    numpy's rank tolerance (by a factor 100, covering the estimate's slack), so that rank K = N; else None."""
    n, m = K.shape
    if n <= 200 or m < n:
        return None
    from scipy.linalg import lapack

    G = K @ K.T
    norm1 = np.abs(G).sum(axis=0).max()
    chol, info = lapack.dpotrf(G, lower=0, overwrite_a=1)
    if info != 0:
        return None
    rcond, info = lapack.dpocon(chol, norm1)
    if info == 0 and np.sqrt(max(rcond, 0.0)) > 100 * max(n, m) * np.finfo(float).eps:
        return np.triu(chol)
    return None


def inversion_matrix(K) -> np.ndarray:
    """B = (Kᵀ)⁺, N × M: the inversion estimate is p̂ = B q̂ (the least-squares solution of Kᵀ p = q̂;
    the exact solution when M = N and K is invertible). Raises ``ValueError`` when rank K < N:
    then Kᵀ p = q̂ does not determine p (P is not identifiable from the outputs)."""
    K = np.asarray(K, dtype=float)
    n = K.shape[0]
    R = _full_rank_gram_factor(K)
    if R is not None:  # (Kᵀ)⁺ = (K Kᵀ)⁻¹ K for K of full row rank: two triangular solves, no SVD at large N
        from scipy.linalg import solve_triangular

        return solve_triangular(R, solve_triangular(R, K, trans="T", check_finite=False), check_finite=False)
    r = int(np.linalg.matrix_rank(K))  # what kernel_rank does once its cheap test has not shown full rank
    if r < n:
        raise ValueError(
            f"the kernel has rank {r} < N = {n}: the inversion estimator is not defined "
            "(P_X is not identifiable along the null space of K^T); estimate --method mle reports the range of each mass "
            "the outputs do not identify"
        )
    if n <= 200:
        return np.linalg.pinv(K.T)
    return np.linalg.solve(K @ K.T, K)  # (Kᵀ)⁺ = (K Kᵀ)⁻¹ K for K of full row rank: no SVD at large N


def inversion_variances(B: np.ndarray, q, n: float) -> np.ndarray:
    """diag Cov(p̂) = (Σ_y B_xy² q_y − (B q)_x²) / n for p̂ = B q̂, q̂ ~ Multinomial(n, q)/n.

    ``q`` may be a batch (rows); the result then has one row of N variances per row of q."""
    q = np.asarray(q, dtype=float)
    Bq = q @ B.T
    var = (q @ (B * B).T - Bq * Bq) / n
    return np.maximum(var, 0.0)


def inversion_covariance(B: np.ndarray, q, n: float) -> np.ndarray:
    """Cov(p̂) = B (diag q − q qᵀ) Bᵀ / n, the N × N covariance of p̂ = B q̂."""
    q = np.asarray(q, dtype=float)
    Bq = B @ q
    return ((B * q) @ B.T - np.outer(Bq, Bq)) / n


@dataclass(frozen=True)
class InversionAccuracy:
    """The exact accuracy of the inversion estimator of P from n reports through K."""

    n: int
    expected_squared_error: float
    """E‖p̂ − P‖², the trace of Cov(p̂) (exact for every n)."""
    standard_deviations: np.ndarray
    """sd(p̂_x) for every symbol x."""
    per_report: float
    """n · E‖p̂ − P‖², independent of n: the error of one report."""

    def to_json(self) -> dict:
        return {
            "n": self.n,
            "expected_squared_error": float(self.expected_squared_error),
            "rmse": float(np.sqrt(self.expected_squared_error)),
            "max_standard_deviation": float(self.standard_deviations.max()),
            "standard_deviations": [float(v) for v in self.standard_deviations],
            "per_report": float(self.per_report),
        }


def kernel_and_prior(kernel, prior) -> tuple[np.ndarray, np.ndarray]:
    """The kernel as an N × M float array (an ExactKernel through ``to_float()``) and the prior as N float masses,
    normalised; ``ValueError`` naming the argument when either is malformed."""
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


def inversion_accuracy(K, prior, n: int) -> InversionAccuracy:
    """E‖p̂ − P‖² (= tr Cov p̂) and sd(p̂_x) of the inversion estimator for kernel K, prior P and n reports.

    ``K``: N × M row-stochastic (floats, or an object with ``to_float()`` such as an ExactKernel);
    ``prior``: N masses (normalised here); ``n`` ≥ 1. Raises ``ValueError`` when rank K < N or the
    arguments are malformed (a message naming the argument and the value)."""
    K, P = kernel_and_prior(K, prior)
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError(f"n: must be an integer >= 1, found {n}")
    B = inversion_matrix(K)
    q = K.T @ P
    var_one = inversion_variances(B, q, 1.0)
    return InversionAccuracy(
        n=int(n),
        expected_squared_error=float(var_one.sum() / n),
        standard_deviations=np.sqrt(var_one / n),
        per_report=float(var_one.sum()),
    )


def accuracy_summary(K, prior, n: int) -> dict:
    """:func:`inversion_accuracy` as a JSON-ready dict, with the prior used; when rank K < N, the rank and
    the reason instead of the numbers (the inversion estimator is not defined; the MLE is not identifiable)."""
    if hasattr(K, "to_float"):
        K = K.to_float()
    P = np.asarray(prior, dtype=float)
    P = P / P.sum()
    try:
        acc = inversion_accuracy(K, P, n)
    except ValueError as exc:
        return {"n": int(n), "prior": [float(v) for v in P], "expected_squared_error": None, "error": str(exc)}
    return {"prior": [float(v) for v in P], **acc.to_json()}


def describe_accuracy(summary: dict) -> str:
    """One line for a report: 'E||p_hat - P||^2 = … (rmse …), max sd … at n = …' or the reason it is undefined."""
    if summary.get("expected_squared_error") is None:
        return f"undefined at n = {summary['n']}: {summary['error']}"
    return (
        f"E||p_hat - P||^2 = {summary['expected_squared_error']:.4g} (rmse {summary['rmse']:.4g}), "
        f"max sd(p_hat_x) = {summary['max_standard_deviation']:.4g} at n = {summary['n']} "
        f"(n * E||p_hat - P||^2 = {summary['per_report']:.4g})"
    )
