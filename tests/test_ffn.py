"""The position-wise feed-forward network and its activations (ReLU, exact GELU)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.special import erf
from scipy.stats import norm

from attention import feed_forward, feed_forward_steps, gelu, relu

SETTINGS = settings(max_examples=40, deadline=None)


def gelu_tanh(x):
    """The tanh approximation of GELU (GPT-2's), which the core deliberately does not use."""
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


@st.composite
def ffn_inputs(draw, dtype=np.float64):
    n, d_model, d_ff = draw(st.integers(1, 5)), draw(st.integers(1, 4)), draw(st.integers(1, 6))
    values = st.floats(-3, 3, width=32 if dtype == np.float32 else 64)
    shapes = {"x": (n, d_model), "w_1": (d_model, d_ff), "b_1": (d_ff,), "w_2": (d_ff, d_model), "b_2": (d_model,)}
    return {name: draw(arrays(dtype, shape, elements=values)) for name, shape in shapes.items()}


# --- worked on paper -----------------------------------------------------------------------------


def test_relu_network_by_hand():
    # x = (1, -2). Expand: x W_1 = (1, -2, 1 - 2) = (1, -2, -1), plus b_1 = (0, 0, 0.5) -> (1, -2, -0.5).
    # ReLU keeps only the positive unit: hidden (1, 0, 0). Contract: row 0 of W_2 = (1, 1), plus b_2 = (0, 10).
    w_1 = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    w_2 = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    hidden, out = feed_forward_steps([[1.0, -2.0]], w_1, [0.0, 0.0, 0.5], w_2, [0.0, 10.0])
    assert np.array_equal(hidden, [[1.0, 0.0, 0.0]])
    assert np.array_equal(out, [[1.0, 11.0]])


def test_gelu_network_by_hand():
    # Same network with GELU: hidden = (GELU(1), GELU(-2), GELU(-0.5)) = (0.8413, -0.0455, -0.1543),
    # then out_j = sum_i hidden_i W_2[i, j] + b_2[j] = (0.8413 - 0.0910 - 0.4628) + b_2 = 0.2875 + b_2.
    w_1 = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    w_2 = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    hidden, out = feed_forward_steps([[1.0, -2.0]], w_1, [0.0, 0.0, 0.5], w_2, [0.0, 10.0], activation="gelu")
    assert np.allclose(hidden, [[0.8413, -0.0455, -0.1543]], rtol=0, atol=1e-4)
    assert np.allclose(out, [[0.2875, 10.2875]], rtol=0, atol=1e-4)


def test_gelu_values_known_on_paper():
    # GELU(x) = x Phi(x): Phi(0) = 1/2 so GELU(0) = 0; Phi(1) = 0.841345 so GELU(1) = 0.841345;
    # Phi(-1) = 0.158655 so GELU(-1) = -0.158655; far out Phi is 1 or 0, so GELU(10) = 10, GELU(-10) = 0.
    assert np.allclose(gelu([0.0, 1.0, -1.0, 10.0, -10.0]), [0.0, 0.841345, -0.158655, 10.0, 0.0], rtol=0, atol=1e-6)
    assert np.array_equal(relu([-2.0, 0.0, 3.5]), [0.0, 0.0, 3.5])


# --- GELU: exact, not approximated ---------------------------------------------------------------


@SETTINGS
@given(arrays(np.float64, st.integers(1, 20), elements=st.floats(-8, 8)))
def test_gelu_is_the_exact_erf_form(x):
    expected = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x])
    assert np.allclose(gelu(x), expected, rtol=1e-14, atol=1e-15)
    assert np.allclose(gelu(x), x * norm.cdf(x), rtol=1e-12, atol=1e-15)
    # x·(1/√2) and x/√2 may differ in the last bit, and erf's slope carries that on: a few ulp of erf, which is
    # near -1 for x < 0, so 1 + erf loses digits there (at x = -3 it is 0.0027: one ulp of erf is 4e-14 of it). The
    # bound is a few ulp of erf times 0.5 |x|, never the ~1e-3 of the tanh approximation.
    naive = 0.5 * x * (1 + erf(x / np.sqrt(2)))
    assert np.all(np.abs(gelu(x) - naive) <= 1e-14 * np.abs(naive) + 4 * np.finfo(float).eps * np.abs(x))


@SETTINGS
@given(arrays(np.float64, st.integers(1, 20), elements=st.floats(-8, 8)))
def test_gelu_of_minus_x_is_gelu_of_x_minus_x(x):
    # Phi(-x) = 1 - Phi(x), so -x Phi(-x) = x Phi(x) - x.
    assert np.allclose(gelu(-x), gelu(x) - x, rtol=0, atol=1e-12)


def test_gelu_differs_from_the_tanh_approximation():
    x = np.array([-3.0, -1.5, 1.0, 2.0])
    difference = np.abs(gelu(x) - gelu_tanh(x))
    assert np.all(difference > 1e-5)  # e.g. at 1: 0.841345 exact vs 0.841192 with tanh
    assert np.all(difference < 1e-3)  # ...but close: it is an approximation of the same curve


# --- properties ----------------------------------------------------------------------------------


@SETTINGS
@given(ffn_inputs(), st.sampled_from(["relu", "gelu"]))
def test_matches_a_python_loop_reference(p, activation):
    act = (lambda z: max(z, 0.0)) if activation == "relu" else (lambda z: 0.5 * z * (1 + math.erf(z / math.sqrt(2))))
    n, d_model = p["x"].shape
    d_ff = p["w_1"].shape[1]
    expected = np.zeros((n, d_model))
    for i in range(n):
        hidden = [act(sum(p["x"][i, c] * p["w_1"][c, f] for c in range(d_model)) + p["b_1"][f]) for f in range(d_ff)]
        for j in range(d_model):
            expected[i, j] = sum(hidden[f] * p["w_2"][f, j] for f in range(d_ff)) + p["b_2"][j]
    assert np.allclose(feed_forward(**p, activation=activation), expected, rtol=1e-9, atol=1e-9)


