"""Scaled dot-product attention: softmax(Q Kᵀ / sqrt(d_k)) V.

Each query is compared with every key by a dot product; the softmax turns one query's row of
scores into weights that sum to 1; the output for that query is the weighted average of the
values. Dividing by sqrt(d_k) keeps the scores' spread independent of the dimension.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._checks import as_real_array, check_ndim, check_not_empty, result_dtype
from .masks import causal_mask
from .softmax import softmax, softmax_inplace

ATTENTION_LATEX = r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V"


def check_qkv(q, k, v) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate q (..., n, d_k), k (..., m, d_k), v (..., m, d_v) and return them as float arrays."""
    q = as_real_array(q, "q")
    k = as_real_array(k, "k")
    v = as_real_array(v, "v")
    for name, a in (("q", q), ("k", k), ("v", v)):
        check_ndim(a, name, 2, "(..., positions, dimensions)")
        check_not_empty(a, name)
    if k.shape[-1] != q.shape[-1]:
        raise ValueError(
            f"k has d_k={k.shape[-1]} but q has d_k={q.shape[-1]} "
            f"(q {q.shape}, k {k.shape}): every query is dotted with every key, so they need the same length"
        )
    if v.shape[-2] != k.shape[-2]:
        raise ValueError(
            f"v has {v.shape[-2]} positions but k has {k.shape[-2]} (k {k.shape}, v {v.shape}): "
            "each key needs exactly one value"
        )
    try:
        np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(
            f"the leading (batch/head) axes of q {q.shape}, k {k.shape} and v {v.shape} do not broadcast"
        ) from None
    return q, k, v


def allowed_positions(mask, causal: bool, scores_shape: tuple[int, ...]) -> np.ndarray | None:
    """The combined bool mask (True = may attend) for scores of `scores_shape`, or None for no mask.

    Shapes: mask broadcastable to (..., n, m); the result broadcasts to `scores_shape`.
    """
    n, m = scores_shape[-2:]
    allowed = causal_mask(n, m) if causal else None
    if mask is None:
        return allowed
    mask = np.asarray(mask)
    if mask.dtype != np.bool_:
        raise ValueError(f"mask has dtype {mask.dtype}; expected bool (True = may attend)")
    try:
        fits = np.broadcast_shapes(mask.shape, scores_shape) == tuple(scores_shape)
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"mask has shape {mask.shape}; expected a shape broadcastable to the scores {tuple(scores_shape)}")
    return mask if allowed is None else mask & allowed


def scaled_dot_product_attention(q, k, v, *, causal: bool = False, scale: bool = True, mask=None):
    """Return (output, weights) of softmax(Q Kᵀ / sqrt(d_k)) V.

    Shapes: q (..., n, d_k), k (..., m, d_k), v (..., m, d_v) -> output (..., n, d_v), weights (..., n, m).
    `scale=False` leaves out the 1/sqrt(d_k). `mask` is bool, broadcastable to (..., n, m), True = may
    attend; masked scores become -inf *before* the softmax, so their weights are exactly 0.
    """
    q, k, v = check_qkv(q, k, v)
    dtype = result_dtype(q, k, v)
    d_k = q.shape[-1]
    if scale:  # scaling q (n·d_k numbers) is cheaper than scaling the scores (n·m numbers)
        q = q * dtype.type(1.0 / math.sqrt(d_k))
    scores = np.matmul(q, k.swapaxes(-1, -2), dtype=dtype)  # (..., n, m)
    allowed = allowed_positions(mask, causal, scores.shape)
    if allowed is not None:
        np.copyto(scores, -np.inf, where=~allowed)
    weights = softmax_inplace(scores)  # (..., n, m), rows sum to 1
    output = np.matmul(weights, v, dtype=dtype)  # (..., n, d_v)
    return output, weights


@dataclass(frozen=True)
class AttentionSteps:
    """Every intermediate of one attention computation, in the order the app shows them.

    Shapes: q (n, d_k), k (m, d_k), v (m, d_v), scores/scaled/masked/weights (n, m), output (n, d_v)
    (with any leading batch axes in front).
    """

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    scores: np.ndarray  # Q Kᵀ
    scaled: np.ndarray  # Q Kᵀ / sqrt(d_k), or Q Kᵀ again when scale=False
    masked: np.ndarray  # scaled with -inf where attention is not allowed
    weights: np.ndarray  # softmax of masked, rows sum to 1
    output: np.ndarray  # weights @ V
    scale_factor: float  # 1/sqrt(d_k), or 1.0 when scale=False
    allowed: np.ndarray  # bool, True = may attend (all True when nothing is masked)

    @property
    def d_k(self) -> int:
        return self.q.shape[-1]


def attention_steps(q, k, v, *, causal: bool = False, scale: bool = True, mask=None) -> AttentionSteps:
    """Compute attention the readable way, keeping every intermediate for display.

    Shapes: as `scaled_dot_product_attention`. Same maths, step by step: scores, scaled, masked,
    weights, output.
    """
    q, k, v = check_qkv(q, k, v)
    dtype = result_dtype(q, k, v)
    scores = np.matmul(q, k.swapaxes(-1, -2), dtype=dtype)  # (..., n, m)
    scale_factor = 1.0 / math.sqrt(q.shape[-1]) if scale else 1.0
    scaled = scores * dtype.type(scale_factor)
    allowed = allowed_positions(mask, causal, scores.shape)
    allowed = np.ones(scores.shape, dtype=bool) if allowed is None else np.broadcast_to(allowed, scores.shape)
    masked = np.where(allowed, scaled, dtype.type(-np.inf))
    weights = softmax(masked)
    output = np.matmul(weights, v, dtype=dtype)  # (..., n, d_v)
    return AttentionSteps(q, k, v, scores, scaled, masked, weights, output, scale_factor, allowed)
