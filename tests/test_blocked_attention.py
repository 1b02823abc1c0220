"""The blocked kernel computes what the readable reference computes: held equal over shapes, masks, dtypes.

The pages teach `attention_steps`; the public `scaled_dot_product_attention` and the real model run the
blocked kernel. These tests are what lets both be called "the same attention".
"""

import contextlib
import multiprocessing
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attention.blocked_attention as blocked
from attention import attention_steps, chunks, scaled_dot_product_attention
from attention.blocked_attention import SHIFT_FREE_LIMIT, plan_tasks, query_blocks, shifted_rows
from attention.masks import causal_mask, padding_mask, sliding_window_mask
from attention.positions import alibi_bias

SETTINGS = settings(max_examples=60, deadline=None)
TOLERANCE = {np.float64: (1e-12, 1e-12), np.float32: (2e-6, 2e-6)}  # (weights, output), absolute


@contextlib.contextmanager
def tiny_threaded_blocks():
    """Blocks of 2 queries, one head per task, always on the thread pool: the bookkeeping of many tasks."""
    saved = blocked.BLOCK_ROWS, blocked.PARALLEL_MIN_SCORES, blocked.TASK_SCORES
    blocked.BLOCK_ROWS, blocked.PARALLEL_MIN_SCORES, blocked.TASK_SCORES = 2, 0, 1
    try:
        yield
    finally:
        blocked.BLOCK_ROWS, blocked.PARALLEL_MIN_SCORES, blocked.TASK_SCORES = saved


@st.composite
def problems(draw):
    """q, k, v of random shapes (batch axes included), a dtype, causal, scale, an optional bool mask and bias."""
    dtype = draw(st.sampled_from([np.float64, np.float32]))
    lead = draw(st.sampled_from([(), (1,), (2,), (3, 2)]))
    n, m = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    d_k, d_v = draw(st.integers(1, 6)), draw(st.integers(1, 5))
    values = st.floats(-8, 8, width=32 if dtype == np.float32 else 64)
    q, k, v = (
        draw(arrays(dtype, (*lead, rows, cols), elements=values)) for rows, cols in ((n, d_k), (m, d_k), (m, d_v))
    )
    causal, scale = draw(st.booleans()), draw(st.booleans())
    mask = None
    if draw(st.booleans()):
        mask_shape = draw(st.sampled_from([(n, m), (*lead, n, m)]))
        mask = draw(arrays(np.bool_, mask_shape))
        mask[..., :, 0] = True  # every query keeps key 0, so no row is empty (causal keeps it too)
    bias = None
    if draw(st.booleans()):  # an additive bias, as ALiBi's
        bias = draw(arrays(np.float64, draw(st.sampled_from([(n, m), (*lead, n, m)])), elements=st.floats(-4, 4)))
    return q, k, v, dict(causal=causal, scale=scale, mask=mask, bias=bias)


@SETTINGS
@given(problems(), st.booleans())
def test_blocked_equals_the_reference(problem, many_blocks):
    q, k, v, kw = problem
    expected = attention_steps(q, k, v, **kw)
    with tiny_threaded_blocks() if many_blocks else contextlib.nullcontext():
        output, weights = scaled_dot_product_attention(q, k, v, **kw)
    atol_w, atol_o = TOLERANCE[q.dtype.type]
    assert weights.dtype == expected.weights.dtype and output.dtype == expected.output.dtype
    assert weights.shape == expected.weights.shape and output.shape == expected.output.shape
    np.testing.assert_allclose(weights, expected.weights, rtol=0, atol=atol_w)
    np.testing.assert_allclose(output, expected.output, rtol=0, atol=atol_o * (1 + np.abs(v).max()))
    assert np.all(weights[..., ~expected.allowed] == 0.0)  # hidden keys: exactly 0 in both


