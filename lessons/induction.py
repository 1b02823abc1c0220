"""Watch an induction head form: a 2-layer attention-only decoder learns to continue repeated random tokens.

The task (Olsson et al. 2022, "In-context learning and induction heads"): T distinct random tokens, then
the same T again. The first half cannot be predicted (each token is fresh); the second half can, but only
by looking back: at a token's second occurrence, find its first occurrence and read the token after it.
One layer cannot do that. Two can: a *previous-token head* in layer 1 writes "the token before me" into
each position, and an *induction head* in layer 2 matches the current token against it (its query is
the current token, its key the previous token at each earlier position) and copies the token it finds.

T varies from batch to batch (HALF_MIN .. HALF_MAX), so no fixed offset ("look T back") solves it.
Training is plain next-token prediction on every position with Adam; the loss on the first half stays
near chance (a model that knew where the half ends could go a little lower, see `first_half_floor`; this one
cannot, and hedges that the repeat starts now), the loss on the repeated half falls suddenly when the two
heads click together.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from attention.adam import AdamState, adam_step
from attention.checks import check_positive_int
from attention.decoder import DecoderConfig, DecoderParams, decoder_forward, forward_trace
from attention.decoder_backward import next_token_loss
from locales import num, sentence_space, tr, tr_n

DATA = Path(__file__).resolve().parent / "data"
MODEL_FILE = DATA / "induction_model.npz"
LETTERS = "abcdefghijklmnopqrstuvwxyz"
MAX_STEPS = 4000
SCORE_SEQUENCES = 64  # the fixed batch each checkpoint's scores are averaged over
PREVIOUS_TOKEN_LATEX = r"\text{prev}(\ell, h) = \frac{1}{n-1}\sum_{i=1}^{n-1} A^{\ell h}_{i,\,i-1}"
INDUCTION_LATEX = (
    r"\text{ind}(\ell, h) = \operatorname*{mean}_{i:\ t_j = t_i,\ j < i} A^{\ell h}_{i,\,j+1}"
    r"\quad (j\text{: the earlier occurrence of } t_i)"
)


@dataclass(frozen=True)
class InductionConfig:
    """Everything that defines a training run. Frozen and hashable (a cache key); same config, same numbers
    (up to float32 rounding, which can differ between machines)."""

    vocab_size: int = 26
    d_model: int = 32
    n_heads: int = 2
    half_min: int = 4
    half_max: int = 16
    steps: int = 2000
    batch: int = 64
    lr: float = 1e-2
    seed: int = 0
    checkpoint_every: int = 50
    probe_half: int = 10

    def check(self) -> "InductionConfig":
        """Return self, or raise `ValueError` naming the first setting out of range."""
        for name, hi in (("vocab_size", 64), ("d_model", 256), ("n_heads", 8), ("steps", MAX_STEPS), ("batch", 256)):
            if check_positive_int(getattr(self, name), name) > hi:
                raise ValueError(f"{name}={getattr(self, name)} is too large: at most {hi}")
        if not 2 <= check_positive_int(self.half_min, "half_min") <= self.half_max <= self.vocab_size:
            raise ValueError(f"need 2 <= half_min <= half_max <= vocab_size, got {self.half_min}, {self.half_max}")
        if not self.half_min <= check_positive_int(self.probe_half, "probe_half") <= self.half_max:
            raise ValueError(f"probe_half={self.probe_half} must be within {self.half_min} .. {self.half_max}")
        if not (isinstance(self.lr, float) and 0 < self.lr <= 0.1):
            raise ValueError(f"lr must be a number in (0, 0.1], got {self.lr!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a whole number >= 0, got {self.seed!r}")
        check_positive_int(self.checkpoint_every, "checkpoint_every")
        return self

    @property
    def decoder(self) -> DecoderConfig:
        """The model: 2 layers of attention only (no MLP, no final norm), one key/value head per query head."""
        return DecoderConfig(self.vocab_size, 2, self.n_heads, self.n_heads, self.d_model, 2 * self.half_max)

    @property
    def checkpoint_steps(self) -> tuple[int, ...]:
        """The steps at which the attention patterns are kept: 0, every checkpoint_every steps, and the last."""
        return tuple(sorted({*range(0, self.steps, self.checkpoint_every), self.steps}))


def repeated_tokens(rng: np.random.Generator, batch: int, half: int, vocab_size: int) -> np.ndarray:
    """`batch` sequences of `half` distinct random tokens followed by the same tokens again.

    Shapes: -> (batch, 2 half) ints.
    """
    first = rng.permuted(np.tile(np.arange(vocab_size), (batch, 1)), axis=1)[:, :half]  # (batch, half)
    return np.concatenate([first, first], axis=1)  # (batch, 2 half)


def half_weights(half: int) -> tuple[np.ndarray, np.ndarray]:
    """Which predictions belong to each half, as (first, repeated) bool masks over the 2 half - 1 predictions.

    Prediction i is made at position i for the token at i + 1. First half: positions 0 .. half - 2 (tokens
    1 .. half - 1, each fresh). Repeated half: positions half .. 2 half - 2 (tokens half + 1 ..), where the
    current token occurred before. Position half - 1 (guessing where the repeat starts) is in neither.
    """
    i = np.arange(2 * half - 1)
    return i <= half - 2, i >= half


def chance_loss(vocab_size: int) -> float:
    """log(vocab_size): the loss of a uniform guess."""
    return math.log(vocab_size)


def first_half_floor(vocab_size: int, half: int) -> float:
    """The best loss on the first half knowing only that tokens do not repeat there: the token at i is uniform
    over the vocab_size - i not yet seen, so the mean of log(vocab_size - i) for i = 1 .. half - 1."""
    return float(np.mean([math.log(vocab_size - i) for i in range(1, half)]))


def first_half_verdict(evaluation: "Evaluation", vocab_size: int, halves: tuple[int, int] | None = None) -> str:
    """What the measured first-half loss says, against chance (log V) and the floor (`first_half_floor`), and why:
    the share of probability the model gives to letters already seen, none of which ever comes next there; with
    `halves` (the training's half_min, half_max), how often its top guess is the first letter, i.e. that the repeat
    starts now, which training taught it to expect at any step."""
    chance, floor = chance_loss(vocab_size), first_half_floor(vocab_size, evaluation.half)
    loss = evaluation.loss_first
    numbers = dict(
        loss=num(loss, ".2f"),
        vocab=vocab_size,
        chance=num(chance, ".2f"),
        floor=num(floor, ".2f"),
        half=evaluation.half,
    )
    if loss > chance:
        where = tr(
            "The first half sits above chance: {loss} nats against log {vocab} = {chance} (the floor at {half} "
            "letters: {floor}).",
            **numbers,
        )
    elif loss > floor + 0.005:  # the two decimals shown would not tell it from the floor
        where = tr(
            "The first half sits between the floor and chance: {loss} nats, between {floor} and {chance} (the floor "
            "at {half} letters: {floor}).",
            **numbers,
        )
    else:
        where = tr(
            "The first half reaches the floor: {loss} nats against {floor} (the floor at {half} letters: {floor}).",
            **numbers,
        )
    seen, flat = evaluation.seen_first, evaluation.seen_uniform
    shares = dict(seen=num(seen, ".0%"), flat=num(flat, ".0%"))
    why = (
        tr(
            "Its guesses are not flat: it favours letters it has already seen, giving them {seen} of its probability "
            "where a flat guess would give {flat}, and in the first half none of those ever comes next.",
            **shares,
        )
        if seen > flat
        else tr(
            "Its guesses are not flat: it has learned to avoid letters it has already seen, as the floor requires, "
            "giving them {seen} of its probability where a flat guess would give {flat}, and in the first half none "
            "of those ever comes next.",
            **shares,
        )
    )
    said = f"{where} {why}"
    if halves is None or seen <= flat:
        return said
    start = evaluation.by_position[evaluation.half - 1]
    return (
        said
        + sentence_space()
        + tr(
            "Its top guess there is the sequence's first letter in {first_letter} of the predictions: the guess that "
            "the repeat starts now, which in training (halves of {shortest} to {longest} letters) it could after any "
            "of letters {shortest} to {longest}. Where the repeat does start (the grey bar) the top guess is right "
            "{start} of the time.",
            first_letter=num(evaluation.first_letter_top, ".0%"),
            shortest=halves[0],
            longest=halves[1],
            start=num(start, ".0%"),
        )
    )


# ---------------------------------------------------------------- scores


def previous_token_scores(attentions) -> np.ndarray:
    """The mean weight each head puts on the position just before the query.

    Shapes: attentions (..., layers, heads, n, n_total) with n >= 2 -> (layers, heads), averaged over queries
    1 .. n - 1 (and any leading batch axes). 1 is a perfect previous-token head.
    """
    a = _check_attentions(attentions)
    n, m = a.shape[-2:]
    if n < 2:
        raise ValueError(f"attentions has {n} query; a previous-token score needs at least 2")
    rows = np.arange(1, n)
    cols = rows + (m - n)  # query i sits at position m - n + i
    on_previous = a[..., rows, cols - 1]  # (..., layers, heads, n - 1)
    return on_previous.mean(axis=-1).reshape(-1, *a.shape[-4:-2]).mean(axis=0)


def induction_scores(attentions, ids) -> np.ndarray:
    """The mean weight from each token's later occurrence onto the token after its earlier occurrence.

    Shapes: attentions (..., layers, heads, n, n) over a whole sequence, ids (..., n) -> (layers, heads).
    For query i whose token occurred earlier, at j < i (the latest such j), the weight on key j + 1.
    `ValueError` if no token repeats (nothing to score).
    """
    a = _check_attentions(attentions)
    ids = np.asarray(ids)
    if ids.shape != a.shape[:-4] + a.shape[-2:-1] or a.shape[-1] != a.shape[-2]:
        raise ValueError(
            f"ids has shape {ids.shape}; expected {a.shape[:-4] + a.shape[-2:-1]} for attentions {a.shape}"
        )
    flat_a = a.reshape(-1, *a.shape[-4:])  # (B, layers, heads, n, n)
    flat_ids = ids.reshape(-1, ids.shape[-1])  # (B, n)
    picked = []
    for b, seq in enumerate(flat_ids):
        for i, j in earlier_occurrences(seq):
            picked.append(flat_a[b, :, :, i, j + 1])  # (layers, heads)
    if not picked:
        raise ValueError("no token occurs twice, so there is no induction to score: repeat part of the sequence")
    return np.mean(picked, axis=0)


def earlier_occurrences(ids) -> list[tuple[int, int]]:
    """Pairs (i, j): position i holds a token last seen at j < i. Shapes: ids (n,)."""
    last: dict[int, int] = {}
    pairs = []
    for i, t in enumerate(np.asarray(ids).tolist()):
        if t in last:
            pairs.append((i, last[t]))
        last[t] = i
    return pairs


def _check_attentions(attentions) -> np.ndarray:
    a = np.asarray(attentions, dtype=np.float64)
    if a.ndim < 4 or 0 in a.shape:
        raise ValueError(f"attentions has shape {a.shape}; expected (..., layers, heads, n, n_total)")
    if a.shape[-1] < a.shape[-2]:
        raise ValueError(f"attentions has shape {a.shape}: fewer keys than queries")
    if not np.all(np.isfinite(a)):
        raise ValueError("attentions holds NaN or inf")
    return a


def batch_attentions(params: DecoderParams, ids: np.ndarray) -> np.ndarray:
    """Every head's weights on each sequence. Shapes: ids (B, n) -> (B, layers, heads, n, n)."""
    return trace_attentions(forward_trace(np.asarray(ids), params))


def trace_attentions(trace) -> np.ndarray:
    """The weights of every head in a batched forward trace. Shapes: -> (B, layers, heads, n, n)."""
    b, n = trace.ids.shape
    return np.stack([t.weights.reshape(b, -1, n, n) for t in trace.layers], axis=1)  # heads = n_kv x group


# ---------------------------------------------------------------- measuring a model


@dataclass(frozen=True)
class Evaluation:
    """A model on fresh sequences of 2 half tokens: accuracy (top-1) and mean loss per half, and the per-head
    scores. Shapes: by_position (2 half - 1,) accuracy of each prediction; scores (layers, heads).
    seen_first: the mean probability the model gives, in the first half, to tokens already in the sequence
    (none of which ever comes next there); seen_uniform: what a uniform guess would give them."""

    half: int
    n_sequences: int
    accuracy_first: float
    accuracy_repeated: float
    loss_first: float
    loss_repeated: float
    by_position: np.ndarray
    previous_token: np.ndarray
    induction: np.ndarray
    seen_first: float
    seen_uniform: float
    first_letter_top: float = 0.0  # the share of first-half predictions whose top guess is the sequence's first token


def evaluate(params: DecoderParams, *, half: int = 10, n_sequences: int = 500, seed: int = 12345) -> Evaluation:
    """Measure `params` on `n_sequences` fresh repeated sequences drawn from `seed` (not a training seed)."""
    config = params.config
    if not 2 <= half <= config.max_positions // 2 or half > config.vocab_size:
        raise ValueError(
            f"half={half} does not fit this model (2 .. {min(config.max_positions // 2, config.vocab_size)})"
        )
    ids = repeated_tokens(
        np.random.default_rng(seed), check_positive_int(n_sequences, "n_sequences"), half, config.vocab_size
    )
    inputs, targets = ids[:, :-1], ids[:, 1:]  # (B, n) each, n = 2 half - 1
    trace = forward_trace(inputs, params)
    losses, correct = prediction_losses(trace.logits, targets)  # (B, n) each
    attn = trace_attentions(trace)  # (B, layers, heads, n, n)
    first, repeated = half_weights(half)
    seen, uniform = seen_probability(trace.logits[:, first], inputs[:, first], config.vocab_size)
    first_letter_top = float((trace.logits[:, first].argmax(axis=-1) == ids[:, :1]).mean())  # (B, half - 1) -> share
    return Evaluation(
        half,
        n_sequences,
        float(correct[:, first].mean()),
        float(correct[:, repeated].mean()),
        float(losses[:, first].mean()),
        float(losses[:, repeated].mean()),
        correct.mean(axis=0),
        previous_token_scores(attn),
        induction_scores(attn, inputs),
        seen,
        uniform,
        first_letter_top,
    )


def seen_probability(logits: np.ndarray, inputs: np.ndarray, vocab_size: int) -> tuple[float, float]:
    """(mean probability on the tokens seen so far, what a uniform guess would put there), over the first
    half's predictions. Shapes: logits (B, k, vocab_size), inputs (B, k): prediction i has seen inputs[:, : i + 1]."""
    z = logits.astype(np.float64)
    probs = np.exp(z - z.max(axis=-1, keepdims=True))
    probs /= probs.sum(axis=-1, keepdims=True)  # (B, k, vocab_size)
    k = inputs.shape[1]
    seen = [np.take_along_axis(probs[:, i], inputs[:, : i + 1], axis=1).sum(axis=1).mean() for i in range(k)]
    return float(np.mean(seen)), float(np.mean([(i + 1) / vocab_size for i in range(k)]))


def prediction_losses(logits: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cross-entropy, whether the largest logit is the target) of each prediction, in float64.

    Shapes: logits (..., vocab_size), targets (...) -> (...), (...).
    """
    z = logits.astype(np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    log_probs = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))  # (..., vocab_size)
    losses = -np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]
    return losses, logits.argmax(axis=-1) == targets


# ---------------------------------------------------------------- training


@dataclass(frozen=True)
class InductionRun:
    """A trained model and how it got there.

    Shapes: loss_first, loss_repeated (steps,) the mean loss on each half of that step's batch before its
    update; checkpoint_steps (C,); attentions (C, layers, heads, n, n) on `probe` (n = 2 probe_half - 1
    tokens, the probe without its last); previous_token, induction (C, layers, heads) on a fixed batch.
    """

    config: InductionConfig
    params: DecoderParams
    loss_first: np.ndarray
    loss_repeated: np.ndarray
    checkpoint_steps: np.ndarray
    probe: np.ndarray
    attentions: np.ndarray
    previous_token: np.ndarray
    induction: np.ndarray
    seconds: float


def train_induction(config: InductionConfig, on_step: Callable[[int, int], None] | None = None) -> InductionRun:
    """Train the 2-layer attention-only decoder on repeated random tokens with Adam; `on_step(done, total)`
    after each step. Batches and the starting weights come from config.seed; computed in float32."""
    config = config.check()
    t0 = time.perf_counter()
    params = DecoderParams.random(config.decoder, config.seed, np.float32)
    state = AdamState.zeros(params.arrays())
    rng = np.random.default_rng([config.seed, 1])
    probe_rng = np.random.default_rng([config.seed, 2])
    probe = repeated_tokens(probe_rng, 1, config.probe_half, config.vocab_size)[0]  # (2 probe_half,)
    score_batch = repeated_tokens(probe_rng, SCORE_SEQUENCES, config.probe_half, config.vocab_size)[:, :-1]  # (S, n)
    checkpoints = set(config.checkpoint_steps)
    losses = np.zeros((2, config.steps))
    kept: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for step in range(config.steps + 1):
        if step in checkpoints:
            kept.append(_checkpoint(params, probe[None, :-1], score_batch))
        if step == config.steps:
            break
        half = int(rng.integers(config.half_min, config.half_max + 1))
        result = next_token_loss(params, repeated_tokens(rng, config.batch, half, config.vocab_size))
        first, repeated = half_weights(half)
        losses[:, step] = result.losses[:, first].mean(), result.losses[:, repeated].mean()
        arrays, state = adam_step(params.arrays(), result.grads, state, lr=config.lr)
        params = DecoderParams.from_arrays(config.decoder, arrays)
        if on_step is not None:
            on_step(step + 1, config.steps)
    attn, prev, ind = (np.stack(x) for x in zip(*kept))
    return InductionRun(
        config, params, *losses, np.array(config.checkpoint_steps), probe, attn, prev, ind, time.perf_counter() - t0
    )


def _checkpoint(params: DecoderParams, probe: np.ndarray, batch: np.ndarray) -> tuple[np.ndarray, ...]:
    """(attentions on the probe (layers, heads, n, n), previous-token and induction scores on the batch)."""
    attn = batch_attentions(params, batch)
    return batch_attentions(params, probe)[0], previous_token_scores(attn), induction_scores(attn, batch)


# ---------------------------------------------------------------- reading a run


ROLE_THRESHOLD = 0.5  # a head that puts more than half its weight where the role says is given that role


def formation_index(induction: np.ndarray, threshold: float = ROLE_THRESHOLD) -> int | None:
    """The first checkpoint at which some head of the last layer has an induction score above `threshold`
    (None if none does). Shapes: induction (C, layers, heads)."""
    hits = np.flatnonzero(np.asarray(induction)[:, -1].max(axis=-1) > threshold)
    return int(hits[0]) if hits.size else None


FALL_WINDOW = 25  # steps averaged when reading when the repeated half's loss falls (one batch is noisy)


def loss_fall(loss_repeated: np.ndarray, chance: float, window: int = FALL_WINDOW) -> tuple[int, int] | None:
    """(the first step from which the mean loss of the next `window` steps is below 90 % of chance, the first
    from which it is below 10 % of chance): when the repeated half's loss falls. None if it never reaches 10 %.
    Shapes: loss_repeated (steps,)."""
    loss = np.asarray(loss_repeated, dtype=np.float64)
    if loss.size < window:
        return None
    means = np.convolve(loss, np.ones(window) / window, mode="valid")  # means[s] = mean(loss[s : s + window])
    below_high, below_low = np.flatnonzero(means < 0.9 * chance), np.flatnonzero(means < 0.1 * chance)
    if not below_low.size:
        return None
    return int(below_high[0]), int(below_low[0])


def strip_indices(induction: np.ndarray, count: int = 6) -> list[int]:
    """`count` checkpoints to show side by side: the first, the last, and those around the formation
    (evenly spread when no induction head formed). Shapes: induction (C, layers, heads)."""
    c = len(induction)
    k = formation_index(induction)
    if k is None or c <= count:
        return sorted({round(i * (c - 1) / (count - 1)) for i in range(count)}) if c > count else list(range(c))
    around = [k - 2, k - 1, k, k + 1]
    return sorted({0, c - 1, *(i for i in around if 0 <= i < c)})


def nearest_checkpoint(checkpoint_steps, step: int) -> int:
    """The checkpoint step nearest `step` (the earlier of two as near). Shapes: checkpoint_steps (C,)."""
    steps = [int(s) for s in checkpoint_steps]
    if not steps:
        raise ValueError("a run has at least one checkpoint; got none")
    return min(steps, key=lambda s: abs(s - step))


def checkpoint_index(checkpoint_steps, step: int) -> int:
    """Which checkpoint (0 .. C - 1) was kept at `step`; `ValueError` if none was. Shapes: checkpoint_steps (C,)."""
    hits = np.flatnonzero(np.asarray(checkpoint_steps) == step)
    if not hits.size:
        raise ValueError(f"step {step} is not one of this run's checkpoints")
    return int(hits[0])


END_STEPS = 100  # the steps averaged for the loss a run ends with


def final_losses(run: InductionRun, steps: int = END_STEPS) -> tuple[float, float]:
    """(first half, repeated half): the mean loss over a run's last `steps` steps."""
    return float(run.loss_first[-steps:].mean()), float(run.loss_repeated[-steps:].mean())


@dataclass(frozen=True)
class Rise:
    """Both roles' best scores one checkpoint before and one after an induction head formed: layer 1's best
    previous-token score and the last layer's best induction score."""

    step_before: int
    step_after: int
    previous_before: float
    previous_after: float
    induction_before: float
    induction_after: float


def formation_rise(run: InductionRun) -> Rise | None:
    """How both scores rose around the checkpoint where an induction head formed (None if none formed)."""
    formed = formation_index(run.induction)
    if formed is None:
        return None
    before, after = max(formed - 1, 0), min(formed + 1, len(run.checkpoint_steps) - 1)
    prev, ind = run.previous_token, run.induction  # (C, layers, heads) each
    return Rise(
        int(run.checkpoint_steps[before]),
        int(run.checkpoint_steps[after]),
        float(prev[before, 0].max()),
        float(prev[after, 0].max()),
        float(ind[before, -1].max()),
        float(ind[after, -1].max()),
    )


def sequence_scores(attentions, ids) -> tuple[np.ndarray, np.ndarray | None]:
    """Both scores of every head on one sequence: (previous-token, induction), the second None when no token
    repeats (there is no induction to score). Shapes: attentions (layers, heads, n, n), ids (n,) -> (layers, heads)."""
    previous = previous_token_scores(attentions)
    if not earlier_occurrences(ids):
        return previous, None
    return previous, induction_scores(attentions, ids)


def heads_on_continuation(
    params: DecoderParams, completed: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """What every head does on a prompt and the model's continuation of it: the tokens it read (all but the last
    new one, which is never fed back), every head's weights on them, and both scores of every head (the induction
    score None when no token repeats, as in `sequence_scores`).

    Shapes: completed (n + 1,) -> inputs (n,), attentions (layers, heads, n, n), previous and induction
    (layers, heads).
    """
    inputs = np.asarray(completed)[:-1]
    attentions = decoder_forward(inputs, params).attentions
    previous, induction = sequence_scores(attentions, inputs)
    return inputs, attentions, previous, induction


def head_role(previous: float, induction: float) -> str:
    """A name for what a head mostly does, from its two scores."""
    if induction > ROLE_THRESHOLD:
        return tr("induction head")
    if previous > ROLE_THRESHOLD:
        return tr("previous-token head")
    return tr("neither (mixed)")


# ---------------------------------------------------------------- the shipped model


def save_run(run: InductionRun, path: Path = MODEL_FILE) -> Path:
    """Write a run to a compressed .npz: the weights, the config as JSON, the curves and the checkpoints."""
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        path,
        config=json.dumps(asdict(run.config)),
        seconds=run.seconds,
        loss_first=run.loss_first.astype(np.float32),
        loss_repeated=run.loss_repeated.astype(np.float32),
        checkpoint_steps=run.checkpoint_steps,
        probe=run.probe,
        attentions=run.attentions.astype(np.float16),  # pictures: 3 digits are plenty
        previous_token=run.previous_token.astype(np.float32),
        induction=run.induction.astype(np.float32),
        **{f"param.{k}": v for k, v in run.params.arrays().items()},
    )
    return path


def load_run(path: Path = MODEL_FILE) -> InductionRun:
    """The run saved by scripts/train_induction.py (its weights, curves and checkpoints)."""
    with np.load(path, allow_pickle=False) as data:
        config = InductionConfig(**json.loads(str(data["config"])))
        params = DecoderParams.from_arrays(
            config.decoder, {k.removeprefix("param."): data[k] for k in data.files if k.startswith("param.")}
        )
        curves = [data[k].astype(np.float64) for k in ("loss_first", "loss_repeated")]
        return InductionRun(
            config,
            params,
            *curves,
            data["checkpoint_steps"],
            data["probe"],
            data["attentions"].astype(np.float64),
            data["previous_token"].astype(np.float64),
            data["induction"].astype(np.float64),
            float(data["seconds"]),
        )


def load_induction_model() -> DecoderParams:
    """The shipped induction model's parameters (float32), trained by scripts/train_induction.py."""
    return load_run().params


# ---------------------------------------------------------------- letters for the pages


def trained_length(config: DecoderConfig) -> int:
    """The longest input this task's training ever feeds: its longest sequences have 2 half_max = max_positions
    tokens and the last one is only a target, so the last position never holds an input during training and
    its row of the position table keeps its random starting value."""
    return config.max_positions - 1


def check_input_fits(prompt_size: int, n_new: int, config: DecoderConfig) -> None:
    """Raise `ValueError` unless the prompt and the n_new - 1 new tokens fed back fit the trained positions."""
    if prompt_size == 0:
        raise ValueError(tr("type at least one letter"))
    need, limit = prompt_size + n_new - 1, trained_length(config)
    if need > limit:
        raise ValueError(
            tr_n(
                "{letters} letters + {n} new one need {need} positions; training fed this model at most {limit} "
                "tokens, so its position {position} was never trained (its row is still random)",
                "{letters} letters + {n} new ones need {need} positions; training fed this model at most {limit} "
                "tokens, so its position {position} was never trained (its row is still random)",
                n_new,
                letters=prompt_size,
                n=n_new,
                need=need,
                limit=limit,
                position=limit + 1,
            )
        )


def new_letters_room(text: str, config: DecoderConfig, most: int) -> int:
    """How many new letters the model can add to the letters of `text` inside its trained positions
    (`check_input_fits`), at most `most` and at least 1 (a prompt that leaves no room is refused by
    check_input_fits, with its reason); `most` while `text` is not the model's letters (refused elsewhere)."""
    try:
        size = letters_to_ids(text, config.vocab_size).size
    except ValueError:
        return most
    return max(1, min(most, trained_length(config) - size + 1))


def new_letters_reason(text: str, config: DecoderConfig) -> str:
    """Why new_letters_room bounds the new letters added to `text`, in words."""
    positions = trained_length(config)
    try:
        size = letters_to_ids(text, config.vocab_size).size
    except ValueError:
        return tr(
            "your letters and the new ones fed back (all but the last) must fit the {positions} positions the model "
            "was trained on",
            positions=positions,
        )
    return tr_n(
        "your {n} letter and the new ones fed back (all but the last) must fit the {positions} positions the model "
        "was trained on",
        "your {n} letters and the new ones fed back (all but the last) must fit the {positions} positions the model "
        "was trained on",
        size,
        n=size,
        positions=positions,
    )


def letters_to_ids(text: str, vocab_size: int = 26) -> np.ndarray:
    """'a b c' or 'abc' -> [0, 1, 2]: one token per letter, spaces and commas ignored, case ignored.
    `ValueError` naming the first character that is not one of the model's letters."""
    allowed = LETTERS[:vocab_size]
    ids = []
    for ch in str(text):
        if ch in " ,\t\n":
            continue
        if ch.lower() not in allowed:
            raise ValueError(
                tr(
                    "{character} is not one of the model's tokens, the letters a to {last}",
                    character=repr(ch),
                    last=allowed[-1],
                )
            )
        ids.append(allowed.index(ch.lower()))
    return np.array(ids, dtype=np.intp)


def ids_to_letters(ids) -> list[str]:
    return [LETTERS[int(i)] for i in np.asarray(ids).reshape(-1)]
