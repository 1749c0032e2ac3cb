"""The per-round shortcuts of output generation (engines/output_generation.py) give what the slow ways gave.

- :func:`mechdesign.cone.pricing.price` sorts the values only; :meth:`Priced.order_of` sorts the columns asked
  for. Both are checked against numpy's stable argsort of W, the ray's ones against the q smallest entries
  with ties to the smallest x.
- :func:`mechdesign.engines.output_generation._basis_codes` reads HiGHS's basis from its basic variables and the solution;
  every seat of every round of small designs is checked against the statuses read from ``h.getBasis()``
  (the way it was done before), with and without the mirror fold, late ray columns and differenced rows.
- The kernel of each round is unfolded and lifted only when asked for, and is then what the lift gives.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mechdesign.engines import output_generation as colgen
from mechdesign.cone.cone_lift import lift_into_cone
from mechdesign.engines.output_generation import epigraph_multipliers, generate_outputs, price, priced_rays

E1 = math.nextafter(math.exp(-1.0), 0.0)


@pytest.mark.parametrize("c", [0.0, 1 / 40, 1 / 6])
@pytest.mark.parametrize("seed", [0, 1])
def test_order_of_is_the_stable_argsort_and_rays_take_the_smallest_ties(c, seed):
    rng = np.random.default_rng(seed)
    n, m = 20, 37
    W = rng.integers(-3, 4, size=(n, m)).astype(float)  # many ties
    W[:, 5] = 0.0  # a column of ties only
    W[3, 7] = -0.0
    priced = price(W, c, E1)
    ys = np.array([36, 0, 5, 7, 7, 12])
    want = np.argsort(W, axis=0, kind="stable")
    assert np.array_equal(priced.order_of(ys), want[:, ys])
    assert np.array_equal(priced.order, want)
    assert np.array_equal(priced.order_of(ys), want[:, ys])  # from the full order, once known
    R = priced_rays(price(W, c, E1), n, np.arange(m))
    for y in range(m):
        q = int(priced.q[y])
        ones = np.flatnonzero(R[:, y] == 1.0) if q < n else np.arange(n)
        # the ones are q entries no larger than any other, ties taken from the smallest x
        assert ones.size >= q
        top = want[:q, y]
        assert set(top.tolist()) <= set(ones.tolist())
        if 0 < q < n:
            assert W[top, y].max() <= W[want[q:, y], y].min()
        # the value is the ray's cost (the same sums in another order: within rounding)
        assert abs(float(W[:, y] @ R[:, y]) - float(priced.value[y])) <= 1e-9 * (1 + np.abs(W[:, y]).sum())


def test_price_values_match_a_sort_of_every_column():
    """The prefix sums come from sorted values: the same as sorting by a stable argsort and gathering."""
    rng = np.random.default_rng(3)
    n, m = 50, 400
    W = np.round(rng.normal(size=(n, m)), 2)
    c = 1 / 100
    priced = price(W, c, E1)
    Ws = np.take_along_axis(W, np.argsort(W, axis=0, kind="stable"), axis=0)
    S = np.vstack([np.zeros((1, m)), np.cumsum(Ws, axis=0)])
    q = priced.q
    cq = c * q
    # two-level outputs: the value is S_q + u_q (S_N − S_q) to the bit
    two = (priced.base > 0) & (priced.frac == priced.base) & (q < n)
    u = (E1 - cq[two]) / (1.0 - cq[two])
    Sq, SN = S[q[two], np.flatnonzero(two)], S[n, two]
    assert two.any()
    assert np.array_equal(priced.value[two], Sq + u * (SN - Sq))


def _generate(L, c, fold_ok=True, difference_min=None, monkeypatch=None):
    """The worst-case design's output generation (as engines/worst_case.py runs it) from 2 outputs."""
    n = L.shape[0]
    a = 1.0 - n * c
    if difference_min is not None:
        monkeypatch.setattr(colgen, "DIFFERENCE_MIN_N", difference_min)
    return generate_outputs(c * L, c, E1, epigraph=(L, a), initial=np.array([0, n - 1]))