@SETTINGS
@given(problems())
def test_causal_blocks_ignore_later_tokens_bit_for_bit(problem):
    q, k, v, kw = problem
    n = min(q.shape[-2], k.shape[-2])
    if n < 2 or q.shape[-2] != k.shape[-2]:
        return
    t = n // 2
    q2, k2, v2 = (a.copy() for a in (q, k, v))
    for a in (q2, k2, v2):
        a[..., t + 1 :, :] = 3.0
    with tiny_threaded_blocks():
        out1, w1 = scaled_dot_product_attention(q, k, v, causal=True, scale=kw["scale"])
        out2, w2 = scaled_dot_product_attention(q2, k2, v2, causal=True, scale=kw["scale"])
    assert np.array_equal(out1[..., : t + 1, :], out2[..., : t + 1, :])
    assert np.array_equal(w1[..., : t + 1, :], w2[..., : t + 1, :])


@pytest.mark.parametrize("arrangement", ["causal", "mask"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_large_inputs_match_the_reference_threaded_or_not(monkeypatch, arrangement, dtype):
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((4, 300, 32)).astype(dtype) for _ in range(3))
    causal = arrangement == "causal"
    mask = None if causal else rng.random((300, 300)) < 0.7  # a mask: the blocked path, not the unblocked one
    if mask is not None:
        mask[:, 0] = True
    expected = attention_steps(*(a.astype(np.float64) for a in (q, k, v)), causal=causal, mask=mask)
    expected_out, expected_w = expected.output, expected.weights
    tol = 1e-12 if dtype == np.float64 else 1e-5
    monkeypatch.setattr(blocked, "PARALLEL_MIN_SCORES", 0)  # threads for any size
    out_threaded, w_threaded = scaled_dot_product_attention(q, k, v, causal=causal, mask=mask)
    monkeypatch.setattr(blocked, "PARALLEL_MIN_SCORES", float("inf"))  # never threads
    out_serial, w_serial = scaled_dot_product_attention(q, k, v, causal=causal, mask=mask)
    assert len(query_blocks(300, 300, causal)) > 1  # several blocks really were used
    assert out_serial.dtype == dtype and w_serial.dtype == dtype
    assert np.allclose(w_serial, expected_w, rtol=0, atol=tol)
    assert np.allclose(out_serial, expected_out, rtol=0, atol=10 * tol)
    assert np.array_equal(out_threaded, out_serial) and np.array_equal(w_threaded, w_serial)


def test_without_a_mask_the_model_sized_case_runs_unblocked_and_equals_the_reference():
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((12, 256, 32), dtype=np.float32) for _ in range(3))
    assert 12 * 256 * 256 <= blocked.UNBLOCKED_MAX_SCORES  # the real model's largest input takes this path
    out, w = scaled_dot_product_attention(q, k, v)
    reference = attention_steps(*(a.astype(np.float64) for a in (q, k, v)))
    ref_out, ref_w = reference.output, reference.weights
    np.testing.assert_allclose(w, ref_w, rtol=0, atol=1e-6)
    np.testing.assert_allclose(out, ref_out, rtol=0, atol=1e-5)


def test_a_causal_block_skips_the_future():
    # Two blocks of 64 queries over 100 keys: the first needs keys 0..63 only, the second all 100.
    assert query_blocks(100, 100, True) == [(slice(0, 64), slice(0, 64)), (slice(64, 100), slice(0, 100))]
    assert query_blocks(100, 100, False) == [(slice(0, 64), slice(0, 100)), (slice(64, 100), slice(0, 100))]


def test_large_causal_outputs_ignore_later_tokens_bit_for_bit():
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((8, 256, 32), dtype=np.float32) for _ in range(3))
    t = 150
    q2, k2, v2 = (a.copy() for a in (q, k, v))
    for a in (q2, k2, v2):
        a[:, t + 1 :] = rng.standard_normal(a[:, t + 1 :].shape, dtype=np.float32) * 5
    out1, w1 = scaled_dot_product_attention(q, k, v, causal=True)
    out2, w2 = scaled_dot_product_attention(q2, k2, v2, causal=True)
    assert np.array_equal(out1[:, : t + 1], out2[:, : t + 1]) and np.array_equal(w1[:, : t + 1], w2[:, : t + 1])
    assert not np.array_equal(out1[:, t + 1 :], out2[:, t + 1 :])
    assert np.all(w1[:, causal_mask(256) == 0] == 0.0)


