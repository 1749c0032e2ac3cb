"""Extreme rays of the (ε,𝒫)-PML column cone and extremal binary mechanisms.

A kernel is (ε,𝒫)-PML iff every column k = K(:,y) lies in the polyhedral cone

    C(ε,𝒫) = {k ∈ R^N : k ≥ 0,  k_x ≤ e^ε v·k  for every x and every vertex v of 𝒫}

(docs/explanation/mathematics.md, section 'Objectives'). A sublinear utility is maximised by splitting columns into
extreme rays of C, so this module lists them, normalised to max_x r_x = 1.

Known structure (derived by counting tight constraints: an extreme ray of a
cone in R^N has N − 1 linearly independent tight constraints; checked against
cdd in tests/privacy/test_extremes.py):

* ``simplex`` (ε-LDP): the 2^N − 2 staircase vectors with levels {e^−ε, 1}
  (Kairouz, Oh, Viswanath).
* ``min_mass`` Q_X(c), 0 < c < 1/N: the tight constraints are the zeros and
  max k = e^ε(c Σk + (1 − Nc) min k), so a ray has two levels or a zero.
  - two-level (Remark 2 of the Dobrushin paper): q entries at 1, N − q at
    m_q = (1 − e^ε c q)/(e^ε (1 − c q)), for each q with e^ε c q < 1;
  - with zeros (Lemma 1 allows them when e^ε c ≥ 1/(N − 1)): a entries at 1,
    one entry w, the rest 0, where t = e^−ε/c, a = ⌈t⌉ − 1, w = t − a ∈ (0, 1]
    (the tight constraint max k = e^ε c Σk), when a + 1 ≤ N − 1;
    for e^ε c ≥ 1 the cone is the orthant and the rays are the unit vectors.
  c = 0 is the simplex, c = 1/N the uniform point prior.
* ``point`` P: C ∩ {e^ε P·k = 1} = {0 ≤ k ≤ 1, P·k = e^−ε} is a box cut by a
  hyperplane, whose vertices have at most one fractional entry: k = 1_A + w e_j
  with w = (e^−ε − P(A))/P_j ∈ [0, 1]. The envelopes paper's Theorem 4
  mechanism is made of such rays (A = X ∖ {j}).
* ``hull``, ``box``, ``l1_ball``: vertex enumeration with cdd (pycddlib), after
  listing the vertices of 𝒫 (with cdd too for box and l1_ball).

The structured lists have 2^N (min_mass, simplex) or N·2^(N−1) (point) rays,
so they are used up to :data:`STRUCTURED_MAX_N`; cdd's double-description
method is used up to :data:`CDD_MAX_N` (the number of cone facets grows like
N·V and the enumeration time explodes past it).
"""

from __future__ import annotations

import math

import numpy as np

from mechdesign.spec.errors import InputError
from mechdesign.privacy.priors import rules, vertices
from mechdesign.spec.models import PriorSet

__all__ = [
    "extreme_rays",
    "structured_rays",
    "cdd_rays",
    "prior_vertices",
    "cone_inequalities",
    "binary_extremes",
    "STRUCTURED_MAX_N",
    "CDD_MAX_N",
    "count_structured_rays",
    "unique_rows",
    "listing_is_complete",
    "LISTING_PROBES",
    "checked_cone_rays",
    "checked_vertices",
]

STRUCTURED_MAX_N = 16
"""Largest N for which all structured rays are listed (2^16 two-level rays, or 16·2^15 for a point prior)."""
CDD_MAX_N = 8
"""Largest N for general vertex enumeration with cdd."""

TOL = 1e-12
TINY_EPSILON = 1e-4
"""Below this ε, :func:`cdd_rays` lists the rays by trying every tight subset of the cone's rows (when
affordable) instead of cdd, whose floating-point tolerances merged the rays of C(1e−9, 𝒫), which differ
by O(ε), into the single ray 1: the ray LP then had one column."""


def _require_cdd():
    try:
        import cdd  # noqa: F401  (package pycddlib-standalone)
    except ImportError:  # pragma: no cover - depends on the environment
        raise InputError(
            "vertex enumeration for this prior set or size needs pycddlib: pip install "
            "'mechdesign[cdd]' (package pycddlib-standalone; where no wheel exists it compiles "
            "from source and needs a C compiler). Without it: simplex, min_mass and point prior "
            "sets, whose extreme rays are known in closed form"
        ) from None
    return cdd


