"""From released outputs back to P_X: inversion, projected inversion and maximum likelihood (EM).

The n released outputs of a mechanism K (N × M, rows = secrets) are summarised by their counts
c ∈ ℕ^M (decoding never touches single records); q̂ = c / n is the empirical output distribution.

* ``inversion``: the least-squares solution of Kᵀ p = q̂, p̂ = (Kᵀ)⁺ q̂ (unbiased when rank K = N;
  refused otherwise). Its covariance B (diag q − q qᵀ) Bᵀ / n (:mod:`mechdesign.theory.accuracy`) is
  estimated by plugging in q̂; intervals are p̂_x ± z·se_x.
* ``projected``: the inversion estimate mapped onto the simplex, by Euclidean projection
  (``projection="euclidean"``: argmin_{p ∈ Δ} ‖p − p̂‖₂, by sorting, Held–Wolfe–Crowder 1974 /
  Duchi et al. 2008) or by clipping negative masses to 0 and renormalising (``projection="clip"``).
* ``mle`` (default): argmax_{p ∈ Δ} L(p) = Σ_y c_y log (Kᵀ p)_y by EM, the iterative Bayesian update
  p_x ← p_x g_x(p), g_x(p) = (1/n) Σ_y c_y K_xy / (Kᵀ p)_y (Agrawal–Aggarwal 2001; libqif's
  ``iterative_bayesian_update``), accelerated by SQUAREM (Varadhan–Roland 2008, scheme S3) with a
  fall-back to the plain EM step whenever the extrapolation would lower L, so L never decreases.
  The stopping rule is a certificate: L is concave and Σ_x p_x g_x(p) = 1, so for every p̃ ∈ Δ,
  L(p̃) ≤ L(p) + ∇L(p)·(p̃ − p) = L(p) + n(Σ_x p̃_x g_x − 1) ≤ L(p) + n(max_x g_x − 1); EM stops when
  the gap bound max_x g_x(p) − 1 ≤ ``tol``, i.e. (L* − L(p))/n ≤ tol. With rank K < N the maximiser is
  not unique (any direction in the null space of Kᵀ leaves L unchanged); EM still converges to a
  maximiser, and a warning says so.

Uncertainty for ``mle`` and ``projected`` is a parametric bootstrap: B count vectors are drawn from
Multinomial(n, Kᵀ p̂) with a seeded generator, the estimator is rerun on each (batched), and the
standard error is the bootstrap standard deviation; intervals are the bootstrap percentiles. A
simultaneous band (every symbol at once, at the stated level) uses Bonferroni: level 1 − α/N per symbol.

Identifiability (rank K < N). The outputs determine only q = KᵀP, so the mass P_x is identified exactly when
e_x lies in the column space of K (then P_x = wᵀq for K w = e_x); otherwise the maximisers of L form the
face {P ∈ Δ : KᵀP = Kᵀp̂} and every value of P_x in [lo(q̂*), hi(q̂*)], q̂* = Kᵀp̂, fits the reports
equally well, where lo(q) = min{P_x : P ≥ 0, KᵀP = q} and hi(q) = max{…} (two small LPs per mass, one
HiGHS model re-solved with new costs; Σ P = 1 follows from Σ_y (KᵀP)_y = Σ_x P_x). The interval is this range
widened by the sampling uncertainty of q̂ (a partial-identification interval in the sense of Imbens and
Manski, Econometrica 2004): a dual solution λ of the lo-LP (K λ ≤ e_x) gives, for the true P,
λᵀq = λᵀKᵀP = (Kλ)ᵀP ≤ e_xᵀP = P_x, and λᵀq̂ (q̂ = c/n) is an unbiased estimate of λᵀq with variance
(Σ_y λ_y² q_y − (λᵀq)²)/n, so the lower end min(lo(q̂*), λᵀq̂) − z·sd is a lower confidence bound for P_x
at level 1 − α/2 whatever the true P in the face (likewise the upper end from the hi-LP's dual), up to
the normal approximation and λ's dependence on the data (both vanish as n grows). So the interval covers
P_x with probability at least about 1 − α (tests/release/test_estimate.py checks it by simulation on
rank-deficient designs). When rank K < N every mass gets its interval this way (for an identified mass
lo = hi, and the construction stays valid at masses near 0, where bootstrap percentiles undercover);
a mass that is not identified has no standard error and is marked "not identified".
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from mechdesign.release.blas_threads import single_threaded_blas
from mechdesign.release.input_files import CSV_FIELD_LIMIT, check_label, csv_rows
from mechdesign.spec.errors import InputError
from mechdesign.theory.accuracy import inversion_matrix, inversion_variances, kernel_rank

__all__ = [
    "EstimateResult",
    "estimate_distribution",
    "counts_from_labels",
    "count_csv_column",
    "read_counts_csv",
    "project_to_simplex",
    "clip_and_renormalise",
    "em_mle",
    "METHODS",
]

METHODS = ("mle", "inversion", "projected")
PROJECTIONS = ("euclidean", "clip")
_WARMUP_GAP, _WARMUP_MAPS = 1e-3, 30  # EM before the Newton polish (see em_mle)


class NotIdentifiableWarning(UserWarning):
    """rank K < N: the MLE is one of many maximisers (P_X is not identifiable from the outputs)."""


# ------------------------------------------------------------------ result
@dataclass(frozen=True)
class EstimateResult:
    """An estimate of P_X with standard errors and (pointwise or simultaneous) intervals."""

    method: str
    labels: tuple[str, ...]
    estimate: np.ndarray
    standard_error: np.ndarray | None
    lower: np.ndarray | None
    upper: np.ndarray | None
    confidence: float
    simultaneous: bool
    n: int
    """Number of reports (the total count)."""
    uncertainty: str
    """How the standard errors were obtained: 'asymptotic', 'parametric bootstrap (B = …)' or 'none'."""
    diagnostics: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    identified: np.ndarray | None = None
    """Per symbol: True when the reports determine P_x (always, when rank K = N); a mass that is not
    identified has the range of the maximisers widened by sampling uncertainty as its interval, and no
    standard error (None: all identified)."""

    def __repr__(self) -> str:
        from mechdesign.display import estimate_repr

        return estimate_repr(self)

    def _repr_html_(self) -> str:
        from mechdesign.display import estimate_html

        return estimate_html(self)

    def is_identified(self) -> np.ndarray:
        """Boolean per symbol (all True when rank K = N)."""
        if self.identified is None:
            return np.ones(len(self.labels), dtype=bool)
        return np.asarray(self.identified, dtype=bool)

    def to_frame(self):
        """A pandas DataFrame with columns label, estimate, standard_error, lower, upper, identified."""
        import pandas as pd

        nan = np.full(len(self.labels), np.nan)
        return pd.DataFrame(
            {
                "label": list(self.labels),
                "estimate": self.estimate,
                "standard_error": nan if self.standard_error is None else self.standard_error,
                "lower": nan if self.lower is None else self.lower,
                "upper": nan if self.upper is None else self.upper,
                "identified": self.is_identified(),
            }
        )

    def to_json(self) -> dict[str, Any]:
        def arr(v):
            return None if v is None else [float(x) if math.isfinite(x) else None for x in v]

        return {
            "method": self.method,
            "n": self.n,
            "confidence": self.confidence,
            "simultaneous": self.simultaneous,
            "uncertainty": self.uncertainty,
            "labels": list(self.labels),
            "estimate": arr(self.estimate),
            "standard_error": arr(self.standard_error),
            "lower": arr(self.lower),
            "upper": arr(self.upper),
            "identified": [bool(v) for v in self.is_identified()],
            "diagnostics": {k: _jsonable(v) for k, v in self.diagnostics.items()},
            "warnings": list(self.warnings),
        }


def _jsonable(v):
    if isinstance(v, (np.floating, float)):
        v = float(v)
        return v if math.isfinite(v) else None
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.bool_):
        return bool(v)
    return v


# ---------------------------------------------------------------- counting
def counts_from_labels(values, output_labels: Sequence[str]) -> np.ndarray:
    """Counts of each output (by ``str(value)``, as ``privatize`` writes them) in a sequence of labels."""
    index = {lab: j for j, lab in enumerate(output_labels)}
    codes = np.empty(len(values), dtype=np.int64)
    for pos, v in enumerate(values):
        j = index.get(str(v))
        if j is None:
            check_label(str(v), f"row {pos}")
            raise InputError(
                f"row {pos}: unknown output label {str(v)!r}: the mechanism's outputs are {_preview(output_labels)}"
            )
        codes[pos] = j
    return np.bincount(codes, minlength=len(output_labels))


def count_csv_column(
    path: str | Path, column: str, output_labels: Sequence[str], block_bytes: int = 1 << 20
) -> np.ndarray:
    """Counts of each output label in one column of a CSV file (header row required), streamed in blocks
    of ``block_bytes`` with pyarrow: each block's column is
    dictionary-encoded, its few distinct strings are matched to output labels, and the codes are counted
    with ``np.bincount``. Memory stays bounded whatever the file size: with 1 MiB blocks pyarrow's peak
    allocation is 39 MiB for 10^7 and for 3·10^7 records (with 16 MiB blocks the reader runs ahead of
    the consumer and the peak grows with the file: 156 and 380 MiB; benchmarks/estimate_scale.py).
    Raises :class:`InputError` for a missing file or column, an empty input, or a
    label the mechanism cannot output (naming the row: the r-th record after the header)."""
    path = Path(path)
    index = {lab: j for j, lab in enumerate(output_labels)}
    counts = np.zeros(len(output_labels), dtype=np.int64)
    rows_before = 0
    for col in csv_column_blocks(path, column, block_bytes):
        enc = col.dictionary_encode()
        words = [str(w) for w in enc.dictionary.to_pylist()]
        longest = max(words, key=len)
        if len(longest) > CSV_FIELD_LIMIT:  # the rule of every CSV read (the csv module's limit)
            row = rows_before + 1 + int(np.argmax(np.asarray(enc.indices) == words.index(longest)))
            raise InputError(
                f"{path}: malformed CSV at row {row}: a field is longer than {CSV_FIELD_LIMIT} characters "
                "(the csv module's limit)"
            )
        mapping = np.array([index.get(w, -1) for w in words], dtype=np.int64)
        codes = enc.indices.to_numpy(zero_copy_only=False)
        if (mapping < 0).any():
            bad = np.flatnonzero(mapping[codes] < 0)[0]
            check_label(words[codes[bad]], f"{path}: row {rows_before + bad + 1}, column {column!r}")
            raise InputError(
                f"{path}: row {rows_before + bad + 1}: unknown output label {words[codes[bad]]!r} "
                f"in column {column!r}: the mechanism's outputs are {_preview(output_labels)}"
            )
        counts += np.bincount(mapping[codes], minlength=len(output_labels))
        rows_before += len(col)
    if rows_before == 0:
        raise InputError(f"{path}: empty input: no records below the header")
    return counts


def csv_column_blocks(path: str | Path, column: str, block_bytes: int):
    """The cells of one column of a CSV file (header row required; tab-separated for ``.tsv``) as pyarrow string
    arrays, one per block of ``block_bytes`` read by pyarrow's streaming reader (empty blocks skipped). The header
    is read under the rules of every CSV read (:func:`_read_header`); a missing file or column, or a CSV that
    pyarrow cannot parse, is an :class:`InputError` naming the file."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    path = Path(path)
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    header = _read_header(path, delimiter)
    if column not in header:
        raise InputError(f"--column: no column {column!r} in {path} (columns: {', '.join(header)})")
    try:
        reader = pacsv.open_csv(
            path,
            read_options=pacsv.ReadOptions(block_size=block_bytes, encoding="utf8"),
            parse_options=pacsv.ParseOptions(delimiter=delimiter),
            convert_options=pacsv.ConvertOptions(
                include_columns=[column],
                column_types={column: pa.string()},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
        for batch in reader:
            col = batch.column(0)
            if len(col):
                yield col
    except pa.ArrowInvalid as exc:
        raise InputError(f"{path}: malformed CSV: {str(exc).splitlines()[0]}") from None


def _read_header(path: Path, delimiter: str) -> list[str]:
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            first = fh.readline()
    except FileNotFoundError:
        raise InputError(f"--input: file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"--input: cannot read {path}: {exc}") from None
    if not first.strip():
        raise InputError(f"{path}: empty input: no header row and no records")
    return csv_rows([first], str(path), delimiter)[0]


def read_counts_csv(path: str | Path, output_labels: Sequence[str]) -> np.ndarray:
    """Pre-aggregated counts: a CSV of (label, count) rows, with an optional header row (a first row whose
    count is not a number). Repeated labels are added up. Every count must be a non-negative integer;
    every label one the mechanism can output."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"--counts: file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"--counts: cannot read {path}: {exc}") from None
    rows = [
        r
        for r in csv_rows(text.splitlines(), str(path), "\t" if path.suffix.lower() == ".tsv" else ",")
        if r and any(v.strip() for v in r)
    ]
    if rows and len(rows[0]) >= 2 and not _is_number(rows[0][1]):
        rows = rows[1:]
    if not rows:
        raise InputError(f"{path}: empty input: no (label, count) rows")
    index = {lab: j for j, lab in enumerate(output_labels)}
    counts = np.zeros(len(output_labels), dtype=np.int64)
    for r, row in enumerate(rows, start=1):
        if len(row) != 2:
            raise InputError(
                f"{path}: row {r}: expected exactly two fields (label, count), found {len(row)}"
                + (" (extra columns are not read: remove them)" if len(row) > 2 else "")
            )
        label, raw = row[0], row[1].strip()
        j = index.get(label)
        if j is None:
            check_label(label, f"{path}: row {r}")
            raise InputError(
                f"{path}: row {r}: unknown output label {label!r}: the mechanism's outputs are "
                f"{_preview(output_labels)}"
            )
        counts[j] += _parse_count(raw, f"{path}: row {r} (label {label!r})")
        if counts[j] > MAX_COUNT:
            raise InputError(
                f"{path}: row {r} (label {label!r}): counts of one label add up to more than {MAX_COUNT:.0e}"
            )
    return counts


MAX_COUNT = 10**15
"""Largest count, and largest total of counts: every count and sum stays an exact integer in doubles (< 2^53)."""
MAX_BOOTSTRAP_COUNTS = 50_000_000
"""Largest B·M of the parametric bootstrap (its B × M count vectors: 400 MB of int64)."""


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _parse_count(raw: str, where: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        try:
            f = float(raw)
        except ValueError:
            raise InputError(f"{where}: count must be a non-negative integer, found {raw!r}") from None
        if not math.isfinite(f) or f != int(f):
            raise InputError(f"{where}: count must be a non-negative integer, found {raw!r}") from None
        value = int(f)
    if value < 0:
        raise InputError(f"{where}: count must be a non-negative integer, found {raw!r}")
    if value > MAX_COUNT:
        raise InputError(f"{where}: count must be at most {MAX_COUNT:.0e} (exact in doubles), found {raw!r}")
    return value


def check_counts(K: np.ndarray, counts, output_labels: Sequence[str]) -> np.ndarray:
    """Counts as int64 of length M: non-negative integers, not all zero, and none on an output the
    mechanism never produces (a zero column of K)."""
    c = np.asarray(counts)
    m = K.shape[1]
    if c.shape != (m,):
        raise InputError(f"counts: expected M = {m} counts (one per output), found shape {c.shape}")
    if c.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(c) | (c != np.round(c)))
        if bad.size:
            raise InputError(
                f"counts: output {output_labels[bad[0]]!r}: count must be a non-negative integer, found {c[bad[0]]!r}"
            )
    elif c.dtype.kind not in "iub":
        raise InputError(f"counts: must be integers, found dtype {c.dtype}")
    if c.dtype.kind in "iuf" and (c > MAX_COUNT).any():
        j = int(np.flatnonzero(c > MAX_COUNT)[0])
        raise InputError(f"counts: output {output_labels[j]!r}: count must be at most {MAX_COUNT:.0e}, found {c[j]}")
    c = c.astype(np.int64)
    if c.sum() > MAX_COUNT:
        raise InputError(
            f"counts: the total must be at most {MAX_COUNT:.0e} reports (exact in doubles), found {c.sum()}"
        )
    if (c < 0).any():
        j = int(np.flatnonzero(c < 0)[0])
        raise InputError(f"counts: output {output_labels[j]!r}: count must be a non-negative integer, found {c[j]}")
    if c.sum() == 0:
        raise InputError("counts: empty input: all counts are 0 (no reports)")
    impossible = np.flatnonzero((K.sum(axis=0) == 0) & (c > 0))
    if impossible.size:
        j = int(impossible[0])
        raise InputError(
            f"output label {output_labels[j]!r}: the mechanism cannot produce it (column {j} of K "
            f"is zero), yet it has count {c[j]}"
        )
    return c


# -------------------------------------------------------------- estimators
def project_to_simplex(v) -> np.ndarray:
    """Euclidean projection of each row of ``v`` onto the probability simplex {p ≥ 0, Σ p = 1}:
    p = max(v − τ, 0) with τ chosen so Σ p = 1 (sort-based; Held, Wolfe, Crowder 1974; Duchi et al. 2008)."""
    v = np.atleast_2d(np.asarray(v, dtype=float))
    u = -np.sort(-v, axis=1)
    css = np.cumsum(u, axis=1) - 1.0
    k = np.arange(1, v.shape[1] + 1)
    cond = u - css / k > 0
    rho = v.shape[1] - 1 - np.argmax(cond[:, ::-1], axis=1)
    tau = css[np.arange(v.shape[0]), rho] / (rho + 1)
    return np.maximum(v - tau[:, None], 0.0)


def clip_and_renormalise(v) -> np.ndarray:
    """Each row of ``v`` with negative entries set to 0, divided by its sum (uniform if nothing is left)."""
    v = np.maximum(np.atleast_2d(np.asarray(v, dtype=float)), 0.0)
    s = v.sum(axis=1, keepdims=True)
    n = v.shape[1]
    return np.where(s > 0, v / np.where(s > 0, s, 1.0), 1.0 / n)


def _loglik(K, C, P) -> np.ndarray:
    Q = P @ K
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(C > 0, C * np.log(np.where(C > 0, Q, 1.0)), 0.0)
    return terms.sum(axis=1)


def _em_step(K, KT, C, nrep, P):
    """One EM update for every row: returns (F(P), g(P)) with g_x = (1/n) Σ_y c_y K_xy / q_y."""
    Q = P @ K
    with np.errstate(divide="ignore", invalid="ignore"):
        R = np.where(C > 0, C / np.where(Q > 0, Q, np.inf), 0.0)
    G = (R @ KT) / nrep[:, None]
    F = P * G
    F /= F.sum(axis=1, keepdims=True)  # Σ F = 1 in exact arithmetic; removes round-off drift
    return F, G


@dataclass(frozen=True)
class EMResult:
    p: np.ndarray
    loglik: np.ndarray
    iterations: np.ndarray
    """EM iterations (each SQUAREM cycle counts its 2 or 3 EM maps)."""
    newton_iterations: np.ndarray
    gap: np.ndarray
    """max_x g_x − 1 at the returned p: a certified bound on (L* − L(p)) / n."""
    converged: np.ndarray


def _squarem(K, KT, C, nrep, P, tol, max_iter, iters, gap):
    """Batched EM with SQUAREM-S3 on the rows of P (in place) until gap ≤ tol or ``max_iter`` EM maps."""
    active = np.arange(C.shape[0])
    while active.size:
        Pa, Ca, na = P[active], C[active], nrep[active]
        F1, G0 = _em_step(K, KT, Ca, na, Pa)
        g = G0.max(axis=1) - 1.0
        gap[active] = g
        done = (g <= tol) | (iters[active] >= max_iter)
        if done.any():
            keep = ~done
            active, Pa, Ca, na, F1 = active[keep], Pa[keep], Ca[keep], na[keep], F1[keep]
            if not active.size:
                break
        F2, _ = _em_step(K, KT, Ca, na, F1)
        r = F1 - Pa
        v = F2 - 2.0 * F1 + Pa
        rn, vn = np.linalg.norm(r, axis=1), np.linalg.norm(v, axis=1)
        alpha = np.where(vn > 0, -rn / np.where(vn > 0, vn, 1.0), -1.0)
        alpha = np.minimum(alpha, -1.0)
        Px = Pa - 2.0 * alpha[:, None] * r + (alpha**2)[:, None] * v
        ok = (Px >= 0).all(axis=1) & np.isfinite(Px).all(axis=1)
        Px = np.where(ok[:, None], Px, F2)
        Px /= Px.sum(axis=1, keepdims=True)
        F3, _ = _em_step(K, KT, Ca, na, Px)
        L3, L2 = _loglik(K, Ca, F3), _loglik(K, Ca, F2)
        better = ok & np.isfinite(L3) & (L3 >= L2)
        P[active] = np.where(better[:, None], F3, F2)
        iters[active] += np.where(better, 3, 2)


def _newton_active_set(K, c, p, tol, max_iter=60):
    """Polish one MLE by Newton's method on the face {p_x = 0, x ∉ S} of the simplex (S the support).

    Maximise L(p) = Σ_y c_y log q_y, q = Kᵀp, subject to Σ_{x∈S} p_x = 1: with H = K_S diag(c/q²) K_Sᵀ
    (minus the Hessian) and ∇ = n g_S, the step d solves [[H, 1], [1ᵀ, 0]] [d; μ] = [∇; 0] (an ascent
    direction: ∇·d = dᵀHd ≥ 0), by Cholesky: d = H⁻¹(∇ − μ1), μ = 1ᵀH⁻¹∇ / 1ᵀH⁻¹1. The new point is
    max(p + t d, 0) renormalised for t = 1, 1/2, … until L does not decrease (up to rounding, 1e-13 |L|);
    coordinates that reach 0 leave S, and a zero coordinate with g_x > 1 + tol (a violated KKT condition)
    joins S. Stops when max_x g_x − 1 ≤ tol.
    Returns (p, iterations, gap) or None when H is singular (K not of full rank on S)."""
    from scipy.linalg import cho_factor, cho_solve
    from scipy.linalg.blas import dsyrk

    obs = c > 0
    A = K[:, obs]
    co = c[obs].astype(float)
    n = co.sum()
    p = p.copy()

    def stats(p):
        q = p @ A
        if (q <= 0).any():
            return None
        return q, float(co @ np.log(q)), (A @ (co / q)) / n

    first = stats(p)
    if first is None:  # an observed output has probability 0 at p (a warm start with zeros): leave it to EM
        return None
    q, L, g = first
    support = p > 0
    for it in range(max_iter):
        gap = float(g.max() - 1.0)
        if gap <= tol:
            return p, it, gap
        support |= g > 1.0 + tol
        idx = np.flatnonzero(support)
        As = A[idx]
        H = dsyrk(1.0, As * (np.sqrt(co) / q))  # upper triangle of K_S diag(c/q²) K_Sᵀ
        try:
            factor = cho_factor(H, lower=False, check_finite=False)
        except np.linalg.LinAlgError:
            # rank K_S < |S| (a kernel that does not identify P): L is flat along the null space of
            # K_Sᵀ, and ∇ and 1 (= K_S 1) lie in the column space of K_S, so a ridge δI (δ = 1e-10 of the
            # mean diagonal) gives the minimum-norm Newton step up to O(δ); the arc search keeps L from
            # decreasing and the stopping rule is the same certified gap
            delta = 1e-10 * max(float(np.trace(H)) / idx.size, np.finfo(float).tiny)
            try:
                factor = cho_factor(H + delta * np.eye(idx.size), lower=False, check_finite=False)
            except np.linalg.LinAlgError:
                return None
        u = cho_solve(factor, n * g[idx], check_finite=False)
        w = cho_solve(factor, np.ones(idx.size), check_finite=False)
        d = u - (u.sum() / w.sum()) * w
        if not np.all(np.isfinite(d)):
            return None
        # projected arc search (Bertsekas 1982): p(t) = max(p + t d, 0) renormalised, t = 1, 1/2, ...;
        # masses that reach 0 leave S together; accept the first t that does not lower L
        t = 1.0
        while True:
            trial = p.copy()
            trial[idx] = np.maximum(p[idx] + t * d, 0.0)
            trial /= trial.sum()
            st = stats(trial)
            if st is not None and st[1] >= L - 1e-13 * abs(L):
                break
            t *= 0.5
            if t < 1e-10:
                return p, it, gap
        p = trial
        q, L, g = st
        support = p > 0
    return p, max_iter, float(g.max() - 1.0)


@single_threaded_blas()
def em_mle(
    K, counts, tol: float = 1e-10, max_iter: int = 100_000, p0=None, accelerate: bool = True, polish: bool = True
) -> EMResult:
    """Maximum likelihood over the simplex for each row of ``counts`` (a batch: B × M, or one vector).

    EM (iterative Bayesian update) from ``p0`` (default uniform; must be > 0 where the MLE may be > 0),
    with SQUAREM-S3 extrapolation when ``accelerate``: from p₀, p₁ = F(p₀), p₂ = F(p₁), r = p₁ − p₀,
    v = p₂ − 2p₁ + p₀, α = −‖r‖/‖v‖ ≤ −1, p' = p₀ − 2αr + α²v, then one stabilising EM step F(p').
    The extrapolated point is kept only if it is a distribution and its log-likelihood is at least L(p₂);
    otherwise the plain EM point p₂ is used, so L is non-decreasing.

    EM converges slowly when the MLE has masses at 0 or K is noisy (its rate is the fraction of
    missing information), so with ``polish`` EM runs to a gap of 1e-3 (at most 30 maps) and an
    active-set Newton method (:func:`_newton_active_set`, L non-decreasing too) finishes it (a batch of
    several rows, the bootstrap, warms up batched and polishes row by row); rows
    where Newton fails (singular Hessian: rank-deficient K) continue with EM. Every row stops when
    max_x g_x(p) − 1 ≤ tol (a bound on (L* − L(p))/n, see the module docstring) or after ``max_iter`` maps."""
    K = np.ascontiguousarray(K, dtype=float)
    KT = np.ascontiguousarray(K.T)
    C = np.atleast_2d(np.asarray(counts, dtype=float))
    b, m = C.shape
    n = K.shape[0]
    nrep = C.sum(axis=1)
    P = np.full((b, n), 1.0 / n) if p0 is None else np.array(np.atleast_2d(p0), dtype=float, copy=True)
    if P.shape[0] == 1 and b > 1:
        P = np.repeat(P, b, axis=0)
    iters = np.zeros(b, dtype=np.int64)
    newton = np.zeros(b, dtype=np.int64)
    gap = np.full(b, np.inf)
    if not (accelerate or polish):
        _plain_em(K, KT, C, nrep, P, tol, max_iter, iters, gap)
    elif not polish:
        _squarem(K, KT, C, nrep, P, tol, max_iter, iters, gap)
    else:
        # every row (one estimate or a bootstrap batch) warms up by batched SQUAREM and is polished by
        # Newton: batched SQUAREM to tol (at most 500 maps) left every bootstrap row at N = 300 and
        # N = 1000 to the polish anyway, after 60% of the time (benchmarks/results/tools_scaling.md)
        _squarem(K, KT, C, nrep, P, max(tol, _WARMUP_GAP), min(max_iter, _WARMUP_MAPS), iters, gap)
        rest = []
        for i in np.flatnonzero(gap > tol):
            out = _newton_active_set(K, C[i], P[i], tol)
            if out is None:
                rest.append(i)
                continue
            P[i], newton[i], gap[i] = out
            if gap[i] > tol:
                rest.append(i)
        if rest:
            rest = np.array(rest)
            Pr, itr, gr = P[rest], iters[rest], gap[rest]
            # EM cannot move a mass at 0: rows with zeros (a warm start on a face) go on from > 0 everywhere
            zeros = (Pr <= 0).any(axis=1)
            if zeros.any():
                floored = np.maximum(Pr[zeros], 1e-3 / n)
                Pr[zeros] = floored / floored.sum(axis=1, keepdims=True)
            _squarem(K, KT, C[rest], nrep[rest], Pr, tol, max_iter, itr, gr)
            P[rest], iters[rest], gap[rest] = Pr, itr, gr
    L = _loglik(K, C, P)
    return EMResult(p=P, loglik=L, iterations=iters, newton_iterations=newton, gap=gap, converged=gap <= tol)


def _plain_em(K, KT, C, nrep, P, tol, max_iter, iters, gap):
    """Batched plain EM (no acceleration), in place."""
    active = np.arange(C.shape[0])
    while active.size:
        F1, G0 = _em_step(K, KT, C[active], nrep[active], P[active])
        g = G0.max(axis=1) - 1.0
        gap[active] = g
        keep = ~((g <= tol) | (iters[active] >= max_iter))
        active, F1 = active[keep], F1[keep]
        P[active] = F1
        iters[active] += 1


IDENTIFIED_TOLERANCE = 1e-9
"""P_x counts as identified when e_x is this close (squared distance) to the column space of K."""


def identified_masses(K) -> np.ndarray:
    """Per symbol x, whether P_x is a function of q = KᵀP: e_x in the column space of K, i.e.
    1 − ‖U_r[x]‖² ≤ tol for an orthonormal basis U_r of that space (SVD, numpy's rank tolerance)."""
    K = np.asarray(K, dtype=float)
    U, sv, _ = np.linalg.svd(K, full_matrices=False)
    tol = sv.max(initial=0.0) * max(K.shape) * np.finfo(float).eps
    U = U[:, sv > tol]
    return 1.0 - np.einsum("ij,ij->i", U, U) <= IDENTIFIED_TOLERANCE


class _MassRange:
    """min / max of P_x over {P ≥ 0 : KᵀP = q} for each x, by one HiGHS model re-solved with a new cost
    (the simplex warm-started from the last basis). :meth:`extreme` returns (value, λ) with λ from the
    LP's dual: Kλ ≤ e_x for the min, Kλ ≥ e_x for the max, so λᵀq' ≤ min (resp. ≥ max) at every q'
    (weak duality; module docstring)."""

    def __init__(self, K: np.ndarray, q: np.ndarray):
        import highspy

        from mechdesign.lp.highs import new_highs
        from mechdesign.lp.threads import highs_threads

        n, m = K.shape
        h = new_highs()
        h.setOptionValue("threads", highs_threads())
        h.setOptionValue("presolve", "off")  # one model, many costs: keep the basis between solves
        h.setOptionValue("primal_feasibility_tolerance", 1e-10)
        h.setOptionValue("dual_feasibility_tolerance", 1e-10)
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = n, m
        lp.col_cost_ = np.zeros(n)
        lp.col_lower_, lp.col_upper_ = np.zeros(n), np.full(n, highspy.kHighsInf)
        lp.row_lower_ = lp.row_upper_ = np.asarray(q, dtype=float)
        A = np.ascontiguousarray(K)  # column x of the LP (P_x) is row x of K: row-wise storage of Kᵀ's columns
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        nz = A != 0
        lp.a_matrix_.start_ = np.r_[0, np.cumsum(nz.sum(axis=1))].astype(np.int32)
        lp.a_matrix_.index_ = np.nonzero(nz)[1].astype(np.int32)
        lp.a_matrix_.value_ = A[nz]
        h.passModel(lp)
        self.h, self.n, self.highspy = h, n, highspy

    def extreme(self, x: int, sign: float):
        h = self.h
        cost = np.zeros(self.n)
        cost[x] = sign
        h.changeColsCost(self.n, np.arange(self.n, dtype=np.int32), cost)
        h.run()
        if h.getModelStatus() != self.highspy.HighsModelStatus.kOptimal:
            return None
        sol = h.getSolution()
        if not sol.dual_valid:
            return None
        return sign * float(h.getInfo().objective_function_value), sign * np.asarray(sol.row_dual, dtype=float)


def identification_intervals(K, p, counts, z: float, masses) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For each x in ``masses``: the range [lo, hi] of P_x over the maximisers {P ∈ Δ : KᵀP = Kᵀp} and that
    range widened by z sampling standard deviations of the dual functionals λᵀq̂ (module docstring).
    Returns (lo, hi, lower, upper) for those masses, clipped to [0, 1]."""
    K = np.asarray(K, dtype=float)
    c = np.asarray(counts, dtype=float)
    n = c.sum()
    qhat = c / n
    qfit = K.T @ p
    ranges = _MassRange(K, qfit)
    lo, hi, lower, upper = (np.zeros(len(masses)) for _ in range(4))
    for k, x in enumerate(masses):
        ends = []
        for sign in (1.0, -1.0):
            out = ranges.extreme(int(x), sign)
            if out is None:  # no dual: the widest honest answer
                ends.append((0.0, 0.0) if sign > 0 else (1.0, 1.0))
                continue
            value, lam = out
            centre = float(lam @ qhat)
            sd = math.sqrt(max(float((lam * lam) @ qfit) - float(lam @ qfit) ** 2, 0.0) / n)
            widened = min(value, centre) - z * sd if sign > 0 else max(value, centre) + z * sd
            ends.append((value, widened))
        (lo[k], lower[k]), (hi[k], upper[k]) = ends
    clip = lambda v: np.clip(v, 0.0, 1.0)  # noqa: E731
    return clip(lo), clip(hi), clip(lower), clip(upper)


def _point_estimates(K, C, method: str, projection: str, B=None, tol=1e-10, max_iter=100_000, p0=None):
    """Estimates for a batch of count rows C (B × M); returns (P, EMResult or None)."""
    if method == "mle":
        res = em_mle(K, C, tol=tol, max_iter=max_iter, p0=p0)
        return res.p, res
    Qhat = C / C.sum(axis=1, keepdims=True)
    raw = Qhat @ B.T
    if method == "inversion":
        return raw, None
    return (project_to_simplex(raw) if projection == "euclidean" else clip_and_renormalise(raw)), None


def _check_estimate_options(
    method: str, projection: str, confidence: float, bootstrap: int, m: int, tol: float
) -> None:
    """InputError naming the option when ``method``, ``projection``, ``confidence``, ``bootstrap`` or ``tol``
    breaks its rule."""
    if method not in METHODS:
        raise InputError(f"--method: must be one of {', '.join(METHODS)}, found {method!r}")
    if projection not in PROJECTIONS:
        raise InputError(f"--projection: must be one of {', '.join(PROJECTIONS)}, found {projection!r}")
    if not (isinstance(confidence, (int, float)) and 0 < confidence < 1):
        raise InputError(f"--confidence: must lie in (0, 1), found {confidence}")
    if isinstance(bootstrap, bool) or int(bootstrap) != bootstrap or bootstrap < 0:
        raise InputError(f"--bootstrap: must be an integer >= 0, found {bootstrap}")
    if bootstrap * m > MAX_BOOTSTRAP_COUNTS:
        raise InputError(
            f"--bootstrap: B x M must be at most {MAX_BOOTSTRAP_COUNTS:.0e} (the resampled count vectors are held "
            f"in memory), found B = {bootstrap} with M = {m}"
        )
    if not (tol > 0):
        raise InputError(f"--tol: must be > 0, found {tol}")


def _linear_inverse(K: np.ndarray, method: str, rank: int) -> np.ndarray | None:
    """The inversion matrix B (B K^T = I) for ``inversion`` and ``projected``; None for ``mle``.
    InputError when K has rank < N."""
    if method not in ("inversion", "projected"):
        return None
    try:
        return inversion_matrix(K)
    except ValueError:
        raise InputError(
            f"--method {method}: the kernel has rank {rank} < N = {K.shape[0]}, so K^T p = q has no "
            "unique solution (P_X is not identifiable from the outputs); use --method mle"
        ) from None


def _identified_or_none(
    K: np.ndarray, labels: tuple[str, ...], method: str, rank: int, diagnostics: dict, notes: list[str]
) -> np.ndarray | None:
    """For mle on a kernel of rank < N: which masses the outputs identify (warning about the others,
    recorded in ``notes`` and ``diagnostics``); None otherwise."""
    n_sym = K.shape[0]
    if not (method == "mle" and rank < n_sym):
        return None
    identified = identified_masses(K)
    missing = [labels[x] for x in np.flatnonzero(~identified)]
    msg = (
        f"the kernel has rank {rank} < N = {n_sym}, so P_X is not identifiable from the outputs: the "
        f"likelihood is flat along the null space of K^T and the reports do not identify the masses of "
        f"{_preview(missing)}; their intervals hold every value compatible with the maximisers, widened "
        "by sampling uncertainty"
    )
    # stacklevel 4: this helper, estimate_distribution, its BLAS-thread wrapper, then the caller
    warnings.warn(msg, NotIdentifiableWarning, stacklevel=4)
    notes.append(msg)
    diagnostics["not_identified"] = missing
    return identified


def _point_diagnostics(
    K: np.ndarray,
    c: np.ndarray,
    p: np.ndarray,
    em,
    method: str,
    projection: str,
    B: np.ndarray | None,
    tol: float,
    diagnostics: dict,
    notes: list[str],
) -> None:
    """The point estimate's diagnostics: EM's log-likelihood, iterations and gap (warning when it did not
    converge), else the linear estimator's residual ||K^T p - c/n|| and, projected, how far it moved."""
    nrep = int(c.sum())
    if em is not None:
        diagnostics.update(
            loglik=float(em.loglik[0]),
            iterations=int(em.iterations[0]),
            newton_iterations=int(em.newton_iterations[0]),
            tolerance=tol,
            gap=float(em.gap[0]),
            converged=bool(em.converged[0]),
        )
        if not em.converged[0]:
            msg = (
                f"EM stopped after {int(em.iterations[0])} iterations with gap {em.gap[0]:.3g} > tol {tol:g}; "
                "raise max_iter"
            )
            # stacklevel 4: this helper, estimate_distribution, its BLAS-thread wrapper, then the caller
            warnings.warn(msg, RuntimeWarning, stacklevel=4)
            notes.append(msg)
    else:
        diagnostics["residual"] = float(np.linalg.norm(K.T @ p - c / nrep))
        if method == "projected":
            diagnostics["projection"] = projection
            diagnostics["moved"] = float(np.linalg.norm(p - (c / nrep) @ B.T))


def _bootstrap_intervals(
    K: np.ndarray,
    p: np.ndarray,
    nrep: int,
    a: float,
    method: str,
    projection: str,
    B: np.ndarray | None,
    bootstrap: int,
    seed: int | None,
    simultaneous: bool,
    tol: float,
    max_iter: int,
    diagnostics: dict,
    notes: list[str],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """Standard errors and percentile intervals (level ``a``) from B parametric-bootstrap resamples of
    ``nrep`` reports drawn from K^T p̂, and the sentence that names them."""
    rng = np.random.default_rng(seed)
    q = np.clip(K.T @ p, 0, None)
    q /= q.sum()
    Cb = rng.multinomial(nrep, q, size=int(bootstrap)).astype(float)
    # warm start at p̂ itself, zeros included: Newton starts on p̂'s support (|S| × |S| Hessians, not
    # N × N: N = 1000, 13 s -> 4 s) and adds every mass whose KKT condition fails; every count of a
    # resample falls on an output with (K^T p̂)_y > 0, so L is finite there. Rows left to EM restart
    # from masses > 0 everywhere (em_mle).
    p0 = p.copy()
    Pb, emb = _point_estimates(K, Cb, method, projection, B, tol, max_iter, p0=p0)
    se = Pb.std(axis=0, ddof=1)
    lower, upper = np.quantile(Pb, a / 2, axis=0), np.quantile(Pb, 1 - a / 2, axis=0)
    uncertainty = f"parametric bootstrap (B = {int(bootstrap)}, seed {seed}), percentile intervals"
    diagnostics["bootstrap"] = int(bootstrap)
    diagnostics["seed"] = seed
    if emb is not None and not emb.converged.all():
        notes.append(f"{int((~emb.converged).sum())} of {int(bootstrap)} bootstrap EM runs did not reach tol")
    if simultaneous and bootstrap * a / 2 < 5:
        notes.append(
            f"B = {bootstrap} resamples give fewer than 5 beyond each Bonferroni quantile "
            f"({a / 2:.2g}); raise --bootstrap for a stable band"
        )
    return se, lower, upper, uncertainty


def _identified_set_intervals(
    K: np.ndarray,
    p: np.ndarray,
    c: np.ndarray,
    a: float,
    labels: tuple[str, ...],
    identified: np.ndarray,
    se: np.ndarray | None,
    uncertainty: str,
    diagnostics: dict,
):
    """Rank K < N: every interval from the identified-set LPs (module docstring), which need no bootstrap
    and stay valid on the simplex's boundary; standard errors only where P_x is identified. Returns
    (se, lower, upper, uncertainty)."""
    from scipy.stats import norm

    masses = np.arange(K.shape[0])
    z = norm.ppf(1 - a / 2)
    lo, hi, lower, upper = identification_intervals(K, p, c, z, masses)
    if se is not None:
        se = np.where(identified, se, np.nan)
    diagnostics["identified_range"] = {labels[x]: [float(lo[x]), float(hi[x])] for x in np.flatnonzero(~identified)}
    uncertainty = (
        ("" if se is None else uncertainty.replace("percentile intervals", "standard errors") + "; ")
        + "rank K < N: intervals from the range of P_x over the maximisers (an LP per end) widened by "
        + f"z = {z:.3g} sampling sds of its dual bound"
    )
    return se, lower, upper, uncertainty


@single_threaded_blas()
def estimate_distribution(
    K,
    counts,
    labels: Sequence[str] | None = None,
    output_labels: Sequence[str] | None = None,
    method: str = "mle",
    confidence: float = 0.95,
    bootstrap: int = 200,
    simultaneous: bool = False,
    projection: str = "euclidean",
    seed: int | None = 0,
    tol: float = 1e-10,
    max_iter: int = 100_000,
) -> EstimateResult:
    """Estimate P_X from the output counts of a mechanism K (N × M floats or an ExactKernel).

    ``method``: ``mle`` (EM, bootstrap intervals), ``inversion`` (asymptotic intervals) or ``projected``
    (``projection`` = ``euclidean`` or ``clip``; bootstrap intervals). ``bootstrap`` = B resamples (0: no
    standard errors or intervals for mle/projected, except that mle on a kernel of rank < N gives its
    intervals without a bootstrap, see the module docstring); ``seed`` seeds the bootstrap. ``simultaneous``: a
    Bonferroni band covering all N masses at once with probability ≥ ``confidence``. BLAS runs on one
    thread (:mod:`mechdesign.release.blas_threads`)."""
    from scipy.stats import norm

    if hasattr(K, "to_float"):
        K = K.to_float()
    K = np.asarray(K, dtype=float)
    n_sym, m = K.shape
    labels = tuple(str(v) for v in (range(n_sym) if labels is None else labels))
    output_labels = tuple(str(v) for v in (range(m) if output_labels is None else output_labels))
    _check_estimate_options(method, projection, confidence, bootstrap, m, tol)
    c = check_counts(K, counts, output_labels)
    nrep = int(c.sum())
    alpha = 1.0 - confidence
    a = alpha / n_sym if simultaneous else alpha
    rank = kernel_rank(K)
    diagnostics: dict[str, Any] = {"rank": rank}
    notes: list[str] = []
    B = _linear_inverse(K, method, rank)
    identified = _identified_or_none(K, labels, method, rank, diagnostics, notes)
    C = c[None, :].astype(float)
    P, em = _point_estimates(K, C, method, projection, B, tol, max_iter)
    p = P[0]
    _point_diagnostics(K, c, p, em, method, projection, B, tol, diagnostics, notes)
    se = lower = upper = None
    if method == "inversion":
        se = np.sqrt(inversion_variances(B, c / nrep, nrep))
        z = norm.ppf(1 - a / 2)
        lower, upper = p - z * se, p + z * se
        uncertainty = "asymptotic (plug-in covariance of the linear estimator)"
    elif bootstrap > 0 and (identified is None or identified.any()):  # no standard error to bootstrap else
        se, lower, upper, uncertainty = _bootstrap_intervals(
            K, p, nrep, a, method, projection, B, bootstrap, seed, simultaneous, tol, max_iter, diagnostics, notes
        )
    else:
        uncertainty = "none (bootstrap = 0)"
    if identified is not None:
        se, lower, upper, uncertainty = _identified_set_intervals(
            K, p, c, a, labels, identified, se, uncertainty, diagnostics
        )
    return EstimateResult(
        method=method if method != "projected" else f"projected ({projection})",
        labels=labels,
        estimate=p,
        standard_error=se,
        lower=lower,
        upper=upper,
        confidence=float(confidence),
        simultaneous=bool(simultaneous),
        n=nrep,
        uncertainty=uncertainty,
        diagnostics=diagnostics,
        warnings=tuple(notes),
        identified=identified,
    )


def counts_for(outputs_or_counts, output_labels: Sequence[str]) -> np.ndarray:
    """Counts from a mapping label → count (e.g. ``Series.value_counts()``: a pandas Series counts as a
    mapping only if its values are counts indexed by labels — pass ``dict(series)`` to be explicit) or
    from a sequence of output labels."""
    if isinstance(outputs_or_counts, Mapping):
        index = {lab: j for j, lab in enumerate(output_labels)}
        c = np.zeros(len(output_labels), dtype=np.int64)
        for label, value in outputs_or_counts.items():
            j = index.get(str(label))
            if j is None:
                check_label(str(label), "counts")
                raise InputError(
                    f"counts: unknown output label {str(label)!r}: the mechanism's outputs are "
                    f"{_preview(output_labels)}"
                )
            v = np.asarray(value)
            if v.ndim or v.dtype.kind not in "iuf" or not np.isfinite(v) or v != np.round(v) or v < 0:
                raise InputError(f"counts: label {str(label)!r}: count must be a non-negative integer, found {value!r}")
            c[j] += int(v)
        return c
    values = (
        outputs_or_counts.ravel().tolist() if isinstance(outputs_or_counts, np.ndarray) else list(outputs_or_counts)
    )
    if not values:
        raise InputError("outputs: empty input: no released outputs")
    return counts_from_labels(values, output_labels)


def _preview(labels: Sequence[str], k: int = 8) -> str:
    shown = ", ".join(labels[:k])
    return shown + (", ..." if len(labels) > k else "")
