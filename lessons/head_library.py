"""Hand-built attention heads: embeddings with positions in them, preset heads, captions, stacks.

The heads page needs inputs X (n, d_model) whose columns carry *position* and *content* separately,
so that a head can be built by hand to look at either:

    x_i = [cos(w_k i), sin(w_k i)]_{k < K}  ||  [cos(theta_{t,l}), sin(theta_{t,l})]_{l < L}

The first 2K columns are sinusoids of the position i with periods 32, 16, 8, 4 (so positions
0..15 never alias); the rest are pairs of angles drawn at random for the word t = tokens[i], keyed
by its text, so the same word always gets the same vector. (GPT adds position to content; we
concatenate them so that a preset can read one and ignore the other exactly.)

A preset sets one head's columns of W_Q and W_K (and of the query bias b_Q):

    previous / self:  q_i = c R(-s w) p_i, k_j = p_j, so q_i . k_j = c sum_k cos(w_k (i - s - j)),
                      largest exactly at j = i - s (s = 1: previous token, s = 0: itself)
    first:            q_i = c (1, 0, ...) from the bias, k_j = p_j: largest at j = 0
    similar:          q_i = c e_t, k_j = e_u (content only): largest where the word is the same
    uniform:          q = k = 0: every score 0, every weight 1/n
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass

import numpy as np

from attention.block import BlockParams, BlockTrace, transformer_block
from attention.checks import as_real_array, check_positive_int
from attention.heads import check_heads
from locales import marked, num, tr

EMBEDDING_LATEX = (
    r"x_i = \big[\cos(\omega_k i),\ \sin(\omega_k i)\big]_{k<K}\ \big\Vert\ "
    r"\big[\cos\theta_{t_i,l},\ \sin\theta_{t_i,l}\big]_{l<L},\qquad \omega_k = \frac{2\pi}{32 / 2^k}"
)
ENTROPY_LATEX = (
    r"H_i = -\sum_j w_{ij}\log_2 w_{ij}\ \text{bits},\qquad "
    r"\bar H = \frac{1}{n}\sum_i H_i,\qquad \bar d = \frac{1}{n}\sum_i \sum_j w_{ij}\,\lvert i-j\rvert"
)

POSITION_PERIODS = (32, 16, 8, 4)  # period 32 > 2 * 15: positions 0..15 are never confused
MAX_POSITIONS = 16
MIN_D_MODEL = 4
PRESETS = ("random", "previous", "first", "self", "uniform", "similar")
PRESET_LABELS = {
    # Translators: a preset of a hand-built attention head (what it looks at): a head with random weights
    "random": marked("random"),
    # Translators: a preset of a hand-built attention head: it attends to the previous token
    "previous": marked("previous token"),
    # Translators: a preset of a hand-built attention head: it attends to the first token
    "first": marked("first token"),
    # Translators: a preset of a hand-built attention head: each token attends to itself
    "self": marked("itself"),
    # Translators: a preset of a hand-built attention head, and a pattern: every weight equal
    "uniform": marked("uniform"),
    # Translators: a preset of a hand-built attention head: it attends to the most similar word
    "similar": marked("most similar word"),
}
PATTERN_LABELS = {  # the pattern a head's weights fit best, as its caption names it: "previous (93%)"
    # Translators: the pattern a head's weights fit best: the previous token
    "previous": marked("previous"),
    # Translators: the pattern a head's weights fit best: the first token
    "first": marked("first"),
    # Translators: the pattern a head's weights fit best: each token itself
    "self": marked("self"),
    "uniform": marked("uniform"),
    # Translators: the pattern a head's weights fit best: the copies of the same word
    "same word": marked("same word"),
}
MIN_D_HEAD = {"random": 1, "previous": 2, "first": 1, "self": 2, "uniform": 1, "similar": 2}
LOGIT_GAP = 6.0  # the best key's logit beats the runner-up's by this much: weight about 0.99
SIMILARITY_SHARPNESS = 6.0  # logit = this x the mean cosine of two words' content angles (1 for the same word)
RANDOM_GAIN = 2.0  # random heads: w ~ N(0, gain^2 / d_model), enough to give visible structure


@dataclass(frozen=True)
class Embedding:
    """Inputs built from a token sequence. Shapes: x (n, d_model); len(columns) == d_model.

    Columns 0..2K-1 are positional (K pairs), then 2L content columns (L pairs), then one spare
    content column when d_model - 2K is odd.
    """

    x: np.ndarray
    n_position_pairs: int
    n_content_pairs: int
    columns: tuple[str, ...]

    @property
    def content_start(self) -> int:
        return 2 * self.n_position_pairs


def position_frequencies(n_pairs: int) -> np.ndarray:
    """The angular frequencies w_k = 2 pi / period_k of the first `n_pairs` positional pairs."""
    return 2 * np.pi / np.array(POSITION_PERIODS[:n_pairs], dtype=float)


def embed_tokens(tokens, d_model: int, seed: int = 0) -> Embedding:
    """Embeddings X of `tokens`: positional sinusoids, then seeded per-word content angles.

    Shapes: tokens n strings (1 <= n <= 16) -> x (n, d_model). The same word (same text, same seed)
    always gets the same content columns, wherever it appears.
    """
    tokens = [str(t) for t in tokens]
    n = len(tokens)
    if not 1 <= n <= MAX_POSITIONS:
        raise ValueError(f"tokens has {n} entries; expected 1 to {MAX_POSITIONS} positions")
    d_model = check_positive_int(d_model, "d_model")
    if d_model < MIN_D_MODEL:
        raise ValueError(f"d_model={d_model} is too small; expected at least {MIN_D_MODEL} (position and content)")
    n_pos = min(len(POSITION_PERIODS), d_model // 4)
    angles = np.outer(np.arange(n), position_frequencies(n_pos))  # (n, K)
    positions = np.stack([np.cos(angles), np.sin(angles)], axis=-1).reshape(n, 2 * n_pos)  # (n, 2K)
    d_content = d_model - 2 * n_pos
    theta = np.stack([_word_angles(t, (d_content + 1) // 2, seed) for t in tokens])  # (n, ceil(d_content / 2))
    content = np.stack([np.cos(theta), np.sin(theta)], axis=-1).reshape(n, -1)[:, :d_content]  # (n, d_content)
    columns = [f"{f}(ω{k}·i)" for k in range(n_pos) for f in ("cos", "sin")]
    columns += [f"{f}(θ{pair})" for pair in range((d_content + 1) // 2) for f in ("cos", "sin")][:d_content]
    x = np.concatenate([positions, content], axis=1)  # (n, d_model)
    return Embedding(x, n_pos, d_content // 2, tuple(columns))


def _word_angles(token: str, count: int, seed: int) -> np.ndarray:
    """`count` angles in [0, 2 pi) for one word, from a generator keyed by (seed, the word's text)."""
    rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, zlib.crc32(token.encode("utf-8"))])
    return rng.uniform(0.0, 2 * np.pi, count)


