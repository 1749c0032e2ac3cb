"""Short and notebook displays of a :class:`~mechdesign.design.DesignResult`.

``repr(result)`` is one line: status, objective, certified gap, shape, ε. ``result._repr_html_()``
(what Jupyter shows) is the certificate as a small table and the kernel as a table whose cells are
shaded by value (a heatmap), elided with "…" past 20 rows or columns. The result is duck-typed
here, so this module imports nothing from the design layer.
"""

from __future__ import annotations

import html
import math

__all__ = ["result_repr", "result_html", "MAX_HTML_CELLS"]

MAX_HTML_CELLS = 20


def _g(v, digits: int = 6) -> str:
    if v is None:
        return "None"
    v = float(v)
    return f"{v:.{digits}g}" if math.isfinite(v) else ("inf" if v > 0 else "-inf")


def result_repr(result) -> str:
    cert = result.certificate
    shape = "no kernel" if result.kernel is None else f"{result.kernel.shape[0]}x{result.kernel.shape[1]}"
    private = "" if cert is None else (", private (exact check)" if cert.feasible else ", NOT private")
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
    if cert is not None:
        rows += [
            ("exact privacy check", "passed" if cert.feasible else "FAILED"),
            ("dual bound", _g(cert.dual_bound, 12)),
            ("optimality gap", _g(cert.gap, 3)),
            ("leakage", f"{_g(cert.leakage, 12)} nats"),
        ]
    parts = ["<div><b>mechdesign DesignResult</b>", "<table>"]
    parts += [f"<tr><th style='text-align:left'>{esc(k)}</th><td>{esc(str(v))}</td></tr>" for k, v in rows]
    parts.append("</table>")
    K = result.kernel
    if K is not None:
        n, m = K.shape
        labels = list(result.spec.labels)
        parts.append(
            f"<p>kernel K, {n} x {m} (rows: secret x, columns: output y; full kernel: "
            "<code>result.kernel</code>, exact: <code>result.exact_kernel</code>)</p>"
        )
        parts.append("<table style='border-collapse:collapse;font-family:monospace'>")
        cols = _indices(m)
        parts.append("<tr><th></th>" + "".join(f"<th>{'…' if y is None else y}</th>" for y in cols) + "</tr>")
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
    parts.append("</div>")
    return "\n".join(parts)
