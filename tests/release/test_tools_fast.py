"""The fast paths of ``analyze`` and ``estimate`` at large N (branch bigtools), against references written here.

* analyze: LDP, maximal leakage and the leakage capacity over Q_X(c) from integer column aggregates
  (mechdesign/theory/column_aggregate_measures.py) vs the definitions evaluated entry by entry in Fractions
  (Dobrushin paper eq. 1 and Definition 1, with the minimum over Q_X(c) taken over its N vertices
  c·1 + (1 − Nc)e_j, not by Lemma 4's closed form); disjoint support pairs vs the pairwise definition.
* estimate: the MLE and its bootstrap intervals (BLAS on one thread, bootstrap rows warm-started at p̂ with
  its zeros) vs scipy's SLSQP maximising Σ_y c_y log (Kᵀp)_y over the simplex, resample by resample on the
  same multinomial draws; a rank-deficient kernel (Newton declines, EM restarts from masses > 0) vs the
  optimal likelihood value; the CLI's edge cases (a zero column, a counts file, an unknown label).
* kernel loading for privatize/estimate: the int64 reader gives the kernel ``read_kernel`` gives (the test
  parses the file into Fractions itself), and a row summing to 1 only within rounding keeps read_kernel's
  message.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import optimize

from helpers.krr import krr
from mechdesign.certify.exact import ExactKernel
from mechdesign.cli.main import main
from mechdesign.release.estimate import NotIdentifiableWarning, estimate_distribution
from mechdesign.spec.errors import InputError
from mechdesign.theory import measures
from mechdesign.theory.column_aggregate_measures import (
    aggregate_capacity_ratio,
    aggregate_ldp_ratio,
    aggregate_max_leakage_sum,
)


def random_exact_kernel(rng, n: int, m: int, den: int = 64, zero_prob: float = 0.0) -> list[list[Fraction]]:
    """Rows of integers out of ``den`` (some zero with probability ``zero_prob``), each summing to den."""
    rows = []
    for _ in range(n):
        while True:
            w = rng.integers(1, 10, size=m) * (rng.random(m) >= zero_prob)
            if w.sum():
                break
        cut = np.sort(rng.choice(np.arange(1, den), size=m - 1, replace=False)) if m > 1 else np.array([])
        parts = np.diff(np.concatenate([[0], cut, [den]])).astype(int)
        parts = np.where(w > 0, parts, 0)
        parts[np.argmax(w)] += den - parts.sum()
        rows.append([Fraction(int(a), den) for a in parts])
    return rows


def ldp_by_definition(rows) -> float:
    """max_y max_{x,x'} log K_x(y)/K_x'(y) over the columns that are not all zero (Dobrushin paper eq. 1)."""
    worst = Fraction(1)
    for y in range(len(rows[0])):
        col = [r[y] for r in rows]
        if max(col) == 0:
            continue
        for a in col:
            for b in col:
                if a > 0 and b == 0:
                    return math.inf
                if b > 0:
                    worst = max(worst, a / b)
    return math.log(worst.numerator) - math.log(worst.denominator)


def capacity_by_vertices(rows, c: Fraction) -> float:
    """C(K, Q_X(c)) = max_y log max_x K_x(y) / min_{P ∈ Q_X(c)} P·K(:,y), the minimum of a linear function
    over the polytope Q_X(c) taken over its vertices c·1 + (1 − Nc)e_j (Dobrushin paper, Definition 1)."""
    n = len(rows)
    worst = Fraction(1)
    for y in range(len(rows[0])):
        col = [r[y] for r in rows]
        if max(col) == 0:
            continue
        low = min(sum(c * v for v in col) + (1 - n * c) * col[j] for j in range(n))
        if low <= 0:
            return math.inf
        worst = max(worst, max(col) / low)
    return math.log(worst.numerator) - math.log(worst.denominator)


@pytest.mark.parametrize("seed", range(6))
def test_aggregate_measures_equal_the_definitions(seed):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(3, 7)), int(rng.integers(3, 7))
    rows = random_exact_kernel(rng, n, m, zero_prob=0.3 if seed % 2 else 0.0)
    if seed == 4:  # an output that never occurs: skipped by every measure
        rows = [r[:-1] + [Fraction(0)] for r in rows]
        rows = [[v / sum(r) for v in r] for r in rows]
    K = ExactKernel.from_fractions(rows)
    # the fast path runs (None would mean the Fraction code answered)
    assert aggregate_ldp_ratio(K) is not None and aggregate_max_leakage_sum(K) is not None
    assert measures.ldp(K) == ldp_by_definition(rows)
    max_sum = sum(max(r[y] for r in rows) for y in range(len(rows[0])))
    assert measures.max_leakage(K) == pytest.approx(math.log(max_sum), rel=1e-15, abs=1e-15)
    for c in (Fraction(1, 4 * n), Fraction(1, 2 * n), Fraction(0)):
        spec = "simplex" if c == 0 else f"min_mass:{c}"
        assert aggregate_capacity_ratio(K, measures._as_prior_set(spec)) is not None
        expected = capacity_by_vertices(rows, c)
        got = measures.leakage_capacity(K, spec)
        assert got == expected or got == pytest.approx(expected, rel=1e-15)
    # the uniform point prior is Q_X(1/N)
    uniform = "point:" + ",".join(["1/%d" % n] * n)
    assert measures.leakage_capacity(K, uniform) == pytest.approx(capacity_by_vertices(rows, Fraction(1, n)))


def test_aggregate_paths_decline_what_they_cannot_do():
    rows = [[Fraction(1, 2), Fraction(1, 2)], [Fraction(1, 3), Fraction(2, 3)]]
    K = ExactKernel.from_fractions(rows)
    assert aggregate_capacity_ratio(K, [[0.5, 0.5], [0.2, 0.8]]) is None  # a hull of priors: no Q_X(c)
    assert aggregate_ldp_ratio(np.array([[0.5, 0.5], [0.25, 0.75]])) is None  # floats: the Fraction path
    # and the Fraction path still answers, equal to the definition
    assert measures.ldp(np.array([[0.5, 0.5], [0.25, 0.75]])) == pytest.approx(math.log(2))


def test_disjoint_support_pairs_match_the_pairwise_definition():
    rng = np.random.default_rng(7)
    K = (rng.random((9, 7)) < 0.3) * rng.random((9, 7))
    K[K.sum(axis=1) == 0, 0] = 1.0
    expected = [
        (i, j) for i in range(9) for j in range(i + 1, 9) if not any(K[i, y] > 0 and K[j, y] > 0 for y in range(7))
    ]
    assert expected  # the case exercises the missing edges
    assert measures.disjoint_support_pairs(K) == expected
    assert measures.has_disjoint_supports(K) is True


# ------------------------------------------------------------------ estimate
def mle_by_slsqp(K: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, float]:
    """argmax_{p ∈ Δ} Σ_y c_y log (Kᵀp)_y by scipy's SLSQP from several starts (the reference)."""
    obs = counts > 0
    A, c = K[:, obs], counts[obs].astype(float)
    n = K.shape[0]

    def neg(p):
        return -float(c @ np.log(np.maximum(p @ A, 1e-300)))

    def grad(p):
        return -(A @ (c / np.maximum(p @ A, 1e-300)))

    best = None
    for start in (np.full(n, 1.0 / n), np.eye(n)[np.argmax(K @ (counts / counts.sum()))] * 0.5 + 0.5 / n):
        res = optimize.minimize(
            neg,
            start,
            jac=grad,
            method="SLSQP",
            bounds=[(0.0, 1.0)] * n,
            constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1.0, "jac": lambda p: np.ones(n)}],
            options={"ftol": 1e-15, "maxiter": 1000},
        )
        if best is None or res.fun < best.fun:
            best = res
    p = np.maximum(best.x, 0.0)
    return p / p.sum(), -best.fun


