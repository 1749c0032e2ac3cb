"""Short and notebook displays of a :class:`~mechdesign.design.DesignResult`, a
:class:`~mechdesign.design.Certificate`, a :class:`~mechdesign.release.mechanism.Mechanism` and an
:class:`~mechdesign.release.estimate.EstimateResult`.

``repr(x)`` is short and readable: numbers as decimals (an exact rational such as the e^ε lower bound
is shown to 12 significant digits, with ``float(...)`` of the attribute giving the double), never a
raw object array. ``x._repr_html_()`` (what Jupyter shows) is a small table; a kernel is a table whose
cells are shaded by value (a heatmap), elided with "…" past 20 rows or columns, with the input labels
on the rows and the output labels (:func:`mechdesign.spec.notation.output_labels`) on the columns, as
the command line shows them. The objects are duck-typed here, so this module imports nothing from the
design or release layers.
"""

from __future__ import annotations

import html
import math

from mechdesign.lp.rounding import float_or_inf

__all__ = [
    "result_repr",
    "result_html",
    "certificate_repr",
    "certificate_html",
    "mechanism_repr",
    "mechanism_html",
    "estimate_repr",
    "estimate_html",
    "MAX_HTML_CELLS",
]

MAX_HTML_CELLS = 20


def _g(v, digits: int = 6) -> str:
    if v is None:
        return "None"
    v = float(v)
    return f"{v:.{digits}g}" if math.isfinite(v) else ("inf" if v > 0 else "-inf")


def result_repr(result) -> str:
    cert = result.certificate
    shape = "no kernel" if result.kernel is None else f"{result.kernel.shape[0]}x{result.kernel.shape[1]}"
    mech = getattr(result, "mechanism", None)
    if mech is not None:
        shape = f"none, mechanism={mech.family} ({mech.parameters_summary()})"
    private = "" if cert is None else (", private (exact check)" if cert.private else ", NOT private")
    failing = [] if cert is None else [c.field for c in cert.side_constraints if not c.feasible]
    if failing:
        private += ", FAILS " + ", ".join(failing)
    return (
        f"DesignResult(status={result.status.value!r}, objective={_g(result.objective, 10)}, "
        f"gap={_g(None if cert is None else cert.gap, 3)}, kernel={shape}, "
        f"epsilon={result.spec.epsilon.text!r}{private})"
    )


def _indices(k: int) -> list[int | None]:
    if k <= MAX_HTML_CELLS:
        return list(range(k))
    half = MAX_HTML_CELLS // 2
    return list(range(half)) + [None] + list(range(k - half, k))


def result_html(result) -> str:
    esc = html.escape
    cert = result.certificate
    rows = [
        ("status", result.status.value),
        ("objective", _g(result.objective, 12)),
        ("epsilon", f"{result.spec.epsilon.text} = {result.epsilon:.10g} nats"),
    ]
    mech = getattr(result, "mechanism", None)
    if mech is not None:
        rows.append(("structured mechanism", f"{mech.family} ({mech.parameters_summary()}): result.mechanism"))
    if cert is not None:
        rows += [
            ("exact privacy check", "passed" if cert.private else "FAILED"),
            *[
                (
                    c.field,
                    f"{c.constraint}: {_g(float_or_inf(c.value), 12)} vs {_g(float_or_inf(c.limit), 12)}, "
                    + ("holds" if c.feasible else "FAILS"),
                )
                for c in cert.side_constraints
            ],
            ("dual bound", _g(cert.dual_bound, 12)),
            ("optimality gap", _g(cert.gap, 3)),
            ("leakage", f"{_g(cert.leakage, 12)} nats"),
        ]
    parts = ["<div><b>mechdesign DesignResult</b>", "<table>"]
    parts += [f"<tr><th style='text-align:left'>{esc(k)}</th><td>{esc(str(v))}</td></tr>" for k, v in rows]
    parts.append("</table>")
    K = result.kernel
    if K is not None:
        from mechdesign.objectives.registry import objective_rules
        from mechdesign.spec.notation import output_labels

        n, m = K.shape
        labels = [str(v) for v in result.spec.labels]
        outputs = output_labels(labels, m, objective_rules(result.spec).outputs_estimate_x)
        parts.append(
            f"<p>kernel K, {n} x {m} (rows: secret x, columns: output y; full kernel: "
            "<code>result.kernel</code>, exact: <code>result.exact_kernel</code>)</p>"
        )
        parts.append(_kernel_html(K, labels, outputs))
    parts.append("</div>")
    return "\n".join(parts)


