"""The same attention as `attention_steps`, arranged for speed: the kernel behind the public call.

`scaled_dot_product_attention` (dot_product.py) checks its arguments and runs `blocked_kernel`; the
real model runs it once per layer. The pages teach and check the readable `attention_steps`; property
tests hold the two equal over random shapes, batch axes, masks, biases and dtypes.

What changes is only how the work is arranged, never what is computed:
- queries are taken BLOCK_ROWS at a time, and with causal=True a block needs only the keys up to its
  last query (the rest are its future): almost half the work is skipped at n = 512;
- one task takes a few heads × one block of queries through all three steps (scores, softmax, weighted
  average) while its scores are still in the core's cache, instead of three passes over all the scores;
- from PARALLEL_MIN_SCORES scores on, the tasks run on a small thread pool. BLAS is held to one thread
  meanwhile (chunks.one_blas_thread): a BLAS that splits every matmul over both cores waits for the
  slower core at each call, and on a shared machine that core is often busy (medians 3-30x the best
  call, measured). Off the pool too, so that the result never depends on the thread counts;
- the softmax leaves out the shift by the row maximum where it cannot matter. softmax(s) = softmax(s - c)
  for any c; the readable version takes c = max_j s_ij so that exp cannot overflow. Here a row whose
  scores are bounded, |s_ij| <= |q_i|·max_j |k_j| <= SHIFT_FREE_LIMIT (Cauchy-Schwarz, plus the
  largest |bias|), takes c = 0: exp(s_ij) can neither overflow nor underflow, and the pass that finds a
  maximum per row (a per-row overhead of ~70 ns in numpy) and the pass that subtracts it are saved.
  Other rows take their maximum. Each row's choice depends on its own query and keys only, so causal
  outputs still ignore later tokens bit for bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .checks import check_result, result_dtype
from .chunks import WORKERS, map_pieces, one_blas_thread, run_all
from .stable_softmax import softmax_inplace

BLOCK_ROWS = 64
TASK_SCORES = 2**17  # scores per task (512 KiB of float32): a task's scores stay in a core's L2 cache
PARALLEL_MIN_SCORES = 2**18
UNBLOCKED_MAX_SCORES = 2**22  # 12 heads × 256 × 256 = 786,432 scores: one matmul, one softmax, one matmul
SHIFT_FREE_LIMIT = 64.0  # |score| bound for a softmax without its shift: e^64·4096 keys < float32's largest


@dataclass(frozen=True)
class Work:
    """What every task reads and writes, with the batch axes flattened to one axis of `heads`.

    Shapes: q (heads, n, d_k), already scaled; k (heads, m, d_k); v (heads, m, d_v); weights (heads,
    n, m) and output (heads, n, d_v), written by the tasks (output None when v brings batch axes of its
    own: step 3 then runs after the tasks); hidden (heads, n, m) bool, True = masked, or None; bias
    (heads, n, m) or None; shifted (heads, n) bool, True for rows whose softmax subtracts the row maximum.
    """

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    weights: np.ndarray
    output: np.ndarray | None
    causal: bool
    hidden: np.ndarray | None
    bias: np.ndarray | None
    shifted: np.ndarray


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
    """(output, weights) of softmax(Q Kᵀ / sqrt(d_k) + bias) V on arrays already checked.

    Shapes: q (..., n, d_k), k (..., m, d_k), v (..., m, d_v) -> output (..., n, d_v), weights (..., n, m).
    `blocked`: bool, broadcastable to (..., n, m), True = hidden, or None. `weights_out`: where to write
    the weights (the real model keeps every layer's in one array: no copy afterwards), else a new array.
    `bias`: float, broadcastable to (..., n, m), added to the scaled scores (ALiBi's penalty), or None.
    """
    dtype = result_dtype(q, k, v)
    q, k, v = (a.astype(dtype, copy=False) for a in (q, k, v))
    *_, n, d_k = q.shape
    m, d_v = v.shape[-2:]
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2])  # the weights' leading axes
    out_batch = np.broadcast_shapes(batch, v.shape[:-2])  # the output's
    if scale:  # scaling q (n·d_k numbers) is cheaper than scaling the scores (n·m numbers)
        q = q * dtype.type(1.0 / math.sqrt(d_k))
    output = np.empty((*out_batch, n, d_v), dtype)
    if not causal and blocked is None and n * m * math.prod(batch) <= UNBLOCKED_MAX_SCORES:
        return _unblocked(q, k, v, output, weights_out=weights_out, bias=bias)
    weights = np.empty((*batch, n, m), dtype) if weights_out is None else weights_out
    heads = math.prod(batch)
    q, k = _flat(q, batch), _flat(k, batch)  # (heads, n, d_k), (heads, m, d_k)
    fused = out_batch == batch  # else v has batch axes of its own: step 3 runs once, after the tasks
    work = Work(
        q=q,
        k=k,
        v=_flat(v, batch) if fused else v,
        weights=weights.reshape(heads, n, m),  # a view: the tasks write into `weights`
        output=output.reshape(heads, n, d_v) if fused else None,
        causal=causal,
        hidden=None if blocked is None else _flat(blocked, batch),
        bias=None if bias is None else _flat(bias.astype(dtype, copy=False), batch),
        shifted=shifted_rows(q, k, causal, bias),
    )
    parallel = weights.size >= PARALLEL_MIN_SCORES
    tasks = plan_tasks(heads, n, m, causal, min_tasks=2 * WORKERS if parallel else 1)
    with one_blas_thread() as single:  # on the pool or not, every matmul runs the same way: the same bits
        run_all(lambda task: attend_block(work, *task), tasks, parallel=parallel and single)  # never both pools
    if not fused:
        np.matmul(weights, v, out=output)  # (..., n, d_v); keys a causal block skipped have weight 0
    return check_result(output, "the attention output"), weights


def _unblocked(q, k, v, output, *, weights_out, bias):
    """Nothing to mask, nothing to skip (the real model, up to 256 tokens): no blocks, no threads. On two
    cores this was measured faster at the real model's sizes than blocks on the thread pool."""
    m = k.shape[-2]
    weights = np.matmul(q, k.swapaxes(-1, -2), out=weights_out)  # (..., n, m)
    if bias is not None:
        weights += bias.astype(weights.dtype, copy=False)  # (..., n, m)
    rows = weights.reshape(-1, m)  # (batch · n, m): the softmax in cache-sized pieces
    map_pieces(lambda piece: _softmax_checked(rows[piece], piece.start, piece.stop), *rows.shape)
    np.matmul(weights, v, out=output)  # (..., n, d_v)
    return check_result(output, "the attention output"), weights


def _flat(a: np.ndarray, batch: tuple[int, ...]) -> np.ndarray:
    """`a` (..., r, c) broadcast to the batch and its batch axes flattened: (heads, r, c), a view where possible."""
    if a.shape[:-2] != batch:
        a = np.broadcast_to(a, (*batch, *a.shape[-2:]))
    return a.reshape(-1, *a.shape[-2:])


def shifted_rows(q: np.ndarray, k: np.ndarray, causal: bool, bias) -> np.ndarray:
    """Bool (heads, n): True for a query whose scores may exceed ±SHIFT_FREE_LIMIT, so that its softmax
    must subtract the row maximum. Shapes: q (heads, n, d_k) scaled, k (heads, m, d_k).

    |q_i · k_j| <= |q_i| |k_j| (Cauchy-Schwarz); with causal=True query i only reaches keys 0..i, so the
    bound for row i never looks at a later key (a later token cannot change row i's arithmetic).
    """
    heads, n, d_k = q.shape
    m = k.shape[-2]
    ones = np.ones(d_k, q.dtype)
    q_sq = (np.square(q).reshape(-1, d_k) @ ones).reshape(heads, n)  # (heads, n): |q_i|², one BLAS call
    k_sq = (np.square(k).reshape(-1, d_k) @ ones).reshape(heads, m)  # (heads, m): |k_j|²
    limit = SHIFT_FREE_LIMIT if bias is None else SHIFT_FREE_LIMIT - float(np.abs(bias).max())
    if q_sq.max() * k_sq.max() <= limit * abs(limit):  # no row's own bound can be larger: none shifts
        return np.zeros((heads, n), bool)
    if causal:
        reach = np.maximum.accumulate(k_sq, axis=-1)  # (heads, m): max of |k_j|² over j <= i
        reach = reach[:, :n] if m >= n else reach[:, np.minimum(np.arange(n), m - 1)]  # (heads, n)
    else:
        reach = k_sq.max(axis=-1, keepdims=True)  # (heads, 1)
    return ~(q_sq * reach <= limit * abs(limit))  # bound² against limit² (never, for a negative limit); NaN shifts


def plan_tasks(heads: int, n: int, m: int, causal: bool, min_tasks: int = 1) -> tuple[tuple[slice, slice, slice], ...]:
    """(heads, rows, keys) for each task: a group of heads × one block of queries and the keys it needs.

    Groups of at most TASK_SCORES scores, and at least `min_tasks` tasks where there are heads to share
    (threads that each get a task of about the same size finish together). How the heads are grouped
    changes nothing in the results: every head's arithmetic is the same in any group.
    """
    return _plan(heads, n, m, causal, min_tasks, BLOCK_ROWS, TASK_SCORES)


@lru_cache(maxsize=256)
def _plan(heads, n, m, causal, min_tasks, block_rows, task_scores) -> tuple[tuple[slice, slice, slice], ...]:
    """plan_tasks for the module's sizes at the time (arguments, so that a cached plan never outlives them)."""
    blocks = query_blocks(n, m, causal)
    most = max(1, task_scores // (block_rows * m))  # heads per task at most
    groups = min(heads, max(-(-heads // most), -(-min_tasks // len(blocks))))
    group = -(-heads // groups)  # as even as that allows: 12 heads in 2 groups are 6 and 6, not 8 and 4
    return tuple(
        (slice(first, min(first + group, heads)), rows, keys)
        for rows, keys in blocks
        for first in range(0, heads, group)
    )


def query_blocks(n: int, m: int, causal: bool) -> list[tuple[slice, slice]]:
    """(rows, keys) for each block of BLOCK_ROWS queries: the keys that block needs.

    With causal=True a block needs only keys 0..(its last query); without, all m keys.
    """
    blocks = []
    for start in range(0, n, BLOCK_ROWS):
        stop = min(start + BLOCK_ROWS, n)
        blocks.append((slice(start, stop), slice(0, min(stop, m) if causal else m)))
    return blocks


def attend_block(work: Work, heads: slice, rows: slice, keys: slice) -> None:
    """Steps 1-3 for one task: scores, softmax, weighted average of the values.

    The scores are computed in a contiguous buffer of the task's own and the softmax writes its result into
    the weights: numpy runs an elementwise operation on a contiguous array as one loop, on a block of the
    weights (rows shorter than the weights' rows) as one loop per row (10-20 ns each, measured here).
    """
    weights = work.weights[heads, rows, keys]  # (g, r, keys), a view into the weights
    scores = np.empty(weights.shape, weights.dtype)  # (g, r, keys), contiguous
    np.matmul(work.q[heads, rows], work.k[heads, keys].swapaxes(-1, -2), out=scores)  # (g, r, keys)
    if work.bias is not None:
        scores += work.bias[heads, rows, keys]
    if work.hidden is not None:
        np.copyto(scores, -np.inf, where=work.hidden[heads, rows, keys])
    elif work.causal and rows.start < keys.stop - 1:  # the block's last columns lie in some query's future
        np.fmin(scores, future_cap(rows.start, *scores.shape[-2:]), out=scores)  # the future becomes -inf
    softmax_rows(scores, work.shifted[heads, rows], rows, out=weights)
    if keys.stop < work.weights.shape[-1]:
        work.weights[heads, rows, keys.stop :] = 0.0  # the future this causal block skipped
    if work.output is not None:
        np.matmul(weights, work.v[heads, keys], out=work.output[heads, rows])  # (g, r, d_v)


@lru_cache(maxsize=256)
def future_cap(first: int, r: int, c: int) -> np.ndarray:
    """Float32 (r, c), read-only: -inf where key j lies in the future of query first + i (j > first + i),
    +inf elsewhere. np.fmin(scores, cap) writes -inf into the future, also where a future score overflowed or is
    NaN (a selection, not arithmetic), and leaves every other score as it is (fmin(s, +inf) = s for every number s;
    a NaN there becomes +inf, which the row's shift then refuses as an overflow)."""
    cap = np.where(np.tri(r, c, first, dtype=bool), np.float32(np.inf), np.float32(-np.inf))  # (r, c)
    cap.flags.writeable = False
    return cap


def softmax_rows(scores: np.ndarray, shifted: np.ndarray, rows: slice, out: np.ndarray) -> None:
    """Softmax over the last axis of `scores` (overwritten) into `out`; rows where `shifted` is True subtract
    their maximum first.

    Shapes: scores (g, r, keys) contiguous, shifted (g, r), out (g, r, keys). Row sums come from one
    matrix-vector product with a vector of ones (BLAS), which has no per-row overhead.
    """
    if shifted.any():
        row_max = scores.max(axis=-1, keepdims=True)  # (g, r, 1)
        if not np.isfinite(row_max).all():  # only an overflowed score gets here: empty rows were refused
            raise ValueError(
                f"the scores q·kᵀ of queries {rows.start}..{rows.stop - 1} overflowed {scores.dtype}: "
                "q and k are too large"
            )
        scores -= np.where(shifted[..., None], row_max, 0.0)  # (g, r, keys)
    np.exp(scores, out=scores)
    g, r, c = scores.shape
    sums = scores.reshape(g * r, c) @ np.ones(c, scores.dtype)  # (g·r,)
    np.multiply(scores, np.reciprocal(sums).reshape(g, r, 1), out=out)


def _softmax_checked(scores: np.ndarray, first: int, stop: int) -> None:
    """Softmax over the last axis in place (rows sum to 1), saying which queries overflowed if any did."""
    try:
        softmax_inplace(scores)
    except ValueError:  # only an overflowed score gets here: fully masked rows were refused up front
        raise ValueError(
            f"the scores q·kᵀ of queries {first}..{stop - 1} overflowed {scores.dtype}: q and k are too large"
        ) from None
