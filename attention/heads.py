"""Multi-head attention: split d_model into h chunks, attend in each, concatenate, project.

    head_i = Attention(X W_q[:, i], X W_k[:, i], X W_v[:, i])
    MultiHead(X) = Concat(head_1, ..., head_h) W_o

Every head runs exactly the same computation on its own d_head = d_model / h columns.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .checks import (as_real_array, check_ndim, check_not_empty, check_positive_int, check_result, check_shape,
                      result_dtype)
from .limits import check_dim, check_positions
from .dot_product import scaled_dot_product_attention

MULTI_HEAD_LATEX = (
    r"\mathrm{MultiHead}(X) = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)\,W_O,\quad "
    r"\mathrm{head}_i = \mathrm{Attention}(X W_Q^{(i)}, X W_K^{(i)}, X W_V^{(i)})"
)


def check_heads(d_model: int, n_heads) -> int:
    """Return d_head = d_model // n_heads, or raise `ValueError` if n_heads does not divide d_model."""
    n_heads = check_positive_int(n_heads, "n_heads")
    if d_model % n_heads:
        raise ValueError(
            f"d_model={d_model} is not divisible by n_heads={n_heads}: "
            f"each head needs the same whole number of columns (try one of {divisors(d_model)})"
        )
    return d_model // n_heads


def divisors(d_model: int) -> list[int]:
    """The head counts that split `d_model` evenly."""
    return [h for h in range(1, d_model + 1) if d_model % h == 0]


def split_heads(x, n_heads: int) -> np.ndarray:
    """Split the last axis into heads: (..., n, d_model) -> (..., n_heads, n, d_head).

    Head i gets columns i*d_head .. (i+1)*d_head - 1.
    """
    x = as_real_array(x, "x")
    check_ndim(x, "x", 2, "(..., n, d_model)")
    check_not_empty(x, "x")
    *batch, n, d_model = x.shape
    d_head = check_heads(d_model, n_heads)
    return x.reshape(*batch, n, n_heads, d_head).swapaxes(-2, -3)  # (..., h, n, d_head)


def merge_heads(x) -> np.ndarray:
    """Concatenate the heads again: (..., n_heads, n, d_head) -> (..., n, n_heads * d_head)."""
    x = as_real_array(x, "x")
    check_ndim(x, "x", 3, "(..., n_heads, n, d_head)")
    check_not_empty(x, "x")
    *batch, h, n, d_head = x.shape
    return x.swapaxes(-2, -3).reshape(*batch, n, h * d_head)  # (..., n, d_model)


@dataclass(frozen=True)
class MultiHeadSteps:
    """The intermediates of multi-head attention, per head where there are heads.

    Shapes: q_heads/k_heads/v_heads (..., h, n, d_head), head_outputs (..., h, n, d_head),
    weights (..., h, n, n), concat (..., n, d_model), output (..., n, d_model).
    """

    q_heads: np.ndarray
    k_heads: np.ndarray
    v_heads: np.ndarray
    weights: np.ndarray
    head_outputs: np.ndarray
    concat: np.ndarray
    output: np.ndarray


def _projection(x: np.ndarray, w, b, name: str, d_model: int, dtype) -> np.ndarray:
    """x @ w + b in x's dtype, after checking w is (d_model, d_model) and b is (d_model,) or None."""
    w = as_real_array(w, f"w_{name}")
    check_shape(w, f"w_{name}", (d_model, d_model))
    out = np.matmul(x, w.astype(dtype, copy=False))  # (..., n, d_model), in x's dtype
    if b is not None:
        b = as_real_array(b, f"b_{name}")
        check_shape(b, f"b_{name}", (d_model,))
        out += b.astype(dtype, copy=False)
    return check_result(out, f"the projection x @ w_{name}")


def multi_head_steps(x, w_q, w_k, w_v, w_o, n_heads, *, b_q=None, b_k=None, b_v=None, b_o=None,
                     causal: bool = False, scale: bool = True) -> MultiHeadSteps:
    """Multi-head attention keeping every intermediate. Shapes: x (..., n, d_model)."""
    x = as_real_array(x, "x")
    check_ndim(x, "x", 2, "(..., n, d_model)")
    check_not_empty(x, "x")
    d_model = x.shape[-1]
    check_heads(d_model, n_heads)
    check_positions(x.shape[-2], "x")
    check_dim(d_model, "d_model")
    dtype = result_dtype(x)
    q = _projection(x, w_q, b_q, "q", d_model, dtype)  # (..., n, d_model)
    k = _projection(x, w_k, b_k, "k", d_model, dtype)  # (..., n, d_model)
    v = _projection(x, w_v, b_v, "v", d_model, dtype)  # (..., n, d_model)
    q_h, k_h, v_h = (split_heads(t, n_heads) for t in (q, k, v))  # (..., h, n, d_head)
    head_outputs, weights = scaled_dot_product_attention(q_h, k_h, v_h, causal=causal, scale=scale)
    concat = merge_heads(head_outputs)  # (..., n, d_model)
    output = _projection(concat, w_o, b_o, "o", d_model, concat.dtype)  # (..., n, d_model)
    return MultiHeadSteps(q_h, k_h, v_h, weights, head_outputs, concat, output)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, *, b_q=None, b_k=None, b_v=None, b_o=None,
                         causal: bool = False, scale: bool = True):
    """Return (output, weights) of multi-head self-attention.

    Shapes: x (..., n, d_model), every w (d_model, d_model), every b (d_model,)
    -> output (..., n, d_model), weights (..., n_heads, n, n). Each projection is x @ w + b.
    """
    steps = multi_head_steps(x, w_q, w_k, w_v, w_o, n_heads, b_q=b_q, b_k=b_k, b_v=b_v, b_o=b_o,
                             causal=causal, scale=scale)
    return steps.output, steps.weights
