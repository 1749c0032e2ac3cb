"""A second lower bound for frequency estimation over the simplex / min_mass ray families: the Lagrangian dual
restricted to multipliers whose pricing is exact ("the structured dual"), and the design read off its solution.

The bound of :mod:`mechdesign.engines.a_optimal` (Lagrangian dual of the A-optimal design program; Boyd and
Vandenberghe, Convex Optimization §7.5), written with S = W² ⪰ 0, is for ANY such S and any λ

    OPT ≥ 2 tr S^{1/2} − ‖P‖² − Σ_x λ_x − N·max(0, h),   h = max over every extreme ray r of ρ(r),
    ρ(r) = (rᵀ S r/(Pᵀ r) − λ·r)/(1·r).

Pricing a general S is a quadratic 0/1 program (:mod:`mechdesign.objectives.pricing_frequency`). Here S is taken
of the form

    S(D, u, λ, Z) = ½ (diag(D) + u 1ᵀ + 1 uᵀ + λ Pᵀ + P λᵀ) + E_H Z E_Hᵀ,

Z a symmetric matrix with zero diagonal on a few "head" symbols H (the most likely ones; E_H selects them), so that
rᵀ S r = ½ D·(r∘r) + (1·r)(u·r) + r_Hᵀ Z r_H + (λ·r)(Pᵀ r) and

    ρ(r) = (½ D·(r∘r) + (1·r)(u·r) + r_Hᵀ Z r_H) / ((1·r)(Pᵀ r)).

On a ray family (r = r₀ + δ·1_A, |A| = k, 1·r fixed; :mod:`mechdesign.privacy.ray_families`) r∘r and u·r are
affine in the indicator of A, and r_Hᵀ Z r_H depends only on A ∩ H. For a fixed head subset B = A ∩ H the rest
of A is any k − |B| of the other ("tail") symbols, and the numerator and denominator are affine in their
indicator. Dinkelbach's method (Dinkelbach 1967) therefore maximises ρ over the family exactly: at a level h, one
sort of the tail by a_i − h·p_i gives, by prefix sums, the best tail of every size, and every head subset (2^|H|)
is checked against it. Why this form: at the optimum of column generation at N = 24 (Dirichlet(1) seed 0,
ε = 1), the reduced value is 0 (within 1e-6) on 42,636 sets of size 6 and 158,916 of size 7, exactly those with a given pattern
on the 5 most likely symbols and any choice among the other 19: on the tail the optimal multipliers are additive.

The restricted dual

    maximise  2 tr S(D, u, λ, Z)^{1/2} − Σ λ   s.t.  ½ D·(r∘r) + (1·r)(u·r) + r_Hᵀ Z r_H ≤ 0 for every ray r

(h ≤ 0 costs nothing: (u + cP, λ − c1) leaves S unchanged and lowers every ρ by c) is a concave maximisation over
3N + |H|(|H| − 1)/2 numbers, solved over a growing list of rays (cutting planes: Kelley 1960; each round adds every
family's best ray, a few one-swap neighbours and the best rays of other positive head subsets, and keeps the
:data:`CUTS_PER_PARAMETER` most nearly active cuts) by a log-barrier Newton method (Boyd and Vandenberghe §11.3;
the Hessian of tr S^{1/2} by the Daleckii–Krein formula). Every (D, u, λ, Z) it visits gives a valid bound;
:func:`certified_bound` evaluates it with every rounding error bounded. It is a restriction of the dual: with
H empty (the additive dual) it equals the optimum at N = 16 but is 1.7e-4 below it at N = 24; with the 5 most
likely symbols as H it meets the optimum at N = 24 to 1e-11; at N = 50 it rises with |H| (5, 10, 14, 16, 19 symbols:
175.94993, 175.95098, 175.95131, 175.951439, 175.951544, against designs down to 175.951854).

**The design from the dual** (:func:`tied_rays`, :func:`fitted_design`). At the dual optimum S = J⁻² (the
stationarity of tr J⁻¹), and the optimum's rays are among those with ρ = 0 (complementary slackness). On such
rays Σ θ_r rᵀSr/(Pᵀr) = Σ θ_r λ·r = Σλ for every feasible θ, so tr J(θ)⁻¹ differs from the optimum only to second
order in J(θ) − J: weights fitted to J = S^{-1/2} and to Σ θ_r r = 1 (least absolute residual, a linear program
for HiGHS) over a sample of the tied rays give a near-optimal support, on which the restricted program is then
solved. For pools too large for that linear program, :func:`fitted_design_working_set` fits in least squares on a
working set of the pool.

**Rounding** (:func:`certified_bound`). The entries of S computed in floating point are within 4u·T_ij of the
exact ones (T the matrix of the absolute values of the terms, u = 2⁻⁵³), and LAPACK's symmetric eigenvalues within
16·N·u·‖S‖_F of the computed matrix's: by Weyl's inequality every eigenvalue of the exact S is at least the computed
one minus η = 4u‖T‖_F + 16Nu‖S‖_F. When the least computed eigenvalue is below 2η, D is raised until it is about
4η (the exact S is then positive definite). Then tr S^{1/2} ≥ Σ √max(0, μ_i − η)·(1 − 4u). For the pricing, with the
family's h from Dinkelbach, v = max over the family of the numerator minus h·(1·r)·Pᵀr is a head subset's terms
(at most |H|² products with Z, entries of r in [0, 1]) plus a prefix sum of sorted affine coefficients: its computed
value is within 16(N + 4 + |H|²)u times the sum of the magnitudes of every term (4Σ|Z| covering the head's), so
ρ ≤ h + max(0, v + that)/((1·r)·s_min) on the family, s_min the least Pᵀr over it. The family levels (m_q, w) are
within a few ulps of their exact values; the same allowance covers them.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np


__all__ = [
    "AdditiveDual",
    "additive_dual_bound",
    "barrier_path",
    "certified_bound",
    "daleckii_krein",
    "fitted_design",
    "fitted_design_working_set",
    "gram",
    "is_tied",
    "lagrangian_bound",
    "nearly_active",
    "recentred",
    "strictly_feasible",
    "price_additive",
    "tied_rays",
]

U = 2.0**-53
NEIGHBOURS = 4
"""Rays one swap away from a family's best that join the cuts with it (fewer rounds)."""
MU_FACTOR = 0.1
"""The barrier parameter's decrease once a centre is reached."""
MU_START = 1e-6
"""The barrier parameter at the start of each cutting-plane round (with :data:`LOOSE_TOL`, N = 50 Dirichlet(1)
seed 0, head of 10: min_mass converges in 5.9 s and ε-LDP in 4.1 s, against 9.5 s and 5.4 s with 1e-5 and 1e-7;
the same bounds to 10 digits)."""
MARGIN = 1e-3
"""Slack given to the violated cuts when the iterate is moved back inside (relative)."""
LOOSE_TOL = 1e-6
"""Relative duality gap of the barrier at which a cutting-plane round stops (the last round: 1e-11)."""
CUTS_PER_PARAMETER = 8
"""Cuts kept from one round to the next (the most nearly active), per parameter of the restricted dual (N = 50,
head of 10: 1,560 cuts, 8 s where keeping all 4,800 takes 19 s; keeping 1,000 cycles)."""
HEAD_CUTS = 8
"""Head subsets (after the best) whose best sets join the cuts when their value is positive."""


