"""Set-valued reports (subset selection, unary encoding): the text format and vectorised helpers.

Format: one CSV cell per report, the report's symbols as their indices 0..N−1 in increasing order,
separated by single spaces (``"3 17 42"``; the empty set is the empty cell). Indices, not labels, keep
reports short and unambiguous whatever the labels contain; the mechanism's alphabet (its labels in
order) maps them back.
"""

from __future__ import annotations

import warnings
from typing import Iterable, Sequence

import numpy as np

from mechdesign.mechanisms.base import Reports
from mechdesign.spec.errors import InputError

__all__ = ["format_sets", "parse_sets", "sets_from_rows", "floyd_sample", "set_report_mle"]


def format_sets(reports: Reports) -> list[str]:
    """Each set as its indices separated by spaces."""
    o, p = reports.offsets, reports.positions
    if p.size == 0:
        return [""] * reports.n
    strs = np.array([str(i) for i in range(int(p.max()) + 1)], dtype=object)
    toks = strs[p]
    return [" ".join(toks[o[i] : o[i + 1]]) for i in range(reports.n)]


def parse_sets(cells: Sequence[str], n_symbols: int, sizes: Iterable[int] | None, first_row: int = 1) -> Reports:
    """Reports from cells; raises InputError naming the row of a malformed cell (not integers), an index
    outside [0, N), indices not strictly increasing (a repeated symbol), or a size the mechanism cannot
    produce (``sizes``: the allowed sizes, None for any)."""
    counts = np.fromiter((0 if not c.strip() else c.count(" ") + 1 for c in cells), dtype=np.int64, count=len(cells))
    text = " ".join(c.strip() for c in cells if c.strip())
    flat = None
    if text:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                flat = np.fromstring(text, dtype=np.int64, sep=" ")
            except (ValueError, DeprecationWarning):
                flat = None
    else:
        flat = np.zeros(0, dtype=np.int64)
    if flat is None or flat.size != counts.sum():  # a malformed cell or irregular spacing: row by row
        parts, counts = [], np.zeros(len(cells), dtype=np.int64)
        for r, c in enumerate(cells):
            try:
                row = [int(t) for t in c.split()]
            except ValueError:
                raise InputError(
                    f"row {first_row + r}: malformed report {c[:40]!r}: expected symbol indices separated by spaces"
                ) from None
            parts.extend(row)
            counts[r] = len(row)
        flat = np.array(parts, dtype=np.int64)
    offsets = np.zeros(len(cells) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    if flat.size:
        bad = np.flatnonzero((flat < 0) | (flat >= n_symbols))
        if bad.size:
            r = int(np.searchsorted(offsets, bad[0], side="right")) - 1
            raise InputError(f"row {first_row + r}: symbol index {flat[bad[0]]} outside [0, {n_symbols})")
        step = np.diff(flat)
        inner = np.ones(flat.size - 1, dtype=bool) if flat.size > 1 else np.zeros(0, dtype=bool)
        inner[offsets[1:-1][(offsets[1:-1] > 0) & (offsets[1:-1] < flat.size)] - 1] = False
        bad = np.flatnonzero(inner & (step <= 0))
        if bad.size:
            r = int(np.searchsorted(offsets, bad[0], side="right")) - 1
            raise InputError(
                f"row {first_row + r}: impossible report: symbol indices must be distinct and increasing, "
                f"found {flat[bad[0]]} then {flat[bad[0] + 1]}"
            )
    if sizes is not None:
        allowed = np.array(sorted(set(sizes)), dtype=np.int64)
        ok = np.isin(counts, allowed)
        if not ok.all():
            r = int(np.flatnonzero(~ok)[0])
            raise InputError(
                f"row {first_row + r}: impossible report: a set of {counts[r]} symbols "
                f"(this mechanism reports sets of size {', '.join(map(str, allowed))})"
            )
    return Reports(n=len(cells), offsets=offsets, positions=flat)


def sets_from_rows(rows: list[np.ndarray], order: np.ndarray, n: int) -> Reports:
    """Assemble reports from groups: ``rows[g]`` is a (B_g, d_g) array of sorted sets for the reports
    ``order[g]`` (their positions in the batch)."""
    sizes = np.zeros(n, dtype=np.int64)
    for block, where in zip(rows, order):
        sizes[where] = block.shape[1]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    positions = np.empty(int(offsets[-1]), dtype=np.int64)
    for block, where in zip(rows, order):
        if block.size:
            positions[(offsets[where][:, None] + np.arange(block.shape[1])).ravel()] = block.ravel()
    return Reports(n=n, offsets=offsets, positions=positions)


def floyd_sample(rng, rows: int, m: int, k: int, block_bytes: int = 1 << 23) -> np.ndarray:
    """``rows`` independent uniform k-subsets of [0, m), each sorted: a (rows, k) int64 array.

    Floyd's algorithm (Bentley and Floyd, *Programming Pearls: A sample of brilliance*, CACM 1987), run
    on every row at once: for j = m − k, …, m − 1 draw t uniform in [0, j]; add t, or j when t is already
    chosen. Each step is one exact uniform draw per row, so a row costs O(k) (plus a membership table of
    m bits per row, reused across steps). With k > m / 2 the m − k left out are drawn instead."""
    from mechdesign.mechanisms.exact_random import uniform_below_rows

    out = np.empty((rows, k), dtype=np.int64)
    if k == 0 or rows == 0:
        return out
    complement = k > m // 2
    kk = m - k if complement else k
    batch = max(1, min(rows, block_bytes // max(m, 1)))
    member = np.zeros(batch * m, dtype=bool)  # row r's table is member[r m : (r + 1) m]
    steps = range(m - kk + 1, m + 1)  # bounds j + 1 of the steps j = m − kk, …, m − 1
    for start in range(0, rows, batch):
        b = min(batch, rows - start)
        base = np.arange(b, dtype=np.int64) * m
        # every step's draw t_j uniform in [0, j] at once (the draws do not depend on the table), as offsets
        picks_t = uniform_below_rows(rng, steps, b)
        picks_t += base[None, :]
        for step in range(kk):  # Floyd's step j = m − kk + step: t, or j when t is already chosen
            t = picks_t[step]
            chosen = np.where(member[t], base + (m - kk + step), t)
            member[chosen] = True
            picks_t[step] = chosen
        member[picks_t.ravel()] = False if not complement else member[picks_t.ravel()]
        if complement:
            keep = ~member[: b * m].reshape(b, m)
            out[start : start + b] = np.nonzero(keep)[1].reshape(b, k)
            member[picks_t.ravel()] = False
        else:
            picks = (picks_t - base[None, :]).T
            picks.sort(axis=1)
            out[start : start + b] = picks
    return out


def set_report_mle(reports: Reports, ratios: np.ndarray, n_symbols: int, tol: float = 1e-9, max_iter: int = 10_000):
    """Maximum likelihood of P_X from set-valued reports whose kernel is K_x(S) = G(S) (1 + (r_S − 1) 1{x ∈ S})
    up to a factor free of x (subset selection: r_S = R of the size |S|; unary encoding: r = p(1 − q)/((1 − p) q)).
    Then P(S) ∝ 1 + (r_S − 1) p(S), p(S) = Σ_{x∈S} p_x, and the log-likelihood is
    L(p) = Σ_i log(1 + (r_i − 1) p(S_i)) + const. EM (the iterative Bayesian update, Agrawal and Aggarwal 2001):

        p_x ← p_x g_x,   g_x = (1/n) Σ_i (1 + (r_i − 1) 1{x ∈ S_i}) / (1 + (r_i − 1) p(S_i)),

    with Σ_x p_x g_x = 1. L is concave, so L* − L(p) ≤ n (max_x g_x − 1): EM stops when that gap bound is
    ≤ ``tol`` (per report). Each map costs O(Σ_i |S_i|). ``ratios`` holds r_i per report.
    Returns (p, iterations, gap)."""
    o, pos = reports.offsets, reports.positions
    n = reports.n
    owner = np.repeat(np.arange(n), np.diff(o))
    rm1 = np.asarray(ratios, dtype=float) - 1.0

    def step(p):  # (EM map F(p), gap bound max g − 1, log-likelihood L(p))
        mass = np.bincount(owner, weights=p[pos], minlength=n)
        w = 1.0 / (1.0 + rm1 * mass)
        g = (w.sum() + np.bincount(pos, weights=(rm1 * w)[owner], minlength=n_symbols)) / n
        nxt = p * g
        return nxt / nxt.sum(), float(g.max() - 1.0), float(-np.log(w).sum())

    # EM accelerated by SQUAREM (Varadhan and Roland 2008, scheme S3), keeping the plain EM point whenever the
    # extrapolation leaves the simplex or lowers L, so L never decreases
    p = np.full(n_symbols, 1.0 / n_symbols)
    gap = np.inf
    for it in range(1, max_iter + 1):
        p1, gap, L0 = step(p)
        if gap <= tol:
            return p, it, gap
        p2, _, L1 = step(p1)
        r, v = p1 - p, p2 - 2 * p1 + p
        nv = float(np.sqrt(v @ v))
        candidate = p2
        if nv > 0:
            alpha = min(-1.0, -float(np.sqrt(r @ r)) / nv)
            trial = p - 2 * alpha * r + alpha * alpha * v
            if trial.min() >= 0:
                trial = step(trial / trial.sum())[0]  # one stabilising EM map
                if step(trial)[2] >= step(p2)[2]:  # L(trial) >= L(p2)
                    candidate = trial
        p = candidate
    return p, max_iter, gap
