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

__all__ = ["fisher_information", "mle_covariance", "mle_error"]


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
    Jinv = _inverse_if_full_rank(fisher_information(K, P))
    if Jinv is None:
        return math.inf
    return float(np.trace(Jinv) - P @ P)
