"""Code shared by the tests (importable as ``helpers``: ``tests/`` is on pytest's ``pythonpath``).

* :mod:`helpers.exact_oracle`: the independent exact (ε,𝒫)-PML checker (imports nothing from mechdesign);
* :mod:`helpers.reference_problems`: the catalogue of reference problems with independently known optima;
* :mod:`helpers.kernels`: boundary kernels and the oracle on grid kernels, for the certify-stage tests;
* :mod:`helpers.specs`: spec builders, the k-RR kernel and the in-process CLI runner.
"""
