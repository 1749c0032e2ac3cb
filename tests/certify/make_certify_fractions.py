"""Writes tests/certify/certify_fractions.json: a SHA-256 of the exact fractions of every kernel the certify stage emits.

Run from the repository root (``PYTHONPATH=. python tests/certify/make_certify_fractions.py``) on the code whose results
are the reference; ``tests/certify/test_certify_fractions.py`` recomputes the same hashes and asserts they are equal, so a
change to the certify stage that moves one numerator or one denominator fails it. Three kinds of case:

* ``problems/<file>``: ``design(spec)`` on every file of problems/ (small kernels: the repair of certify/exact.py);
* ``family/<name>/<N>``: ``design(spec)`` on specs of ``benchmarks/scaling_families.py`` at N = 200 and 500;
* ``certify/<prior set>/<variant>/<N>[/overwrite]``: ``certify_design`` alone on the dense kernels of
  ``benchmarks/certify_scaling.py`` (``mixture``: private with columns near the boundary; ``tight``: every column
  on the boundary, so the 2^−52 rounding breaks some by an ulp and the kernel snaps to a coarser grid), and three
  made from ``tight`` to reach the other branches of the stage (``pushed``: mixed with the identity by 1e−12, so
  every column is over the boundary and the repair mixes; ``noise``: ``pushed`` with one column of 2^−40 in every
  row, a column the one-pass mix declines or merges as noise; ``inside``: mixed with the uniform kernel by 1e−3,
  passing as rounded), at N = 200, 500 and 1000, with and without giving the float kernel away
  (``overwrite_kernel``).

The hash is over the exact kernel's denominator and its numerators in row-major order (decimal text), and the
repair weight as a fraction, so it does not depend on how the integers are stored.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).resolve().parent / "certify_fractions.json"
FAMILY_CASES = [
    ("el_abs_uniform", 200),
    ("el_abs_uniform", 500),
    ("el_abs_ldp", 200),
    ("el_abs_ldp", 500),
    ("el_abs_uniform", 1000),
    ("el_abs_ldp", 1000),
    ("el_hamming_uniform", 200),
    ("el_sq_uniform", 500),
    ("el_abs_dirichlet", 200),
    ("el_abs_worst_case", 200),
    ("bayes_uniform", 200),
]
CERTIFY_CASES = [
    (kind, variant, n, overwrite)
    for kind in ("min_mass", "simplex")
    for variant in ("mixture", "tight", "pushed", "noise", "inside")
    for n in (200, 500, 1000)
    for overwrite in (False, True)
]


def _module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fraction_hash(exact, weight=None) -> str:
    """SHA-256 of the denominator, the numerators (row-major, decimal) and the repair weight."""
    ints = exact.int64()
    nums = ints if ints is not None else np.asarray(exact.numerators, dtype=object)
    h = hashlib.sha256()
    h.update(f"{exact.denominator};{nums.shape};".encode())
    h.update(",".join(str(int(v)) for v in np.asarray(nums).ravel()).encode())
    if weight is not None:
        h.update(f";{weight}".encode())
    return h.hexdigest()


def problem_cases() -> dict[str, str]:
    from mechdesign import design
    from mechdesign.spec.models import load_spec

    out = {}
    for path in sorted((ROOT / "problems").glob("*.yaml")):
        result = design(load_spec(path))
        if result.exact_kernel is not None:
            out[f"problems/{path.name}"] = fraction_hash(result.exact_kernel, result.certificate.repair_weight)
    return out


def family_spec(name: str, n: int) -> dict:
    families = _module(ROOT / "benchmarks" / "scaling_families.py", "scaling_families").FAMILIES
    return families[name][0](n)


def family_cases() -> dict[str, str]:
    from mechdesign import design

    out = {}
    for name, n in FAMILY_CASES:
        result = design(family_spec(name, n))
        out[f"family/{name}/{n}"] = fraction_hash(result.exact_kernel, result.certificate.repair_weight)
    return out


def certify_kernel(kind: str, variant: str, n: int):
    """The spec and the dense kernel of benchmarks/certify_scaling.py for one case (same seed, same floats)."""
    from mechdesign.spec.models import load_spec

    eps = 1.0
    c = 1 / (2 * n) if kind == "min_mass" else 0.0
    rng = np.random.default_rng(n)
    E = np.exp(eps)
    parts = 4 if variant == "mixture" else 1  # the others start from ``tight``
    K = np.zeros((n, n))
    theta = rng.dirichlet(np.ones(parts))
    for k in range(parts):
        q = int(rng.integers(1, n))
        m = (1 / E - c * q) / (c * (n - q) + 1 - n * c) if c > 0 else 1 / E
        v = np.r_[np.ones(q), np.full(n - q, max(m, 0.0))]
        v /= v.sum()
        s, t = rng.permutation(n), rng.permutation(n)
        K += theta[k] * v[(s[:, None] + t[None, :]) % n]
    if variant in ("pushed", "noise"):
        K = (1 - 1e-12) * K + 1e-12 * np.eye(n)
    if variant == "noise":
        K[:, 1] += K[:, 2] - 2.0**-40
        K[:, 2] = 2.0**-40
    if variant == "inside":
        K = (1 - 1e-3) * K + 1e-3 / n
    prior_set = {"kind": "min_mass", "c": f"1/{2 * n}"} if kind == "min_mass" else {"kind": "simplex"}
    spec = load_spec(
        {
            "alphabet": n,
            "epsilon": 1,
            "prior_set": prior_set,
            "output_size": n,
            "objective": {"kind": "expected_loss", "loss": "absolute", "prior": "uniform"},
        }
    )
    return spec, K


def certify_case(kind: str, variant: str, n: int, overwrite: bool) -> str:
    from mechdesign.design import certify_design

    spec, K = certify_kernel(kind, variant, n)
    exact, _, _, cert, _ = certify_design(spec, K, lp_objective=None, dual=None, sense=1, overwrite_kernel=overwrite)
    return fraction_hash(exact, cert.repair_weight)


def certify_key(kind: str, variant: str, n: int, overwrite: bool) -> str:
    return f"certify/{kind}/{variant}/{n}" + ("/overwrite" if overwrite else "")


def solver_versions() -> str:
    """The versions that decide the solver's float kernels (HiGHS, numpy, scipy) and the machine's vector
    instructions (numpy's loops and OpenBLAS pick their kernels by them, and their sums round differently): the
    problems/ and family cases emit the reference fractions only with the solver output they were made from. With
    the same versions, the machine of the first reference and an AVX2 machine (OpenBLAS's Haswell kernels) emitted
    different fractions for problems/combined_min_mass_and_metric.yaml."""
    import highspy
    import scipy

    try:
        from importlib.metadata import version

        hv = version("highspy")
    except Exception:  # noqa: BLE001 - a highspy without metadata
        hv = getattr(highspy, "__version__", "unknown")
    return f"highspy {hv}, numpy {np.__version__}, scipy {scipy.__version__}, {cpu_kernels()}"


def cpu_kernels() -> str:
    """The vector instructions numpy dispatches to on this machine and OpenBLAS's kernel (threadpoolctl)."""
    core = getattr(np, "_core", None) or np.core
    features = getattr(core._multiarray_umath, "__cpu_features__", {})
    simd = "+".join(f for f in ("AVX512F", "AVX2", "FMA3", "ASIMD") if features.get(f)) or "baseline"
    try:
        from threadpoolctl import threadpool_info

        blas = sorted({str(i.get("architecture")) for i in threadpool_info() if i.get("internal_api") == "openblas"})
    except Exception:  # noqa: BLE001 - no threadpoolctl: the SIMD set alone
        blas = []
    return f"cpu {simd}" + (f", OpenBLAS {'/'.join(blas)}" if blas else "")


def main() -> None:
    hashes = {"_made_with": solver_versions()}
    hashes.update(problem_cases())
    hashes.update(family_cases())
    for case in CERTIFY_CASES:
        hashes[certify_key(*case)] = certify_case(*case)
        print(certify_key(*case), hashes[certify_key(*case)][:12], file=sys.stderr)
    FIXTURE.write_text(json.dumps(hashes, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
