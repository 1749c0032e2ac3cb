"""The ray LP's upper bound is a true bound despite the cancellation in the column utilities.

μ of an f-divergence is a perspective b f(a/b) (a = P0·r, b = P1·r) and μ of mutual information a sum of terms
w_x log(r_x/s) that cancel: near a = b the double μ̂ is off by far more than u·|μ| (f_α, α = 100: −3.3e−14 for a
column whose utility is exactly 0). The reference values here are computed independently in mpmath at 100 digits
from the exact fractions of the spec (its decimal priors) and of the emitted kernel, with the definitions of the
f-divergences (f_α as in the f_α paper, eq. 3: t^α − 1 for α > 1, 1 − t^α for α < 1) and of mutual information;
a bound is checked with no tolerance on the unsafe side.
"""

from fractions import Fraction

import mpmath
import numpy as np
import pytest

from mechdesign import design
from mechdesign.objectives.rays import column_utility, utility_rounding
from mechdesign.spec.models import spec_from_dict

DIGITS = 100

F_KINDS = ["kl", "tv", "hellinger", "chi2", {"alpha": 0.5}, {"alpha": 2}, {"alpha": 100}]
EPSILONS = [0, 1e-12, 1e-6, 0.5]

# Priors whose decimal masses sum to exactly 1 while their doubles do not (checked below). For N = 2 no such
# pair exists (the doubles of x and 1 − x always sum to 1.0), so N = 2 uses plain decimals.
PRIORS = {
    2: ([0.7, 0.3], [0.2, 0.8]),
    3: ([0.06, 0.57, 0.37], [0.29, 0.35, 0.36]),
    4: ([0.02, 0.12, 0.29, 0.57], [0.03, 0.29, 0.31, 0.37]),
}


def _exact(p) -> Fraction:
    return Fraction(str(p)) if isinstance(p, float) else Fraction(p)


def _mp(q: Fraction):
    return mpmath.mpf(q.numerator) / q.denominator


def _perspective(f, a, b):
    """b f(a/b) in mpmath, with its limits at b = 0 and a = 0 (from the definitions of f)."""
    if f == "kl":
        return mpmath.mpf(0) if a == 0 else (a * mpmath.log(a / b) if b > 0 else mpmath.inf)
    if f == "tv":
        return abs(a - b) / 2
    if f == "hellinger":
        return (mpmath.sqrt(a) - mpmath.sqrt(b)) ** 2
    if f == "chi2":
        return (a - b) ** 2 / b if b > 0 else (mpmath.inf if a > 0 else mpmath.mpf(0))
    alpha = _mp(_exact(f["alpha"]))
    if b == 0:
        return mpmath.mpf(0) if (a == 0 or alpha < 1) else mpmath.inf
    power = a**alpha * b ** (1 - alpha)
    return b - power if alpha < 1 else power - b


def _dot(p, col):
    return sum((x * y for x, y in zip(p, col)), Fraction(0))


def fdiv_exact(kernel, f, priors):
    """D_f(K∘P0 ‖ K∘P1) = Σ_y (P1·K_y) f((P0·K_y)/(P1·K_y)) at 100 digits, K and priors exact."""
    P0, P1 = ([_exact(p) for p in pr] for pr in priors)
    with mpmath.workdps(DIGITS):
        return sum((_perspective(f, _mp(_dot(P0, col)), _mp(_dot(P1, col))) for col in zip(*kernel)), mpmath.mpf(0))


def mi_exact(kernel, prior):
    """I(X;Y) = Σ_{x,y} P(x) K_xy log(K_xy / (P·K_y)) at 100 digits."""
    P = [_exact(p) for p in prior]
    with mpmath.workdps(DIGITS):
        total = mpmath.mpf(0)
        for col in zip(*kernel):
            s = _dot(P, col)
            for p, k in zip(P, col):
                if p * k > 0:
                    total += _mp(p * k) * mpmath.log(_mp(k / s))
        return total


def _kernel_fractions(r):
    return [[Fraction(v) for v in row] for row in r.exact_kernel.strings()]


def test_the_priors_are_the_hard_kind():
    for n in (3, 4):
        for p in PRIORS[n]:
            assert sum(_exact(x) for x in p) == 1
            assert sum(p) != 1.0


