"""The same attention as `dot_product.py`, arranged for speed: blocks of queries, threads for the softmax.

Used where speed matters (the real model's forward pass, large benchmarks); the pages teach and check
the readable version. Property tests hold the two equal over random shapes, masks and dtypes.

What changes is only how the work is arranged, never what is computed:
- queries are processed BLOCK_ROWS at a time, and with causal=True a block needs only the keys up to
  its last query (the rest are its future), which skips almost half the work at n = 512;
- the scores are written straight into the weights array and normalised there (no n×m temporaries);
- from PARALLEL_MIN_SCORES scores on, the blocks' softmaxes run on a small thread pool: numpy releases
  the GIL in exp and the reductions. The matmuls stay on the calling thread, where BLAS has its own threads.
"""

from __future__ import annotations

import math

import numpy as np

from .checks import check_result, result_dtype
from .chunks import map_pieces, run_all
from .dot_product import allowed_positions, check_bias, check_qkv
from .masks import causal_mask
from .stable_softmax import softmax_inplace

BLOCK_ROWS = 64
PARALLEL_MIN_SCORES = 2**18
UNBLOCKED_MAX_SCORES = 2**22  # 12 heads × 256 × 256 = 786,432 scores: one matmul, one softmax, one matmul


def blocked_attention(q, k, v, *, causal: bool = False, scale: bool = True, mask=None, bias=None):
    """Return (output, weights) of softmax(Q Kᵀ / sqrt(d_k) + bias) V, computed block by block.

    Shapes: q (..., n, d_k), k (..., m, d_k), v (..., m, d_v) -> output (..., n, d_v), weights (..., n, m).
    Arguments and errors as `scaled_dot_product_attention`.
    """
    q, k, v = check_qkv(q, k, v)
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    shape = (*batch, q.shape[-2], k.shape[-2])
    blocked = None if mask is None else ~allowed_positions(mask, causal, shape)
    return blocked_kernel(q, k, v, causal, scale, blocked=blocked, bias=check_bias(bias, shape))


def blocked_kernel(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    causal: bool,
    scale: bool,
    *,
    blocked=None,
    weights_out=None,
    bias=None,
):
    """(output, weights) on arrays already checked. `blocked`: bool (..., n, m), True = hidden, or None.
    `weights_out`: where to write the weights when nothing is masked (the real model keeps every layer's
    in one array: no copy afterwards), else a new array. `bias`: float, broadcastable to (..., n, m), added
    to the scaled scores (ALiBi's penalty), or None.

    The real model's forward pass calls this directly, once per layer, with nothing left to check.
    """
    dtype = result_dtype(q, k, v)
    q, k, v = (a.astype(dtype, copy=False) for a in (q, k, v))
    *_, n, d_k = q.shape
    m, d_v = v.shape[-2:]
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2])  # the weights' leading axes
    if scale:  # scaling q (n·d_k numbers) is cheaper than scaling the scores (n·m numbers)
        q = q * dtype.type(1.0 / math.sqrt(d_k))
    output = np.empty((*np.broadcast_shapes(batch, v.shape[:-2]), n, d_v), dtype)
    if not causal and blocked is None and n * m * math.prod(batch) <= UNBLOCKED_MAX_SCORES:
        # Nothing to mask, nothing to skip (the real model, up to 256 tokens): no blocks, no threads. On two
        # cores the threaded softmax was measured slower at this size than one pass over all the scores.
        weights = np.matmul(q, k.swapaxes(-1, -2), out=weights_out)  # (..., n, m)
        if bias is not None:
            weights += bias.astype(dtype, copy=False)  # (..., n, m)
        rows = weights.reshape(-1, m)  # (batch · n, m): the softmax in cache-sized pieces
        map_pieces(lambda piece: _softmax_checked(rows[piece], piece.start, piece.stop), *rows.shape)
        np.matmul(weights, v, out=output)  # (..., n, d_v)
        return check_result(output, "the attention output"), weights
    k_t = np.ascontiguousarray(k.swapaxes(-1, -2))  # (..., d_k, m), row-major: faster BLAS on blocks
    weights = np.zeros((*batch, n, m), dtype)  # keys a causal block skips keep weight exactly 0
    blocks = query_blocks(n, m, causal)
    if bias is not None:  # broadcast once, so that each block can take its own slice
        bias = np.broadcast_to(bias.astype(dtype, copy=False), weights.shape)  # (..., n, m), a view
    for rows, keys in blocks:  # 1. the scores (q is already scaled), written straight into the weights
        np.matmul(q[..., rows, :], k_t[..., keys], out=weights[..., rows, keys])  # (..., r, keys)
    run_blocks(
        lambda block: _mask_and_softmax(weights, blocked, causal, *block, bias=bias),
        blocks,
        parallel=weights.size >= PARALLEL_MIN_SCORES,
    )  # 2. softmax, in place
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


def _mask_and_softmax(weights: np.ndarray, blocked, causal: bool, rows: slice, keys: slice, bias=None) -> None:
    """Turn the scores in weights[..., rows, keys] into attention weights, in place."""
    scores = weights[..., rows, keys]  # (..., r, keys), a view
    if bias is not None:
        scores += bias[..., rows, keys]
    if blocked is not None:
        np.copyto(scores, -np.inf, where=blocked[..., rows, keys])
    elif causal and rows.start < keys.stop:  # only the block's last columns can lie in the future
        corner = scores[..., rows.start :]  # (..., r, keys.stop - rows.start); above its diagonal: the future
        np.copyto(corner, -np.inf, where=~causal_mask(*corner.shape[-2:]))
    _softmax_checked(scores, rows.start, rows.stop)


def _softmax_checked(scores: np.ndarray, first: int, stop: int) -> None:
    """Softmax over the last axis in place (rows sum to 1), saying which queries overflowed if any did."""
    try:
        softmax_inplace(scores)
    except ValueError:  # only an overflowed score gets here: fully masked rows were refused up front
        raise ValueError(
            f"the scores q·kᵀ of queries {first}..{stop - 1} overflowed {scores.dtype}: q and k are too large"
        ) from None


def run_blocks(work, blocks: list, *, parallel: bool) -> None:
    """Call work(block) for every block: on the shared thread pool when `parallel` and there are several."""
    run_all(work, blocks, parallel=parallel)
