"""Repeated release and composition: what k reports of one person, or two mechanisms on independent
secrets, cost in (ε,𝒫)-PML and in LDP.

**k independent uses of one kernel** (the product channel K^{⊗k}: X → Y^k, K^k_x(y_1..y_k) = Π_i K_x(y_i)).
A column of K^{⊗k} depends on the output sequence only through its multiset of outputs — the counts
n_y with Σ_y n_y = k — since Π_i K_x(y_i) = Π_y K_x(y)^{n_y}. So

    ε_k(𝒫) = sup_{P∈𝒫} max_{y^k} ℓ(X→y^k) = max over multisets n of log max_x c_x / min_{P∈𝒫} P·c,
    c_x = Π_y K_x(y)^{n_y},

a maximum over C(M + k − 1, k) columns instead of M^k, computed here exactly in rational arithmetic.

* LDP is additive, exactly: LDP(K^{⊗k}) = k · LDP(K). For a pair (x, x') the log-ratio of a sequence is
  Σ_i log K_x(y_i)/K_x'(y_i), maximised by repeating the output that maximises one term.
* Where the multisets are too many, a proved bound is reported instead (``exact=False``):
  ε_k ≤ min{k · LDP(K), log 1/p_min}, where p_min = min over P∈𝒫 and x of P(x). The first holds because
  min_{P} P·c ≥ min_x c_x; the second because max_x c_x / P·c ≤ 1/P(x*) for the maximising row x*
  (the bound of the envelopes paper, eq. 6, applied to the product channel).

**Two kernels on independent secrets** (parallel composition: K1 on X1, K2 on X2, prior P1 ⊗ P2 with
P1 ∈ 𝒫1, P2 ∈ 𝒫2). The column of (y1, y2) is a ⊗ b with a = K1(:,y1), b = K2(:,y2); the numerator
max_{x1,x2} a(x1)b(x2) = max a · max b and the denominator Σ P1(x1)P2(x2) a(x1)b(x2) = (P1·a)(P2·b)
both factorise, so ℓ(X1X2 → y1y2) = ℓ(X1→y1) + ℓ(X2→y2) and the supremum over product priors is
C(K1, 𝒫1) + C(K2, 𝒫2) exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from mechdesign.privacy.registry import rules
from mechdesign.theory import measures

__all__ = ["RepeatedRelease", "repeated_release", "parallel_composition", "product_kernel", "MAX_MULTISETS"]

MAX_MULTISETS = 200_000
"""Largest number of output multisets C(M + k − 1, k) enumerated exactly; past it, the proved bound."""


@dataclass(frozen=True)
class RepeatedRelease:
    """The cost of k reports of one person through the same kernel."""

    k: int
    epsilon: float
    """ε_k: sup over 𝒫 of max over y^k of ℓ(X→y^k), nats (exact, or the proved bound when ``exact`` is False)."""
    exact: bool
    method: str
    ldp: float
    """LDP(K^{⊗k}) = k · LDP(K), exactly (inf when a column mixes zeros and non-zeros)."""
    worst_counts: tuple[int, ...] | None = None
    """Counts n_y of the output multiset attaining ε_k (exact method only)."""
    multisets: int = 0

    def sentence(self) -> str:
        how = "exact, over every output multiset" if self.exact else "a proved upper bound"
        return (
            f"{self.k} reports cost eps_{self.k} = {self.epsilon:.6g} nats ({how}); "
            f"LDP of the {self.k} reports = {self.ldp:.6g} nats"
        )


def _multisets(m: int, k: int):
    """All count vectors (n_0..n_{M−1}) with Σ n_y = k, in lexicographic order."""
    if m == 1:
        yield (k,)
        return
    for first in range(k, -1, -1):
        for rest in _multisets(m - 1, k - first):
            yield (first,) + rest


def _min_mass(prior_set, n: int) -> Fraction:
    """min over P∈𝒫 and x of P(x), exactly (0 for the simplex)."""
    r = rules(prior_set, n)
    return min(Fraction(r.min_expectation([Fraction(int(i == x)) for i in range(n)])[0]) for x in range(n))


def repeated_release(K, prior_set, k: int, max_multisets: int = MAX_MULTISETS) -> RepeatedRelease:
    """ε_k(𝒫) of k independent uses of ``K`` (module docstring), exactly when the C(M + k − 1, k) output
    multisets number at most ``max_multisets``, else the proved bound min{k·LDP(K), log 1/p_min}.

    ``K`` is any kernel (ExactKernel, Fractions, floats read as their exact values); ``prior_set`` a
    spec prior-set model (any kind). Domain: k ≥ 1.
    """
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be an integer >= 1, found {k!r}")
    rows = measures._frac_matrix(K)
    n, m = len(rows), len(rows[0])
    ldp_k = k * measures.ldp(rows)
    count = math.comb(m + k - 1, k)
    if count > max_multisets:
        p_min = _min_mass(prior_set, n)
        cap = math.inf if p_min == 0 else -measures._log(p_min)
        return RepeatedRelease(
            k=k,
            epsilon=min(ldp_k, cap),
            exact=False,
            ldp=ldp_k,
            multisets=count,
            method=f"bound min(k LDP(K), log 1/p_min): {count} output multisets > {max_multisets}",
        )
    r = rules(prior_set, n)
    cols = [[row[y] for row in rows] for y in range(m)]
    worst: Fraction | float = Fraction(1)
    worst_counts = None
    for counts in _multisets(m, k):
        c = [Fraction(1)] * n
        for y, ny in enumerate(counts):
            if ny:
                col = cols[y]
                c = [cx * col[x] ** ny for x, cx in enumerate(c)]
        top = max(c)
        if top == 0:
            continue
        low = Fraction(r.min_expectation(c)[0])
        ratio = math.inf if low <= 0 else top / low
        if ratio > worst:
            worst, worst_counts = ratio, counts
            if ratio == math.inf:
                break
    return RepeatedRelease(
        k=k,
        epsilon=measures._log(worst),
        exact=True,
        ldp=ldp_k,
        worst_counts=worst_counts,
        multisets=count,
        method=f"exact over {count} output multisets",
    )


def product_kernel(K1, K2) -> list[list[Fraction]]:
    """The kernel of (X1, X2) → (Y1, Y2) with independent uses: row (x1, x2), column (y1, y2), in
    row-major order (x1 slow), entries K1_x1(y1) K2_x2(y2), exactly."""
    A, B = measures._frac_matrix(K1), measures._frac_matrix(K2)
    return [[a * b for a in ra for b in rb] for ra in A for rb in B]


def parallel_composition(K1, prior_set1, K2, prior_set2) -> float:
    """sup over independent priors P1 ⊗ P2 (P1 ∈ 𝒫1, P2 ∈ 𝒫2) of the PML of (K1, K2) on independent
    secrets: C(K1, 𝒫1) + C(K2, 𝒫2), exactly (module docstring). LDP composes the same way."""
    return measures.leakage_capacity(K1, prior_set1) + measures.leakage_capacity(K2, prior_set2)
