"""On Ctrl-C, design() reports the best certified kernel found so far.

Interrupts here are simulated without signals: a module's ``run_interruptible`` (the one call through
which each program runs HiGHS) is replaced by one that solves normally k − 1 times and raises
KeyboardInterrupt at its k-th call, as Ctrl-C does (lp/interrupt.py re-raises after HiGHS stops).
Every reported kernel is checked by the exact oracle of tests/helpers/exact_oracle.py (independent of
mechdesign: Fractions, the spec as written), and every reported bound against the true optimum,
computed by an uninterrupted design of the same spec: a lower bound ≤ optimum ≤ the kernel's
utility when minimising (the other way round when maximising).
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest
from helpers.exact_oracle import check_kernel, utility

import mechdesign
from mechdesign.design import DesignInterrupted, design
from mechdesign.engines import interval_partitions, side_outputs
from mechdesign.engines import kernel_lp as kernel_engine
from mechdesign.engines import output_generation as colgen
from mechdesign.lp import incumbent
from mechdesign.lp import solve as lp_solve
from mechdesign.lp.solve import Status
from mechdesign.engines import dobrushin_pairs, ray_pool

ABSOLUTE = {  # |x − y| at ε = 2: about 10 rounds of output generation (engines/kernel_lp.py)
    "alphabet": 60,
    "epsilon": 2,
    "prior_set": {"kind": "min_mass", "c": 0.005},
    "objective": {"kind": "expected_loss", "loss": "absolute"},
}


def interrupt_at(monkeypatch, module, k: int, when=None) -> list[int]:
    """Replace ``module.run_interruptible``: calls 1..k−1 solve; call k (among those where ``when(h)``
    holds) raises KeyboardInterrupt after, or instead of, solving."""
    real = module.run_interruptible
    calls = [0]

    def fake(h):
        if when is not None and not when(h):
            return real(h)
        calls[0] += 1
        if calls[0] >= k:
            raise KeyboardInterrupt
        return real(h)

    monkeypatch.setattr(module, "run_interruptible", fake)
    return calls


def interrupted(spec) -> mechdesign.DesignResult:
    with pytest.raises(DesignInterrupted) as info:
        design(spec)
    exc = info.value
    assert isinstance(exc, KeyboardInterrupt)  # notebooks, loops and sweeps still stop
    assert exc.result.status is Status.INTERRUPTED and not exc.result.is_ok
    return exc.result


def assert_certified_and_bracketed(result, spec, optimum: float, sense: int) -> None:
    """The kernel is exactly private (oracle), its utility is result.objective, and the reported bound
    sits on the right side of the true optimum (sense +1: minimise)."""
    exact = result.exact_kernel.strings()
    verdict = check_kernel(exact, spec)
    assert verdict.private, verdict.reason
    value = float(utility(exact, spec))
    assert math.isclose(value, result.objective, rel_tol=1e-9, abs_tol=1e-12)
    assert sense * value >= sense * optimum - 1e-12  # no kernel beats the optimum
    cert = result.certificate
    assert cert.feasible
    if cert.dual_bound is not None:
        assert sense * cert.dual_bound <= sense * optimum + 1e-12, (cert.dual_bound, optimum)
        assert math.isclose(cert.gap, abs(value - cert.dual_bound), rel_tol=1e-6, abs_tol=1e-12)


# ------------------------------------------------------------------ output generation (engines/output_generation.py)
@pytest.mark.parametrize("k", [2, 4, 8])
def test_output_generation_interrupted_at_round_k(monkeypatch, k):
    optimum = design(ABSOLUTE).objective
    interrupt_at(monkeypatch, colgen, k)
    result = interrupted(ABSOLUTE)
    # the last finished round's kernel, or the one-ray-per-output master's when that is better still
    assert f"round {k - 1}" in result.solve.message or "ray probe" in result.solve.message
    assert result.certificate.dual_bound is not None  # its Lagrangian bound, recomputed by weak duality
    assert_certified_and_bracketed(result, ABSOLUTE, optimum, +1)
    assert result.certificate.gap > 1e-6  # stopped early: a true, open gap
    assert result.interrupted_after is not None and result.interrupted_after >= 0


def test_later_rounds_give_no_worse_kernels_and_bounds(monkeypatch):
    gaps = []
    for k in (2, 4, 6):
        monkeypatch.undo()
        interrupt_at(monkeypatch, colgen, k)
        gaps.append(interrupted(ABSOLUTE).certificate.gap)
    assert gaps[0] >= gaps[1] >= gaps[2]


def test_interrupt_before_any_kernel_says_so(monkeypatch):
    interrupt_at(monkeypatch, kernel_engine, 1)  # the first LP: the one-ray-per-output master
    with pytest.raises(DesignInterrupted) as info:
        design(ABSOLUTE)
    result = info.value.result
    assert result.kernel is None and result.certificate is None and result.objective is None
    assert str(info.value).endswith("no kernel found yet")  # the constant kernel is not "found"
    assert result.to_json()["status"] == "interrupted"


# ------------------------------------------------------------------ column generation (mutual information)
def test_mi_column_generation_interrupted(monkeypatch):
    spec = {
        "alphabet": 16,  # past the exact threshold (13): column generation over ray families
        "epsilon": 1,
        "prior_set": {"kind": "min_mass", "c": 0.01},
        "objective": {"kind": "mutual_information", "prior": [f"{i + 1}/136" for i in range(16)]},  # P ∝ 1..16
    }
    full = design(spec)
    assert "column generation" in full.solve.method
    interrupt_at(monkeypatch, ray_pool, 3)  # the MI master lives in engines/ray_pool.py
    result = interrupted(spec)
    assert "column generation, round" in result.solve.message  # round 1 or 2 (2 may tie with 1)
    assert result.certificate.dual_bound is not None
    assert_certified_and_bracketed(result, spec, full.objective, -1)


# ------------------------------------------------------------------ output generation with epigraph rows
def test_worst_case_output_generation_interrupted(monkeypatch):
    spec = {
        "alphabet": 30,
        "epsilon": 1,
        "prior_set": {"kind": "min_mass", "c": 0.01},
        "objective": {"kind": "expected_loss", "loss": "absolute", "prior": "worst_case"},
    }
    full = design(spec)
    assert full.solve.method == "output generation (worst case)" and full.solve.lps >= 4
    interrupt_at(monkeypatch, colgen, 3)  # engines/worst_case.py: the epigraph rows in colgen's restricted LP
    result = interrupted(spec)
    # the last finished round's kernel, or the uniform-prior probe's when that is better still
    assert "(worst case), round 2" in result.solve.message or "uniform prior" in result.solve.message
    assert result.certificate.dual_bound is not None  # the best Lagrangian bound of the rounds, rigorous
    assert_certified_and_bracketed(result, spec, full.objective, +1)


def test_interval_partition_master_interrupted(monkeypatch):
    """ε-LDP with |x − y| (engines/interval_partitions.py): Ctrl-C in the master's fourth solve keeps the third
    round's mixture of atoms, certified; no given-prior LP has run, so there is no bound."""
    spec = {
        "alphabet": 60,
        "epsilon": 1,
        "prior_set": {"kind": "simplex"},
        "objective": {"kind": "expected_loss", "loss": "absolute", "prior": "worst_case"},
    }
    full = design(spec)
    assert full.solve.method == "interval-partition master (worst case, ε-LDP)" and full.solve.lps >= 5
    interrupt_at(monkeypatch, interval_partitions, 4)
    result = interrupted(spec)
    assert "interval-partition master, round 3" in result.solve.message
    assert result.objective > full.objective * (1 + 1e-6)  # an early round's kernel, not the optimum
    assert_certified_and_bracketed(result, spec, full.objective, +1)