@pytest.mark.parametrize("n,counts", [(3, [50, 30, 20]), (4, [90, 5, 3, 2]), (5, [40, 0, 10, 30, 20])])
def test_mle_and_bootstrap_intervals_match_slsqp_resample_by_resample(n, counts):
    K = krr(n, 3.0)
    counts = np.array(counts)
    B, seed = 20, 3
    res = estimate_distribution(K, counts, bootstrap=B, seed=seed, tol=1e-12)
    p_ref, L_ref = mle_by_slsqp(K, counts)
    assert res.diagnostics["converged"]
    assert np.abs(res.estimate - p_ref).max() < 1e-5
    assert res.diagnostics["loglik"] >= L_ref - 1e-8 * abs(L_ref)
    # the same draws as the library (Multinomial(n, Kᵀp̂), the documented parametric bootstrap)
    q = np.clip(K.T @ res.estimate, 0, None)
    draws = np.random.default_rng(seed).multinomial(int(counts.sum()), q / q.sum(), size=B)
    refs = np.array([mle_by_slsqp(K, d)[0] for d in draws])
    assert np.abs(res.lower - np.quantile(refs, 0.025, axis=0)).max() < 1e-4
    assert np.abs(res.upper - np.quantile(refs, 0.975, axis=0)).max() < 1e-4
    assert np.abs(res.standard_error - refs.std(axis=0, ddof=1)).max() < 1e-4