def shift_rotation(omega: float, shift: int) -> np.ndarray:
    """(2, 2) matrix R with [cos a, sin a] @ R = [cos(a - shift*omega), sin(a - shift*omega)]."""
    c, s = np.cos(shift * omega), np.sin(shift * omega)
    return np.array([[c, -s], [s, c]])


def positional_margin(omegas, deltas) -> float:
    """How much sum_k cos(w_k * 0) exceeds sum_k cos(w_k * delta) for every delta != 0 in `deltas`.

    The logit gap, per unit of c, between the position a positional head aims at and its runner-up.
    """
    omegas = np.asarray(omegas, dtype=float)
    others = [np.cos(omegas * d).sum() for d in deltas if d != 0]
    return float(len(omegas) - max(others)) if others else float(len(omegas))


def best_position_pairs(n_available: int, count: int, deltas) -> tuple[int, float]:
    """(first pair, margin) of the `count` consecutive positional pairs that best separate delta = 0
    from every other delta in `deltas`: the fastest sinusoids that do not yet repeat within them."""
    windows = [
        (start, positional_margin(position_frequencies(n_available)[start : start + count], deltas))
        for start in range(n_available - count + 1)
    ]
    return max(windows, key=lambda w: w[1])


@dataclass(frozen=True)
class HeadWeights:
    """Projections of multi-head attention. Shapes: w_* (d_model, d_model), b_q (d_model,)."""

    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    w_o: np.ndarray
    b_q: np.ndarray
    presets: tuple[str, ...]


def preset_problem(preset: str, d_head: int, embedding: Embedding) -> str | None:
    """Why `preset` cannot be built in a head of `d_head` columns over `embedding`, or None if it can."""
    if preset not in PRESETS:
        return f"unknown preset {preset!r}; expected one of {PRESETS}"
    if d_head < MIN_D_HEAD[preset]:
        return tr(
            "'{preset}' needs at least {columns} columns per head (d_head = {d_head}): "
            "fewer heads, or a larger d_model",
            preset=tr(PRESET_LABELS[preset]),
            columns=MIN_D_HEAD[preset],
            d_head=d_head,
        )
    if preset == "similar" and embedding.n_content_pairs == 0:
        return tr("'most similar' needs at least 2 content columns in X: a larger d_model")
    return None


