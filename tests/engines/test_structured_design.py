"""``design()`` returns the structured optimum (subset selection) when the frequency-estimation optimum at a uniform
prior has no explicit kernel within the output limits (N = 10000), and still an explicit kernel where one fits.

Reference values are written here independently of the library: subset selection of size k with high/low ratio R
(ε-LDP: R = e^ε; Q_X(c): R_k = e^ε(1 − ck)/(1 − e^ε ck), Remark 2 of Grosse et al., *Dobrushin Coefficients of
Private Mechanisms Beyond Local Differential Privacy*) has, at the uniform prior, J = aI + b11ᵀ (Ye and Barg,
IEEE Trans. IT 2018; Wang et al. 2016), and U = tr J⁻¹ − ‖P‖² = (N − 1)/a + 1/(a + N b) − 1/N."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mechdesign import design
from mechdesign.cli.main import main

N = 10000


def subset_selection_u(n: int, k: int, ratio: float) -> float:
    """U of k-subset selection with levels (R, 1) at the uniform prior. With u = P(x ∈ S | x) = kR/(kR + N − k)
    and every output equally likely, q ∝ kR + N − k (levels scaled so the low one is 1):
    J_xx = N[uR + (1 − u)]/(kR + N − k), J_xy = N[uR(k − 1) + 2u(N − k) + (1 − u)(N − 1 − k)]/((N − 1)(kR + N − k))
    (pairs S ∋ x, y: a share (k − 1)/(N − 1) of those ∋ x; S ∋ x ∌ y or ∌ x ∋ y; S ∌ x, y: a share (N − 1 − k)/(N − 1)
    of those ∌ x)."""
    u = k * ratio / (k * ratio + n - k)
    den = k * ratio + n - k
    jxx = n * (u * ratio + (1 - u)) / den
    jxy = n * (u * ratio * (k - 1) + 2 * u * (n - k) + (1 - u) * (n - 1 - k)) / ((n - 1) * den)
    a, b = jxx - jxy, jxy
    return (n - 1) / a + 1 / (a + n * b) - 1 / n


def best_size(n: int, eps: float, c: float = 0.0) -> tuple[int, float]:
    e = math.exp(eps)
    best = (0, math.inf)
    for k in range(1, n):
        if e * c * k >= 1:
            break
        r = e * (1 - c * k) / (1 - e * c * k)
        v = subset_selection_u(n, k, r)
        if v < best[1]:
            best = (k, v)
    return best


def spec(n: int, prior_set="simplex") -> dict:
    return {
        "alphabet": n,
        "epsilon": 1,
        "prior_set": prior_set,
        "objective": {"kind": "frequency_estimation", "prior": "uniform"},
    }


def test_reference_formula_matches_small_problem_file():
    # problems/frequency_estimation_ldp_n8.yaml states U = 22.61138453192222 at k = 2 (its own derivation)
    assert best_size(8, 1.0)[0] == 2
    assert subset_selection_u(8, 2, math.e) == pytest.approx(22.61138453192222, rel=1e-12)


@pytest.mark.parametrize("prior_set, c", [("simplex", 0.0), ({"kind": "min_mass", "c": f"1/{2 * N}"}, 1 / (2 * N))])
def test_large_alphabet_returns_subset_selection(prior_set, c):
    k, u = best_size(N, 1.0, c)
    result = design(spec(N, prior_set))
    assert result.status.value == "optimal" and result.is_ok
    assert result.kernel is None and result.exact_kernel is None
    mech = result.mechanism
    assert mech.family == "subset_selection"
    assert mech.sizes == (k,)
    # the level of the class: R_k from the rational ratio the sampler uses (40 bits)
    r = math.e * (1 - c * k) / (1 - math.e * c * k)
    assert float(mech.ratios[0]) == pytest.approx(r, rel=1e-10)
    assert result.objective == pytest.approx(u, rel=1e-9)
    cert = result.certificate
    assert cert.private and mech.certificate().feasible
    assert cert.dual_bound <= result.objective and cert.gap <= 1e-6 * result.objective
    js = result.to_json()
    assert js["mechanism"]["mechanism"] == "subset_selection" and js["mechanism"]["parameters"]["d"] == [k]
    assert js["mechanism"]["certificate"]["feasible"] is True and js["kernel"] is None


def test_min_mass_uses_larger_subsets_than_ldp():
    # Q_X(c) relaxes the ratio (R_k > e^ε), so the best size differs from ε-LDP's: the PML levels are used
    k_ldp, _ = best_size(N, 1.0)
    k_pml, _ = best_size(N, 1.0, 1 / (2 * N))
    assert k_pml != k_ldp
    assert design(spec(N, {"kind": "min_mass", "c": f"1/{2 * N}"})).mechanism.sizes == (k_pml,)


def test_small_alphabet_keeps_the_explicit_kernel():
    result = design(spec(8))
    assert result.mechanism is None and result.kernel is not None
    assert result.objective == pytest.approx(subset_selection_u(8, 2, math.e), rel=1e-6)


def test_cli_solve_then_privatize_with_the_saved_mechanism(tmp_path, capsys):
    import yaml

    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec(N)))
    assert main(["solve", str(path), "-q"]) == 0
    out = capsys.readouterr().out
    k, _ = best_size(N, 1.0)
    assert "subset_selection" in out and f"d = [{k}]" in out
    mech_file = tmp_path / "design.mechanism.json"
    assert main(["solve", str(path), "-q", "-o", str(mech_file)]) == 0
    rng = np.random.default_rng(5)
    values = rng.integers(0, 20, size=300)
    (tmp_path / "data.csv").write_text("c\n" + "".join(f"{v}\n" for v in values))
    rel = tmp_path / "rel.csv"
    args = ["privatize", "--mechanism-file", str(mech_file), "--input", str(tmp_path / "data.csv"), "--column", "c"]
    assert main(args + ["--seed", "1", "-o", str(rel)]) == 0
    rows = rel.read_text().splitlines()
    assert len(rows) == 301
    # each report is a set of k symbols
    assert all(len(r.split(",")[-1].split()) == k for r in rows[1:])
    est = tmp_path / "est.csv"
    assert (
        main(["estimate", "--mechanism-file", str(mech_file), "--input", str(rel), "--column", "c", "-o", str(est)])
        == 0
    )
    assert len(est.read_text().splitlines()) == N + 1


def test_explicit_output_size_keeps_the_one_line_refusal(capsys):
    # output_size given (not auto): the structured mechanism's C(N, d) outputs would not honour it, so no change
    from mechdesign.spec.errors import InputError

    with pytest.raises(InputError, match="no explicit frequency-estimation kernel fits"):
        design({**spec(N), "output_size": 1000})


def test_repr_names_the_mechanism():
    result = design(spec(N))
    assert "mechanism=subset_selection" in repr(result)
    assert "subset_selection" in result._repr_html_()


def test_mechanism_output_refused_for_an_explicit_kernel(tmp_path, capsys):
    import yaml

    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec(8)))
    assert main(["solve", str(path), "-q", "-o", str(tmp_path / "x.mechanism.json")]) == 2
    assert "no structured mechanism" in capsys.readouterr().err