@dataclass
class AdditiveDual:
    bound: float
    """A rigorous lower bound on the optimum over every ray of the families (−inf when none was found)."""
    params: np.ndarray | None
    """(D, u, λ, z) of the best bound."""
    rounds: int
    cuts: int
    head: np.ndarray | None = None
    """The head block's symbols."""


class _Head:
    """The head block: its symbols, their pairs (i < j) and every subset of them (rows of ``sets``)."""

    def __init__(self, head, n: int):
        self.items = np.array(sorted(int(i) for i in (head if head is not None else [])), dtype=int)
        h = len(self.items)
        iu = np.triu_indices(h, 1)
        self.pi, self.pj = iu  # positions within the head
        self.gi, self.gj = self.items[iu[0]], self.items[iu[1]]  # symbols
        self.sets = ((np.arange(2**h)[:, None] >> np.arange(h)[None, :]) & 1).astype(float)
        self.sizes = self.sets.sum(axis=1).astype(int)
        self.n = n

    @property
    def pairs(self) -> int:
        return len(self.pi)

    def z_matrix(self, z: np.ndarray) -> np.ndarray:
        h = len(self.items)
        Z = np.zeros((h, h))
        Z[self.pi, self.pj] = z
        return Z + Z.T


def _padded(x: np.ndarray, hd: _Head) -> np.ndarray:
    """x with z = 0 appended when it has only (D, u, λ)."""
    x = np.asarray(x, float)
    return np.r_[x, np.zeros(hd.pairs)] if len(x) == 3 * hd.n else x


def _split(x: np.ndarray, n: int):
    return x[:n], x[n : 2 * n], x[2 * n : 3 * n], x[3 * n :]


def _s_matrix(x: np.ndarray, P: np.ndarray, hd: _Head | None = None) -> np.ndarray:
    n = len(P)
    D, u, lam, z = _split(x, n)
    S = 0.5 * (np.diag(D) + np.add.outer(u, u) + np.outer(lam, P) + np.outer(P, lam))
    if hd is not None and hd.pairs:
        S[np.ix_(hd.items, hd.items)] += hd.z_matrix(z)
    return S


def _family_terms(fam, D: np.ndarray, u: np.ndarray, P: np.ndarray):
    """The numerator A0 + a·y and denominator s0 + p·y of the additive part of ρ·(1·r) on the family (y the
    indicator over its free items), and the magnitude of their terms."""
    r0, d, free, norm = fam.r0, fam.delta, fam.free, fam.norm
    lin_sq = 2 * r0[free] * d + d * d  # r∘r = r0∘r0 + (2 r0 δ + δ²)·y
    A0 = 0.5 * float(D @ (r0 * r0)) + norm * float(u @ r0)
    a = 0.5 * D[free] * lin_sq + norm * d * u[free]
    s0 = float(P @ r0)
    p = d * P[free]
    mag = (
        0.5 * float(np.abs(D) @ (r0 * r0))
        + norm * float(np.abs(u) @ r0)
        + float(np.sum(0.5 * np.abs(D[free]) * lin_sq + norm * d * np.abs(u[free])))
    )
    return A0, a, s0, p, mag


@dataclass
class _Split:
    """A family's numerator and denominator split into the head subsets and the tail items."""

    base: float
    """A0 + r0ᵀ Z r0 (the numerator's constant)."""
    head_num: np.ndarray
    """Per head subset: its numerator terms (linear and the block's pairs)."""
    head_den: np.ndarray
    head_ok: np.ndarray
    """Head subsets the family allows (every chosen head symbol is free)."""
    head_pos: np.ndarray
    """Position in the family's free items of each head symbol (−1: not free)."""
    tail: np.ndarray
    """Positions of the other free items."""
    a: np.ndarray
    p: np.ndarray
    s0: float
    mag: float
    sizes: np.ndarray