def unique_rows(R: np.ndarray, digits: int | None = 10) -> np.ndarray:
    """Rows of R with duplicates (to ``digits`` decimals; None: bit for bit) removed, in a stable order."""
    if len(R) == 0:
        return R
    _, idx = np.unique(R if digits is None else np.round(R, digits), axis=0, return_index=True)
    return R[np.sort(idx)]


def _normalise(R: np.ndarray) -> np.ndarray:
    """Rays scaled to max entry 1, exact duplicates removed. Only exact ones: the bound of the ray LP is a maximum
    over every ray listed, and two rays within 1e-10 of each other (at ε ≈ 1e-16 every ray is) can have utilities
    far apart next to a large slope of μ (f_α, α = 100); merging them would drop a ray from that maximum."""
    R = np.asarray(R, float)
    R = R[R.max(axis=1) > 0]
    return unique_rows(R / R.max(axis=1, keepdims=True), None)


def count_structured_rays(prior_set: PriorSet, n: int) -> int | None:
    """An upper bound on the number of structured rays (None when cdd is needed)."""
    return rules(prior_set, n).structured_ray_count()


def structured_rays(prior_set: PriorSet, n: int, epsilon: float) -> np.ndarray:
    """The extreme rays of C(ε,𝒫) for simplex, min_mass and point, from their known form (max entry 1)."""
    return _normalise(rules(prior_set, n).structured_rays(epsilon))


# ------------------------------------------------------------------ general (cdd)
def prior_vertices(prior_set: PriorSet, n: int) -> np.ndarray:
    """The vertices of 𝒫 as a (V, N) array (cdd for box and l1_ball)."""
    listed = vertices(prior_set, n)
    if listed is not None:
        return np.array([[float(p) for p in v] for v in listed])
    if n > CDD_MAX_N + 4:
        raise InputError(f"listing the vertices of a {prior_set.kind} prior set needs N <= {CDD_MAX_N + 4}, found {n}")
    cdd = _require_cdd()
    rows, lin = [], []
    rows.append([-1.0] + [1.0] * n)  # Σ P = 1 (as an equality)
    lin.append(0)
    for x in range(n):
        e = [0.0] * n
        e[x] = 1.0
        rows.append([0.0] + e)  # P_x ≥ 0
    rows += rules(prior_set, n).polytope_rows()
    mat = cdd.matrix_from_array(rows, lin_set=lin, rep_type=cdd.RepType.INEQUALITY)
    try:
        gen = cdd.copy_generators(cdd.polyhedron_from_matrix(mat))
        V = np.array([row[1:] for row in gen.array if abs(row[0] - 1) < 1e-12])
    except RuntimeError:  # cdd's "Numerical inconsistency" (ℓ1-ball of radius 1e-6): every tight subset
        H = np.array(rows[1:], float)
        V = _brute_force(H[:, 1:], H[:, 0], np.ones((1, n)), np.ones(1))
    return unique_rows(np.clip(V, 0.0, 1.0))


def _brute_force(A, b, E, e):
    from mechdesign.privacy.brute_vertices import brute_force_vertices

    try:
        return brute_force_vertices(A, b, E, e)
    except ValueError as exc:
        raise InputError(f"prior_set: vertex enumeration failed in floating point (cdd) and {exc}") from None


def cone_inequalities(prior_set: PriorSet, n: int, epsilon: float) -> np.ndarray:
    """Rows g with C(ε,𝒫) = {k : g·k ≥ 0}: k_x ≥ 0 and v·k − e^−ε k_x ≥ 0 (no overflow for large ε)."""
    V = prior_vertices(prior_set, n)
    inv = math.exp(-epsilon)
    rows = [np.eye(n)]
    for v in V:
        rows.append(v[None, :] - inv * np.eye(n))
    return np.vstack(rows)


NEAR_ROW_DIGITS = 6
"""Rows of the cone's inequalities that agree to this many decimals but not to 14 make it near-degenerate."""


