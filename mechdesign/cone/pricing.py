"""Exact pricing over the single-column cone 𝒦 (Dantzig–Wolfe pricing of the kernel LP, see
:mod:`mechdesign.engines.output_generation`): for w = C(:,y) − π the minimum of w·r over r ∈ 𝒦 with max r = 1, its
minimising ray, the PML row's multiplier (LP duality of the pricing problem) and the lifted LP's full row duals."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from mechdesign.cone.layout import KernelLayout

__all__ = ["Priced", "price", "priced_rays", "pml_multipliers", "full_row_dual", "PRICE_BLOCK_ENTRIES"]


@dataclass(frozen=True)
class Priced:
    """Pricing of every output: value p_y and its minimising ray (sorted order, q ones, level)."""

    value: np.ndarray
    q: np.ndarray
    base: np.ndarray
    """The level of the entries after the ones and the fractional entry (u_q or 0)."""
    frac: np.ndarray
    """The value of entry q (three-level) or base (otherwise)."""
    W: np.ndarray
    """The matrix priced (N × M), kept so that :meth:`order_of` sorts only the columns asked for. It must not
    change while this pricing is used (every caller prices a matrix it computed for the call)."""

    @cached_property
    def order(self) -> np.ndarray:
        """N × M: column y's row indices by increasing w_y (a stable sort: ties go to the smallest x), so
        that ``order[:q, y]`` are the ray's ones and ``order[q, y]`` its fractional entry."""
        return self.order_of(np.arange(self.W.shape[1]))

    def order_of(self, ys: np.ndarray) -> np.ndarray:
        """``order[:, ys]`` (N × |ys|), sorting only those columns unless :attr:`order` is already known. Each
        pricing round needs the rays of a few outputs only (the candidates :func:`distinct_rays` looks at, the
        outputs that join), so :func:`price` sorts the values and leaves the indices to this."""
        ys = np.asarray(ys, dtype=np.int64)
        if "order" in self.__dict__:
            return self.order[:, ys]
        n = self.W.shape[0]
        out = np.empty((n, ys.size), dtype=np.int32 if n < 2**31 else np.int64)
        step = max(1, PRICE_BLOCK_ENTRIES // max(n, 1))
        for j0 in range(0, ys.size, step):
            out[:, j0 : j0 + step] = np.argsort(self.W[:, ys[j0 : j0 + step]], axis=0, kind="stable")
        return out


PRICE_BLOCK_ENTRIES = 1 << 20
"""Outputs are priced in blocks of about this many entries: the sort's temporaries stay in cache."""


def price(W: np.ndarray, c: float, E: float) -> Priced:
    """min_{r∈𝒦} w·r for every column w of W (N × M), with its minimiser (see module doc).

    One sort per column (on Wᵀ, whose rows are contiguous, in blocks of outputs), prefix sums S_q of the
    sorted w, then per kind the best q: two-level S_q + u_q (S_N − S_q) for cq ≤ e^{−ε}, zero-one S_q for
    cq ≥ e^{−ε}, three-level S_q + f w_(q+1) at the one q with cq < e^{−ε} < c(q + 1), and all ones
    S_N. Ties go to the first kind in that order, then to the smallest q.

    The values are sorted, not their indices: which entries are the ray's ones is found afterwards, for the
    outputs that need it (:meth:`Priced.order_of`, a stable argsort of those columns). A stable sort's output
    is the same sequence whatever the algorithm, so the prefix sums, the values and the choice of q are those
    of the stable argsort this replaces, to the bit; the ray's entries too, as its ties still go to the
    smallest x. ``W`` is kept by the result and must not be changed while the result is used.
    """
    n, m = W.shape
    value, qq = np.empty(m), np.empty(m, dtype=np.int64)
    base, frac = np.empty(m), np.empty(m)
    step = max(1, PRICE_BLOCK_ENTRIES // max(n, 1))
    for j0 in range(0, m, step):
        j1 = min(m, j0 + step)
        value[j0:j1], qq[j0:j1], base[j0:j1], frac[j0:j1] = _price_block(W[:, j0:j1].T, c, E)
    return Priced(value=value, q=qq, base=base, frac=frac, W=W)


def priced_rays(priced: Priced, n: int, ys: np.ndarray) -> np.ndarray:
    """The vertices of 𝒦 that :func:`price` chose for columns ``ys``, as an N × |ys| matrix: 1 on the q
    smallest entries, ``frac`` on the next, ``base`` after."""
    k = ys.size
    ranks = np.arange(n)[:, None]
    q = priced.q[ys][None, :]
    R_sorted = np.where(ranks < q, 1.0, np.where(ranks == q, priced.frac[ys][None, :], priced.base[ys][None, :]))
    R = np.empty((n, k))
    np.put_along_axis(R, priced.order_of(ys), R_sorted, axis=0)
    return R


def _price_block(Wt: np.ndarray, c: float, E: float):
    """:func:`price` for the outputs of one block, given as the rows of Wᵀ (k × N)."""
    m, n = Wt.shape
    Ws = np.sort(Wt, axis=1, kind="stable")
    S = np.empty((m, n + 1))
    S[:, 0] = 0.0
    np.cumsum(Ws, axis=1, out=S[:, 1:])  # S[:, q] = sum of the q smallest
    total = S[:, n]
    q = np.arange(n, dtype=float)
    cq = c * q
    rows = np.arange(m)
    kinds_value = np.full((4, m), np.inf)
    kinds_q = np.zeros((4, m), dtype=np.int64)
    f3 = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        k2 = int(np.count_nonzero(cq <= E))  # two-level: a prefix of q (c ≥ 0)
        if k2:
            u = (E - cq[:k2]) / (1.0 - cq[:k2])
            two = total[:, None] - S[:, :k2]  # S + u (total − S), in place (+ and × commute: the same bits)
            two *= u[None, :]
            two += S[:, :k2]
            kinds_q[0] = np.argmin(two, axis=1)
            kinds_value[0] = two[rows, kinds_q[0]]
        k0 = int(np.argmax(cq >= E)) if np.any(cq >= E) else n  # zero-one: a suffix q ≥ k0
        if k0 < n:
            kinds_q[1] = k0 + np.argmin(S[:, k0:n], axis=1)
            kinds_value[1] = S[rows, kinds_q[1]]
        three_ok = np.flatnonzero((cq < E) & (E < c * (q + 1))) if c > 0 else np.zeros(0, dtype=int)
        if three_ok.size:
            q3 = int(three_ok[0])
            f3 = (E - cq[q3]) / c
            kinds_q[2] = q3
            kinds_value[2] = S[:, q3] + f3 * Ws[:, q3]
    kinds_q[3] = n
    kinds_value[3] = total
    kind = np.argmin(kinds_value, axis=0)
    value = kinds_value[kind, rows]
    qq = kinds_q[kind, rows]
    with np.errstate(divide="ignore", invalid="ignore"):
        u_at = np.where(kind == 0, (E - c * qq) / (1.0 - c * qq), 0.0)
    base = np.where(kind == 0, u_at, 0.0)
    frac = np.where(kind == 2, f3, base)
    return value, qq, base, frac


def pml_multipliers(W: np.ndarray, c: float, E: float) -> np.ndarray:
    """A multiplier λ_y ≥ 0 of the PML row per column that (nearly) maximises the Lagrangian

        g(λ) = min(0, h1(λ), h2(λ)),  h1 = Σ_x min(w_x − λc, 0) + λ e^{−ε},  h2 = Σ_x w_x − λ(1 − e^{−ε}),

    whose maximum is p_y by LP duality. g is concave and piecewise linear, so its
    maximum is at λ = 0, a breakpoint w_(k)/c of h1, or a crossing h1 = h2.
    Any λ ≥ 0 gives a valid bound; this one is optimal up to rounding.
    """
    n, m = W.shape
    if c <= 0:
        return np.zeros(m)
    Ws = np.sort(W, axis=0)
    S = np.vstack([np.zeros((1, m)), np.cumsum(Ws, axis=0)])
    total = S[n]
    k = np.arange(n + 1)[:, None].astype(float)
    lo = np.vstack([np.full((1, m), -np.inf), Ws])  # piece k: w_(k−1) ≤ λc ≤ w_(k)
    hi = np.vstack([Ws, np.full((1, m), np.inf)])
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = np.where(c * k < 1.0, (total - S) / (1.0 - c * k), np.nan)
    cross = np.where((cross * c >= lo) & (cross * c <= hi) & (cross >= 0), cross, np.nan)
    # a c far below the costs (5e-324) overflows w/c: such λ are inf, their g nan (→ −inf), never chosen
    with np.errstate(over="ignore", invalid="ignore"):
        h1_cross = S + cross * (E - c * k)
        brk = np.maximum(Ws / c, 0.0)  # λ_k = w_(k)/c, piece k has k entries below
        kk = k[:n]
        h1_brk = np.where(Ws > 0, S[:n] - kk * Ws + brk * E, S[:n] + 0.0)
        h1_brk = np.where(Ws > 0, h1_brk, np.nan)
        h1_zero = np.sum(np.minimum(Ws, 0.0), axis=0)[None, :]
        lam = np.vstack([np.zeros((1, m)), brk, np.nan_to_num(cross, nan=0.0)])
        h1 = np.vstack([h1_zero, h1_brk, np.where(np.isnan(cross), np.nan, h1_cross)])
        g = np.minimum(np.minimum(h1, total[None, :] - lam * (1.0 - E)), 0.0)
    g = np.where(np.isnan(g) | ~np.isfinite(lam), -np.inf, g)
    return lam[np.argmax(g, axis=0), np.arange(m)]


def full_row_dual(layout: KernelLayout, num_rows: int, C: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """Row multipliers of the whole lifted LP from the row-sum duals π (see module doc).

    Per column, with v = C(:,y) − π − λ c: T rows get −max(−v, 0), the low rows −max(v, 0),
    so every K has reduced cost 0; the PML row gets −λ. For c > 0 a shift δ on one x moves
    a negative reduced cost of u onto t (the bound then sees the triangle u ≤ t, not a box).
    """
    c, E = layout.c, layout.scale
    W = C - pi[:, None]
    lam = pml_multipliers(W, c, E)
    v = W - lam[None, :] * c
    alpha = np.maximum(-v, 0.0)
    beta = np.maximum(v, 0.0)
    if layout.rows_pml is not None:
        z_u = beta.sum(axis=0) - lam * (1.0 - W.shape[0] * c)
        delta = np.maximum(-z_u, 0.0)
        alpha[0] += delta
        beta[0] += delta
    y = np.zeros(num_rows)
    y[layout.rows_sum] = pi
    y[layout.rows_t] = -alpha
    y[layout.rows_low] = -beta
    if layout.rows_pml is not None:
        y[layout.rows_pml] = -lam
    return y
