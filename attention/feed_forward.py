"""The position-wise feed-forward network: expand to d_ff, apply a non-linearity, contract back.

    FFN(x) = act(x W_1 + b_1) W_2 + b_2

The same two-layer network is applied to every position independently.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import erf

from ._checks import as_real_array, check_ndim, check_not_empty, check_shape

FEED_FORWARD_LATEX = r"\mathrm{FFN}(x) = \mathrm{act}(x W_1 + b_1)\, W_2 + b_2"
ACTIVATIONS = ("relu", "gelu")


def relu(x: np.ndarray) -> np.ndarray:
    """max(0, x), elementwise."""
    return np.maximum(x, x.dtype.type(0))


def gelu(x: np.ndarray) -> np.ndarray:
    """The exact GELU, x * Phi(x) = 0.5 x (1 + erf(x / sqrt(2))) (not the tanh approximation)."""
    return x * (0.5 * (1.0 + erf(x * x.dtype.type(1.0 / math.sqrt(2.0)))))


def feed_forward_steps(x, w_1, b_1, w_2, b_2, activation: str = "relu") -> tuple[np.ndarray, np.ndarray]:
    """Return (hidden, output): hidden = act(x W_1 + b_1), output = hidden W_2 + b_2.

    Shapes: x (..., n, d_model), w_1 (d_model, d_ff), b_1 (d_ff,), w_2 (d_ff, d_model), b_2 (d_model,)
    -> hidden (..., n, d_ff), output (..., n, d_model).
    """
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
    x = as_real_array(x, "x")
    check_ndim(x, "x", 1, "(..., d_model)")
    check_not_empty(x, "x")
    d_model = x.shape[-1]
    w_1 = as_real_array(w_1, "w_1")
    check_ndim(w_1, "w_1", 2, f"(d_model={d_model}, d_ff)")
    d_ff = w_1.shape[1]
    check_shape(w_1, "w_1", (d_model, d_ff))
    for name, a, shape in (("b_1", b_1, (d_ff,)), ("w_2", w_2, (d_ff, d_model)), ("b_2", b_2, (d_model,))):
        check_shape(as_real_array(a, name), name, shape)
    dtype = x.dtype
    pre = np.matmul(x, w_1.astype(dtype, copy=False)) + np.asarray(b_1, dtype=dtype)  # (..., n, d_ff)
    hidden = relu(pre) if activation == "relu" else gelu(pre)
    output = np.matmul(hidden, np.asarray(w_2, dtype=dtype)) + np.asarray(b_2, dtype=dtype)  # (..., n, d_model)
    return hidden, output


def feed_forward(x, w_1, b_1, w_2, b_2, activation: str = "relu") -> np.ndarray:
    """FFN(x) = act(x W_1 + b_1) W_2 + b_2. Shapes: x (..., n, d_model) -> (..., n, d_model)."""
    return feed_forward_steps(x, w_1, b_1, w_2, b_2, activation)[1]
