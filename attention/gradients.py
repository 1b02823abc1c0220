"""Backward passes written by hand: softmax and scaled dot-product attention.

Forward, with c = 1/sqrt(d_k) (or 1 without scaling):

    S = c Q Kᵀ,   P = softmax(S) row by row,   O = P V

Backward, given G = dL/dO (each line is the chain rule through one line above, micrograd-style):

    dV = Pᵀ G                                   O = P V is linear in V
    dP = G Vᵀ                                   ... and linear in P
    dS = P ⊙ (dP - rowsum(dP ⊙ P))              the softmax Jacobian diag(p) - p pᵀ, row by row
    dQ = c dS K,   dK = c dSᵀ Q                 S = c Q Kᵀ

When a row of P is nearly one-hot, diag(p) - p pᵀ is nearly 0, so dS, dQ and dK vanish whatever
G is: a saturated softmax passes almost no gradient back. The tests check every formula here
against centred finite differences in float64.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .checks import as_real_array, check_ndim, check_shape
from .dot_product import check_qkv

SOFTMAX_BACKWARD_LATEX = (
    r"\frac{\partial L}{\partial s_i} = \sum_j \frac{\partial p_j}{\partial s_i}"
    r"\frac{\partial L}{\partial p_j} = p_i \Big( g_i - \sum_j p_j g_j \Big),"
    r"\quad g = \frac{\partial L}{\partial p}"
)
ATTENTION_BACKWARD_LATEX = (
    r"dV = P^\top G,\quad dP = G V^\top,\quad dS = P \odot \big(dP - "
    r"\mathrm{rowsum}(dP \odot P)\big),\quad dQ = \tfrac{1}{\sqrt{d_k}}\, dS\, K,"
    r"\quad dK = \tfrac{1}{\sqrt{d_k}}\, dS^\top Q"
)


def softmax_jacobian(p) -> np.ndarray:
    """The Jacobian dp/ds = diag(p) - p pᵀ of softmax at weights p, one matrix per row.

    Shapes: p (..., m) -> (..., m, m); entry [i, j] is dp_i/ds_j.
    """
    p = as_real_array(p, "p")
    check_ndim(p, "p", 1, "(..., m)")
    diag = p[..., None, :] * np.eye(p.shape[-1], dtype=p.dtype)  # (..., m, m)
    return diag - p[..., :, None] * p[..., None, :]  # (..., m, m)


def softmax_backward(p, grad_p) -> np.ndarray:
    """dL/ds from the softmax's output p and dL/dp: p ⊙ (g - Σ_j p_j g_j), along the last axis.

    Shapes: p (..., m), grad_p (..., m) -> (..., m). The same as (diag(p) - p pᵀ) g, in O(m).
    """
    p = as_real_array(p, "p")
    grad_p = as_real_array(grad_p, "grad_p")
    check_ndim(p, "p", 1, "(..., m)")
    check_shape(grad_p, "grad_p", p.shape)
    return p * (grad_p - (grad_p * p).sum(axis=-1, keepdims=True))  # (..., m)


@dataclass(frozen=True)
class AttentionGrads:
    """The gradients of a loss L with respect to the inputs of softmax(c Q Kᵀ) V.

    Shapes: grad_q (..., n, d_k), grad_k (..., m, d_k), grad_v (..., m, d_v), each the shape of its
    input; grad_scores (..., n, m) = dL/dS for the scores S = c Q Kᵀ that enter the softmax.
    """

    grad_q: np.ndarray
    grad_k: np.ndarray
    grad_v: np.ndarray
    grad_scores: np.ndarray
    scale_factor: float


def attention_backward(q, k, v, weights, grad_output, *, scale: bool = True) -> AttentionGrads:
    """Backward pass of O = softmax(c Q Kᵀ) V by hand, given the forward weights P and G = dL/dO.

    Shapes: q (..., n, d_k), k (..., m, d_k), v (..., m, d_v), weights (..., n, m) as returned by
    `scaled_dot_product_attention(q, k, v, scale=scale)`, grad_output (..., n, d_v).
    c = 1/sqrt(d_k), or 1 with scale=False. No mask: every query may attend to every key.
    """
    q, k, v = check_qkv(q, k, v)
    p = as_real_array(weights, "weights")
    g = as_real_array(grad_output, "grad_output")
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    n, m = q.shape[-2], k.shape[-2]
    check_shape(p, "weights", (*batch, n, m))
    check_shape(g, "grad_output", (*batch, n, v.shape[-1]))
    c = 1.0 / math.sqrt(q.shape[-1]) if scale else 1.0
    grad_v = p.swapaxes(-1, -2) @ g  # (..., m, n) @ (..., n, d_v) -> (..., m, d_v)
    grad_weights = g @ v.swapaxes(-1, -2)  # (..., n, d_v) @ (..., d_v, m) -> (..., n, m)
    grad_scores = softmax_backward(p, grad_weights)  # (..., n, m)
    grad_q = c * (grad_scores @ k)  # (..., n, m) @ (..., m, d_k) -> (..., n, d_k)
    grad_k = c * (grad_scores.swapaxes(-1, -2) @ q)  # (..., m, n) @ (..., n, d_k) -> (..., m, d_k)
    return AttentionGrads(
        _unbroadcast(grad_q, q.shape), _unbroadcast(grad_k, k.shape), _unbroadcast(grad_v, v.shape), grad_scores, c
    )


def _unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum `grad` over the leading axes that broadcasting added or stretched, back to `shape`."""
    extra = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(extra))) if extra > 0 else grad
    stretched = tuple(i for i, size in enumerate(shape) if size == 1 and grad.shape[i] != 1)
    return grad.sum(axis=stretched, keepdims=True) if stretched else grad
