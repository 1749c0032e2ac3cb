"""Human-readable reports (rich tables rendered to plain text)."""
from __future__ import annotations

import io
import math

from rich.console import Console
from rich.table import Table

from mechdesign.design import DesignResult

MAX_SHOWN = 12


def _fmt(v, digits: int = 10) -> str:
    if v is None:
        return "-"
    v = float(v)
    if not math.isfinite(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.{digits}g}"


def _kernel_table(result: DesignResult) -> Table:
    K = result.kernel
    labels = result.spec.labels
    n, m = K.shape
    rows = list(range(n)) if n <= MAX_SHOWN else list(range(MAX_SHOWN // 2)) + [None] + list(range(n - MAX_SHOWN // 2, n))
    cols = list(range(m)) if m <= MAX_SHOWN else list(range(MAX_SHOWN // 2)) + [None] + list(range(m - MAX_SHOWN // 2, m))
    table = Table(title=f"kernel K (rows: secret x, columns: output y), {n} x {m}", show_lines=False)
    table.add_column("x \\ y", justify="right")
    for y in cols:
        table.add_column("..." if y is None else str(y), justify="right")
    for x in rows:
        if x is None:
            table.add_row("...", *["..."] * len(cols))
            continue
        table.add_row(labels[x], *["..." if y is None else f"{K[x, y]:.6f}" for y in cols])
    return table


def render_result(result: DesignResult, width: int = 110) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None, highlight=False)
    spec = result.spec
    ps = spec.prior_set
    console.print(f"mechdesign: {spec.objective.kind} over (eps, {ps.kind})-PML kernels, "
                  f"N = {spec.n}, M = {spec.m}, eps = {spec.epsilon.text} = {result.epsilon:.10g} nats")
    console.print(f"status: {result.status.value}" + ("  (certified)" if result.is_ok else ""))
    if result.kernel is not None:
        console.print(_kernel_table(result))
    cert = result.certificate
    summary = Table(show_header=False, box=None)
    summary.add_column(justify="left")
    summary.add_column(justify="left")
    summary.add_row("objective", _fmt(result.objective, 12))
    if cert is not None:
        summary.add_row("exact privacy check", "passed" if cert.feasible else "FAILED")
        if result.spec.privacy is not None:   # several constraints (issue 16): one row each
            for i, g in enumerate(cert.guarantees):
                summary.add_row(f"  privacy[{i}]: {g.constraint}",
                                f"eps = {g.epsilon_text}: leakage {_fmt(g.leakage, 12)} nats, "
                                f"{'holds' if g.feasible else 'FAILS'}{', binds' if g.binding else ''}")
        summary.add_row("leakage (sup over priors, max over y)", f"{_fmt(cert.leakage, 12)} nats (eps = {result.epsilon:.12g})")
        summary.add_row("dual bound", _fmt(cert.dual_bound, 12))
        summary.add_row("optimality gap", _fmt(cert.gap, 3))
        if cert.repair_weight:
            summary.add_row("repair (constant-kernel weight)", _fmt(cert.repair_weight, 3))
        if spec.solver.denominator_bits < 52 or (cert.rounding_cost or 0) > 1e-12:
            summary.add_row(f"rounding to the 2^-{spec.solver.denominator_bits} grid",
                            f"costs {_fmt(cert.rounding_cost, 3)} (LP objective {_fmt(cert.lp_objective, 12)})")
        if cert.closed_form is not None:
            cf = cert.closed_form
            summary.add_row("closed form", f"{cf.name} = {cf.value:.12g} (difference {cf.difference:.2e})")
    s = result.solve
    summary.add_row("solver", f"{s.solver} ({s.backend}, {s.method}), {s.lps} LP(s), {s.rows} rows x {s.columns} columns, "
                              f"{s.nonzeros} nonzeros, {s.iterations} iterations")
    summary.add_row("time", f"{s.total_seconds:.3f} s (compile {s.compile_seconds:.3f}, solve {s.seconds:.3f}, "
                            f"certify {s.certify_seconds:.3f})")
    console.print(summary)
    if cert is not None and getattr(cert, "bounds", None):
        table = Table(title="bounds of the papers that apply to this kernel")
        for col, just in [("bound", "left"), ("value", "right"), ("measured", "right"), ("holds", "center")]:
            table.add_column(col, justify=just)
        for b in cert.bounds:
            table.add_row(str(b.get("name")), _fmt(b.get("value"), 8), _fmt(b.get("measured"), 8),
                          "yes" if b.get("holds") else "NO")
        console.print(table)
    return buf.getvalue()
