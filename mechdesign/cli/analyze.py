"""``mechdesign analyze KERNEL --prior-set … [--epsilon …] [--delta …] [--json]``.

Reads a kernel (CSV, JSON or ``.npy``, exactly, via :func:`mechdesign.release.kernel_io.read_kernel`)
and reports its measures (:mod:`mechdesign.theory.measures`), which (ε,𝒫)-PML and LDP
guarantees hold (the exact check of :func:`mechdesign.certify.exact.check_pml`), and the
closed forms of :mod:`mechdesign.theory.bounds` that apply. Without ``--epsilon`` the
guarantee is taken at ε = the leakage capacity C(K, 𝒫), the smallest ε that holds.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any


from mechdesign.spec.errors import InputError

__all__ = ["analyze_kernel", "register"]


def _num(v):
    if v is None or isinstance(v, (bool, int, str)):
        return v
    v = float(v)
    return v if math.isfinite(v) else ("inf" if v > 0 else "-inf" if v < 0 else None)


def _holds(kernel, prior_set, epsilon) -> bool | None:
    """Exact verdict on (ε,𝒫)-PML: True/False, or None when the worst ratio lies strictly
    between the rational bounds E_lo ≤ e^ε ≤ E_hi (160-bit intervals; e^ε = log of a
    rational, e.g. log(10/3), is decided exactly)."""
    from mechdesign.spec import expr
    from mechdesign.certify.exact import check_pml
    from mechdesign.certify.saturation import ratio_cap

    cap = ratio_cap(prior_set, kernel.denominator)  # e^ε ≥ cap behaves as ∞ for this kernel
    if check_pml(kernel, prior_set, expr.exp_lower_bound(epsilon.text, cap=cap)).feasible:
        return True
    upper = expr.exp_upper_bound(epsilon.text, cap=cap)
    if upper is None:  # e^ε ≥ cap: the failure is an infinite ratio
        return False if expr.exp_saturates(epsilon.text, cap) else None
    if not check_pml(kernel, prior_set, upper).feasible:
        return False
    return True if expr.exp_exact(epsilon.text) is not None else None


def _point_prior_measures(kernel, prior, delta: str) -> dict[str, Any]:
    """For a point prior: the PML per output, the disclosure thresholds and the leakage envelopes at ``delta``."""
    from fractions import Fraction

    from mechdesign.theory import bounds
    from mechdesign.theory import measures

    lower, upper = bounds.envelope_bounds(kernel, prior, delta)
    delta_double = float(Fraction(delta))
    return {
        "pml": [_num(v) for v in measures.pml(kernel, prior)],
        "min_entropy": _num(measures.min_entropy(prior)),
        "disclosure_threshold": _num(measures.disclosure_threshold(prior)),
        "singling_out_threshold": _num(measures.singling_out_threshold(prior)),
        # the double, or the text when the double would misstate it (1e-400 is 0.0 in doubles)
        "delta": delta_double if delta_double > 0 else str(delta),
        "leakage_quantile": _num(measures.leakage_quantile(kernel, prior, delta)),
        "leakage_upper_quantile": _num(measures.leakage_upper_quantile(kernel, prior, delta)),
        "binary_envelope": _num(measures.binary_envelope(kernel, prior, delta)),
        "envelope_lower": _num(lower),
        "envelope_upper": _num(upper),
    }


def _guarantee_checks(kernel, prior_set, epsilon, capacity: float, ldp: float):
    """(ε value, ε text, PML holds, LDP holds) at ``epsilon``, or at ε = C(K, 𝒫) when it is None: PML holds
    there by definition (when finite); LDP only if its level ≤ C."""
    from mechdesign.spec.models import Simplex

    if epsilon is None:
        return capacity, "leakage capacity", math.isfinite(capacity), math.isfinite(ldp) and ldp <= capacity
    eps_value, eps_text = epsilon.value, epsilon.text
    pml_ok = _holds(kernel, prior_set, epsilon)
    ldp_ok = _holds(kernel, Simplex(kind="simplex"), epsilon)
    return eps_value, eps_text, pml_ok, ldp_ok


def _repeated_release_entry(kernel, prior_set, repeated: int) -> dict[str, Any]:
    """The leakage of ``repeated`` independent releases through the kernel
    (:func:`mechdesign.theory.composition.repeated_release`)."""
    from mechdesign.theory.composition import repeated_release

    rr = repeated_release(kernel, prior_set, repeated)
    return {
        "k": rr.k,
        "epsilon": _num(rr.epsilon),
        "exact": rr.exact,
        "ldp": _num(rr.ldp),
        "worst_counts": None if rr.worst_counts is None else list(rr.worst_counts),
        "method": rr.method,
        "sentence": rr.sentence(),
    }


def analyze_kernel(
    kernel,
    prior_set,
    epsilon=None,
    delta: str = "0.1",
    n_reports: int = 10_000,
    accuracy_prior=None,
    repeated: int | None = None,
) -> dict[str, Any]:
    """All measures of an :class:`~mechdesign.certify.exact.ExactKernel` over a prior set, as a JSON-ready dict.

    ``epsilon`` is an :class:`~mechdesign.spec.models.Epsilon` (or None: use C(K, 𝒫)). ``mle_accuracy`` is the
    MLE's asymptotic accuracy (:func:`mechdesign.theory.estimation.mle_accuracy_summary`, for records i.i.d.
    from P and for the collected population's frequencies) and ``inversion_accuracy`` the exact accuracy of
    the inversion estimator (:func:`mechdesign.theory.accuracy.accuracy_summary`), from ``n_reports`` reports
    under ``accuracy_prior`` (default: the point prior of the prior set, else uniform).
    """
    from mechdesign.privacy.registry import rules
    from mechdesign.theory import bounds
    from mechdesign.theory import measures

    from mechdesign.spec.notation import prior_set_notation

    n, m = kernel.shape
    K = kernel.to_float()
    capacity = measures.leakage_capacity(kernel, prior_set)
    ldp = measures.ldp(kernel)
    gmax, gmin = measures.gamma_extremes(kernel, prior_set)
    out: dict[str, Any] = {
        "shape": [n, m],
        "prior_set": prior_set.model_dump(mode="json"),
        "prior_set_text": prior_set_notation(prior_set),
        "measures": {
            "leakage_capacity": _num(capacity),
            "ldp": _num(ldp),
            "max_leakage": _num(measures.max_leakage(kernel)),
            "dobrushin": _num(measures.dobrushin(K)),
            "gamma_max": _num(gmax),
            "gamma_min": _num(gmin),
            "zeros_per_column": measures.zeros_per_column(K),
            "confusion_graph_complete": not measures.has_disjoint_supports(K),
            "disjoint_support_pairs": [list(p) for p in measures.disjoint_support_pairs(K)],
        },
    }
    prior = rules(prior_set, n).point_prior()
    if prior is not None:
        out["point_prior"] = _point_prior_measures(kernel, prior, delta)
    eps_value, eps_text, pml_ok, ldp_ok = _guarantee_checks(kernel, prior_set, epsilon, capacity, ldp)
    out["guarantees"] = {
        "epsilon": _num(eps_value),
        "epsilon_text": eps_text,
        "pml": pml_ok,
        "ldp": ldp_ok,
    }
    # The closed forms assume an (ε,𝒫)-PML kernel: where the exact check fails at the ε asked
    # for, they are evaluated at ε = C(K, 𝒫), the smallest ε that holds (so no row says
    # "holds: yes" next to a failed PML check).
    bounds_eps = eps_value if pml_ok is True else capacity
    out["bounds_epsilon"] = _num(bounds_eps)
    out["bounds_epsilon_reason"] = (
        "the epsilon checked"
        if pml_ok is True
        else "the leakage capacity (the kernel is not (eps,P)-PML at the epsilon asked for)"
    )
    out["bounds"] = (
        []
        if bounds_eps == math.inf
        else bounds.bounds_for(prior_set, bounds_eps, kernel, max_entries=10**6, delta=delta)
    )
    if repeated is not None:
        out["repeated_release"] = _repeated_release_entry(kernel, prior_set, repeated)
    out["disclosure"] = _disclosure_guarantees(kernel, prior_set, eps_value if pml_ok else capacity, ldp)
    from mechdesign.theory.accuracy import accuracy_summary

    acc_prior = accuracy_prior if accuracy_prior is not None else (prior if prior is not None else [1] * n)
    from mechdesign.theory.estimation import mle_accuracy_summary

    out["mle_accuracy"] = mle_accuracy_summary(kernel, [float(v) for v in acc_prior], n_reports)
    out["inversion_accuracy"] = accuracy_summary(kernel, [float(v) for v in acc_prior], n_reports)
    return out


def _disclosure_guarantees(kernel, prior_set, eps_value: float, ldp: float) -> dict[str, Any]:
    """The disclosure paper's guarantees for this kernel and prior set
    (:mod:`mechdesign.theory.disclosure`): Theorem 4's threshold (attributes with H∞(P_U) above the
    guaranteed ε are not disclosed), Theorem 6's min-entropy left to every adversary of the set, and the
    set-valued thresholds of Proposition 7 / Corollary 8 with whether ε lies below them."""
    from mechdesign.theory import disclosure

    n = kernel.shape[0]
    low, high = disclosure.prior_set_mass_range(prior_set, n)
    t_dis = -math.log1p(-float(low))
    t_so = 0.0 - math.log(float(high))  # 0.0, not -0.0, for the simplex
    return {
        "theorem4_protected_min_entropy_above": _num(eps_value),
        "theorem6_min_entropy_left": _num(disclosure.theorem6_min_entropy_bound(ldp, min(float(low), 0.5))),
        "leakage_capacity_all_priors": _num(ldp),
        "no_disclosure_threshold": _num(t_dis),
        "no_disclosure": bool(eps_value < t_dis or ldp < math.inf),
        "no_singling_out_threshold": _num(t_so),
        "no_singling_out": bool(eps_value < t_so or ldp < math.inf),
    }


def _render(result: dict[str, Any], path: str) -> str:
    from io import StringIO

    from rich.console import Console
    from rich.table import Table

    buf = StringIO()
    con = Console(file=buf, width=120, force_terminal=False, color_system=None, highlight=False)
    n, m = result["shape"]
    con.print(f"mechdesign analyze: {path}, {n} x {m} kernel, prior set {result['prior_set_text']}")
    t = Table(title="measures", show_header=False, box=None)
    t.add_column(justify="left")
    t.add_column(justify="left")
    for k, v in result["measures"].items():
        t.add_row(k, str(v))
    for k, v in result.get("point_prior", {}).items():
        t.add_row(k, str(v))
    con.print(t)
    g = result["guarantees"]
    if g["epsilon_text"] == "leakage capacity":  # no --epsilon: say from which eps each guarantee holds
        cap, ldp = result["measures"]["leakage_capacity"], result["measures"]["ldp"]
        con.print(
            f"(eps, P)-PML holds for eps >= {cap} (the leakage capacity)"
            if isinstance(cap, float)
            else "(eps, P)-PML holds for no finite eps (infinite leakage capacity)"
        )
        con.print(
            f"eps-LDP holds for eps >= {ldp} (the LDP level)"
            if isinstance(ldp, float)
            else "eps-LDP holds for no finite eps (some output has zero and non-zero entries)"
        )
    else:
        verdict = {True: "holds", False: "FAILS", None: "undecided (within 2^-150 of eps)"}
        con.print(
            f"(eps, P)-PML at eps = {g['epsilon_text']}: {verdict[g['pml']]} (exact check); "
            f"eps-LDP: {verdict[g['ldp']]}"
        )
    if "repeated_release" in result:
        con.print(result["repeated_release"]["sentence"])
    if result.get("disclosure"):
        dt = Table(title="disclosure guarantees (disclosure paper)", show_header=False, box=None)
        dt.add_column(justify="left")
        dt.add_column(justify="left")
        for k, v in result["disclosure"].items():
            dt.add_row(k, str(v))
        con.print(dt)
    if "mle_accuracy" in result:
        from mechdesign.theory.estimation import describe_mle_accuracy

        for line in describe_mle_accuracy(result["mle_accuracy"]):
            con.print(f"MLE accuracy (asymptotic), {line}")
    if "inversion_accuracy" in result:
        from mechdesign.theory.accuracy import describe_accuracy

        con.print(f"inversion accuracy (exact): {describe_accuracy(result['inversion_accuracy'])}")
    if result["bounds"]:
        title = "closed forms that apply"
        if result.get("bounds_epsilon") != g["epsilon"] or g["epsilon_text"] == "leakage capacity":
            title += f" at eps = {result['bounds_epsilon']}, {result['bounds_epsilon_reason']}"
        bt = Table(title=title, show_lines=False)
        for col in ("bound", "value", "measured", "holds"):
            bt.add_column(col)
        for b in result["bounds"]:
            bt.add_row(b["name"], str(b["value"]), str(b["measured"]), "yes" if b["holds"] else "NO")
        con.print(bt)
    return buf.getvalue()


def _cmd_analyze(args) -> int:
    from mechdesign.cli.args import parse_epsilon, parse_prior_set, parse_report_count
    from mechdesign.release.kernel_io import read_kernel_normalised

    kernel, normalised = read_kernel_normalised(Path(args.kernel))
    n, _ = kernel.shape
    if n < 2:
        raise InputError(f"{args.kernel}: a kernel needs at least 2 rows (secrets), found {n}")
    prior_set = parse_prior_set(args.prior_set, n)
    epsilon = None if args.epsilon is None else parse_epsilon(args.epsilon)
    try:
        from fractions import Fraction

        d = Fraction(args.delta.strip())
    except (ValueError, ZeroDivisionError):
        raise InputError(f"--delta: not a number: {args.delta!r}") from None
    if not 0 < d < 1:
        raise InputError(f"--delta: must lie in (0, 1), found {args.delta}")
    if args.repeated is not None and args.repeated < 1:
        raise InputError(f"--repeated: must be an integer >= 1, found {args.repeated}")
    n_reports = parse_report_count(args.n)
    accuracy_prior = None if args.prior is None else _accuracy_prior(args.prior, n)
    try:
        result = analyze_kernel(
            kernel, prior_set, epsilon, args.delta.strip(), n_reports, accuracy_prior, repeated=args.repeated
        )
    except ValueError as exc:
        raise InputError(f"{args.kernel}: {exc}") from None
    result["normalised_rows"] = normalised
    if args.json:
        from mechdesign.spec.json_values import json_safe
    text = json.dumps(json_safe(result), indent=2) + "\n" if args.json else _render(result, args.kernel)
    if normalised and not args.json:
        from mechdesign.cli.verify import normalisation_note

        text += normalisation_note(normalised).strip() + "\n"
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise InputError(f"-o: cannot write {args.output}: {exc.strerror or exc}") from None
    else:
        import sys

        sys.stdout.write(text)
    return 0


def _accuracy_prior(text: str, n: int) -> list[float]:
    """The masses of ``--prior`` under a spec's rule for a prior (:func:`mechdesign.spec.models.checked_distribution`:
    masses >= 0 summing to 1 within 1e-9, divided by their exact sum), never normalised beyond that."""
    from fractions import Fraction

    from mechdesign.spec.models import checked_distribution

    try:
        values = [Fraction(v.strip()) for v in text.split(",") if v.strip()]
    except (ValueError, ZeroDivisionError):
        raise InputError(f"--prior: not a list of numbers: {text!r}") from None
    if len(values) != n:
        raise InputError(f"--prior: needs N = {n} masses, found {len(values)} in {text!r}")
    try:
        return [float(v) for v in checked_distribution(values, "--prior")]
    except ValueError as exc:
        raise InputError(f"--prior: {str(exc).removeprefix('--prior ')}") from None


def register(subparsers) -> None:
    p = subparsers.add_parser("analyze", help="measures, guarantees and applicable bounds of a given kernel")
    p.add_argument("kernel", help="kernel file: .csv, .json or .npy (rows = secrets)")
    p.add_argument(
        "--prior-set",
        default="simplex",
        help="simplex (default), min_mass:C, point:P1,P2,..., or a mapping '{kind: box, ...}'",
    )
    p.add_argument("--epsilon", help="check (eps, P)-PML and eps-LDP at this eps (number or expression)")
    p.add_argument("--delta", default="0.1", help="failure probability for the PML envelope (point prior), default 0.1")
    p.add_argument(
        "--repeated",
        type=int,
        metavar="K",
        help="the cost of K independent reports of one person: exact (eps, P)-PML and LDP of the K-fold product",
    )
    p.add_argument(
        "--n", default="10000", help="reports n for the accuracy lines (MLE asymptotic, inversion exact; default 10000)"
    )
    p.add_argument("--prior", help="prior for the accuracy lines, N masses (default: the point prior or uniform)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("-o", "--output", metavar="FILE", help="write the output to FILE")
    p.set_defaults(func=_cmd_analyze)