def test_alpha_100_at_epsilon_0_bound_is_true():
    """The reported defect: the bound was −3.34e−14 below the achieved (and optimal) 0."""
    r = design(
        {
            "alphabet": 2,
            "epsilon": 0,
            "prior_set": {"kind": "point", "prior": [0.5, 0.5]},
            "objective": {"kind": "f_divergence", "f": {"alpha": 100}, "priors": [[0.7, 0.3], [0.2, 0.8]]},
        }
    )
    exact = fdiv_exact(_kernel_fractions(r), {"alpha": 100}, ([0.7, 0.3], [0.2, 0.8]))
    assert exact == 0  # at ε = 0 every private kernel has identical rows
    assert r.certificate.dual_bound is not None and r.certificate.dual_bound >= 0
    assert r.status.value == "optimal"


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("f", F_KINDS, ids=str)
def test_fdiv_bound_is_above_the_exact_value_of_the_kernel(f, eps, n):
    priors = PRIORS[n]
    r = design(
        {
            "alphabet": n,
            "epsilon": eps,
            "prior_set": {"kind": "point", "prior": list(priors[1])},
            "objective": {"kind": "f_divergence", "f": f, "priors": [list(p) for p in priors]},
        }
    )
    assert r.certificate is not None and r.certificate.private
    bound = r.certificate.dual_bound
    assert bound is not None, r.status
    exact = fdiv_exact(_kernel_fractions(r), f, priors)
    assert mpmath.mpf(bound) >= exact, (bound, exact)


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("kind", ["point", "simplex"])
def test_mi_bound_is_above_the_exact_value_of_the_kernel(kind, eps, n):
    prior = PRIORS[n][0]
    prior_set = {"kind": "point", "prior": list(prior)} if kind == "point" else {"kind": "simplex"}
    r = design(
        {
            "alphabet": n,
            "epsilon": eps,
            "prior_set": prior_set,
            "objective": {"kind": "mutual_information", "prior": list(prior)},
        }
    )
    bound = r.certificate.dual_bound
    assert bound is not None, r.status
    assert mpmath.mpf(bound) >= mi_exact(_kernel_fractions(r), prior)


def _near_constant_rays(n: int, rng) -> np.ndarray:
    """Rays where μ cancels hardest: 1 minus a few ulps in some entries, and a few random ones."""
    ulps = rng.integers(0, 16, size=(40, n)) * 2.0**-53
    R = np.vstack([1.0 - ulps, rng.uniform(0.0, 1.0, size=(10, n)), 1.0 - 1e-9 * rng.uniform(size=(10, n))])
    return R / R.max(axis=1, keepdims=True)


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("f", F_KINDS, ids=str)
def test_fdiv_per_ray_error_bound_holds(f, n):
    """|μ̂(r) − μ(r)| ≤ E(r) ray by ray, μ(r) from the exact priors and the ray's doubles at 100 digits."""
    priors = PRIORS[n]
    spec = spec_from_dict(
        {
            "alphabet": n,
            "epsilon": 1,
            "prior_set": {"kind": "simplex"},
            "objective": {"kind": "f_divergence", "f": f, "priors": [list(p) for p in priors]},
        }
    )
    R = _near_constant_rays(n, np.random.default_rng(n))
    mu, err = column_utility(spec)(R), utility_rounding(spec)(R)
    P0, P1 = ([_exact(p) for p in pr] for pr in priors)
    for r, m, e in zip(R, mu, err):
        col = [Fraction(x) for x in r]
        with mpmath.workdps(DIGITS):
            exact = _perspective(f, _mp(_dot(P0, col)), _mp(_dot(P1, col)))
            assert abs(mpmath.mpf(m) - exact) <= e, (r.tolist(), m, exact, e)
    assert np.all(err <= 1e-9 * (1 + np.abs(mu)))  # and it stays small (a ray of α = 100 near 1: ~1e-13)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_mi_per_ray_error_bound_holds(n):
    prior = PRIORS[n][0]
    spec = spec_from_dict(
        {
            "alphabet": n,
            "epsilon": 1,
            "prior_set": {"kind": "simplex"},
            "objective": {"kind": "mutual_information", "prior": list(prior)},
        }
    )
    R = _near_constant_rays(n, np.random.default_rng(10 + n))
    mu, err = column_utility(spec)(R), utility_rounding(spec)(R)
    P = [_exact(p) for p in prior]
    for r, m, e in zip(R, mu, err):
        col = [Fraction(x) for x in r]
        s = _dot(P, col)
        with mpmath.workdps(DIGITS):
            exact = sum((_mp(p * k) * mpmath.log(_mp(k / s)) for p, k in zip(P, col) if p * k > 0), mpmath.mpf(0))
            assert abs(mpmath.mpf(m) - exact) <= e, (r.tolist(), m, exact, e)
    assert np.all(err <= 1e-13)