def _family_split(fam, D, u, Z, hd: _Head, P, quad: np.ndarray) -> _Split:
    A0, a, s0, p, mag = _family_terms(fam, D, u, P)
    pos = np.full(fam.r0.shape[0], -1)
    pos[fam.free] = np.arange(len(fam.free))
    head_pos = pos[hd.items]
    is_head = np.zeros(len(fam.free), bool)
    is_head[head_pos[head_pos >= 0]] = True
    tail = np.flatnonzero(~is_head)
    d = fam.delta
    r0h = fam.r0[hd.items]
    zr0 = Z @ r0h
    lin_h = np.where(head_pos >= 0, a[head_pos], 0.0) + 2 * d * zr0
    den_h = np.where(head_pos >= 0, p[head_pos], 0.0)
    head_num = hd.sets @ lin_h + d * d * quad
    head_den = hd.sets @ den_h
    head_ok = ~(hd.sets[:, head_pos < 0] > 0).any(axis=1)
    zmag = float(np.abs(Z).sum())
    return _Split(
        A0 + float(r0h @ zr0), head_num, head_den, head_ok, head_pos, tail, a, p, s0, mag + 4 * zmag, hd.sizes
    )


def _values_at(sp: _Split, k: int, h: float):
    """Per head subset, the max over its sets of numerator − h·denominator (−inf where none): (values, number
    of tail items per head subset, the tail's order by a − h·p)."""
    c = sp.a[sp.tail] - h * sp.p[sp.tail]
    order = np.argsort(-c, kind="stable")
    pre = np.concatenate([[0.0], np.cumsum(c[order])])
    t = k - sp.sizes
    ok = sp.head_ok & (t >= 0) & (t <= len(order))
    val = np.where(ok, sp.base + sp.head_num - h * (sp.s0 + sp.head_den) + pre[np.clip(t, 0, len(order))], -np.inf)
    return val, t, order


def _best_at(sp: _Split, k: int, h: float):
    """max over the family's sets of numerator − h·denominator: (value, head subset, number of tail items, the
    tail's order by a − h·p)."""
    val, t, order = _values_at(sp, k, h)
    b = int(np.argmax(val))
    return float(val[b]), b, int(t[b]), order


def _chosen(sp: _Split, hd: _Head, b: int, t: int, order: np.ndarray) -> np.ndarray:
    """Positions among the family's free items of head subset b and the first t tail items of ``order``."""
    return np.r_[sp.head_pos[hd.sets[b] > 0], sp.tail[order[:t]]].astype(int)


def _ray(fam, y: np.ndarray) -> np.ndarray:
    """The family's ray for the set at positions ``y`` among its free items (FrequencyFamily.rays)."""
    X = np.zeros((1, len(fam.r0)))
    X[0, fam.free[y]] = 1.0
    return fam.rays(X)[0]


def _family_maxima(fams, x: np.ndarray, P: np.ndarray, hd: _Head):
    """Per family: (family, its split, h = max over its sets of ρ·(1·r) in floating point, the maximising set's
    positions y) by Dinkelbach's method, each step one sort of the tail and one pass over the head subsets."""
    n = len(P)
    D, u, _, z = _split(x, n)
    Z = hd.z_matrix(z)
    quad = np.einsum("si,ij,sj->s", hd.sets, Z, hd.sets) if hd.pairs else np.zeros(len(hd.sets))
    for fam in fams:
        sp = _family_split(fam, D, u, Z, hd, P, quad)
        k = fam.size
        # start: the ratio of the set with the largest numerator
        _, b, t, order = _best_at(sp, k, 0.0)
        y = _chosen(sp, hd, b, t, order)
        h = _ratio(sp, b, t, order)
        for _ in range(200):
            v, b2, t2, order2 = _best_at(sp, k, h)
            if v <= 0:
                break
            h_new = _ratio(sp, b2, t2, order2)
            if h_new <= h:
                break
            h, y = h_new, _chosen(sp, hd, b2, t2, order2)
        yield fam, sp, h, y


def _ratio(sp: _Split, b: int, t: int, order: np.ndarray) -> float:
    """ρ·(1·r) of head subset b with the first t tail items of ``order``."""
    tail = sp.tail[order[:t]]
    return (sp.base + float(sp.head_num[b]) + float(sp.a[tail].sum())) / (
        sp.s0 + float(sp.head_den[b]) + float(sp.p[tail].sum())
    )


def _neighbours(fam, sp: _Split, h: float, chosen: np.ndarray, extra: int) -> list[np.ndarray]:
    """Rays one swap away from the family's best set ``chosen`` among the tail items (its least tail item out, one
    of the next best tail items in, by a − h·p)."""
    c = sp.a - h * sp.p
    tail_in = np.intersect1d(chosen, sp.tail)
    tail_out = np.setdiff1d(sp.tail, chosen)
    if len(tail_in) == 0 or len(tail_out) == 0:
        return []
    weakest = tail_in[int(np.argmin(c[tail_in]))]
    keep = chosen[chosen != weakest]
    return [_ray(fam, np.r_[keep, j]) for j in tail_out[np.argsort(-c[tail_out])[:extra]]]


def _other_heads(fam, sp: _Split, hd: _Head) -> list[np.ndarray]:
    """The best set (by the numerator) of each of the :data:`HEAD_CUTS` head subsets, after the family's best,
    with the largest positive reduced value (the sign of ρ is the numerator's)."""
    if len(hd.items) == 0:
        return []
    val, t, order = _values_at(sp, fam.size, 0.0)
    top = np.argsort(-val)[1 : HEAD_CUTS + 1]
    return [_ray(fam, _chosen(sp, hd, b, int(t[b]), order)) for b in top if val[b] > 0]


