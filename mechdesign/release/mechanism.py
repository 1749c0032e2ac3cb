"""An exact sampler for a designed (or given) mechanism.

A :class:`Mechanism` holds an exact rational kernel K = numerators / D (an
:class:`~mechdesign.certify.exact.ExactKernel`). To release Y for input x it draws a
uniform integer U in [0, D) and returns the first output y with
U < Σ_{y' ≤ y} numerators[x, y'], so that P(Y = y | X = x) = numerators[x, y] / D
*exactly*: integer arithmetic only, no float comparisons (float samplers bias
the probabilities and have broken deployed DP code).

Randomness (``rng``):

* ``None`` (default): :class:`secrets.SystemRandom`, the operating system's
  cryptographic source; use it for real releases.
* an ``int`` seed: a fresh :class:`numpy.random.Generator` (PCG64) seeded with
  it, for reproducible runs (identical outputs for one seed);
* a :class:`random.Random` (or ``SystemRandom``) or a ``numpy.random.Generator``.

Uniform integers come from ``randrange`` (exact for any D), from
``Generator.integers`` (exact for D ≤ 2^63; larger D by rejection sampling on
random bits), or, for the default cryptographic source and D ≤ 2^63, from bulk
``os.urandom`` words by rejection sampling.
"""

from __future__ import annotations

import bisect
import os
import random
import secrets
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from mechdesign.certify.exact import ExactKernel
from mechdesign.objectives.registry import objective_rules
from mechdesign.spec.errors import InputError

__all__ = ["Mechanism", "resolve_rng"]

_INT63 = 1 << 63


def resolve_rng(rng: Any = None):
    """The random source for ``rng`` (None: cryptographic; int: seeded numpy Generator)."""
    if rng is None:
        return secrets.SystemRandom()
    if isinstance(rng, bool):
        raise TypeError("rng must be None, an int seed, a random.Random or a numpy Generator")
    if isinstance(rng, (int, np.integer)):
        return np.random.default_rng(int(rng))
    if isinstance(rng, (random.Random, np.random.Generator)):
        return rng
    raise TypeError(f"rng must be None, an int seed, a random.Random or a numpy Generator, found {type(rng).__name__}")


def _randbelow_many(rng, d: int, size: int) -> list[int] | np.ndarray:
    """``size`` independent uniform integers in [0, d), exactly."""
    if isinstance(rng, np.random.Generator):
        if d <= _INT63:
            return rng.integers(0, d, size=size, dtype=np.int64)
        bits = d.bit_length()
        words = (bits + 31) // 32
        out = []
        while len(out) < size:  # rejection sampling on `bits` random bits: exact
            chunk = rng.integers(0, 1 << 32, size=(size - len(out), words), dtype=np.uint64)
            for row in chunk:
                v = 0
                for w in row:
                    v = (v << 32) | int(w)
                v >>= words * 32 - bits
                if v < d:
                    out.append(v)
        return out
    if isinstance(rng, random.SystemRandom) and d <= _INT63:
        return _urandom_below(d, size)
    return [rng.randrange(d) for _ in range(size)]


def _urandom_below(d: int, size: int) -> np.ndarray:
    """Uniform integers in [0, d) from os.urandom (the source of SystemRandom), in bulk.

    Each draw takes the top k = bitlength(d − 1) bits of a random 64-bit word and
    rejects values ≥ d (none when d is a power of two): exact and cryptographic.
    """
    k = (d - 1).bit_length()
    out = np.empty(size, dtype=np.int64)
    todo = np.arange(size)
    while todo.size:
        words = np.frombuffer(os.urandom(8 * todo.size), dtype=np.uint64)
        vals = (words >> np.uint64(64 - k)) if k > 0 else np.zeros(todo.size, dtype=np.uint64)
        ok = vals < np.uint64(d)
        out[todo[ok]] = vals[ok].astype(np.int64)
        todo = todo[~ok]
    return out


