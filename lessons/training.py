"""Train one attention layer with and without 1/sqrt(d_k), and compare.

The task (retrieval): a query token t and a context of n_context distinct tokens, one of which is t.
Each token has a fixed embedding x (d_model) and a fixed value vector v (d_v). The layer computes

    q = x_t W_q,   k_j = x_j W_k,   p = softmax(c q Kᵀ),   o = p V,   L = ||o - v_t||²

with c = 1/sqrt(d_k) (scaled) or 1 (unscaled); only W_q and W_k (d_model, d_k) are learned. The
right answer needs all the weight on one position, the one holding t.

Fair comparison: both runs start from the same W_q, W_k, whose N(0, 1/d_model) entries give q and k
components of variance 1; they see the same batches and use the same plain gradient descent with the
same learning rate. The only difference is c. Plain SGD (no Adam) on purpose: an adaptive optimiser
rescales small gradients and would hide exactly the effect this compares.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from attention.checks import check_positive_int
from attention.dot_product import scaled_dot_product_attention
from attention.gradients import attention_backward
from locales import num, sentence_space, tr, tr_n

MAX_D_K = 1024  # the effect is total by here; at 4096 one comparison takes half a minute on 2 cores
MAX_STEPS = 1000
MAX_LR = 100.0
STUCK_WEIGHT = 0.99  # an example is stuck when the softmax puts more than this on a wrong position
# A stuck example's softmax Jacobian diag(p) - p pᵀ has a Frobenius norm below 2 (1 - p_max), so below this: with
# e = 1 - p_max, ‖J‖² <= e² (3 p_max² + 1 + e²) = e² (4 - 6e + 4e²) < 4e² for 0 < e < 1. The gradient that reaches
# such an example's scores is at most this times the gradient on its weights.
STUCK_JACOBIAN_BOUND = 2 * (1 - STUCK_WEIGHT)
LOSS_LATEX = (
    r"L = \frac{1}{B}\sum_{b=1}^{B} \big\lVert\, \mathrm{softmax}(c\, q_b K_b^\top)\, V_b"
    r" - v_{t_b} \big\rVert^2"
)


@dataclass(frozen=True)
class TrainingConfig:
    """Everything that defines a run; both runs of a comparison share it. Frozen and hashable (cache key)."""

    d_k: int = 256
    steps: int = 300
    lr: float = 1.0
    batch: int = 32
    n_context: int = 8
    vocab: int = 32
    d_model: int = 32
    d_v: int = 16
    n_eval: int = 512
    seed: int = 0

    def check(self) -> "TrainingConfig":
        """Return self, or raise `ValueError` naming the first setting out of range."""
        bounds = {
            "d_k": MAX_D_K,
            "steps": MAX_STEPS,
            "batch": 256,
            "n_context": 64,
            "vocab": 256,
            "d_model": 256,
            "d_v": 256,
            "n_eval": 4096,
        }
        for name, hi in bounds.items():
            value = check_positive_int(getattr(self, name), name)
            if value > hi:
                raise ValueError(f"{name}={value} is too large: at most {hi}")
        if self.n_context > self.vocab:
            raise ValueError(f"n_context={self.n_context} needs at least as many tokens, but vocab={self.vocab}")
        if isinstance(self.lr, bool) or not isinstance(self.lr, (int, float)) or not 0 < self.lr <= MAX_LR:
            raise ValueError(f"lr must be a number in (0, {MAX_LR:g}], got {self.lr!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise ValueError(f"seed must be a whole number >= 0, got {self.seed!r}")
        return self


@dataclass(frozen=True)
class RetrievalTask:
    """The fixed part of the task. Shapes: embeddings (vocab, d_model) N(0, 1); values (vocab, d_v), unit rows."""

    embeddings: np.ndarray
    values: np.ndarray


@dataclass(frozen=True)
class Batch:
    """B examples. Shapes: query (B,) token ids; context (B, n_context) distinct ids; target (B,) the
    position in context that holds the query token."""

    query: np.ndarray
    context: np.ndarray
    target: np.ndarray


@dataclass(frozen=True)
class Forward:
    """The forward pass on one batch, kept for the backward pass.

    Shapes: x_q (B, 1, d_model), x_k (B, n_context, d_model), q (B, 1, d_k), k (B, n_context, d_k),
    v (B, n_context, d_v), weights (B, 1, n_context), error = output - target (B, d_v); loss a float.
    """

    x_q: np.ndarray
    x_k: np.ndarray
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    weights: np.ndarray
    error: np.ndarray
    loss: float


@dataclass(frozen=True)
class LossAndGrads:
    """Loss and its gradients. Shapes: grad_w_q, grad_w_k (d_model, d_k); weights (B, n_context)."""

    loss: float
    grad_w_q: np.ndarray
    grad_w_k: np.ndarray
    weights: np.ndarray

    @property
    def grad_norm(self) -> float:
        """sqrt(||dL/dW_q||² + ||dL/dW_k||²): how far one step can move the weights."""
        return float(math.sqrt((self.grad_w_q**2).sum() + (self.grad_w_k**2).sum()))


@dataclass(frozen=True)
class TrainingRun:
    """One run. Shapes: loss, grad_norm, accuracy, stuck (steps,), per step on that step's batch before
    its update; initial_loss on the held-out batch of n_eval examples before training, final_* on it after.
    `stuck` is the fraction of examples with more than STUCK_WEIGHT of the weight on a wrong position."""

    scale: bool
    loss: np.ndarray
    grad_norm: np.ndarray
    accuracy: np.ndarray
    stuck: np.ndarray
    initial_loss: float
    final_loss: float
    final_accuracy: float
    final_stuck: float


@dataclass(frozen=True)
class ScalingComparison:
    """The same run twice, scaled and unscaled."""

    config: TrainingConfig
    scaled: TrainingRun
    unscaled: TrainingRun

    @property
    def unscaled_trains_worse(self) -> bool:
        """True if the unscaled run ends with a clearly higher held-out loss (by 10% and 0.01 at least)."""
        a, b = self.scaled.final_loss, self.unscaled.final_loss
        return b > 1.1 * a and b > a + 0.01


def make_task(config: TrainingConfig) -> RetrievalTask:
    """Random embeddings and unit-length value vectors, from the config's seed."""
    rng = np.random.default_rng([config.seed, 1])
    embeddings = rng.standard_normal((config.vocab, config.d_model))  # (vocab, d_model)
    values = rng.standard_normal((config.vocab, config.d_v))  # (vocab, d_v)
    return RetrievalTask(embeddings, values / np.linalg.norm(values, axis=1, keepdims=True))