def test_mle_with_zeros_in_p_hat_reaches_slsqp_for_every_resample():
    """p̂ on a face of the simplex: resamples start from its zeros and need masses back (KKT joins)."""
    K = krr(6, 2.0)
    counts = np.array([300, 10, 5, 2, 150, 1])
    res = estimate_distribution(K, counts, bootstrap=30, seed=11, tol=1e-12)
    assert (res.estimate == 0).sum() >= 2  # the warm start really has zeros
    q = np.clip(K.T @ res.estimate, 0, None)
    draws = np.random.default_rng(11).multinomial(int(counts.sum()), q / q.sum(), size=30)
    refs = np.array([mle_by_slsqp(K, d)[0] for d in draws])
    assert np.abs(res.upper - np.quantile(refs, 0.975, axis=0)).max() < 1e-4
    assert np.abs(res.standard_error - refs.std(axis=0, ddof=1)).max() < 1e-4


def test_rank_deficient_kernel_bootstrap_reaches_the_optimal_likelihood():
    """Two equal rows: the Hessian is singular, Newton declines and EM (restarted from masses > 0) finishes;
    the maximiser is not unique, so the reference is the optimal likelihood value, per resample."""
    from mechdesign.release.estimate import em_mle

    K = np.array([[0.5, 0.3, 0.2], [0.5, 0.3, 0.2], [0.1, 0.2, 0.7], [0.2, 0.6, 0.2]])
    counts = np.array([200, 90, 60])
    with pytest.warns(NotIdentifiableWarning):  # rank 3 < N = 4, said as a warning
        res = estimate_distribution(K, counts, bootstrap=10, seed=2, tol=1e-9)
    assert res.diagnostics["rank"] == 3 and res.diagnostics["converged"]
    q = np.clip(K.T @ res.estimate, 0, None)
    draws = np.random.default_rng(2).multinomial(int(counts.sum()), q / q.sum(), size=10)
    # em_mle from p̂ with zeros (as the bootstrap starts) reaches every resample's optimal likelihood
    p0 = res.estimate.copy()
    em = em_mle(K, draws, tol=1e-9, p0=p0)
    assert em.converged.all()
    for d, L in zip(draws, em.loglik):
        assert L >= mle_by_slsqp(K, d)[1] - 1e-7 * abs(L)


def test_blas_runs_on_one_thread_inside_the_estimators():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from mechdesign.release.blas_threads import single_threaded_blas

    with single_threaded_blas():
        infos = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
        assert infos and all(i["num_threads"] == 1 for i in infos)