def test_worst_case_with_side_rows_interrupted(monkeypatch):
    """engines/side_outputs.py still serves a worst case whose LP has rows besides the PML ones (another guarantee
    in ``privacy``)."""
    spec = {
        "alphabet": 30,
        "privacy": [
            {"epsilon": 1, "prior_set": {"kind": "min_mass", "c": 0.01}},
            {"epsilon": 3, "prior_set": {"kind": "simplex"}},
        ],
        "objective": {"kind": "expected_loss", "loss": "absolute", "prior": "worst_case"},
    }
    full = design(spec)
    assert "epigraph" in full.solve.method
    interrupt_at(monkeypatch, side_outputs, 2)
    result = interrupted(spec)
    assert "side rows), round 1" in result.solve.message
    # the oracle checks one guarantee at a time: private under both is private under the list; the worst
    # case is over the primary (first) guarantee's prior set
    one = [{k: v for k, v in spec.items() if k != "privacy"} | g for g in spec["privacy"]]
    exact = result.exact_kernel.strings()
    assert check_kernel(exact, one[1]).private
    assert_certified_and_bracketed(result, one[0], full.objective, +1)


# ------------------------------------------------------------------ lazy pair LPs (Dobrushin)
def test_dobrushin_pairs_interrupted(monkeypatch):
    spec = {
        "alphabet": 6,
        "epsilon": 0.5,
        # a box of distinct widths: its mass-shift bounds (engines/dobrushin_shift.py) leave the pairs of the
        # narrowest symbol open, so several pair LPs run (a point prior is now settled by one)
        "prior_set": {
            "kind": "box",
            "lower": ["1/60", "2/60", "3/60", "4/60", "5/60", "6/60"],
            "upper": ["1/6", "1/5", "1/4", "1/3", "1/2", "1"],
        },
        "objective": {"kind": "dobrushin"},
    }
    full = design(spec)
    assert full.solve.method == "lazy pair LPs" and full.solve.lps >= 3
    interrupt_at(monkeypatch, dobrushin_pairs, 3)
    result = interrupted(spec)
    assert "pair LPs, " in result.solve.message  # the best of the pairs solved before the interrupt
    assert result.certificate.dual_bound is not None  # every pair's bound from the duals held so far
    assert_certified_and_bracketed(result, spec, full.objective, -1)