def buildable_presets(presets, d_head: int, embedding: Embedding) -> tuple[tuple[str, ...], tuple[str | None, ...]]:
    """The presets with each one that cannot be built in its head replaced by "random", and per head why
    it was replaced (None where the preset is kept). See `preset_problem`."""
    problems = tuple(preset_problem(p, d_head, embedding) for p in presets)
    return tuple("random" if why else p for p, why in zip(presets, problems)), problems


def preset_bullets(causal: bool) -> str:
    """The presets as the page lists them (Markdown bullets), each said as it behaves with the mask as it is."""
    if causal:
        uniform = tr(
            "- **uniform**: W_Q = W_K = 0, every score 0; the causal mask leaves row i its i + 1 keys, so each of "
            "them gets 1/(i + 1)."
        )
        similar = tr(
            "- **most similar word**: q and k read only the word columns (as many as the head has): a word attends "
            "to the words whose columns are most like its own: first of all itself, and every copy of itself at or "
            "before it equally (repeat a word on the Playground to see it), but also other words that happen to look "
            "alike in those few columns."
        )
    else:
        uniform = tr("- **uniform**: W_Q = W_K = 0, every score 0, so every weight is 1/n.")
        similar = tr(
            "- **most similar word**: q and k read only the word columns (as many as the head has): a word attends "
            "to the words whose columns are most like its own: first of all itself, and every copy of itself "
            "equally (repeat a word on the Playground to see it), but also other words that happen to look alike "
            "in those few columns."
        )
    return "\n".join(
        (
            tr(
                "- **previous token**: q_i is position i rotated back by one step, k_j is position j: the dot product "
                "is largest at j = i − 1 (for every row but the first, which has no previous token)."
            ),
            tr("- **first token**: every query is the position-0 vector (from the query bias b_Q): largest at j = 0."),
            tr("- **itself**: q_i and k_j are positions i and j: largest at j = i, even for a repeated word."),
            uniform,
            similar,
            tr("- **random**: seeded random columns, like an untrained model."),
        )
    )


def head_library_weights(embedding: Embedding, presets, seed: int = 0) -> HeadWeights:
    """W_Q, W_K (and b_Q) with head i built by presets[i]; W_V, W_O and "random" heads drawn from `seed`.

    Shapes: -> every w (d_model, d_model), b_q (d_model,). Raises ValueError if the number of presets
    does not divide d_model or a preset does not fit its head (see `preset_problem`).
    """
    presets = tuple(presets)
    d_model = embedding.x.shape[1]
    d_head = check_heads(d_model, len(presets))
    rng = np.random.default_rng(seed)
    w_q, w_k, w_v, w_o = (rng.standard_normal((d_model, d_model)) / np.sqrt(d_model) for _ in range(4))
    w_q, w_k = RANDOM_GAIN * w_q, RANDOM_GAIN * w_k
    b_q = np.zeros(d_model)
    for h, preset in enumerate(presets):
        problem = preset_problem(preset, d_head, embedding)
        if problem:
            raise ValueError(f"head {h + 1}: {problem}")
        if preset != "random":
            cols = slice(h * d_head, (h + 1) * d_head)
            w_q[:, cols], w_k[:, cols], b_q[cols] = _preset_head(preset, embedding, d_head)
    return HeadWeights(w_q, w_k, w_v, w_o, b_q, presets)


