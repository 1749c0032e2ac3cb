"""ε chosen from the accuracy asked: the certified bracket [ε_lo, ε_hi] against independent references."""

import math
import subprocess
import sys

import numpy as np
import pytest

from mechdesign import design
from mechdesign.spec.errors import SpecError
from mechdesign.theory.estimation import mle_error


def subset_selection_u_uniform(n, eps, k):
    """Subset selection's U at the uniform prior from its information matrix J = aI + b11ᵀ (Ye and Barg 2018)."""
    e = math.exp(eps)
    C = lambda a, b: math.comb(a, b) if b >= 0 else 0
    Z = C(n - 1, k - 1) * e + C(n - 1, k)
    q = (k * e + n - k) / (n * Z)
    jxx = (C(n - 1, k - 1) * e * e + C(n - 1, k)) / (Z * Z * q)
    jxy = (C(n - 2, k - 2) * e * e + 2 * C(n - 2, k - 1) * e + C(n - 2, k)) / (Z * Z * q)
    a, b = jxx - jxy, jxy
    return (n - 1) / a + 1 / (a + n * b) - 1 / n


def best_subset_selection(n, eps):
    return min(subset_selection_u_uniform(n, eps, k) for k in range(1, n))


def test_uniform_ldp_bracket_against_subset_selection():
    n, reports, rmse = 56, 100_000, 0.02
    r = design(
        {
            "alphabet": n,
            "epsilon": {"accuracy": {"rmse": rmse, "n": reports}},
            "prior_set": "simplex",
            "objective": {"kind": "frequency_estimation"},
        }
    )
    req = r.epsilon_requirement
    assert r.is_ok
    assert req.epsilon - req.epsilon_low <= 1e-6
    target = reports * rmse**2
    # the optimum under ε-LDP at the uniform prior is subset selection at its best size
    assert best_subset_selection(n, req.epsilon) <= target
    assert best_subset_selection(n, req.epsilon_low) > target
    assert math.sqrt(r.objective / reports) <= rmse


def test_max_sd_bracket_nonuniform_prior():
    P = [0.4, 0.3, 0.2, 0.1]
    reports, sd = 10_000, 0.01
    spec = {
        "alphabet": 4,
        "epsilon": {"accuracy": {"max_sd": sd, "n": reports, "width": 1e-3}},
        "prior_set": {"kind": "min_mass", "c": 0.05},
        "objective": {"kind": "frequency_estimation", "prior": P},
    }
    r = design(spec)
    req = r.epsilon_requirement
    from mechdesign.theory.estimation import mle_covariance

    assert r.certificate.feasible
    assert np.max(np.diag(mle_covariance(r.kernel, np.array(P)))) <= reports * sd**2
    assert req.epsilon > req.epsilon_low
    # at ε_lo the design's own lower bound on U, divided by N, exceeds the target: no mechanism meets it
    low = design({**spec, "epsilon": str(req.epsilon_low)})
    assert low.certificate.dual_bound / 4 > reports * sd**2


def test_rmse_bracket_nonuniform_prior():
    P = np.array([0.5, 0.25, 0.15, 0.1])
    reports, rmse = 10_000, 0.03
    spec = {
        "alphabet": 4,
        "epsilon": {"accuracy": {"rmse": rmse, "n": reports, "width": 1e-4}},
        "prior_set": "simplex",
        "objective": {"kind": "frequency_estimation", "prior": P.tolist()},
    }
    r = design(spec)
    req = r.epsilon_requirement
    assert req.epsilon - req.epsilon_low <= 1e-4
    assert mle_error(r.kernel, P) <= reports * rmse**2
    low = design({**spec, "epsilon": str(req.epsilon_low)})
    assert low.certificate.dual_bound > reports * rmse**2


def test_refusals():
    base = {"alphabet": 5, "prior_set": "simplex", "objective": {"kind": "frequency_estimation"}}
    with pytest.raises(SpecError, match="epsilon.accuracy.rmse"):  # below the accuracy without privacy
        design({**base, "epsilon": {"accuracy": {"rmse": 1e-4, "n": 100}}})
    with pytest.raises(SpecError, match="frequency_estimation"):
        design({**base, "objective": {"kind": "dobrushin"}, "epsilon": {"accuracy": {"rmse": 0.1, "n": 100}}})
    with pytest.raises(SpecError, match="exactly one"):
        design({**base, "epsilon": {"accuracy": {"rmse": 0.1, "max_sd": 0.1, "n": 100}}})


def test_cli(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text("alphabet: 10\nepsilon: 1\nprior_set: simplex\nobjective: {kind: frequency_estimation}\n")
    run = lambda *a: subprocess.run([sys.executable, "-m", "mechdesign", "epsilon", *a], capture_output=True, text=True)
    ok = run("--rmse", "0.01", "--n", "100000", str(spec))
    assert ok.returncode == 0, ok.stderr
    assert "certified bracket" in ok.stdout
    bad = run("--rmse", "0.01", str(spec))
    assert bad.returncode == 2 and "--n" in bad.stderr and "Traceback" not in bad.stderr
