"""Cost of interruptible HiGHS solves: the same designs with ``h.run()`` and with
:func:`mechdesign.lp.interrupt.run_interruptible` (solver thread + interrupt callbacks), side by side.

    python benchmarks/interrupt_overhead.py
"""

from __future__ import annotations

import time

import mechdesign.lp.interrupt as interrupt
from mechdesign import design

SPECS = {
    "expected_loss N=M=150 squared, min_mass (simplex / output generation)": {
        "alphabet": 150,
        "epsilon": 1,
        "prior_set": {"kind": "min_mass", "c": 0.001},
        "objective": {"kind": "expected_loss", "loss": "squared"},
    },
    "expected_loss N=M=120 squared, ipm": {
        "alphabet": 120,
        "epsilon": 1,
        "prior_set": {"kind": "min_mass", "c": 0.001},
        "objective": {"kind": "expected_loss", "loss": "squared"},
        "solver": {"method": "ipm"},
    },
    "bayes_vulnerability N=30 M=3 (MIP)": {
        "alphabet": 30,
        "epsilon": 1,
        "prior_set": {"kind": "min_mass", "c": 0.01},
        "objective": {"kind": "bayes_vulnerability"},
        "output_size": 3,
    },
}


def _time(spec) -> float:
    t = time.perf_counter()
    design(spec)
    return time.perf_counter() - t


def main() -> None:
    original = interrupt.run_interruptible
    plain = lambda h: h.run()
    for name, spec in SPECS.items():
        times = {}
        for label, fn in (("plain", plain), ("interruptible", original), ("plain again", plain)):
            interrupt_fn = fn
            import mechdesign.lp.solve as s
            import mechdesign.engines.output_generation as c
            import mechdesign.engines.sublinear as sl

            for mod in (s, c, sl):
                mod.run_interruptible = interrupt_fn
            times[label] = min(_time(spec) for _ in range(2))
        base = min(times["plain"], times["plain again"])
        print(
            f"{name}: plain {base:.3f} s, interruptible {times['interruptible']:.3f} s, "
            f"ratio {times['interruptible'] / base:.2f}"
        )


if __name__ == "__main__":
    main()
