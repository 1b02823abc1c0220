"""Scaled dot-product attention: softmax(Q Kᵀ / sqrt(d_k)) V.

Each query is compared with every key by a dot product; the softmax turns one query's row of
scores into weights that sum to 1; the output for that query is the weighted average of the
values. Dividing by sqrt(d_k) keeps the scores' spread independent of the dimension.
"""
from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache

import numpy as np

from .checks import as_real_array, check_ndim, check_not_empty, check_result, result_dtype
from .limits import check_dim, check_positions, check_scores
from .masks import causal_mask
from .stable_softmax import softmax, softmax_inplace

ATTENTION_LATEX = r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V"

# Speed, not maths: these change how the work is arranged, never what is computed.
# Queries are processed BLOCK_ROWS at a time; with causal=True a block needs only the keys up to its
# last query (the rest are its future), which skips almost half the work at n = 512.
BLOCK_ROWS = 64
# From this many scores the softmax's blocks are shared out to a small thread pool: numpy releases the
# GIL in exp and the reductions, so they really run at once. The matmuls stay on the calling thread,
# where BLAS already uses every core. Below the threshold, threads cost more than they save.
PARALLEL_MIN_SCORES = 2**18
WORKERS = min(4, os.cpu_count() or 1)


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
    mask = np.asarray(mask)
    if mask.dtype != np.bool_:
        raise ValueError(f"mask has dtype {mask.dtype}; expected bool (True = may attend)")
    try:
        fits = np.broadcast_shapes(mask.shape, scores_shape) == tuple(scores_shape)
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"mask has shape {mask.shape}; "
                         f"expected a shape broadcastable to the scores {tuple(scores_shape)}")
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


def scaled_dot_product_attention(q, k, v, *, causal: bool = False, scale: bool = True, mask=None):
    """Return (output, weights) of softmax(Q Kᵀ / sqrt(d_k)) V.

    Shapes: q (..., n, d_k), k (..., m, d_k), v (..., m, d_v) -> output (..., n, d_v), weights (..., n, m).
    `scale=False` leaves out the 1/sqrt(d_k). `mask` is bool, broadcastable to (..., n, m), True = may
    attend; masked scores become -inf *before* the softmax, so their weights are exactly 0.
    The same maths as `attention_steps`, arranged for speed: each step runs over blocks of queries,
    and the scores are computed straight into the weights array and normalised there.
    """
    q, k, v = check_qkv(q, k, v)
    dtype = result_dtype(q, k, v)
    q, k, v = (a.astype(dtype, copy=False) for a in (q, k, v))
    *_, n, d_k = q.shape
    m, d_v = v.shape[-2:]
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2])  # the weights' leading axes
    # With a mask, `blocked` marks every hidden score (causal included); causal alone is done per block.
    blocked = None if mask is None else ~allowed_positions(mask, causal, (*batch, n, m))  # (..., n, m)
    if scale:  # scaling q (n·d_k numbers) is cheaper than scaling the scores (n·m numbers)
        q = q * dtype.type(1.0 / math.sqrt(d_k))
    k_t = np.ascontiguousarray(k.swapaxes(-1, -2))  # (..., d_k, m), row-major: faster BLAS on blocks
    weights = np.zeros((*batch, n, m), dtype)  # keys a causal block skips keep weight exactly 0
    output = np.empty((*np.broadcast_shapes(batch, v.shape[:-2]), n, d_v), dtype)
    blocks = query_blocks(n, m, causal)
    for rows, keys in blocks:  # 1. the scores (q is already scaled), written straight into the weights
        np.matmul(q[..., rows, :], k_t[..., keys], out=weights[..., rows, keys])  # (..., r, keys)
    run_blocks(lambda block: _mask_and_softmax(weights, blocked, causal, *block), blocks,
               parallel=weights.size >= PARALLEL_MIN_SCORES)  # 2. softmax, in place
    for rows, keys in blocks:  # 3. the weighted average of the values
        np.matmul(weights[..., rows, keys], v[..., keys, :], out=output[..., rows, :])  # (..., r, d_v)
    return check_result(output, "the attention output"), weights


def query_blocks(n: int, m: int, causal: bool) -> list[tuple[slice, slice]]:
    """(rows, keys) for each block of BLOCK_ROWS queries: the keys that block needs.

    With causal=True a block needs only keys 0..(its last query); without, all m keys.
    Depends only on the shapes, never on threads, so results are reproducible bit for bit.
    """
    blocks = []
    for start in range(0, n, BLOCK_ROWS):
        stop = min(start + BLOCK_ROWS, n)
        blocks.append((slice(start, stop), slice(0, min(stop, m) if causal else m)))
    return blocks


def _mask_and_softmax(weights: np.ndarray, blocked, causal: bool, rows: slice, keys: slice) -> None:
    """Turn the scores in weights[..., rows, keys] into attention weights, in place."""
    scores = weights[..., rows, keys]  # (..., r, keys), a view
    if blocked is not None:
        np.copyto(scores, -np.inf, where=blocked[..., rows, keys])
    elif causal and rows.start < keys.stop:  # only the block's last columns can lie in the future
        corner = scores[..., rows.start:]  # (..., r, keys.stop - rows.start); above its diagonal: the future
        np.copyto(corner, -np.inf, where=~causal_mask(*corner.shape[-2:]))
    try:
        softmax_inplace(scores)  # rows sum to 1
    except ValueError:  # only an overflowed score gets here: fully masked rows were refused up front
        raise ValueError(f"the scores q·kᵀ of queries {rows.start}..{rows.stop - 1} overflowed {scores.dtype}: "
                         "q and k are too large") from None


def run_blocks(work, blocks: list, *, parallel: bool) -> None:
    """Call work(block) for every block: on the thread pool when `parallel` and there are several."""
    if parallel and len(blocks) > 1 and WORKERS > 1:
        for _ in _thread_pool().map(work, blocks):  # consuming the results re-raises a block's error
            pass
    else:
        for block in blocks:
            work(block)


@cache
def _thread_pool() -> ThreadPoolExecutor:
    """The pool every call shares, started on first use; its threads keep no state between calls."""
    return ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="attention")


if hasattr(os, "register_at_fork"):  # a forked child has none of the parent's threads: it starts its own pool
    os.register_at_fork(after_in_child=_thread_pool.cache_clear)


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
    q, k, v = (a.astype(dtype, copy=False) for a in (q, k, v))
    scores = check_result(q @ k.swapaxes(-1, -2), "the scores q·kᵀ")  # (..., n, m)
    scale_factor = 1.0 / math.sqrt(q.shape[-1]) if scale else 1.0
    scaled = scores * dtype.type(scale_factor)  # (..., n, m)
    allowed = allowed_positions(mask, causal, scores.shape)
    allowed = np.ones(scores.shape, dtype=bool) if allowed is None else np.broadcast_to(allowed, scores.shape)
    masked = np.where(allowed, scaled, dtype.type(-np.inf))  # (..., n, m)
    weights = softmax(masked)  # (..., n, m), rows sum to 1
    output = check_result(weights @ v, "the attention output")  # (..., n, d_v)
    return AttentionSteps(q, k, v, scores, scaled, masked, weights, output, scale_factor, allowed)
