"""The peers' own frequency oracles, run end to end (their client on every record, their aggregator on the reports),
for benchmarks/structured_peers.py and benchmarks/frequency_estimation_data.py. Not a benchmark itself.

Peers (the optional extra ``peers``), each matched with the mechdesign family it implements:

* multi-freq-ldpy: GRR (k-RR), SS (subset selection), OUE (unary encoding), OLH (local hashing); its aggregators
  ``*_Aggregator_MI`` clip the unbiased estimate at 0 and renormalise;
* pure-ldp: DE (k-RR), OUE, OLH, HR (Hadamard response: for ε ≤ 1 the high-privacy variant of Acharya, Sun and
  Zhang, AISTATS 2019, which is mechdesign's; above 1 the blocked general variant, another family). Its servers
  return the unbiased counts; they are divided by n and clipped at 0 and renormalised here, as multi-freq-ldpy does.

Both libraries hash with xxhash's ``xxh32(str(value), seed)`` and a seed up to 2^63; xxhash >= 3 takes bytes and a
32-bit seed, so their local hashing runs with a shim that encodes the text and reduces the seed mod 2^32 (the same
hash family, one seed per report). multi-freq-ldpy's clients are numba functions with numba's own generator, seeded
here through a numba function; pure-ldp draws from the ``random`` module and numpy's global generator.
"""

from __future__ import annotations

import importlib.util
import math
import random
import time
import types
import warnings

import numpy as np

# (library, oracle) -> the mechdesign family with the same report distribution (pure-ldp's HR: for ε ≤ 1)
PEERS = {
    ("multi-freq-ldpy", "GRR"): "krr",
    ("pure-ldp", "DE"): "krr",
    ("multi-freq-ldpy", "SS"): "subset_selection",
    ("multi-freq-ldpy", "OUE"): "unary_encoding",
    ("pure-ldp", "OUE"): "unary_encoding",
    ("multi-freq-ldpy", "OLH"): "local_hashing",
    ("pure-ldp", "OLH"): "local_hashing",
    ("pure-ldp", "HR"): "hadamard_response",
}
_MODULES = {"multi-freq-ldpy": "multi_freq_ldpy", "pure-ldp": "pure_ldp"}


def unavailable(library: str) -> str | None:
    """None when ``library`` imports, else why not (pure-ldp imports scikit-learn and statsmodels)."""
    if importlib.util.find_spec(_MODULES[library]) is None:
        return f"{library} is not installed"
    try:
        if library == "pure-ldp":
            import pure_ldp.frequency_oracles  # noqa: F401
        else:
            import multi_freq_ldpy.pure_frequency_oracles  # noqa: F401
    except ImportError as exc:
        return f"{library} could not be imported ({exc})"
    return None


def clip_renormalise(v):
    v = np.clip(np.asarray(v, dtype=float), 0, None)
    return v / v.sum() if v.sum() > 0 else v


def _xxhash_shim(module) -> None:
    import xxhash

    if getattr(module.xxhash, "_shimmed", False):
        return
    module.xxhash = types.SimpleNamespace(
        xxh32=lambda s, seed=0: xxhash.xxh32(s.encode() if isinstance(s, str) else s, seed=int(seed) % 2**32),
        _shimmed=True,
    )


_numba_seed = None


def _seed(seed: int) -> None:
    global _numba_seed
    random.seed(seed)
    np.random.seed(seed)
    if importlib.util.find_spec("numba") is not None:
        if _numba_seed is None:
            import numba

            _numba_seed = numba.njit(lambda s: np.random.seed(s))
        _numba_seed(seed)


def _mfl(oracle, k, eps):
    from multi_freq_ldpy.pure_frequency_oracles import GRR, LH, SS, UE

    _xxhash_shim(LH)
    return {
        "GRR": (lambda v: GRR.GRR_Client(v, k, eps), lambda R: GRR.GRR_Aggregator_MI(R, k, eps)),
        "SS": (lambda v: SS.SS_Client(v, k, eps), lambda R: SS.SS_Aggregator_MI(R, k, eps)),
        "OUE": (lambda v: UE.UE_Client(v, k, eps, True), lambda R: UE.UE_Aggregator_MI(np.array(R), eps, True)),
        "OLH": (lambda v: LH.LH_Client(v, k, eps, True), lambda R: LH.LH_Aggregator_MI(R, k, eps, True)),
    }[oracle]