def init_weights(config: TrainingConfig) -> tuple[np.ndarray, np.ndarray]:
    """W_q, W_k (d_model, d_k) with N(0, 1/d_model) entries, so q = x W_q has unit-variance components."""
    rng = np.random.default_rng([config.seed, 2])
    std = 1.0 / math.sqrt(config.d_model)
    return (
        std * rng.standard_normal((config.d_model, config.d_k)),
        std * rng.standard_normal((config.d_model, config.d_k)),
    )


def sample_batch(rng: np.random.Generator, batch: int, n_context: int, vocab: int) -> Batch:
    """B contexts of distinct tokens; the query is the token at a random position of its context."""
    context = rng.permuted(np.tile(np.arange(vocab), (batch, 1)), axis=1)[:, :n_context]  # (B, n_context)
    target = rng.integers(0, n_context, size=batch)  # (B,)
    return Batch(context[np.arange(batch), target], context, target)


def forward(w_q, w_k, task: RetrievalTask, batch: Batch, *, scale: bool) -> Forward:
    """The layer on one batch: project, attend over the context, compare with the target value.

    Shapes: w_q, w_k (d_model, d_k); a batch of B examples with n_context positions each.
    """
    x_q = task.embeddings[batch.query][:, None, :]  # (B, 1, d_model)
    x_k = task.embeddings[batch.context]  # (B, n_context, d_model)
    v = task.values[batch.context]  # (B, n_context, d_v)
    q, k = x_q @ w_q, x_k @ w_k  # (B, 1, d_k), (B, n_context, d_k)
    output, weights = scaled_dot_product_attention(q, k, v, scale=scale)  # (B, 1, d_v), (B, 1, n_context)
    error = output[:, 0] - task.values[batch.query]  # (B, d_v)
    return Forward(x_q, x_k, q, k, v, weights, error, float((error**2).sum(axis=1).mean()))


