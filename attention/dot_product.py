"""Scaled dot-product attention, the readable way: softmax(Q Kᵀ / sqrt(d_k)) V.

Each query is compared with every key by a dot product; the softmax turns one query's row of
scores into weights that sum to 1; the output for that query is the weighted average of the
values. Dividing by sqrt(d_k) keeps the scores' spread independent of the dimension.

`attention_steps` is the code every page shows and checks, one line per step. The public
`scaled_dot_product_attention` returns what it returns (output and weights) from the blocked kernel
(`blocked_attention.py`), which computes the same thing arranged for speed; property tests hold the
two equal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .blocked_attention import blocked_kernel
from .checks import as_real_array, check_ndim, check_not_empty, check_result, result_dtype
from .limits import check_dim, check_positions, check_scores
from .masks import causal_mask, padding_mask, sequence_mask
from .stable_softmax import softmax_inplace

ATTENTION_LATEX = r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V"


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
    masked: np.ndarray  # scaled (+ bias) with -inf where attention is not allowed
    weights: np.ndarray  # softmax of masked, rows sum to 1
    output: np.ndarray  # weights @ V
    scale_factor: float  # 1/sqrt(d_k), or 1.0 when scale=False
    allowed: np.ndarray  # bool, True = may attend (all True when nothing is masked)
    bias: np.ndarray | None = None  # added to `scaled` before the mask (ALiBi's distance penalty), if any

    @property
    def d_k(self) -> int:
        return self.q.shape[-1]


def attention_steps(q, k, v, *, causal: bool = False, scale: bool = True, mask=None, bias=None) -> AttentionSteps:
    """Compute attention step by step, keeping every intermediate for display.

    Shapes: q (..., n, d_k), k (..., m, d_k), v (..., m, d_v) -> AttentionSteps. `mask` is bool,
    broadcastable to (..., n, m), True = may attend; with `causal` too, both apply. Masked scores
    become -inf *before* the softmax, so their weights are exactly 0. `bias` (finite, broadcastable to
    (..., n, m)) is added to the scaled scores before the mask: ALiBi's distance penalty
    (attention.positions.alibi_bias). `scale=False` leaves out 1/sqrt(d_k).
    Raises `ValueError` naming the argument for bad shapes, dtypes, NaN/inf, or a row with no key.
    """
    q, k, v = check_qkv(q, k, v)
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    shape = (*batch, q.shape[-2], k.shape[-2])
    allowed = allowed_positions(mask, causal, shape)
    return steps(q, k, v, allowed, scale, check_bias(bias, shape))


def scaled_dot_product_attention(q, k, v, *, causal: bool = False, scale: bool = True, mask=None, bias=None):
    """Return (output, weights) of softmax(Q Kᵀ / sqrt(d_k) + bias) V: what `attention_steps` computes.

    Shapes: q (..., n, d_k), k (..., m, d_k), v (..., m, d_v) -> output (..., n, d_v), weights (..., n, m).
    Arguments and errors as `attention_steps`; the arithmetic runs in the blocked kernel (queries in
    blocks, causal blocks that skip the future, a thread pool at large sizes), held equal to the steps
    by property tests.
    """
    q, k, v = check_qkv(q, k, v)
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    shape = (*batch, q.shape[-2], k.shape[-2])
    hidden = None if mask is None else ~allowed_positions(mask, causal, shape)  # causal alone: the kernel's own
    return blocked_kernel(q, k, v, causal, scale, blocked=hidden, bias=check_bias(bias, shape))


def steps(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, allowed: np.ndarray | None, scale: bool, bias: np.ndarray | None = None
) -> AttentionSteps:
    """The computation itself, on arrays already checked (`allowed`: bool (..., n, m) or None for all;
    `bias`: float (..., n, m) or None).

    Shapes: as `attention_steps`.
    """
    dtype = result_dtype(q, k, v)
    q, k, v = (a.astype(dtype, copy=False) for a in (q, k, v))
    scores = check_result(q @ k.swapaxes(-1, -2), "the scores q·kᵀ")  # (..., n, m)
    scale_factor = 1.0 / math.sqrt(q.shape[-1]) if scale else 1.0
    scaled = scores * dtype.type(scale_factor)  # (..., n, m)
    biased = scaled if bias is None else check_result(scaled + bias.astype(dtype), "the scores plus the bias")
    allowed = np.ones(scores.shape, bool) if allowed is None else np.broadcast_to(allowed, scores.shape)
    masked = np.where(allowed, biased, dtype.type(-np.inf))  # (..., n, m): -inf where not allowed
    weights = softmax_inplace(masked.copy())  # (..., n, m), every row sums to 1
    output = check_result(weights @ v, "the attention output")  # (..., n, d_v)
    return AttentionSteps(q, k, v, scores, scaled, masked, weights, output, scale_factor, allowed, bias)


def attend(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool, scale: bool) -> tuple[np.ndarray, np.ndarray]:
    """(output, weights) of the reference computation on arrays already checked: the kernel that
    multi-head attention and the block run by default (the real model passes the blocked one)."""
    allowed = causal_mask(q.shape[-2], k.shape[-2]) if causal else None
    s = steps(q, k, v, allowed, scale)
    return s.output, s.weights


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
        batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(
            f"the leading (batch/head) axes of q {q.shape}, k {k.shape} and v {v.shape} do not broadcast"
        ) from None
    check_positions(max(q.shape[-2], k.shape[-2]), "the sequence")
    check_dim(max(q.shape[-1], v.shape[-1]), "d_k or d_v")
    check_scores((*batch, q.shape[-2], k.shape[-2]))
    return q, k, v


def allowed_positions(mask, causal: bool, scores_shape: tuple[int, ...]) -> np.ndarray | None:
    """The combined bool mask (True = may attend) for scores of `scores_shape`, or None for no mask.

    Shapes: mask broadcastable to (..., n, m); the result broadcasts to `scores_shape`.
    Raises `ValueError` if the mask has the wrong dtype or shape, or leaves a query no key at all.
    """
    n, m = scores_shape[-2:]
    allowed = causal_mask(n, m) if causal else None
    if mask is None:
        return allowed  # causal alone always lets query i see key 0
    mask = check_mask(mask, scores_shape)
    allowed = np.broadcast_to(mask if allowed is None else mask & allowed, (*mask.shape[:-2], n, m))
    blind = ~allowed.any(axis=-1)  # (...,) True for a query with nothing to attend to
    if blind.any():
        *where, i = (int(j) for j in np.argwhere(blind)[0])
        raise ValueError(
            f"the mask{' with causal=True' if causal else ''} leaves query {i}"
            f"{f' at batch index {tuple(where)}' if where else ''} no key to attend to "
            "(its row is all False); softmax over nothing is undefined"
        )
    return allowed


def check_mask(mask, scores_shape: tuple[int, ...]) -> np.ndarray:
    """`mask` as a bool array broadcastable to `scores_shape`, or raise `ValueError` saying why not."""
    mask = np.asarray(mask)
    if mask.dtype != np.bool_:
        raise ValueError(f"mask has dtype {mask.dtype}; expected bool (True = may attend)")
    _check_broadcasts(mask, "mask", scores_shape)
    return mask


def check_bias(bias, scores_shape: tuple[int, ...]) -> np.ndarray | None:
    """`bias` as a finite float array broadcastable to `scores_shape` (None stays None)."""
    if bias is None:
        return None
    bias = as_real_array(bias, "bias")  # finite: a score is removed with the mask, not with a bias of -inf
    _check_broadcasts(bias, "bias", scores_shape)
    return bias


def _check_broadcasts(a: np.ndarray, name: str, scores_shape: tuple[int, ...]) -> None:
    try:
        fits = np.broadcast_shapes(a.shape, scores_shape) == tuple(scores_shape)
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"{name} has shape {a.shape}; expected a shape broadcastable to the scores {tuple(scores_shape)}"
        )


@dataclass(frozen=True)
class PaddedAttention:
    """Attention over a batch of sequences padded to one length n, with the padding accounted for.

    Shapes: output (batch, n, d_v), weights (batch, n, n), used (batch, n), allowed (batch, n, n).
    used[b, i] is False for a padded query: its rows of `output` and `weights` are exactly 0 (unused,
    never NaN). Padded keys have weight exactly 0 in every row.
    """

    output: np.ndarray
    weights: np.ndarray
    used: np.ndarray
    allowed: np.ndarray


def padded_attention(q, k, v, lengths, *, causal: bool = False, scale: bool = True, mask=None) -> PaddedAttention:
    """Attention over a padded batch: padded keys masked, padded queries reported as unused.

    Shapes: q (batch, n, d_k), k (batch, n, d_k), v (batch, n, d_v), lengths (batch,) whole numbers in
    1..n -> PaddedAttention. `mask` (bool, broadcastable to (batch, n, n)) and `causal` apply on top of
    the padding mask. A padded query attends to its sequence's real keys, so the softmax is always
    defined; its result means nothing and is replaced by 0 (used = False). Raises `ValueError` for bad
    lengths or shapes, or if a real query is left without any key.
    """
    q, k, v = check_qkv(q, k, v)
    if not (q.ndim == k.ndim == v.ndim == 3 and q.shape[0] == k.shape[0] == v.shape[0] == len(np.atleast_1d(lengths))):
        raise ValueError(
            f"q {q.shape}, k {k.shape}, v {v.shape} and lengths (of {np.size(lengths)}) must describe one batch: "
            "(batch, n, d) arrays and one length per sequence"
        )
    batch, n = q.shape[0], q.shape[1]
    if k.shape[1] != n:
        raise ValueError(f"k has {k.shape[1]} positions but q has {n}: a padded batch has one length n for both")
    keys, used = padding_mask(lengths, n), sequence_mask(lengths, n)  # (batch, n, n), (batch, n)
    wanted = keys if mask is None else keys & check_mask(mask, (batch, n, n))
    if causal:
        wanted = wanted & causal_mask(n)
    wanted = np.where(used[:, :, None], wanted, keys)  # (batch, n, n): a padded query's row only needs to be defined
    allowed = allowed_positions(wanted, False, (batch, n, n))  # raises if a real query is left no key
    s = steps(q, k, v, allowed, scale)
    weights = np.where(used[:, :, None], s.weights, 0.0).astype(s.weights.dtype)  # (batch, n, n)
    output = np.where(used[:, :, None], s.output, 0.0).astype(s.output.dtype)  # (batch, n, d_v)
    return PaddedAttention(output, weights, used, np.asarray(allowed) & used[:, :, None])
