"""Human-readable reports (rich tables rendered to plain text)."""

from __future__ import annotations

import io
import math
import sys

from rich.console import Console
from rich.table import Table

from mechdesign.design import DesignResult
from mechdesign.lp.rounding import float_or_inf

MAX_SHOWN = 12


def _fmt(v, digits: int = 10) -> str:
    if v is None:
        return "-"
    v = float(v)
    if not math.isfinite(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.{digits}g}"


SIGNIFICANT = 4
"""Significant digits of the kernel cells in the report (the exact kernel is in --json / -o)."""


def _elide(k: int, keep: int) -> list[int | None]:
    """Indices 0..k-1, or the first and last keep//2 around a None (shown as "…")."""
    if k <= keep:
        return list(range(k))
    head = max(keep // 2, 1)
    return list(range(head)) + [None] + list(range(k - max(keep - head, 1), k))


def _cell(v: float) -> str:
    return "0" if v == 0 else f"{v:.{SIGNIFICANT}g}"


def _kernel_table(result: DesignResult, width: int) -> tuple[Table, bool]:
    """The kernel as a table that fits ``width`` columns; True when rows or columns were elided."""
    from mechdesign.objectives.registry import objective_rules
    from mechdesign.spec.notation import output_labels

    K = result.kernel
    labels = [str(v) for v in result.spec.labels]
    n, m = K.shape
    out_labels = list(output_labels(labels, m, objective_rules(result.spec).outputs_estimate_x))
    cell = max(len(_cell(float(v))) for v in K.ravel()[:10000]) if K.size else 1
    label_w = min(max(len(v) for v in labels), 16)
    per_col = max(cell, max(len(v) for v in out_labels[:MAX_SHOWN]), 1) + 3
    keep_cols = max(2, min(m, (width - label_w - 8) // per_col))
    rows, cols = _elide(n, 2 * MAX_SHOWN), _elide(m, keep_cols)
    table = Table(show_lines=False)
    table.add_column("x \\ y", justify="right", no_wrap=True, max_width=16)
    for y in cols:
        table.add_column("…" if y is None else out_labels[y], justify="right", no_wrap=True)
    for x in rows:
        if x is None:
            table.add_row("…", *["…"] * len(cols))
            continue
        table.add_row(labels[x], *["…" if y is None else _cell(float(K[x, y])) for y in cols])
    return table, (None in rows or None in cols)


def design_accuracy(result: DesignResult, n_reports: int = 10_000) -> dict | None:
    """Exact accuracy of the inversion estimator of P_X from n reports through the designed kernel
    (:func:`mechdesign.theory.accuracy.accuracy_summary`), under the spec's point prior, else the
    objective's prior when it lists masses, else uniform (:func:`mechdesign.theory.estimation.accuracy_prior`).
    None without a kernel."""
    from mechdesign.theory.accuracy import accuracy_summary
    from mechdesign.theory.estimation import accuracy_prior

    if result.kernel is None:
        return None
    return accuracy_summary(result.kernel, accuracy_prior(result.spec), n_reports)


def design_mle_accuracy(result: DesignResult, n_reports: int = 10_000) -> dict | None:
    """The MLE's asymptotic accuracy (what ``estimate`` runs) at the same prior as :func:`design_accuracy`
    (:func:`mechdesign.theory.estimation.mle_accuracy_summary`); None without a kernel."""
    from mechdesign.theory.estimation import accuracy_prior, mle_accuracy_summary

    if result.kernel is None:
        return None
    return mle_accuracy_summary(result.kernel, accuracy_prior(result.spec), n_reports)


def _eps_words(result: DesignResult) -> str:
    """ε as the spec wrote it, with its value in nats when the text is not that value already."""
    spec = result.spec
    eps_value = f"{result.epsilon:.10g}"
    # an ε beyond the double range (1e400, exp(800)) is held as the largest double: "=" would be false
    relation = ">=" if result.epsilon >= sys.float_info.max else "="
    if spec.epsilon.text.strip() == eps_value:
        return f"eps = {eps_value} nats"
    return f"eps = {spec.epsilon.text} ({relation} {eps_value} nats)"


def _output_size_words(result: DesignResult) -> str:
    """M of the emitted kernel (unused outputs are dropped), with the spec's when it differs."""
    spec = result.spec
    m_text = f"M = {spec.m}"
    if result.kernel is not None and result.kernel.shape[1] != spec.m:
        m_text = f"M = {result.kernel.shape[1]} (spec: {spec.output_size})"
    if getattr(result, "mechanism", None) is not None and hasattr(result.mechanism, "sizes"):
        m_text = "M = " + " + ".join(f"C({spec.n}, {d})" for d in result.mechanism.sizes) + " (structured)"
    return m_text


def _print_header(console: Console, result: DesignResult) -> None:
    """The problem line, the ε requirement it came from (if any) and the status line."""
    from mechdesign.spec.notation import prior_set_notation

    spec = result.spec
    console.print(
        f"mechdesign: {spec.objective.kind} over (eps, P)-PML kernels with P = {prior_set_notation(spec.prior_set)}, "
        f"N = {spec.n}, {_output_size_words(result)}, {_eps_words(result)}"
    )
    req = getattr(result, "epsilon_requirement", None)
    if req is not None:  # epsilon: {protect: ...} or {accuracy: ...}
        asked = ", ".join(f"{k} {v}" if v is not True else k for k, v in req.requirement.items())
        what = "accuracy" if hasattr(req, "epsilon_low") else "protect"
        console.print(f"eps chosen from the requirement {what} {asked}: {req.theorem}; {req.explanation}")
    console.print(f"status: {result.status.value}" + ("  (certified)" if result.is_ok else ""))


def _print_mechanism(console: Console, result: DesignResult, width: int) -> None:
    """The kernel table (elided to ``width``), or the structured mechanism's one-line description."""
    if result.kernel is not None:
        table, elided = _kernel_table(result, width)
        console.print(
            f"kernel K (rows: secret x, columns: output y), {result.kernel.shape[0]} x {result.kernel.shape[1]}, "
            f"{SIGNIFICANT} significant digits"
        )
        console.print(table)
        if elided:
            console.print(
                "(rows/columns elided with …; the full kernel: mechdesign solve SPEC -o kernel.csv "
                "(or .npy, .json), or --json)"
            )
    mech = getattr(result, "mechanism", None)
    if mech is not None:  # the structured optimum: no explicit kernel fits the output limits
        console.print(
            f"structured mechanism: {mech.family} ({mech.parameters_summary()}), N = {mech.n_symbols}, "
            "never written as a kernel; certificate: its family's closed-form check in exact rationals "
            "(save it with -o FILE.mechanism.json for mechdesign privatize --mechanism-file)"
        )


def _constraint_rows(summary: Table, result: DesignResult, cert) -> None:
    """One row per stated privacy constraint and per other stated constraint: its exact verdict."""
    if result.spec.privacy is not None:  # several constraints: one row each
        for i, g in enumerate(cert.guarantees):
            summary.add_row(
                f"  privacy[{i}]: {g.constraint}",
                f"eps = {g.epsilon_text}: leakage {_fmt(g.leakage, 12)} nats, "
                f"{'holds' if g.feasible else 'FAILS'}{', binds' if g.binding else ''}",
            )
    for c in cert.side_constraints:  # every other stated constraint: its exact verdict
        summary.add_row(
            f"{c.field} (exact check)",
            f"{c.constraint}: {_fmt(float_or_inf(c.value), 12)} <= {_fmt(float_or_inf(c.limit), 12)} "
            + ("holds" if c.feasible else "FAILS")
            + (", binds" if c.binding else "")
            + (f" ({c.repair})" if c.repair else ""),
        )


def _certificate_rows(summary: Table, result: DesignResult, cert) -> None:
    """The certificate's rows: privacy verdicts, leakage, dual bound, gap, repair, rounding, closed form."""
    summary.add_row("exact privacy check", "passed" if cert.private else "FAILED")
    _constraint_rows(summary, result, cert)
    summary.add_row(
        "leakage (sup over priors, max over y)", f"{_fmt(cert.leakage, 12)} nats (eps = {result.epsilon:.12g})"
    )
    mech = getattr(result, "mechanism", None)
    if mech is not None:
        mc = mech.certificate()
        summary.add_row(
            "structured certificate",
            f"worst PML ratio {float(mc.worst_ratio):.12g} <= E = {float(mc.bound):.12g} <= e^eps "
            + ("holds" if mc.feasible else "FAILS"),
        )
    summary.add_row("dual bound", _fmt(cert.dual_bound, 12))
    summary.add_row(
        "optimality gap",
        _fmt(cert.gap, 3)
        + ("" if cert.grid_floor is None else f" (within the 2^-52 grid's floor {_fmt(cert.grid_floor, 3)})"),
    )
    if cert.repair_weight:
        summary.add_row("repair (constant-kernel weight)", _fmt(cert.repair_weight, 3))
    bits = result.spec.solver.denominator_bits
    if bits < 52 or (cert.rounding_cost or 0) > 1e-12:
        summary.add_row(
            f"rounding to the 2^-{bits} grid",
            f"costs {_fmt(cert.rounding_cost, 3)} (LP objective {_fmt(cert.lp_objective, 12)})",
        )
    if cert.closed_form is not None:
        cf = cert.closed_form
        summary.add_row("closed form", f"{cf.name} = {cf.value:.12g} (difference {cf.difference:.2e})")


def _solve_rows(summary: Table, result: DesignResult) -> None:
    """The engine (with the attempts before it), solver sizes and the time split."""
    s = result.solve
    if s.engine:
        before = [f"{a.engine} ({a.status.value})" for a in s.attempts[:-1]]
        summary.add_row("engine", s.engine + (f", after {', '.join(before)}" if before else ""))
    summary.add_row(
        "solver",
        f"{s.solver} ({s.backend}, {s.method}), {s.lps} LP(s), {s.rows} rows x {s.columns} columns, "
        f"{s.nonzeros} nonzeros, {s.iterations} iterations",
    )
    other = s.total_seconds - s.compile_seconds - s.seconds - s.certify_seconds
    summary.add_row(
        "time",
        f"{s.total_seconds:.3f} s (compile {s.compile_seconds:.3f}, solve {s.seconds:.3f}, "
        f"certify {s.certify_seconds:.3f}"
        + (
            f", other {other:.3f}: spec checks, ray listing, pricing and fallbacks"
            if other > 0.01 * s.total_seconds and other > 0.005
            else ""
        )
        + ")",
    )


def _accuracy_rows(summary: Table, result: DesignResult, accuracy: dict | None, mle_accuracy: dict | None) -> None:
    """The MLE's and the inversion's accuracy, and the comparison with the textbook ε-LDP oracles."""
    if mle_accuracy is not None:
        from mechdesign.theory.estimation import describe_mle_accuracy

        for i, line in enumerate(describe_mle_accuracy(mle_accuracy)):
            summary.add_row("MLE accuracy (asymptotic)" if i == 0 else "", line)
    if accuracy is not None:
        from mechdesign.theory.accuracy import describe_accuracy

        summary.add_row("inversion accuracy (exact)", describe_accuracy(accuracy))
    from mechdesign.objectives.registry import objective_rules

    cmp = objective_rules(result.spec).textbook_comparison() if result.objective is not None else None
    if cmp is not None:
        ss = cmp["subset_selection"]
        summary.add_row(
            "beside textbook eps-LDP oracles",
            f"U = {result.objective:.6g} (n x MLE mean squared error); k-RR {cmp['k_rr']:.6g}"
            + ("" if ss is None else f"; best subset selection (k = {ss['k']}) {ss['U']:.6g}"),
        )


def _bounds_table(cert) -> Table | None:
    """The papers' bounds that apply to this kernel, with the measured value; None when there are none."""
    if cert is None or not getattr(cert, "bounds", None):
        return None
    table = Table(title="bounds of the papers that apply to this kernel")
    for col, just in [("bound", "left"), ("value", "right"), ("measured", "right"), ("holds", "center")]:
        table.add_column(col, justify=just)
    for b in cert.bounds:
        table.add_row(
            str(b.get("name")),
            _fmt(b.get("value"), 8),
            _fmt(b.get("measured"), 8),
            "yes" if b.get("holds") else "NO",
        )
    return table


def render_result(
    result: DesignResult, width: int | None = None, accuracy: dict | None = None, mle_accuracy: dict | None = None
) -> str:
    """The text report; ``width`` defaults to the terminal's (``COLUMNS``), at least 60."""
    import shutil

    width = max(60, width or shutil.get_terminal_size((110, 24)).columns)
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None, highlight=False)
    _print_header(console, result)
    _print_mechanism(console, result, width)
    cert = result.certificate
    summary = Table(show_header=False, box=None)
    summary.add_column(justify="left")
    summary.add_column(justify="left")
    summary.add_row("objective", _fmt(result.objective, 12))
    if cert is not None:
        _certificate_rows(summary, result, cert)
    _solve_rows(summary, result)
    _accuracy_rows(summary, result, accuracy, mle_accuracy)
    console.print(summary)
    bounds = _bounds_table(cert)
    if bounds is not None:
        console.print(bounds)
    return buf.getvalue()
