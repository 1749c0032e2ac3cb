"""Stage 2 — linear programs and HiGHS: the sparse LP builder and weak-duality bound (``program``),
the HiGHS and cvxpy back ends with the status enum (``solve``), and output generation for kernel LPs
(``colgen``)."""
