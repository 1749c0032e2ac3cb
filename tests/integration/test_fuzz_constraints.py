"""Property fuzz of every constraint a spec states, checked exactly by code written here, and of hostile files.

Part 1, designs (:func:`test_every_stated_constraint_holds_on_the_emitted_kernel`). Random valid specs over the
features added since tests/integration/test_fuzz_exact.py: ``privacy:`` lists mixing (ε,𝒫)-PML entries of every prior set
with metric entries (absolute, discrete, matrix and grid metrics), metric-only lists, expected loss under a
vulnerability cap (Bayes or a gain matrix), ``min_vulnerability`` under a loss cap, and ε chosen by
``epsilon: {protect: ...}``. design() runs in a forked child (bounded time and memory, tests/integration/test_fuzz_exact.py).
Each constraint the spec states is then decided exactly on the emitted kernel, independently of mechdesign's
certificate (which is only compared with the result):

* each (ε,𝒫)-PML entry: tests/helpers/exact_oracle.py (max_x K_x(y) ≤ e^ε min_{P∈𝒫} P·K(:,y), ε as written);
* each metric entry, ε·d-privacy (Chatzikokolakis et al. 2013): K_x(y) ≤ e^{ε d(x,x')} K_{x'}(y) for every
  x, x', y, with the worst ratio of each ordered pair decided against e^{ε d(x,x')} by the oracle's rigorous
  comparison (ε·d is an exact expression: a rational, or spacing·sqrt(k) for a grid);
* a vulnerability cap: V_g(K) = Σ_y max_w Σ_x G(w,x) P(x) K_x(y) ≤ at_most, in Fractions;
* a loss cap: Σ_x P(x) Σ_y K_x(y) L(x,y) ≤ max_loss, in Fractions;
* a ``protect`` requirement, from the worst PML ratio R of the kernel over the prior set (disclosure paper,
  Saeidian et al., "Rethinking disclosure prevention with pointwise maximal leakage"), with
  p_lo = min_{P∈𝒫} min_x P(x) and p_hi = max_{P∈𝒫} max_x P(x): ``no_disclosure`` needs log R < −log(1 − p_lo)
  (Proposition 7 with Theorem 6), that is R (1 − p_lo) < 1; ``no_singling_out`` needs log R < −log p_hi
  (Corollary 8), R p_hi < 1; ``min_entropy: h`` needs log R ≤ h (Theorem 4) or nothing disclosed at all
  (R (1 − p_lo) < 1). A requirement that protects nothing (h ≥ −log p_lo) must be refused instead.

Failure classes: ``crash``/``hang``/``spec_error`` (a valid spec not designed), ``no_kernel``,
``not_stochastic``, ``violated: <constraint>`` (a stated constraint fails on the emitted kernel) and
``certified_but_violated`` (certificate.feasible is true while a stated constraint fails).

Part 2, hostile files (:func:`test_kernel_and_counts_files_follow_the_input_rules`). Random kernels written as
CSV, JSON or ``.npy`` (exact fractions, decimals, doubles, white space), each either valid or broken by one
hostile change (a ``.npy`` header claiming a shape beyond the limits, a truncated or complex ``.npy``, JSON
nested up to 100,000 deep, a CSV field over the csv module's limit, a row sum more than 1e-9 from 1, a negative
entry, a label or count file with extra columns or spaced labels). ``verify`` and ``estimate`` must answer a
broken file with exit 2 and one line naming the file, and a valid one with the oracle's verdict (verify) or the
counts as written (estimate), under the one rule for rows within 1e-9 of 1 (divided by their exact sums).

Profiles: ``fuzz`` (200 examples per test, the default and CI) and ``fuzz-slow`` (2000), chosen with
MECHDESIGN_FUZZ=slow (tests/conftest.py).
"""

from __future__ import annotations

import io
import json
import math
import os
from contextlib import redirect_stderr, redirect_stdout
from fractions import Fraction

