"""Reference problems with independently known optima, in the shape of cvxpy's ``StandardTestLPs``: one catalogue,
run through every engine that applies to each (tests/engines/test_engines_reference.py), so a new engine is tested by adding
it to the routing table.

Each optimum is computed here from the paper's closed form (with ``math``, not with mechdesign's own theory module):

* Dobrushin paper (Grosse et al.), Theorem 1: η_TV over (ε,Q_X(c))-PML kernels is Ξ(ε,c) = (e^ε − 1)/(e^ε(1 − Nc) + 1)
  for ε < log(2/(Nc)); the same over the hull of Q_X(c)'s vertices (Lemma 4: PML needs only the vertices).
* ε-LDP (Kairouz, Oh, Viswanath 2014, eq. 4 and the binary-mechanism theorem): η_TV = (e^ε − 1)/(e^ε + 1); every
  binary ε-LDP mechanism is a post-processing of randomised response with p = e^ε/(1 + e^ε), so for N = 2 it
  maximises every f-divergence and the mutual information.
* k-ary randomised response is optimal for the expected Hamming loss under ε-LDP with the uniform prior (Kairouz et
  al.; Wang et al. 2016): (N − 1)/(e^ε + N − 1); it is also the minimax (worst-prior) design, since the problem is
  invariant under permuting the symbols and convex, and k-RR's rows all lose the same. Its complement
  e^ε/(e^ε + N − 1) is the best Bayes vulnerability with M = N outputs. With N = 2, |x − y| is the Hamming loss.
* Bayes vulnerability with M = 2 outputs under ε-LDP and the uniform prior: V = (1 + max p − min p)/N over binary
  ε-LDP columns p, and max p − min p is the binary LDP Dobrushin value above: V = 2e^ε/((e^ε + 1)N).
* The Dobrushin coefficient over the box 𝒫 = {P : P(2) ≤ 1/2} (N = 3, not permutation invariant; its vertices are
  e_0, e_1, (1/2, 0, 1/2), (0, 1/2, 1/2)) is η = 1 − e^−ε, derived here with Lemma 3 (binary kernels [p, 1 − p]).
  Attained: p = (1 − e^−ε, 1 − e^−ε, 0) is (ε,𝒫)-PML (column p: max 1 − e^−ε ≤ e^ε·(1 − e^−ε)/2 since e^ε ≥ 2 at
  ε = 1; column 1 − p: max 1 = e^ε·e^−ε, its least mean e^−ε at e_0). Bounded: for the pairs (0, 2) and (1, 2),
  e^−ε(1 − p_2) ≤ 1 − p_a (the prior e_a, column 1 − p) gives p_a − p_2 ≤ (1 − e^−ε)(1 − p_2); for (2, a),
  p_2 ≤ e^ε p_a (the prior e_a, column p) gives p_2 − p_a ≤ (1 − e^−ε) p_2; for (0, 1) the priors e_0, e_1 give
  the LDP value (e^ε − 1)/(e^ε + 1), smaller.
* Frequency estimation (n × the MLE's asymptotic squared error, minimised) under ε-LDP at the uniform prior: subset
  selection at its best size k (Ye and Barg 2018), whose information matrix is J = aI + b11ᵀ with, for
  Z = C(N−1,k−1)e^ε + C(N−1,k) and q = (k e^ε + N − k)/(N Z), J_xx = [C(N−1,k−1)e^{2ε} + C(N−1,k)]/(Z² q),
  J_xy = [C(N−2,k−2)e^{2ε} + 2C(N−2,k−1)e^ε + C(N−2,k)]/(Z² q); U = (N−1)/a + 1/(a + N b) − 1/N.
* Min vulnerability under an expected-loss cap: the value libqif computes (problems/min_vulnerability_libqif.yaml).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import yaml

from helpers import ROOT

PROBLEMS = ROOT / "problems"


@dataclass(frozen=True)
class ReferenceProblem:
    name: str
    spec: dict
    optimum: float
    source: str


def _xi(eps: float, c: float, n: int) -> float:
    return (math.exp(eps) - 1) / (math.exp(eps) * (1 - n * c) + 1)


def _rr(eps: float) -> float:
    return math.exp(eps) / (1 + math.exp(eps))


def _kl(p, q) -> float:
    return sum(a * math.log(a / b) for a, b in zip(p, q) if a > 0)


def _binary_rr_kl(eps: float, p0, p1) -> float:
    """KL between the output laws of randomised response under two binary priors."""
    r = _rr(eps)
    out = lambda p: [p[0] * r + p[1] * (1 - r), p[0] * (1 - r) + p[1] * r]  # noqa: E731
    return _kl(out(p0), out(p1))


def _binary_rr_mi(eps: float) -> float:
    """I(X;Y) of randomised response under the uniform binary prior: log 2 − h(p), nats."""
    r = _rr(eps)
    return math.log(2) + r * math.log(r) + (1 - r) * math.log(1 - r)


def _libqif_min_vulnerability() -> tuple[dict, float]:
    path = PROBLEMS / "min_vulnerability_libqif.yaml"
    text = path.read_text()
    value = float(next(line.split(":", 1)[1] for line in text.splitlines() if line.startswith("# expected_objective")))
    return yaml.safe_load(text), value


def _subset_selection_u(n: int, eps: float) -> float:
    """U of subset selection at its best size, uniform prior (module docstring)."""
    e = math.exp(eps)
    C = lambda a, b: math.comb(a, b) if 0 <= b <= a else 0
    best = math.inf
    for k in range(1, n):
        Z = C(n - 1, k - 1) * e + C(n - 1, k)
        q = (k * e + n - k) / (n * Z)
        jxx = (C(n - 1, k - 1) * e * e + C(n - 1, k)) / (Z * Z * q)
        jxy = (C(n - 2, k - 2) * e * e + 2 * C(n - 2, k - 1) * e + C(n - 2, k)) / (Z * Z * q)
        a, b = jxx - jxy, jxy
        best = min(best, (n - 1) / a + 1 / (a + n * b) - 1 / n)
    return best


def reference_problems() -> list[ReferenceProblem]:
    e1 = 1.0
    hull = [[0.7 if i == j else 0.1 for j in range(4)] for i in range(4)]
    kl_priors = [[0.8, 0.2], [0.3, 0.7]]
    mv_spec, mv_value = _libqif_min_vulnerability()
    return [
        ReferenceProblem(
            "dobrushin_min_mass_theorem1",
            {
                "alphabet": 4,
                "epsilon": 1,
                "prior_set": {"kind": "min_mass", "c": "1/16"},
                "objective": {"kind": "dobrushin"},
            },
            _xi(e1, 1 / 16, 4),
            "Dobrushin paper, Theorem 1",
        ),
        ReferenceProblem(
            "dobrushin_hull_theorem1",
            {
                "alphabet": 4,
                "epsilon": 1,
                "prior_set": {"kind": "hull", "priors": hull},
                "objective": {"kind": "dobrushin"},
            },
            _xi(e1, 0.1, 4),
            "Dobrushin paper, Theorem 1 with Lemma 4 (the hull of Q_X(c)'s vertices)",
        ),
        ReferenceProblem(
            "dobrushin_asymmetric_box",
            {
                "alphabet": 3,
                "epsilon": 1,
                "prior_set": {"kind": "box", "lower": [0, 0, 0], "upper": [1, 1, "1/2"]},
                "objective": {"kind": "dobrushin"},
            },
            1 - math.exp(-1),
            "derivation in the module docstring: η = 1 − e^−ε (not permutation invariant)",
        ),
        ReferenceProblem(
            "dobrushin_ldp",
            {"alphabet": 3, "epsilon": 1, "prior_set": {"kind": "simplex"}, "objective": {"kind": "dobrushin"}},
            (math.e - 1) / (math.e + 1),
            "Kairouz et al., eq. 4",
        ),
        ReferenceProblem(
            "krr_hamming_uniform_ldp",
            {
                "alphabet": 4,
                "epsilon": 1,
                "prior_set": {"kind": "simplex"},
                "objective": {"kind": "expected_loss", "loss": "hamming", "prior": "uniform"},
            },
            3 / (math.e + 3),
            "k-RR optimality for Hamming loss under ε-LDP (Kairouz et al.; Wang et al.)",
        ),
        ReferenceProblem(
            "krr_hamming_worst_case_ldp",
            {
                "alphabet": 4,
                "epsilon": 1,
                "prior_set": {"kind": "simplex"},
                "objective": {"kind": "expected_loss", "loss": "hamming", "prior": "worst_case"},
            },
            3 / (math.e + 3),
            "k-RR is minimax for Hamming loss under ε-LDP (symmetry and convexity)",
        ),
        ReferenceProblem(
            "binary_absolute_worst_case_ldp",
            {
                "alphabet": 2,
                "epsilon": 1,
                "prior_set": {"kind": "simplex"},
                "objective": {"kind": "expected_loss", "loss": "absolute", "prior": "worst_case"},
            },
            1 / (math.e + 1),
            "N = 2: |x − y| is the Hamming loss; randomised response",
        ),
        ReferenceProblem(
            "bayes_uniform_ldp",
            {
                "alphabet": 3,
                "epsilon": 1,
                "prior_set": {"kind": "simplex"},
                "objective": {"kind": "bayes_vulnerability", "prior": "uniform"},
            },
            math.e / (math.e + 2),
            "complement of k-RR's Hamming loss",
        ),
        ReferenceProblem(
            "bayes_two_outputs_ldp",
            {
                "alphabet": 3,
                "epsilon": 1,
                "prior_set": {"kind": "simplex"},
                "objective": {"kind": "bayes_vulnerability", "prior": "uniform"},
                "output_size": 2,
            },
            2 * math.e / ((math.e + 1) * 3),
            "binary LDP columns: V = (1 + max p − min p)/N, Kairouz et al. eq. 4",
        ),
        ReferenceProblem(
            "mutual_information_binary_rr",
            {
                "alphabet": 2,
                "epsilon": 1,
                "prior_set": {"kind": "simplex"},
                "objective": {"kind": "mutual_information", "prior": "uniform"},
            },
            _binary_rr_mi(e1),
            "randomised response dominates binary ε-LDP mechanisms (Kairouz et al.)",
        ),
        ReferenceProblem(
            "kl_binary_rr",
            {
                "alphabet": 2,
                "epsilon": 1,
                "prior_set": {"kind": "simplex"},
                "objective": {"kind": "f_divergence", "f": "kl", "priors": kl_priors},
            },
            _binary_rr_kl(e1, *kl_priors),
            "randomised response dominates binary ε-LDP mechanisms (Kairouz et al.)",
        ),
        ReferenceProblem("min_vulnerability_libqif", mv_spec, mv_value, "libqif (bayes_vuln.min_vuln_given_max_loss)"),
        ReferenceProblem(
            "frequency_estimation_ldp_subset_selection",
            {
                "alphabet": 5,
                "epsilon": 1,
                "prior_set": {"kind": "simplex"},
                "objective": {"kind": "frequency_estimation", "prior": "uniform"},
            },
            _subset_selection_u(5, e1),
            "subset selection at its best size (Ye and Barg 2018), closed-form information matrix",
        ),
        ReferenceProblem(
            # the uniform prior written as a list past N = 12: not the symmetric engine's case (which reads
            # prior: uniform), so column generation with certified pricing designs it
            "frequency_estimation_ldp_n13_explicit_uniform",
            {
                "alphabet": 13,
                "epsilon": 1,
                "prior_set": {"kind": "simplex"},
                "objective": {"kind": "frequency_estimation", "prior": [1 / 13] * 13},
            },
            _subset_selection_u(13, e1),
            "subset selection at its best size (Ye and Barg 2018), closed-form information matrix",
        ),
    ]