def _threaded_attention_sum(_):
    q = np.random.default_rng(4).standard_normal((8, 256, 32))
    return float(scaled_dot_product_attention(q, q, q, causal=True)[0].sum())


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_can_still_use_the_thread_pool(monkeypatch):
    # Regression: a forked child inherits the parent's pool object but none of its threads, so
    # handing it work hung forever. The pool is now recreated in the child.
    monkeypatch.setattr(blocked, "PARALLEL_MIN_SCORES", 0)
    expected = _threaded_attention_sum(None)  # the parent's pool is running now
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.map_async(_threaded_attention_sum, [0]).get(timeout=60) == [expected]


@SETTINGS
@given(
    st.integers(1, 12),
    st.integers(1, 6),
    st.lists(st.integers(1, 12), min_size=1, max_size=3),
    st.sampled_from(["window", "padding"]),
    st.booleans(),
)
def test_window_padding_and_alibi_give_the_same_result_in_both(n, window, lengths, which, many_blocks):
    lengths = [min(length, n) for length in lengths]
    rng = np.random.default_rng(n * 100 + window)
    q, k, v = (rng.standard_normal((len(lengths), 2, n, 4)) for _ in range(3))  # (batch, heads, n, d)
    # one mask at a time: together they can leave a padded query no key at all (padded_attention handles that)
    mask = sliding_window_mask(n, window) if which == "window" else padding_mask(lengths, n)[:, None]
    kw = dict(causal=True, mask=mask, bias=alibi_bias(n, 2))
    expected = attention_steps(q, k, v, **kw)
    with tiny_threaded_blocks() if many_blocks else contextlib.nullcontext():
        output, weights = scaled_dot_product_attention(q, k, v, **kw)
    np.testing.assert_allclose(weights, expected.weights, rtol=0, atol=1e-12)
    np.testing.assert_allclose(output, expected.output, rtol=0, atol=1e-12 * (1 + np.abs(v).max()))
    assert np.all(weights[..., ~expected.allowed] == 0.0)


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("mask", [None, "window"])
def test_values_with_batch_axes_of_their_own(causal, mask):
    # The weights have the batch axes of q and k (3,); the output those of v too (2, 3): step 3 runs apart.
    rng = np.random.default_rng(6)
    q, k, v = rng.standard_normal((5, 4)), rng.standard_normal((3, 6, 4)), rng.standard_normal((2, 1, 6, 3))
    kw = dict(causal=causal, mask=None if mask is None else sliding_window_mask(6, 2)[:5])
    expected = attention_steps(q, k, v, **kw)
    with tiny_threaded_blocks():
        output, weights = scaled_dot_product_attention(q, k, v, **kw)
    assert weights.shape == (3, 5, 6) and output.shape == (2, 3, 5, 3)
    np.testing.assert_allclose(weights, expected.weights, rtol=0, atol=1e-12)
    np.testing.assert_allclose(output, expected.output, rtol=0, atol=1e-12)


@pytest.mark.parametrize("min_tasks", [1, 4])
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("heads, n, m", [(1, 1, 1), (3, 5, 7), (12, 130, 130), (8, 512, 512), (2, 200, 3)])
def test_the_tasks_cover_every_score_exactly_once(heads, n, m, causal, min_tasks):
    covered = np.zeros((heads, n, m), int)
    tasks = plan_tasks(heads, n, m, causal, min_tasks)
    assert len(tasks) >= min(min_tasks, heads * len(query_blocks(n, m, causal)))  # enough to share, if it can
    for group, rows, keys in tasks:
        covered[group, rows, keys] += 1
    expected = np.broadcast_to(causal_mask(n, m), (heads, n, m)) if causal else np.ones((heads, n, m), bool)
    assert np.all(covered[expected] == 1)  # every score a query may need, once
    assert np.all(covered <= 1)  # and nothing twice (with causal=True: the future past each block is skipped)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 8), st.integers(1, 8), st.integers(1, 6), st.floats(0.01, 40), st.booleans())
