"""Lift a solver's kernel columns back into the (ε,Q_X(c))-PML cone before they are certified.

HiGHS meets the rows of the restricted LP within an *absolute* tolerance (1e-9 on its scaled rows). A column
that carries little mass can then break its PML row by a large *relative* amount: in the |x − y| worst case
under ε-LDP at N = 3000, output 633 had mass 5e-5, entries 9.75e-9 … 2.66e-8 and e^{−ε}·max − min = 4e-11,
0.4 % of its smallest entry. The certificate's repair mixes the whole kernel with its mean-row constant kernel,
which adds to each column in proportion to the column's mass, so that one column asked for a weight of
3.8e-3: the certified objective rose by 2.08 on 948 (2.2e-3 relative) and the design, optimal to 1.2e-9 in
floating point, was reported ``suboptimal``.

:func:`lift_into_cone` mends each such column where it is broken: its small entries are raised to the least
level ℓ at which the column's PML row holds,

    e^{−ε} max_x k_x ≤ c Σ_x max(k_x, ℓ) + (1 − Nc) ℓ        (c = 0, ε-LDP: ℓ = e^{−ε} max k),

and the rows are then divided by their sums; a broken column whose entries are all below :data:`NOISE` is left
to the certificate. A lifted entry moves by at most the column's violation (4e-11 above), so the objective moves
by as little; the row scaling changes the ratios within a column by the relative size of those lifts (~1e-11).
On that N = 3000 kernel the certificate's mix weight fell from 3.8e-3 to 6.0e-7 (most of what is left is the
merge of noise outputs, :data:`NOISE`) and the design is certified optimal. Nothing here is trusted: the kernel
is still checked exactly and repaired by the certify stage.
"""

from __future__ import annotations

import numpy as np

__all__ = ["lift_into_cone", "NOISE"]

NOISE = 1e-9
"""A broken column whose entries are all at most this (HiGHS's tolerance) is noise and is left as it is: the
certificate merges such outputs into another one (post-processing, :func:`mechdesign.certify.exact.merge_noise_columns`).
Measured on the N = 3000 kernel of the module doc (certify stage alone): as the LP left it, mix weight 3.8e-3;
lifting all but noise, 6.0e-7 in 0.6 s (the objective 2.2e-3 → 3.5e-7 above the LP's); lifting noise too,
6.9e-8 but 2.1 s, as its entries (~3e-10, a few thousand units of the 2^−52 grid) get no share of the mix and
send the certificate to its exact repair; that would cost designs whose certification is a tenth of their time."""


def lift_into_cone(columns: np.ndarray, c: float, E: float) -> np.ndarray:
    """The N × k columns (of a kernel whose other columns are 0) with every column whose PML row
    e^{−ε} max k ≤ c Σ k + (1 − Nc) min k fails in floating point lifted (module doc; not those below
    :data:`NOISE`), rows rescaled to sum to 1 (rows that sum to 0 are left alone). ``E`` is the LP's e^{−ε},
    ``c`` the Q_X(c) mass (0: ε-LDP). A new array; ``columns`` is not changed."""
    K = np.array(columns, dtype=float, copy=True)
    n, k = K.shape
    if n == 0 or k == 0:
        return K
    top, low = K.max(axis=0), K.min(axis=0)
    slack = c * K.sum(axis=0) + (1.0 - n * c) * low - E * top
    broken = np.flatnonzero(slack < 0)
    broken = broken[top[broken] > NOISE]  # noise is left to the certificate (merged into another output)
    for y in broken.tolist():
        K[:, y] = np.maximum(K[:, y], _least_level(K[:, y], c, E))
    if broken.size:
        sums = K.sum(axis=1)
        live = sums > 0
        K[live] /= sums[live, None]
    return K


def _least_level(col: np.ndarray, c: float, E: float) -> float:
    """The least ℓ with E·max(col) ≤ c Σ max(col, ℓ) + (1 − Nc) ℓ. The right side is increasing and piecewise
    linear in ℓ, with breaks at the sorted entries s_1 ≤ … ≤ s_N: on [s_j, s_{j+1}] it is
    ℓ (1 − Nc + cj) + c Σ_{i>j} s_i, so ℓ = (E max − c Σ_{i>j} s_i) / (1 − Nc + cj) on the first piece where
    that ℓ lies below s_{j+1}."""
    n = col.size
    target = E * float(col.max())
    if c <= 0:
        return target
    s = np.sort(col)
    above = np.concatenate([np.cumsum(s[::-1])[::-1], [0.0]])  # above[j] = Σ_{i ≥ j} s_i (0-based)
    for j in range(1, n + 1):  # j entries raised to ℓ
        level = (target - c * above[j]) / (1.0 - n * c + c * j)
        if j == n or level <= s[j]:
            return max(level, float(s[j - 1]))
    return target  # not reached