def test_cli_zero_column_counts_file_and_unknown_label(tmp_path, capsys):
    """A kernel with an output it never produces, decoded from a counts file (zero count there) and from a
    released CSV: the estimate is scipy's MLE; a count on the impossible output or an unknown label exits 2."""
    import json

    K = np.array([[0.5, 0.25, 0.25, 0.0], [0.25, 0.5, 0.25, 0.0], [0.25, 0.25, 0.5, 0.0]])
    kernel = tmp_path / "k.npy"
    np.save(kernel, K)
    counts = tmp_path / "counts.csv"
    counts.write_text("label,count\ny0,70\ny1,20\ny2,10\ny3,0\n")  # outputs y0..y3
    assert main(["estimate", "--kernel", str(kernel), "--counts", str(counts), "--json", "--bootstrap", "0"]) == 0
    out = json.loads(capsys.readouterr().out)
    p_ref, _ = mle_by_slsqp(K, np.array([70, 20, 10, 0]))
    assert np.abs(np.array(out["estimate"]) - p_ref).max() < 1e-5
    released = tmp_path / "released.csv"
    released.write_text("id,y\n" + "".join(f"{i},{v}\n" for i, v in enumerate(["y0"] * 70 + ["y1"] * 20 + ["y2"] * 10)))
    assert main(["estimate", "--kernel", str(kernel), "--input", str(released), "--column", "y", "--json"]) == 0
    out2 = json.loads(capsys.readouterr().out)
    assert np.abs(np.array(out2["estimate"]) - p_ref).max() < 1e-5
    counts.write_text("y0,70\ny3,1\n")
    assert main(["estimate", "--kernel", str(kernel), "--counts", str(counts)]) == 2
    err = capsys.readouterr().err
    assert "cannot produce it" in err and "'y3'" in err
    released.write_text("id,y\n0,y0\n1,7\n")
    assert main(["estimate", "--kernel", str(kernel), "--input", str(released), "--column", "y"]) == 2
    assert "unknown output label '7'" in capsys.readouterr().err


# ------------------------------------------------------------- kernel loading
def test_int64_reader_gives_read_kernels_kernel(tmp_path):
    from mechdesign.certify.exact import GridKernel
    from mechdesign.release import kernel_io
    from mechdesign.release.kernel_io import read_kernel

    def entry_by_entry(path):  # read_kernel's Fraction path, without its int64 reader
        return kernel_io._from_rows(*kernel_io._read_rows(path), stochastic=True)

    rng = np.random.default_rng(5)
    rows = random_exact_kernel(rng, 5, 4, den=1024, zero_prob=0.2)
    npy = tmp_path / "k.npy"
    np.save(npy, np.array([[float(v) for v in r] for r in rows]))
    csv = tmp_path / "k.csv"
    csv.write_text("\n".join(",".join(str(v) for v in r) for r in rows) + "\n")
    for path in (npy, csv):
        fast = read_kernel(path)
        assert isinstance(fast, GridKernel)  # the int64 reader's kernel (the Fraction path makes an ExactKernel)
        got = [[Fraction(int(a), fast.denominator) for a in r] for r in fast.numerators.tolist()]
        assert got == rows  # the test's own Fractions: dyadic floats and p/q text read exactly
        slow = entry_by_entry(path)
        assert fast.denominator == slow.denominator
    # a row summing to 1 only within rounding (1e-13 off): the one rule for kernels given as numbers divides it by
    # its exact sum on both paths (docs/reference/input-rules.md), as verify does
    near = tmp_path / "near.csv"
    near.write_text("0.5,0.5\n0.3,0.7000000000001\n")
    total = Fraction("0.3") + Fraction("0.7000000000001")
    expected = [[Fraction(1, 2), Fraction(1, 2)], [Fraction("0.3") / total, Fraction("0.7000000000001") / total]]
    assert read_kernel(near).fractions() == entry_by_entry(near).fractions() == expected
    # a row further than 1e-9 from 1: refused by both, with one message
    bad = tmp_path / "bad.csv"
    bad.write_text("0.5,0.5\n0.3,0.7000001\n")
    with pytest.raises(InputError) as fast_err:
        read_kernel(bad)
    with pytest.raises(InputError) as slow_err:
        entry_by_entry(bad)
    assert str(fast_err.value) == str(slow_err.value) and "more than 1e-9 from 1" in str(fast_err.value)
