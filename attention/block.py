"""The transformer block: attention and a feed-forward network, each wrapped in a residual add
and a layer norm. Its output has the shape of its input, which is why blocks stack.

    post-norm (the original paper, BERT):  y = LN1(x + MHA(x)),    out = LN2(y + FFN(y))
    pre-norm  (GPT-2 and most since):      y = x + MHA(LN1(x)),    out = y + FFN(LN2(y))
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from .checks import as_real_array, check_positive_int, check_result, check_shape
from .dot_product import attend
from .ffn import ACTIVATIONS, ffn
from .heads import MultiHeadSteps, check_tokens, multi_head
from .limits import check_dim, check_scores
from .norms import check_eps
from .norms import norm as layer_norm_of

POST_NORM_LATEX = r"y = \mathrm{LN}_1(x + \mathrm{MHA}(x)),\quad \mathrm{out} = \mathrm{LN}_2(y + \mathrm{FFN}(y))"
PRE_NORM_LATEX = r"y = x + \mathrm{MHA}(\mathrm{LN}_1(x)),\quad \mathrm{out} = y + \mathrm{FFN}(\mathrm{LN}_2(y))"
NORMS = ("post", "pre")


@dataclass(frozen=True)
class BlockParams:
    """The learned parameters of one transformer block.

    Shapes: w_q, w_k, w_v, w_o (d_model, d_model); b_* and ln*_gamma, ln*_beta (d_model,);
    w_1 (d_model, d_ff), b_1 (d_ff,), w_2 (d_ff, d_model), b_2 (d_model,).
    """

    w_q: np.ndarray
    b_q: np.ndarray
    w_k: np.ndarray
    b_k: np.ndarray
    w_v: np.ndarray
    b_v: np.ndarray
    w_o: np.ndarray
    b_o: np.ndarray
    ln1_gamma: np.ndarray
    ln1_beta: np.ndarray
    w_1: np.ndarray
    b_1: np.ndarray
    w_2: np.ndarray
    b_2: np.ndarray
    ln2_gamma: np.ndarray
    ln2_beta: np.ndarray

    @property
    def d_model(self) -> int:
        return int(np.shape(self.w_q)[0])

    @property
    def d_ff(self) -> int:
        return int(np.shape(self.w_1)[1])

    @classmethod
    def random(cls, d_model: int, d_ff: int, rng: np.random.Generator, dtype=np.float64) -> "BlockParams":
        """Demo parameters: weights ~ N(0, 1/fan_in) so activations keep their size, small biases,
        layer norms starting as the identity (gamma 1, beta 0). Seeded only by `rng`."""
        d_model = check_positive_int(d_model, "d_model")
        d_ff = check_positive_int(d_ff, "d_ff")

        def w(fan_in: int, fan_out: int) -> np.ndarray:
            return (rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(dtype)

        def b(size: int) -> np.ndarray:
            return (0.02 * rng.standard_normal(size)).astype(dtype)

        ones, zeros = np.ones(d_model, dtype), np.zeros(d_model, dtype)
        return cls(
            w_q=w(d_model, d_model),
            b_q=b(d_model),
            w_k=w(d_model, d_model),
            b_k=b(d_model),
            w_v=w(d_model, d_model),
            b_v=b(d_model),
            w_o=w(d_model, d_model),
            b_o=b(d_model),
            ln1_gamma=ones,
            ln1_beta=zeros,
            w_1=w(d_model, d_ff),
            b_1=b(d_ff),
            w_2=w(d_ff, d_model),
            b_2=b(d_model),
            ln2_gamma=ones.copy(),
            ln2_beta=zeros.copy(),
        )

    def check(self, d_model: int) -> "BlockParams":
        """These parameters as real arrays, each checked once, or `ValueError` naming the first whose
        shape or values do not fit a block of width `d_model`."""
        if np.ndim(self.w_1) != 2 or np.shape(self.w_1)[1] == 0:
            raise ValueError(f"w_1 has shape {np.shape(self.w_1)}; expected (d_model={d_model}, d_ff) with d_ff >= 1")
        d_ff = int(np.shape(self.w_1)[1])
        check_dim(max(d_model, d_ff), "d_model or d_ff")
        expected = {
            "w_q": (d_model, d_model),
            "w_k": (d_model, d_model),
            "w_v": (d_model, d_model),
            "w_o": (d_model, d_model),
            "w_1": (d_model, d_ff),
            "b_1": (d_ff,),
            "w_2": (d_ff, d_model),
        }
        checked = {}
        for f in fields(self):
            checked[f.name] = as_real_array(getattr(self, f.name), f.name)
            check_shape(checked[f.name], f.name, expected.get(f.name, (d_model,)))
        return BlockParams(**checked)


@dataclass(frozen=True)
class TraceStep:
    """One named intermediate of the block. `value` has shape `shape`; `label` is for display."""

    name: str
    label: str
    value: np.ndarray

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.value.shape)


@dataclass(frozen=True)
class BlockTrace:
    """Every intermediate of one block, in order, plus the per-head attention weights, queries and keys.

    Shapes: each step's value (..., n, d_model), except "ffn_hidden" (..., n, d_ff);
    weights (..., n_heads, n, n); q_heads, k_heads (..., n_heads, n, d_head), the queries and keys each
    head compared (before the 1/sqrt(d_head) scaling), as views into the block's own projections.
    """

    steps: tuple[TraceStep, ...]
    weights: np.ndarray
    norm: str
    q_heads: np.ndarray
    k_heads: np.ndarray

    def __getitem__(self, name: str) -> np.ndarray:
        for step in self.steps:
            if step.name == name:
                return step.value
        raise KeyError(f"no step named {name!r}; steps are {[s.name for s in self.steps]}")

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.steps]


def transformer_block(
    x,
    params: BlockParams,
    n_heads: int,
    *,
    causal: bool = False,
    activation: str = "relu",
    norm: str = "post",
    eps: float = 1e-5,
):
    """Return (output, trace) of one transformer block.

    Shapes: x (..., n, d_model) -> output (..., n, d_model), the same shape, so blocks stack.
    norm="post": y = LN1(x + MHA(x)), out = LN2(y + FFN(y)); norm="pre": y = x + MHA(LN1(x)),
    out = y + FFN(LN2(y)). `trace` holds each named intermediate in order and the per-head weights.
    Every argument is checked once, here; the computation below trusts them.
    """
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
    x, d_model = check_tokens(x, n_heads)
    check_eps(eps)
    params = params.check(d_model)
    check_scores((*x.shape[:-1], params.d_ff))  # the feed-forward hidden layer, as big as a score tensor could be
    out, trace = block(x, params, n_heads, causal=causal, activation=activation, norm=norm, eps=eps)
    return check_result(out, "the block output"), trace


def block(
    x: np.ndarray, p: BlockParams, n_heads: int, *, causal: bool, activation: str, norm: str, eps: float, kernel=attend
):
    """The block itself, on arguments already checked: (output, trace). `kernel` computes each
    head's attention (the readable reference by default; the real model passes the blocked one)."""
    steps: list[TraceStep] = [TraceStep("input", "input x", x)]

    def record(name: str, label: str, value: np.ndarray) -> np.ndarray:
        steps.append(TraceStep(name, label, value))
        return value

    def mha(h: np.ndarray) -> MultiHeadSteps:
        return multi_head(
            h,
            n_heads,
            w_q=p.w_q,
            w_k=p.w_k,
            w_v=p.w_v,
            w_o=p.w_o,
            b_q=p.b_q,
            b_k=p.b_k,
            b_v=p.b_v,
            b_o=p.b_o,
            causal=causal,
            kernel=kernel,
        )

    def feed_forward(h: np.ndarray) -> np.ndarray:
        hidden, out = ffn(h, p.w_1, p.b_1, p.w_2, p.b_2, activation)
        record("ffn_hidden", f"feed-forward hidden layer ({activation})", hidden)  # (..., n, d_ff)
        return record("ffn_out", "feed-forward output", out)  # (..., n, d_model)

    if norm == "post":
        attended = mha(x)
        record("attention", "multi-head attention", attended.output)
        y = record("residual_1", "residual add x + attention", x + attended.output)
        y = record("norm_1", "layer norm 1", layer_norm_of(y, p.ln1_gamma, p.ln1_beta, eps))
        out = record("residual_2", "residual add y + feed-forward", y + feed_forward(y))
        out = record("norm_2", "layer norm 2", layer_norm_of(out, p.ln2_gamma, p.ln2_beta, eps))
    else:
        h = record("norm_1", "layer norm 1", layer_norm_of(x, p.ln1_gamma, p.ln1_beta, eps))
        attended = mha(h)
        record("attention", "multi-head attention", attended.output)
        y = record("residual_1", "residual add x + attention", x + attended.output)
        h = record("norm_2", "layer norm 2", layer_norm_of(y, p.ln2_gamma, p.ln2_beta, eps))
        out = record("residual_2", "residual add y + feed-forward", y + feed_forward(h))
    return out, BlockTrace(tuple(steps), attended.weights, norm, attended.q_heads, attended.k_heads)