def _kernel_html(K, labels, outputs) -> str:
    """The kernel as a heatmap table: rows labelled by the inputs, columns by the outputs."""
    esc = html.escape
    n, m = K.shape
    parts = ["<table style='border-collapse:collapse;font-family:monospace'>"]
    cols = _indices(m)
    parts.append("<tr><th></th>" + "".join(f"<th>{'…' if y is None else esc(outputs[y])}</th>" for y in cols) + "</tr>")
    for x in _indices(n):
        if x is None:
            parts.append("<tr><th>…</th>" + "<td>…</td>" * len(cols) + "</tr>")
            continue
        cells = []
        for y in cols:
            if y is None:
                cells.append("<td>…</td>")
                continue
            v = float(K[x, y])
            shade = int(255 - 155 * min(max(v, 0.0), 1.0))
            cells.append(f"<td style='background:rgb({shade},{shade},255);padding:2px 6px'>{v:.4g}</td>")
        parts.append(f"<tr><th>{esc(str(labels[x]))}</th>" + "".join(cells) + "</tr>")
    parts.append("</table>")
    return "\n".join(parts)


def _rational(v, digits: int = 12) -> str:
    """An exact rational (Fraction or int) as a decimal: never its 48-digit numerator and denominator."""
    if v is None:
        return "None"
    f = float(v)
    exact = f == v if not isinstance(v, float) else True
    return f"{f:.{digits}g}" + ("" if exact else " (exact rational)")


def _list(labels, k: int = 6) -> str:
    labels = list(labels)
    return ", ".join(labels[:k]) + (f", … ({len(labels)} in all)" if len(labels) > k else "")


def _table_html(title: str, rows) -> str:
    esc = html.escape
    parts = [f"<div><b>{esc(title)}</b>", "<table>"]
    parts += [f"<tr><th style='text-align:left'>{esc(k)}</th><td>{esc(str(v))}</td></tr>" for k, v in rows]
    parts.append("</table></div>")
    return "\n".join(parts)


# ------------------------------------------------------------------------ certificate
def _certificate_rows(cert) -> list[tuple[str, str]]:
    rows = [
        ("exact privacy check", "passed" if getattr(cert, "private", cert.feasible) else "FAILED"),
        ("leakage", f"{_g(cert.leakage, 12)} nats"),
        ("e^eps lower bound used", _rational(cert.exp_epsilon_lower_bound)),
        ("worst ratio", _rational(cert.worst_ratio)),
        ("dual bound", _g(cert.dual_bound, 12)),
        ("optimality gap", _g(cert.gap, 3)),
        ("LP objective", _g(cert.lp_objective, 12)),
        ("repair weight", _rational(cert.repair_weight, 6)),
    ]
    closed = getattr(cert, "closed_form", None)
    if closed is not None:
        rows.append(("closed form", f"{getattr(closed, 'name', closed)} = {_g(getattr(closed, 'value', None), 12)}"))
    guarantees = getattr(cert, "guarantees", None) or []
    if guarantees:
        held = sum(1 for g in guarantees if getattr(g, "feasible", False))
        rows.append(("privacy constraints", f"{held} of {len(guarantees)} hold"))
    for c in getattr(cert, "side_constraints", None) or []:  # every other stated constraint: its exact verdict
        rows.append(
            (
                c.field,
                f"{c.constraint}: {_g(float_or_inf(c.value), 12)} vs {_g(float_or_inf(c.limit), 12)}, "
                + ("holds" if c.feasible else "FAILS"),
            )
        )
    return rows


def certificate_repr(cert) -> str:
    return "Certificate(" + ", ".join(f"{k}={v}" for k, v in _certificate_rows(cert)) + ")"


def certificate_html(cert) -> str:
    return _table_html("mechdesign Certificate", _certificate_rows(cert))