def test_a_row_left_unshifted_has_every_score_within_the_limit(n, m, d, spread, causal):
    rng = np.random.default_rng(n * 64 + m * 8 + d)
    q, k = rng.standard_normal((2, n, d)) * spread, rng.standard_normal((2, m, d)) * spread
    shifted = shifted_rows(q, k, causal, None)
    scores = q @ k.swapaxes(-1, -2)  # (2, n, m)
    if causal:
        scores = np.where(causal_mask(n, m), scores, 0.0)  # only the keys the query may see count
    assert np.all(np.abs(scores).max(axis=-1)[~shifted] <= SHIFT_FREE_LIMIT)
    if spread < 0.1:
        assert not shifted.any()  # small scores: no row pays for the shift
    if spread > 30 and d > 1:
        assert shifted.any()  # huge scores: the shift is kept


@pytest.mark.parametrize("largest", [0.5, 1.0, 1.5, 3.0, 40.0])  # the largest row bound, in SHIFT_FREE_LIMITs
@pytest.mark.parametrize("causal", [True, False])
def test_a_row_shifts_exactly_when_its_own_bound_exceeds_the_limit(largest, causal):
    # The call skips the per-row bounds when the largest |q|² times the largest |k|² is within the limit:
    # the answer must still be each row's own. Rows' bounds |q_i| · max |k_j| spread from 0 to `largest`
    # limits, so that a shortcut taken too early (or never) shows.
    rng = np.random.default_rng(int(largest * 10))
    q, k = rng.standard_normal((3, 12, 5)), rng.standard_normal((3, 12, 5))
    k *= 10 / np.linalg.norm(k, axis=-1, keepdims=True)  # |k_j| = 10
    k[:, 6:] *= rng.uniform(0.5, 1.5, (3, 6, 1))  # later keys longer or shorter: a causal row's reach grows
    q *= (largest * SHIFT_FREE_LIMIT / 10) * rng.uniform(0, 1, (3, 12, 1)) / np.linalg.norm(q, axis=-1, keepdims=True)
    shifted = shifted_rows(q, k, causal, None)
    for h in range(3):
        for i in range(12):
            keys = k[h, : i + 1] if causal else k[h]
            bound = np.sqrt((q[h, i] ** 2).sum() * (keys**2).sum(axis=-1).max())  # |q_i| · max |k_j|
            if abs(bound - SHIFT_FREE_LIMIT) > 1e-9 * SHIFT_FREE_LIMIT:
                assert shifted[h, i] == (bound > SHIFT_FREE_LIMIT), (h, i, bound)
    if largest in (1.5, 3.0):
        assert shifted.any() and not shifted.all()  # rows either way: the shortcut must not be taken


@pytest.mark.parametrize("first, r, c", [(0, 4, 4), (0, 3, 6), (2, 3, 6), (64, 64, 128), (5, 2, 5)])
def test_the_future_cap_hides_the_future_even_where_a_score_overflowed(first, r, c):
    # np.fmin(scores, cap) must select, as a mask does: -inf in every future score (an overflowed +inf or a
    # NaN included), every other score untouched. np.minimum or an added -inf would leave NaN behind.
    rng = np.random.default_rng(first + r + c)
    scores = rng.standard_normal((2, r, c)).astype(np.float32)
    allowed = causal_mask(r + first, c)[first:]  # (r, c): query first + i sees keys 0..first + i
    future = np.broadcast_to(~allowed, scores.shape)
    scores[future] = rng.choice(np.array([np.inf, -np.inf, np.nan, 3e38], np.float32), future.sum())
    cap = blocked.future_cap(first, r, c)
    masked = np.fmin(scores, cap)
    assert np.array_equal(masked, np.where(allowed, scores, np.float32(-np.inf)))
    assert masked.dtype == np.float32 and not cap.flags.writeable