def price_additive(fams, x: np.ndarray, P: np.ndarray, head=None, rigorous: bool = False, maxima=None):
    """max ρ over each family at x = (D, u, λ, z) (Dinkelbach): a list of (value, ray) per family, value the maximum
    computed in floating point, or with ``rigorous`` an upper bound on it that covers every rounding (module doc).
    ``head``: the head block's symbols (none: the additive dual, x = (D, u, λ)); ``maxima``: the list of
    :func:`_family_maxima` at this x, when the caller has it."""
    n = len(P)
    hd = head if isinstance(head, _Head) else _Head(head, n)
    x = _padded(x, hd)
    out = []
    for fam, sp, h, y in _family_maxima(fams, x, P, hd) if maxima is None else maxima:
        k, norm = fam.size, fam.norm
        value = h / norm
        if rigorous:
            v = _best_at(sp, k, h)[0]
            allow = (
                16
                * (n + 4 + len(hd.items) ** 2)
                * U
                * (sp.mag + abs(h) * (sp.s0 + float(np.abs(sp.p).sum())) + abs(sp.base) + abs(h * sp.s0))
            )
            s_min = sp.s0 + float(np.partition(sp.p, k - 1)[:k].sum()) if k else sp.s0
            s_min = max(s_min * (1 - 8 * n * U), 1e-300)
            value = (h + max(0.0, v + allow) / s_min * (1 + 8 * U)) / norm * (1 + 4 * U) + 4 * U * abs(h / norm)
        out.append((value, _ray(fam, y)))
    return out


def certified_bound(x: np.ndarray, P: np.ndarray, fams, head=None, maxima=None) -> tuple[float, np.ndarray]:
    """The bound of the module docstring at (D, u, λ, z) = x, every rounding covered: (bound, x used; D raised
    when S needed it to be positive definite). ``head`` as in :func:`price_additive`; ``maxima`` the list of
    :func:`_family_maxima` at x, used when D is not raised (else the raised x is priced again)."""
    n = len(P)
    hd = head if isinstance(head, _Head) else _Head(head, n)
    x = np.array(_padded(x, hd), float)
    given = x.copy()

    def price(z):
        reuse = maxima if maxima is not None and np.array_equal(z, given) else None
        return max(v for v, _ in price_additive(fams, z, P, hd, rigorous=True, maxima=reuse))

    def matrices(z):
        D, u, lam, zz = _split(z, n)
        T = 0.5 * (np.diag(np.abs(D)) + np.add.outer(np.abs(u), np.abs(u)) + 2 * np.outer(np.abs(lam), P))
        if hd.pairs:
            T[np.ix_(hd.items, hd.items)] += np.abs(hd.z_matrix(zz))
        return _s_matrix(z, P, hd), T

    return lagrangian_bound(x, P, matrices, price)


def lagrangian_bound(x: np.ndarray, P: np.ndarray, matrices, price, entry_error: float = 4.0):
    """2 tr S^{1/2} − ‖P‖² − Σλ − N·max(0, h) at x = (D, u, λ, …), every rounding covered (module doc):
    ``matrices(x)`` gives S computed in floating point and T, the matrix of the absolute values of its terms (each
    entry of S within ``entry_error``·u·T_ij of the exact one), ``price(x)`` an upper bound h on every ray's ρ.
    When S might not be positive definite D is raised until its least eigenvalue is about 4η (Weyl's inequality,
    η the eigenvalues' error). Returns (bound, x used), the bound −inf when S stays indefinite."""
    n = len(P)
    x = np.array(x, float)
    for _ in range(3):
        S, T = matrices(x)
        eta = entry_error * U * float(np.linalg.norm(T)) + 16 * n * U * float(np.linalg.norm(S))
        mu = np.linalg.eigvalsh(S)
        if mu[0] > 2 * eta:
            break
        x[:n] += 2 * (4 * eta - mu[0]) + 1e-300  # S rises by half of it: its least eigenvalue to about 4η
    else:
        return -math.inf, x
    lam = x[2 * n : 3 * n]
    root = float(np.sqrt(np.maximum(mu - eta, 0.0)).sum()) * (1 - 4 * U) * (1 - 2 * n * U)
    h = price(x)
    pp = float(P @ P) * (1 + 2 * n * U)
    lam_sum = float(lam.sum()) + 2 * n * U * float(np.abs(lam).sum())
    bound = 2 * root - (pp + lam_sum + n * max(0.0, h))
    return bound - 8 * U * (2 * root + abs(pp) + abs(lam_sum) + n * abs(h)), x


def _cut_rows(C: np.ndarray, P: np.ndarray, hd: _Head) -> np.ndarray:
    """Row per ray r: the coefficients of ½ D·(r∘r) + (1·r)(u·r) + r_Hᵀ Z r_H in (D, u, λ, z)."""
    nr = C.sum(axis=1)
    return np.hstack([0.5 * C * C, nr[:, None] * C, np.zeros_like(C), 2 * C[:, hd.gi] * C[:, hd.gj]])