def retrieval_loss(w_q, w_k, task: RetrievalTask, batch: Batch, *, scale: bool) -> LossAndGrads:
    """L and dL/dW_q, dL/dW_k for one batch: the forward pass, then the hand-written backward pass.

    Shapes: w_q, w_k (d_model, d_k) -> grads of the same shapes; weights (B, n_context).
    """
    f = forward(w_q, w_k, task, batch, scale=scale)
    b = f.error.shape[0]
    grad_output = (2.0 / b) * f.error[:, None, :]  # dL/dO for L = mean_b ||o_b - v_t||², (B, 1, d_v)
    grads = attention_backward(f.q, f.k, f.v, f.weights, grad_output, scale=scale)
    grad_w_q = _sum_over_batch(f.x_q, grads.grad_q)  # q = x_q W_q, so dW_q = Σ_b x_qᵀ dq: (d_model, d_k)
    grad_w_k = _sum_over_batch(f.x_k, grads.grad_k)  # (d_model, d_k)
    return LossAndGrads(f.loss, grad_w_q, grad_w_k, f.weights[:, 0])


def _sum_over_batch(x: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """Σ_b x_bᵀ grad_b, the gradient of a weight W used as x_b W in every example.

    Shapes: x (B, r, d_model), grad (B, r, d_k) -> (d_model, d_k). One small product per example
    rather than one (d_model, B·r) @ (B·r, d_k): small products stay single-threaded in BLAS, and on a
    busy 2-core machine a threaded product of this size is many times slower.
    """
    return np.matmul(x.swapaxes(-1, -2), grad).sum(axis=0)  # (B, d_model, r) @ (B, r, d_k) -> sum over B


def accuracy(weights: np.ndarray, batch: Batch) -> float:
    """Fraction of examples whose largest weight is on the position holding the query token.

    Shapes: weights (B, n_context) -> a float in [0, 1].
    """
    return float((weights.argmax(axis=1) == batch.target).mean())


def stuck_fraction(weights: np.ndarray, batch: Batch) -> float:
    """Fraction of examples whose softmax puts more than STUCK_WEIGHT on a wrong position.

    Shapes: weights (B, n_context) -> a float in [0, 1]. Such an example is confidently wrong and its
    softmax Jacobian is nearly 0, so it sends back almost no gradient to fix itself.
    """
    wrong = weights.argmax(axis=1) != batch.target
    return float((wrong & (weights.max(axis=1) > STUCK_WEIGHT)).mean())


def train(config: TrainingConfig, *, scale: bool, on_step: Callable[[int, int], None] | None = None) -> TrainingRun:
    """Plain gradient descent on W_q, W_k for config.steps steps; `on_step(step, steps)` after each.

    Shapes: the run's per-step arrays are (steps,). Same config, same numbers.
    """
    config = config.check()
    task, (w_q, w_k) = make_task(config), init_weights(config)
    data_rng = np.random.default_rng([config.seed, 3])  # same batches for the scaled and the unscaled run
    held_out = sample_batch(np.random.default_rng([config.seed, 4]), config.n_eval, config.n_context, config.vocab)
    initial_loss = forward(w_q, w_k, task, held_out, scale=scale).loss
    losses, norms, accs, stuck = (np.empty(config.steps) for _ in range(4))
    for step in range(config.steps):
        batch = sample_batch(data_rng, config.batch, config.n_context, config.vocab)
        result = retrieval_loss(w_q, w_k, task, batch, scale=scale)
        losses[step], norms[step] = result.loss, result.grad_norm
        accs[step], stuck[step] = accuracy(result.weights, batch), stuck_fraction(result.weights, batch)
        w_q = w_q - config.lr * result.grad_w_q  # (d_model, d_k)
        w_k = w_k - config.lr * result.grad_w_k  # (d_model, d_k)
        if on_step is not None:
            on_step(step + 1, config.steps)
    final = forward(w_q, w_k, task, held_out, scale=scale)
    weights = final.weights[:, 0]  # (n_eval, n_context)
    return TrainingRun(
        scale,
        losses,
        norms,
        accs,
        stuck,
        initial_loss,
        final.loss,
        accuracy(weights, held_out),
        stuck_fraction(weights, held_out),
    )


def compare_scaling(config: TrainingConfig, on_step: Callable[[int, int], None] | None = None) -> ScalingComparison:
    """Train twice from the same start on the same batches, scaled then unscaled.

    `on_step(done, total)` counts both runs' steps: total = 2 * config.steps.
    """
    config = config.check()
    total = 2 * config.steps

    def progress(offset: int) -> Callable[[int, int], None] | None:
        return None if on_step is None else (lambda step, _: on_step(offset + step, total))

    scaled = train(config, scale=True, on_step=progress(0))
    unscaled = train(config, scale=False, on_step=progress(config.steps))
    return ScalingComparison(config, scaled, unscaled)


# ---------------------------------------------------------------- what the page says of a pair of runs
def times(ratio: float) -> str:
    """A ratio of two losses, as a page says it: 1.04, 20, 3,017."""
    return num(ratio, ".3g") if ratio < 10 else num(ratio, ",.0f")


def loss_comparison(scaled: float, unscaled: float) -> str:
    """Which run ends with the lower held-out loss, and by what factor: only what the two numbers say."""
    if scaled == unscaled:
        return tr("The two held-out losses are equal.")
    if min(scaled, unscaled) == 0:
        if scaled == 0:
            return tr("The scaled run's held-out loss is exactly 0.")
        return tr("The unscaled run's held-out loss is exactly 0.")
    if unscaled > scaled:
        return tr("The unscaled run's held-out loss is {ratio} times the scaled run's.", ratio=times(unscaled / scaled))
    return tr(
        "The unscaled run's held-out loss is the lower: the scaled run's is {ratio} times it.",
        ratio=times(scaled / unscaled),
    )


def stuck_sentence(c: ScalingComparison) -> str:
    """The share of each run's held-out examples that are stuck, for each run that has any."""
    scaled, unscaled = c.scaled.final_stuck, c.unscaled.final_stuck
    values = dict(
        scaled=num(scaled, ".1%"),
        unscaled=num(unscaled, ".1%"),
        weight=num(STUCK_WEIGHT, ".0%"),
        bound=num(STUCK_JACOBIAN_BOUND, ".2g"),
    )
    if scaled > 0 and unscaled > 0:
        said = tr(
            "{scaled} of the scaled run's and {unscaled} of the unscaled run's held-out examples are stuck: more "
            "than {weight} of their weight on a wrong position, where the softmax's Jacobian has a norm below "
            "{bound}, so the gradient that reaches their scores is less than {bound} times the gradient on their "
            "weights.",
            **values,
        )
    elif scaled > 0:
        said = tr(
            "{scaled} of the scaled run's held-out examples are stuck: more than {weight} of their weight on a wrong "
            "position, where the softmax's Jacobian has a norm below {bound}, so the gradient that reaches their "
            "scores is less than {bound} times the gradient on their weights.",
            **values,
        )
    elif unscaled > 0:
        said = tr(
            "{unscaled} of the unscaled run's held-out examples are stuck: more than {weight} of their weight on a "
            "wrong position, where the softmax's Jacobian has a norm below {bound}, so the gradient that reaches "
            "their scores is less than {bound} times the gradient on their weights.",
            **values,
        )
    else:
        said = tr(
            "No held-out example of either run is stuck (more than {weight} of its weight on a wrong position).",
            **values,
        )
    return sentence_space() + said


def verdict(c: ScalingComparison) -> str:
    """What the two runs measured at the settings chosen, and nothing the numbers do not say."""
    s, u, config = c.scaled, c.unscaled, c.config
    numbers = dict(
        scaled_loss=num(s.final_loss, ".3g"),
        unscaled_loss=num(u.final_loss, ".3g"),
        scaled_accuracy=num(s.final_accuracy, ".1%"),
        unscaled_accuracy=num(u.final_accuracy, ".1%"),
    )
    if config.d_k == 1:
        return tr(
            "At d_k = 1, √d_k = 1: the two runs are the same run (held-out loss **{scaled_loss}** scaled vs "
            "**{unscaled_loss}** unscaled, accuracy **{scaled_accuracy}** vs **{unscaled_accuracy}**).",
            **numbers,
        )
    measured = tr(
        "Measured at d_k = {d_k}, learning rate {lr}, {steps} steps, seed {seed}: held-out loss **{scaled_loss}** "
        "scaled vs **{unscaled_loss}** unscaled, accuracy **{scaled_accuracy}** vs **{unscaled_accuracy}**.",
        d_k=config.d_k,
        lr=num(config.lr, "g"),
        steps=config.steps,
        seed=config.seed,
        **numbers,
    )
    return f"{measured} {loss_comparison(s.final_loss, u.final_loss)}{stuck_sentence(c)}"


def grad_norm_caption(c: ScalingComparison) -> str:
    """What the gradient-norm chart shows, in the numbers it was drawn from."""
    if c.config.d_k == 1:
        return tr("The size of each step's gradient (log scale): at d_k = 1 the two runs are one run, drawn twice.")
    parts = []
    for scaled, run in ((True, c.scaled), (False, c.unscaled)):
        g = run.grad_norm
        low = int(np.argmin(g))
        zeros = int(np.count_nonzero(g == 0))
        values = dict(
            first=num(g[0], ".2g"),
            last=num(g[-1], ".2g"),
            steps=g.size,
            smallest=num(g[low], ".2g"),
            smallest_step=low + 1,
            loss=num(run.loss[low], ".3g"),
            n=zeros,
        )
        if scaled and zeros:
            part = tr_n(
                "Scaled: {first} at step 1, {last} at step {steps}, smallest {smallest} at step {smallest_step} (that "
                "step's batch loss {loss}); {n} step exactly 0, drawn at the bottom.",
                "Scaled: {first} at step 1, {last} at step {steps}, smallest {smallest} at step {smallest_step} (that "
                "step's batch loss {loss}); {n} steps exactly 0, drawn at the bottom.",
                zeros,
                **values,
            )
        elif scaled:
            part = tr(
                "Scaled: {first} at step 1, {last} at step {steps}, smallest {smallest} at step {smallest_step} (that "
                "step's batch loss {loss}).",
                **values,
            )
        elif zeros:
            part = tr_n(
                "Unscaled: {first} at step 1, {last} at step {steps}, smallest {smallest} at step {smallest_step} "
                "(that step's batch loss {loss}); {n} step exactly 0, drawn at the bottom.",
                "Unscaled: {first} at step 1, {last} at step {steps}, smallest {smallest} at step {smallest_step} "
                "(that step's batch loss {loss}); {n} steps exactly 0, drawn at the bottom.",
                zeros,
                **values,
            )
        else:
            part = tr(
                "Unscaled: {first} at step 1, {last} at step {steps}, smallest {smallest} at step {smallest_step} "
                "(that step's batch loss {loss}).",
                **values,
            )
        parts.append(part)
    return tr("The size of each step's gradient (log scale).") + sentence_space() + sentence_space().join(parts)
