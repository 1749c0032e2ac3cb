"""ε chosen from a requirement in a spec, ``epsilon: {protect: ...}``
(mechdesign/theory/epsilon_requirement.py).

Expected values come from the disclosure paper's formulas (Saeidian et al., *Rethinking Disclosure Prevention
with PML*), recomputed here with mpmath at 50 digits: Proposition 7 + Theorem 6 (no disclosure below
log 1/(1 − p_min)), Corollary 8 (no singling out below H∞(P_X)), Theorem 4 (ε = h). The designed kernels are
checked against the paper's *definitions* (Definition 3.2 of disclosure, singling out, Theorem 6's bound),
evaluated on the exact kernel with Fractions, over every deterministic attribute (every set partition of X).
"""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath
import pytest

from helpers import ROOT
from mechdesign import design
from mechdesign.cli.main import main
from mechdesign.spec.errors import SpecError

mpmath.mp.dps = 50


def _spec(n, prior_set, protect, objective=None):
    return {
        "alphabet": n,
        "epsilon": {"protect": protect},
        "prior_set": prior_set,
        "objective": objective or {"kind": "expected_loss", "loss": "hamming"},
    }


def _partitions(items):
    """Every set partition of ``items`` (the deterministic attributes U = f(X), up to relabelling)."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in _partitions(rest):
        for i in range(len(part)):
            yield part[:i] + [[first] + part[i]] + part[i + 1 :]
        yield [[first]] + part


def _posteriors(K, q, blocks):
    """Q_{U|Y=y} for every output y with Q_Y(y) > 0 (Fractions), U the block of X."""
    n, m = len(K), len(K[0])
    out = []
    for y in range(m):
        qy = sum(q[x] * K[x][y] for x in range(n))
        if qy > 0:
            out.append([sum(q[x] * K[x][y] for x in b) / qy for b in blocks])
    return out


def _discloses(K, q, blocks) -> bool:
    """Definition 3.2 (disclosure paper): inf_y H∞(Q_{U|Y=y}) = 0, i.e. (finite Y) some output of positive
    probability makes the posterior of U a point mass."""
    return any(max(post) == 1 for post in _posteriors(K, q, blocks))


def _min_entropy(p, blocks):
    return -mpmath.log(
        max(mpmath.mpf(sum(p[x] for x in b).numerator) / sum(p[x] for x in b).denominator for b in blocks)
    )


def _vertices_min_mass(n, c):
    return [[c + (1 - n * c) * (i == j) for i in range(n)] for j in range(n)]


# ------------------------------------------------------------------ resolved ε equals the paper's value
@pytest.mark.parametrize(
    "n, prior_set, protect, expected, theorem",
    [
        # Proposition 7 + Theorem 6: eps < log 1/(1 - p_min), p_min = min over Q_X(c) of min_x P(x) = c
        (
            10,
            {"kind": "min_mass", "c": "1/20"},
            {"no_disclosure": True},
            lambda: -mpmath.log(1 - mpmath.mpf(1) / 20),
            "Proposition 7",
        ),
        # Corollary 8: eps < min_P H_inf(P) = -log(1 - (N - 1)c) over Q_X(c)
        (
            10,
            {"kind": "min_mass", "c": "1/20"},
            {"no_singling_out": True},
            lambda: -mpmath.log(mpmath.mpf(11) / 20),
            "Corollary 8",
        ),
        # hull of two priors: min over the hull of min_x P(x) = 0.2 (a vertex), max of max_x P(x) = 0.6
        (
            3,
            {"kind": "hull", "priors": [[0.5, 0.3, 0.2], [0.2, 0.2, 0.6]]},
            {"no_disclosure": True},
            lambda: -mpmath.log(mpmath.mpf(8) / 10),
            "Proposition 7",
        ),
        (
            3,
            {"kind": "hull", "priors": [[0.5, 0.3, 0.2], [0.2, 0.2, 0.6]]},
            {"no_singling_out": True},
            lambda: -mpmath.log(mpmath.mpf(6) / 10),
            "Corollary 8",
        ),
        # h below log 1/(1 - c): the stronger no-disclosure threshold is the larger eps
        (
            4,
            {"kind": "min_mass", "c": 0.1},
            {"min_entropy": 0.01},
            lambda: -mpmath.log(mpmath.mpf(9) / 10),
            "Proposition 7",
        ),
        # several requirements: the smallest eps (no disclosure, 0.105, binds before no singling out, 0.357)
        (
            4,
            {"kind": "min_mass", "c": 0.1},
            {"no_disclosure": True, "no_singling_out": True},
            lambda: -mpmath.log(mpmath.mpf(9) / 10),
            "Proposition 7",
        ),
    ],
)
def test_strict_threshold_resolves_to_a_decimal_just_below_the_paper_value(n, prior_set, protect, expected, theorem):
    result = design(_spec(n, prior_set, protect, {"kind": "dobrushin"}))
    req = result.to_json()["epsilon_requirement"]
    t = expected()
    eps = Fraction(req["epsilon_text"])  # an exact decimal: what the certificate checked
    assert result.spec.epsilon.text == req["epsilon_text"]
    assert mpmath.mpf(eps.numerator) / eps.denominator < t  # strictly below: the theorem applies at eps itself
    assert t - mpmath.mpf(eps.numerator) / eps.denominator < t * mpmath.mpf(10) ** -15  # and only just
    assert theorem in req["theorem"]
    assert result.is_ok and result.certificate.leakage <= float(eps) + 1e-15


def test_min_entropy_above_the_disclosure_threshold_is_theorem4_at_exactly_h():
    # Theorem 4: (eps, P)-PML with eps = h protects every attribute with H_inf(P_U) > h: eps = h as written
    result = design(_spec(10, {"kind": "min_mass", "c": 0.05}, {"min_entropy": "log(10/3)"}, {"kind": "dobrushin"}))
    req = result.to_json()["epsilon_requirement"]
    assert req["epsilon_text"] == "log(10/3)" and req["theorem"].startswith("Theorem 4")
    assert req["requirement"] == {"min_entropy": "log(10/3)"}
    # Theorem 1 of the Dobrushin paper at N = 10, c = 0.05, eps = log(10/3): Xi = 7/8
    assert result.objective == pytest.approx(7 / 8, abs=1e-12)


# ------------------------------------------------------------------ the designed kernel meets the requirement
def test_no_disclosure_kernel_discloses_no_attribute_and_keeps_theorem6_min_entropy():
    n, c = 4, Fraction(1, 10)
    result = design(_spec(n, {"kind": "min_mass", "c": "1/10"}, {"no_disclosure": True}))
    assert result.is_ok
    K = result.exact_kernel.fractions()
    # leakage capacity C(K) = LDP(K) (Theorem 2), from the exact kernel: finite (no zero beside a non-zero)
    cols = list(zip(*K))
    assert all(min(col) > 0 or max(col) == 0 for col in cols)
    cap = max(
        mpmath.log(mpmath.mpf(max(col).numerator) / max(col).denominator * min(col).denominator / min(col).numerator)
        for col in cols
        if max(col) > 0
    )
    checked = 0
    for q in _vertices_min_mass(n, c):  # adversaries at the vertices of Q_X(c)
        q_min = min(q)
        bound = mpmath.log(
            1
            + mpmath.mpf(q_min.numerator)
            / q_min.denominator
            / (1 - mpmath.mpf(q_min.numerator) / q_min.denominator)
            * mpmath.exp(-cap)
        )
        for blocks in _partitions(list(range(n))):
            if len(blocks) < 2:
                continue  # a constant attribute is never 'disclosed' in any useful sense
            assert not _discloses(K, q, blocks)
            for post in _posteriors(K, q, blocks):  # Theorem 6: H_inf(Q_{V|Y=y}) >= log(1 + q_min/(1-q_min) e^-C)
                top = max(post)
                assert -mpmath.log(mpmath.mpf(top.numerator) / top.denominator) >= bound - mpmath.mpf(10) ** -40
                checked += 1
    assert checked > 100


def test_min_entropy_kernel_protects_every_high_entropy_attribute_and_the_check_can_fail():
    # point prior: (eps, P)-PML allows zeros, so the kernel does disclose low-entropy attributes
    prior = [Fraction(1, 5), Fraction(1, 5)] + [Fraction(3, 20)] * 4
    h = mpmath.mpf(1)
    result = design(_spec(6, {"kind": "point", "prior": [str(p) for p in prior]}, {"min_entropy": 1}))
    assert result.is_ok and result.spec.epsilon.text == "1"
    K = result.exact_kernel.fractions()
    uniform = [Fraction(1, 6)] * 6  # Theorem 3: disclosure does not depend on the (full-support) adversary
    protected_high = 0
    for blocks in _partitions(list(range(6))):
        if len(blocks) < 2:
            continue
        if _min_entropy(prior, blocks) > h:
            assert not _discloses(K, uniform, blocks) and not _discloses(K, prior, blocks)  # Theorem 4
            protected_high += 1
    assert protected_high > 10
    # the check is not vacuous: the LP's kernel has zeros (the certified kernel carries a ~4e-16 repair mix,
    # so it discloses nothing at all); with them restored, attributes of low entropy are disclosed
    K0 = [[v if v > Fraction(1, 10**12) else Fraction(0) for v in row] for row in K]
    K0 = [[v / sum(row) for v in row] for row in K0]
    assert any(
        _discloses(K0, uniform, blocks)
        for blocks in _partitions(list(range(6)))
        if 1 < len(blocks) and _min_entropy(prior, blocks) <= h
    )


def test_no_singling_out_kernel_never_singles_out_x():
    prior = [Fraction(2, 5), Fraction(3, 10), Fraction(1, 5), Fraction(1, 10)]
    result = design(_spec(4, {"kind": "point", "prior": [str(p) for p in prior]}, {"no_singling_out": True}))
    eps = Fraction(result.spec.epsilon.text)
    assert mpmath.mpf(eps.numerator) / eps.denominator < -mpmath.log(mpmath.mpf(2) / 5)  # Corollary 8: eps < H_inf(P)
    K = result.exact_kernel.fractions()
    singletons = [[x] for x in range(4)]
    assert not _discloses(K, prior, singletons)  # singling out: the posterior of X itself is never a point mass
    # the check can fail: the identity kernel singles X out (and is not (eps, P)-PML at this eps)
    identity = [[Fraction(int(i == j)) for j in range(4)] for i in range(4)]
    assert _discloses(identity, prior, singletons)


# ------------------------------------------------------------------ errors, CLI, example spec
@pytest.mark.parametrize(
    "prior_set, protect, field",
    [
        ({"kind": "min_mass", "c": 0.05}, {"min_entropy": 3.5}, "epsilon.protect.min_entropy"),  # >= -log c = 3.0
        ({"kind": "min_mass", "c": 0.05}, {"min_entropy": -1}, "epsilon.protect.min_entropy"),
        ({"kind": "min_mass", "c": 0.05}, {"min_entropy": 1, "entropy": 2}, "epsilon.protect.entropy"),
        ({"kind": "min_mass", "c": 0.05}, {}, "epsilon.protect"),
        ({"kind": "simplex"}, {"no_disclosure": True}, "epsilon.protect.no_disclosure"),
        (
            {"kind": "hull", "priors": [[1, 0, 0, 0], [0.25, 0.25, 0.25, 0.25]]},
            {"no_singling_out": True},
            "epsilon.protect.no_singling_out",
        ),
    ],
)
def test_bad_requirement_is_one_line_naming_the_field(prior_set, protect, field, tmp_path, capsys):
    n = 4 if prior_set["kind"] == "hull" else 10
    with pytest.raises(SpecError) as err:
        design(_spec(n, prior_set, protect, {"kind": "dobrushin"}))
    assert err.value.message.startswith(field)
    path = tmp_path / "bad.yaml"
    path.write_text(json.dumps(_spec(n, prior_set, protect, {"kind": "dobrushin"})))
    assert main(["solve", str(path)]) == 2
    err_text = capsys.readouterr().err.strip()
    assert len(err_text.splitlines()) == 1 and field in err_text


def test_example_spec_solves_from_the_command_line(capsys):
    # README quick-start style: mechdesign solve problems/protect_no_disclosure.yaml
    path = ROOT / "problems" / "protect_no_disclosure.yaml"
    assert main(["solve", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["epsilon_requirement"]["requirement"] == {"no_disclosure": True}
    # Theorem 1 at e^eps = 1/(1 - c): Xi = c/(2 - (N + 1)c) = 1/29 for N = 10, c = 1/20
    assert out["objective"] == pytest.approx(1 / 29, abs=1e-12)
    assert main(["solve", str(path)]) == 0
    assert "eps chosen from the requirement protect no_disclosure" in capsys.readouterr().out


def test_set_override_and_verify_with_a_requirement_spec(tmp_path, capsys):
    path = ROOT / "problems" / "protect_no_disclosure.yaml"
    kernel = tmp_path / "k.csv"
    assert main(["solve", str(path), "-o", str(kernel)]) == 0
    assert main(["verify", str(kernel), "--spec", str(path)]) == 0  # checked at the resolved eps
    capsys.readouterr()
    # --set into the requirement: min_entropy 0.5 > log 1/(1 - c) = 0.051, so Theorem 4 at eps = 0.5
    assert (
        main(
            [
                "solve",
                str(path),
                "--json",
                "--set",
                "epsilon.protect.min_entropy=0.5",
                "--set",
                "epsilon.protect.no_disclosure=false",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["epsilon_text"] == "0.5" and out["epsilon_requirement"]["theorem"].startswith("Theorem 4")
    # the kernel designed under the no-disclosure eps is not private at a smaller eps: verify can fail
    assert main(["verify", str(kernel), "--prior-set", "min_mass:0.05", "--epsilon", "0.05"]) == 1


def test_sweep_varies_the_requirement(tmp_path):
    from mechdesign.sweeps.api import sweep

    base = _spec(6, {"kind": "min_mass", "c": 0.05}, {"min_entropy": 0.5}, {"kind": "dobrushin"})
    df = sweep(base, {"epsilon.protect.min_entropy": [0.01, 0.5, 2]}, store=tmp_path / "store", serial=True)
    got = dict(zip(df["epsilon.protect.min_entropy"], df["epsilon_value"]))
    assert got[0.5] == 0.5 and got[2] == 2.0
    assert got[0.01] == pytest.approx(float(-mpmath.log(mpmath.mpf(19) / 20)), rel=1e-14)  # Proposition 7 wins


def test_epsilon_command_prints_the_eps_a_spec_enforces(capsys):
    assert main(["epsilon", "--prior-set", "min_mass:0.1", "--alphabet", "5", "--no-disclosure", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    d = Fraction(out["spec_epsilon"])
    t = -mpmath.log(mpmath.mpf(9) / 10)  # Proposition 7: log 1/(1 - c)
    assert mpmath.mpf(d.numerator) / d.denominator < t < mpmath.mpf(d.numerator) / d.denominator + mpmath.mpf(10) ** -16
    # h at or above -log c = log 10: every kernel is (h, Q_X(c))-PML, the requirement protects nothing
    assert main(["epsilon", "--prior-set", "min_mass:0.1", "--alphabet", "5", "--protect-min-entropy", "4"]) == 2
    assert "--protect-min-entropy" in capsys.readouterr().err


def test_reported_leakage_is_the_log_of_the_exact_ratio():
    # found by this file: log(num) - log(den) of ~2^52-sized integers reported 0.5978370007556251 > eps for the
    # kernel of the Corollary 8 case above; the log of the exact ratio (mpmath, 40 digits) is below eps
    from mechdesign.certify.exact import PMLCheck

    ratio = Fraction(12867427506772835, 7077085128725063)
    check = PMLCheck(True, True, ratio, [ratio], 0, None, ratio)
    exact = mpmath.log(mpmath.mpf(ratio.numerator) / ratio.denominator)
    assert abs(check.leakage - exact) <= 2e-16 * exact


def test_decimal_strictly_below_is_below_the_threshold_as_an_exact_rational():
    """The enforced ε of ``no_singling_out`` over the point prior (0.4, 0.4, 0.2) must lie below −log 0.4 =
    0.916290731874155065183… (mpmath, 50 digits). Reading the interval's lower end through ``mpmath.mpf`` rounded
    it to 53 bits, above the threshold, and gave 0.9162907318741551: the designed kernel then leaked exactly
    log 2.5 and singled X out (found by tests/integration/test_fuzz_constraints.py)."""
    from fractions import Fraction

    import mpmath

    from mechdesign import design
    from mechdesign.theory.epsilon_requirement import decimal_strictly_below

    texts = ("-log(2/5)", "-log(1 - 1/3)", "-log(1/7)", "log(10/3)")
    with mpmath.workprec(53):  # mpmath's default context, as in the command line (this module raises it to 50 digits)
        chosen = {text: decimal_strictly_below(text) for text in texts}
    with mpmath.workdps(50):
        m = mpmath.mpf
        thresholds = (-mpmath.log(m(2) / 5), -mpmath.log(m(2) / 3), mpmath.log(7), mpmath.log(m(10) / 3))
        for text, threshold in zip(texts, thresholds):
            assert m(chosen[text]) < threshold, (text, chosen[text])
    with mpmath.workprec(53):
        result = design(
            {
                "alphabet": 3,
                "epsilon": {"protect": {"no_singling_out": True}},
                "prior_set": {"kind": "point", "prior": ["0.4", "0.4", "0.2"]},
                "objective": {"kind": "expected_loss", "loss": "hamming"},
            }
        )
    K = [[Fraction(v) for v in row] for row in result.exact_kernel.strings()]
    P = [Fraction(2, 5), Fraction(2, 5), Fraction(1, 5)]
    worst = max(max(K[x][y] for x in range(3)) / sum(P[x] * K[x][y] for x in range(3)) for y in range(len(K[0])))
    assert worst * Fraction(2, 5) < 1  # H_inf(P) = -log 0.4 > the leakage: X is never singled out (Corollary 8)