def gram(X: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """scale·X Xᵀ. Written as Y @ Y.T with Y = √|scale|·X, so that numpy's BLAS takes its symmetric rank-k product
    (half the multiplications of a general product); numpy's BLAS, not scipy's, so that a caller's thread limit
    applies to it."""
    Y = X * math.sqrt(abs(scale))
    G = Y @ Y.T
    return G if scale >= 0 else -G


def daleckii_krein(V: np.ndarray, fp: np.ndarray, F: np.ndarray, blocks) -> tuple[np.ndarray, np.ndarray]:
    """Gradient and Hessian of Σ_i f(ev_i(S(x))) for S affine in x, in the eigenbasis of S = V diag(ev) Vᵀ
    (Daleckii–Krein: with B_k = Vᵀ (∂S/∂x_k) V, the gradient is Σ_i f'(ev_i) (B_k)_ii and the Hessian
    Σ_ij F_ij (B_k)_ij (B_l)_ij, F = f'^{[1]} the first divided differences of f', symmetric and negative here).

    ``blocks`` lists the coordinates in order; with v_k the rows of V and sym(a, b) = ½(a bᵀ + b aᵀ), a block is

    - ``("pairs", I, J, c)``: B_k = c_k sym(v_{I_k}, v_{J_k}) (the diagonal D of S = ½ diag(D) + …: I = J = all,
      c = ½; a head pair z_ij of S = … + z_ij (e_i e_jᵀ + e_j e_iᵀ): c = 2);
    - ``("sym", a, c)``: N coordinates with B_k = c·sym(v_k, a) (u and λ of S = ½(u 1ᵀ + 1 uᵀ + λ Pᵀ + P λᵀ) + …:
      a = Vᵀ1 and a = VᵀP, c = 1);
    - ``("rows", M)``: the symmetric B_k themselves, (m, N, N).

    With F symmetric, ⟨sym(a, b), sym(c, d)⟩_F = ½[(a∘c)ᵀF(b∘d) + (a∘d)ᵀF(b∘c)], so a "sym" block closes in O(N³)
    against another (c d ½[(V diag(F(a∘b)) Vᵀ) + (V∘b) F (V∘a)ᵀ]), a "pairs" one (with Y = (V∘a)F:
    c c_l ½ V (v_I∘Y_J + v_J∘Y_I)ᵀ) or a row M (c V((F∘M)a)), where the sum over the N² entries costs O(N⁴) per
    pair of coordinates; "pairs" and "rows" among themselves are summed over the upper triangle (off-diagonal
    terms twice)."""
    n = V.shape[0]
    iu = np.triu_indices(n)
    tri = F[iu] * np.where(iu[0] == iu[1], 1.0, 2.0)
    sizes = [n if b[0] == "sym" else len(b[1]) for b in blocks]
    starts = np.r_[0, np.cumsum(sizes)]
    sl = [slice(starts[i], starts[i + 1]) for i in range(len(blocks))]
    g = np.empty(starts[-1])
    flat, plain = [], []
    for i, b in enumerate(blocks):
        if b[0] == "sym":
            g[sl[i]] = b[2] * (V @ (b[1] * fp))
            continue
        if b[0] == "pairs":
            Vi, Vj = V[b[1]], V[b[2]]
            c = np.broadcast_to(np.asarray(b[3], float), (len(b[1]),))
            g[sl[i]] = c * ((Vi * Vj) @ fp)
            M = (0.5 * c)[:, None, None] * (Vi[:, :, None] * Vj[:, None, :] + Vj[:, :, None] * Vi[:, None, :])
        else:
            M = b[1]
            g[sl[i]] = np.einsum("kii,i->k", M, fp)
        flat.append(M.reshape(len(M), -1)[:, iu[0] * n + iu[1]])
        plain.append(i)
    H = np.empty((starts[-1], starts[-1]))
    if plain:
        idx = np.r_[tuple(np.arange(starts[i], starts[i + 1]) for i in plain)]
        X = np.vstack(flat)
        if (tri < 0).all():
            H[np.ix_(idx, idx)] = gram(X * np.sqrt(-tri), -1.0)
        else:
            H[np.ix_(idx, idx)] = (X * tri) @ X.T
    for i, bi in enumerate(blocks):
        if bi[0] != "sym":
            continue
        a, c = bi[1], bi[2]
        Y = (V * a) @ F
        for j, bj in enumerate(blocks):
            if bj[0] == "sym":
                if j < i:
                    continue
                b, d = bj[1], bj[2]
                blk = 0.5 * c * d * ((V * (F @ (a * b))) @ V.T + (V * b) @ F @ (V * a).T)
            elif bj[0] == "pairs":
                cl = np.broadcast_to(np.asarray(bj[3], float), (len(bj[1]),))
                E = V[bj[1]] * Y[bj[2]] + V[bj[2]] * Y[bj[1]]
                blk = c * V @ (0.5 * cl[:, None] * E).T
            else:
                blk = c * (V @ ((F[None] * bj[1]) @ a).T)
            H[sl[i], sl[j]] = blk
            H[sl[j], sl[i]] = blk.T
    return g, H


def _barrier_pieces(x, P, mu, A, hd):
    n = len(P)
    ev, V = np.linalg.eigh(_s_matrix(x, P, hd))
    s = -(A @ x)
    if ev[0] <= 0 or s.min() <= 0:
        return None
    rs = np.sqrt(ev)
    phi = 2 * rs.sum() - x[2 * n : 3 * n].sum() + mu * float(np.log(s).sum()) + mu * float(np.log(ev).sum())
    return phi, ev, V, rs, s


def _newton_system(P, mu, A, pieces, hd, cut_cols=None):
    """Gradient and Hessian of φ = 2 tr S^{1/2} − Σλ + μ Σ log(slack) + μ log det S in x (:func:`daleckii_krein`
    with f = 2√· + μ log); ``cut_cols`` the cuts' columns off λ (A without them), when the caller has them."""
    n = len(P)
    _, ev, V, rs, s = pieces
    every = np.arange(n)
    blocks = [("pairs", every, every, 0.5), ("sym", V.T @ np.ones(n), 1.0), ("sym", V.T @ P, 1.0)]
    if hd.pairs:
        blocks.append(("pairs", hd.gi, hd.gj, 2.0))
    F = -1.0 / (rs[:, None] * rs[None, :] * (rs[:, None] + rs[None, :])) - mu / (ev[:, None] * ev[None, :])
    g, H = daleckii_krein(V, 1 / rs + mu / ev, F, blocks)
    g[2 * n : 3 * n] -= 1.0
    # the cuts do not involve λ: their part of the gradient and Hessian lives on the other coordinates
    cols = np.r_[0 : 2 * n, 3 * n : A.shape[1]]
    As = (A[:, cols] if cut_cols is None else cut_cols) / s[:, None]
    g[cols] -= mu * As.sum(axis=0)
    H[np.ix_(cols, cols)] -= gram(As.T, mu)
    return g, H


def _maximise(P, A, x, mu, deadline, hd, rel_tol=1e-11, max_steps=400):
    """The barrier path from x (strictly feasible) down to m·μ ≤ rel_tol·|φ|."""
    n = len(P)
    cut_cols = A[:, np.r_[0 : 2 * n, 3 * n : A.shape[1]]]
    return barrier_path(
        lambda z, mu_: _barrier_pieces(z, P, mu_, A, hd),
        lambda z, mu_, pieces: _newton_system(P, mu_, A, pieces, hd, cut_cols),
        A,
        x,
        mu,
        A.shape[0] + len(P),
        deadline,
        rel_tol,
        max_steps=max_steps,
    )


def barrier_path(pieces_at, newton_at, A, x, mu, m, deadline, rel_tol, max_steps=400, step_limit=None):
    """Newton steps of a log-barrier function φ from x (strictly feasible), μ falling by :data:`MU_FACTOR` at each
    centre, until m·μ ≤ rel_tol·|φ| (m·μ the duality gap of the central point; Boyd and Vandenberghe §11.3) or the
    deadline. ``pieces_at(x, μ)`` gives (φ, …, slacks of the cuts A x ≤ 0 as its fifth entry) or None outside the
    domain, ``newton_at(x, μ, pieces)`` the gradient and Hessian; a step stops at 0.99 of the way to the cuts (and
    to ``step_limit(x, dx)`` when given), then backtracks on φ."""
    for _ in range(max_steps):
        pieces = pieces_at(x, mu)
        if pieces is None or time.perf_counter() > deadline:
            return x
        g, H = newton_at(x, mu, pieces)
        try:
            dx = np.linalg.solve(H, -g)
        except np.linalg.LinAlgError:
            dx = np.linalg.lstsq(H, -g, rcond=None)[0]
        dec = float(g @ dx)
        Adx = A @ dx
        grow = Adx > 0
        step = min(1.0, 0.99 * float(np.min(pieces[4][grow] / Adx[grow]))) if grow.any() else 1.0
        if step_limit is not None:
            step = min(step, step_limit(x, dx))
        moved = False
        while step > 1e-14:
            new = pieces_at(x + step * dx, mu)
            if new is not None and new[0] >= pieces[0] + 1e-4 * step * dec:
                x, moved = x + step * dx, True
                break
            step /= 2
        if dec < 1e-3 * mu * m or not moved:
            if m * mu < rel_tol * abs(pieces[0]) or time.perf_counter() > deadline:
                return x
            mu *= MU_FACTOR
    return x


SINGULAR = 1e-8
"""A round's start counts as nearly singular when the smallest eigenvalue of S is below this share of the largest
(:func:`recentred`)."""
RECENTRE = 0.1
"""Share of the way back to the first point (S = I) that :func:`recentred` moves a nearly singular start."""


def recentred(x: np.ndarray, x0: np.ndarray, s_matrix) -> np.ndarray:
    """x moved :data:`RECENTRE` of the way to x0 when S(x) = ``s_matrix(x)`` is nearly singular (:data:`SINGULAR`),
    else x. The restricted dual over few cuts can be maximised at an S with an eigenvalue of about 1e-12 (min_mass,
    N = 64 to 100, from the start rays); from there the barrier's steps stay tiny, no violated ray is found, and the
    bound stays far below the optimum (N = 80: the structured dual 27.15 in 45 s, the rank-one dual −334.39 in 40 s,
    for a design of 142.68). S is linear in x and S(x0) is positive definite, so the moved point's S is too, and the
    cuts are then restored by the shift of :func:`strictly_feasible` (S unchanged); the program is concave, so only
    the path, not the optimum, changes (the same cases: 142.4638, and 133 to 138.6)."""
    ev = np.linalg.eigvalsh(s_matrix(x))
    if ev[0] >= SINGULAR * ev[-1]:
        return x
    return x + RECENTRE * (x0 - x)


def _strictly_feasible(x: np.ndarray, A: np.ndarray, P: np.ndarray) -> np.ndarray:
    """x moved along (u + cP, λ − c1) (S unchanged, every ρ lowered by c) until every cut holds strictly."""
    n = len(P)
    return strictly_feasible(x, A @ x, A[:, n : 2 * n] @ P, P)  # A[:, n:2n] @ P: (1·r)(Pᵀr) per row


def strictly_feasible(x: np.ndarray, values: np.ndarray, sizes: np.ndarray, P: np.ndarray) -> np.ndarray:
    """x moved along (u + cP, λ − c1) (S unchanged, every ρ lowered by c) until every cut holds strictly: ``values``
    the cuts' numerators at x, ``sizes`` their (1·r)(Pᵀr)."""
    n = len(P)
    worst = float(np.max(values / sizes))
    if worst > -1e-9:
        c = worst + MARGIN * (abs(worst) + 1.0)
        x = x.copy()
        x[n : 2 * n] -= c * P
        x[2 * n : 3 * n] += c
    return x


def additive_dual_bound(fams, P: np.ndarray, cuts: np.ndarray, deadline: float, start=None, head=None) -> AdditiveDual:
    """Cutting planes on the restricted dual (module doc) from the rays ``cuts`` until no family has a ray with
    ρ > 0 or the deadline; the best certified bound met."""
    n = len(P)
    hd = _Head(head, n)
    x0 = np.concatenate([np.full(n, 2.0), np.zeros(2 * n + hd.pairs)])
    x = x0 if start is None else np.array(start, float)
    if len(x) != len(x0) or np.linalg.eigvalsh(_s_matrix(x, P, hd))[0] <= 0:
        x = x0
    C = np.array(cuts, float)
    best, best_x, rounds = -math.inf, None, 0
    mu, loose = 1.0, True
    while time.perf_counter() < deadline:
        rounds += 1
        A = _cut_rows(C, P, hd)
        x = _strictly_feasible(recentred(x, x0, lambda z: _s_matrix(z, P, hd)), A, P)
        # rounds stop near the central path (cuts from a central point: fewer rounds); the last one goes to the end
        x = _maximise(P, A, x, mu, deadline, hd, rel_tol=LOOSE_TOL if loose else 1e-11)
        mu = MU_START
        # one pricing per round: its maxima give both the certified bound and the new cuts
        maxima = list(_family_maxima(fams, x, P, hd))
        bound, x_used = certified_bound(x, P, fams, hd, maxima=maxima)
        if bound > best:
            best, best_x = bound, x_used
        fresh = []
        for fam, sp, h, y in maxima:
            if h / fam.norm > 1e-13:
                fresh += [_ray(fam, y), *_neighbours(fam, sp, h, y, NEIGHBOURS), *_other_heads(fam, sp, hd)]
        if not fresh:
            if not loose:
                break
            loose = False
            continue
        C = np.vstack([nearly_active(C, _cut_rows(C, P, hd) @ x, P, CUTS_PER_PARAMETER * len(x)), np.array(fresh)])
    return AdditiveDual(best, best_x, rounds, len(C), hd.items)


def nearly_active(C: np.ndarray, values: np.ndarray, P: np.ndarray, keep: int) -> np.ndarray:
    """The ``keep`` cuts of C nearest to active: the cuts farthest from active leave, by their slack −``values``
    (each cut's numerator at the current point) per unit of (1·r)(Pᵀr)."""
    if len(C) <= keep:
        return C
    slack = -values / (C.sum(axis=1) * (C @ P))
    return C[np.argsort(slack, kind="stable")[:keep]]


def is_tied(R: np.ndarray, x: np.ndarray, P: np.ndarray, head=None, rel: float = 1e-9) -> np.ndarray:
    """Per row r of R: whether the restricted dual at x = (D, u, λ, z) ties it, ρ(r)·(1·r) = rᵀSr/(Pᵀr) − λ·r ≥
    −``rel`` times the size of its terms (Σ|S_ij| r_i r_j/(Pᵀr) + Σ|λ_i| r_i). At the dual optimum the optimum's
    rays are among the tied ones (complementary slackness); a floating-point test, for choosing candidates only."""
    n = len(P)
    hd = _Head(head, n)
    x = _padded(x, hd)
    S = _s_matrix(x, P, hd)
    lam = x[2 * n : 3 * n]
    R = np.asarray(R, float)
    p = R @ P
    value = np.einsum("ri,ij,rj->r", R, S, R) / p - R @ lam
    size = np.einsum("ri,ij,rj->r", R, np.abs(S), R) / p + np.abs(R) @ np.abs(lam)
    return value >= -rel * size


def tied_rays(
    fams, P: np.ndarray, x: np.ndarray, head, per: int, seed: int = 0, rel: float = 1e-7, limit: int = 20_000
) -> np.ndarray:
    """Candidates for the optimum's support (complementary slackness): per family whose best ρ at x is within
    ``rel`` of 0 (relative to the numerator's size), each head subset whose best value is too, with ``per`` tail
    sets drawn uniformly (fewer when that would pass ``limit`` rays in all). The drawn sets tie when the tail's
    coefficients a − h·p tie, as they do where the restriction is exact (N = 24); elsewhere they lie near the
    tie."""
    n = len(P)
    hd = _Head(head, n)
    rng = np.random.default_rng(seed)
    tied = []
    for fam, sp, h, _ in _family_maxima(fams, x, P, hd):
        scale = max(abs(sp.base), sp.mag, 1e-300)
        if h * (sp.s0 + float(np.abs(sp.p).sum())) < -rel * scale:
            continue
        val, t, _ = _values_at(sp, fam.size, min(h, 0.0))
        tied += [(fam, sp, b, int(t[b])) for b in np.flatnonzero(val > -rel * scale)]
    per = max(1, min(per, limit // max(len(tied), 1)))
    out = [np.zeros((0, n))]
    for fam, sp, b, t in tied[:limit]:
        X = np.zeros((per, n))
        X[:, fam.free[sp.head_pos[hd.sets[b] > 0]]] = 1.0
        pick = np.argsort(rng.random((per, len(sp.tail))), axis=1)[:, :t]
        X[np.arange(per)[:, None], fam.free[sp.tail[pick]]] = 1.0
        out.append(fam.rays(X))
    return np.unique(np.vstack(out), axis=0)


def _fit_system(pool: np.ndarray, P: np.ndarray, x: np.ndarray, head):
    """The fit's equations A θ = b: vec(Σ_r θ_r b_r b_rᵀ) = vec J over the upper triangle (off-diagonal entries
    weighted √2, b_r = r/√(Pᵀr), J = S(x)^{-1/2}), then s·Σ_r θ_r r = s·1 (s the largest entry of J); None when
    S(x) is not positive definite."""
    n = len(P)
    ev, V = np.linalg.eigh(_s_matrix(x, P, _Head(head, n)))
    if ev[0] <= 0:
        return None
    J = (V / np.sqrt(ev)) @ V.T
    iu = np.triu_indices(n)
    wgt = np.where(iu[0] == iu[1], 1.0, math.sqrt(2.0))
    B = pool / np.sqrt(pool @ P)[:, None]
    scale = float(np.abs(J).max())
    A = np.vstack([(B[:, iu[0]] * B[:, iu[1]] * wgt).T, scale * pool.T])
    return A, np.r_[J[iu] * wgt, np.full(n, scale)]


def fitted_design(
    pool: np.ndarray, P: np.ndarray, x: np.ndarray, head, time_limit: float = 60.0
) -> tuple[np.ndarray, np.ndarray] | None:
    """Weights on ``pool`` (rays tied at x) whose Fisher information matches J = S(x)^{-1/2} and whose columns
    sum to 1, least absolute residual: (rays used, θ), or None when S(x) is not positive definite or the LP stops
    without a solution. At the dual optimum J is the optimum's information (S = J⁻², the stationarity of tr J⁻¹),
    and on tied rays tr J(θ)⁻¹ differs from the optimum only to second order in J(θ) − J (the first-order term is
    Σ θ_r λ·r = Σλ on every feasible θ): a close fit is a near-optimal design. The fit is the linear program

        minimise Σ_e |(Σ_r θ_r b_r b_rᵀ − J)_e| + Σ_x |(Σ_r θ_r r − 1)_x|   over θ ≥ 0   (b_r = r/√(Pᵀr)),

    e over the upper triangle (off-diagonal entries weighted √2), solved by HiGHS within ``time_limit`` seconds; a
    vertex has at most N(N+1)/2 + N rays."""
    from scipy.optimize import linprog
    from scipy.sparse import csr_matrix, eye, hstack

    system = _fit_system(pool, P, x, head)
    if system is None:
        return None
    A, rhs = system
    k, m = A.shape
    res = linprog(
        np.r_[np.zeros(m), np.ones(2 * k)],
        A_eq=hstack([csr_matrix(A), eye(k), -eye(k)]).tocsr(),
        b_eq=rhs,
        bounds=(0, None),
        method="highs",
        options={"time_limit": max(float(time_limit), 0.1)},
    )
    if res.status != 0 or res.x is None:  # stopped early (the time limit): no fit
        return None
    theta = res.x[:m]
    used = theta > 0
    return pool[used], theta[used]


FIT_BATCH = 1500
"""Rays of largest gradient added to the working set per round of :func:`fitted_design_working_set`."""
FIT_STALL = 0.9
""":func:`fitted_design_working_set` stops once a round leaves more than this share of the last residual."""


def fitted_design_working_set(
    pool: np.ndarray,
    P: np.ndarray,
    x: np.ndarray,
    head,
    deadline: float,
    batch: int = FIT_BATCH,
    rounds: int = 12,
    stall: float = FIT_STALL,
) -> tuple[np.ndarray, np.ndarray] | None:
    """The fit of :func:`fitted_design` in least squares, for pools too large for its linear program:

        minimise ‖Σ_r θ_r vec(b_r b_rᵀ) − vec J‖² + s²‖Σ_r θ_r r − 1‖²   over θ ≥ 0,

    (vec over the upper triangle, off-diagonal entries weighted √2, s the largest entry of J) by non-negative least
    squares (Lawson and Hanson, Solving Least Squares Problems, 1974, ch. 23; ``scipy.optimize.nnls``) on a working
    set: the :data:`FIT_BATCH` rays of largest Aᵀb first, then each round the support of the last solution and the
    rays of largest positive gradient Aᵀ(b − Aθ) among the rest, until no ray has one (the solution is then the
    least-squares fit over the whole pool: the conditions of Lawson and Hanson's Theorem 23.4 hold), a round leaves
    more than ``stall`` of the last residual, ``rounds`` rounds, or when the next round would end past ``deadline``
    (time.perf_counter(); a round is taken to cost 1.5 times the last, scaled by the square of the ratio of their
    working sets). The Lawson–Hanson method's cost
    grows fast with the columns it is given (N = 50, 1,275 rows: 0.3 s for 1,500 columns, 10 s for 6,000, 343 s for
    20,000), while the solution uses about N(N+1)/2 of them; N = 50 ε-LDP, 20,000 tied rays of the head-16 dual: five
    rounds and 8–11 s (one thread), and the restricted program on the support gives U = 175.95228–175.95258, where
    the fit over the whole pool (343 s) gives 175.951861. Returns (rays used, θ), or None when S(x) is not positive
    definite or the deadline leaves no round."""
    from scipy.optimize import nnls

    system = _fit_system(pool, P, x, head)
    if system is None:
        return None
    A, b = system
    g = A.T @ b
    work = np.argsort(-g, kind="stable")[:batch]
    out, last, spent, columns = None, math.inf, 0.0, 1
    for _ in range(rounds):
        start = time.perf_counter()
        if start + 1.5 * spent * (len(work) / columns) ** 2 > deadline:  # the next round would end past it
            break
        theta, res = nnls(A[:, work], b, maxiter=50 * len(work))
        spent, columns = time.perf_counter() - start, len(work)
        used = theta > 0
        support, theta = work[used], theta[used]
        out = (pool[support], theta)
        if res > stall * last:
            break
        last = res
        g = A.T @ (b - A[:, support] @ theta)
        g[support] = -np.inf
        new = np.argsort(-g, kind="stable")[:batch]
        new = new[g[new] > 1e-12 * float(np.linalg.norm(b))]
        if len(new) == 0:
            break
        work = np.r_[support, new]
    return out
