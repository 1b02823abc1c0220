"""Training one attention layer with and without 1/sqrt(d_k): gradients, data, determinism and the result."""

import math
from dataclasses import replace

import numpy as np
import pytest

from attention import softmax
from lessons.training import (
    TrainingConfig,
    compare_scaling,
    forward,
    init_weights,
    make_task,
    retrieval_loss,
    sample_batch,
    stuck_fraction,
    train,
)
from tests.test_gradients import REL_TOL, numerical_gradient, relative_error

SMALL = TrainingConfig(d_k=6, steps=20, batch=5, n_context=4, vocab=7, d_model=3, d_v=2, n_eval=50, seed=3)


@pytest.fixture(scope="module")
def default_comparison():
    """The page's default: d_k = 256, 300 steps, learning rate 1, seed 0 (about a second)."""
    return compare_scaling(TrainingConfig())


def test_a_batch_has_distinct_tokens_and_the_query_at_the_target():
    batch = sample_batch(np.random.default_rng(0), 200, 8, 32)
    assert batch.context.shape == (200, 8)
    assert all(len(set(row)) == 8 for row in batch.context)
    np.testing.assert_array_equal(batch.context[np.arange(200), batch.target], batch.query)
    assert set(np.unique(batch.target)) == set(range(8))  # every position gets to be the answer


def test_initial_q_and_k_components_have_unit_variance():
    config = TrainingConfig(d_k=1024)
    task, (w_q, w_k) = make_task(config), init_weights(config)
    for w in (w_q, w_k):
        # 32 tokens × 1024 components: the variance is estimated to within a few per cent
        assert (task.embeddings @ w).var() == pytest.approx(1.0, rel=0.15)
    np.testing.assert_allclose(np.linalg.norm(task.values, axis=1), 1.0)


def test_forward_matches_a_loop_over_examples():
    task, (w_q, w_k) = make_task(SMALL), init_weights(SMALL)
    batch = sample_batch(np.random.default_rng(1), 5, SMALL.n_context, SMALL.vocab)
    for scale in (True, False):
        f = forward(w_q, w_k, task, batch, scale=scale)
        losses = []
        for b in range(5):
            q = task.embeddings[batch.query[b]] @ w_q  # (d_k,)
            k = task.embeddings[batch.context[b]] @ w_k  # (n_context, d_k)
            p = softmax(k @ q / (math.sqrt(SMALL.d_k) if scale else 1.0))
            o = p @ task.values[batch.context[b]]
            losses.append(((o - task.values[batch.query[b]]) ** 2).sum())
            np.testing.assert_allclose(f.weights[b, 0], p, atol=1e-14)
        assert f.loss == pytest.approx(np.mean(losses), rel=1e-12)


@pytest.mark.parametrize("scale", [True, False])
def test_weight_gradients_match_finite_differences(scale):
    task, (w_q, w_k) = make_task(SMALL), init_weights(SMALL)
    batch = sample_batch(np.random.default_rng(2), 5, SMALL.n_context, SMALL.vocab)
    result = retrieval_loss(w_q, w_k, task, batch, scale=scale)
    numeric_q = numerical_gradient(lambda w: forward(w, w_k, task, batch, scale=scale).loss, w_q)
    numeric_k = numerical_gradient(lambda w: forward(w_q, w, task, batch, scale=scale).loss, w_k)
    assert relative_error(result.grad_w_q, numeric_q) < REL_TOL
    assert relative_error(result.grad_w_k, numeric_k) < REL_TOL
    assert result.grad_norm == pytest.approx(math.hypot(np.linalg.norm(numeric_q), np.linalg.norm(numeric_k)), rel=1e-6)


def test_same_config_same_run():
    a, b = train(SMALL, scale=True), train(SMALL, scale=True)
    np.testing.assert_array_equal(a.loss, b.loss)
    assert a.final_loss == b.final_loss
    assert not np.array_equal(a.loss, train(replace(SMALL, seed=4), scale=True).loss)


def test_at_d_k_1_scaling_changes_nothing():
    c = compare_scaling(replace(SMALL, d_k=1))
    np.testing.assert_array_equal(c.scaled.loss, c.unscaled.loss)
    assert not c.unscaled_trains_worse


def test_progress_is_reported_for_both_runs():
    calls = []
    compare_scaling(SMALL, on_step=lambda done, total: calls.append((done, total)))
    assert calls == [(i, 2 * SMALL.steps) for i in range(1, 2 * SMALL.steps + 1)]


def test_scaled_trains_better_than_unscaled_at_d_k_256(default_comparison):
    s, u = default_comparison.scaled, default_comparison.unscaled
    assert s.initial_loss < u.initial_loss  # unscaled starts saturated, mostly on wrong positions
    assert s.final_loss < 0.01 and s.final_accuracy > 0.99
    assert u.final_loss > 10 * s.final_loss and u.final_accuracy < s.final_accuracy
    assert default_comparison.unscaled_trains_worse


def test_unscaled_gets_stuck_with_a_vanishing_gradient(default_comparison):
    s, u = default_comparison.scaled, default_comparison.unscaled
    assert u.final_stuck > 0.02 and s.final_stuck == 0.0
    late = slice(len(u.loss) // 2, None)
    # late in training the unscaled gradient is often far below the scaled one although its loss is higher
    assert np.median(u.grad_norm[late]) < 0.1 * np.median(s.grad_norm[late])
    assert np.median(u.loss[late]) > 10 * np.median(s.loss[late])
    assert u.grad_norm.min() < 1e-10


def test_stuck_counts_confident_wrong_answers_only():
    batch = sample_batch(np.random.default_rng(0), 3, 2, 4)
    weights = np.zeros((3, 2))
    weights[0, batch.target[0]] = 1.0  # confident and right
    weights[1, 1 - batch.target[1]] = 1.0  # confident and wrong: stuck
    weights[2] = 0.5  # unsure
    assert stuck_fraction(weights, batch) == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(d_k=0), "d_k must be at least 1"),
        (dict(d_k=2048), "d_k=2048 is too large: at most 1024"),
        (dict(steps=1001), "steps=1001 is too large"),
        (dict(steps=2.0), "steps must be a whole number"),
        (dict(n_context=40), "n_context=40 needs at least as many tokens"),
        (dict(lr=0.0), "lr must be a number in"),
        (dict(lr=float("nan")), "lr must be a number in"),
        (dict(lr=True), "lr must be a number in"),
        (dict(seed=-1), "seed must be a whole number >= 0"),
    ],
)
def test_config_is_validated(change, message):
    with pytest.raises(ValueError, match=message):
        compare_scaling(replace(TrainingConfig(), **change))