def _preset_head(preset: str, emb: Embedding, d_head: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One head's (W_Q columns (d_model, d_head), W_K columns (d_model, d_head), b_Q part (d_head,))."""
    d_model = emb.x.shape[1]
    a_q, a_k, b = np.zeros((d_model, d_head)), np.zeros((d_model, d_head)), np.zeros(d_head)
    root = np.sqrt(d_head)  # undo the 1/sqrt(d_head) scaling, so the gap is LOGIT_GAP when scaled
    n, n_pairs = emb.x.shape[0], emb.n_position_pairs
    if preset in ("previous", "self"):
        shift = 1 if preset == "previous" else 0
        deltas = range(-(n - 1) + shift, n + shift)  # every j - (i - shift) with i, j in 0..n-1
        start, margin = best_position_pairs(n_pairs, min(n_pairs, d_head // 2), deltas)
        c = LOGIT_GAP * root / margin
        for k in range(min(n_pairs, d_head // 2)):
            rows, cols = slice(2 * (start + k), 2 * (start + k) + 2), slice(2 * k, 2 * k + 2)
            omega = position_frequencies(n_pairs)[start + k]
            a_q[rows, cols] = c * shift_rotation(omega, shift)  # q_i = c p_{i - shift}
            a_k[rows, cols] = np.eye(2)  # k_j = p_j
    elif preset == "first":
        count = max(1, min(n_pairs, d_head // 2))
        start, margin = best_position_pairs(n_pairs, count, range(1, n))  # q = p_0, so delta = j
        c = LOGIT_GAP * root / margin
        for k in range(count):
            row = 2 * (start + k)
            b[2 * k] = c  # q_i = c (cos 0, sin 0) = c p_0 for every i
            a_k[row, 2 * k] = 1.0
            if 2 * k + 1 < d_head:
                a_k[row + 1, 2 * k + 1] = 1.0
    elif preset == "similar":
        pairs = min(emb.n_content_pairs, d_head // 2)
        rows = slice(emb.content_start, emb.content_start + 2 * pairs)
        c = SIMILARITY_SHARPNESS * root / pairs  # each pair adds a cosine: divide by pairs for the mean
        a_q[rows, : 2 * pairs] = c * np.eye(2 * pairs)  # q_i = c e_{t_i}
        a_k[rows, : 2 * pairs] = np.eye(2 * pairs)  # k_j = e_{t_j}
    return a_q, a_k, b  # "uniform": all zero, every score 0


@dataclass(frozen=True)
class HeadSummary:
    """What one head's weights look like. Entropy in bits; distance in positions."""

    entropy_bits: float  # mean over rows of -sum_j w log2 w
    normalised_entropy: float  # mean over rows of H_i / log2(number of keys row i may see), in [0, 1]
    mean_distance: float  # mean over rows of sum_j w_ij |i - j|
    pattern: str  # "previous", "first", "self", "uniform", "same word" or "mixed"
    share: float  # the share of the weight that fits `pattern` (1.0 for uniform: how flat)

    @property
    def looks(self) -> str:
        """What the pattern looks like, in a few words: "previous (93%)", or "no single pattern"."""
        if self.pattern == "mixed":
            return tr("no single pattern")
        pattern = tr(PATTERN_LABELS[self.pattern]) if self.pattern in PATTERN_LABELS else self.pattern
        return tr("{pattern} ({share})", pattern=pattern, share=num(self.share, ".0%"))

    @property
    def caption(self) -> str:
        """The head's summary in one line, in the session's language (read when shown, never cached)."""
        return tr(
            "{looks} · H = {entropy} bits ({share} of max) · mean |i−j| = {distance}",
            looks=self.looks,
            entropy=num(self.entropy_bits, ".2f"),
            share=num(self.normalised_entropy, ".0%"),
            distance=num(self.mean_distance, ".2f"),
        )


def summarise_head(weights, causal: bool = False, tokens=None) -> HeadSummary:
    """Entropy, mean distance from the diagonal and the best-fitting pattern of one head's weights.

    Shapes: weights (n, n), rows sum to 1. With `causal`, row i can see i + 1 keys (its maximum
    entropy is log2(i + 1)); `tokens` (n labels) lets repeated words count as "same word".
    """
    w = as_real_array(weights, "weights").astype(np.float64)
    n, m = w.shape if w.ndim == 2 else (0, -1)
    if n != m or n == 0:
        raise ValueError(f"weights has shape {w.shape}; expected a square (n, n) matrix with n >= 1")
    i, j = np.indices((n, n))
    row_entropy = -np.sum(np.where(w > 0, w * np.log2(np.where(w > 0, w, 1.0)), 0.0), axis=1)  # (n,)
    visible = np.arange(1, n + 1) if causal else np.full(n, n)  # (n,) keys each row may see
    wide = visible > 1
    normalised = float(np.mean(row_entropy[wide] / np.log2(visible[wide]))) if wide.any() else 0.0
    distance = float(np.mean(np.sum(w * np.abs(i - j), axis=1)))
    later = slice(1, None)  # row 0 has no previous token and its first token is itself
    shares = {"self": float(np.mean(np.diag(w)))}
    if n > 1:
        shares["previous"] = float(np.mean(np.diag(w, -1)))
        shares["first"] = float(np.mean(w[later, 0]))
    pattern, share = max(shares.items(), key=lambda kv: kv[1])
    if tokens is not None and len(set(tokens)) < n:  # repeated words: is weight shared between copies?
        same = np.array([[a == b for b in tokens] for a in tokens])  # (n, n)
        same_share = float(np.mean(np.sum(w * same, axis=1)))
        if same_share > max(share, shares["self"] + 0.1):
            pattern, share = "same word", same_share
    if normalised > 0.95:  # flat rows: no position stands out, whatever the shares say (n = 2)
        pattern, share = "uniform", normalised
    elif share <= 0.5:
        pattern = "mixed"
    return HeadSummary(float(np.mean(row_entropy)), normalised, distance, pattern, share)


def entropy_range(causal: bool, n: int) -> str:
    """The entropy of a row, from one key to spread evenly, for the keys the mask lets a row see (n positions)."""
    if n == 1:
        return tr("0 bits: one key, which gets all the weight")
    if causal:
        return tr(
            "0 bits: all weight on one key; log₂(i + 1) bits for row i, which the causal mask lets see i + 1 keys: "
            "spread evenly"
        )
    return tr(
        "0 bits: all weight on one key; log₂ {n} = {bits} bits: spread evenly over the {n} keys",
        n=n,
        bits=num(math.log2(n), ".2f"),
    )


def summary_table(presets, summaries) -> dict[str, list]:
    """The page's table of the heads, by column: each head's preset, caption, entropy and mean distance (rounded to
    3 decimals). `summaries`: one HeadSummary per preset, in the same order."""
    return {
        tr("head"): [h + 1 for h in range(len(presets))],
        # Translators: a table's column header: the preset a head is built by
        tr("preset"): [tr(PRESET_LABELS[p]) for p in presets],
        # Translators: a table's column header: a head's one-line summary
        tr("caption"): [s.caption for s in summaries],
        tr("entropy (bits)"): [round(s.entropy_bits, 3) for s in summaries],
        tr("entropy / max"): [round(s.normalised_entropy, 3) for s in summaries],
        tr("mean |i−j|"): [round(s.mean_distance, 3) for s in summaries],
    }


# ---------------------------------------------------------------- stacks of blocks


def stack_params(d_model: int, d_ff: int, n_blocks: int, seed: int = 0) -> tuple[BlockParams, ...]:
    """`n_blocks` random blocks drawn one after another from one generator (block k is the same for any N)."""
    n_blocks = check_positive_int(n_blocks, "n_blocks")
    rng = np.random.default_rng(seed)
    return tuple(BlockParams.random(d_model, d_ff, rng) for _ in range(n_blocks))


@dataclass(frozen=True)
class StackRun:
    """A stack of blocks applied in turn. Shapes: states (N + 1, n, d_model): the input, then each output."""

    states: np.ndarray
    traces: tuple[BlockTrace, ...]

    @property
    def residual_norms(self) -> np.ndarray:
        """Mean over positions of |x_i| after 0, 1, ..., N blocks. Shapes: -> (N + 1,)."""
        return np.linalg.norm(self.states, axis=-1).mean(axis=-1)


def run_stack(
    x, blocks, n_heads: int, *, causal: bool = False, activation: str = "relu", norm: str = "post"
) -> StackRun:
    """Apply `blocks` one after another to x. Shapes: x (n, d_model) -> states (N + 1, n, d_model)."""
    states, traces = [as_real_array(x, "x")], []
    for params in blocks:
        out, trace = transformer_block(states[-1], params, n_heads, causal=causal, activation=activation, norm=norm)
        states.append(out)  # (n, d_model): the same shape as the input, so the next block accepts it
        traces.append(trace)
    return StackRun(np.stack(states), tuple(traces))


def residual_sources(trace: BlockTrace) -> dict[str, str]:
    """For each residual-add step, the earlier step it adds back (the skip connection), read off the values.

    A residual step r directly follows its branch b (attention, or the feed-forward output), and
    r = s + b for some earlier step s: s is found as the latest earlier step equal to r - b.
    """
    sources: dict[str, str] = {}
    steps = trace.steps
    for k, step in enumerate(steps):
        if not step.name.startswith("residual") or k < 2:
            continue
        skipped = step.value - steps[k - 1].value  # (..., n, d_model)
        for earlier in reversed(steps[: k - 1]):
            if earlier.shape == step.shape and np.allclose(earlier.value, skipped, rtol=1e-6, atol=1e-9):
                sources[step.name] = earlier.name
                break
    return sources