LISTING_PROBES = 40
"""Random linear objectives whose LP maximum over a polytope its listed vertices must attain (:func:`listing_is_complete`)."""


def listing_is_complete(rows: np.ndarray, V: np.ndarray, probes: int = LISTING_PROBES, tol: float = 1e-7) -> bool:
    """A check of cdd's floating-point vertex list V of the polytope {x : b + A x ≥ 0} (``rows`` = [b, A]): every
    listed point satisfies the rows (to ``tol``), and for ``probes`` random directions c (seeded) the best listed
    point v is a maximum of c·x over the polytope. In exact arithmetic both hold for the complete list; cdd's double
    description in floats can drop vertices without raising (measured: min_mass c = 0.0759, N = 4, M = 3,
    ε = 2.578125, 155 of the 691 vertices, the best Bayes vulnerability 0.874991 against 0.875, for the M-output
    kernels of mechdesign.engines.fixed_outputs), and then some direction's maximum is at a vertex it dropped.

    Each probe first tries the optimality conditions at v (Karush–Kuhn–Tucker): c = −A_Tᵀ y with y ≥ 0 over the
    rows T tight at v (slack ≤ :data:`TIGHT` of the row's size), a nonnegative least-squares problem of N(M − 1)
    unknowns. When they hold, for every feasible x, c·x = −yᵀA_T x ≤ yᵀb_T = c·v + yᵀ(b_T + A_T v): v is a maximum
    up to the rows' slack. When they do not (a degenerate or slightly inexact v), the probe compares c·v with the
    LP maximum (HiGHS, to ``tol`` relative: its feasibility tolerance is 1e-7; one model, re-solved from the last
    basis as the cost changes). The probes are evidence, not a proof: a list that passes them and still misses a
    vertex is not known."""
    from scipy.optimize import nnls

    b, A = rows[:, 0], rows[:, 1:]
    if len(V) == 0:
        return False
    size = 1.0 + np.abs(b) + np.abs(A).sum(axis=1)
    slack = (b[:, None] + A @ V.T) / size[:, None]
    if slack.min() < -tol:
        return False
    lp = None
    rng = np.random.default_rng(0)
    for _ in range(probes):
        c = rng.standard_normal(A.shape[1])
        top = int(np.argmax(V @ c))
        tight = slack[:, top] <= TIGHT
        if tight.any():
            _, residual = nnls(-A[tight].T, c)
            if residual <= TIGHT * float(np.linalg.norm(c)):
                continue
        if lp is None:
            lp = _ProbeLP(b, A)
        best = lp.maximum(c)
        if best is None or float(V[top] @ c) < best - tol * (1.0 + abs(best)):
            return False
    return True


TIGHT = 1e-9
"""A row is tight at a listed point when its slack is at most this share of the row's size (1 + |b_i| + Σ|A_ij|);
the optimality conditions of :func:`listing_is_complete` hold when their residual is at most this share of ‖c‖."""


class _ProbeLP:
    """max c·x over {x : b + A x ≥ 0} for changing c: one HiGHS model, each solve from the last basis."""

    def __init__(self, b: np.ndarray, A: np.ndarray):
        import highspy

        from mechdesign.lp.highs import configured_highs

        self.h = h = configured_highs("warm_simplex")
        d = A.shape[1]
        h.addCols(d, np.zeros(d), np.full(d, -highspy.kHighsInf), np.full(d, highspy.kHighsInf), 0, [], [], [])
        rows_i, cols_j = np.nonzero(A)  # row-wise order: A x ≥ −b as HiGHS's compressed rows
        starts = np.searchsorted(rows_i, np.arange(len(A))).astype(np.int32)
        h.addRows(
            len(A),
            -b,
            np.full(len(A), highspy.kHighsInf),
            len(rows_i),
            starts,
            cols_j.astype(np.int32),
            A[rows_i, cols_j],
        )
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        self.idx = np.arange(d, dtype=np.int32)

    def maximum(self, c: np.ndarray) -> float | None:
        """The LP maximum of c·x, or None when HiGHS does not end optimal."""
        import highspy

        from mechdesign.lp.interrupt import run_interruptible

        self.h.changeColsCost(len(c), self.idx, c)
        run_interruptible(self.h)
        if self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        return float(self.h.getInfo().objective_function_value)