@pytest.mark.filterwarnings("ignore:overflow encountered", "ignore:invalid value encountered")  # numpy on 3e38²
def test_a_later_key_that_overflows_a_score_leaves_earlier_rows_as_they_were():
    # Query 0's score with key 2 overflows float32 (+inf, or NaN where BLAS sums inf - inf): it lies in query
    # 0's future, so the mask must remove it by selection (an added -inf would leave NaN and spoil the row).
    q = np.zeros((1, 3, 2), np.float32)
    q[0, 0] = 2.0
    k = np.ones((1, 3, 2), np.float32)
    k[0, 2] = [3e38, -3e38]
    v = np.arange(6, dtype=np.float32).reshape(1, 3, 2)
    output, weights = scaled_dot_product_attention(q, k, v, causal=True)
    prefix_output, prefix_weights = scaled_dot_product_attention(q[:, :2], k[:, :2], v[:, :2], causal=True)
    np.testing.assert_allclose(output[:, :2], prefix_output, rtol=0, atol=1e-7)
    np.testing.assert_allclose(weights[:, :2, :2], prefix_weights, rtol=0, atol=1e-7)
    assert np.all(weights[:, :2, 2] == 0.0) and np.isfinite(output).all()


def test_a_causal_rows_choice_of_shift_ignores_later_keys():
    rng = np.random.default_rng(7)
    q, k = rng.standard_normal((1, 20, 8)) * 2, rng.standard_normal((1, 20, 8)) * 2
    k_later = k.copy()
    k_later[:, 10:] *= 100  # later keys far larger: their rows need the shift, earlier rows must not change
    before, after = shifted_rows(q, k, True, None), shifted_rows(q, k_later, True, None)
    assert np.array_equal(before[:, :10], after[:, :10]) and after[:, 10:].all()
    assert not np.array_equal(shifted_rows(q, k_later, False, None)[:, :10], before[:, :10])  # without causal, all do


@SETTINGS
@given(problems())
def test_with_the_shift_everywhere_the_results_agree(problem):
    # The softmax's two forms (exp(s) / sum and exp(s - max) / sum) give the same weights on any row that
    # may take either; here every row takes the shift, as the readable version does.
    q, k, v, kw = problem
    output, weights = scaled_dot_product_attention(q, k, v, **kw)
    saved = blocked.SHIFT_FREE_LIMIT
    blocked.SHIFT_FREE_LIMIT = -1.0
    try:
        output_shifted, weights_shifted = scaled_dot_product_attention(q, k, v, **kw)
    finally:
        blocked.SHIFT_FREE_LIMIT = saved
    atol_w, atol_o = TOLERANCE[q.dtype.type]
    np.testing.assert_allclose(weights, weights_shifted, rtol=0, atol=atol_w)
    np.testing.assert_allclose(output, output_shifted, rtol=0, atol=atol_o * (1 + np.abs(v).max()))


def test_huge_and_small_scores_in_one_call():
    # Row 0's scores reach ~1e4 (it needs the shift), the other rows' stay small (they go without).
    rng = np.random.default_rng(8)
    q, k, v = (rng.standard_normal((2, 70, 8), dtype=np.float32) for _ in range(3))
    q[:, 0] *= 3000
    output, weights = scaled_dot_product_attention(q, k, v, causal=True)
    expected = attention_steps(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64), causal=True)
    assert np.isfinite(weights).all() and np.isfinite(output).all()
    np.testing.assert_allclose(weights, expected.weights, rtol=0, atol=2e-6)
    np.testing.assert_allclose(output, expected.output, rtol=0, atol=1e-5)


