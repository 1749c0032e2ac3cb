"""The single-column privacy cone 𝒦 = {k ∈ [0,1]^N : e^{−ε} max k ≤ c Σ k + (1 − Nc) min k} of (ε,Q_X(c))-PML
(c = 0: ε-LDP): the lifted kernel LP's layout, exact pricing of a column over 𝒦, the rigorous Lagrangian bound,
lifting a column into 𝒦, the mirror fold of reflection-invariant costs and the difference rows. Knows the cone and
LPs, not objectives or engines (docs/explanation/engines.md)."""