def _cdd_listings(rows: np.ndarray):
    """cdd's generators of {x : b + A x ≥ 0} (``rows`` = [b, A]) as arrays [t, x] (t = 1: a vertex, t = 0: a ray),
    from the rows as given and then from the rows scaled to unit ∞-norm (cdd's tolerances are absolute, so a listing
    that fails on one can pass on the other); a listing for which cdd raises ("Numerical inconsistency") is
    skipped."""
    cdd = _require_cdd()
    scaled = rows / np.maximum(np.abs(rows).max(axis=1, keepdims=True), 1e-300)
    for listed in (rows, scaled):
        mat = cdd.matrix_from_array(listed.tolist(), rep_type=cdd.RepType.INEQUALITY)
        try:
            gen = cdd.copy_generators(cdd.polyhedron_from_matrix(mat))
        except RuntimeError:
            continue
        yield np.array(gen.array, float).reshape(-1, rows.shape[1])


def checked_vertices(rows: np.ndarray) -> np.ndarray | None:
    """The vertices of the polytope {x : b + A x ≥ 0} (``rows`` = [b, A]) by cdd's floating-point double
    description, from the first listing of :func:`_cdd_listings` that passes :func:`listing_is_complete`; None when
    none does."""
    for gen in _cdd_listings(rows):
        V = gen[np.abs(gen[:, 0] - 1) < 1e-12, 1:]
        if listing_is_complete(rows, V):
            return V
    return None


def checked_cone_rays(G: np.ndarray) -> np.ndarray | None:
    """The extreme rays, scaled to Σk = 1, of a pointed cone {k : G k ≥ 0} in the nonnegative orthant (G holds rows
    implying k ≥ 0) by cdd's floating-point double description, from the first listing of :func:`_cdd_listings`
    whose rays pass :func:`listing_is_complete` as the vertices of the section {G k ≥ 0, Σk = 1}; None when none
    does. A dropped ray would make every bound computed over the listed rays (a pricing over them) too high."""
    n = G.shape[1]
    section = np.vstack(
        [np.hstack([np.zeros((len(G), 1)), G]), np.r_[-1.0, np.ones(n)][None, :], np.r_[1.0, -np.ones(n)][None, :]]
    )
    for gen in _cdd_listings(np.hstack([np.zeros((len(G), 1)), G])):
        R = np.clip(gen[np.abs(gen[:, 0]) < 1e-12, 1:], 0.0, None)
        R = R[R.sum(axis=1) > 0]
        R = R / R.sum(axis=1, keepdims=True)
        if listing_is_complete(section, R):
            return R
    return None


def cdd_rays(prior_set: PriorSet, n: int, epsilon: float) -> np.ndarray:
    """The extreme rays of C(ε,𝒫), max entry 1: cdd's floating-point double description when its list passes
    :func:`checked_cone_rays` and holds the constant column, else (and for tiny ε or near-equal rows) every tight
    subset of the rows."""
    if n > CDD_MAX_N:
        raise InputError(f"general vertex enumeration is limited to N <= {CDD_MAX_N}, found N = {n}")
    G = cone_inequalities(prior_set, n, epsilon)
    if epsilon < TINY_EPSILON:  # cdd's tolerances merge rays that differ by O(ε): try every tight subset
        from mechdesign.privacy.brute_vertices import MAX_SUBSETS, brute_force_vertices

        G = unique_rows(G, 15)
        if math.comb(len(G), n - 1) <= MAX_SUBSETS:
            R = brute_force_vertices(G, np.zeros(len(G)), np.ones((1, n)), np.ones(1), tol=1e-15)
            return _normalise(np.clip(R, 0.0, None)) if len(R) else np.zeros((0, n))
    from mechdesign.privacy.brute_vertices import MAX_SUBSETS

    distinct = unique_rows(G, 14)
    if len(unique_rows(G, NEAR_ROW_DIGITS)) < len(distinct) and math.comb(len(distinct), n - 1) <= MAX_SUBSETS:
        # rows that agree to 1e-6 but differ (an ℓ1-ball of radius 1e-6): cdd's floating-point double
        # description can drop rays there without raising; every tight subset is tried instead
        R = _brute_force(distinct, np.zeros(len(distinct)), np.ones((1, n)), np.ones(1))
        return _normalise(np.clip(R, 0.0, None)) if len(R) else np.zeros((0, n))
    R = checked_cone_rays(G)
    if R is None or not _rays_hold_the_constant_column(G, R):
        # cdd's "Numerical inconsistency", or a listing that failed its checks: the rays are the vertices of
        # C ∩ {Σk = 1}, found by trying every tight subset
        G = unique_rows(G, 14)
        R = _brute_force(G, np.zeros(len(G)), np.ones((1, n)), np.ones(1))
    if len(R) == 0:
        return np.zeros((0, n))
    return _normalise(np.clip(R, 0.0, None))


