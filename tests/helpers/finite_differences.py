"""Central finite differences of a scalar function: the reference for hand-derived gradients and Hessians."""

import numpy as np


def central_gradient_and_hessian(phi, x: np.ndarray, step: float = 1e-4) -> tuple[np.ndarray, np.ndarray]:
    """(∂φ/∂x_k, ∂²φ/∂x_k∂x_l) at x by central differences of φ itself (errors O(step²) and O(u/step²))."""
    m = len(x)
    E = np.eye(m) * step
    g = np.array([(phi(x + E[k]) - phi(x - E[k])) / (2 * step) for k in range(m)])
    H = np.array(
        [
            [
                (phi(x + E[k] + E[l]) - phi(x + E[k] - E[l]) - phi(x - E[k] + E[l]) + phi(x - E[k] - E[l]))
                / (4 * step * step)
                for l in range(m)
            ]
            for k in range(m)
        ]
    )
    return g, H