LOSSES = {
    "abs": lambda x: np.abs(x[:, None] - x[None, :]),
    "square": lambda x: (x[:, None] - x[None, :]) ** 2,
    "abs, not symmetric": lambda x: np.abs(x[:, None] - x[None, :]) + (x[None, :] % 3),
}


@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("c_frac,difference", [(0, None), (2, None), (2, 10)])
def test_basis_codes_are_the_basis_highs_reports_at_every_seat(loss, c_frac, difference, monkeypatch):
    n = 40
    x = np.arange(n, dtype=float)
    L = LOSSES[loss](x)
    c = 0.0 if c_frac == 0 else 1.0 / (c_frac * n)
    seen = {"fast": 0, "slow": 0}
    real = colgen._seated_statuses
    real_codes = colgen._basis_codes
    codes_taken = []

    def codes(h, xs, row_dual, bounds):
        got = real_codes(h, xs, row_dual, bounds)
        if got is not None:
            # the codes against getBasis() right there, before the model grows
            basis = h.getBasis()
            assert got[0].tolist() == [int(s) for s in basis.col_status]
            assert got[1].tolist() == [int(s) for s in basis.row_status]
        codes_taken.append(got is not None)
        return got

    def seated(h, ys, priced, offsets, row_offsets, n_, codes_, bounds):
        got = real(h, ys, priced, offsets, row_offsets, n_, codes_, bounds)
        if codes_ is None:
            seen["slow"] += 1
            return got
        want = real(h, ys, priced, offsets, row_offsets, n_, None, bounds)  # from h.getBasis(), as before
        assert [int(s) for s in got[0]] == [int(s) for s in want[0]]
        assert [int(s) for s in got[1]] == [int(s) for s in want[1]]
        seen["fast"] += 1
        return got

    monkeypatch.setattr(colgen, "_basis_codes", codes)
    monkeypatch.setattr(colgen, "_seated_statuses", seated)
    res = _generate(L, c, difference_min=difference, monkeypatch=monkeypatch)
    assert res.status == "optimal"
    assert seen["fast"] >= 1 and seen["slow"] == 0
    assert all(codes_taken)


def test_seats_from_codes_give_the_same_design_as_seats_read_from_the_basis(monkeypatch):
    n = 60
    x = np.arange(n, dtype=float)
    L = np.abs(x[:, None] - x[None, :])
    c = 1.0 / (2 * n)
    fast = _generate(L, c)
    monkeypatch.setattr(colgen, "_basis_codes", lambda *a: None)
    slow = _generate(L, c)
    assert (fast.rounds, fast.iterations, fast.value, fast.bound) == (
        slow.rounds,
        slow.iterations,
        slow.value,
        slow.bound,
    )
    assert np.array_equal(fast.outputs, slow.outputs) and np.array_equal(fast.columns, slow.columns)


def test_round_kernels_are_lifted_only_when_asked_for(monkeypatch):
    n = 30
    x = np.arange(n, dtype=float)
    L = np.abs(x[:, None] - x[None, :])
    c = 1.0 / (2 * n)
    lifts = []
    monkeypatch.setattr(colgen, "lift_into_cone", lambda K, *cone: lifts.append(K.shape) or lift_into_cone(K, *cone))
    rounds = []
    res = generate_outputs(
        c * L, c, E1, epigraph=(L, 1.0 - n * c), initial=np.array([0, n - 1]), on_round=rounds.append
    )
    assert len(rounds) == res.rounds >= 2 and lifts == []
    K = rounds[0].kernel(n)  # an early round's kernel, when asked for: a kernel whose rows sum to one
    assert len(lifts) == 1
    assert np.allclose(K.sum(axis=1), 1.0, atol=1e-8) and K.min() >= 0.0
    assert rounds[0].columns is rounds[0].columns and len(lifts) == 1  # computed once
    K_last = res.kernel(n)
    assert len(lifts) == 2
    # the worst-case value of the last kernel is the restricted LP's value
    r = (K_last * L).sum(axis=1)
    assert abs(c * r.sum() + (1.0 - n * c) * r.max() - res.value) <= 1e-6 * max(1.0, res.value)
    assert np.all(epigraph_multipliers(res.mu, 1.0 - n * c) >= 0.0)