def _rays_hold_the_constant_column(G: np.ndarray, R: np.ndarray, tol: float = 1e-9) -> bool:
    """A check of cdd's floating-point output: every ray lies in the cone {k : G k ≥ 0} (to ``tol``
    relative) and the cone of the rays holds the all-ones column (the constant kernel's column, which is
    in every C(ε,𝒫)), so Σ_y θ_y r_y = 1 is solvable over them. Near-degenerate cones (the rows of an
    ℓ1-ball of radius 1e-6 agree to 1e-6) can make the double description drop rays without raising."""
    from scipy.optimize import nnls

    if len(R) == 0:
        return False
    Rn = R / np.abs(R).max(axis=1, keepdims=True)
    if (Rn @ G.T).min() < -tol * max(1.0, float(np.abs(G).max())):
        return False
    _, residual = nnls(Rn.T, np.ones(R.shape[1]))
    return residual <= tol * math.sqrt(R.shape[1])


def extreme_rays(prior_set: PriorSet, n: int, epsilon: float) -> np.ndarray:
    """All extreme rays of C(ε,𝒫), max entry 1: structured for simplex/min_mass/point, else cdd."""
    if rules(prior_set, n).structured_ray_count() is not None:
        if n > STRUCTURED_MAX_N:
            raise InputError(f"listing all extreme rays is limited to N <= {STRUCTURED_MAX_N}, found N = {n}")
        return structured_rays(prior_set, n, epsilon)
    return cdd_rays(prior_set, n, epsilon)


# ------------------------------------------------------------------ binary mechanisms
def binary_extremes(prior_set: PriorSet, n: int, epsilon: float) -> np.ndarray:
    """Vertices p of the binary (ε,𝒫)-PML kernels [p, 1 − p], by cdd (N ≤ CDD_MAX_N).

    The polytope is {p : p ∈ C(ε,𝒫), 1 − p ∈ C(ε,𝒫)}; its vertices include the
    constant kernels p = 0 and p = 1 and, for min_mass, the Remark 2 kernels.
    Rows are sorted by decreasing Dobrushin coefficient max p − min p.
    """
    if n > CDD_MAX_N:
        raise InputError(f"enumerating binary extremal mechanisms is limited to N <= {CDD_MAX_N}, found N = {n}")
    G = cone_inequalities(prior_set, n, epsilon)
    # g·p ≥ 0 and g·(1 − p) ≥ 0  ⇔  (g·1) − g·p ≥ 0
    rows = np.vstack([np.hstack([np.zeros((len(G), 1)), G]), np.hstack([G.sum(axis=1, keepdims=True), -G])])
    try:
        cdd = _require_cdd()
    except InputError:  # base install: brute force on small problems (mechdesign.privacy.vertex_enum)
        from mechdesign.privacy.vertex_enum import polytope_vertices

        P = polytope_vertices(rows[:, 1:], -rows[:, 0])
        if P is None:
            raise
    else:
        mat = cdd.matrix_from_array(rows.tolist(), rep_type=cdd.RepType.INEQUALITY)
        gen = cdd.copy_generators(cdd.polyhedron_from_matrix(mat))
        P = np.array([row[1:] for row in gen.array if abs(row[0] - 1) < 1e-12])
    P = unique_rows(np.clip(P, 0.0, 1.0))
    order = np.argsort(-(P.max(axis=1) - P.min(axis=1)), kind="stable")
    return P[order]