def _pure(oracle, k, eps):
    """A fresh client and server; items are indexed from 1 (pure-ldp's default index map)."""
    import pure_ldp.frequency_oracles as fo
    from pure_ldp.frequency_oracles.local_hashing import lh_client, lh_server

    _xxhash_shim(lh_client)
    _xxhash_shim(lh_server)
    if oracle == "HR":
        server = fo.HadamardResponseServer(eps, k)
        client = fo.HadamardResponseClient(eps, k, server.get_hash_funcs())
    else:
        client, server = {
            "DE": lambda: (fo.DEClient(eps, k), fo.DEServer(eps, k)),
            "OUE": lambda: (fo.UEClient(eps, k, use_oue=True), fo.UEServer(eps, k, use_oue=True)),
            "OLH": lambda: (fo.LHClient(eps, k, use_olh=True), fo.LHServer(eps, k, use_olh=True)),
        }[oracle]()

    def decode(reports):
        server.aggregate_all(reports)
        return clip_renormalise(server.estimate_all(range(1, k + 1), suppress_warnings=True) / len(reports))

    return (lambda v: client.privatise(v + 1)), decode


def run_peer(library: str, oracle: str, k: int, eps: float, x: np.ndarray, reps: int, seed: int):
    """``reps`` releases of the records ``x`` (indices in [0, k)) through the peer's client, each decoded by its
    aggregator: (estimates reps × k, mean client seconds per release, mean aggregator seconds per release)."""
    estimates, t_client, t_agg = [], 0.0, 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pure-ldp's small-n / high-privacy warnings, Python's randrange deprecation
        _seed(seed)
        warm = _mfl(oracle, k, eps)[0] if library == "multi-freq-ldpy" else _pure(oracle, k, eps)[0]
        warm(int(x[0]))  # compiles multi-freq-ldpy's numba client before any release is timed
        for r in range(reps):
            _seed(seed + r)
            client, aggregate = _mfl(oracle, k, eps) if library == "multi-freq-ldpy" else _pure(oracle, k, eps)
            t0 = time.perf_counter()
            reports = [client(int(v)) for v in x]
            t1 = time.perf_counter()
            estimates.append(np.asarray(aggregate(reports), dtype=float))
            t_agg += time.perf_counter() - t1
            t_client += t1 - t0
    return np.array(estimates), t_client / reps, t_agg / reps


def analytical_variance(library: str, oracle: str, k: int, eps: float, f: np.ndarray, n: int) -> float | None:
    """Σ_x Var f̂_x of the peer's unbiased estimator at the frequencies f (Wang et al., USENIX Security 2017:
    Var = q (1 − q) / (n (p − q)²) + f (1 − p − q) / (n (p − q))), with the (p, q) the library uses; None for
    pure-ldp's HR above ε = 1 (the blocked variant, whose estimate is not of that two-level form)."""
    e = math.exp(eps)
    if oracle in ("GRR", "DE"):
        p, q = e / (e + k - 1), 1 / (e + k - 1)
    elif oracle == "SS":
        s = int(max(1, np.rint(k / (e + 1))))
        p = s * e / (s * e + k - s)
        q = ((s - 1) * s * e + (k - s) * s) / ((k - 1) * (s * e + k - s))
    elif oracle == "OUE":
        p, q = 0.5, 1 / (e + 1)
    elif oracle == "OLH":
        g = int(round(e)) + 1
        p, q = e / (e + g - 1), 1 / g
    elif oracle == "HR" and eps <= 1:
        p, q = e / (e + 1), 0.5
    else:
        return None
    return float(np.sum(q * (1 - q) / (n * (p - q) ** 2) + f * (1 - p - q) / (n * (p - q))))
