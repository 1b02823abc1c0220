"""Layer normalisation over the last axis.

    LN(x) = gamma * (x - mean(x)) / sqrt(var(x) + eps) + beta

Each position's vector is rescaled to mean 0 and variance 1, then given a learned scale and shift.
"""

from __future__ import annotations

import numpy as np

from .checks import as_real_array, check_ndim, check_not_empty, check_result, check_shape

LAYER_NORM_LATEX = r"\mathrm{LN}(x) = \gamma \odot \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}} + \beta"


def layer_norm(x, gamma, beta, eps: float = 1e-5) -> np.ndarray:
    """Normalise each vector along the last axis, then scale by gamma and shift by beta.

    Shapes: x (..., d), gamma (d,), beta (d,) -> (..., d). eps must be a positive finite number
    (it keeps a constant vector, whose variance is 0, from dividing by zero).
    """
    x = as_real_array(x, "x")
    check_ndim(x, "x", 1, "(..., d)")
    check_not_empty(x, "x")
    d = x.shape[-1]
    gamma = as_real_array(gamma, "gamma")
    beta = as_real_array(beta, "beta")
    check_shape(gamma, "gamma", (d,))
    check_shape(beta, "beta", (d,))
    check_eps(eps)
    return check_result(norm(x, gamma, beta, eps), "layer_norm's gamma * normalised + beta")


def check_eps(eps) -> None:
    """Raise `ValueError` unless eps is a positive finite number."""
    is_number = isinstance(eps, (int, float, np.floating)) and not isinstance(eps, bool)
    if not (is_number and np.isfinite(eps) and eps > 0):
        raise ValueError(f"eps must be a positive finite number, got {eps!r}")


def norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    """The computation itself, on arguments already checked. Shapes: as `layer_norm`, in x's dtype."""
    x_hat, _ = standardise(x, eps)  # (..., d)
    return x_hat * gamma.astype(x.dtype, copy=False) + beta.astype(x.dtype, copy=False)


def standardise(x: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """x_hat = (x - mean) * rstd with rstd = 1 / sqrt(var + eps), on arguments already checked; rstd is what a
    backward pass needs besides x_hat. Shapes: x (..., d) -> x_hat (..., d), rstd (..., 1), in x's dtype."""
    mean = x.mean(axis=-1, keepdims=True)  # (..., 1), in x's dtype (numpy sums pairwise: accurate)
    centred = x - mean  # (..., d)
    var = np.mean(centred * centred, axis=-1, keepdims=True)  # (..., 1)
    if not np.isfinite(var).all():  # a float32 x squared overflows from |x| ~ 2e19: redo it in float64
        mean = x.mean(axis=-1, keepdims=True, dtype=np.float64)
        centred = x - mean  # (..., d), float64
        var = np.mean(centred * centred, axis=-1, keepdims=True)
        check_result(var, "the variance of x")  # only a float64 x beyond ~1e154 gets here
    rstd = (1.0 / np.sqrt(var + eps)).astype(centred.dtype)  # (..., 1)
    centred *= rstd
    return centred.astype(x.dtype, copy=False), rstd.astype(x.dtype, copy=False)
