"""The decoder's backward pass, written by hand: next-token cross-entropy and the gradient of every parameter.

Forward (attention/decoder.py), then each line's local gradient, micrograd-style, from the top down:

    L = -(1/W) Σ w_i log softmax(z_i)[t_i]      dz_i = (w_i / W) (softmax(z_i) - onehot(t_i))
    z = h W_U                                    dW_U = hᵀ dz,  dh = dz W_Uᵀ
    h = γ ⊙ x̂ + β (final norm, optional)        dγ = Σ dh ⊙ x̂,  dβ = Σ dh,
                                                 dx = rstd (dx̂ - mean(dx̂) - x̂ mean(dx̂ ⊙ x̂)),  dx̂ = γ ⊙ dh
    out = y + GELU(y W_1 + b_1) W_2 + b_2        dW_2 = GELUᵀ dout, dpre = (dout W_2ᵀ) ⊙ GELU'(pre), dy += dpre W_1ᵀ
    y = x + concat W_o                           dW_o = concatᵀ dy, dconcat = dy W_oᵀ
    concat = heads of softmax(c Q Kᵀ) V          attention.gradients.attention_backward (the √d_k lesson's)
    q, k, v = x W_q, x W_k, x W_v                dW = xᵀ d(q, k, v), dx += dq W_qᵀ + dk W_kᵀ + dv W_vᵀ
    x_0 = E[ids] + P[positions]                  dE[t] += dx_0 at each position holding t, dP[i] = Σ_batch dx_0[i]

A key/value head shared by g query heads gets the sum of their g gradients (grouped-query attention).
The tests check every parameter's gradient against centred finite differences in float64.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .checks import check_result
from .decoder import DecoderParams, ForwardTrace, LayerTrace, forward_trace
from .gradients import attention_backward

CROSS_ENTROPY_LATEX = r"L = -\frac{1}{W}\sum_i w_i \log \mathrm{softmax}(z_i)_{t_{i+1}},\quad W = \sum_i w_i"
LOGITS_BACKWARD_LATEX = (
    r"\frac{\partial L}{\partial z_i} = \frac{w_i}{W}\big(\mathrm{softmax}(z_i) - \mathrm{onehot}(t_{i+1})\big)"
)


@dataclass(frozen=True)
class LossAndGrads:
    """The loss on a batch and its gradient for every parameter, by the names of DecoderParams.arrays().

    Shapes: losses (B, n - 1), the cross-entropy of each prediction (whatever its weight); grads as the
    parameters; correct (B, n - 1) bool, whether the largest logit was the next token.
    """

    loss: float
    losses: np.ndarray
    correct: np.ndarray
    grads: dict[str, np.ndarray]

    @property
    def grad_norm(self) -> float:
        return float(math.sqrt(sum(float((g.astype(np.float64) ** 2).sum()) for g in self.grads.values())))


def check_batch(ids, params: DecoderParams, weights=None) -> tuple[np.ndarray, np.ndarray]:
    """ids as a (B, n) int array (n >= 2, tokens and positions in range), and the (B, n - 1) weights of the
    predictions (all 1 by default; at least one > 0), or `ValueError`."""
    config = params.config
    a = np.asarray(ids)
    if a.ndim != 2 or a.shape[1] < 2 or a.shape[0] < 1:
        raise ValueError(f"ids has shape {a.shape}; expected (batch, n) with n >= 2 (a token and the next)")
    if a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"ids must be whole token numbers, got dtype {a.dtype}")
    if a.min() < 0 or a.max() >= config.vocab_size:
        raise ValueError(f"ids holds tokens outside 0 .. {config.vocab_size - 1}")
    if a.shape[1] - 1 > config.max_positions:
        raise ValueError(f"ids has {a.shape[1]} tokens; at most max_positions + 1 = {config.max_positions + 1}")
    w = np.ones((a.shape[0], a.shape[1] - 1)) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (a.shape[0], a.shape[1] - 1) or not np.all(np.isfinite(w)) or w.min() < 0 or w.sum() <= 0:
        raise ValueError(f"weights must be (batch, n - 1) = {(a.shape[0], a.shape[1] - 1)}, >= 0, not all 0")
    return a.astype(np.intp), w


def next_token_loss(params: DecoderParams, ids, weights=None) -> LossAndGrads:
    """Cross-entropy of predicting ids[:, i + 1] from ids[:, : i + 1], weighted by `weights`, and every gradient.

    Shapes: ids (B, n) -> losses (B, n - 1), grads shaped as the parameters (in the parameters' dtype).
    """
    ids, w = check_batch(ids, params, weights)
    inputs, targets = ids[:, :-1], ids[:, 1:]  # (B, n - 1) each
    trace = forward_trace(inputs, params)
    logits = trace.logits.astype(np.float64)  # (B, n - 1, vocab): the loss in float64 whatever the params
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))  # (B, n - 1, vocab)
    losses = -np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]  # (B, n - 1)
    grad_logits = np.exp(log_probs)  # softmax
    np.put_along_axis(grad_logits, targets[..., None], np.take_along_axis(grad_logits, targets[..., None], -1) - 1, -1)
    grad_logits *= (w / w.sum())[..., None]  # (B, n - 1, vocab)
    grads = backward(trace, params, grad_logits.astype(params.dtype))
    correct = logits.argmax(axis=-1) == targets
    return LossAndGrads(float((w * losses).sum() / w.sum()), losses, correct, grads)


def backward(trace: ForwardTrace, params: DecoderParams, grad_logits: np.ndarray) -> dict[str, np.ndarray]:
    """Every parameter's gradient from dL/dlogits, through the trace of the forward pass (no cache).

    Shapes: grad_logits (B, n, vocab_size) -> {name: gradient shaped as the parameter}.
    """
    config = params.config
    grads = {"unembedding": _weight_grad(trace.final, grad_logits)}  # (d_model, vocab)
    grad = grad_logits @ params.unembedding.T  # (B, n, d_model)
    if config.final_norm:
        grads["norm_gamma"] = (grad * trace.x_hat).sum(axis=(0, 1))  # (d_model,)
        grads["norm_beta"] = grad.sum(axis=(0, 1))  # (d_model,)
        grad = _norm_backward(grad * params.norm_gamma, trace.x_hat, trace.rstd)  # (B, n, d_model)
    for i in reversed(range(config.n_layers)):
        grad, layer_grads = layer_backward(trace.layers[i], params.layers[i], config, grad)
        grads |= {f"layers.{i}.{name}": g for name, g in layer_grads.items()}
    n = trace.ids.shape[-1]
    grad_e = np.zeros_like(params.token_embedding)
    np.add.at(grad_e, trace.ids.reshape(-1), grad.reshape(-1, config.d_model))  # (vocab, d_model)
    grad_p = np.zeros_like(params.position_embedding)
    grad_p[:n] = grad.sum(axis=0)  # (max_positions, d_model): positions 0 .. n - 1 were used
    grads |= {"token_embedding": grad_e, "position_embedding": grad_p}
    return {name: check_result(grads[name], f"the gradient of {name}") for name in params.arrays()}


def layer_backward(t: LayerTrace, layer, config, grad_out: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """dL/dx of one layer and its parameters' gradients, from dL/d(out). Shapes: grad_out (B, n, d_model)."""
    grads: dict[str, np.ndarray] = {}
    grad_y = grad_out
    if config.mlp:
        grads["w_2"] = _weight_grad(t.hidden, grad_out)  # (d_ff, d_model)
        grads["b_2"] = grad_out.sum(axis=(0, 1))  # (d_model,)
        grad_pre = (grad_out @ layer.w_2.T) * _gelu_derivative(t.pre)  # (B, n, d_ff)
        grads["w_1"] = _weight_grad(t.y, grad_pre)  # (d_model, d_ff)
        grads["b_1"] = grad_pre.sum(axis=(0, 1))  # (d_ff,)
        grad_y = grad_out + grad_pre @ layer.w_1.T  # (B, n, d_model)
    grads["w_o"] = _weight_grad(t.concat, grad_y)  # (n_heads d_head, d_model)
    *batch, n, _ = grad_y.shape
    kv, g, dh = config.n_kv_heads, config.group, config.d_head
    grad_heads = (grad_y @ layer.w_o.T).reshape(*batch, n, kv, g, dh)  # (B, n, n_kv, g, d_head)
    grad_heads = np.moveaxis(grad_heads, -4, -2)  # (B, n_kv, g, n, d_head)
    a = attention_backward(t.q, t.k, t.v, t.weights, grad_heads)  # grad_k, grad_v summed over each group
    grad_q = np.moveaxis(a.grad_q, -2, -4).reshape(*batch, n, config.n_heads * dh)  # (B, n, n_heads d_head)
    grad_k = a.grad_k[..., 0, :, :].swapaxes(-2, -3).reshape(*batch, n, kv * dh)  # (B, n, n_kv d_head)
    grad_v = a.grad_v[..., 0, :, :].swapaxes(-2, -3).reshape(*batch, n, kv * dh)  # (B, n, n_kv d_head)
    grads["w_q"] = _weight_grad(t.x, grad_q)  # (d_model, n_heads d_head)
    grads["w_k"] = _weight_grad(t.x, grad_k)  # (d_model, n_kv d_head)
    grads["w_v"] = _weight_grad(t.x, grad_v)  # (d_model, n_kv d_head)
    grad_x = grad_y + grad_q @ layer.w_q.T + grad_k @ layer.w_k.T + grad_v @ layer.w_v.T  # (B, n, d_model)
    return grad_x, grads


def _weight_grad(x: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """Σ over batch and positions of xᵀ grad: the gradient of W in x W.

    Shapes: x (B, n, a), grad (B, n, b) -> (a, b).
    """
    return np.tensordot(x, grad, axes=([0, 1], [0, 1]))  # (a, b)


def _norm_backward(grad_x_hat: np.ndarray, x_hat: np.ndarray, rstd: np.ndarray) -> np.ndarray:
    """dL/dx of x̂ = (x - mean) rstd, from dL/dx̂. Shapes: (B, n, d), rstd (B, n, 1) -> (B, n, d)."""
    mean_g = grad_x_hat.mean(axis=-1, keepdims=True)  # (B, n, 1)
    mean_gx = (grad_x_hat * x_hat).mean(axis=-1, keepdims=True)  # (B, n, 1)
    return rstd * (grad_x_hat - mean_g - x_hat * mean_gx)  # (B, n, d)


def _gelu_derivative(x: np.ndarray) -> np.ndarray:
    """d/dx of x Φ(x) = Φ(x) + x φ(x), with φ the standard normal density. Shapes: any -> the same."""
    from scipy.special import erf

    phi = np.exp(-0.5 * x * x) * x.dtype.type(1.0 / math.sqrt(2.0 * math.pi))
    return 0.5 * (1.0 + erf(x * x.dtype.type(1.0 / math.sqrt(2.0)))) + x * phi
