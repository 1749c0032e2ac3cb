"""Code shared by the tests (importable as ``helpers``: ``tests/`` is on pytest's ``pythonpath``).

* :mod:`helpers.exact_oracle`: the independent exact (ε,𝒫)-PML checker (imports nothing from mechdesign);
* :mod:`helpers.reference_problems`: the catalogue of reference problems with independently known optima;
* :mod:`helpers.kernels`: boundary kernels and the oracle on grid kernels, for the certify-stage tests;
* :mod:`helpers.specs`: the spec dictionary builder; :mod:`helpers.cli`: the CLI runners (in-process and as a
  subprocess); :mod:`helpers.krr`: k-ary randomized response, in floats and exactly;
* :mod:`helpers.frequency_rays`: every extreme ray of the simplex / min_mass column cone, written out;
* :mod:`helpers.ctrl_c`: the command line with a real SIGINT sent when the work reaches a given point (round K,
  a MIP's first incumbent, the K-th design), so that an interrupt test cannot race the solve.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository's root (the directory that holds ``mechdesign/``, ``problems/`` and ``tests/``)."""