# ------------------------------------------------------------------ the MIP's incumbent, read after cancel
def test_bayes_mip_incumbent_read_after_cancel(monkeypatch):
    spec = {
        "alphabet": 16,
        "epsilon": 1,
        "prior_set": {"kind": "min_mass", "c": 0.01},
        "objective": {"kind": "bayes_vulnerability", "prior": [f"{i + 1}/136" for i in range(16)]},
        "output_size": 4,
    }
    full = design(spec)
    assert "MIP" in full.solve.method

    def is_mip(h) -> bool:
        return len(h.getLp().integrality_) > 0

    real = lp_solve.run_interruptible

    def fake(h):  # the MIP runs, then "Ctrl-C": _solve_highs must read its incumbent and dual bound
        status = real(h)
        if is_mip(h):
            raise KeyboardInterrupt
        return status

    monkeypatch.setattr(lp_solve, "run_interruptible", fake)
    offered = []
    real_offer = lp_solve.offer_lp

    def recording(lp, x=None, row_dual=None, **kw):
        offered.append((kw.get("source"), x is not None, kw.get("bound")))
        return real_offer(lp, x, row_dual, **kw)

    monkeypatch.setattr(lp_solve, "offer_lp", recording)
    result = interrupted(spec)
    from_mip = [o for o in offered if o[0] == "HiGHS, interrupted"]
    assert from_mip and from_mip[0][1] and from_mip[0][2] is not None  # its incumbent and its dual bound
    assert from_mip[0][2] >= full.objective - 1e-12  # an upper bound on the M-output optimum
    assert_certified_and_bracketed(result, spec, full.objective, -1)
    assert result.certificate.gap < 1e-6  # the MIP had finished: its bound closes the gap


# ------------------------------------------------------------------ the exact re-solve
def test_interrupt_during_the_exact_resolve_keeps_the_first_kernel(monkeypatch):
    design_module = importlib.import_module("mechdesign.design")  # the package's `design` is the function
    import mechdesign.lp.exact as exact

    spec = {**ABSOLUTE, "alphabet": 3}  # small enough for the exact rational simplex (lp/exact.py)
    optimum = design(spec).objective
    monkeypatch.setattr(design_module, "EXACT_FALLBACK_REPAIR", -1)  # force the exact re-solve

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(exact, "solve_exact", stopped)
    result = interrupted(spec)
    assert_certified_and_bracketed(result, spec, optimum, +1)
    assert result.certificate.gap <= 1e-9  # the first design was finished and its bound is kept


