"""Layer norm: a row worked on paper, mean 0 / variance 1, stability, and the refusals."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention import layer_norm

SETTINGS = settings(max_examples=50, deadline=None)


def rows(dtype=np.float64, max_abs=1e3):
    shapes = st.tuples(st.integers(1, 4), st.integers(2, 8))
    return arrays(dtype, shapes, elements=st.floats(-max_abs, max_abs, width=32 if dtype == np.float32 else 64))


def test_row_worked_on_paper():
    # x = (0, 0, 4, 4): mean 2, deviations (-2, -2, 2, 2), variance 4, standard deviation 2,
    # so the normalised row is (-1, -1, 1, 1). With eps = 1e-5 it is divided by sqrt(4.00001) instead:
    # 2/sqrt(4.00001) = 0.99999875. Then gamma scales and beta shifts each column.
    x = np.array([[0.0, 0.0, 4.0, 4.0]])
    normed = 2 / math.sqrt(4 + 1e-5)
    assert np.allclose(layer_norm(x, np.ones(4), np.zeros(4)), [[-normed, -normed, normed, normed]], rtol=0, atol=1e-15)
    assert np.allclose(
        layer_norm(x, np.ones(4), np.zeros(4)), [[-0.99999875, -0.99999875, 0.99999875, 0.99999875]], rtol=0, atol=1e-8
    )
    out = layer_norm(x, np.array([1.0, 2.0, 3.0, 0.0]), np.array([0.0, 0.0, 1.0, 5.0]))
    assert np.allclose(out, [[-normed, -2 * normed, 3 * normed + 1, 5.0]], rtol=0, atol=1e-15)


def test_constant_row_becomes_beta_not_nan():
    # Variance 0: without eps this would be 0/0. With it, every deviation is 0 and the output is beta.
    out = layer_norm(np.full((2, 3), 7.0), np.ones(3), np.array([1.0, 2.0, 3.0]))
    assert np.array_equal(out, [[1.0, 2.0, 3.0]] * 2)


@SETTINGS
@given(rows())
def test_rows_have_mean_zero_and_variance_one(x):
    assume(np.all(x.std(axis=-1) > 1e-3))  # eps only matters when the spread is tiny
    out = layer_norm(x, np.ones(x.shape[-1]), np.zeros(x.shape[-1]), eps=1e-12)
    assert np.allclose(out.mean(axis=-1), 0.0, rtol=0, atol=1e-9)
    assert np.allclose(out.var(axis=-1), 1.0, rtol=0, atol=1e-6)


@SETTINGS
@given(rows(), st.floats(1e-2, 1e2), st.floats(-1e3, 1e3))
def test_shifting_and_rescaling_a_row_changes_nothing(x, factor, shift):
    assume(np.all(x.std(axis=-1) > 1e-1))  # so eps = 1e-15 is negligible against every variance
    d = x.shape[-1]
    gamma, beta = np.linspace(0.5, 2, d), np.linspace(-1, 1, d)
    assert np.allclose(
        layer_norm(factor * x + shift, gamma, beta, eps=1e-15),
        layer_norm(x, gamma, beta, eps=1e-15),
        rtol=1e-6,
        atol=1e-6,
    )


@SETTINGS
@given(rows())
def test_matches_a_python_loop_reference(x):
    d = x.shape[-1]
    gamma, beta = np.linspace(-1, 2, d), np.linspace(3, 0, d)
    expected = np.empty_like(x)
    for i, row in enumerate(x.tolist()):
        mean = sum(row) / d
        var = sum((value - mean) ** 2 for value in row) / d
        for j, value in enumerate(row):
            expected[i, j] = gamma[j] * (value - mean) / math.sqrt(var + 1e-5) + beta[j]
    assert np.allclose(layer_norm(x, gamma, beta), expected, rtol=1e-9, atol=1e-9)


@SETTINGS
@given(rows(dtype=np.float32))
def test_float32_stays_float32(x):
    d = x.shape[-1]
    out = layer_norm(x, np.ones(d, np.float32), np.zeros(d, np.float32))
    assert out.dtype == np.float32
    assert layer_norm(x, np.ones(d), np.zeros(d)).dtype == np.float32  # float64 gamma/beta do not promote


def test_huge_float32_rows_still_normalise():
    # Regression: the variance of (1e20, -1e20, ...) overflowed float32 (squares of 1e20), and rows near
    # the float32 maximum made the mean overflow and came back as NaN. The statistics are now float64.
    x = np.array([[1e20, -1e20, 0.0, 0.0], [3e38, 3e38, 3e38, -3e38]], np.float32)
    out = layer_norm(x, np.ones(4, np.float32), np.zeros(4, np.float32))
    assert out.dtype == np.float32 and np.all(np.isfinite(out))
    r2 = math.sqrt(2)  # row 0: deviations (±1e20, 0, 0), variance 5e39, sd 1e20/sqrt(2)
    assert np.allclose(out[0], [r2, -r2, 0, 0], rtol=0, atol=1e-6)
    assert np.allclose(out[1], [1 / math.sqrt(3)] * 3 + [-math.sqrt(3)], rtol=0, atol=1e-6)


def test_leading_axes_and_one_dimensional_input():
    x = np.random.default_rng(0).standard_normal((2, 3, 5))
    out = layer_norm(x, np.ones(5), np.zeros(5))
    assert out.shape == x.shape
    assert np.allclose(layer_norm(x[1, 2], np.ones(5), np.zeros(5)), out[1, 2], rtol=0, atol=1e-15)


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(gamma=np.ones(3)), r"gamma has shape \(3,\); expected \(4,\)"),
        (dict(beta=np.ones((1, 4))), r"beta has shape \(1, 4\); expected \(4,\)"),
        (dict(eps=0.0), "eps must be a positive finite number, got 0.0"),
        (dict(eps=-1e-5), "eps must be a positive finite number"),
        (dict(eps=float("nan")), "eps must be a positive finite number, got nan"),
        (dict(eps=True), "eps must be a positive finite number, got True"),
        (dict(eps="1e-5"), "eps must be a positive finite number"),
        (dict(x=np.array([[1.0, np.nan, 0, 0]])), r"x contains nan at index \(0, 1\)"),
        (dict(gamma=np.array([1.0, 1.0, np.inf, 1.0])), r"gamma contains inf at index \(2,\)"),
        (dict(x=np.ones((2, 0))), r"x has shape \(2, 0\): it is empty"),
        (dict(x=np.float64(3.0)), r"x has shape \(\); expected \(..., d\)"),
        (dict(x=np.ones((2, 4)) * 1j), "x is complex"),
        (dict(x=np.array([[1e300, -1e300, 0, 0]])), "the variance of x overflowed to inf"),
    ],
)
def test_bad_input_raises_value_error(changes, message):
    kwargs = dict(x=np.arange(8.0).reshape(2, 4), gamma=np.ones(4), beta=np.zeros(4)) | changes
    with np.errstate(over="ignore", invalid="ignore"):
        with pytest.raises(ValueError, match=message):
            layer_norm(**kwargs)
