"""The privacy constraint: each prior set's LP rows for min over 𝒫 of P·k and its exact worst-case prior
(``priors``), extremal binary mechanisms and extreme rays of the private-column cone (``extremes``),
and the closed-form ray families used by column generation (``ray_families``)."""