import hypothesis
import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from helpers.exact_oracle import (
    PriorSetOracle,
    Undecided,
    WrittenEpsilon,
    check_kernel,
    distribution,
    exact_number,
    loss_matrix,
    named_prior,
)
from test_fuzz_exact import _write, distributions, prior_sets, run_design  # noqa: E402

PROFILE = "fuzz-slow" if os.environ.get("MECHDESIGN_FUZZ") == "slow" else "fuzz"
try:
    _PROFILE = settings.get_profile(PROFILE)
except hypothesis.errors.InvalidArgument:  # run as a script
    _PROFILE = settings(deadline=None, max_examples=2000 if PROFILE == "fuzz-slow" else 200)

EPSILONS = [0, 1e-9, 0.1, 0.5, 1, 2, 3, 5, "log(3)", "log(10/3)", "2*log(2)", "sqrt(2)", "1/3", 40]
"""ε of each entry: zero, tiny, ordinary, expressions whose e^ε is rational, and large."""


# ------------------------------------------------------------------------------ strategies
@st.composite
def metrics(draw, n: int):
    kind = draw(st.sampled_from(["absolute", "discrete", "matrix", "grid"]))
    if kind in ("absolute", "discrete"):
        return {"kind": kind}
    if kind == "matrix":
        entry = st.sampled_from([Fraction(0), Fraction(1, 2), Fraction(1), Fraction(2), Fraction(3)])
        d = [[Fraction(0) if x == z else draw(entry) for z in range(n)] for x in range(n)]
        return {"kind": "matrix", "d": [[_write(v, draw(st.integers(0, 3))) for v in row] for row in d]}
    rows = draw(st.sampled_from([r for r in range(1, n + 1) if n % r == 0]))
    spacing = draw(st.sampled_from([Fraction(1), Fraction(1, 2), Fraction(2)]))
    return {"kind": "grid", "shape": [rows, n // rows], "spacing": _write(spacing, draw(st.integers(0, 3)))}


def _gain(draw, n: int):
    if draw(st.booleans()):
        return "bayes", [[Fraction(int(w == x)) for x in range(n)] for w in range(n)]
    w = draw(st.integers(1, 3))
    entry = st.sampled_from([Fraction(0), Fraction(1, 2), Fraction(1), Fraction(2)])
    G = [[draw(entry) for _ in range(n)] for _ in range(w)]
    if all(v == 0 for row in G for v in row):
        G[0][0] = Fraction(1)
    return [[_write(v, 1) for v in row] for row in G], G


def _vulnerability(G, P, K=None) -> Fraction:
    """V_g = Σ_y max_w Σ_x G(w,x) P(x) K_x(y); with K None, the prior vulnerability max_w Σ_x G(w,x) P(x)."""
    if K is None:
        return max(sum((g * p for g, p in zip(row, P)), Fraction(0)) for row in G)
    m = len(K[0])
    return sum(
        (
            max(sum((G[w][x] * P[x] * K[x][y] for x in range(len(P))), Fraction(0)) for w in range(len(G)))
            for y in range(m)
        ),
        Fraction(0),
    )


@st.composite
def objective_with_prior(draw, kind: str, n: int):
    obj: dict = {"kind": kind}
    prior_choice = draw(st.sampled_from(["omit", "uniform", "list"]))
    if prior_choice == "list":
        obj["prior"] = [_write(v, draw(st.integers(0, 3))) for v in draw(distributions(n, full_support=False))]
    elif prior_choice == "uniform":
        obj["prior"] = "uniform"
    if kind in ("expected_loss", "min_vulnerability"):
        loss = draw(st.sampled_from(["hamming", "absolute", "squared"]))
        obj["loss"] = loss
    return obj


@st.composite
def design_cases(draw):
    """(spec, tags): one of the five feature families."""
    family = draw(st.sampled_from(["privacy_list", "metric_only", "vulnerability_cap", "min_vulnerability", "protect"]))
    n = draw(st.integers(2, 4))
    spec: dict = {"alphabet": n}
    tags = {family}
    if family in ("privacy_list", "metric_only"):
        entries = []
        for _ in range(draw(st.integers(1, 3))):
            eps = draw(st.sampled_from(EPSILONS))
            if family == "metric_only" or draw(st.booleans()):
                metric = draw(metrics(n))
                entries.append({"epsilon": eps, "metric": metric})
                tags.add(f"metric_{metric['kind']}")
            else:
                ps, _ = draw(prior_sets(n))
                entries.append({"epsilon": eps, "prior_set": ps})
                tags.add(f"prior_set_{ps['kind']}")
        spec["privacy"] = entries
        kind = draw(st.sampled_from(["dobrushin", "expected_loss", "min_vulnerability"]))
        if kind == "dobrushin":
            spec["objective"] = {"kind": "dobrushin"}
        else:
            spec["objective"] = draw(objective_with_prior(kind, n))
            if kind == "min_vulnerability":
                spec["objective"]["max_loss"] = _loss_cap(draw, spec["objective"], n)
        tags.add(kind)
        return spec, tags
    spec["epsilon"] = draw(st.sampled_from(EPSILONS))
    if family == "protect":
        kind = draw(st.sampled_from(["min_mass", "point", "hull"]))
        if kind == "min_mass":
            c = Fraction(1, n) * draw(st.sampled_from([Fraction(1, 10), Fraction(1, 2), Fraction(9, 10), Fraction(1)]))
            spec["prior_set"] = {"kind": "min_mass", "c": _write(c, draw(st.integers(0, 3)))}
        elif kind == "point":
            spec["prior_set"] = {
                "kind": "point",
                "prior": [_write(v, 1) for v in draw(distributions(n, full_support=True, allow_tiny=False))],
            }
        else:
            priors = draw(st.lists(distributions(n, full_support=True, allow_tiny=False), min_size=1, max_size=3))
            spec["prior_set"] = {"kind": "hull", "priors": [[_write(v, 1) for v in p] for p in priors]}
        req: dict = {}
        for key in draw(
            st.lists(
                st.sampled_from(["min_entropy", "no_disclosure", "no_singling_out"]),
                min_size=1,
                max_size=3,
                unique=True,
            )
        ):
            req[key] = draw(st.sampled_from([0.05, 0.3, 1, "log(2)"])) if key == "min_entropy" else True
        spec["epsilon"] = {"protect": req}
        spec["objective"] = draw(
            st.sampled_from(
                [{"kind": "dobrushin"}, {"kind": "expected_loss", "loss": "hamming"}, {"kind": "bayes_vulnerability"}]
            )
        )
        tags |= {f"protect_{k}" for k in req} | {kind}
        return spec, tags
    ps, ps_tags = draw(prior_sets(n))
    spec["prior_set"] = ps
    tags |= ps_tags
    if family == "vulnerability_cap":
        obj = draw(objective_with_prior("expected_loss", n))
        P = named_prior(obj.get("prior"), n)
        written, G = _gain(draw, n)
        V0 = _vulnerability(G, P)
        Vmax = sum((max(G[w][x] for w in range(len(G))) * P[x] for x in range(n)), Fraction(0))
        t = draw(st.sampled_from([Fraction(0), Fraction(1, 10), Fraction(1, 2), Fraction(1), Fraction(2)]))
        obj["max_vulnerability"] = {"at_most": _write(V0 + t * (Vmax - V0), draw(st.integers(0, 3))), "gain": written}
        spec["objective"] = obj
        tags.add(f"cap_t_{t}")
        return spec, tags
    obj = draw(objective_with_prior("min_vulnerability", n))
    obj["max_loss"] = _loss_cap(draw, obj, n)
    if draw(st.booleans()):
        obj["gain"] = _gain(draw, n)[0]
    spec["objective"] = obj
    return spec, tags


LOSS_CAP_FACTORS = [Fraction(1, 4), Fraction(1, 2), Fraction(1), Fraction(3, 2)]


def _loss_cap(draw, obj: dict, n: int):
    """max_loss as a multiple of the least loss of a constant kernel (always private): min_y Σ_x P(x) L(x, y)."""
    P = named_prior(obj.get("prior"), n)
    L = loss_matrix(obj, n, n)
    constant = min(sum((P[x] * L[x][y] for x in range(n)), Fraction(0)) for y in range(n))
    factor = draw(st.sampled_from(LOSS_CAP_FACTORS))
    return _write(constant * factor, draw(st.integers(0, 3)))


# ------------------------------------------------------------------------------ the exact checker
def _metric_distance_text(metric: dict, x: int, z: int) -> str:
    """d(x, z) as an exact expression."""
    kind = metric["kind"]
    if kind == "absolute":
        return str(abs(x - z))
    if kind == "discrete":
        return str(int(x != z))
    if kind == "matrix":
        q = exact_number(metric["d"][x][z])
        return f"{q.numerator}/{q.denominator}"
    cols = metric["shape"][1]
    k = (x // cols - z // cols) ** 2 + (x % cols - z % cols) ** 2
    s = exact_number(metric["spacing"])
    return f"({s.numerator}/{s.denominator})*sqrt({k})"


def metric_violation(K, epsilon, metric: dict) -> str | None:
    """The first (x, z) with max_y K_x(y) / K_z(y) > e^{ε d(x,z)}, described; None when K is ε·d-private."""
    n = len(K)
    eps_text = WrittenEpsilon(epsilon).text
    for x in range(n):
        for z in range(n):
            if x == z:
                continue
            ratio = Fraction(0)
            for a, b in zip(K[x], K[z]):
                if a > 0 and b == 0:
                    return f"K_{x}(y) > 0 = K_{z}(y) for some y"
                if b > 0:
                    ratio = max(ratio, a / b)
            bound = WrittenEpsilon(f"({eps_text})*({_metric_distance_text(metric, x, z)})")
            if not bound.exp_at_least(ratio):
                return f"K_{x}(y)/K_{z}(y) = {float(ratio)!r} > e^(eps d({x},{z})) with eps = {eps_text}"
    return None


def _mass_range(prior_set: dict, n: int) -> tuple[Fraction, Fraction]:
    ps = PriorSetOracle(prior_set, n)
    unit = [[Fraction(int(i == x)) for i in range(n)] for x in range(n)]
    p_lo = min(ps.minimise(e)[0] for e in unit)
    p_hi = max(-ps.minimise([-v for v in e])[0] for e in unit)
    return p_lo, p_hi


def _protect_refusal(spec: dict) -> str:
    """ "must" when the requirement protects nothing (min_entropy h > −log p_lo, i.e. 1/p_lo < e^h), "either" at
    h = −log p_lo exactly (documented as refused, but equal transcendental numbers written differently, log(2)
    and −log(1/2), are beyond the interval comparison the requirement is resolved with), else "never"."""
    req = spec["epsilon"]["protect"]
    if "min_entropy" not in req:
        return "never"
    p_lo, _ = _mass_range(spec["prior_set"], spec["alphabet"])
    h = WrittenEpsilon(req["min_entropy"])
    if h.exp_rational is not None and h.exp_rational == 1 / p_lo:
        return "either"
    return "must" if h.exp_at_least(1 / p_lo) else "never"


def stated_constraints(spec: dict, K: list[list[Fraction]]) -> list[tuple[str, str | None]]:
    """(name, None if it holds else why) for every constraint the spec states, decided exactly on K."""
    n = spec["alphabet"]
    out = []
    obj = spec["objective"]
    if "privacy" in spec:
        for i, g in enumerate(spec["privacy"]):
            if "metric" in g:
                out.append(
                    (f"privacy[{i}] metric {g['metric']['kind']}", metric_violation(K, g["epsilon"], g["metric"]))
                )
            else:
                v = check_kernel(K, {"alphabet": n, "epsilon": g["epsilon"], "prior_set": g["prior_set"]})
                out.append((f"privacy[{i}] {g['prior_set']['kind']}", None if v.private else v.reason))
    elif isinstance(spec["epsilon"], dict):
        req = spec["epsilon"]["protect"]
        v = check_kernel(K, {"alphabet": n, "epsilon": 0, "prior_set": spec["prior_set"]})
        p_lo, p_hi = _mass_range(spec["prior_set"], n)
        R = v.worst_ratio if v.unbounded_output is None else None  # None: infinite leakage
        nothing_disclosed = R is not None and R * (1 - p_lo) < 1
        if req.get("no_disclosure"):
            out.append(("protect.no_disclosure", None if nothing_disclosed else f"R = {R}, 1 - p_lo = {1 - p_lo}"))
        if req.get("no_singling_out"):
            ok = R is not None and R * p_hi < 1
            out.append(("protect.no_singling_out", None if ok else f"R = {R}, p_hi = {p_hi}"))
        if "min_entropy" in req:
            ok = R is not None and (WrittenEpsilon(req["min_entropy"]).exp_at_least(R) or nothing_disclosed)
            out.append(("protect.min_entropy", None if ok else f"R = {R}, h = {req['min_entropy']}"))
    else:
        v = check_kernel(K, spec)
        out.append(("epsilon/prior_set", None if v.private else v.reason))
    m = len(K[0])
    if obj["kind"] == "expected_loss" and "max_vulnerability" in obj:
        cap = obj["max_vulnerability"]
        P = named_prior(obj.get("prior"), n)
        gain = cap.get("gain", "bayes")
        G = (
            [[Fraction(int(w == x)) for x in range(n)] for w in range(n)]
            if gain == "bayes"
            else [[exact_number(v) for v in r] for r in gain]
        )
        V = _vulnerability(G, P, K)
        limit = exact_number(cap["at_most"])
        out.append(("max_vulnerability", None if V <= limit else f"V_g = {V} > {limit} (by {float(V - limit):.3g})"))
    if obj["kind"] == "min_vulnerability":
        P = named_prior(obj.get("prior"), n)
        L = loss_matrix(obj, n, m)
        loss = sum((P[x] * K[x][y] * L[x][y] for x in range(n) for y in range(m)), Fraction(0))
        limit = exact_number(obj["max_loss"])
        out.append(("max_loss", None if loss <= limit else f"loss = {loss} > {limit} (by {float(loss - limit):.3g})"))
    return out


def _refused(out: dict) -> bool:
    """design() refused the spec as bad input (SpecError, or an InputError found while designing)."""
    return out["error"] == "spec_error" or (out["error"] == "crash" and out["message"].startswith("InputError:"))


def design_findings(spec: dict, out: dict) -> list[tuple[str, str]]:
    if _refused(out):
        obj = spec["objective"]
        if isinstance(spec.get("epsilon"), dict) and _protect_refusal(spec) != "never":
            return []  # refused as it must (or may) be
        if obj["kind"] == "min_vulnerability" and exact_number(obj["max_loss"]) <= _constant_loss(spec):
            # a cap at or below the best constant kernel's loss may lie below the least loss any private kernel
            # reaches (the refusal threshold needs an LP to decide); a cap above it never does: the constant
            # kernel is private for every guarantee and meets it
            return [("known: loss cap at or below the constant kernel's loss refused", out["message"])]
        return [("refused_valid_spec", out["message"])]
    if isinstance(spec.get("epsilon"), dict) and _protect_refusal(spec) == "must":
        return [("not_refused", "min_entropy at or above -log p_lo protects nothing, yet the spec was designed")]
    if out["error"] is not None:
        return [(out["error"], out["message"])]
    if out["kernel"] is None:
        return [("no_kernel", f"status {out['status']}")]
    K = [[Fraction(v) for v in row] for row in out["kernel"]]
    if any(v < 0 for row in K for v in row) or any(sum(row) != 1 for row in K) or len(K) != spec["alphabet"]:
        return [("not_stochastic", "a negative entry, a row sum other than 1, or a wrong shape")]
    found = []
    try:
        verdicts = stated_constraints(spec, K)
    except Undecided as exc:
        return [("oracle_undecided", str(exc))]
    failed = [(name, why) for name, why in verdicts if why is not None]
    for name, why in failed:
        found.append((f"violated: {name}", why))
        if out["feasible"]:
            found.append(("certified_but_violated", f"certificate.feasible is true, yet {name}: {why}"))
    return found


def _constant_loss(spec: dict) -> Fraction:
    obj, n = spec["objective"], spec["alphabet"]
    P = named_prior(obj.get("prior"), n)
    L = loss_matrix(obj, n, n)
    return min(sum((P[x] * L[x][y] for x in range(n)), Fraction(0)) for y in range(n))


def _loss_excess(spec: dict, K) -> Fraction:
    obj, n, m = spec["objective"], spec["alphabet"], len(K[0])
    P = named_prior(obj.get("prior"), n)
    L = loss_matrix(obj, n, m)
    return sum((P[x] * K[x][y] * L[x][y] for x in range(n) for y in range(m)), Fraction(0)) - exact_number(
        obj["max_loss"]
    )


@settings(
    _PROFILE, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]
)
@given(design_cases())
def test_every_stated_constraint_holds_on_the_emitted_kernel(case):
    spec, tags = case
    for tag in tags:
        event(f"feature: {tag}")
    out = run_design(spec, seconds=120)
    found = design_findings(spec, out)
    for cls, _ in found:
        event(f"tolerated: {cls}" if cls.startswith("known:") else f"FAILURE: {cls}")
    real = [(cls, msg) for cls, msg in found if not cls.startswith("known:")]
    assert not real, f"spec {spec!r}: " + "; ".join(f"[{cls}] {msg}" for cls, msg in real)


# ------------------------------------------------------------------------------ part 2: hostile files
HOSTILE = ["npy_huge_shape", "npy_truncated", "npy_complex", "json_deep", "csv_long_field", "row_sum_off", "negative"]


@st.composite
def kernel_files(draw):
    """(file name, bytes, expected kernel after the row rule or None when the file must be refused, change)."""
    n, m = draw(st.integers(2, 4)), draw(st.integers(1, 4))
    rows = []
    for _ in range(n):
        w = draw(st.lists(st.integers(0, 9), min_size=m, max_size=m))
        if sum(w) == 0:
            w[0] = 1
        rows.append([Fraction(v, sum(w)) for v in w])
    fmt = draw(st.sampled_from(["csv_fractions", "csv_decimals", "json_exact", "json_list", "npy"]))
    change = draw(st.sampled_from(["none"] * 7 + HOSTILE))
    if fmt == "npy" or change.startswith("npy"):
        fmt = "npy"
    if change == "json_deep":
        fmt = "json_list"
    if change == "csv_long_field":
        fmt = "csv_fractions"
    written = rows
    expected = rows
    if fmt in ("csv_decimals", "npy", "json_list"):  # doubles: the exact rational each float is, then the row rule
        floats = [[float(v) for v in row] for row in rows]
        written = [[Fraction(v) for v in row] for row in floats]
        expected = [[v / sum(row) for v in row] for row in written]
    if change == "row_sum_off":
        written = [list(r) for r in written]
        written[0][0] += draw(st.sampled_from([Fraction(1, 10**8), Fraction(1, 10), Fraction(-1, 10**6)]))
        if written[0][0] < 0:
            written[0][0] = Fraction(0)
            written[0][-1] += 1 if m > 1 else Fraction(1, 10)
        expected = None
    if change == "negative":
        written = [list(r) for r in written]
        written[-1] = [Fraction(-1, 4)] + [Fraction(5, 4)] + [Fraction(0)] * (m - 2) if m > 1 else [Fraction(-1)]
        expected = None
    if change in HOSTILE:
        expected = None
    space = " " if draw(st.booleans()) else ""
    if fmt == "npy":
        buf = io.BytesIO()
        if change == "npy_huge_shape":
            shape = draw(st.sampled_from([(100_000, 100_000), (10_001, 2), (2, 10_001), (4000, 4000)]))
            np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": shape})
        elif change == "npy_truncated":
            np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": (n, m)})
            buf.write(b"\0" * 8 * (n * m - 1))
        elif change == "npy_complex":
            np.save(buf, np.array([[complex(float(v), 0.0) for v in row] for row in written]))
        else:
            np.save(buf, np.array([[float(v) for v in row] for row in written]))
        return "k.npy", buf.getvalue(), expected, change
    if fmt.startswith("json"):
        if change == "json_deep":
            depth = draw(st.sampled_from([3, 50, 5_000, 100_000]))
            text = "[" * depth + "1" + "]" * depth
            return "k.json", text.encode(), None, change
        if fmt == "json_exact":
            body = json.dumps({"kernel_exact": [[f"{v.numerator}/{v.denominator}" for v in row] for row in written]})
        else:
            body = json.dumps([[float(v) for v in row] for row in written])
        return "k.json", body.encode(), expected, change
    if fmt == "csv_decimals":
        lines = [("," + space).join(repr(float(v)) for v in row) for row in written]
    else:
        lines = [("," + space).join(f"{v.numerator}/{v.denominator}" for v in row) for row in written]
    if change == "csv_long_field":
        lines[0] = lines[0] + ",1" + "0" * 200_000
    return "k.csv", ("\n".join(lines) + "\n").encode(), expected, change


def _cli(argv) -> tuple[int, str, str]:
    from mechdesign.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main([str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


@st.composite
def counts_files(draw, m: int):
    """(text, counts as written or None when refused, what was changed)."""
    counts = draw(st.lists(st.integers(0, 50), min_size=m, max_size=m))
    if sum(counts) == 0:
        counts[0] = 1
    change = draw(st.sampled_from(["none", "none", "none", "extra_column", "spaced_label", "long_field"]))
    lines = ["label,count"] if draw(st.booleans()) else []
    for j, c in enumerate(counts):  # outputs of a kernel without output labels are named y0..y(M-1)
        label = f" y{j}" if change == "spaced_label" and j == 0 else f"y{j}"
        line = f"{label},{c}"
        if change == "extra_column" and j == m - 1:
            line += ",note"
        lines.append(line)
    if change == "long_field":
        lines.append("y0," + "1" * 200_000)
    return "\n".join(lines) + "\n", (None if change != "none" else counts), change


@settings(
    _PROFILE,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
@given(kernel_files(), st.sampled_from([0, "0.5", "log(2)", 3]), st.data())
def test_kernel_and_counts_files_follow_the_input_rules(tmp_path_factory, kernel_file, epsilon, data):
    name, content, expected, change = kernel_file
    event(f"kernel file: {name} {change}")
    folder = tmp_path_factory.mktemp("hostile")
    path = folder / name
    path.write_bytes(content)
    status, out, err = _cli(["verify", path, "--prior-set", "simplex", "--epsilon", epsilon])
    if expected is None:
        assert status == 2, (change, status, err[-500:])
        lines = err.strip().splitlines()
        assert len(lines) == 1 and str(path) in lines[0], err[-500:]
        return
    verdict = check_kernel(expected, {"alphabet": len(expected), "epsilon": epsilon, "prior_set": {"kind": "simplex"}})
    assert status == (0 if verdict.private else 1), (status, verdict.reason, out, err)
    m = len(expected[0])
    text, counts, cchange = data.draw(counts_files(m))
    event(f"counts file: {cchange}")
    counts_path = folder / "counts.csv"
    counts_path.write_text(text)
    status, out, err = _cli(["estimate", "--kernel", path, "--counts", counts_path, "--bootstrap", "0", "--json"])
    if counts is None:
        assert status == 2, (cchange, status, err[-500:])
        lines = err.strip().splitlines()
        assert len(lines) == 1 and str(counts_path) in lines[0], err[-500:]
        return
    K = np.array([[float(v) for v in row] for row in expected])
    if any(c > 0 and K[:, j].sum() == 0 for j, c in enumerate(counts)):  # an output the kernel never produces
        assert status == 2 and "cannot produce it" in err, err[-500:]
        return
    assert status == 0, err[-1000:]
    assert json.loads(out)["n"] == sum(counts)


def test_the_exact_checker_on_hand_computed_kernels():
    """K = [[3/4, 1/4], [1/4, 3/4]] has ratio 3 between rows: ε·d-private for the absolute metric exactly when
    e^ε ≥ 3, so at ε = log(3) (equality, decided exactly) and not at ε = 1 (e < 3); its Bayes vulnerability
    under the uniform prior is 3/4 and its Hamming loss 1/4."""
    K = [[Fraction(3, 4), Fraction(1, 4)], [Fraction(1, 4), Fraction(3, 4)]]
    assert metric_violation(K, "log(3)", {"kind": "absolute"}) is None
    assert metric_violation(K, 1, {"kind": "absolute"}) is not None
    assert metric_violation(K, "log(3)/2", {"kind": "matrix", "d": [[0, 2], [2, 0]]}) is None
    assert metric_violation(K, "log(3)/2", {"kind": "grid", "shape": [1, 2], "spacing": 2}) is None
    assert metric_violation(K, "log(3)/2.0001", {"kind": "grid", "shape": [2, 1], "spacing": 2}) is not None
    spec = {
        "alphabet": 2,
        "epsilon": 1,
        "prior_set": {"kind": "simplex"},
        "objective": {"kind": "expected_loss", "loss": "hamming", "max_vulnerability": {"at_most": "3/4"}},
    }
    assert dict(stated_constraints(spec, K))["max_vulnerability"] is None
    spec["objective"]["max_vulnerability"]["at_most"] = "0.7499"
    assert dict(stated_constraints(spec, K))["max_vulnerability"] is not None
    spec = {
        "alphabet": 2,
        "epsilon": 2,
        "prior_set": {"kind": "simplex"},
        "objective": {"kind": "min_vulnerability", "max_loss": "1/4"},
    }
    assert dict(stated_constraints(spec, K))["max_loss"] is None
    spec["objective"]["max_loss"] = 0.2499
    assert dict(stated_constraints(spec, K))["max_loss"] is not None
    # protect over Q_X(1/4) (p_lo = 1/4, p_hi = 3/4): R = max_x K_x(y) / min_P P·K(:,y) = (3/4)/(1/4·3/4 + 3/4·1/4)
    # = 2; no disclosure needs R (1 - 1/4) < 1: 3/2, fails; no singling out needs R·3/4 < 1: 3/2, fails
    spec = {
        "alphabet": 2,
        "epsilon": {"protect": {"no_disclosure": True}},
        "prior_set": {"kind": "min_mass", "c": "1/4"},
        "objective": {"kind": "dobrushin"},
    }
    assert dict(stated_constraints(spec, K))["protect.no_disclosure"] is not None
    assert dict(stated_constraints(spec, [[Fraction(1, 2)] * 2] * 2))["protect.no_disclosure"] is None
    assert distribution(["1/2", 0.5]) == [Fraction(1, 2)] * 2
    assert math.isfinite(float(_mass_range({"kind": "min_mass", "c": "1/4"}, 2)[0]))
    assert _mass_range({"kind": "min_mass", "c": "1/4"}, 2) == (Fraction(1, 4), Fraction(3, 4))
