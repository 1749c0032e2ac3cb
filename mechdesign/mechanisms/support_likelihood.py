"""The maximum-likelihood estimate of P_X from reports whose columns are two-level, with intervals.

Subset selection, unary encoding, Hadamard response and local hashing with a known seed pool share one
likelihood. Report y *supports* a set B_y ⊆ X and its column is K_x(y) = G_y (1 + (r_y − 1) 1{x ∈ B_y}) with
G_y free of x (subset selection: r_y = R of the size |B_y|; unary encoding: r = p(1 − q)/((1 − p) q); local
hashing with pool S: B_{s,v} = h_s⁻¹(v), r = R; Hadamard response: B_y = {x : H[x+1, y] = +1}, r = R). So
P(y) = G_y (1 + ρ_y P(B_y)), ρ_y = r_y − 1, and grouping equal reports (weight w_j = how many reports are y_j;
local hashing groups by (seed, value)) the log-likelihood is

    L(P) = Σ_j w_j log(1 + ρ_j P(B_j)) + const,    concave on the simplex.

**EM** (the iterative Bayesian update, Agrawal and Aggarwal 2001): P_x ← P_x g_x with
g_x = (1/n) Σ_j w_j (1 + ρ_j 1{x ∈ B_j}) / (1 + ρ_j P(B_j)) and Σ_x P_x g_x = 1; as L is concave,
(L* − L(P))/n ≤ max_x g_x − 1, and EM stops when this certified gap is ≤ ``tol``. It is accelerated by
SQUAREM (Varadhan and Roland 2008, scheme S3), keeping the plain EM point whenever the extrapolation leaves the
simplex or lowers L. :func:`support_mle` runs many data sets at once (the rows of a bootstrap), each with its
own step length and stopping time, in O(Σ_j |B_j|) per map.

**Asymptotic intervals.** The score of one report is s_y = K(:,y) / (Pᵀ K(:,y)) = a_y / (1 + ρ_y P(B_y)),
a_y = 1 + ρ_y 1_{B_y}, and the information of n reports is

    n J(P) = Σ_j w_j a_j a_jᵀ / (1 + ρ_j P(B_j))²  (= −∇²L(P), the observed information)
           = (Σ_j u_j) 11ᵀ + 1 vᵀ + v 1ᵀ + Σ_j u_j ρ_j² 1_{B_j} 1_{B_j}ᵀ,   u_j = w_j / (1 + ρ_j P(B_j))²,
                                                                            v = Σ_j u_j ρ_j 1_{B_j},

whose expectation under P is n times the Fisher information of one report, Σ_y K(:,y) K(:,y)ᵀ / (Pᵀ K(:,y)).
That expectation has no closed form for these families (it is a sum over all C(N, d) subsets or 2^N bit
vectors of a function of P(B)), so the standard errors use the observed information at P̂ (Efron and
Hinkley, *Assessing the accuracy of the maximum likelihood estimator: observed versus expected Fisher
information*, Biometrika 1978, recommend it anyway). The MLE on the simplex {1ᵀP = 1} has asymptotic
covariance C / n with the constrained Cramér–Rao matrix (Aitchison and Silvey 1958; Gorman and Hero 1990)

    C = J⁻¹ − J⁻¹ 1 1ᵀ J⁻¹ / (1ᵀ J⁻¹ 1)    (= J⁻¹ − P Pᵀ, since J P = 1 at an interior maximiser),

and the Wald interval P̂_x ± z √(C_xx / n) is clipped to [0, 1]. Forming n J costs O(Σ_j |B_j|²) and
inverting it O(N³): above :data:`INFORMATION_LIMIT` or :data:`INFORMATION_MAX_SYMBOLS` there are no asymptotic
intervals (the estimate says so).

**Parametric bootstrap** (Efron and Tibshirani, *An Introduction to the Bootstrap*, 1993, §6.5 and ch. 13):
B data sets of n reports are drawn through the mechanism's own exact sampler from the fitted P̂ (n symbols
i.i.d. from P̂, each released by :meth:`StructuredMechanism.privatize_indices`, all from one seeded
``numpy.random.default_rng(seed)``), refitted by the same EM warm-started at P̂, and the standard error is
their standard deviation; intervals are the bootstrap percentiles, as for explicit kernels
(:mod:`mechdesign.release.estimate`). Simultaneous bands use Bonferroni (level 1 − α/N per symbol) in both.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mechdesign.spec.errors import InputError

__all__ = [
    "SupportSets",
    "support_mle",
    "observed_information",
    "constrained_covariance",
    "sets_of_reports",
    "INFORMATION_LIMIT",
    "INFORMATION_MAX_SYMBOLS",
    "BOOTSTRAP_AUTO_LIMIT",
    "BOOTSTRAP_AUTO_REPORTS",
]

INFORMATION_LIMIT = 3 * 10**8
"""Largest Σ_j |B_j|² (work to form the observed information) for asymptotic intervals."""
INFORMATION_MAX_SYMBOLS = 3000
"""Largest N for which the N × N information matrix is formed and inverted."""
BOOTSTRAP_AUTO_LIMIT = 10**6
"""``intervals="auto"`` bootstraps when B · Σ_j |B_j| over the grouped reports (the work of one EM map over all B
resamples) is at most this, and uses the asymptotic intervals above it. Small alphabets (N ≤ 62 groups equal
reports: at most C(N, d), 2^N or pool · g distinct ones) bootstrap in well under a second; with many distinct
reports, and masses at 0 where EM converges slowly, B refits take minutes (N = 30, n = 3000, B = 200: about
two minutes), while the asymptotic intervals take milliseconds."""
BOOTSTRAP_AUTO_REPORTS = 2 * 10**7
"""``intervals="auto"`` also needs B · n (the reports the bootstrap draws, about 2·10⁶ per second) at most this."""
_PACK_MAX_SYMBOLS = 62
"""Up to this N a set is one int64 bit mask, and equal reports are grouped before EM."""


@dataclass
class SupportSets:
    """Grouped reports of one or more data sets: set j = ``positions[offsets[j]:offsets[j + 1]]`` (sorted
    symbols) belongs to data set ``row[j]``, occurs ``weight[j]`` times and has ratio ``rm1[j] + 1``."""

    row: np.ndarray
    offsets: np.ndarray
    positions: np.ndarray
    rm1: np.ndarray
    weight: np.ndarray
    n_rows: int

    @property
    def owner(self) -> np.ndarray:
        return np.repeat(np.arange(self.row.size), np.diff(self.offsets))

    @staticmethod
    def concatenate(parts: list["SupportSets"]) -> "SupportSets":
        offsets = [np.zeros(1, dtype=np.int64)]
        rows, shift, base = [], 0, 0
        for part in parts:
            offsets.append(part.offsets[1:] + base)
            base += int(part.offsets[-1])
            rows.append(part.row + shift)
            shift += part.n_rows
        return SupportSets(
            row=np.concatenate(rows),
            offsets=np.concatenate(offsets),
            positions=np.concatenate([p.positions for p in parts]),
            rm1=np.concatenate([p.rm1 for p in parts]),
            weight=np.concatenate([p.weight for p in parts]),
            n_rows=shift,
        )

    def rows_subset(self, keep: np.ndarray) -> "SupportSets":
        """The data sets ``keep`` (sorted row indices), renumbered 0..len(keep) − 1."""
        new = np.full(self.n_rows, -1, dtype=np.int64)
        new[keep] = np.arange(keep.size)
        sel = new[self.row] >= 0
        sizes = np.diff(self.offsets)[sel]
        offsets = np.zeros(sizes.size + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        positions = self.positions[np.repeat(sel, np.diff(self.offsets))]
        return SupportSets(new[self.row[sel]], offsets, positions, self.rm1[sel], self.weight[sel], int(keep.size))


def sets_of_reports(offsets: np.ndarray, positions: np.ndarray, rm1: np.ndarray, n_symbols: int) -> SupportSets:
    """One data set of set-valued reports (each with its ratio − 1), equal reports grouped when N ≤ 62."""
    offsets = np.asarray(offsets, dtype=np.int64)
    positions = np.asarray(positions, dtype=np.int64)
    n = offsets.size - 1
    rm1 = np.asarray(rm1, dtype=float)
    if n_symbols <= _PACK_MAX_SYMBOLS and n > 0:
        # the bit mask Σ 2^x of each set, as differences of a cumulative sum (wraps modulo 2^64: still exact,
        # each mask being < 2^62)
        cs = np.zeros(positions.size + 1, dtype=np.int64)
        np.cumsum(np.left_shift(np.int64(1), positions), out=cs[1:])
        code = cs[offsets[1:]] - cs[offsets[:-1]]
        _, first, counts = np.unique(code, return_index=True, return_counts=True)
        sizes = np.diff(offsets)[first]
        new_off = np.zeros(first.size + 1, dtype=np.int64)
        np.cumsum(sizes, out=new_off[1:])
        take = np.repeat(offsets[first], sizes) + (np.arange(int(new_off[-1])) - np.repeat(new_off[:-1], sizes))
        return SupportSets(
            np.zeros(first.size, dtype=np.int64), new_off, positions[take], rm1[first], counts.astype(float), 1
        )
    return SupportSets(np.zeros(n, dtype=np.int64), offsets, positions, rm1, np.ones(n), 1)


def _em_map(P: np.ndarray, S: SupportSets, owner: np.ndarray, flat_pos: np.ndarray, n: np.ndarray):
    """(F(P), gap bound max_x g_x − 1, L(P) up to constants) for every row of P (R × N)."""
    R, N = P.shape
    mass = np.bincount(owner, weights=P.ravel()[flat_pos], minlength=S.row.size)
    denom = 1.0 + S.rm1 * mass
    w = S.weight / denom
    g = np.bincount(flat_pos, weights=(S.rm1 * w)[owner], minlength=R * N).reshape(R, N)
    g += np.bincount(S.row, weights=w, minlength=R)[:, None]
    g /= n[:, None]
    F = P * g
    F /= F.sum(axis=1, keepdims=True)
    L = np.bincount(S.row, weights=S.weight * np.log(np.maximum(denom, 1e-300)), minlength=R)
    return F, g.max(axis=1) - 1.0, L


def support_mle(S: SupportSets, n_symbols: int, tol: float = 1e-9, max_iter: int = 10_000, p0=None):
    """The MLE of every data set (row) of ``S`` by EM with SQUAREM (module docstring), from ``p0`` (an N-vector
    or R × N; default uniform; masses at 0 stay at 0). Returns (P (R × N), iterations (R,), gaps (R,))."""
    R, N = S.n_rows, n_symbols
    P = np.full((R, N), 1.0 / N) if p0 is None else np.array(np.broadcast_to(p0, (R, N)), dtype=float)
    iters = np.zeros(R, dtype=np.int64)
    gaps = np.full(R, np.inf)
    active = np.arange(R)  # the rows of P that the data ``sub`` holds, in order
    sub = S
    while active.size:
        owner = sub.owner
        flat_pos = sub.row[owner] * N + sub.positions
        n = np.bincount(sub.row, weights=sub.weight, minlength=sub.n_rows)
        Pa = P[active]
        frozen = np.zeros(active.size, dtype=bool)
        while True:
            running = ~frozen
            iters[active[running]] += 1
            P1, gap, _ = _em_map(Pa, sub, owner, flat_pos, n)
            gaps[active[running]] = gap[running]
            frozen |= running & ((gap <= tol) | (iters[active] >= max_iter))
            if frozen.all():
                P[active] = Pa
                return P, iters, gaps
            if (~frozen).sum() <= 0.75 * active.size:  # compact the data to the rows still running
                P[active] = Pa
                keep = np.flatnonzero(~frozen)
                sub, active = sub.rows_subset(keep), active[keep]
                break
            P2, _, _ = _em_map(P1, sub, owner, flat_pos, n)
            r, v = P1 - Pa, P2 - 2 * P1 + Pa
            nr, nv = np.linalg.norm(r, axis=1), np.linalg.norm(v, axis=1)
            alpha = np.where(nv > 0, np.minimum(-1.0, -nr / np.where(nv > 0, nv, 1.0)), -1.0)[:, None]
            trial = Pa - 2 * alpha * r + alpha * alpha * v
            inside = (trial.min(axis=1) >= 0) & (nv > 0)
            trial = np.where(inside[:, None], trial, P2)
            trial /= trial.sum(axis=1, keepdims=True)
            trial = _em_map(trial, sub, owner, flat_pos, n)[0]  # one stabilising EM map
            L_trial = _em_map(trial, sub, owner, flat_pos, n)[2]
            L_plain = _em_map(P2, sub, owner, flat_pos, n)[2]
            nxt = np.where((inside & (L_trial >= L_plain))[:, None], trial, P2)
            Pa = np.where(frozen[:, None], Pa, nxt)  # rows that stopped keep their point
    return P, iters, gaps


def observed_information(S: SupportSets, p: np.ndarray) -> np.ndarray:
    """J(P̂) = −∇²L(P̂) / n for one data set (module docstring): an N × N matrix, per report."""
    from scipy.sparse import csr_matrix

    N = p.size
    owner = S.owner
    mass = np.bincount(owner, weights=p[S.positions], minlength=S.row.size)
    u = S.weight / (1.0 + S.rm1 * mass) ** 2
    v = np.bincount(S.positions, weights=(u * S.rm1)[owner], minlength=N)
    M = csr_matrix((np.ones(S.positions.size), (S.positions, owner)), shape=(N, S.row.size))
    J = (M.multiply((u * S.rm1**2)[None, :]) @ M.T).toarray()
    J += u.sum() + v[:, None] + v[None, :]
    return J / S.weight.sum()


def information_work(S: SupportSets) -> int:
    """Σ_j |B_j|²: the work to form the observed information."""
    return int((np.diff(S.offsets).astype(np.float64) ** 2).sum())


def constrained_covariance(J: np.ndarray) -> np.ndarray | None:
    """C = J⁻¹ − J⁻¹ 1 1ᵀ J⁻¹ / (1ᵀ J⁻¹ 1): the asymptotic covariance (× n) of the MLE on the simplex, or None
    when J is singular (condition number ≥ 1e12: the reports do not identify P)."""
    if not np.all(np.isfinite(J)) or np.linalg.cond(J) >= 1e12:
        return None
    Jinv = np.linalg.inv(J)
    Jinv = (Jinv + Jinv.T) / 2
    h = Jinv.sum(axis=1)
    return Jinv - np.outer(h, h) / h.sum()


def check_interval_options(intervals: str, bootstrap, seed) -> None:
    """InputError naming the option when ``intervals``, ``bootstrap`` or ``seed`` is not allowed."""
    if intervals not in ("auto", "asymptotic", "bootstrap"):
        raise InputError(f"intervals: must be auto, asymptotic or bootstrap, found {intervals!r}")
    if isinstance(bootstrap, bool) or int(bootstrap) != bootstrap or bootstrap < 0:
        raise InputError(f"--bootstrap: must be an integer >= 0, found {bootstrap}")
    if intervals == "bootstrap" and bootstrap < 2:
        raise InputError(f"--bootstrap: needs at least 2 resamples for bootstrap intervals, found {bootstrap}")
    if seed is not None and (isinstance(seed, bool) or int(seed) != seed or seed < 0):
        raise InputError(f"--seed: must be an integer >= 0, found {seed}")


def mle_with_intervals(
    mech,
    reports,
    confidence: float = 0.95,
    simultaneous: bool = False,
    intervals: str = "auto",
    bootstrap: int = 200,
    seed: int | None = 0,
    tol: float = 1e-9,
    max_iter: int = 10_000,
) -> dict:
    """The MLE of P_X from ``reports`` of a structured mechanism ``mech`` (whose ``support_sets`` groups them) with
    standard errors and intervals (module docstring). ``intervals``: ``"asymptotic"`` (observed information,
    Wald intervals clipped to [0, 1]), ``"bootstrap"`` (``bootstrap`` = B parametric resamples through the
    mechanism's sampler, seeded by ``seed``; percentile intervals) or ``"auto"``: the bootstrap when
    B · Σ_j |B_j| over the grouped reports is at most :data:`BOOTSTRAP_AUTO_LIMIT` and B · n at most
    :data:`BOOTSTRAP_AUTO_REPORTS` (seconds), else the asymptotic intervals (the B refits or draws would take
    minutes). Returns the fields of a
    :class:`~mechdesign.mechanisms.base.FrequencyEstimate` as a dict."""
    from scipy.stats import norm

    check_interval_options(intervals, bootstrap, seed)
    if not (0 < confidence < 1):
        raise InputError(f"--confidence: must lie in (0, 1), found {confidence}")
    if reports.n <= 0:
        raise InputError("reports: empty input: no reports")
    N = mech.n_symbols
    S = mech.support_sets(reports)
    P, its, gaps = support_mle(S, N, tol, max_iter)
    p = P[0]
    alpha = 1 - confidence
    a = alpha / N if simultaneous else alpha
    diagnostics = {"family": mech.family, "iterations": int(its[0]), "gap": float(gaps[0])}
    notes = []
    if gaps[0] > tol:
        notes.append(f"EM did not reach the gap {tol:g} in {max_iter} maps (gap {gaps[0]:.3g})")
    if intervals == "auto":
        work = bootstrap * max(int(S.positions.size), S.row.size)
        cheap = work <= BOOTSTRAP_AUTO_LIMIT and bootstrap * reports.n <= BOOTSTRAP_AUTO_REPORTS
        intervals = "bootstrap" if bootstrap >= 2 and cheap else "asymptotic"
    nan = np.full(N, np.nan)
    se, lower, upper = nan, nan, nan
    if intervals == "asymptotic":
        C = None
        if N <= INFORMATION_MAX_SYMBOLS and information_work(S) <= INFORMATION_LIMIT:
            C = constrained_covariance(observed_information(S, p))
            if C is None:
                uncertainty = "none: the observed information is singular (the reports do not identify P_X)"
        else:
            uncertainty = (
                f"none: the observed information is too large to form here (N = {N}, "
                f"Σ|B|² = {information_work(S):.3g}); use method 'unbiased' or a bootstrap"
            )
        if C is not None:
            se = np.sqrt(np.clip(np.diag(C), 0, None) / reports.n)
            z = norm.ppf(1 - a / 2)
            lower, upper = np.clip(p - z * se, 0, 1), np.clip(p + z * se, 0, 1)
            uncertainty = "asymptotic: observed information at the MLE (constrained to the simplex), Wald intervals"
        else:
            notes.append(uncertainty)
    else:
        rng = np.random.default_rng(seed)
        parts = []
        for _ in range(int(bootstrap)):
            idx = rng.choice(N, size=reports.n, p=p / p.sum())
            parts.append(mech.support_sets(mech.privatize_indices(idx, rng=rng)))
        start = np.maximum(p, 1e-3 / N)  # EM cannot move a mass at 0: warm start inside the simplex
        Pb, itb, gb = support_mle(SupportSets.concatenate(parts), N, tol, max_iter, p0=start / start.sum())
        se = Pb.std(axis=0, ddof=1)
        lower, upper = np.quantile(Pb, a / 2, axis=0), np.quantile(Pb, 1 - a / 2, axis=0)
        uncertainty = (
            f"parametric bootstrap (B = {int(bootstrap)}, seed {seed}; reports resampled through the mechanism "
            "at the MLE), percentile intervals"
        )
        diagnostics.update(bootstrap=int(bootstrap), seed=seed)
        if (gb > tol).any():
            notes.append(f"{int((gb > tol).sum())} of {int(bootstrap)} bootstrap EM runs did not reach tol")
        if simultaneous and bootstrap * a / 2 < 5:
            notes.append(
                f"B = {bootstrap} resamples give fewer than 5 beyond each Bonferroni quantile "
                f"({a / 2:.2g}); raise --bootstrap for a stable band"
            )
    return dict(
        estimate=p,
        standard_error=se,
        lower=lower,
        upper=upper,
        uncertainty=uncertainty,
        diagnostics=diagnostics,
        warnings=tuple(notes),
    )
