"""Stage 2 for each utility — how an objective becomes a program: kernel LPs for expected loss, Dobrushin
and Bayes vulnerability (``compile``), the extreme-ray LP and column generation for sublinear utilities
(``sublinear``, ``pricing_mi``), tangent/secant LPs for f-divergences (``fdiv_lines``) and fixed output
sizes (``fixed_outputs``)."""
