"""Multi-head attention: splitting and merging heads, one head vs many, and the refusals."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention import (
    divisors,
    merge_heads,
    multi_head_attention,
    multi_head_steps,
    scaled_dot_product_attention,
    split_heads,
)

SETTINGS = settings(max_examples=30, deadline=None)
WEIGHT_NAMES = ("w_q", "w_k", "w_v", "w_o")
BIAS_NAMES = ("b_q", "b_k", "b_v", "b_o")


@st.composite
def mha_inputs(draw, dtype=np.float64, batch=True):
    """(x, weights dict, biases dict, n_heads) with d_model a multiple of n_heads."""
    n_heads, d_head = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    d_model = n_heads * d_head
    lead = draw(st.sampled_from([(), (2,)])) if batch else ()
    n = draw(st.integers(1, 6))
    values = st.floats(-3, 3, width=32 if dtype == np.float32 else 64)
    x = draw(arrays(dtype, (*lead, n, d_model), elements=values))
    weights = {name: draw(arrays(dtype, (d_model, d_model), elements=values)) for name in WEIGHT_NAMES}
    biases = {name: draw(arrays(dtype, (d_model,), elements=values)) for name in BIAS_NAMES}
    return x, weights, biases, n_heads


def loop_over_heads(x, w, b, n_heads, causal):
    """Multi-head attention the long way: one head at a time on its own columns, then concatenate."""
    d_head = x.shape[-1] // n_heads
    q, k, v = (x @ w[f"w_{t}"] + b[f"b_{t}"] for t in "qkv")
    outputs, weights = [], []
    for h in range(n_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        out_h, w_h = scaled_dot_product_attention(q[..., cols], k[..., cols], v[..., cols], causal=causal)
        outputs.append(out_h)
        weights.append(w_h)
    return np.concatenate(outputs, axis=-1) @ w["w_o"] + b["b_o"], np.stack(weights, axis=-3)


# --- worked on paper -----------------------------------------------------------------------------


def test_split_heads_gives_each_head_its_own_columns():
    # d_model = 4, two heads of d_head = 2: head 0 gets columns 0-1, head 1 columns 2-3.
    x = np.arange(8.0).reshape(2, 4)  # rows (0 1 2 3), (4 5 6 7)
    heads = split_heads(x, 2)
    assert heads.shape == (2, 2, 2)
    assert np.array_equal(heads[0], [[0, 1], [4, 5]])
    assert np.array_equal(heads[1], [[2, 3], [6, 7]])
    assert np.array_equal(merge_heads(heads), x)


def test_two_heads_by_hand():
    # Identity projections, two heads of d_head = 1 on two positions x0 = (1, 0), x1 = (0, 1).
    # Head 0 sees column 0: q = k = (1, 0). Query 0 scores (1, 0) -> e/(e+1) = 0.7311 on itself;
    # query 1 scores (0, 0) -> 1/2, 1/2. Head 1 sees column 1 (0, 1): the mirror image.
    x = np.eye(2)
    output, weights = multi_head_attention(x, np.eye(2), np.eye(2), np.eye(2), np.eye(2), 2)
    a = np.e / (np.e + 1)
    assert np.allclose(weights[0], [[a, 1 - a], [0.5, 0.5]], rtol=0, atol=1e-15)
    assert np.allclose(weights[1], [[0.5, 0.5], [1 - a, a]], rtol=0, atol=1e-15)
    # Output column h is head h's weighted average of v's column h: (a, 0.5) and (0.5, a).
    assert np.allclose(output, [[a, 0.5], [0.5, a]], rtol=0, atol=1e-15)


def test_divisors_lists_the_head_counts_that_fit():
    assert divisors(12) == [1, 2, 3, 4, 6, 12]
    assert divisors(7) == [1, 7]


# --- properties ----------------------------------------------------------------------------------


@SETTINGS
@given(st.integers(1, 4), st.integers(1, 3), st.integers(1, 5), st.sampled_from([(), (3,), (2, 1)]), st.data())
def test_split_then_merge_is_the_identity(n_heads, d_head, n, lead, data):
    x = data.draw(arrays(np.float64, (*lead, n, n_heads * d_head), elements=st.floats(-1e3, 1e3)))
    heads = split_heads(x, n_heads)
    assert heads.shape == (*lead, n_heads, n, d_head)
    assert np.array_equal(merge_heads(heads), x)
    for h in range(n_heads):
        assert np.array_equal(heads[..., h, :, :], x[..., h * d_head : (h + 1) * d_head])


@SETTINGS
@given(mha_inputs(), st.booleans())
def test_batched_heads_equal_a_loop_over_heads(inputs, causal):
    x, w, b, n_heads = inputs
    output, weights = multi_head_attention(x, **w, n_heads=n_heads, **b, causal=causal)
    expected_out, expected_w = loop_over_heads(x, w, b, n_heads, causal)
    assert weights.shape == (*x.shape[:-2], n_heads, x.shape[-2], x.shape[-2])
    assert np.allclose(weights, expected_w, rtol=1e-12, atol=1e-14)
    assert np.allclose(output, expected_out, rtol=1e-12, atol=1e-12)
    assert np.allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


@SETTINGS
@given(mha_inputs(), st.booleans(), st.booleans())
def test_one_head_equals_single_head_attention(inputs, causal, scale):
    x, w, b, _ = inputs
    output, weights = multi_head_attention(x, **w, n_heads=1, **b, causal=causal, scale=scale)
    q, k, v = (x @ w[f"w_{t}"] + b[f"b_{t}"] for t in "qkv")
    single_out, single_w = scaled_dot_product_attention(q, k, v, causal=causal, scale=scale)
    assert np.allclose(weights[..., 0, :, :], single_w, rtol=0, atol=1e-12)  # the public call: the blocked kernel
    assert np.allclose(output, single_out @ w["w_o"] + b["b_o"], rtol=1e-12, atol=1e-12)


@SETTINGS
@given(mha_inputs(batch=False), st.data())
def test_causal_outputs_ignore_later_tokens(inputs, data):
    x, w, b, n_heads = inputs
    n = x.shape[0]
    if n < 2:
        return
    t = data.draw(st.integers(0, n - 2), label="t")
    x2 = x.copy()
    x2[t + 1 :] = data.draw(arrays(np.float64, x2[t + 1 :].shape, elements=st.floats(-3, 3)), label="new later x")
    out1, w1 = multi_head_attention(x, **w, n_heads=n_heads, **b, causal=True)
    out2, w2 = multi_head_attention(x2, **w, n_heads=n_heads, **b, causal=True)
    assert np.array_equal(out1[: t + 1], out2[: t + 1]) and np.array_equal(w1[:, : t + 1], w2[:, : t + 1])


def test_biases_default_to_zero():
    rng = np.random.default_rng(0)
    x, (w_q, w_k, w_v, w_o) = rng.standard_normal((5, 6)), rng.standard_normal((4, 6, 6))
    zero = np.zeros(6)
    a = multi_head_attention(x, w_q, w_k, w_v, w_o, 3)
    b = multi_head_attention(x, w_q, w_k, w_v, w_o, 3, b_q=zero, b_k=zero, b_v=zero, b_o=zero)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_steps_expose_every_stage():
    rng = np.random.default_rng(1)
    x, ws = rng.standard_normal((5, 6)), rng.standard_normal((4, 6, 6))
    steps = multi_head_steps(x, *ws, 3)
    assert steps.q_heads.shape == steps.k_heads.shape == steps.v_heads.shape == (3, 5, 2)
    assert steps.weights.shape == (3, 5, 5) and steps.head_outputs.shape == (3, 5, 2)
    assert np.array_equal(steps.concat, merge_heads(steps.head_outputs))
    assert np.allclose(steps.output, steps.concat @ ws[3], rtol=1e-14, atol=1e-14)


@SETTINGS
@given(mha_inputs(dtype=np.float32), st.booleans())
def test_float32_stays_float32(inputs, causal):
    x, w, b, n_heads = inputs
    output, weights = multi_head_attention(x, **w, n_heads=n_heads, **b, causal=causal)
    assert output.dtype == np.float32 and weights.dtype == np.float32
    steps = multi_head_steps(x, **w, n_heads=n_heads, **b, causal=causal)
    for name in ("q_heads", "k_heads", "v_heads", "weights", "head_outputs", "concat", "output"):
        assert getattr(steps, name).dtype == np.float32, name
    assert split_heads(x, n_heads).dtype == np.float32
    assert merge_heads(split_heads(x, n_heads)).dtype == np.float32


def test_float32_x_with_float64_weights_stays_float32():
    x = np.ones((3, 4), np.float32)
    output, weights = multi_head_attention(x, *np.eye(4)[None].repeat(4, axis=0), 2)
    assert output.dtype == np.float32 and weights.dtype == np.float32


# --- refusals ------------------------------------------------------------------------------------

X = np.ones((3, 6))
W = np.eye(6)


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(n_heads=4), r"d_model=6 is not divisible by n_heads=4.*try one of \[1, 2, 3, 6\]"),
        (dict(n_heads=0), "n_heads must be at least 1, got 0"),
        (dict(n_heads=2.0), "n_heads must be a whole number, got 2.0"),
        (dict(w_q=np.eye(5)), r"w_q has shape \(5, 5\); expected \(6, 6\)"),
        (dict(w_o=np.ones((6, 4))), r"w_o has shape \(6, 4\); expected \(6, 6\)"),
        (dict(b_k=np.ones(5)), r"b_k has shape \(5,\); expected \(6,\)"),
        (dict(x=np.ones((3, 4))), r"w_q has shape \(6, 6\); expected \(4, 4\)"),
        (dict(x=np.ones((0, 6))), r"x has shape \(0, 6\): it is empty"),
        (dict(x=np.ones(6)), r"x has shape \(6,\); expected \(..., n, d_model\)"),
        (dict(x=np.array([[np.nan] * 6] * 3)), r"x contains nan at index \(0, 0\)"),
        (dict(w_v=np.where(np.eye(6) > 0, np.inf, 0)), r"w_v contains inf at index \(0, 0\)"),
        (dict(b_o=np.full(6, np.nan)), r"b_o contains nan"),
        (dict(x=X * 1j), "x is complex"),
        (dict(w_k=[["1"] * 6] * 6), "w_k has dtype <U1; expected real numbers"),
        (dict(w_o=np.full((6, 6), 1e308)), "the projection x @ w_o overflowed"),
    ],
)
def test_bad_input_raises_value_error(changes, message):
    kwargs = dict(x=X, w_q=W, w_k=W, w_v=W, w_o=W, n_heads=2) | changes
    with np.errstate(over="ignore", invalid="ignore"):
        with pytest.raises(ValueError, match=message):
            multi_head_attention(**kwargs)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: split_heads(np.ones((3, 6)), 4), "d_model=6 is not divisible by n_heads=4"),
        (lambda: split_heads(np.ones((0, 6)), 2), r"x has shape \(0, 6\): it is empty"),
        (lambda: split_heads(np.ones(6), 2), r"x has shape \(6,\); expected \(..., n, d_model\)"),
        (lambda: split_heads(np.ones((3, 6)), -1), "n_heads must be at least 1"),
        (lambda: merge_heads(np.ones((3, 6))), r"x has shape \(3, 6\); expected \(..., n_heads, n, d_head\)"),
        (lambda: merge_heads(np.ones((2, 0, 3))), r"x has shape \(2, 0, 3\): it is empty"),
        (lambda: merge_heads(np.full((2, 3, 3), np.inf)), "x contains inf"),
    ],
)
def test_split_and_merge_refuse_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()
