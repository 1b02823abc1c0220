"""Masks, True = may attend: causal (j <= i), sliding window (i - w < j <= i), padding (key j is a real token)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention import causal_mask
from attention.masks import padding_mask, sequence_mask, sliding_window_mask


def test_three_positions_by_hand():
    # Row i sees columns 0..i: the first token sees only itself, the last sees everything.
    assert np.array_equal(causal_mask(3), [[True, False, False], [True, True, False], [True, True, True]])


def test_rectangular_mask_keeps_the_same_rule():
    # Two queries over four keys: query 1 sees keys 0 and 1, never 2 or 3.
    assert np.array_equal(causal_mask(2, 4), [[True, False, False, False], [True, True, False, False]])


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.integers(1, 40))
def test_true_exactly_where_key_is_not_after_query(n, m):
    mask = causal_mask(n, m)
    assert mask.dtype == np.bool_ and mask.shape == (n, m)
    i, j = np.indices((n, m))
    assert np.array_equal(mask, j <= i)
    assert np.array_equal(causal_mask(n), causal_mask(n, n))


@pytest.mark.parametrize(
    "n, message",
    [
        (0, "n must be at least 1, got 0"),
        (-2, "n must be at least 1, got -2"),
        (2.0, "n must be a whole number, got 2.0"),
        (True, "n must be a whole number, got True"),
        ("3", "n must be a whole number, got '3'"),
    ],
)
def test_bad_sizes_raise(n, message):
    with pytest.raises(ValueError, match=message):
        causal_mask(n)


def test_bad_key_count_raises():
    with pytest.raises(ValueError, match="m must be at least 1, got 0"):
        causal_mask(3, 0)


# ---------------------------------------------------------------- sliding window


def test_a_window_of_two_by_hand():
    # Each query sees itself and the one key before it: i - 2 < j <= i.
    expected = [[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]]
    np.testing.assert_array_equal(sliding_window_mask(4, 2), np.array(expected, dtype=bool))


def test_window_one_is_the_diagonal_and_a_wide_window_is_causal():
    np.testing.assert_array_equal(sliding_window_mask(5, 1), np.eye(5, dtype=bool))
    np.testing.assert_array_equal(sliding_window_mask(5, 5), causal_mask(5))
    np.testing.assert_array_equal(sliding_window_mask(5, 99), causal_mask(5))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 30), st.integers(1, 40))
def test_window_mask_is_true_exactly_inside_the_window(n, window):
    mask = sliding_window_mask(n, window)
    i, j = np.indices((n, n))
    assert mask.dtype == np.bool_ and np.array_equal(mask, (i - window < j) & (j <= i))
    assert np.all(mask.sum(axis=1) == np.minimum(np.arange(n) + 1, window))  # every row sees >= 1 key


@pytest.mark.parametrize(
    "n, window, message",
    [
        (4, 0, "window must be at least 1, got 0"),
        (4, -3, "window must be at least 1, got -3"),
        (4, 1.5, "window must be a whole number, got 1.5"),
        (0, 2, "n must be at least 1"),
    ],
)
def test_bad_windows_raise(n, window, message):
    with pytest.raises(ValueError, match=message):
        sliding_window_mask(n, window)


# ---------------------------------------------------------------- padding


def test_padding_mask_by_hand():
    # Two sequences padded to 3: the first has 3 real tokens, the second 1. Only keys are masked.
    mask = padding_mask([3, 1], 3)
    assert mask.shape == (2, 3, 3) and mask.dtype == np.bool_
    assert mask[0].all()
    np.testing.assert_array_equal(mask[1], [[True, False, False]] * 3)  # every query, a padded one too, sees key 0
    np.testing.assert_array_equal(sequence_mask([3, 1], 3), [[True, True, True], [True, False, False]])


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.tuples(st.just(n), st.lists(st.integers(1, n), min_size=1, max_size=4))))
def test_padding_mask_marks_real_keys_in_every_row(n_lengths):
    n, lengths = n_lengths
    mask = padding_mask(lengths, n)
    for b, length in enumerate(lengths):
        assert np.all(mask[b, :, :length]) and not np.any(mask[b, :, length:])
    assert np.all(mask.any(axis=-1))  # no empty row: the softmax is always defined


@pytest.mark.parametrize(
    "lengths, message",
    [
        ([3, 0], "lengths\\[1\\]=0 is outside 1..4"),
        ([5], "lengths\\[0\\]=5 is outside 1..4"),
        ([-1], "lengths\\[0\\]=-1 is outside 1..4"),
        ([2.5], "lengths contains 2.5"),
        ([np.nan], "lengths contains nan"),
        ([True], "lengths has dtype bool"),
        (["2"], "lengths has dtype <U1"),
        ([], "lengths has shape \\(0,\\)"),
        ([[2, 3]], "lengths has shape \\(1, 2\\)"),
        (3, "lengths has shape \\(\\)"),
    ],
)
def test_bad_lengths_raise(lengths, message):
    with pytest.raises(ValueError, match=message):
        padding_mask(lengths, 4)


def test_whole_float_lengths_are_accepted():
    np.testing.assert_array_equal(padding_mask([2.0, 1.0], 3), padding_mask([2, 1], 3))
