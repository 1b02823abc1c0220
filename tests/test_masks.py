"""causal_mask: True where query i may attend to key j, that is j <= i."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention import causal_mask


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
