"""Every extreme ray of the simplex / min_mass column cone, written out independently of mechdesign.

From the Dobrushin paper: Remark 2 (two-level rays m_q + (1 − m_q)1_A with m_q = (1 − e^ε c q)/(e^ε (1 − c q)),
for e^ε c q < 1) and, for min_mass (c > 0), Lemma 1 (rays with zeros: 1_A + w e_j with |A| = a = ⌈t⌉ − 1,
w = t − a, t = e^−ε/c). c = 0 is ε-LDP (the staircase levels {e^−ε, 1}).
"""

import itertools
import math

import numpy as np


def all_rays(n: int, eps: float, c: float) -> np.ndarray:
    """The rays as rows (max entry 1)."""
    e = math.exp(eps)
    rays = []
    for q in range(1, n):
        if e * c * q < 1:
            m = (1 - e * c * q) / (e * (1 - c * q))
            for A in itertools.combinations(range(n), q):
                r = np.full(n, m)
                r[list(A)] = 1.0
                rays.append(r)
    if c > 0:
        t = math.exp(-eps) / c
        a = math.ceil(t) - 1
        if 1 <= a <= n - 2:
            w = t - a
            for j in range(n):
                for A in itertools.combinations([x for x in range(n) if x != j], a):
                    r = np.zeros(n)
                    r[list(A)] = 1.0
                    r[j] = w
                    rays.append(r)
    return np.array(rays)


def independent_design(R: np.ndarray, P: np.ndarray) -> tuple[float, np.ndarray]:
    """The A-optimal design over the rays R by cvxpy (Clarabel), written here independently of mechdesign:
    (tr J⁻¹ − ‖P‖², θ), tr J⁻¹ = Σ_x matrix_frac(e_x, J) with J = Σ_r θ_r r rᵀ/(Pᵀr) (one matrix of the vec(r rᵀ)/(Pᵀr)
    times θ), subject to Σ_r θ_r r = 1, θ ≥ 0. Skips the test when cvxpy is missing."""
    import pytest

    cp = pytest.importorskip("cvxpy")
    n = R.shape[1]
    theta = cp.Variable(len(R), nonneg=True)
    outer = np.stack([np.outer(r, r).ravel() / (r @ P) for r in R], axis=1)
    J = cp.reshape(outer @ theta, (n, n), order="C")
    J = (J + J.T) / 2
    prob = cp.Problem(cp.Minimize(sum(cp.matrix_frac(np.eye(n)[x], J) for x in range(n))), [R.T @ theta == 1])
    prob.solve(solver="CLARABEL")
    return prob.value - float(P @ P), np.asarray(theta.value)
