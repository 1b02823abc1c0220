"""Scaled dot-product attention: cases worked on paper, a python-loop reference, properties, refusals."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention import attention_steps, causal_mask, scaled_dot_product_attention
from attention.dot_product import padded_attention
from attention.masks import padding_mask, sliding_window_mask

SETTINGS = settings(max_examples=40, deadline=None)
E = math.e

# Three orthogonal unit keys in d_k = 4, so 1/sqrt(d_k) = 1/2 and every dot product is one coordinate of q.
KEYS = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]])


def naive_attention(q, k, v, *, causal=False, scale=True, mask=None):
    """Attention for 2-D q, k, v written with python loops and math.exp, exactly as on paper."""
    n, d_k = q.shape
    m, d_v = v.shape
    weights, output = np.zeros((n, m)), np.zeros((n, d_v))
    for i in range(n):
        scores = []
        for j in range(m):
            score = sum(q[i, c] * k[j, c] for c in range(d_k)) / (math.sqrt(d_k) if scale else 1.0)
            allowed = (not causal or j <= i) and (mask is None or mask[i, j])
            scores.append(score if allowed else -math.inf)
        top = max(scores)
        exps = [math.exp(s - top) for s in scores]  # math.exp(-inf) == 0.0
        for j in range(m):
            weights[i, j] = exps[j] / sum(exps)
        for c in range(d_v):
            output[i, c] = sum(weights[i, j] * v[j, c] for j in range(m))
    return output, weights


def vectorised_reference(q, k, v, *, causal=False):
    """The formula in one line of numpy per step, for sizes too big for python loops."""
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if causal:
        scores = np.where(causal_mask(*scores.shape[-2:]), scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ v, weights


@st.composite
def qkv(draw, max_abs=10.0, batch=True, self_attention=False, dtype=np.float64):
    """q (..., n, d_k), k (..., m, d_k), v (..., m, d_v) with bounded entries (m = n for self-attention)."""
    lead = draw(st.sampled_from([(), (1,), (2,), (3,)])) if batch else ()
    n = draw(st.integers(2 if self_attention else 1, 7))
    m = n if self_attention else draw(st.integers(1, 7))
    d_k, d_v = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    values = st.floats(-max_abs, max_abs, width=32 if dtype == np.float32 else 64)
    return tuple(
        draw(arrays(dtype, (*lead, rows, cols), elements=values)) for rows, cols in ((n, d_k), (m, d_k), (m, d_v))
    )


# --- worked on paper -----------------------------------------------------------------------------


def test_aligned_key_wins_orthogonal_keys_share_the_rest():
    # q = (2,0,0,0) points along key 0 (dot 2, scaled 2/2 = 1) and is orthogonal to keys 1, 2 (dot 0).
    # Weights e^1 : e^0 : e^0, i.e. e/(e+2) = 2.71828/4.71828 = 0.5761 and 1/(e+2) = 0.2119 each.
    v = np.array([[6.0, 0.0], [0.0, 6.0], [0.0, 0.0]])
    output, weights = scaled_dot_product_attention([[2.0, 0.0, 0.0, 0.0]], KEYS, v)
    assert np.allclose(weights, [[E / (E + 2), 1 / (E + 2), 1 / (E + 2)]], rtol=0, atol=1e-15)
    assert np.allclose(weights, [[0.5761, 0.2119, 0.2119]], rtol=0, atol=1e-4)
    # The output is the weighted average of the values: 6·0.5761 = 3.4567 and 6·0.2119 = 1.2716.
    assert np.allclose(output, [[3.4567, 1.2716]], rtol=0, atol=1e-4)


def test_three_queries_with_exact_fractions():
    # Queries built so that the scaled scores are logarithms and the weights are exact fractions:
    #   q0 = (2 ln 4, 0, 0, 0): aligned with key 0, scaled scores (ln 4, 0, 0) -> 4:1:1 -> 2/3, 1/6, 1/6.
    #   q1 = (0, 0, 0, 5): orthogonal to every key, scores (0, 0, 0) -> no preference -> 1/3 each.
    #   q2 = (0, 2 ln 2, 2 ln 2, 0): half-aligned with keys 1 and 2 -> 1:2:2 -> 0.2, 0.4, 0.4.
    q = np.array([[2 * math.log(4), 0, 0, 0], [0, 0, 0, 5.0], [0, 2 * math.log(2), 2 * math.log(2), 0]])
    v = np.array([[6.0], [0.0], [18.0]])
    output, weights = scaled_dot_product_attention(q, KEYS, v)
    assert np.allclose(weights, [[2 / 3, 1 / 6, 1 / 6], [1 / 3, 1 / 3, 1 / 3], [0.2, 0.4, 0.4]], rtol=0, atol=1e-15)
    # Outputs: 6·2/3 + 18/6 = 7;  (6 + 0 + 18)/3 = 8;  0.2·6 + 0.4·18 = 8.4.
    assert np.allclose(output, [[7.0], [8.0], [8.4]], rtol=0, atol=1e-14)


def test_without_scaling_the_aligned_key_takes_more():
    # scale=False keeps the raw dot product 2: e^2/(e^2+2) = 7.3891/9.3891 = 0.7870, 1/(e^2+2) = 0.1065.
    _, weights = scaled_dot_product_attention([[2.0, 0.0, 0.0, 0.0]], KEYS, np.eye(3), scale=False)
    assert np.allclose(weights, [[E**2 / (E**2 + 2), 1 / (E**2 + 2), 1 / (E**2 + 2)]], rtol=0, atol=1e-15)
    assert np.allclose(weights, [[0.7870, 0.1065, 0.1065]], rtol=0, atol=1e-4)


def test_causal_with_equal_scores_is_a_running_mean():
    # Zero queries score 0 against every key, so each query spreads evenly over the keys it may see:
    # query i sees keys 0..i, weight 1/(i+1) each. Values 4, 8, 0, 12 -> running means 4, 6, 4, 6.
    output, weights = scaled_dot_product_attention(
        np.zeros((4, 2)), np.ones((4, 2)), [[4.0], [8.0], [0.0], [12.0]], causal=True
    )
    expected = [[1, 0, 0, 0], [1 / 2, 1 / 2, 0, 0], [1 / 3, 1 / 3, 1 / 3, 0], [1 / 4, 1 / 4, 1 / 4, 1 / 4]]
    assert np.allclose(weights, expected, rtol=0, atol=1e-15)
    assert np.all(weights[np.triu_indices(4, 1)] == 0.0)  # the future gets exactly nothing
    assert np.allclose(output, [[4.0], [6.0], [4.0], [6.0]], rtol=0, atol=1e-14)


def test_mask_removes_the_aligned_key_before_the_softmax():
    # Unmasked, q0 would give key 0 two thirds (previous test). Masked out before the softmax, key 0
    # scores -inf, weight exactly 0, and the two orthogonal keys (score 0 each) split 1/2, 1/2.
    q = [[2 * math.log(4), 0.0, 0.0, 0.0]]
    output, weights = scaled_dot_product_attention(q, KEYS, [[6.0], [0.0], [18.0]], mask=[[False, True, True]])
    assert weights[0, 0] == 0.0
    assert np.allclose(weights, [[0.0, 0.5, 0.5]], rtol=0, atol=1e-15)
    assert np.allclose(output, [[9.0]], rtol=0, atol=1e-14)  # (0 + 18)/2


def test_attention_steps_shows_each_stage_by_hand():
    # Raw scores q·k_j = (2 ln 4, 0, 0); scaled by 1/2 -> (ln 4, 0, 0); causal with one query of three keys
    # hides keys 1 and 2 -> (ln 4, -inf, -inf) -> all weight on key 0.
    steps = attention_steps([[2 * math.log(4), 0.0, 0.0, 0.0]], KEYS, np.eye(3), causal=True)
    assert np.allclose(steps.scores, [[2 * math.log(4), 0, 0]], rtol=0, atol=1e-15)
    assert steps.scale_factor == 0.5 and steps.d_k == 4
    assert np.allclose(steps.scaled, [[math.log(4), 0, 0]], rtol=0, atol=1e-15)
    assert np.array_equal(steps.masked[0, 1:], [-np.inf, -np.inf])
    assert np.array_equal(steps.allowed, [[True, False, False]])
    assert np.array_equal(steps.weights, [[1.0, 0.0, 0.0]])
    assert np.array_equal(steps.output, [[1.0, 0.0, 0.0]])


# --- against references --------------------------------------------------------------------------


@SETTINGS
@given(qkv(batch=False), st.booleans(), st.booleans())
def test_matches_python_loop_reference(arrays_, causal, scale):
    q, k, v = arrays_
    expected_out, expected_w = naive_attention(q, k, v, causal=causal, scale=scale)
    output, weights = scaled_dot_product_attention(q, k, v, causal=causal, scale=scale)
    assert np.allclose(weights, expected_w, rtol=1e-9, atol=1e-12)
    assert np.allclose(output, expected_out, rtol=1e-9, atol=1e-9)


@SETTINGS
@given(qkv(), st.booleans(), st.booleans())
def test_attention_steps_is_the_same_computation(arrays_, causal, scale):
    # The public call runs the blocked kernel (same maths, other rounding); the steps show every stage.
    q, k, v = arrays_
    output, weights = scaled_dot_product_attention(q, k, v, causal=causal, scale=scale)
    steps = attention_steps(q, k, v, causal=causal, scale=scale)
    np.testing.assert_allclose(weights, steps.weights, rtol=0, atol=1e-12)
    np.testing.assert_allclose(output, steps.output, rtol=0, atol=1e-12 * (1 + np.abs(v).max()))
    assert np.all(weights[..., ~steps.allowed] == 0.0)
    assert np.allclose(steps.scaled, steps.scores * steps.scale_factor, rtol=0, atol=0)
    assert np.array_equal(np.isneginf(steps.masked), ~steps.allowed)


@SETTINGS
@given(qkv(), st.booleans())
def test_batched_equals_a_loop_over_the_batch(arrays_, causal):
    q, k, v = arrays_
    output, weights = scaled_dot_product_attention(q, k, v, causal=causal)
    if q.ndim == 2:
        return
    for b in range(q.shape[0]):
        out_b, w_b = scaled_dot_product_attention(q[b], k[b], v[b], causal=causal)
        assert np.allclose(output[b], out_b, rtol=1e-12, atol=1e-12)
        assert np.allclose(weights[b], w_b, rtol=1e-12, atol=1e-14)


def test_leading_axes_broadcast():
    # One query set shared by 3 heads of keys, and values with a further batch axis of 2.
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((5, 4)), rng.standard_normal((3, 6, 4)), rng.standard_normal((2, 1, 6, 3))
    output, weights = scaled_dot_product_attention(q, k, v)
    assert weights.shape == (3, 5, 6) and output.shape == (2, 3, 5, 3)
    for b in range(2):
        for h in range(3):
            out_bh, w_h = naive_attention(q, k[h], v[b, 0])
            assert np.allclose(weights[h], w_h, rtol=1e-12, atol=1e-14)
            assert np.allclose(output[b, h], out_bh, rtol=1e-12, atol=1e-12)


# --- properties ----------------------------------------------------------------------------------


@SETTINGS
@given(qkv(), st.booleans(), st.booleans())
def test_weight_rows_are_probabilities(arrays_, causal, scale):
    q, k, v = arrays_
    output, weights = scaled_dot_product_attention(q, k, v, causal=causal, scale=scale)
    assert weights.shape == (*np.broadcast_shapes(q.shape[:-2], k.shape[:-2]), q.shape[-2], k.shape[-2])
    assert output.shape == (*weights.shape[:-1], v.shape[-1])
    assert np.all(weights >= 0)
    assert np.allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


@SETTINGS
@given(qkv(max_abs=100.0, batch=False))
def test_scores_as_large_as_1e4_give_finite_weights(arrays_):
    q, k, v = arrays_
    # Without scaling, entries up to 100 in up to 5 dimensions give scores up to ±5e4.
    output, weights = scaled_dot_product_attention(q, k, v, scale=False)
    assert np.all(np.isfinite(weights)) and np.all(np.isfinite(output))
    assert np.allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


@SETTINGS
@given(qkv(self_attention=True), st.data())
def test_causal_outputs_ignore_every_later_token(arrays_, data):
    q, k, v = arrays_
    n = q.shape[-2]
    t = data.draw(st.integers(0, n - 2), label="t")
    changed = []
    for name, a in (("q", q), ("k", k), ("v", v)):
        a = a.copy()
        a[..., t + 1 :, :] = data.draw(
            arrays(np.float64, a[..., t + 1 :, :].shape, elements=st.floats(-10, 10)), label=f"new {name} after t"
        )
        changed.append(a)
    out1, w1 = scaled_dot_product_attention(q, k, v, causal=True)
    out2, w2 = scaled_dot_product_attention(*changed, causal=True)
    assert np.array_equal(out1[..., : t + 1, :], out2[..., : t + 1, :])  # bit for bit
    assert np.array_equal(w1[..., : t + 1, :], w2[..., : t + 1, :])


@SETTINGS
@given(qkv(), st.booleans(), st.data())
def test_mask_gives_exact_zeros_and_rows_still_sum_to_one(arrays_, causal, data):
    q, k, v = arrays_
    n, m = q.shape[-2], k.shape[-2]
    mask = data.draw(arrays(np.bool_, (n, m)), label="mask")
    mask[:, 0] = True  # key 0 is visible to every query, with or without causal
    output, weights = scaled_dot_product_attention(q, k, v, causal=causal, mask=mask)
    allowed = mask & causal_mask(n, m) if causal else mask
    assert np.all(weights[..., ~allowed] == 0.0)
    assert np.allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    # A key that no query may see never reaches the output, however large its value.
    v_poisoned = np.where(allowed.any(axis=0)[:, None], v, 1e6)
    assert np.array_equal(scaled_dot_product_attention(q, k, v_poisoned, causal=causal, mask=mask)[0], output)


@SETTINGS
@given(qkv(dtype=np.float32), st.booleans())
def test_float32_stays_float32(arrays_, causal):
    q, k, v = arrays_
    output, weights = scaled_dot_product_attention(q, k, v, causal=causal)
    assert output.dtype == np.float32 and weights.dtype == np.float32
    assert np.allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-5)
    steps = attention_steps(q, k, v, causal=causal)
    for name in ("q", "k", "v", "scores", "scaled", "masked", "weights", "output"):
        assert getattr(steps, name).dtype == np.float32, name


def test_mixed_float32_and_float64_give_float64():
    out, w = scaled_dot_product_attention(np.ones((2, 3), np.float32), np.ones((2, 3)), np.ones((2, 3), np.float32))
    assert out.dtype == np.float64 and w.dtype == np.float64


def test_inputs_are_not_modified():
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((4, 3)) for _ in range(3))
    before = [a.copy() for a in (q, k, v)]
    scaled_dot_product_attention(q, k, v, causal=True)
    attention_steps(q, k, v, causal=True)
    assert all(np.array_equal(a, b) for a, b in zip((q, k, v), before))


# --- refusals ------------------------------------------------------------------------------------

GOOD = np.ones((3, 4))

BAD_INPUTS = [
    (dict(q=np.ones((3, 4)), k=np.ones((3, 3)), v=GOOD), r"k has d_k=3 but q has d_k=4 \(q \(3, 4\), k \(3, 3\)\)"),
    (dict(k=np.ones((3, 4)), v=np.ones((2, 4))), r"v has 2 positions but k has 3 \(k \(3, 4\), v \(2, 4\)\)"),
    (
        dict(mask=np.ones((2, 2), bool)),
        r"mask has shape \(2, 2\); expected a shape broadcastable to the scores \(3, 3\)",
    ),
    (dict(mask=np.ones((2, 3, 3), bool)), r"mask has shape \(2, 3, 3\); expected a shape broadcastable"),
    (dict(mask=np.ones((3, 3))), "mask has dtype float64; expected bool"),
    (dict(mask=np.array([[1, 1, 1], [0, 0, 0], [1, 0, 0]], bool)), "mask leaves query 1 no key to attend to"),
    (
        dict(mask=np.array([[0, 1, 1], [1, 1, 1], [1, 1, 1]], bool), causal=True),
        "mask with causal=True leaves query 0 no key to attend to",
    ),
    (dict(q=np.array([[1.0, np.nan, 0, 0]] * 3)), r"q contains nan at index \(0, 1\)"),
    (dict(k=np.array([[1.0, 0, 0, 0]] * 2 + [[0, 0, np.inf, 0]])), r"k contains inf at index \(2, 2\)"),
    (dict(v=np.array([[1.0, 0, 0, -np.inf]] * 3)), r"v contains -inf at index \(0, 3\)"),
    (dict(q=np.ones((0, 4))), r"q has shape \(0, 4\): it is empty"),
    (dict(k=np.ones((0, 4)), v=np.ones((0, 4))), r"k has shape \(0, 4\): it is empty"),
    (dict(v=np.ones((3, 0))), r"v has shape \(3, 0\): it is empty"),
    (dict(q=np.ones((3, 4)) * 1j), r"q is complex \(complex128\)"),
    (dict(k=[["a"] * 4] * 3), "k has dtype <U1; expected real numbers"),
    (dict(v=np.ones((3, 4), bool)), "v has dtype bool; expected real numbers"),
    (dict(v=np.array([[None] * 4] * 3)), "v has dtype object; expected real numbers"),
    (dict(q=np.ones(4)), r"q has shape \(4,\); expected \(..., positions, dimensions\)"),
    (
        dict(q=np.ones((2, 3, 4)), k=np.ones((3, 3, 4)), v=np.ones((3, 3, 4))),
        r"leading \(batch/head\) axes of q \(2, 3, 4\), k \(3, 3, 4\) and v \(3, 3, 4\) do not broadcast",
    ),
    (dict(q=np.full((3, 4), 1e200), k=np.full((3, 4), 1e200)), "scores q·kᵀ .*overflowed"),
]


@pytest.mark.parametrize("function", [scaled_dot_product_attention, attention_steps])
@pytest.mark.parametrize("changes, message", BAD_INPUTS)
def test_bad_input_raises_value_error(function, changes, message):
    kwargs = dict(q=GOOD, k=GOOD, v=GOOD) | changes
    with np.errstate(over="ignore", invalid="ignore"):
        with pytest.raises(ValueError, match=message):
            function(**kwargs)


# ---------------------------------------------------------------- a padded batch


@st.composite
def padded_batches(draw):
    """q, k, v (batch, n, d) with one length per sequence in 1..n, and whether to add the causal mask."""
    batch, n, d_k, d_v = (
        draw(st.integers(1, 3)),
        draw(st.integers(1, 8)),
        draw(st.integers(1, 4)),
        draw(st.integers(1, 3)),
    )
    values = st.floats(-10, 10)
    q, k = (draw(arrays(np.float64, (batch, n, d_k), elements=values)) for _ in range(2))
    v = draw(arrays(np.float64, (batch, n, d_v), elements=values))
    lengths = draw(st.lists(st.integers(1, n), min_size=batch, max_size=batch))
    return q, k, v, lengths, draw(st.booleans())


@SETTINGS
@given(padded_batches())
def test_padded_keys_get_exactly_zero_weight_and_nothing_is_nan(batch):
    q, k, v, lengths, causal = batch
    output, weights = scaled_dot_product_attention(q, k, v, causal=causal, mask=padding_mask(lengths, q.shape[1]))
    assert np.all(np.isfinite(weights)) and np.all(np.isfinite(output))
    for b, length in enumerate(lengths):
        assert np.all(weights[b, :, length:] == 0.0)  # exactly, not nearly
        np.testing.assert_allclose(weights[b].sum(axis=-1), 1.0)  # every row, a padded query's too, is defined


@SETTINGS
@given(padded_batches(), st.integers(1, 4))
def test_padded_attention_reports_padded_queries_as_unused(batch, window):
    q, k, v, lengths, causal = batch
    n = q.shape[1]
    mask = sliding_window_mask(n, window) if causal else None  # a window can blind a padded query: still no error
    result = padded_attention(q, k, v, lengths, causal=causal, mask=mask)
    assert np.all(np.isfinite(result.weights)) and np.all(np.isfinite(result.output))
    for b, length in enumerate(lengths):
        assert result.used[b].tolist() == [i < length for i in range(n)]
        assert np.all(result.weights[b, length:] == 0.0) and np.all(result.output[b, length:] == 0.0)
        assert np.all(result.weights[b, :, length:] == 0.0)
        alone = attention_steps(
            q[b, :length],
            k[b, :length],
            v[b, :length],
            causal=causal,
            mask=mask[:length, :length] if mask is not None else None,
        )
        np.testing.assert_allclose(result.weights[b, :length, :length], alone.weights, atol=1e-12)
        np.testing.assert_allclose(result.output[b, :length], alone.output, atol=1e-12 * (1 + np.abs(v).max()))


def test_padded_attention_by_hand():
    # Sequence 2 has one real token: its only query attends to itself; its two padded queries are unused.
    q = k = np.zeros((2, 3, 2))
    v = np.arange(12, dtype=float).reshape(2, 3, 2)
    result = padded_attention(q, k, v, [3, 1])
    np.testing.assert_allclose(result.weights[0], np.full((3, 3), 1 / 3))
    np.testing.assert_array_equal(result.weights[1], [[1, 0, 0], [0, 0, 0], [0, 0, 0]])
    np.testing.assert_array_equal(result.output[1], [[6, 7], [0, 0], [0, 0]])
    np.testing.assert_array_equal(result.used, [[True, True, True], [True, False, False]])
    assert result.output.dtype == np.float64 and not result.allowed[1, 1:].any()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda x: padded_attention(x, x, x, [3, 4]), "lengths\\[1\\]=4 is outside 1..3"),
        (lambda x: padded_attention(x, x, x, [3, 0.5]), "lengths contains 0.5"),
        (lambda x: padded_attention(x, x, x, [3]), "must describe one batch"),
        (lambda x: padded_attention(x[0], x[0], x[0], [3]), "must describe one batch"),
        (lambda x: padded_attention(x, x[:, :2], x[:, :2], [2, 2]), "k has 2 positions but q has 3"),
        (lambda x: padded_attention(x, x, x, [3, 2], mask=np.eye(3)), "mask has dtype float64"),
        (
            lambda x: padded_attention(x, x, x, [3, 2], mask=~np.eye(3, dtype=bool), causal=True),
            "leaves query 0 at batch index \\(0,\\) no key",
        ),
    ],
)
def test_padded_attention_refuses_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call(np.ones((2, 3, 2)))
