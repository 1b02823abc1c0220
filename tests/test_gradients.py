"""The hand-written backward passes against centred finite differences in float64."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention import scaled_dot_product_attention, softmax
from attention.gradients import attention_backward, softmax_backward, softmax_jacobian

EPS = 1e-6  # centred differences: truncation error ~EPS² (1e-12), rounding ~1e-16 / EPS (1e-10)
REL_TOL = 1e-6


def numerical_gradient(f, x: np.ndarray, eps: float = EPS) -> np.ndarray:
    """d f / d x by centred differences, one entry at a time. f maps an array like x to a float."""
    grad = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[idx] += eps
        minus[idx] -= eps
        grad[idx] = (f(plus) - f(minus)) / (2 * eps)
    return grad


def relative_error(a: np.ndarray, b: np.ndarray) -> float:
    scale = max(np.linalg.norm(a), np.linalg.norm(b), 1e-300)
    return float(np.linalg.norm(a - b) / scale)


def test_relative_error_notices_a_wrong_gradient():
    assert relative_error(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-4])) > REL_TOL


# ---------------------------------------------------------------- softmax


def test_jacobian_of_two_equal_scores_by_hand():
    # p = (1/2, 1/2): dp_i/ds_j = p_i (δ_ij - p_j) = ±1/4
    np.testing.assert_allclose(softmax_jacobian(np.array([0.5, 0.5])), [[0.25, -0.25], [-0.25, 0.25]])


def test_jacobian_matches_finite_differences():
    s = np.random.default_rng(0).standard_normal(5)
    numeric = np.stack([numerical_gradient(lambda x, i=i: softmax(x)[i], s) for i in range(5)])  # row i: dp_i/ds
    assert relative_error(softmax_jacobian(softmax(s)), numeric) < REL_TOL


def test_jacobian_works_row_by_row_on_batches():
    p = softmax(np.random.default_rng(1).standard_normal((2, 3, 4)))
    jac = softmax_jacobian(p)
    assert jac.shape == (2, 3, 4, 4)
    np.testing.assert_allclose(jac[1, 2], np.diag(p[1, 2]) - np.outer(p[1, 2], p[1, 2]))


@pytest.mark.parametrize("shape", [(6,), (3, 4), (2, 3, 5)])
def test_softmax_backward_matches_finite_differences(shape):
    rng = np.random.default_rng(2)
    s, g = rng.standard_normal(shape), rng.standard_normal(shape)
    analytic = softmax_backward(softmax(s), g)
    numeric = numerical_gradient(lambda x: float((softmax(x) * g).sum()), s)  # L = Σ g ⊙ softmax(s)
    assert relative_error(analytic, numeric) < REL_TOL


def test_softmax_backward_is_the_jacobian_times_the_gradient():
    rng = np.random.default_rng(3)
    p, g = softmax(rng.standard_normal((4, 6))), rng.standard_normal((4, 6))
    expected = np.einsum("bij,bi->bj", softmax_jacobian(p), g)  # the Jacobian is symmetric
    np.testing.assert_allclose(softmax_backward(p, g), expected, atol=1e-15)


@settings(deadline=None, max_examples=60)
@given(
    arrays(np.float64, st.integers(1, 12), elements=st.floats(-30, 30)),
    arrays(np.float64, 12, elements=st.floats(-10, 10)),
)
def test_softmax_backward_sums_to_zero(s, g):
    # Adding a constant to every score changes nothing, so the gradient has no component along (1, ..., 1).
    grad = softmax_backward(softmax(s), g[: s.size])
    assert abs(grad.sum()) <= 1e-12 * (1 + np.abs(g).sum())


def test_a_saturated_softmax_passes_back_almost_nothing():
    g = np.array([1.0, -2.0, 3.0])
    soft = softmax_backward(softmax(np.array([0.0, 0.5, 1.0])), g)
    saturated = softmax_backward(softmax(np.array([0.0, 0.5, 40.0])), g)  # p ≈ (0, 0, 1)
    assert np.abs(soft).max() > 0.1
    assert np.abs(saturated).max() < 1e-15


def test_softmax_backward_refuses_mismatched_shapes():
    with pytest.raises(ValueError, match="grad_p has shape"):
        softmax_backward(np.full(3, 1 / 3), np.ones(4))


# ---------------------------------------------------------------- scaled dot-product attention


def loss_of(q, k, v, g, scale):
    """L = Σ G ⊙ O: a loss whose gradient with respect to the output is exactly G."""
    return float((scaled_dot_product_attention(q, k, v, scale=scale)[0] * g).sum())


@pytest.mark.parametrize("scale", [True, False])
@pytest.mark.parametrize("batch", [(), (2,), (2, 3)])
def test_attention_backward_matches_finite_differences(scale, batch):
    rng = np.random.default_rng(4)
    n, m, d_k, d_v = 3, 4, 5, 2
    q, k = rng.standard_normal((*batch, n, d_k)), rng.standard_normal((*batch, m, d_k))
    v, g = rng.standard_normal((*batch, m, d_v)), rng.standard_normal((*batch, n, d_v))
    _, weights = scaled_dot_product_attention(q, k, v, scale=scale)
    grads = attention_backward(q, k, v, weights, g, scale=scale)
    assert grads.scale_factor == (1 / math.sqrt(d_k) if scale else 1.0)
    for name, x, analytic in (("q", q, grads.grad_q), ("k", k, grads.grad_k), ("v", v, grads.grad_v)):

        def f(x_new, name=name):
            args = {"q": q, "k": k, "v": v} | {name: x_new}
            return loss_of(args["q"], args["k"], args["v"], g, scale)

        assert analytic.shape == x.shape
        assert relative_error(analytic, numerical_gradient(f, x)) < REL_TOL, name


def test_attention_backward_sums_gradients_of_broadcast_inputs():
    # One set of keys and values shared by two batches of queries: their gradients add up.
    rng = np.random.default_rng(5)
    q, k, v, g = (rng.standard_normal(s) for s in ((2, 3, 4), (5, 4), (5, 2), (2, 3, 2)))
    _, weights = scaled_dot_product_attention(q, k, v)
    grads = attention_backward(q, k, v, weights, g)
    assert grads.grad_k.shape == k.shape and grads.grad_v.shape == v.shape
    assert relative_error(grads.grad_k, numerical_gradient(lambda x: loss_of(q, x, v, g, True), k)) < REL_TOL
    assert relative_error(grads.grad_v, numerical_gradient(lambda x: loss_of(q, k, x, g, True), v)) < REL_TOL


def test_grad_scores_is_the_gradient_at_the_softmax_input():
    rng = np.random.default_rng(6)
    q, k, v, g = (rng.standard_normal(s) for s in ((3, 4), (5, 4), (5, 2), (3, 2)))
    _, weights = scaled_dot_product_attention(q, k, v)
    grads = attention_backward(q, k, v, weights, g)
    s = q @ k.T / 2.0  # the scaled scores, d_k = 4
    numeric = numerical_gradient(lambda x: float((softmax(x) @ v * g).sum()), s)
    assert relative_error(grads.grad_scores, numeric) < REL_TOL


def test_attention_backward_validates_its_inputs():
    q, k, v = np.ones((3, 4)), np.ones((5, 4)), np.ones((5, 2))
    with pytest.raises(ValueError, match="weights has shape"):
        attention_backward(q, k, v, np.ones((3, 4)), np.ones((3, 2)))
    with pytest.raises(ValueError, match="grad_output has shape"):
        attention_backward(q, k, v, np.full((3, 5), 0.2), np.ones((3, 3)))
    with pytest.raises(ValueError, match="d_k"):
        attention_backward(q, np.ones((5, 3)), v, np.full((3, 5), 0.2), np.ones((3, 2)))
