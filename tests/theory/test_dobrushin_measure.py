"""η_TV(K) = max_{x,x'} ½ Σ_y |K_x(y) − K_x'(y)| (Dobrushin paper, eq. 2) from theory/measures.dobrushin, against
that definition written out pair by pair in Fractions, on both of its paths (one pdist, and blocks of rows)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from mechdesign.theory import measures


def eta_by_definition(K: np.ndarray) -> Fraction:
    rows = [[Fraction(float(v)) for v in row] for row in K]
    n = len(rows)
    return max(
        (sum(abs(a - b) for a, b in zip(rows[i], rows[j])) / 2 for i in range(n) for j in range(i + 1, n)),
        default=Fraction(0),
    )


@pytest.mark.parametrize("blocks", [False, True])
@pytest.mark.parametrize("n, m, seed", [(1, 3, 0), (2, 2, 1), (7, 5, 2), (30, 12, 3)])
def test_dobrushin_is_the_largest_total_variation_between_two_rows(monkeypatch, blocks, n, m, seed):
    if blocks:  # the block path: every kernel counts as too large for one pdist
        monkeypatch.setattr(measures, "DOBRUSHIN_PAIRS_AT_ONCE", 0)
    K = np.random.default_rng(seed).dirichlet(np.ones(m), size=n)
    assert measures.dobrushin(K) == pytest.approx(float(eta_by_definition(K)), rel=1e-12, abs=1e-15)


def test_dobrushin_of_krr_and_of_disjoint_rows():
    # k-RR with e^eps = 3, k = 4: every pair of rows differs by (3 − 1)/(3 + 3) in two places, TV = 1/3
    e, k = 3.0, 4
    K = np.full((k, k), 1 / (e + k - 1))
    np.fill_diagonal(K, e / (e + k - 1))
    assert measures.dobrushin(K) == pytest.approx(1 / 3, rel=1e-15)
    assert measures.dobrushin(np.eye(5)) == 1.0  # rows with disjoint supports


def test_small_kernels_by_numpy_give_scipys_value_to_the_bit():
    """The numpy path for small kernels (no scipy.spatial import) against scipy's cityblock pdist."""
    import numpy as np
    from scipy.spatial.distance import pdist

    from mechdesign.theory import measures

    rng = np.random.default_rng(7)
    for _ in range(100):
        n, m = int(rng.integers(2, 40)), int(rng.integers(2, 60))
        K = rng.dirichlet(np.ones(m) * 0.5, size=n)
        assert n * n * m <= measures.DOBRUSHIN_NUMPY_ENTRIES
        assert measures.dobrushin(K) == 0.5 * float(pdist(K, "cityblock").max())
