"""The spec dictionary the tests build most often (the keys of a spec file, as :func:`mechdesign.load_spec` reads
them)."""

from __future__ import annotations


def spec(n, eps, prior_set, objective=None, **extra) -> dict:
    """``{alphabet: n, epsilon: eps, prior_set, objective, **extra}``; the objective defaults to the Dobrushin
    coefficient."""
    return {
        "alphabet": n,
        "epsilon": eps,
        "prior_set": prior_set,
        "objective": objective or {"kind": "dobrushin"},
        **extra,
    }