def blas_threads() -> list[int]:
    from threadpoolctl import threadpool_info

    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]


def test_blas_is_held_to_one_thread_only_while_the_kernel_runs(monkeypatch):
    monkeypatch.setattr(blocked, "PARALLEL_MIN_SCORES", 0)
    before = blas_threads()
    seen = []
    original = blocked.attend_block

    def spy(*args):
        seen.append(blas_threads())
        return original(*args)

    monkeypatch.setattr(blocked, "attend_block", spy)
    q = np.random.default_rng(9).standard_normal((2, 130, 8))
    scaled_dot_product_attention(q, q, q, causal=True)
    assert seen and all(threads == [1] * len(before) for threads in seen)
    assert blas_threads() == before  # given back


def test_one_blas_thread_nests_and_is_shared_between_threads():
    from concurrent.futures import ThreadPoolExecutor

    before = blas_threads()
    with chunks.one_blas_thread() as single:
        with chunks.one_blas_thread() as inner:
            assert single and inner and blas_threads() == [1] * len(before)
        assert blas_threads() == [1] * len(before)  # the outer caller still holds it
    assert blas_threads() == before

    def hold(_):
        with chunks.one_blas_thread() as single:
            return single, blas_threads()

    with ThreadPoolExecutor(4) as pool:  # callers on other threads than the one that first set it
        assert all(single and t == [1] * len(before) for single, t in pool.map(hold, range(40)))
    assert blas_threads() == before


def test_while_other_code_holds_the_blas_limit_the_kernel_runs_without_the_pool(monkeypatch):
    import threading

    from threadpoolctl import threadpool_limits

    monkeypatch.setattr(blocked, "PARALLEL_MIN_SCORES", 0)
    q = np.random.default_rng(10).standard_normal((2, 130, 8))
    expected = attention_steps(q, q, q, causal=True)
    holding, done = threading.Event(), threading.Event()

    def other_code():  # a threadpool_limits block on another thread: threadpoolctl gives it the role
        with threadpool_limits(limits=2, user_api="blas"):
            holding.set()
            done.wait(60)

    other = threading.Thread(target=other_code)
    other.start()
    try:
        assert holding.wait(60)
        with chunks.one_blas_thread() as single:
            assert not single  # BLAS kept its count: the kernel must not add the pool's threads
        output, weights = scaled_dot_product_attention(q, q, q, causal=True)
    finally:
        done.set()
        other.join()
    np.testing.assert_allclose(weights, expected.weights, rtol=0, atol=1e-12)
    np.testing.assert_allclose(output, expected.output, rtol=0, atol=1e-12)


def test_run_all_does_every_item_once_with_the_calling_thread_working_too():
    import threading
    import time

    done, threads = [], set()

    def work(item):
        threads.add(threading.get_ident())
        done.append(item)
        time.sleep(0.0005)  # numpy's work releases the GIL as this does

    chunks.run_all(work, list(range(200)))
    assert sorted(done) == list(range(200))
    assert threading.get_ident() in threads  # the caller took items itself


@pytest.mark.parametrize("bad", [0, 150])  # the first item (the caller's, most likely) or a late one
def test_run_all_reraises_an_items_error_after_every_thread_has_stopped(bad):
    import threading
    import time

    lock, inside, done = threading.Lock(), [0], []

    def work(item):
        with lock:
            inside[0] += 1
        try:
            time.sleep(0.001)
            if item == bad:
                raise ValueError(f"item {item}")
            done.append(item)
        finally:
            with lock:
                inside[0] -= 1

    with pytest.raises(ValueError, match=f"item {bad}"):
        chunks.run_all(work, list(range(200)))
    assert inside[0] == 0  # nobody is still inside work() once run_all has returned
    assert len(done) < 199  # after the error, the other threads took no new items