@dataclass(frozen=True)
class Mechanism:
    """A privacy mechanism K (inputs × outputs) with exact rational rows and labels.

    ``labels`` name the N inputs (matched by ``str(value)``), ``output_labels`` the M
    outputs. Build one with :meth:`from_result` or :meth:`from_kernel`.
    """

    kernel: ExactKernel
    labels: tuple[str, ...]
    output_labels: tuple[str, ...]
    _cumulative: tuple[tuple[int, ...], ...] = field(init=False, repr=False)
    _index: dict = field(init=False, repr=False)

    def __post_init__(self):
        n, m = self.kernel.shape
        if not self.kernel.is_stochastic():
            raise InputError("mechanism: the kernel must have entries >= 0 and rows summing to exactly 1")
        if len(self.labels) != n or len(set(self.labels)) != n:
            raise InputError(f"mechanism: needs {n} distinct input labels, found {len(self.labels)}")
        if len(self.output_labels) != m:
            raise InputError(f"mechanism: needs {m} output labels, found {len(self.output_labels)}")
        cum = []
        for row in self.kernel.numerators:
            acc, c = 0, []
            for v in row:
                acc += int(v)
                c.append(acc)
            cum.append(tuple(c))
        object.__setattr__(self, "_cumulative", tuple(cum))
        object.__setattr__(self, "_index", {lab: i for i, lab in enumerate(self.labels)})

    # ----------------------------------------------------------- constructors
    @classmethod
    def from_kernel(cls, kernel, labels: Sequence | None = None, output_labels: Sequence | None = None) -> "Mechanism":
        """From an :class:`ExactKernel` or rows of numbers/fractions (floats are taken as the exact
        rationals they are). Labels default to 0..N−1 and outputs to y0..y(M−1), names that no input
        label takes (:func:`mechdesign.spec.notation.output_labels`)."""
        if not isinstance(kernel, ExactKernel):
            from mechdesign.release.kernel_io import _from_rows

            rows = kernel.tolist() if isinstance(kernel, np.ndarray) else [list(row) for row in kernel]
            kernel = _from_rows(rows, "kernel", stochastic=True)
        n, m = kernel.shape
        labels = tuple(str(v) for v in (range(n) if labels is None else labels))
        if output_labels is None:
            from mechdesign.spec.notation import output_labels as default_output_labels

            outputs = default_output_labels(labels, m)
        else:
            outputs = tuple(str(v) for v in output_labels)
        return cls(kernel, labels, outputs)

    @classmethod
    def from_structured(cls, structured, max_entries: int = 10**6) -> "Mechanism":
        """The explicit kernel of a structured mechanism (:mod:`mechdesign.mechanisms`: k-RR, subset selection of
        any size, ...) where N × M fits in ``max_entries``; outputs are labelled in its report format."""
        kernel, outputs = structured.to_kernel(max_entries)
        return cls.from_kernel(kernel, structured.labels, outputs)

    @classmethod
    def from_result(cls, result, output_labels: Sequence | None = None) -> "Mechanism":
        """From a :class:`~mechdesign.design.DesignResult` (its exactly certified kernel).

        Inputs are labelled by the spec's alphabet. Outputs are y0..y(M−1), except for an
        expected-loss design with M = N, where output y estimates symbol y and carries its label
        (:func:`mechdesign.spec.notation.output_labels`).
        """
        if result.exact_kernel is None:
            raise InputError(f"mechanism: the design produced no kernel (status {result.status.value})")
        if result.certificate is None or not result.certificate.feasible:
            failing = [c.field for c in getattr(result.certificate, "side_constraints", []) if not c.feasible]
            what = "the exact privacy check" if not failing else "the exact check of " + ", ".join(failing)
            raise InputError(f"mechanism: the design's kernel did not pass {what}")
        spec = result.spec
        n, m = result.exact_kernel.shape
        if output_labels is None and objective_rules(spec).outputs_estimate_x and m == n:
            output_labels = spec.labels
        return cls.from_kernel(result.exact_kernel, spec.labels, output_labels)

    def __repr__(self) -> str:
        from mechdesign.display import mechanism_repr

        return mechanism_repr(self)

    def _repr_html_(self) -> str:
        from mechdesign.display import mechanism_html

        return mechanism_html(self)

    # --------------------------------------------------------------- sampling
    @property
    def shape(self) -> tuple[int, int]:
        return self.kernel.shape

    def index_of(self, value) -> int:
        """The input index of a label (matched by ``str(value)``)."""
        try:
            return self._index[str(value)]
        except KeyError:
            raise InputError(f"unknown input label {str(value)!r} (labels: {_preview(self.labels)})") from None

    def sample_index(self, i: int, rng=None) -> int:
        """One output index for input index ``i``."""
        rng = resolve_rng(rng)
        u = int(_randbelow_many(rng, self.kernel.denominator, 1)[0])
        return bisect.bisect_right(self._cumulative[i], u)

    def sample(self, x, rng=None) -> str:
        """One output label for the input label ``x``."""
        return self.output_labels[self.sample_index(self.index_of(x), rng)]

    def privatize_indices(self, indices: Iterable[int], rng=None) -> np.ndarray:
        """Output indices for an array of input indices (one independent draw each)."""
        idx = np.asarray(list(indices) if not isinstance(indices, np.ndarray) else indices)
        if idx.size and (not np.issubdtype(idx.dtype, np.integer) or idx.min() < 0 or idx.max() >= self.shape[0]):
            raise InputError(f"input indices must be integers in [0, {self.shape[0]})")
        rng = resolve_rng(rng)
        flat = idx.ravel()
        u = _randbelow_many(rng, self.kernel.denominator, flat.size)
        out = np.empty(flat.size, dtype=np.int64)
        if isinstance(u, np.ndarray):  # vectorised: int64 cumulative numerators (D ≤ 2^63)
            cum = np.array(self._cumulative, dtype=np.int64)
            for i in np.unique(flat):
                sel = flat == i
                out[sel] = np.searchsorted(cum[i], u[sel], side="right")
        else:
            for k, (i, v) in enumerate(zip(flat.tolist(), u)):
                out[k] = bisect.bisect_right(self._cumulative[i], int(v))
        return out.reshape(idx.shape)

    def privatize(self, values, rng=None):
        """Release every value of a sequence or array of input labels.

        Returns output labels: a list for a list/tuple/other iterable, a numpy array
        (dtype object) of the same shape for a numpy array. Raises
        :class:`~mechdesign.spec.errors.InputError` naming the position of an unknown label
        before drawing anything.
        """
        is_array = isinstance(values, np.ndarray)
        flat = values.ravel().tolist() if is_array else list(values)
        idx = []
        for pos, v in enumerate(flat):
            i = self._index.get(str(v))
            if i is None:
                raise InputError(f"row {pos}: unknown input label {str(v)!r} (labels: {_preview(self.labels)})")
            idx.append(i)
        ys = self.privatize_indices(np.array(idx, dtype=np.int64), rng)
        out = [self.output_labels[int(y)] for y in ys]
        if is_array:
            arr = np.empty(len(out), dtype=object)
            arr[:] = out
            return arr.reshape(values.shape)
        return out

    def estimate(self, outputs_or_counts, method: str = "mle", confidence: float = 0.95, **options):
        """Estimate P_X from released outputs: a sequence of output labels, or a mapping label → count.

        ``method``: ``mle`` (default), ``inversion`` or ``projected``; ``options`` go to
        :func:`mechdesign.release.estimate.estimate_distribution` (``bootstrap``, ``simultaneous``,
        ``projection``, ``seed``, ``tol``, ``max_iter``). Returns an
        :class:`~mechdesign.release.estimate.EstimateResult` (``to_frame()`` for pandas)."""
        from mechdesign.release.estimate import counts_for, estimate_distribution

        counts = counts_for(outputs_or_counts, self.output_labels)
        return estimate_distribution(
            self.kernel.to_float(),
            counts,
            self.labels,
            self.output_labels,
            method=method,
            confidence=confidence,
            **options,
        )


def _preview(labels: Sequence[str], k: int = 8) -> str:
    shown = ", ".join(labels[:k])
    return shown + (", ..." if len(labels) > k else "")
