"""Multi-head attention: split d_model into h chunks, attend in each, concatenate, project.

    head_i = Attention(X W_q[:, i], X W_k[:, i], X W_v[:, i])
    MultiHead(X) = Concat(head_1, ..., head_h) W_o

Every head runs exactly the same computation on its own d_head = d_model / h columns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .checks import (
    as_real_array,
    check_ndim,
    check_not_empty,
    check_positive_int,
    check_result,
    check_shape,
)
from .dot_product import attend
from .limits import check_dim, check_positions

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


def check_tokens(x, n_heads) -> tuple[np.ndarray, int]:
    """(x, d_model) for token vectors x (..., n, d_model) that `n_heads` heads can split, or `ValueError` naming
    what is wrong: the checks at the door of every multi-head computation."""
    x = as_real_array(x, "x")
    check_ndim(x, "x", 2, "(..., n, d_model)")
    check_not_empty(x, "x")
    d_model = x.shape[-1]
    check_heads(d_model, n_heads)
    check_positions(x.shape[-2], "x")
    return x, d_model


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
    check_heads(x.shape[-1], n_heads)
    return _split(x, n_heads)


def merge_heads(x) -> np.ndarray:
    """Concatenate the heads again: (..., n_heads, n, d_head) -> (..., n, n_heads * d_head)."""
    x = as_real_array(x, "x")
    check_ndim(x, "x", 3, "(..., n_heads, n, d_head)")
    check_not_empty(x, "x")
    return _merge(x)


def _split(x: np.ndarray, n_heads: int) -> np.ndarray:
    *batch, n, d_model = x.shape
    return x.reshape(*batch, n, n_heads, d_model // n_heads).swapaxes(-2, -3)  # (..., h, n, d_head)


def _merge(x: np.ndarray) -> np.ndarray:
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


def multi_head_steps(
    x, w_q, w_k, w_v, w_o, n_heads, *, b_q=None, b_k=None, b_v=None, b_o=None, causal: bool = False, scale: bool = True
) -> MultiHeadSteps:
    """Multi-head attention keeping every intermediate. Shapes: x (..., n, d_model), every w
    (d_model, d_model), every b (d_model,) or None. Checks every argument once, then computes."""
    x, d_model = check_tokens(x, n_heads)
    check_dim(d_model, "d_model")
    weights = {}
    for name, w, b in (("q", w_q, b_q), ("k", w_k, b_k), ("v", w_v, b_v), ("o", w_o, b_o)):
        weights[f"w_{name}"] = as_real_array(w, f"w_{name}")
        check_shape(weights[f"w_{name}"], f"w_{name}", (d_model, d_model))
        if b is not None:
            weights[f"b_{name}"] = as_real_array(b, f"b_{name}")
            check_shape(weights[f"b_{name}"], f"b_{name}", (d_model,))
    steps = multi_head(x, n_heads, causal=causal, scale=scale, **weights)
    check_result(steps.output, "the multi-head output")
    return steps


def multi_head(
    x: np.ndarray,
    n_heads: int,
    *,
    w_q,
    w_k,
    w_v,
    w_o,
    b_q=None,
    b_k=None,
    b_v=None,
    b_o=None,
    causal: bool = False,
    scale: bool = True,
    kernel=attend,
) -> MultiHeadSteps:
    """The computation itself, on arguments already checked. `kernel(q, k, v, causal, scale)` returns
    (output, weights): the readable reference by default, the blocked one for the real model.

    Shapes: as `multi_head_steps`; the projections are done in x's dtype.
    """
    q = _project(x, w_q, b_q, "q")  # (..., n, d_model)
    k = _project(x, w_k, b_k, "k")  # (..., n, d_model)
    v = _project(x, w_v, b_v, "v")  # (..., n, d_model)
    q_h, k_h, v_h = (_split(t, n_heads) for t in (q, k, v))  # (..., h, n, d_head)
    head_outputs, weights = kernel(q_h, k_h, v_h, causal, scale)  # (..., h, n, d_head), (..., h, n, n)
    concat = _merge(head_outputs)  # (..., n, d_model)
    output = _project(concat, w_o, b_o, "o")  # (..., n, d_model)
    return MultiHeadSteps(q_h, k_h, v_h, weights, head_outputs, concat, output)


def _project(x: np.ndarray, w: np.ndarray, b, name: str) -> np.ndarray:
    """x @ w + b in x's dtype. Shapes: x (..., n, d_in), w (d_in, d_out), b (d_out,) or None.

    The result is checked (not the arguments): finite inputs can still overflow, and the core never
    hands on inf or NaN silently."""
    out = np.matmul(x, w.astype(x.dtype, copy=False))  # (..., n, d_out)
    if b is not None:
        out += b.astype(x.dtype, copy=False)
    return check_result(out, f"the projection x @ w_{name}")


def multi_head_attention(
    x, w_q, w_k, w_v, w_o, n_heads, *, b_q=None, b_k=None, b_v=None, b_o=None, causal: bool = False, scale: bool = True
):
    """Return (output, weights) of multi-head self-attention.

    Shapes: x (..., n, d_model), every w (d_model, d_model), every b (d_model,)
    -> output (..., n, d_model), weights (..., n_heads, n, n). Each projection is x @ w + b.
    """
    steps = multi_head_steps(
        x, w_q, w_k, w_v, w_o, n_heads, b_q=b_q, b_k=b_k, b_v=b_v, b_o=b_o, causal=causal, scale=scale
    )
    return steps.output, steps.weights