# ------------------------------------------------------------------------ mechanism
def mechanism_repr(mech) -> str:
    n, m = mech.shape
    K = mech.kernel.to_float()
    head = (
        f"Mechanism({n} x {m}, inputs: {_list(mech.labels)}; outputs: {_list(mech.output_labels)}; "
        f"exact rows over D = {_denominator(mech.kernel.denominator)})"
    )
    if n > 8 or m > 8:
        return head
    width = max(len(x) for x in mech.output_labels + mech.labels + ("0.0000",))
    lines = [head, " " * (width + 2) + " ".join(f"{y:>{width}}" for y in mech.output_labels)]
    for x, lab in enumerate(mech.labels):
        lines.append(f"  {lab:>{width}}" + "".join(f" {K[x, y]:>{width}.4g}" for y in range(m)))
    return "\n".join(lines)


def _denominator(d: int) -> str:
    if d > 1 and d & (d - 1) == 0:
        return f"2^{d.bit_length() - 1}"
    return str(d) if len(str(d)) <= 15 else f"{float(d):.6g}"


def mechanism_html(mech) -> str:
    n, m = mech.shape
    return "\n".join(
        [
            "<div><b>mechdesign Mechanism</b>",
            f"<p>{n} inputs x {m} outputs, exact rows over D = {_denominator(mech.kernel.denominator)} "
            "(rows: input x, columns: output label y; exact: <code>mech.kernel</code>)</p>",
            _kernel_html(mech.kernel.to_float(), list(mech.labels), list(mech.output_labels)),
            "</div>",
        ]
    )


# ------------------------------------------------------------------------ estimate
def _estimate_rows(res) -> list[list[str]]:
    identified = res.is_identified()

    def fmt(arr, i):
        if arr is None:
            return "-"
        v = float(arr[i])
        return f"{v:.6f}" if math.isfinite(v) else "-"

    return [
        [
            str(lab),
            f"{float(res.estimate[i]):.6f}",
            fmt(res.standard_error, i),
            fmt(res.lower, i),
            fmt(res.upper, i),
            "" if identified[i] else "not identified",
        ]
        for i, lab in enumerate(res.labels)
    ]


def _estimate_title(res) -> str:
    level = f"{100 * res.confidence:g}%" + (" simultaneous" if res.simultaneous else "")
    return f"estimate of P_X by {res.method} from n = {res.n} reports, {level} intervals"


ESTIMATE_COLUMNS = ("label", "estimate", "standard error", "lower", "upper", "note")


def estimate_repr(res) -> str:
    rows = _estimate_rows(res)
    shown = rows if len(rows) <= 12 else rows[:6] + [["…"] * 6] + rows[-5:]
    note = any(r[5] for r in rows)
    cols = ESTIMATE_COLUMNS if note else ESTIMATE_COLUMNS[:5]
    widths = [max(len(c), *(len(r[j]) for r in shown)) for j, c in enumerate(cols)]
    lines = [f"EstimateResult: {_estimate_title(res)}"]
    lines.append("  " + "  ".join(c.rjust(w) if j else c.ljust(w) for j, (c, w) in enumerate(zip(cols, widths))))
    for r in shown:
        lines.append("  " + "  ".join((r[j].rjust(w) if j else r[j].ljust(w)) for j, w in enumerate(widths)))
    lines.append(f"  uncertainty: {res.uncertainty}")
    lines += [f"  warning: {w}" for w in res.warnings]
    return "\n".join(lines)


def estimate_html(res) -> str:
    esc = html.escape
    rows = _estimate_rows(res)
    note = any(r[5] for r in rows)
    cols = ESTIMATE_COLUMNS if note else ESTIMATE_COLUMNS[:5]
    parts = [f"<div><b>mechdesign EstimateResult</b>: {esc(_estimate_title(res))}", "<table>"]
    parts.append("<tr>" + "".join(f"<th>{esc(c)}</th>" for c in cols) + "</tr>")
    idx = list(range(len(rows))) if len(rows) <= 2 * MAX_HTML_CELLS else _indices(len(rows))
    for i in idx:
        r = ["…"] * len(cols) if i is None else rows[i][: len(cols)]
        parts.append("<tr>" + "".join(f"<td>{esc(v)}</td>" for v in r) + "</tr>")
    parts.append("</table>")
    parts.append(f"<p>uncertainty: {esc(res.uncertainty)}</p>")
    parts += [f"<p><b>warning</b>: {esc(w)}</p>" for w in res.warnings]
    parts.append("</div>")
    return "\n".join(parts)
