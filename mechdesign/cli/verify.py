"""``mechdesign verify KERNEL (--spec SPEC | --prior-set P --epsilon EPS)``: audit any kernel exactly.

The kernel file (CSV, JSON with "p/q" strings or floats, ``.npy``; see
:mod:`mechdesign.release.kernel_io`) is read as exact rationals and checked with
:func:`mechdesign.certify.exact.verify_kernel`, the same exact check that certifies
every kernel :func:`mechdesign.design` emits:

    K is (ε,𝒫)-PML  ⇔  max_x K_x(y) ≤ e^ε · min_{P∈𝒫} P·K(:,y)   for every output y,

with e^ε replaced by a rational E ≤ e^ε (exact when e^ε is rational, as for
ε = log 3) and rows summing to exactly 1 with entries ≥ 0.

Rows saved as ordinary floats rarely sum to exactly 1 (``np.savetxt`` of [1/3, 2/3] sums to
1 − 2^−54). A row within 1e-9 of 1 is divided by its exact sum and the verdict is about that
normalised kernel (one line of the report says so); a row further off or a negative entry is an
invalid kernel (exit 2, naming the row). "NOT PRIVATE" thus only ever means the PML constraint fails.

Exit status: 0 private; 1 not private (the output y, the prior vertex
and the exact ratio that break it are printed); 2 bad input or invalid kernel; 3 internal error;
130 interrupted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import json
import math
import sys
from collections import Counter
from fractions import Fraction
from pathlib import Path

from mechdesign.spec.errors import InputError

if TYPE_CHECKING:
    from mechdesign.certify.exact import ExactKernel, Verification


__all__ = ["register", "run_verify", "format_verification"]

EXIT_OK, EXIT_NOT_PRIVATE = 0, 1


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "verify",
        help="check exactly that a kernel file is row-stochastic and (eps,P)-PML",
        description="Check a kernel (CSV, JSON or .npy) exactly in rational arithmetic. "
        "Exit 0: private and row-stochastic; 1: not; 2: bad input.",
    )
    p.add_argument("kernel", help="kernel file: .csv, .json (as 'mechdesign solve --json' writes it) or .npy")
    p.add_argument("--spec", help="YAML spec giving the prior set and epsilon (and N)")
    p.add_argument("--prior-set", help="simplex, min_mass:C, point:P1,P2,... or a mapping '{kind: box, ...}'")
    p.add_argument("--epsilon", help="epsilon in nats: a number or an expression such as log(3)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.set_defaults(func=_cmd_verify)


def _cmd_verify(args) -> int:
    return run_verify(args.kernel, spec=args.spec, prior_set=args.prior_set, epsilon=args.epsilon, as_json=args.json)


def _problem(kernel: ExactKernel, spec, prior_set, epsilon):
    """(prior set, Epsilon) from --spec or from --prior-set and --epsilon, checked against N."""
    from mechdesign.cli.args import parse_epsilon, parse_prior_set
    from mechdesign.spec.models import load_spec

    n = kernel.shape[0]
    if spec is not None:
        if prior_set is not None or epsilon is not None:
            raise InputError("verify: give either --spec or --prior-set with --epsilon, not both")
        from mechdesign.theory.epsilon_requirement import resolve_spec

        s, _ = resolve_spec(load_spec(Path(spec)))  # epsilon: {protect: ...} → the eps design() enforces
        if s.n != n:
            raise InputError(f"verify: the kernel has {n} rows but the spec's alphabet has N = {s.n} symbols")
        return s.prior_set, s.epsilon
    if prior_set is None or epsilon is None:
        raise InputError("verify: needs --spec, or both --prior-set and --epsilon")
    if n < 2:
        raise InputError(f"verify: a kernel needs at least 2 rows (N >= 2), found {n}")
    return parse_prior_set(prior_set, n=n), parse_epsilon(epsilon)


def run_verify(kernel_path: str, spec=None, prior_set=None, epsilon=None, as_json: bool = False, out=None) -> int:
    """Read, check and report; returns the exit status (0 private, 1 not)."""
    from mechdesign.certify.exact import verify_kernel
    from mechdesign.release.kernel_io import read_kernel_normalised

    out = out or sys.stdout
    kernel, normalised = read_kernel_normalised(kernel_path)
    ps, eps = _problem(kernel, spec, prior_set, epsilon)
    result = verify_kernel(kernel, ps, eps)
    extras = _extra_guarantees(kernel, spec)
    if as_json:
        from mechdesign.spec.json_values import json_safe

        data = verification_json(result, eps)
        data["normalised_rows"] = normalised
        if extras:
            data["guarantees"] = [g.to_json() for g in extras]
        out.write(json.dumps(json_safe(data), indent=2) + "\n")
    else:
        out.write(format_verification(result, eps, kernel_path))
        for g in extras:
            out.write(
                f"  {g.constraint} at eps = {g.epsilon_text}: {'holds' if g.feasible else 'FAILS'} "
                f"(exact check of every pair; leakage {g.leakage:.12g} nats)\n"
            )
        if normalised:
            out.write(normalisation_note(normalised) + "\n")
    return EXIT_OK if result.private and all(g.feasible for g in extras) else EXIT_NOT_PRIVATE


def _extra_guarantees(kernel: ExactKernel, spec) -> list:
    """With a spec whose ``privacy`` lists several constraints: the exact check of each. A metric
    constraint is checked against rational lower bounds of e^{eps d}, so a kernel within ~2^-150 relative of
    its boundary may be reported as failing."""
    if spec is None:
        return []
    from mechdesign.certify.guarantees import check_guarantees
    from mechdesign.spec.models import load_spec

    from mechdesign.theory.epsilon_requirement import resolve_spec

    s, _ = resolve_spec(load_spec(Path(spec)))
    return check_guarantees(kernel, s) if s.privacy is not None else []


def normalisation_note(rows: list[int]) -> str:
    """The one line saying that float round-off was removed before the check."""
    shown = ", ".join(map(str, rows[:10])) + (", …" if len(rows) > 10 else "")
    return (
        f"  note: {len(rows)} row(s) ({shown}) summed to 1 only within 1e-9 (float round-off) and were "
        "divided by their exact sums; the verdict is about that normalised kernel"
    )


def _frac_list(prior) -> list[str] | None:
    return None if prior is None else [str(Fraction(p)) for p in prior]


PRIOR_SHOWN = 12
"""Masses of the worst prior vertex written out in the text report; --json lists every one."""


def _prior_text(masses: list[str]) -> str:
    """The worst prior vertex for the text report: every mass up to :data:`PRIOR_SHOWN` symbols; past that, the
    mass most symbols share and the symbols that differ (a vertex of Q_X(c) is c on all symbols but one), or the
    first and last masses, so that N = 3000 does not print 3000 fractions."""
    n = len(masses)
    if n <= PRIOR_SHOWN:
        return "[" + ", ".join(masses) + "]"
    common = Counter(masses).most_common(1)[0][0]
    others = [i for i, v in enumerate(masses) if v != common]
    if len(others) <= PRIOR_SHOWN // 2:
        rest = ", ".join(f"P({i}) = {masses[i]}" for i in others)
        return f"{common} on every symbol" + (f" but {rest}" if rest else "") + f" ({n} symbols)"
    head, tail = ", ".join(masses[:6]), ", ".join(masses[-3:])
    return f"[{head}, …, {tail}] ({n} masses; --json lists them all)"


def _mass_text(mass: str) -> str:
    """One mass of the worst prior vertex: the fraction, or when it is long (5e-324 as a fraction has 325 digits)
    its 17-digit approximation."""
    if len(mass) <= LONG_FRACTION:
        return mass
    return "~" + _approx(Fraction(mass))


def _ratio_str(r, digits: int | None = None) -> str:
    """The ratio exactly (or, when long, approximately); with ``digits``, its approximation is rounded toward 0 to
    that many significant digits (see :func:`apart_digits`), else to 17 digits."""
    if r is None:
        return "none"
    if r == math.inf:
        return "inf"
    exact = str(Fraction(r))
    approx = _approx(r) if digits is None else _decimal_down(Fraction(r), digits)
    if len(exact) > LONG_FRACTION:  # 600 digits from a prior mass of 5e-324: the approximation, --json has it all
        return f"~{approx} (a fraction of {len(exact)} characters; --json gives it exactly)"
    return f"{exact} (~{approx})"


APART_DIGITS_LIMIT = 60
"""Most significant digits shown to tell a violating ratio from the bound it exceeds."""


def apart_digits(above, below) -> int:
    """The fewest significant digits d >= 17 at which ``above`` rounded toward 0 is still larger than ``below``
    rounded away from 0: shown that way, a ratio that breaks e^ε reads as larger than the bound it is compared
    with ("(~2.0000000000000004) > e^eps = 2", never "(~2) > 2"). At most :data:`APART_DIGITS_LIMIT`."""
    above, below = Fraction(above), Fraction(below)
    for d in range(17, APART_DIGITS_LIMIT + 1):
        if Fraction(_decimal_down(above, d)) > Fraction(_decimal_up(below, d)):
            return d
    return APART_DIGITS_LIMIT


LONG_FRACTION = 80
"""A rational longer than this is shown in the text report by its 17-digit approximation (--json: exactly)."""


def _approx(r, digits: int = 17) -> str:
    """A ratio to ``digits`` significant digits (1/5e-324 = 2e323 is beyond the doubles: from the exact value)."""
    from mechdesign.spec.input_rules import shown_number

    try:
        return f"{float(r):.{digits}g}"
    except OverflowError:
        return shown_number(Fraction(r)).removeprefix("about ")


def _violations(result: Verification) -> list[tuple[int, object]]:
    bound = result.check.bound
    return [(y, r) for y, r in enumerate(result.check.ratios) if r is not None and r > bound]


def _decimal_down(q: Fraction, digits: int = 17) -> str:
    """q as a decimal with ``digits`` significant digits, rounded toward 0, so that it is still ≤ q
    (printing E ≤ e^ε rounded to nearest could show a number above e^ε)."""
    return _decimal(q, digits, up=False)


def _decimal_up(q: Fraction, digits: int = 17) -> str:
    """q rounded away from 0 (still ≥ q), for an upper bound U ≥ e^ε."""
    return _decimal(q, digits, up=True)


def _decimal(q: Fraction, digits: int, up: bool) -> str:
    from decimal import Decimal

    q = Fraction(q)
    if q <= 0:
        return str(q)
    e10 = len(str(q.numerator)) - len(str(q.denominator))  # 10^e10 <= q < 10^(e10+1), after adjusting
    while q >= Fraction(10) ** (e10 + 1):
        e10 += 1
    while q < Fraction(10) ** e10:
        e10 -= 1
    k = e10 - digits + 1  # 10^k is the unit of the last of `digits` significant digits
    scaled = q / Fraction(10) ** k
    n = -((-scaled.numerator) // scaled.denominator) if up else scaled.numerator // scaled.denominator
    d = Decimal(f"{n}E{k}").normalize()
    return format(d, "f") if -6 <= d.adjusted() < 21 else str(d)


def verification_json(result: Verification, eps) -> dict:
    c = result.check
    return {
        "private": result.private,
        "decided": result.decided,
        "row_stochastic": c.stochastic,
        "epsilon": eps.value,
        "epsilon_text": eps.text,
        "exp_epsilon_lower_bound": str(c.bound),
        "exp_epsilon_upper_bound": None if result.upper_bound is None else str(result.upper_bound),
        "leakage": c.leakage if math.isfinite(c.leakage) else "inf",
        "worst_output": c.worst_output,
        "worst_prior": _frac_list(c.worst_prior),
        "worst_ratio": None if c.worst_ratio is None else ("inf" if c.worst_ratio == math.inf else str(c.worst_ratio)),
        "violating_outputs": [{"output": y, "ratio": str(r)} for y, r in _violations(result)],
        "rows_not_summing_to_one": [{"row": i, "sum": str(result.row_sums[i])} for i in result.bad_rows[:10]],
        "negative_entries": [{"row": i, "column": j} for i, j in result.negative],
    }


def format_verification(result: Verification, eps, name: str = "kernel") -> str:
    """The human-readable report of :func:`verify_kernel`."""
    c = result.check
    lines = []
    if result.private:
        lines.append(f"{name}: PRIVATE: row-stochastic and (eps,P)-PML at eps = {eps.text} (exact check)")
    else:
        lines.append(
            f"{name}: NOT PRIVATE at eps = {eps.text}"
            + ("" if result.decided else " (undecided: a ratio lies within 2^-2500 of e^eps; reported as not verified)")
        )
    for i in result.bad_rows[:10]:
        lines.append(f"  row {i} sums to {result.row_sums[i]} (~{float(result.row_sums[i]):.17g}), not exactly 1")
    for i, j in result.negative:
        lines.append(f"  row {i}, column {j}: negative entry")
    bound = c.bound
    if bound == result.upper_bound:
        bound_text = f"e^eps = {bound}"
    elif result.upper_bound is None:
        bound_text = (
            f"E = {_decimal_down(bound)} (a rational E <= e^eps; e^eps is past this kernel's ratio cap, "
            "so only zero patterns matter)"
        )
    else:
        bound_text = f"E = {_decimal_down(bound)} (a rational E <= e^eps)"
    # the value a violating ratio is shown against: e^eps itself when it is rational, else its upper bound U
    against = bound if result.upper_bound is None else result.upper_bound
    if c.worst_output is not None:
        y = c.worst_output
        rel = "<=" if c.worst_ratio != math.inf and c.worst_ratio <= bound else ">"
        digits = apart_digits(c.worst_ratio, against) if rel == ">" and c.worst_ratio != math.inf else None
        above = "e^eps" if result.upper_bound is None else "e^eps <= " + _decimal_up(result.upper_bound, digits or 17)
        lines.append(
            f"  worst output y = {y}: max_x K_x(y) / min_P P.K(:,y) = {_ratio_str(c.worst_ratio, digits)} "
            f"{rel} {bound_text if rel == '<=' or bound == result.upper_bound else above}"
        )
        if c.worst_prior is not None:
            lines.append(f"  worst prior vertex P = {_prior_text([_mass_text(v) for v in _frac_list(c.worst_prior)])}")
        leak = c.leakage
        shown = eps.text if len(eps.text) <= 60 else f"{eps.value:.17g}"
        lines.append(
            f"  leakage {leak:.17g} nats {'<=' if rel == '<=' else '>'} eps = {shown}"
            if math.isfinite(leak)
            else "  leakage infinite (an output some prior deems impossible)"
        )
    bad = _violations(result)
    if len(bad) > 1:
        lines.append(
            "  violating outputs: "
            + ", ".join(
                f"y = {y} (ratio {'inf' if r == math.inf else '~' + _decimal_down(Fraction(r), apart_digits(r, against))})"
                for y, r in bad[:20]
            )
        )
    return "\n".join(lines) + "\n"
