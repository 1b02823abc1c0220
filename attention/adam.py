"""Adam (Kingma and Ba, 2015) in numpy: a step per parameter from running averages of its gradient.

    m ← β₁ m + (1 - β₁) g              the gradient's running mean
    v ← β₂ v + (1 - β₂) g²             the running mean of its square
    m̂ = m / (1 - β₁ᵗ),  v̂ = v / (1 - β₂ᵗ)   corrected for starting at 0
    θ ← θ - lr m̂ / (√v̂ + ε)

Every parameter's step is at most about lr whatever the size of its gradient (Kingma and Ba, section
2.1; smaller where the gradient is noisy): a parameter whose gradient is tiny is not left behind,
which is why it trains small transformers much faster than plain gradient descent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

ADAM_LATEX = (
    r"m \leftarrow \beta_1 m + (1-\beta_1) g,\quad v \leftarrow \beta_2 v + (1-\beta_2) g^2,\quad "
    r"\theta \leftarrow \theta - \mathrm{lr}\,\frac{m / (1-\beta_1^t)}{\sqrt{v / (1-\beta_2^t)} + \varepsilon}"
)


@dataclass(frozen=True)
class AdamState:
    """The running averages for every parameter (by name) and how many steps were taken.

    Shapes: m[name], v[name] as the parameter `name`.
    """

    step: int
    m: dict[str, np.ndarray]
    v: dict[str, np.ndarray]

    @classmethod
    def zeros(cls, params: dict[str, np.ndarray]) -> "AdamState":
        return cls(
            0, {k: np.zeros_like(p) for k, p in params.items()}, {k: np.zeros_like(p) for k, p in params.items()}
        )


BETA1, BETA2 = 0.9, 0.999  # the decay rates of the gradient's running mean and of its square (Kingma & Ba's defaults)


def largest_step(beta1: float = BETA1, beta2: float = BETA2) -> float:
    """The most one Adam step can move a parameter, in units of lr (Kingma & Ba 2015, section 2.1):
    (1 - beta1) / sqrt(1 - beta2) when that is above 1 (a gradient after a long quiet spell), else 1."""
    return max(1.0, (1 - beta1) / np.sqrt(1 - beta2))


def adam_step(
    params: dict[str, np.ndarray],
    grads: dict[str, np.ndarray],
    state: AdamState,
    *,
    lr: float,
    beta1: float = BETA1,
    beta2: float = BETA2,
    eps: float = 1e-8,
) -> tuple[dict[str, np.ndarray], AdamState]:
    """One Adam step: (new parameters, new state). Nothing passed in is modified.

    Shapes: params, grads and the state's m, v share names and shapes.
    """
    if set(grads) != set(params) or set(state.m) != set(params):
        raise ValueError(f"params, grads and state must name the same arrays; grads lacks {set(params) - set(grads)}")
    for name, value in (("lr", lr), ("eps", eps)):
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a positive number, got {value!r}")
    for name, value in (("beta1", beta1), ("beta2", beta2)):
        if not (isinstance(value, (int, float)) and 0 <= value < 1):
            raise ValueError(f"{name} must be in [0, 1), got {value!r}")
    t = state.step + 1
    new_params, m, v = {}, {}, {}
    for name, p in params.items():
        g = grads[name]
        m[name] = beta1 * state.m[name] + (1 - beta1) * g
        v[name] = beta2 * state.v[name] + (1 - beta2) * g * g
        m_hat = m[name] / (1 - beta1**t)
        v_hat = v[name] / (1 - beta2**t)
        new_params[name] = (p - lr * m_hat / (np.sqrt(v_hat) + eps)).astype(p.dtype, copy=False)
    return new_params, AdamState(t, m, v)
