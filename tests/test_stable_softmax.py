"""attention.stable_softmax: hand-computed rows, the properties every softmax has, and its refusals."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention import softmax

SETTINGS = settings(max_examples=60, deadline=None)


def logits(max_abs: float = 50.0, max_rows: int = 5, max_cols: int = 8):
    """Float64 (rows, cols) arrays of bounded logits."""
    shapes = st.tuples(st.integers(1, max_rows), st.integers(1, max_cols))
    return arrays(np.float64, shapes, elements=st.floats(-max_abs, max_abs))


# --- hand-computed -------------------------------------------------------------------------------


def test_logs_of_one_to_four_give_tenths():
    # exp(log j) = j, so the row is 1, 2, 3, 4 over their sum 10.
    assert np.allclose(softmax(np.log([1.0, 2.0, 3.0, 4.0])), [0.1, 0.2, 0.3, 0.4], rtol=0, atol=1e-15)


def test_equal_logits_share_equally_and_a_gap_of_one_gives_e_to_one():
    # Equal scores: nothing to prefer, 1/3 each. Logits 1 and 0: e/(e+1) = 2.71828/3.71828 = 0.7311.
    assert np.allclose(softmax([5.0, 5.0, 5.0]), [1 / 3] * 3, rtol=0, atol=1e-15)
    w = softmax([1.0, 0.0])
    assert w[0] == pytest.approx(math.e / (math.e + 1), abs=1e-15)
    assert w[0] == pytest.approx(0.7311, abs=1e-4) and w[1] == pytest.approx(0.2689, abs=1e-4)


def test_minus_inf_gets_exactly_zero_weight():
    # exp(-inf) = 0 exactly: a masked position takes nothing; the other two split 1/2, 1/2.
    w = softmax([1.0, -np.inf, 1.0])
    assert w[1] == 0.0
    assert np.array_equal(w, [0.5, 0.0, 0.5])


def test_axis_zero_normalises_columns():
    # Column 0 holds logits 0 and log 3: weights 1/4 and 3/4. Column 1 is equal: 1/2 and 1/2.
    w = softmax(np.array([[0.0, 2.0], [np.log(3.0), 2.0]]), axis=0)
    assert np.allclose(w, [[0.25, 0.5], [0.75, 0.5]], rtol=0, atol=1e-15)


def test_input_is_not_modified():
    x = np.array([[1.0, 2.0, -np.inf]])
    before = x.copy()
    softmax(x)
    assert np.array_equal(x, before)


# --- properties ----------------------------------------------------------------------------------


@SETTINGS
@given(logits())
def test_rows_sum_to_one_and_are_probabilities(x):
    w = softmax(x)
    assert w.shape == x.shape and w.dtype == np.float64
    assert np.all(w >= 0) and np.all(w <= 1)
    assert np.allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


@SETTINGS
@given(logits(), st.data())
def test_adding_a_constant_per_row_changes_nothing(x, data):
    shift = data.draw(arrays(np.float64, (x.shape[0], 1), elements=st.floats(-100, 100)))
    assert np.allclose(softmax(x + shift), softmax(x), rtol=1e-9, atol=1e-12)


@SETTINGS
@given(logits(max_abs=1e4))
def test_logits_up_to_1e4_stay_finite(x):
    w = softmax(x)
    assert np.all(np.isfinite(w))
    assert np.allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    # The largest logit in a row always keeps at least a 1/cols share.
    assert np.all(w.max(axis=-1) >= 1 / x.shape[1] - 1e-12)


@SETTINGS
@given(logits(), st.data())
def test_masked_entries_are_zero_and_the_rest_renormalise(x, data):
    keep = data.draw(arrays(np.bool_, x.shape))
    keep[:, 0] = True  # every row keeps something to attend to
    w = softmax(np.where(keep, x, -np.inf))
    assert np.all(w[~keep] == 0.0)
    assert np.allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


@SETTINGS
@given(logits().map(lambda a: a.astype(np.float32)))
def test_float32_stays_float32(x):
    w = softmax(x)
    assert w.dtype == np.float32
    assert np.allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-5)


def test_integers_become_float64():
    assert softmax([1, 2, 3]).dtype == np.float64


# --- refusals ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "x, axis, message",
    [
        ([[0.0, 1.0], [-np.inf, -np.inf]], -1, r"index \(1,\) along axis -1 is entirely -inf"),
        ([[-np.inf, 1.0], [-np.inf, 2.0]], 0, r"index \(0,\) along axis 0 is entirely -inf"),
        ([1.0, np.nan], -1, r"x contains nan at index \(1,\)"),
        ([1.0, np.inf], -1, r"x contains inf at index \(1,\)"),
        (np.zeros((0,)), -1, r"x has shape \(0,\): it is empty"),
        (np.zeros((0, 3)), -1, r"x has shape \(0, 3\): it is empty"),
        (3.0, -1, "x is a scalar"),
        ([1.0, 2.0], 1, r"axis=1 does not exist for x of shape \(2,\)"),
        ([1.0, 2.0], 0.5, r"axis=0.5 does not exist"),
        ([1 + 2j, 3.0], -1, "x is complex"),
        (["a", "b"], -1, "x has dtype <U1; expected real numbers"),
        ([True, False], -1, "x has dtype bool; expected real numbers"),
        ([[1.0, 2.0], [3.0]], -1, "x is not a rectangular array of numbers"),
    ],
)
def test_bad_input_raises_value_error(x, axis, message):
    with pytest.raises(ValueError, match=message):
        softmax(x, axis=axis)
