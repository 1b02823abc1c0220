"""attention.pretrained.attention_rollout: hand-computed cases, a plain-loop recomputation, its properties and its
refusals."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention.pretrained import attention_rollout, load_minilm

SETTINGS = settings(max_examples=40, deadline=None)


def random_attentions(seed: int, n_layers: int, n_heads: int, n: int) -> np.ndarray:
    """Softmax rows of random scores, with some rows nearly one-hot. Shapes: (n_layers, n_heads, n, n)."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(0.0, rng.uniform(0.1, 8.0), (n_layers, n_heads, n, n))
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return w / w.sum(axis=-1, keepdims=True)


def loop_rollout(attentions: np.ndarray, residual: float) -> np.ndarray:
    """The same definition written out with loops over every entry (no matrix products, no broadcasting)."""
    n_layers, n_heads, n, _ = attentions.shape
    rollout = [[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]
    for layer in range(n_layers):
        mixed = []
        for i in range(n):
            row = []
            for j in range(n):
                mean = sum(float(attentions[layer, h, i, j]) for h in range(n_heads)) / n_heads
                row.append((1 - residual) * mean + (residual if i == j else 0.0))
            total = sum(row)
            mixed.append([x / total for x in row])
        rollout = [[sum(mixed[i][m] * rollout[m][j] for m in range(n)) for j in range(n)] for i in range(n)]
    return np.array(rollout)


# --- by hand --------------------------------------------------------------------------------------


def test_one_layer_that_swaps_two_tokens_mixes_them_half_and_half():
    # A = [[0, 1], [1, 0]]: each token reads only the other. ½A + ½I = [[½, ½], [½, ½]].
    swap = np.array([[[[0.0, 1.0], [1.0, 0.0]]]])
    np.testing.assert_allclose(attention_rollout(swap), [[0.5, 0.5], [0.5, 0.5]], atol=1e-15)


def test_layers_multiply_from_the_left_in_order():
    # Layer 1 sends everything to token 0, layer 2 to token 1:
    # Ã_1 = [[1, 0], [½, ½]], Ã_2 = [[½, ½], [0, 1]], R = Ã_2 Ã_1 = [[¾, ¼], [½, ½]].
    to_first = [[1.0, 0.0], [1.0, 0.0]]
    to_second = [[0.0, 1.0], [0.0, 1.0]]
    np.testing.assert_allclose(attention_rollout(np.array([[to_first], [to_second]])), [[0.75, 0.25], [0.5, 0.5]])
    # the other order gives another answer: Ã_1 Ã_2 = [[½, ½], [¼, ¾]]
    np.testing.assert_allclose(attention_rollout(np.array([[to_second], [to_first]])), [[0.5, 0.5], [0.25, 0.75]])


def test_heads_are_averaged_before_anything_else():
    # Two heads, one reading itself, one reading the other token: their average is ½ everywhere,
    # so ½Ā + ½I = [[¾, ¼], [¼, ¾]].
    heads = np.array([[[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [1.0, 0.0]]]])
    np.testing.assert_allclose(attention_rollout(heads), [[0.75, 0.25], [0.25, 0.75]], atol=1e-15)


# --- against the definition --------------------------------------------------------------------------


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    n_layers=st.integers(1, 4),
    n_heads=st.integers(1, 3),
    n=st.integers(1, 6),
    residual=st.sampled_from([0.0, 0.25, 0.5, 0.9, 1.0]),
)
def test_equals_a_plain_loop_and_rows_sum_to_one(seed, n_layers, n_heads, n, residual):
    attentions = random_attentions(seed, n_layers, n_heads, n)
    rollout = attention_rollout(attentions, residual)
    assert rollout.shape == (n, n) and (rollout >= 0).all()
    np.testing.assert_allclose(rollout.sum(axis=-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(rollout, loop_rollout(attentions, residual), atol=1e-12)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n_heads=st.integers(1, 4), n=st.integers(1, 7))
def test_one_layer_is_half_the_head_average_plus_half_the_identity_renormalised(seed, n_heads, n):
    attentions = random_attentions(seed, 1, n_heads, n)
    attentions *= np.random.default_rng(seed).uniform(0.5, 2.0, (1, n_heads, n, 1))  # rows not summing to 1
    mixed = 0.5 * attentions[0].mean(axis=0) + 0.5 * np.eye(n)
    np.testing.assert_allclose(attention_rollout(attentions), mixed / mixed.sum(axis=1, keepdims=True), atol=1e-12)


def test_no_residual_multiplies_the_averages_and_all_residual_is_the_identity():
    attentions = random_attentions(7, 3, 2, 5)
    means = attentions.mean(axis=1)
    np.testing.assert_allclose(attention_rollout(attentions, 0.0), means[2] @ means[1] @ means[0], atol=1e-12)
    np.testing.assert_allclose(attention_rollout(attentions, 1.0), np.eye(5), atol=1e-15)


def test_the_real_model_rows_sum_to_one_and_float32_input_is_read_in_float64():
    run = load_minilm().run("The animal didn't cross the street because it was too tired.")
    rollout = attention_rollout(run.attentions)
    assert rollout.dtype == np.float64 and rollout.shape == (run.n_tokens, run.n_tokens)
    np.testing.assert_allclose(rollout.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(rollout, loop_rollout(run.attentions.astype(np.float64), 0.5), atol=1e-10)


# --- refusals -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "attentions, match",
    [
        (np.ones((2, 3, 3)) / 3, r"attentions has shape \(2, 3, 3\); expected \(n_layers, n_heads, n, n\)"),
        (np.ones((1, 1, 2, 3)) / 3, r"shape \(1, 1, 2, 3\)"),
        (np.zeros((1, 1, 0, 0)), "empty"),
        (np.array([[[[1.5, -0.5], [0.5, 0.5]]]]), "negative"),
        (np.array([[[[np.nan, 1.0], [0.5, 0.5]]]]), "finite"),
        ([[[["a", "b"], ["c", "d"]]]], "dtype"),
    ],
)
def test_refuses_bad_attentions(attentions, match):
    with pytest.raises(ValueError, match=match):
        attention_rollout(attentions)


@pytest.mark.parametrize("residual", [-0.1, 1.5, np.nan, "half", True, None])
def test_refuses_a_residual_outside_zero_to_one(residual):
    with pytest.raises(ValueError, match="residual"):
        attention_rollout(np.ones((1, 1, 2, 2)) / 2, residual)


def test_a_row_of_zeros_cannot_be_renormalised_without_the_residual():
    attentions = np.array([[[[0.0, 0.0], [0.5, 0.5]]]])
    with pytest.raises(ValueError, match="row of zeros"):
        attention_rollout(attentions, 0.0)
    np.testing.assert_allclose(attention_rollout(attentions), [[1.0, 0.0], [0.25, 0.75]])  # the residual saves it
