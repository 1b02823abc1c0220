"""The position-wise feed-forward network: expand to d_ff, apply a non-linearity, contract back.

    FFN(x) = act(x W_1 + b_1) W_2 + b_2

The same two-layer network is applied to every position independently.
"""

from __future__ import annotations

import math

import numpy as np

from .checks import as_real_array, check_ndim, check_not_empty, check_result, check_shape
from .chunks import elementwise
from .limits import check_dim, check_scores

FEED_FORWARD_LATEX = r"\mathrm{FFN}(x) = \mathrm{act}(x W_1 + b_1)\, W_2 + b_2"
ACTIVATIONS = ("relu", "gelu")
GELU_LATEX = r"\mathrm{GELU}(x) = x\,\Phi(x) = \tfrac{1}{2}\,x\left(1 + \mathrm{erf}(x/\sqrt{2})\right)"


def relu(x) -> np.ndarray:
    """max(0, x), elementwise. Shapes: any -> the same."""
    return _relu(as_real_array(x, "x"))


def gelu(x) -> np.ndarray:
    """The exact GELU, x * Phi(x) = 0.5 x (1 + erf(x / sqrt(2))) (not the tanh approximation).

    Shapes: any -> the same. In float64, erf is scipy's; in float32 it is a rational function accurate to
    4.4e-7 (`erf_float32`), as close as float32 itself can hold erf near 1, and 5x faster.
    """
    return _gelu(as_real_array(x, "x"))


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, x.dtype.type(0))


def _gelu(x: np.ndarray) -> np.ndarray:
    return elementwise(_gelu_values, x) if x.dtype == np.float32 else _gelu_values(x)


def _gelu_values(x: np.ndarray) -> np.ndarray:
    scaled = x * x.dtype.type(1.0 / math.sqrt(2.0))
    if x.dtype == np.float32:
        e = erf_float32(scaled)
    else:
        from scipy.special import erf  # here: scipy takes 0.15 s to import, and only float64 needs it

        e = erf(scaled)
    e += 1.0
    e *= x
    e *= x.dtype.type(0.5)  # 0.5 x (1 + erf(x / √2)), in place: at 256 tokens each temporary costs 1.5 MB
    return e


# erf as an odd polynomial over an even one, for float32 (the coefficients XLA and Eigen use): exact to
# 4.4e-7 on [-4, 4], beyond which erf is ±1 in float32 anyway. scipy's erf costs about 10 ns a value; this
# a few: at 256 tokens the real model's GELU takes a few percent of its forward pass, against a quarter with scipy's.
_ERF_NUMERATOR = (
    -2.72614225801306e-10,
    2.77068142495902e-08,
    -2.10102402082508e-06,
    -5.69250639462346e-05,
    -7.34990630326855e-04,
    -2.95459980854025e-03,
    -1.60960333262415e-02,
)
_ERF_DENOMINATOR = (
    -1.45660718464996e-05,
    -2.13374055278905e-04,
    -1.68282697438203e-03,
    -7.37332916720468e-03,
    -1.42647390514189e-02,
)


def erf_float32(x: np.ndarray) -> np.ndarray:
    """erf of a float32 array, to 4.4e-7. Shapes: any -> the same (a new array)."""
    x = np.clip(x, np.float32(-4.0), np.float32(4.0))
    x2 = x * x
    numerator = _horner(x2, _ERF_NUMERATOR)
    numerator *= x
    numerator /= _horner(x2, _ERF_DENOMINATOR)
    return np.clip(numerator, np.float32(-1.0), np.float32(1.0), out=numerator)  # rounding can pass ±1 by an ulp


def _horner(x2: np.ndarray, coefficients) -> np.ndarray:
    out = x2 * np.float32(coefficients[0])
    out += np.float32(coefficients[1])
    for c in coefficients[2:]:
        out *= x2
        out += np.float32(c)
    return out


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
    if w_1.ndim != 2 or w_1.shape[0] != d_model or w_1.shape[1] == 0:
        raise ValueError(f"w_1 has shape {w_1.shape}; expected (d_model={d_model}, d_ff) with d_ff >= 1")
    d_ff = w_1.shape[1]
    check_dim(max(d_model, d_ff), "d_model or d_ff")
    check_scores((*x.shape[:-1], d_ff))  # the hidden layer is as big as a score tensor could be
    b_1, w_2, b_2 = (as_real_array(a, name) for a, name in ((b_1, "b_1"), (w_2, "w_2"), (b_2, "b_2")))
    for name, a, shape in (("b_1", b_1, (d_ff,)), ("w_2", w_2, (d_ff, d_model)), ("b_2", b_2, (d_model,))):
        check_shape(a, name, shape)
    hidden, output = ffn(x, w_1, b_1, w_2, b_2, activation)
    return hidden, check_result(output, "the feed-forward output")


def ffn(x: np.ndarray, w_1, b_1, w_2, b_2, activation: str) -> tuple[np.ndarray, np.ndarray]:
    """(hidden, output) on arguments already checked, in x's dtype. Shapes: as `feed_forward_steps`."""
    return ffn_trace(x, w_1, b_1, w_2, b_2, activation)[1:]


def ffn_trace(x: np.ndarray, w_1, b_1, w_2, b_2, activation: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pre, hidden, output) on arguments already checked, in x's dtype: pre = x W_1 + b_1, the activation's
    input, is what a backward pass needs. Shapes: pre and hidden (..., n, d_ff), output (..., n, d_model)."""
    w_1, b_1, w_2, b_2 = (a.astype(x.dtype, copy=False) for a in (w_1, b_1, w_2, b_2))
    pre = x @ w_1  # (..., n, d_ff)
    pre += b_1
    check_result(pre, "x @ w_1 + b_1")  # finite inputs can still overflow: never pass inf on silently
    hidden = _relu(pre) if activation == "relu" else _gelu(pre)  # (..., n, d_ff)
    output = hidden @ w_2  # (..., n, d_model)
    output += b_2
    return pre, hidden, output


def feed_forward(x, w_1, b_1, w_2, b_2, activation: str = "relu") -> np.ndarray:
    """FFN(x) = act(x W_1 + b_1) W_2 + b_2. Shapes: x (..., n, d_model) -> (..., n, d_model)."""
    return feed_forward_steps(x, w_1, b_1, w_2, b_2, activation)[1]
