"""attention.positions: the sinusoidal table, RoPE and ALiBi, by hand and by their defining properties."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention import attention_steps, scaled_dot_product_attention
from attention.positions import alibi_bias, alibi_slopes, rope, sinusoidal_encoding

SETTINGS = settings(max_examples=40, deadline=None)
even_d = st.integers(1, 16).map(lambda h: 2 * h)


# ---------------------------------------------------------------- sinusoidal


def test_sinusoidal_by_hand():
    # d = 4: θ_0 = 1, θ_1 = 10000^(-2/4) = 1/100. Position 0 is (sin 0, cos 0, sin 0, cos 0) = (0, 1, 0, 1).
    pe = sinusoidal_encoding(3, 4)
    expected = [[math.sin(p), math.cos(p), math.sin(p / 100), math.cos(p / 100)] for p in range(3)]
    np.testing.assert_allclose(pe, expected, atol=1e-15)
    assert pe.dtype == np.float64 and pe.shape == (3, 4)


def test_sinusoidal_with_another_base():
    # base 4, d = 4: θ_1 = 4^(-2/4) = 1/2, so PE[2, 2:] = (sin 1, cos 1).
    np.testing.assert_allclose(sinusoidal_encoding(3, 4, base=4.0)[2, 2:], [math.sin(1), math.cos(1)])


@SETTINGS
@given(st.integers(1, 60), even_d, st.integers(0, 40))
def test_a_shift_is_a_fixed_rotation_of_every_pair(n, d, k):
    # PE[p + k] = PE[p] M_k, with M_k built here from the angle-sum formulas, the same for every p.
    pe = sinusoidal_encoding(n + k, d)
    theta = 10000.0 ** (-np.arange(0, d, 2) / d)
    m = np.zeros((d, d))
    for i, t in enumerate(theta):
        c, s = math.cos(k * t), math.sin(k * t)
        m[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[c, -s], [s, c]]
    np.testing.assert_allclose(pe[k:], pe[:n] @ m, atol=1e-12)
    np.testing.assert_allclose(m @ m.T, np.eye(d), atol=1e-12)  # a rotation: lengths kept
    assert np.allclose(np.linalg.norm(pe, axis=1), math.sqrt(d / 2))  # every row has the same length


# ---------------------------------------------------------------- RoPE


def test_rope_by_hand():
    # d = 2, θ_0 = 1: the pair (1, 0) at position p becomes (cos p, sin p); (0, 1) becomes (-sin p, cos p).
    x = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    out = rope(x)
    np.testing.assert_allclose(out, [[1, 0], [math.cos(1), math.sin(1)], [-math.sin(2), math.cos(2)]], atol=1e-15)


def test_rope_rotates_each_pair_by_its_own_frequency():
    # d = 4 at position 3: pair 0 by 3 rad, pair 1 by 3/100 rad.
    x = np.array([[0.0, 0.0, 0.0, 0.0]] * 3 + [[1.0, 2.0, 3.0, 4.0]])
    a, b = 3.0, 0.03
    expected = [
        math.cos(a) - 2 * math.sin(a),
        math.sin(a) + 2 * math.cos(a),
        3 * math.cos(b) - 4 * math.sin(b),
        3 * math.sin(b) + 4 * math.cos(b),
    ]
    np.testing.assert_allclose(rope(x)[3], expected, atol=1e-14)


def test_rope_takes_explicit_positions_and_batches():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 5, 6))  # (batch, heads, n, d)
    np.testing.assert_array_equal(rope(x), rope(x, np.arange(5)))
    np.testing.assert_allclose(rope(x, [4, 1, 0, 7, 7])[1, 2, 3], rope(x[1, 2, 3:4], [7])[0], atol=1e-15)
    per_sequence = np.array([[0, 1, 2, 3, 4], [10, 11, 12, 13, 14]])[:, None, :]  # (batch, 1, n)
    np.testing.assert_allclose(rope(x, per_sequence)[1], rope(x[1], np.arange(10, 15)), atol=1e-15)
    assert rope(x.astype(np.float32)).dtype == np.float32


@st.composite
def pairs_of_vectors(draw):
    n, d = draw(st.integers(1, 8)), draw(even_d)
    values = st.floats(-10, 10)
    return draw(arrays(np.float64, (n, d), elements=values)), draw(arrays(np.float64, (n, d), elements=values))


@SETTINGS
@given(pairs_of_vectors(), st.lists(st.integers(-500, 500), min_size=8, max_size=8))
def test_rope_preserves_norms(qk, positions):
    q, _ = qk
    p = np.array(positions[: len(q)])
    np.testing.assert_allclose(np.linalg.norm(rope(q, p), axis=-1), np.linalg.norm(q, axis=-1), atol=1e-9)


@SETTINGS
@given(pairs_of_vectors(), st.integers(-2000, 2000), st.lists(st.integers(0, 300), min_size=16, max_size=16))
def test_rope_scores_depend_only_on_the_offset(qk, shift, positions):
    # q_m · k_n after rotation: the same when m and n move by the same amount.
    q, k = qk
    n = len(q)
    m_pos, n_pos = np.array(positions[:n]), np.array(positions[8 : 8 + n])
    scores = np.sum(rope(q, m_pos) * rope(k, n_pos), axis=-1)  # (n,): q_i at m_i with k_i at n_i
    moved = np.sum(rope(q, m_pos + shift) * rope(k, n_pos + shift), axis=-1)
    bound = 1e-9 * max(1.0, float(np.max(np.linalg.norm(q, axis=-1) * np.linalg.norm(k, axis=-1))))
    np.testing.assert_allclose(moved, scores, atol=bound)


@SETTINGS
@given(pairs_of_vectors(), st.integers(-300, 300), st.integers(-300, 300))
def test_rope_rotations_add_up(qk, a, b):
    q, _ = qk
    n = len(q)
    np.testing.assert_allclose(rope(rope(q, np.full(n, a)), np.full(n, b)), rope(q, np.full(n, a + b)), atol=1e-9)


# ---------------------------------------------------------------- ALiBi


def test_alibi_slopes_for_eight_heads_are_the_papers():
    np.testing.assert_array_equal(alibi_slopes(8), [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256])


@pytest.mark.parametrize(
    "n_heads, exponents",
    [
        (1, [8]),
        (2, [4, 8]),
        (4, [2, 4, 6, 8]),
        # not a power of two: the 8-head slopes, then every other slope of 16 heads (2^-0.5, 2^-1.5, ...)
        (12, [1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5]),
        (6, [2, 4, 6, 8, 1, 3]),
        (3, [4, 8, 2]),
    ],
)
def test_alibi_slopes_follow_the_paper_and_for_other_head_counts_the_authors_code(n_heads, exponents):
    np.testing.assert_allclose(alibi_slopes(n_heads), [2.0**-e for e in exponents], rtol=1e-15)


@SETTINGS
@given(st.integers(1, 300))
def test_alibi_slopes_for_any_head_count(n_heads):
    slopes = alibi_slopes(n_heads)
    power = 2 ** int(math.log2(n_heads))
    assert slopes.shape == (n_heads,) and np.all((slopes > 0) & (slopes < 1))
    assert len(set(slopes.tolist())) == n_heads  # every head its own window
    np.testing.assert_allclose(slopes[:power], 2.0 ** (-8.0 * np.arange(1, power + 1) / power))


def test_alibi_bias_by_hand():
    # Two heads, slopes 1/16 and 1/256; one step back costs m, two steps 2m; the future is left at 0.
    bias = alibi_bias(3, 2)
    np.testing.assert_array_equal(bias[0], [[0, 0, 0], [-1 / 16, 0, 0], [-2 / 16, -1 / 16, 0]])
    np.testing.assert_array_equal(bias[1], [[0, 0, 0], [-1 / 256, 0, 0], [-2 / 256, -1 / 256, 0]])
    assert not np.any(np.signbit(bias) & (bias == 0))  # no -0.0 to show as "-0.00"


@SETTINGS
@given(st.integers(1, 20), st.integers(1, 12))
def test_alibi_bias_is_minus_slope_times_distance_below_the_diagonal(n, n_heads):
    bias, slopes = alibi_bias(n, n_heads), alibi_slopes(n_heads)
    i, j = np.indices((n, n))
    for h in range(n_heads):
        below = j <= i
        np.testing.assert_allclose(bias[h][below], (-slopes[h] * (i - j))[below], rtol=1e-15)
        assert np.all(bias[h][~below] == 0.0)


def test_alibi_attention_prefers_recent_keys_when_the_scores_are_equal():
    # With q = 0 every score is 0: the weights are the softmax of the bias alone, e^{-m d} / sum.
    n, slopes = 5, alibi_slopes(2)
    q = np.zeros((2, n, 3))
    k = v = np.ones((2, n, 3))
    _, weights = scaled_dot_product_attention(q, k, v, causal=True, bias=alibi_bias(n, 2))
    last = np.exp(-slopes[0] * np.arange(n - 1, -1, -1))
    np.testing.assert_allclose(weights[0, -1], last / last.sum(), atol=1e-15)
    assert np.all(np.diff(weights[:, -1], axis=-1) > 0)  # the nearer the key, the more weight


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: sinusoidal_encoding(4, 5), "d=5 is odd"),
        (lambda: sinusoidal_encoding(0, 4), "n must be at least 1"),
        (lambda: sinusoidal_encoding(4, 0), "d must be at least 1"),
        (lambda: sinusoidal_encoding(2.5, 4), "n must be a whole number"),
        (lambda: sinusoidal_encoding(4, 4, base=1.0), "base=1.0"),
        (lambda: sinusoidal_encoding(4, 4, base=float("nan")), "base=nan"),
        (lambda: sinusoidal_encoding(4, 4, base="10000"), "base must be a number"),
        (lambda: sinusoidal_encoding(5000, 4), "at most 4096"),
        (lambda: rope(np.ones((3, 5))), "x's last axis d=5 is odd"),
        (lambda: rope(np.ones(4)), "x has shape \\(4,\\)"),
        (lambda: rope(np.ones((0, 4))), "empty"),
        (lambda: rope(np.full((2, 2), np.nan)), "x contains nan"),
        (lambda: rope(np.ones((3, 4)), [0, 1.5, 2]), "positions contains 1.5"),
        (lambda: rope(np.ones((3, 4)), [0, np.inf, 2]), "positions contains inf"),
        (lambda: rope(np.ones((3, 4)), [0, 1]), "positions has shape \\(2,\\)"),
        (lambda: rope(np.ones((3, 4)), 2), "positions has shape \\(\\)"),
        (lambda: rope(np.ones((3, 4)), [True, False, True]), "positions has dtype bool"),
        (lambda: rope(np.ones((3, 4)), ["a", "b", "c"]), "positions has dtype <U1"),
        (lambda: rope(np.ones((3, 4)), [0, 1, 2**40]), "at most 2147483647"),
        (lambda: alibi_slopes(0), "n_heads must be at least 1"),
        (lambda: alibi_slopes(8.0), "n_heads must be a whole number"),
        (lambda: alibi_slopes(2000), "at most 1024 heads"),
        (lambda: alibi_bias(0, 8), "n must be at least 1"),
    ],
)
def test_bad_input_names_what_is_wrong(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_whole_float_positions_are_accepted():
    x = np.random.default_rng(1).standard_normal((3, 4))
    np.testing.assert_array_equal(rope(x, [0.0, 1.0, 2.0]), rope(x))


def test_the_attention_bias_is_checked_at_the_door():
    q = np.ones((3, 2))
    with pytest.raises(ValueError, match="bias has shape \\(2, 2\\)"):
        attention_steps(q, q, q, bias=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="bias contains -inf"):
        attention_steps(q, q, q, bias=np.full((3, 3), -np.inf))
    steps = attention_steps(q, q, q, bias=np.zeros((3, 3)))
    assert steps.bias is not None and np.allclose(steps.weights, 1 / 3)