@SETTINGS
@given(ffn_inputs(), st.sampled_from(["relu", "gelu"]))
def test_each_position_is_transformed_independently(p, activation):
    out = feed_forward(**p, activation=activation)
    assert out.shape == p["x"].shape
    for i in range(p["x"].shape[0]):
        alone = feed_forward(p["x"][i : i + 1], p["w_1"], p["b_1"], p["w_2"], p["b_2"], activation=activation)
        assert np.allclose(alone[0], out[i], rtol=1e-12, atol=1e-12)


@SETTINGS
@given(ffn_inputs(dtype=np.float32), st.sampled_from(["relu", "gelu"]))
def test_float32_stays_float32(p, activation):
    hidden, out = feed_forward_steps(**p, activation=activation)
    assert hidden.dtype == np.float32 and out.dtype == np.float32
    assert feed_forward(**p, activation=activation).dtype == np.float32
    assert relu(p["x"]).dtype == np.float32 and gelu(p["x"]).dtype == np.float32
    mixed = {name: (a if name == "x" else a.astype(np.float64)) for name, a in p.items()}
    assert feed_forward(**mixed, activation=activation).dtype == np.float32


def test_leading_axes_pass_through():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4))
    w_1, w_2 = rng.standard_normal((4, 8)), rng.standard_normal((8, 4))
    out = feed_forward(x, w_1, np.zeros(8), w_2, np.zeros(4))
    assert out.shape == x.shape
    assert np.allclose(out[1], feed_forward(x[1], w_1, np.zeros(8), w_2, np.zeros(4)), rtol=0, atol=1e-14)


# --- refusals ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(activation="tanh"), r"activation must be one of \('relu', 'gelu'\), got 'tanh'"),
        (dict(w_1=np.ones((3, 6))), r"w_1 has shape \(3, 6\); expected \(d_model=4, d_ff\)"),
        (dict(w_1=np.ones(4)), r"w_1 has shape \(4,\); expected \(d_model=4, d_ff\)"),
        (dict(w_1=np.ones((4, 0)), b_1=np.ones(0), w_2=np.ones((0, 4))), r"w_1 has shape \(4, 0\).*d_ff >= 1"),
        (dict(b_1=np.ones(5)), r"b_1 has shape \(5,\); expected \(6,\)"),
        (dict(w_2=np.ones((6, 3))), r"w_2 has shape \(6, 3\); expected \(6, 4\)"),
        (dict(b_2=np.ones(6)), r"b_2 has shape \(6,\); expected \(4,\)"),
        (dict(x=np.ones((0, 4))), r"x has shape \(0, 4\): it is empty"),
        (dict(x=np.array([[1.0, 2.0, np.nan, 0.0]])), r"x contains nan at index \(0, 2\)"),
        (dict(w_2=np.full((6, 4), -np.inf)), r"w_2 contains -inf"),
        (dict(b_1=np.ones(6) * 1j), "b_1 is complex"),
        (dict(x=[["x"] * 4]), "x has dtype <U1"),
        (dict(w_1=np.full((4, 6), 1e200), w_2=np.full((6, 4), 1e200)), "the feed-forward output overflowed"),
    ],
)
def test_bad_input_raises_value_error(changes, message):
    good = dict(x=np.ones((2, 4)), w_1=np.ones((4, 6)), b_1=np.zeros(6), w_2=np.ones((6, 4)), b_2=np.zeros(4))
    kwargs = good | changes
    with np.errstate(over="ignore", invalid="ignore"):
        with pytest.raises(ValueError, match=message):
            feed_forward(**kwargs)


@pytest.mark.parametrize("activation", [relu, gelu])
@pytest.mark.parametrize("x, message", [([np.nan], "x contains nan"), ([1j], "x is complex"), (["a"], "x has dtype")])
def test_activations_refuse_bad_input(activation, x, message):
    with pytest.raises(ValueError, match=message):
        activation(x)


def test_float32_erf_is_accurate_to_float32_precision():
    from attention.ffn import erf_float32

    x = np.linspace(-9, 9, 400_001).astype(np.float32)
    exact = erf(x.astype(np.float64))
    assert np.abs(erf_float32(x) - exact).max() < 5e-7  # float32's spacing near 1 is 6e-8 to 1.2e-7
    assert erf_float32(x).dtype == np.float32 and np.all(np.abs(erf_float32(x)) <= 1.0)


@SETTINGS
@given(arrays(np.float32, st.integers(1, 50), elements=st.floats(-20, 20, width=32)))
def test_float32_gelu_matches_the_exact_float64_one(x):
    exact = x.astype(np.float64) * norm.cdf(x.astype(np.float64))
    got = gelu(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, exact, rtol=1e-6, atol=2e-6)


def test_the_gelu_of_a_large_array_in_pieces_is_the_gelu_of_the_whole():
    from attention.chunks import PIECE_VALUES
    from attention.ffn import _gelu_values

    x = np.random.default_rng(3).standard_normal((3 * PIECE_VALUES // 1000 + 7, 1000)).astype(np.float32)
    np.testing.assert_array_equal(gelu(x), _gelu_values(x))  # same numbers, bit for bit
