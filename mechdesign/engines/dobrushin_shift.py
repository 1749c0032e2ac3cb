"""Closed-form upper bounds on every pair LP of the Dobrushin coefficient, from mass shifts inside the prior set.

The pair LP of :mod:`mechdesign.engines.dobrushin_pairs` is  v(a, b) = max p_a − p_b  over binary kernels
[p, 1 − p] that are (ε,𝒫)-PML (Dobrushin paper, Lemma 3). This module bounds all N(N − 1)/2 of them at once,
without an LP, by a short argument written here (the paper proves Theorem 1 otherwise, by classifying the
mechanisms by their zeros; for 𝒫 = Q_X(c) this argument gives its value Ξ(ε,c) as an upper bound):

**Mass-shift bound.** Let P, Q ∈ 𝒫 with Q − P = κ(e_a − e_b), κ ≥ 0 (Q is P with mass κ moved from symbol b
to symbol a). Then every (ε,𝒫)-PML binary kernel [p, 1 − p] has

    p_a − p_b ≤ B(κ) = min{1, (e^ε − 1)/(1 + κ e^ε)}.

Proof. PML of output 0 under P and of output 1 under Q (both in 𝒫; docs/explanation/mathematics.md, section 'PML and prior sets'):
max_x p_x ≤ e^ε P·p and max_x (1 − p_x) ≤ e^ε Q·(1 − p) = e^ε (1 − Q·p). Adding them,

    p_a − p_b ≤ max p − min p ≤ e^ε (1 − (Q − P)·p) − 1 = e^ε (1 − κ (p_a − p_b)) − 1,

so (p_a − p_b)(1 + κ e^ε) ≤ e^ε − 1; and p_a − p_b ≤ 1 as 0 ≤ p ≤ 1. ∎
κ = 0 (P = Q, any 𝒫) gives e^ε − 1 (Remark 1). For Q_X(c), κ = 1 − Nc for every pair and B(κ) = Ξ(ε,c)
(Theorem 1): the bound is attained there, and measured here it is attained, or within ~N of the N²/2 pairs
exceeded, for boxes, ℓ1-balls, points and hulls (tests/engines/test_dobrushin_shift.py). B decreases in κ, so the
largest κ for which a witness pair (P, Q) is known gives the best bound; any smaller κ ≥ 0 is still valid.

**Approximate witnesses.** Any P, Q ∈ 𝒫 bound every pair: with δ = Q − P, R = Σ_{x≠a,b} |δ_x|,

    κ = (δ_a − δ_b − R)/2,   ρ = (|δ_a + δ_b| + R)/2,   and if e^ε ρ ≤ 1:  p_a − p_b ≤ B(max(κ, 0)).

Proof. Write δ = κ₀(e_a − e_b) + δ' with κ₀ = max(δ_a, −δ_b); then Σ δ' = 0 and ‖δ'‖₁/2 = ρ, κ = κ₀ − ρ.
With W = max p − min p, the two PML rows give W ≤ e^ε (1 − δ·p) − 1 as above, and δ'·p = Σ δ'_x (p_x − min p)
≥ −ρ W. So (1 − e^ε ρ) W ≤ e^ε − 1 − e^ε κ₀ d with d = p_a − p_b ≤ W; as 1 − e^ε ρ ≥ 0, (1 − e^ε ρ) d is at
most the left side, hence (1 + e^ε κ) d ≤ e^ε − 1 (and d ≤ 1). ∎
An exact witness has R = 0 and δ_a = −δ_b = κ. For a hull of many priors whose vertices nearly differ by a
shift (a perturbed Q_X(c)) this closes nearly every pair; the vertex pairs tried are, for a pair (a, b), Q among
the ``WITNESS_CANDIDATES`` vertices heaviest at a and P among those heaviest at b (all vertex pairs when there
are few). These are computed in floats from the vertices' exact masses, and padded outwards: κ and ρ
each carry an absolute rounding error below (N + 8)·2⁻⁵⁰ (sums of at most 2N + 4 terms of size ≤ 1 per
prior), so κ is lowered and ρ raised by (N + 8)·2⁻⁴⁸, and B is raised by a relative 1e−13.

**Witnesses per kind** (each κ_ab below comes with an explicit (P, Q) in 𝒫; κ_ab = κ_ba; the formulas live in
each kind's :meth:`~mechdesign.privacy.base.PriorSetRules.pair_mass_shifts`):

* ``box`` lower ≤ P ≤ upper: with s = 1 − Σ lower, S = Σ upper − 1,
  κ_ab = min(upper_a − lower_a, upper_b − lower_b, s, S). Witness: P_a ∈ [lower_a, upper_a − κ],
  P_b ∈ [lower_b + κ, upper_b] with P_a + P_b ∈ [1 − Σ_others upper, 1 − Σ_others lower] (the sums
  [lower_a + lower_b + κ, upper_a + upper_b − κ] reach that interval because κ ≤ s and κ ≤ S), the other
  symbols share the rest inside their boxes, and Q = P + κ(e_a − e_b) (Q_a ≤ upper_a, Q_b ≥ lower_b).
* ``l1_ball`` ‖P − c‖₁ ≤ r: with m_x = min(c_x, r/2) and μ = min(m_a, m_b),
  κ_ab = r/2 + μ when 1 − c_a − c_b ≥ r/2 − μ, else m_a + m_b. Witness of the first:
  P = c − μ e_a + (r/2) e_b − w, Q = c + (r/2) e_a − μ e_b − w, with w ≥ 0 taking r/2 − μ from the other
  symbols (w ≤ c there, possible by the condition); ‖P − c‖₁ = ‖Q − c‖₁ = μ + r/2 + (r/2 − μ) = r, and
  P_a = c_a − μ ≥ 0, Q_b = c_b − μ ≥ 0. Of the second: P = c + m_a(e_b − e_a), Q = c + m_b(e_a − e_b).
* ``hull``: the approximate witnesses above, from vertex pairs (``shift_witness_priors``).
* ``point`` and any other kind: κ = 0 (the bound e^ε − 1 holds for every prior set).

**Rounding.** κ_ab and B are computed in exact rationals from the spec's numbers, with a rational upper bound
of e^ε (:func:`mechdesign.spec.expr.exp_upper_bound`; B increases in e^ε), and rounded up to floats. As
κ_ab = min(k_a, k_b) (box: k_x = min(upper_x − lower_x, s, S); l1: k_x = r/2 + m_x) except for the few ℓ1
pairs of the second case, B(a, b) = max(B(k_a), B(k_b)): N exact evaluations, not N².
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from mechdesign.lp.rounding import float_up
from mechdesign.privacy.priors import rules
from mechdesign.spec import expr
from mechdesign.spec.models import Spec

__all__ = ["mass_shifts", "shift_bound", "pair_shift_bounds", "witness_shift_bounds", "pair_order_score", "next_pair"]


def mass_shifts(prior_set, n: int) -> tuple[list[Fraction], dict[tuple[int, int], Fraction]]:
    """Shifts κ_ab with a witness in 𝒫 (module doc), from the prior set's rules
    (:meth:`~mechdesign.privacy.base.PriorSetRules.pair_mass_shifts`): per-symbol values k with
    κ_ab = min(k_a, k_b), and the pairs (a < b) where κ_ab is smaller than that."""
    return rules(prior_set, n).pair_mass_shifts()


def shift_bound(kappa: Fraction, exp_up: Fraction | None) -> float:
    """B(κ) = min{1, (e^ε − 1)/(1 + κ e^ε)} rounded up, with exp_up ≥ e^ε (None: e^ε too large, B = 1)."""
    if exp_up is None:
        return 1.0
    return min(1.0, float_up((exp_up - 1) / (1 + kappa * exp_up)))


def pair_shift_bounds(spec: Spec) -> np.ndarray:
    """N × N floats, entry (a, b) ≥ v(a, b) for every a ≠ b (module doc); −inf on the diagonal."""
    n = spec.n
    try:
        exp_up = expr.exp_upper_bound(spec.epsilon.text, cap=Fraction(2**64))
    except Exception:  # noqa: BLE001 - an ε the interval bound cannot take: the trivial bound TV ≤ 1
        exp_up = None
    per_symbol, exceptions = mass_shifts(spec.prior_set, n)
    cache = {k: shift_bound(k, exp_up) for k in set(per_symbol)}
    sym = np.array([cache[k] for k in per_symbol])
    bounds = np.maximum(sym[:, None], sym[None, :])
    for (a, b), kappa in exceptions.items():
        bounds[a, b] = bounds[b, a] = shift_bound(kappa, exp_up)
    witnesses = rules(spec.prior_set, n).shift_witness_priors()
    if witnesses is not None and exp_up is not None:
        np.minimum(bounds, witness_shift_bounds(witnesses, exp_up), out=bounds)
    np.fill_diagonal(bounds, -np.inf)
    return bounds


WITNESS_CANDIDATES = 3
"""Vertices tried per symbol for the hull's approximate witnesses: the heaviest there (every vertex when there are at
most twice this many)."""


def witness_shift_bounds(priors, exp_up: Fraction) -> np.ndarray:
    """N × N upper bounds on v(a, b) from the approximate witnesses (P, Q) = (prior i, prior j) of listed priors
    of 𝒫 (a hull's vertices; module doc), rounded outwards; symmetric (v(a, b) = v(b, a))."""
    V = np.array([[float(x) for x in prior] for prior in priors])  # vertices × N
    nv, n = V.shape
    if nv <= 2 * WITNESS_CANDIDATES:
        top = np.broadcast_to(np.arange(nv), (n, nv))  # every vertex for every symbol
    else:
        top = np.argsort(-V, axis=0, kind="stable")[:WITNESS_CANDIDATES].T  # N × k: heaviest vertices at each symbol
    used = np.unique(top)
    where = np.full(nv, -1)
    where[used] = np.arange(used.size)
    Vu = V[used]
    dist = np.stack([np.abs(Vu - Vu[r]).sum(axis=1) for r in range(used.size)])  # ‖v_r − v_s‖₁
    E = float_up(Fraction(exp_up))
    pad = (n + 8) * 2.0**-48
    best = np.zeros((n, n))  # largest certified κ (≥ 0) for Q heavier at a, P heavier at b
    rows = np.arange(n)[:, None]
    cols = np.arange(n)[None, :]
    for s_q in range(top.shape[1]):
        q = top[:, s_q][:, None]  # Q's vertex, by a (rows)
        for s_p in range(top.shape[1]):
            pv = top[:, s_p][None, :]  # P's vertex, by b (columns)
            d_a = V[q, rows] - V[pv, rows]  # δ_a = Q_a − P_a
            d_b = V[q, cols] - V[pv, cols]  # δ_b = Q_b − P_b
            rest = np.maximum(dist[where[q], where[pv]] - np.abs(d_a) - np.abs(d_b), 0.0)
            kappa = (d_a - d_b - rest) / 2 - pad
            rho = (np.abs(d_a + d_b) + rest) / 2 + pad
            ok = (rho * E <= 1.0 - 1e-12) & (kappa > 0)
            np.maximum(best, np.where(ok, kappa, 0.0), out=best)
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.minimum(1.0, (E - 1.0) / (1.0 + best * E) * (1.0 + 1e-13))
    return np.minimum(bound, bound.T)


def pair_order_score(prior_set, n: int) -> np.ndarray:
    """N × N heuristic scores (smaller first) for breaking ties between pairs of equal bound: h_a + h_b with
    h_x the largest mass symbol x has in 𝒫 or a proxy for it (upper, c + r/2, P(x), max over the vertices;
    :meth:`~mechdesign.privacy.base.PriorSetRules.heaviest_masses`). Only the order of the LPs depends on it,
    never a bound. Why this order: a heavy symbol constrains the pair LP (for a point prior v(a, b) is
    nonincreasing in P(a) and P(b), since a lighter symbol leaves the other symbols more room to make P·p what
    the two PML rows need); measured, the pairs of light symbols reach the mass-shift bound where any pair does."""
    h = np.asarray(rules(prior_set, n).heaviest_masses(), float)
    return h[:, None] + h[None, :]


def next_pair(open_bound: np.ndarray, score: np.ndarray, tolerance: float = 1e-9) -> int:
    """The flat index of the next pair to solve: of the open pairs whose bound is within ``tolerance``
    (relative) of the largest open bound, the one of least ``score``."""
    top = float(open_bound.max())
    if not np.isfinite(top):
        return int(np.argmax(open_bound))
    near = open_bound >= top - tolerance * max(1.0, abs(top))
    return int(np.argmin(np.where(near, score, np.inf)))
