"""The decoder's hand-written backward pass: every parameter's gradient against centred finite differences
in float64, and Adam against a plain loop."""

import numpy as np
import pytest

from attention.adam import AdamState, adam_step
from attention.decoder import DecoderConfig, DecoderParams
from attention.decoder_backward import next_token_loss
from tests.test_gradients import relative_error

EPS = 1e-6
REL_TOL = 1e-6


def numerical_grads(params: DecoderParams, ids, weights=None) -> dict[str, np.ndarray]:
    """dL/dθ for every entry of every parameter, by (L(θ + ε) - L(θ - ε)) / 2ε."""
    arrays = params.arrays()
    out = {}
    for name, a in arrays.items():
        grad = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            losses = []
            for sign in (1, -1):
                moved = a.copy()
                moved[idx] += sign * EPS
                p = DecoderParams.from_arrays(params.config, arrays | {name: moved})
                losses.append(next_token_loss(p, ids, weights).loss)
            grad[idx] = (losses[0] - losses[1]) / (2 * EPS)
        out[name] = grad
    return out


CONFIGS = {
    "MHA + MLP + final norm": DecoderConfig(6, 2, 2, 2, 4, 5, True, d_ff=6, final_norm=True),
    "GQA, 4 heads share 2": DecoderConfig(6, 2, 4, 2, 8, 5),
    "MQA + MLP": DecoderConfig(5, 1, 4, 1, 8, 5, True, d_ff=4),
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_every_parameters_gradient_matches_finite_differences(name):
    cfg = CONFIGS[name]
    p = DecoderParams.random(cfg, 1, token_std=1.0, position_std=1.0)
    rng = np.random.default_rng(2)
    ids = rng.integers(0, cfg.vocab_size, (2, 5))
    weights = rng.random((2, 4))  # some predictions count more than others
    analytic = next_token_loss(p, ids, weights).grads
    numeric = numerical_grads(p, ids, weights)
    assert set(analytic) == set(p.arrays())
    for key in analytic:
        assert analytic[key].shape == p.arrays()[key].shape
        assert relative_error(analytic[key], numeric[key]) < REL_TOL, key
    assert np.all(analytic["position_embedding"][4:] == 0)  # positions never used get no gradient


def test_the_check_notices_a_wrong_gradient():
    cfg = CONFIGS["GQA, 4 heads share 2"]
    p = DecoderParams.random(cfg, 1)
    ids = np.array([[0, 1, 2, 3]])
    wrong = next_token_loss(p, ids).grads["layers.1.w_k"] * 1.001
    assert relative_error(wrong, numerical_grads(p, ids)["layers.1.w_k"]) > REL_TOL


def test_loss_by_hand_for_uniform_logits():
    cfg = DecoderConfig(5, 1, 1, 1, 4, 4)
    arrays = DecoderParams.random(cfg, 0).arrays()
    p = DecoderParams.from_arrays(cfg, arrays | {"unembedding": np.zeros((4, 5))})  # every logit 0
    result = next_token_loss(p, [[1, 2, 3]])
    assert result.loss == pytest.approx(np.log(5)) and result.losses.shape == (1, 2)
    np.testing.assert_allclose(result.grads["token_embedding"], 0)  # W_U = 0: nothing reaches the layers


def test_float32_parameters_get_float32_gradients_close_to_float64():
    cfg = CONFIGS["MHA + MLP + final norm"]
    p = DecoderParams.random(cfg, 3)
    ids = np.random.default_rng(0).integers(0, 6, (3, 5))
    g64 = next_token_loss(p, ids).grads
    g32 = next_token_loss(p.astype(np.float32), ids).grads
    for key in g64:
        assert g32[key].dtype == np.float32
        np.testing.assert_allclose(g32[key], g64[key], atol=1e-4)


@pytest.mark.parametrize(
    "ids, weights, message",
    [
        ([[1]], None, "n >= 2"),
        ([1, 2, 3], None, "n >= 2"),
        ([[1.0, 2.0]], None, "whole token numbers"),
        ([[1, 9]], None, "outside 0 .. 5"),
        ([[1, 2, 3]], [[0, 0]], "not all 0"),
        ([[1, 2, 3]], [[1, -1]], ">= 0"),
        ([[1, 2, 3]], [[1]], "weights must be"),
        ([list(range(6)) + [0]], None, "at most max_positions"),
    ],
)
def test_bad_batches_are_refused(ids, weights, message):
    p = DecoderParams.random(CONFIGS["MHA + MLP + final norm"], 0)
    with pytest.raises(ValueError, match=message):
        next_token_loss(p, ids, weights)


# ---------------------------------------------------------------- Adam


def adam_loop(theta, grads_seq, lr, b1=0.9, b2=0.999, eps=1e-8):
    """Adam for a list of scalars, one number at a time, straight from the paper's Algorithm 1."""
    theta, m, v = list(theta), [0.0] * len(theta), [0.0] * len(theta)
    for t, g in enumerate(grads_seq, start=1):
        for i in range(len(theta)):
            m[i] = b1 * m[i] + (1 - b1) * g[i]
            v[i] = b2 * v[i] + (1 - b2) * g[i] ** 2
            theta[i] -= lr * (m[i] / (1 - b1**t)) / ((v[i] / (1 - b2**t)) ** 0.5 + eps)
    return theta


def test_adam_matches_the_papers_algorithm_step_by_step():
    rng = np.random.default_rng(0)
    theta = rng.standard_normal(5)
    grads_seq = [rng.standard_normal(5) for _ in range(4)]
    params, state = {"w": theta.reshape(5, 1)}, AdamState.zeros({"w": theta.reshape(5, 1)})
    for g in grads_seq:
        params, state = adam_step(params, {"w": g.reshape(5, 1)}, state, lr=0.1)
    np.testing.assert_allclose(params["w"][:, 0], adam_loop(theta, grads_seq, 0.1), atol=1e-14)
    assert state.step == 4


def test_adams_first_step_moves_every_parameter_by_lr_against_its_gradient_whatever_its_size():
    params = {"a": np.array([1.0, 1.0, 1.0]), "b": np.array([[0.0]])}
    grads = {"a": np.array([1e-6, -3.0, 500.0]), "b": np.array([[-2.0]])}
    state = AdamState.zeros(params)
    new, _ = adam_step(params, grads, state, lr=0.01)
    np.testing.assert_allclose(new["a"], [0.99, 1.01, 0.99], atol=1e-4)  # 1e-6 moves (almost) as far as 500
    np.testing.assert_allclose(new["b"], [[0.01]], atol=1e-8)
    np.testing.assert_array_equal(params["a"], [1.0, 1.0, 1.0])  # inputs untouched
    assert np.all(state.m["a"] == 0)


def test_adam_minimises_a_quadratic():
    target = np.array([3.0, -2.0])
    params, state = {"x": np.zeros(2)}, AdamState.zeros({"x": np.zeros(2)})
    for _ in range(2000):
        params, state = adam_step(params, {"x": 2 * (params["x"] - target)}, state, lr=0.05)
    np.testing.assert_allclose(params["x"], target, atol=1e-3)


def test_adam_keeps_float32():
    params = {"x": np.ones(3, np.float32)}
    new, state = adam_step(params, {"x": np.ones(3, np.float32)}, AdamState.zeros(params), lr=0.1)
    assert new["x"].dtype == state.m["x"].dtype == np.float32


@pytest.mark.parametrize("kwargs, message", [(dict(lr=0), "lr"), (dict(lr=0.1, beta1=1.0), "beta1")])
def test_adam_refuses_bad_settings(kwargs, message):
    params = {"x": np.ones(2)}
    with pytest.raises(ValueError, match=message):
        adam_step(params, {"x": np.ones(2)}, AdamState.zeros(params), **kwargs)
    with pytest.raises(ValueError, match="same arrays"):
        adam_step(params, {"y": np.ones(2)}, AdamState.zeros(params), lr=0.1)


def test_the_weighted_loss_is_the_formula_on_the_page():
    # CROSS_ENTROPY_LATEX: L = -(1/W) sum_i w_i log softmax(z_i)[t_{i+1}], W = sum_i w_i
    from attention.decoder import decoder_forward
    from attention.decoder_backward import CROSS_ENTROPY_LATEX

    assert r"\frac{1}{W}\sum_i w_i \log \mathrm{softmax}(z_i)_{t_{i+1}}" in CROSS_ENTROPY_LATEX
    cfg = DecoderConfig(7, 2, 2, 1, 8, 8)
    p = DecoderParams.random(cfg, 3)
    ids = np.array([[1, 4, 2, 6, 0, 3], [5, 5, 1, 2, 2, 4]])
    w = np.random.default_rng(0).uniform(0, 2, size=(2, 5))
    by_hand = 0.0
    for b in range(2):
        z = decoder_forward(ids[b, :-1], p).logits  # (5, vocab)
        log_softmax = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
        by_hand -= sum(w[b, i] * log_softmax[i, ids[b, i + 1]] for i in range(5))
    assert next_token_loss(p, ids, w).loss == pytest.approx(by_hand / w.sum(), rel=1e-12)
    assert next_token_loss(p, ids).loss == pytest.approx(next_token_loss(p, ids, np.ones((2, 5))).loss, rel=1e-15)