def test_second_interrupt_during_certification_gives_up(monkeypatch):
    design_module = importlib.import_module("mechdesign.design")  # the package's `design` is the function

    interrupt_at(monkeypatch, colgen, 4)

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(design_module, "certify_design", stopped)
    with pytest.raises(DesignInterrupted) as info:
        design(ABSOLUTE)
    assert info.value.result.kernel is None and info.value.certification_interrupted
    assert "certification was interrupted" in str(info.value)


# ------------------------------------------------------------------ the incumbent itself
def test_incumbent_keeps_the_best_kernel_and_bound_and_settles_lazily():
    evaluated = []

    def loss(K):  # a loss: smaller is better
        evaluated.append(K.copy())
        return float(K[:, 0].sum())

    inc = incumbent.Incumbent(+1, loss, columns=2)
    inc.offer_kernel(np.array([[0.5, 0.5], [0.5, 0.5]]), "a")
    inc.offer_kernel(np.array([[1.0, 0.0], [1.0, 0.0]]), "worse")
    inc.offer_kernel(np.array([[0.1, 0.2], [0.5, 0.5]]), "rows do not sum to 1")
    inc.offer_kernel(np.array([[np.nan, 1.0], [0.5, 0.5]]), "nan")
    assert evaluated == []  # nothing evaluated while at most MAX_PENDING candidates wait
    # three columns: the lightest merges into the heaviest (post-processing), rows still sum to 1
    inc.offer_kernel(np.array([[0.0, 0.9, 0.1], [0.2, 0.7, 0.1]]), "wide")
    assert len(evaluated) == 3  # five pending: the three valid ones evaluated, the best kept
    best = inc.best_kernel()
    assert best.kernel.shape == (2, 2) and np.allclose(best.kernel.sum(axis=1), 1.0)
    assert best.source == "wide" and best.value == pytest.approx(0.2)
    # a stream: each offer replaces the stream's previous one unevaluated (its kernels only improve)
    for i in range(10):
        inc.offer_kernel(lambda i=i: np.array([[0.1 / (i + 1), 1 - 0.1 / (i + 1)]] * 2), f"round {i}", stream="s")
    assert len(evaluated) == 3
    assert inc.best_kernel().source == "round 9" and len(evaluated) == 4
    calls = []
    assert inc.offer_bound(0.1)
    assert inc.offer_bound(lambda: calls.append(1) or 0.15, estimate=0.15)
    assert not inc.offer_bound(0.12)  # a lower bound: the larger one is kept
    assert calls == [] and inc.bound_estimate == 0.15
    assert inc.settled_bound() == 0.15 and calls == [1]


def test_offers_outside_a_design_do_nothing_and_design_problem_scopes_bounds():
    incumbent.offer(np.eye(2), 0.5)  # no design running: a no-op
    inc = incumbent.Incumbent(-1, lambda K: 0.0, columns=2)
    lp, other = object(), object()
    with incumbent.collecting(inc):
        with incumbent.design_problem(lp):
            assert inc.bound_lp_of(lp) is lp and inc.bound_lp_of(other) is None
            incumbent.offer_lp(other, bound=0.3)  # not declared: its bound is not the design's
            assert inc.bound_estimate is None
            incumbent.offer_lp(lp, bound=0.3)
            assert inc.bound_estimate == 0.3
        assert inc.bound_lp_of(lp) is None
    assert incumbent.current() is None


def test_bayes_vulnerability_through_the_engine_offers_upper_bounds(monkeypatch):
    """Bayes vulnerability (M ≥ N) is min Σ C K with C = −diag(P) in engines/kernel_lp.py; interrupted in its
    output generation, the bound reported must be an *upper* bound on the maximum (offered negated)."""
    weights = [(7 * i) % 11 + 1 for i in range(30)]
    spec = {
        "alphabet": 30,
        "epsilon": 1,
        "prior_set": {"kind": "min_mass", "c": "1/300"},
        "objective": {"kind": "bayes_vulnerability", "prior": [f"{w}/{sum(weights)}" for w in weights]},
    }
    full = design(spec)
    assert "output generation" in full.solve.method  # a non-uniform prior: the one-ray master is not enough
    interrupt_at(monkeypatch, colgen, 2)
    result = interrupted(spec)
    assert result.certificate.dual_bound is not None
    assert_certified_and_bracketed(result, spec, full.objective, -1)
