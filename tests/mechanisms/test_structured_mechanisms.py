"""Structured mechanisms (k-RR, subset selection, unary encoding, local hashing, Hadamard response):
each kernel formed independently here from the family's definition equals the mechanism's explicit
kernel exactly; the closed-form certificate agrees with the project's exact check (``verify_kernel`` /
``check_pml``) on that kernel; the sampler passes a chi-square test per input; the unbiased estimator
and its variance formula (Wang et al., USENIX Security 2017) hold by simulation; 95% intervals cover."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from scipy.linalg import hadamard
from scipy.stats import chisquare

from mechdesign.certify.exact import ExactKernel, check_pml, verify_kernel
from mechdesign.mechanisms import hadamard_response, krr, local_hashing, subset_selection, unary_encoding
from mechdesign.mechanisms.hadamard_response import walsh_hadamard
from mechdesign.mechanisms.two_level import allowed_ratio, column_ratio
from mechdesign.spec.models import MinMass


def _mechanisms(n, eps, c):
    ps = None if c == 0 else c
    out = [
        krr(n, eps, prior_set=ps),
        subset_selection(n, eps, prior_set=ps),
        subset_selection(n, eps, d=2, prior_set=ps),
        subset_selection(n, eps, d=(1, 3), weights=("1/4", "3/4"), prior_set=ps),
        unary_encoding(n, eps, prior_set=ps),
        unary_encoding(n, eps, optimized=False, prior_set=ps),
        local_hashing(n, eps, prime=11, prior_set=ps),
        local_hashing(n, eps, g=3, seeds=5, rng=7, prior_set=ps),
        hadamard_response(n, eps, prior_set=ps),
    ]
    return out


CASES = [
    (n, eps, c)
    for n, eps, c in [
        (4, "1", 0),
        (5, "log(3)", 0),
        (6, "0.5", 0),
        (8, "2", 0),
        (5, "1", Fraction(1, 10)),
        (6, "0.5", Fraction(1, 20)),
        (4, "2", Fraction(1, 8)),
    ]
]


def _independent_kernel(m):
    """The kernel from the family's definition alone (its rates), columns in the mechanism's output order."""
    n = m.n_symbols
    fam = m.family
    if fam == "krr":
        r = m.ratio
        return [[r / (r + n - 1) if x == y else 1 / (r + n - 1) for y in range(n)] for x in range(n)]
    if fam == "subset_selection":
        rows = [[] for _ in range(n)]
        for w, d, r in zip(m.weights, m.sizes, m.ratios):
            for x in range(n):
                weights = [r if x in s else Fraction(1) for s in itertools.combinations(range(n), d)]
                total = sum(weights)
                rows[x] += [w * v / total for v in weights]
        return rows
    if fam == "unary_encoding":
        p, q = m.support_probabilities()
        rows = []
        for x in range(n):
            row = []
            for mask in range(2**n):
                v = Fraction(1)
                for j in range(n):
                    rate = p if j == x else q
                    v *= rate if mask >> j & 1 else 1 - rate
                row.append(v)
            rows.append(row)
        return rows
    if fam == "local_hashing":
        seeds = list(range(m.prime * (m.prime - 1))) if m.pool is None else m.pool.tolist()
        r, g, P = m.ratio, m.g, m.prime
        rows = []
        for x in range(n):
            row = []
            for s in seeds:
                a, b = 1 + s // P, s % P
                h = ((a * x + b) % P) % g
                row += [(r if v == h else 1) / (r + g - 1) / len(seeds) for v in range(g)]
            rows.append(row)
        return rows
    if fam == "hadamard_response":
        k = m.order
        H = hadamard(k)
        r = m.ratio
        return [[(r if H[x + 1, y] == 1 else 1) * 2 / (k * (r + 1)) for y in range(k)] for x in range(n)]
    raise AssertionError(fam)


@pytest.mark.parametrize("n,eps,c", CASES)
def test_structured_equals_independent_kernel_and_certificate_agrees_with_verify(n, eps, c):
    for m in _mechanisms(n, eps, c):
        kernel, labels = m.to_kernel()
        assert kernel.fractions() == _independent_kernel(m), m
        prior_set = MinMass(kind="min_mass", c=c)
        assert verify_kernel(kernel, prior_set, eps).private, m
        cert = m.certificate()
        assert cert.feasible
        worst = check_pml(kernel, prior_set, m.bound).worst_ratio
        if m.family == "local_hashing" and m.pool is not None and c > 0:
            assert cert.worst_ratio >= worst  # R <= R_1 is sufficient; equality needs a one-symbol bucket
        else:
            assert cert.worst_ratio == worst, m


@pytest.mark.parametrize("n,eps,c", CASES[:3] + CASES[4:6])
def test_support_probabilities_are_exact(n, eps, c):
    """p* and q* (the decoder's constants) from the explicit kernel: every pair x ≠ x' gives the same q*."""
    for m in _mechanisms(n, eps, c):
        if m.family == "local_hashing" and m.pool is not None:
            continue  # a fixed pool: q* holds on average over the pool's draw only
        kernel, labels = m.to_kernel()
        K = kernel.fractions()
        p, q = m.support_probabilities()
        supports = [_supports(m, lab) for lab in labels]
        for x in range(n):
            assert sum(K[x][j] for j, s in enumerate(supports) if x in s) == p
            for x2 in range(n):
                if x2 != x:
                    assert sum(K[x2][j] for j, s in enumerate(supports) if x in s) == q, (m, x, x2)


def _supports(m, label):
    if m.family == "krr":
        return {m.labels.index(label)}
    if m.family in ("subset_selection", "unary_encoding"):
        return {int(t) for t in label.split()}
    if m.family == "local_hashing":
        s, v = (int(t) for t in label.split(":"))
        a, b = 1 + s // m.prime, s % m.prime
        return {x for x in range(m.n_symbols) if ((a * x + b) % m.prime) % m.g == v}
    H = hadamard(m.order)
    return {x for x in range(m.n_symbols) if H[x + 1, int(label)] == 1}


@pytest.mark.parametrize("n,eps,c", [(5, "1", 0), (6, "0.5", Fraction(1, 20))])
def test_sampler_frequencies_chi_square_per_input(n, eps, c):
    draws = 30_000
    for m in _mechanisms(n, eps, c):
        kernel, labels = m.to_kernel()
        K = kernel.to_float()
        position = {lab: j for j, lab in enumerate(labels)}
        for x in range(n):
            cells = m.format_reports(m.privatize_indices(np.full(draws, x), rng=1000 + x))
            counts = np.bincount([position[v] for v in cells], minlength=len(labels))
            support = K[x] > 0
            assert counts[~support].sum() == 0
            stat = chisquare(counts[support], draws * K[x][support] / K[x][support].sum())
            assert stat.pvalue > 1e-4, (m, x, stat)


def test_tightness_of_the_closed_form():
    """R_q makes a q-high column's Lemma-4 ratio exactly E, and the explicit column's check agrees."""
    E = Fraction(27183, 10000)
    for n, c, q in [(6, Fraction(1, 20), 1), (6, Fraction(1, 20), 3), (10, Fraction(1, 40), 4), (5, Fraction(0), 2)]:
        R = allowed_ratio(E, c, q)
        assert column_ratio(R, c, q, n) == E
        col = [R] * q + [Fraction(1)] * (n - q)
        lemma4 = max(col) / (c * sum(col) + (1 - n * c) * min(col))  # Lemma 4 of the Dobrushin paper
        assert lemma4 == E
        kernel = ExactKernel.from_fractions([[v / sum(col), 1 - v / sum(col)] for v in col])
        assert check_pml(kernel, MinMass(kind="min_mass", c=c), E).ratios[0] == E


def test_walsh_hadamard_matches_scipy():
    v = np.random.default_rng(0).integers(-50, 50, size=64)
    assert np.array_equal(walsh_hadamard(v), hadamard(64) @ v)


def _support_counts_per_rep(m, reports, reps, n):
    if reports.positions is not None:
        rep = np.repeat(np.arange(reports.n) // n, np.diff(reports.offsets))
        return np.bincount(rep * m.n_symbols + reports.positions, minlength=reps * m.n_symbols).reshape(reps, -1)
    from mechdesign.mechanisms.base import Reports

    out = np.empty((reps, m.n_symbols), dtype=np.int64)
    for r in range(reps):
        sl = slice(r * n, (r + 1) * n)
        out[r] = m.support_counts(
            Reports(n=n, values=reports.values[sl], seeds=None if reports.seeds is None else reports.seeds[sl])
        )
    return out


@pytest.mark.parametrize(
    "make",
    [
        lambda: krr(6, 1),
        lambda: subset_selection(6, 1),
        lambda: unary_encoding(6, 1),
        lambda: local_hashing(6, 1),
        lambda: hadamard_response(6, 1),
        lambda: subset_selection(6, 1, prior_set=Fraction(1, 24)),
    ],
)
def test_unbiased_variance_formula_and_coverage_by_simulation(make):
    m = make()
    P = np.array([0.3, 0.25, 0.2, 0.15, 0.1, 0.0])
    reps, n = 300, 2000
    rng = np.random.default_rng(11)
    x = rng.choice(6, size=reps * n, p=P)
    reports = m.privatize_indices(x, rng=rng)
    C = _support_counts_per_rep(m, reports, reps, n)
    est = [m.estimate_from_counts(C[r], n) for r in range(reps)]
    F = np.array([e.estimate for e in est])
    var = m.variances(n, P)
    # unbiased: the mean over reps is within 4 standard errors of P
    assert np.all(np.abs(F.mean(axis=0) - P) <= 4 * np.sqrt(var / reps))
    # variance formula: sample variance over 300 reps within its chi-square spread
    ratio = F.var(axis=0, ddof=1) / var
    assert np.all((ratio > 0.7) & (ratio < 1.35)), ratio
    lower = np.array([e.lower for e in est])
    upper = np.array([e.upper for e in est])
    cover = ((lower <= P) & (P <= upper)).mean()
    assert 0.925 <= cover <= 0.975, cover


def test_save_and_load_round_trip(tmp_path):
    from mechdesign.mechanisms import load

    for m in _mechanisms(6, "1", Fraction(1, 20)):
        path = tmp_path / f"{m.family}.json"
        m.save(path)
        back = load(path)
        assert back.to_kernel()[0].fractions() == m.to_kernel()[0].fractions()
        assert back.certificate().worst_ratio == m.certificate().worst_ratio


def test_impossible_and_malformed_reports_name_the_row():
    from mechdesign.spec.errors import InputError

    ss = subset_selection(6, 1, d=2)
    with pytest.raises(InputError, match="row 3: impossible report: a set of 3"):
        ss.parse_reports(["0 1", "2 5", "1 2 3"])
    with pytest.raises(InputError, match="row 2: impossible report: symbol indices must be distinct"):
        ss.parse_reports(["0 1", "3 3"])
    with pytest.raises(InputError, match="row 1: malformed report"):
        ss.parse_reports(["0 x"])
    with pytest.raises(InputError, match="row 2: symbol index 9 outside"):
        unary_encoding(6, 1).parse_reports(["", "9"])
    with pytest.raises(InputError, match="row 2: impossible report 8"):
        hadamard_response(6, 1).parse_reports(["1", "8"])
    with pytest.raises(InputError, match="row 1: impossible report"):
        local_hashing(6, 1, g=3).parse_reports(["5:3"])
    with pytest.raises(InputError, match="row 2: unknown input label 'z'"):
        krr(["a", "b"], 1).parse_reports(["a", "z"])


def test_krr_mle_equals_em_on_the_explicit_kernel():
    """k-RR's closed-form MLE (water-filling) against the project's EM + Newton on the explicit kernel."""
    from mechdesign.release.estimate import em_mle

    m = krr(8, "1")
    K = m.to_kernel()[0].to_float()
    rng = np.random.default_rng(2)
    for _ in range(5):
        P = rng.dirichlet(np.full(8, 0.3))  # sparse priors: the MLE has masses at 0
        c = m.support_counts(m.privatize_indices(rng.choice(8, size=300, p=P), rng=rng))
        assert np.abs(m.mle_from_counts(c, 300) - em_mle(K, c, tol=1e-13).p[0]).max() < 1e-9
    with pytest.raises(Exception, match="not a function of the support counts"):
        subset_selection(6, 1).estimate_from_counts(np.ones(6, dtype=int), 6, method="mle")


def test_explicit_mechanism_from_a_structured_one_samples_the_same_reports():
    from mechdesign.release.mechanism import Mechanism

    ss = subset_selection(["a", "b", "c", "d", "e"], "log(3)", d=2)
    explicit = Mechanism.from_structured(ss)
    assert explicit.shape == (5, 10)
    assert set(explicit.privatize(["a"] * 200, rng=1)) <= set(ss.explicit_columns()[1])


@pytest.mark.parametrize(
    "make",
    [
        lambda: subset_selection(6, 1, d=2),
        lambda: subset_selection(6, 1, d=(1, 3), weights=("1/3", "2/3")),
        lambda: unary_encoding(5, 1),
        lambda: subset_selection(6, 1, d=2, prior_set=Fraction(1, 24)),
    ],
)
def test_set_report_mle_equals_em_on_the_explicit_kernel(make):
    """EM on the reports themselves against the project's EM + Newton on the explicit kernel's output counts."""
    from mechdesign.release.estimate import em_mle

    m = make()
    kernel, labels = m.to_kernel()
    position = {lab: j for j, lab in enumerate(labels)}
    rng = np.random.default_rng(5)
    P = rng.dirichlet(np.full(m.n_symbols, 0.5))
    reports = m.privatize_indices(rng.choice(m.n_symbols, size=3000, p=P), rng=rng)
    counts = np.bincount([position[c] for c in m.format_reports(reports)], minlength=len(labels))
    ours = m.estimate(reports, method="mle")
    reference = em_mle(kernel.to_float(), counts, tol=1e-12).p[0]
    assert ours.diagnostics["gap"] <= 1e-9
    assert np.abs(ours.estimate - reference).max() < 1e-4


def _exact_expected_estimate(m, P):
    """E f̂ in exact rationals: the explicit kernel (to_kernel) gives each output's probability, and the
    mechanism's own decoder (parse_reports + support_counts on that single output) gives the symbols it
    supports; E C_x / n = Σ_x' P(x') Σ_y K[x', y] [y supports x], mapped through (π − q*) / (p* − q*)."""
    kernel, labels = m.to_kernel()
    K = kernel.fractions()
    S = [m.support_counts(m.parse_reports([lab])).tolist() for lab in labels]
    p, q = m.support_probabilities()
    n = m.n_symbols
    out_prob = [sum(P[x2] * K[x2][j] for x2 in range(n)) for j in range(len(labels))]
    pi = [sum(out_prob[j] * S[j][x] for j in range(len(labels))) for x in range(n)]
    return [(v - q) / (p - q) for v in pi], K, S, out_prob


@pytest.mark.parametrize("n", range(2, 13))
def test_hadamard_response_is_exactly_unbiased_and_its_variance_is_exact(n):
    """Exact unbiasedness for every N (N + 1 a power of two or not): rows 1..N of the Sylvester matrix are
    distinct non-zero rows, so any two sets C_x, C_x' meet in K/4 outputs and q* = 1/2 for every pair
    (Acharya, Sun, Zhang 2019). The closed-form variance equals the exact variance of the linear estimator
    (Var of one report's support indicator, over n reports) computed here from the explicit kernel."""
    P = [Fraction(i + 1, n * (n + 1) // 2) for i in range(n)]
    for c in (0, Fraction(1, 2 * n)):
        m = hadamard_response(n, "1", prior_set=None if c == 0 else c)
        expected, K, S, out_prob = _exact_expected_estimate(m, P)
        assert expected == P, (n, c)
        p, q = m.support_probabilities()
        reports = 1000
        for x in range(n):
            pi = sum(out_prob[j] * S[j][x] for j in range(len(S)))
            exact_var = pi * (1 - pi) / (reports * (p - q) ** 2)
            assert m.variances(reports, [float(v) for v in P])[x] == pytest.approx(float(exact_var), rel=1e-12)
        # the pair structure itself: every pair of distinct symbols is supported together by K/4 outputs
        for x, x2 in itertools.combinations(range(n), 2):
            assert sum(1 for s in S if s[x] and s[x2]) == m.order // 4


@pytest.mark.parametrize("n", [3, 5, 7])
def test_every_family_is_exactly_unbiased(n):
    """E f̂ = P exactly (Fractions) for every family and prior set; local hashing with fresh seeds over the
    whole Carter–Wegman family of a small prime (P = 11: all 110 seeds, exactly the expectation over seeds)."""
    P = [Fraction(i + 1, n * (n + 1) // 2) for i in range(n)]
    for c in (0, Fraction(1, 3 * n)):
        ps = None if c == 0 else c
        for m in [
            krr(n, "1", prior_set=ps),
            subset_selection(n, "1", prior_set=ps),
            subset_selection(n, "1", d=(1, 2), weights=("1/3", "2/3"), prior_set=ps),
            unary_encoding(n, "1", prior_set=ps),
            unary_encoding(n, "1", optimized=False, prior_set=ps),
            local_hashing(n, "1", prime=11, prior_set=ps),
            local_hashing(n, "2", g=3, prime=11, prior_set=ps),
        ]:
            assert _exact_expected_estimate(m, P)[0] == P, m


def test_local_hashing_pool_decoder_is_exactly_unbiased_for_the_pool_in_use():
    """With a fixed pool the report distribution is the explicit kernel over the pool's (seed, value) outputs;
    A[x, x'] = Σ_y K[x', y] [y supports x] is computed here in Fractions from that kernel. The mechanism's
    support matrix equals it, its decoder maps the exact expected counts back to P, and the fresh-seed
    decoder (constants p*, q* averaged over seeds) does not (it is unbiased only over pools)."""
    n = 6
    P = [Fraction(i + 1, 21) for i in range(n)]
    m = local_hashing(n, "1", g=3, seeds=4, rng=5)
    kernel, labels = m.to_kernel()
    K = kernel.fractions()
    S = [m.support_counts(m.parse_reports([lab])).tolist() for lab in labels]
    A = [[sum(K[x2][j] * S[j][x] for j in range(len(labels))) for x2 in range(n)] for x in range(n)]
    assert np.allclose(m.pool_support_matrix(), np.array(A, dtype=float), rtol=0, atol=1e-15)
    pi = [sum(A[x][x2] * P[x2] for x2 in range(n)) for x in range(n)]
    reports = 10_000
    counts = np.array([float(v * reports) for v in pi])
    est = m.estimate_from_counts(counts, reports)
    assert est.diagnostics["decoder"] == "pool-exact"
    assert np.allclose(est.estimate, [float(v) for v in P], rtol=0, atol=1e-12)
    p, q = m.support_probabilities()
    fresh = [(v - q) / (p - q) for v in pi]
    assert max(abs(a - b) for a, b in zip(fresh, P)) > Fraction(1, 100)


def test_local_hashing_pool_decoder_variance_and_coverage_by_simulation():
    m = local_hashing(6, 1, g=3, seeds=5, rng=3)
    P = np.array([0.3, 0.25, 0.2, 0.15, 0.1, 0.0])
    reps, n = 300, 2000
    rng = np.random.default_rng(12)
    x = rng.choice(6, size=reps * n, p=P)
    reports = m.privatize_indices(x, rng=rng)
    C = _support_counts_per_rep(m, reports, reps, n)
    est = [m.estimate_from_counts(C[r], n) for r in range(reps)]
    F = np.array([e.estimate for e in est])
    var = m.variances(n, P)
    assert np.all(np.abs(F.mean(axis=0) - P) <= 4 * np.sqrt(var / reps))
    ratio = F.var(axis=0, ddof=1) / var
    assert np.all((ratio > 0.7) & (ratio < 1.35)), ratio
    cover = ((np.array([e.lower for e in est]) <= P) & (P <= np.array([e.upper for e in est]))).mean()
    assert 0.92 <= cover <= 0.975, cover


def test_local_hashing_pool_too_large_falls_back_with_a_warning():
    from mechdesign.mechanisms.local_hashing import POOL_EXACT_MAX_SYMBOLS

    n = POOL_EXACT_MAX_SYMBOLS + 1
    m = local_hashing(n, 1, seeds=3, rng=1)
    assert not m.pool_decoder_available()
    reports = m.privatize_indices(np.zeros(100, dtype=np.int64), rng=2)
    with pytest.warns(UserWarning, match="unbiased only on average over pools"):
        est = m.estimate_from_counts(m.support_counts(reports), reports.n)
    assert est.diagnostics["decoder"] == "fresh-seed"
    assert any("unbiased only on average over pools" in w for w in est.warnings)
    # a pool under which two symbols always collide has no unbiased estimator: same fallback, said so
    tiny = local_hashing(6, 1, g=2, seeds=1, rng=1)
    with pytest.warns(UserWarning, match="collide under every seed"):
        est = tiny.estimate_from_counts(np.array([50, 50, 50, 50, 50, 50]), 100)
    assert any("collide under every seed" in w for w in est.warnings)


@pytest.mark.parametrize("source", [None, 4])
def test_floyd_sampler_and_bulk_draws_are_uniform(source):
    """Bulk exact draws (cryptographic words of 16/32/64 bits or numpy's bounded integers) per row bound,
    incl. a bound of 1; Floyd's sampler gives every k-subset of [0, m) equal frequency (chi-square), on both
    sides of its complement switch (k ≤ m/2 and k > m/2)."""
    from mechdesign.mechanisms.exact_random import resolve_rng, uniform_below_rows
    from mechdesign.mechanisms.set_reports import floyd_sample

    rng = resolve_rng(source)
    bounds = [1, 3, 7, 65536, 65537, 2**40 + 3]
    d = uniform_below_rows(rng, bounds, 60_000)
    assert d.shape == (6, 60_000) and not d[0].any()
    for row, b in zip(d, bounds):
        assert 0 <= row.min() and row.max() < b
    for i in (1, 2):
        assert chisquare(np.bincount(d[i], minlength=bounds[i])).pvalue > 1e-4
    for m, k in [(6, 2), (6, 4), (7, 3)]:
        f = floyd_sample(rng, 40_000, m, k, block_bytes=64)  # small blocks: several batches
        assert np.all(np.diff(f, axis=1) > 0) and f.min() >= 0 and f.max() < m
        codes = (f * (m ** np.arange(k))).sum(axis=1)
        _, counts = np.unique(codes, return_counts=True)
        assert counts.size == len(list(itertools.combinations(range(m), k)))
        assert chisquare(counts).pvalue > 1e-4, (m, k)


def test_local_hashing_pool_mle_equals_em_on_the_explicit_kernel():
    """The MLE on (seed, value) counts of a known pool against the project's EM + Newton on the explicit
    kernel over the pool's outputs (an independent implementation on the N × M matrix)."""
    from mechdesign.release.estimate import em_mle

    m = local_hashing(6, 1, g=3, seeds=4, rng=2)
    kernel, labels = m.to_kernel()
    position = {lab: j for j, lab in enumerate(labels)}
    rng = np.random.default_rng(6)
    P = rng.dirichlet(np.full(6, 0.5))
    reports = m.privatize_indices(rng.choice(6, size=3000, p=P), rng=rng)
    counts = np.bincount([position[c] for c in m.format_reports(reports)], minlength=len(labels))
    ours = m.estimate(reports, method="mle")
    reference = em_mle(kernel.to_float(), counts, tol=1e-12).p[0]
    assert ours.diagnostics["gap"] <= 1e-9
    assert np.abs(ours.estimate - reference).max() < 1e-4


def test_hadamard_parity_of_set_bits_against_python_integers():
    """Hadamard response's sampler needs the parity of row & y; numpy's bitwise_count exists only from numpy 2.0,
    so the sampler folds bits itself: checked against Python's own bit count (int.bit_count is 3.10+)."""
    import numpy as np

    from mechdesign.mechanisms.hadamard_response import _parity

    v = np.random.default_rng(1).integers(0, 2**62, 5000)
    v[:4] = [0, 1, 2**62 - 1, 3]
    assert [int(p) for p in _parity(v)] == [int(x).bit_count() % 2 for x in v]
