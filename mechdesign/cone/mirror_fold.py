"""The restricted LP of output generation folded by the reflection x ↦ N−1−x, y ↦ M−1−y.

When the costs are reflection invariant, C_xy = C_{σx,τy} with σx = N−1−x and τy = M−1−y (and so is the
epigraph's loss G, e.g. |x − y| or (x − y)² with N = M), and the privacy set is invariant under permutations of
X (Q_X(c), the simplex), an optimum symmetric under the reflection exists: the LP is convex, its feasible set
and objective are invariant, so the average of an optimum and its reflection K'_xy = K_{σx,τy} is an optimum.
Output generation then solves the LP over symmetric kernels only, written over

- one *representative* output j per orbit {y, τy}: ``reps[j]`` = y ≤ τy, with weight γ_j = 1 for a pair and
  1/2 for the middle output y = τy (M odd);
- one *folded row* h per orbit {x, σx}: ``row_of[x]`` = min(x, σx), right-hand side 1 for a pair and 1/2 for
  the middle row x = σx (N odd).

The symmetric kernel of representative columns k_j ∈ 𝒦 is K(:, y) = k_j and K(:, τy) = reversed k_j for a pair,
K(:, y) = (k_j + reversed k_j)/2 for the middle output (in 𝒦: 𝒦 is convex and permutation invariant). Its
row sums and epigraph rows are equal on x and σx, so each orbit keeps one row: in the folded LP

    minimise   Σ_j Σ_x 2γ_j C_{x,y_j} k_j(x) + a τ
    s.t.       Σ_j Σ_{x: row_of[x] = h} γ_j k_j(x) = rhs_h                      (h, the folded row sums)
               Σ_j Σ_{x: row_of[x] = h} γ_j G_{x,y_j} k_j(x) − rhs_h τ ≤ 0       (h, the folded epigraph rows)
               k_j ∈ 𝒦                                                         (j)

(a pair row is row x of the full LP; the middle row is half of it), and its objective is the full objective
of the symmetric kernel. **Duals.** With multipliers π'_h, μ'_h of the folded rows, π_x = π'_{row_of[x]}/2 and
μ_x = μ'_{row_of[x]}/2 are multipliers of the full LP under which the folded reduced cost of k_j(x) is 2γ_j
times the full one of K_{x,y_j}, Σ_x π_x = Σ_h rhs_h π'_h and Σ_x μ_x = Σ_h rhs_h μ'_h (τ's reduced cost). The
full LP's Lagrangian bound at (π, μ) is Σ_x π_x + Σ_y min(0, p_y) with p_{τy} = p_y (π, μ are symmetric), so
every output is priced through its representative, counted ``multiplicity`` = 2 (pair) or 1 (middle) times.
The bound a design reports is always evaluated on the full LP (:func:`mechdesign.cone.lagrangian_bound`), so it
is a true bound whatever the folding did; the fold only makes the restricted LP half as large.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MirrorFold", "reflection_invariant"]


def reflection_invariant(C: np.ndarray, G: np.ndarray | None = None) -> bool:
    """C_xy = C_{N−1−x, M−1−y} exactly (and the same for G when given)."""
    return bool(np.array_equal(C, C[::-1, ::-1])) and (G is None or bool(np.array_equal(G, G[::-1, ::-1])))


@dataclass(frozen=True)
class MirrorFold:
    """Folded rows and representative outputs (module doc); :meth:`identity` folds nothing."""

    n: int
    m: int
    row_of: np.ndarray
    """x ↦ its folded row h."""
    rhs: np.ndarray
    """Right-hand side of folded row h (1, or 1/2 for the middle row); also τ's coefficient in epigraph row h."""
    reps: np.ndarray
    """Representative output y_j of orbit j."""
    gamma: np.ndarray
    """γ_j: 1 for a pair, 1/2 for the middle output (and 1 everywhere in :meth:`identity`)."""
    multiplicity: np.ndarray
    """How many outputs orbit j stands for (2 for a pair, 1 for the middle output or without folding)."""
    folded: bool

    @classmethod
    def identity(cls, n: int, m: int) -> MirrorFold:
        return cls(n, m, np.arange(n), np.ones(n), np.arange(m), np.ones(m), np.ones(m, dtype=np.int64), False)

    @classmethod
    def reflection(cls, n: int, m: int) -> MirrorFold:
        x = np.arange(n)
        row_of = np.minimum(x, n - 1 - x)
        rows = (n + 1) // 2
        rhs = np.ones(rows)
        if n % 2:
            rhs[rows - 1] = 0.5
        reps = np.arange((m + 1) // 2)
        middle = reps == m - 1 - reps
        gamma = np.where(middle, 0.5, 1.0)
        multiplicity = np.where(middle, 1, 2).astype(np.int64)
        return cls(n, m, row_of, rhs, reps, gamma, multiplicity, True)

    @property
    def num_rows(self) -> int:
        return int(self.rhs.size)

    @property
    def objective_weight(self) -> np.ndarray:
        """2γ_j when folded (the full objective of the symmetric kernel), 1 otherwise."""
        return 2.0 * self.gamma if self.folded else self.gamma

    def full_multipliers(self, folded_rows: np.ndarray) -> np.ndarray:
        """π_x = π'_{row_of[x]}/2 from the folded rows' multipliers π' (module doc, **Duals**)."""
        folded_rows = np.asarray(folded_rows, float)
        return folded_rows[self.row_of] / 2.0 if self.folded else folded_rows.copy()

    def fold_rows(self, V: np.ndarray) -> np.ndarray:
        """Σ over x with row_of[x] = h of the rows of V (N × j ↦ folded rows × j)."""
        if not self.folded:
            return V
        out = V[: self.num_rows].copy()  # row h < N/2 also takes row N−1−h; the middle row (N odd) only itself
        out[: self.n // 2] += V[::-1][: self.n // 2]
        return out

    def full_columns(self, js: np.ndarray, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The outputs and N × |outputs| columns of the symmetric kernel of representative columns
        ``columns[:, i]`` of orbits ``js[i]`` (sorted outputs)."""
        js = np.asarray(js, dtype=int)
        if not self.folded:
            return self.reps[js], columns
        ys, cols = [], []
        for i, j in enumerate(js.tolist()):
            y, k = int(self.reps[j]), columns[:, i]
            if self.multiplicity[j] == 2:
                ys += [y, self.m - 1 - y]
                cols += [k, k[::-1]]
            else:
                ys.append(y)
                cols.append((k + k[::-1]) / 2.0)
        if not ys:
            return np.zeros(0, dtype=int), np.zeros((self.n, 0))
        order = np.argsort(ys, kind="stable")
        return np.asarray(ys, dtype=int)[order], np.stack(cols, axis=1)[:, order]

    def orbits_of(self, outputs: np.ndarray) -> np.ndarray:
        """The orbits of the given outputs (sorted, unique)."""
        outputs = np.asarray(outputs, dtype=int)
        if not self.folded:
            return np.unique(outputs)
        return np.unique(np.minimum(outputs, self.m - 1 - outputs))
