"""Where is position? Order is invisible to attention; four ways to add it; masks beyond causal.

The toy the page runs: each word becomes a vector drawn from a generator keyed by its text (the same word
always gets the same vector, wherever it stands), and one attention head with seeded W_Q, W_K, W_V reads
them. Without position information, shuffling the words only shuffles the outputs:

    Attention(P Q, P K, P V) = softmax(P Q Kᵀ Pᵀ / √d) P V = P softmax(Q Kᵀ / √d) Pᵀ P V = P Attention(Q, K, V)

for any permutation matrix P (Pᵀ P = I, and a row-wise softmax commutes with permuting rows and columns).
The check undoes the shuffle on the outputs and measures the largest difference: 0, or rounding (the sums
run in another order), without positions; far from 0 with any of the four methods.

The learned absolute table is all-MiniLM-L6-v2's own (attention.pretrained): its first layer's heads read
LN(E_word + E_pos + E_type) and can be run with and without E_pos.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attention.checks import check_positive_int
from attention.dot_product import AttentionSteps, PaddedAttention, attention_steps, padded_attention
from attention.masks import sliding_window_mask
from attention.norms import norm as layer_norm_of
from attention.positions import alibi_bias, alibi_slopes, frequencies, rope, sinusoidal_encoding

SHUFFLE_LATEX = (
    r"\mathrm{Attention}(PQ,\ PK,\ PV) = \mathrm{softmax}\!\left(\frac{P Q K^\top P^\top}{\sqrt{d}}\right) P V"
    r" = P\,\mathrm{Attention}(Q, K, V)"
)
SHIFT_LATEX = (
    r"PE_{p+k} = PE_p\, M_k,\qquad M_k = \mathrm{diag}\!\left(\begin{pmatrix} \cos k\theta_i & -\sin k\theta_i \\"
    r" \sin k\theta_i & \cos k\theta_i \end{pmatrix}\right)_{i < d/2}"
)
REACH_LATEX = (
    r"i - L\,(w - 1) \le j \le i:\quad L\,(w-1) + 1 \text{ positions after } L \text{ layers}"
    r"\quad (\approx L \cdot w \text{ for a wide window})"
)

METHODS = ("none", "learned", "sinusoidal", "rope", "alibi")
TOY_METHODS = ("none", "sinusoidal", "rope", "alibi")  # the ways the toy head runs: the learned table needs a model
METHOD_LABELS = {
    "none": "no position information",
    "learned": "learned absolute (MiniLM's table)",
    "sinusoidal": "sinusoidal (added to X)",
    "rope": "RoPE (rotates q and k)",
    "alibi": "ALiBi (bias on the scores)",
}
ROUNDING = 1e-12  # relative: a difference this small is the order of the sums, not the positions
ROPE_ROUNDING = 1e-9  # relative: the angles p·θ keep fewer digits as p grows (measured 3e-13 at p = 10^4)
DEFAULT_TEXT = "the dog chased the cat up the tall tree"
MAX_WORDS = 16
MAX_WORD_CHARS = 24
HEAD_GAIN = 1.5  # W ~ N(0, gain² / d): scores with a spread of about gain², a pattern worth looking at


# ---------------------------------------------------------------- the toy: words, vectors, one head


def parse_words(text: str) -> tuple[tuple[str, ...], str | None]:
    """The words of `text` (split at spaces), and what is wrong with them (None if nothing)."""
    words = tuple(str(text).split())
    if len(words) < 2:
        return words, f"type at least 2 words (found {len(words)})"
    if len(words) > MAX_WORDS:
        return words, f"this page takes at most {MAX_WORDS} words (found {len(words)})"
    long = next((w for w in words if len(w) > MAX_WORD_CHARS), None)
    if long is not None:
        return words, f"a word has {len(long)} characters; at most {MAX_WORD_CHARS} per word"
    return words, None


def word_count(values) -> int:
    """How many words the page's text (`values["text"]`) has; the default text's count while it is unusable
    (the page stops then). A bound of the padding lengths."""
    words, problem = parse_words(values["text"])
    return len(words) if problem is None else len(parse_words(DEFAULT_TEXT)[0])


def half_the_words(values) -> int:
    """The second padded sequence's default length: about half the words, at least one."""
    return max(1, word_count(values) // 2)


def word_vectors(words, d_model: int, seed: int = 0) -> np.ndarray:
    """One vector per word, drawn from a generator keyed by (seed, the word's text): no position in it.

    Shapes: words n strings -> (n, d_model). A repeated word gets the same row every time.
    """
    d_model = check_positive_int(d_model, "d_model")
    rows = [np.random.default_rng([int(seed) & 0xFFFFFFFF, zlib.crc32(str(w).encode())]) for w in words]
    return np.stack([rng.standard_normal(d_model) for rng in rows])  # (n, d_model)


@dataclass(frozen=True)
class ToyHead:
    """One attention head's projections. Shapes: w_q, w_k, w_v (d_model, d_model)."""

    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray


def toy_head(d_model: int, seed: int = 0) -> ToyHead:
    """W_Q, W_K, W_V ~ N(0, HEAD_GAIN² / d_model), drawn from `seed` (the same for every sentence)."""
    d_model = check_positive_int(d_model, "d_model")
    rng = np.random.default_rng(seed)
    w_q, w_k, w_v = (HEAD_GAIN * rng.standard_normal((d_model, d_model)) / np.sqrt(d_model) for _ in range(3))
    return ToyHead(w_q, w_k, w_v)


@dataclass(frozen=True)
class Toy:
    """The page's example, which every section reads: the words, their vectors and the head that reads them.
    Shapes: words n strings; x (n, d_model); head's matrices (d_model, d_model)."""

    words: tuple[str, ...]
    d_model: int
    seed: int
    x: np.ndarray
    head: ToyHead

    @classmethod
    def build(cls, words, d_model: int, seed: int = 0) -> Toy:
        """The word vectors and the toy head for `words`, drawn from `seed`."""
        words = tuple(words)
        return cls(words, d_model, seed, word_vectors(words, d_model, seed), toy_head(d_model, seed))


def attend(
    x, head: ToyHead, method: str = "none", *, table=None, alibi_heads: int = 8, alibi_head: int = 0, causal=False
) -> AttentionSteps:
    """The toy head on X, with position information added by `method` (one of METHODS).

    Shapes: x (n, d_model), table (>= n, d_model) for "learned" -> AttentionSteps with (n, n) weights.
    "alibi" uses the bias of head `alibi_head` (from 0) of `alibi_heads`, as `alibi_bias` gives it: without
    the causal mask only the past is penalised. (A penalty on |i - j| on both sides would not tell a
    sentence from its reverse: reversing keeps every distance.)
    """
    x = np.asarray(x, dtype=np.float64)
    n, d = x.shape
    if method == "learned":
        if table is None or len(table) < n:
            raise ValueError(f"'learned' needs a position table of at least {n} rows")
        x = x + np.asarray(table, dtype=np.float64)[:n, :d]  # (n, d): row p gets position p's vector
    elif method == "sinusoidal":
        x = x + sinusoidal_encoding(n, d)  # (n, d)
    elif method not in METHODS:
        raise ValueError(f"method={method!r}; expected one of {METHODS}")
    q, k, v = x @ head.w_q, x @ head.w_k, x @ head.w_v  # (n, d) each
    bias = None
    if method == "rope":
        q, k = rope(q), rope(k)  # (n, d): rotated by position, the values are not
    elif method == "alibi":
        bias = alibi_bias(n, alibi_heads)[alibi_head]  # (n, n): -m (i - j) below the diagonal, 0 above
    return attention_steps(q, k, v, causal=causal, bias=bias)


def toy_queries_keys(x, head: ToyHead) -> tuple[np.ndarray, np.ndarray]:
    """The toy head's queries and keys before any rotation. Shapes: x (n, d_model) -> q, k (n, d_model)."""
    x = np.asarray(x, dtype=np.float64)
    return x @ head.w_q, x @ head.w_k  # (n, d_model) each


def methods_weights(x, head: ToyHead, alibi_heads: int = 8) -> np.ndarray:
    """The toy head's weights with each of TOY_METHODS, without the causal mask (ALiBi: head 1 of `alibi_heads`).

    Shapes: x (n, d_model) -> (len(TOY_METHODS), n, n).
    """
    return np.stack([attend(x, head, m, alibi_heads=alibi_heads).weights for m in TOY_METHODS])


def alibi_head_weights(x, head: ToyHead, n_heads: int) -> np.ndarray:
    """The toy head's scores plus each ALiBi head's penalty, under the causal mask: one weights matrix per head.

    Shapes: x (n, d_model) -> (n_heads, n, n).
    """
    return np.stack(
        [attend(x, head, "alibi", alibi_heads=n_heads, alibi_head=h, causal=True).weights for h in range(n_heads)]
    )


# ---------------------------------------------------------------- order is invisible: the shuffle check


def permutation(n: int, shuffle: int) -> np.ndarray:
    """The shuffle number `shuffle` of n positions: 0 keeps the order, any other number a seeded permutation
    that moves at least one position (for n >= 2). Shapes: -> (n,), shuffled[i] = original[perm[i]]."""
    n = check_positive_int(n, "n")
    if shuffle == 0 or n == 1:
        return np.arange(n)
    perm = np.random.default_rng(shuffle).permutation(n)
    return np.roll(perm, 1) if np.array_equal(perm, np.arange(n)) else perm


def apply_permutation(items, perm) -> list:
    """`items` in the order `perm` gives: result[i] = items[perm[i]]."""
    return [items[i] for i in perm]


def is_original_order(perm) -> bool:
    """Whether `perm` leaves every position where it was."""
    perm = np.asarray(perm)
    return bool(np.array_equal(perm, np.arange(len(perm))))


@dataclass(frozen=True)
class ShuffleCheck:
    """Attention on the original order and on the shuffled order, and how far the outputs differ once the
    shuffle is undone. Shapes: perm (n,); undone (n, d_v) = the shuffled run's outputs put back in order."""

    perm: np.ndarray
    before: AttentionSteps
    after: AttentionSteps
    undone: np.ndarray
    max_diff: float
    same_input: bool = False  # the shuffle only swapped equal tokens: the model read the very same input

    @property
    def tolerance(self) -> float:
        return ROUNDING * max(1.0, float(np.max(np.abs(self.before.output))))

    @property
    def passed(self) -> bool:
        """Equal up to rounding: the outputs were only shuffled."""
        return self.max_diff <= self.tolerance

    @property
    def outcome(self) -> str:
        """What the check shows: "unchanged" (the input did not change, so there is nothing to see), "only
        shuffled" or "order was seen"."""
        if self.same_input:
            return "unchanged"
        return "only shuffled" if self.passed else "order was seen"


OUTCOME_HEADINGS = {
    "unchanged": "the same input",
    "only shuffled": "the same weights, moved",
    "order was seen": "changed, not just moved",
}
OUTCOME_CELLS = {
    "unchanged": "– nothing moved",
    "only shuffled": "✓ only shuffled",
    "order was seen": "✗ order was seen",
}


def shuffle_verdict(check: ShuffleCheck, what: str) -> str:
    """The check's outcome as the sentence the page shows beside its two heatmaps (`what`: the method)."""
    size = diff_text(check.max_diff)
    if check.outcome == "unchanged":
        return (
            f"{what}: the shuffled tokens are the original ones in the original order (at most, equal tokens traded "
            "places), so the input and the weights are the same as before: nothing to compare. Shuffle again."
        )
    if check.passed:
        detail = "exactly 0" if check.max_diff == 0 else f"{size}, rounding: the sums ran in another order"
        return f"{what}: after undoing the shuffle, the outputs are the same ({detail})."
    return f"{what}: after undoing the shuffle, the outputs differ by up to **{size}**."


def diff_text(d: float) -> str:
    """A difference as text that never rounds a non-zero to 0."""
    return "0" if d == 0.0 else f"{d:.2g}"


def compare_shuffled(
    before: AttentionSteps, after: AttentionSteps, perm: np.ndarray, same_input: bool = False
) -> ShuffleCheck:
    """Undo `perm` on the shuffled run's outputs and compare with the original run's."""
    undone = np.empty_like(after.output)
    undone[perm] = after.output  # shuffled position i held original position perm[i]
    return ShuffleCheck(perm, before, after, undone, float(np.max(np.abs(undone - before.output))), same_input)


def shuffle_check(x, head: ToyHead, perm, method: str = "none", **kwargs) -> ShuffleCheck:
    """Run the toy head on X and on the shuffled X[perm] (positions are added after shuffling, as a model
    would: position p is wherever a word now stands), and compare. kwargs as `attend`."""
    x, perm = np.asarray(x, dtype=np.float64), np.asarray(perm)
    before, after = attend(x, head, method, **kwargs), attend(x[perm], head, method, **kwargs)
    return compare_shuffled(before, after, perm, same_input=bool(np.array_equal(x, x[perm])))


def toy_shuffle_checks(x, head: ToyHead, perm, alibi_heads: int = 8) -> dict[str, ShuffleCheck]:
    """The shuffle check of the toy head with each of TOY_METHODS (ALiBi: head 1 of `alibi_heads`, unmasked)."""
    return {m: shuffle_check(x, head, perm, m, alibi_heads=alibi_heads) for m in TOY_METHODS}


CheckRow = tuple[str, str, ShuffleCheck]  # (model, position information, its check): a row of the check table


def check_rows(toy: dict[str, ShuffleCheck], real: Sequence[ShuffleCheck] = (), real_name: str = "") -> list[CheckRow]:
    """The check table's rows: the toy head with each of TOY_METHODS, then `real` (a trained model's head
    `real_name` without and with its learned table), if given."""
    rows = [("toy head", METHOD_LABELS[m], toy[m]) for m in TOY_METHODS]
    rows += [(real_name, METHOD_LABELS[m], check) for m, check in zip(("none", "learned"), real)]
    return rows


def check_table(rows: Sequence[CheckRow]) -> dict[str, list[str]]:
    """The check table's columns: what each row ran, the largest difference after undoing the shuffle ("–"
    when the input did not change: nothing to compare) and the outcome."""
    return {
        "model": [model for model, _, _ in rows],
        "position information": [label for _, label, _ in rows],
        "largest difference after undoing the shuffle": [
            "–" if check.outcome == "unchanged" else diff_text(check.max_diff) for _, _, check in rows
        ],
        "check": [OUTCOME_CELLS[check.outcome] for _, _, check in rows],
    }


def rounding_bound(rows: Sequence[CheckRow]) -> float:
    """The largest difference among the checks that came out "only shuffled" (0 if none did): the rounding
    that the sums over keys run in another order make, which the page quotes under the table."""
    return max((check.max_diff for _, _, check in rows if check.outcome == "only shuffled"), default=0.0)


# ---------------------------------------------------------------- sinusoidal: a shift is a rotation


def shift_matrix(k: int, d: int, base: float = 10000.0) -> np.ndarray:
    """M_k with PE[p + k] = PE[p] @ M_k for every p: one 2×2 rotation by k θ_i per pair (sin, cos).

    Shapes: -> (d, d), block diagonal, orthogonal; it depends on k, never on p.
    """
    m = np.zeros((d, d))
    for i, theta in enumerate(frequencies(d, base)):
        c, s = np.cos(k * theta), np.sin(k * theta)
        m[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[c, -s], [s, c]]  # [sin a, cos a] @ this = [sin(a+b), cos(a+b)]
    return m


def shift_error(n: int, d: int, k: int, base: float = 10000.0) -> float:
    """The largest |PE[p + k] - PE[p] M_k| over positions p = 0..n-1 (rounding if the shift is a rotation)."""
    pe = sinusoidal_encoding(n + k, d, base)  # (n + k, d)
    return float(np.max(np.abs(pe[k:] - pe[:n] @ shift_matrix(k, d, base))))


def row_length(d: int) -> float:
    """The length of every row of the sinusoidal table of width d: d/2 pairs (sin, cos), each of length 1."""
    return float(np.sqrt(d / 2))


SHIFT_ROUNDING = 1e-11  # measured: 1e-14 at d = 256, k = 64


def shift_sentence(n: int, d: int, k: int) -> tuple[bool, str]:
    """Whether PE[p + k] = PE[p] M_k for p = 0..n-1 up to rounding, and the sentence saying so."""
    error = shift_error(n, d, k)
    if error > SHIFT_ROUNDING:
        return False, f"PE[p + {k}] and PE[p] M_{k} differ by {diff_text(error)}."
    within = f"to within {diff_text(error)} (rounding), with d = {d}."
    return True, f"For every p from 0 to {n - 1}, PE[p + {k}] = PE[p] M_{k} {within}"


# ---------------------------------------------------------------- RoPE: scores depend on the offset only


@dataclass(frozen=True)
class RopeOffsetCheck:
    """RoPE scores with positions 0..n-1 and with every position moved by `offset`.

    Shapes: scores, moved (n, n); max_diff and norm_diff are rounding if RoPE does what it says."""

    offset: int
    scores: np.ndarray
    moved: np.ndarray
    max_diff: float
    norm_diff: float  # largest change of a vector's length made by the rotation

    @property
    def tolerance(self) -> float:
        return ROPE_ROUNDING * max(1.0, float(np.max(np.abs(self.scores))))

    @property
    def passed(self) -> bool:
        """The scores did not move, up to rounding: they depend on the offset m - n only."""
        return self.max_diff <= self.tolerance

    def sentence(self) -> str:
        """The check's outcome, as the page says it."""
        n = self.scores.shape[0]
        if not self.passed:
            return f"The scores moved by {diff_text(self.max_diff)} when every position moved."
        lengths = (
            "no vector's length changed at all"
            if self.norm_diff == 0
            else f"no vector's length moved by more than {diff_text(self.norm_diff)} (rounding)"
        )
        return (
            f"Positions 0…{n - 1} and {self.offset}…{self.offset + n - 1} give the same scores: they differ by at "
            f"most {diff_text(self.max_diff)} (rounding), and {lengths}."
        )


def rope_offset_check(q, k, offset: int) -> RopeOffsetCheck:
    """Rotate q and k at positions 0..n-1, then at offset..offset+n-1, and compare their scores q_m · k_n."""
    q, k = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    n = q.shape[0]
    scores = rope(q) @ rope(k).T  # (n, n)
    moved_positions = np.arange(n) + offset
    moved = rope(q, moved_positions) @ rope(k, moved_positions).T  # (n, n)
    norm_diff = float(np.max(np.abs(np.linalg.norm(rope(q, moved_positions), axis=-1) - np.linalg.norm(q, axis=-1))))
    return RopeOffsetCheck(offset, scores, moved, float(np.max(np.abs(moved - scores))), norm_diff)


def rope_score_by_offset(q_vec, k_vec, offsets) -> np.ndarray:
    """rope(q at position Δ) · rope(k at position 0) for each offset Δ: the score as a function of distance.

    Shapes: q_vec, k_vec (d,), offsets (m,) whole numbers -> (m,).
    """
    offsets = np.asarray(offsets)
    q_rot = rope(np.broadcast_to(q_vec, (len(offsets), len(q_vec))), offsets)  # (m, d): q at each position Δ
    return q_rot @ rope(np.asarray(k_vec)[None, :])[0]  # (m,)


# ---------------------------------------------------------------- a window per layer


def window_reach(n: int, window: int, layers: int) -> np.ndarray:
    """For each query i and key j, the first layer (1..layers) by which j's information can reach i through
    a stack of sliding-window layers, or 0 if it cannot within `layers`.

    Shapes: -> (n, n) ints. Layer 1 is the mask itself; layer l adds every path of l hops.
    """
    layers = check_positive_int(layers, "layers")
    mask = sliding_window_mask(n, window).astype(np.int64)  # (n, n)
    first = np.zeros((n, n), np.int64)
    reach = np.eye(n, dtype=np.int64)
    for layer in range(1, layers + 1):
        reach = np.minimum(reach @ mask, 1)  # (n, n): reachable in `layer` hops (each hop may stay in place)
        first[(reach > 0) & (first == 0)] = layer
    return first


def last_query_reach(first: np.ndarray) -> int:
    """How many keys the last query has heard from, given `window_reach`'s table. Shapes: first (n, n)."""
    return int((np.asarray(first)[-1] > 0).sum())


def reach_span(window: int, layers: int) -> int:
    """How many positions (itself included) a query has heard from after `layers` window layers."""
    return layers * (window - 1) + 1


def reach_sentence(n: int, window: int, layers: int, reached: int) -> tuple[bool, str]:
    """Whether the last query heard from as many positions as the formula says, and the sentence saying so."""
    span = reach_span(window, layers)
    if reached != min(n, span):
        return False, f"The last query heard from {reached} positions, not {min(n, span)}."
    formula = f"L(w − 1) + 1 = {layers}·{window - 1} + 1 = {span}"
    if span > n:
        rest = f", capped by the {n} positions there are"
    elif layers == 1 or window == 1:
        rest = ""  # one layer: L(w − 1) + 1 = w = L·w; a window of 1: nothing travels, and the sentence says 1
    else:
        rest = (
            f"; the round figure L·w = {layers * window} counts {layers - 1} too many (a layer carries information "
            "w − 1 positions, not w), close only when w is large"
        )
    positions = "position" if reached == 1 else "positions"
    return True, f"The last query has heard from {reached} {positions}: {formula}{rest}."


MISTRAL_WINDOW, MISTRAL_LAYERS = 4096, 32  # Jiang et al. 2023, Mistral 7B: its sliding window and its depth


def mistral_sentence() -> str:
    """Mistral 7B's reach through its sliding windows, by the formula above (the paper says about 131K)."""
    return (
        f"Mistral 7B (Jiang et al. 2023), for instance, uses w = {MISTRAL_WINDOW} with {MISTRAL_LAYERS} layers: "
        f"{reach_span(MISTRAL_WINDOW, MISTRAL_LAYERS):,} positions, from {MISTRAL_WINDOW:,} per layer (the paper "
        f"rounds L·w = {MISTRAL_LAYERS * MISTRAL_WINDOW:,} to 'approximately 131K')."
    )


# ---------------------------------------------------------------- learned absolute: MiniLM's table


def position_similarity(table, n: int) -> np.ndarray:
    """Cosine similarity of the first n rows of a position table. Shapes: table (N, d) -> (n, n)."""
    p = np.asarray(table[:n], dtype=np.float64)  # (n, d)
    unit = p / np.linalg.norm(p, axis=1, keepdims=True)
    return np.clip(unit @ unit.T, -1.0, 1.0)  # (n, n)


def cosine_by_distance(sims: np.ndarray, distance: int) -> float:
    """The mean cosine of positions p and p + distance over p >= 1 (position 0, where [CLS] stands, is unlike
    the rest). Shapes: sims (n, n), distance < n - 1."""
    return float(np.mean(np.diag(sims, distance)[1:]))


def ripple_peaks(sims: np.ndarray, up_to: int = 40) -> list[int]:
    """The distances (2 .. up_to) at which the mean cosine by distance rises to a local maximum: where the
    similarity of a learned table comes back. Shapes: sims (n, n)."""
    last = min(up_to, sims.shape[0] - 2)
    mean = {d: cosine_by_distance(sims, d) for d in range(1, last + 1)}
    return [d for d in range(2, last) if mean[d - 1] < mean[d] >= mean[d + 1]]


TABLE_DISTANCES = (1, 2, 3, 4, 5, 6, 7, 9, 12, 50, 100, 200, 300)  # the distances the page's table lists


@dataclass(frozen=True)
class TableReading:
    """What the page reads off the first n rows of a learned position table: the mean cosine at a few
    distances (rounded as shown), the length of position 0's vector beside the others' median, and where the
    similarity ripples back up."""

    distances: tuple[int, ...]
    mean_cosines: tuple[float, ...]
    norm_0: float
    norm_rest: float
    peaks: tuple[int, ...]

    def ripple_text(self) -> str:
        p = self.peaks
        return (
            f"the mean cosine rising again to a peak at distances {', '.join(map(str, p[:-1]))} and {p[-1]} "
            f"(about every {(p[-1] - p[0]) / (len(p) - 1):.0f} positions: the diagonal stripes)"
        )

    def fade_text(self) -> str:
        far = [(d, c) for d, c in zip(self.distances, self.mean_cosines) if d >= 100]
        if not far:
            return "show 128 positions or more to see it a hundred positions apart"
        return "mean cosine " + ", ".join(f"{c:.2f} at {d}" for d, c in far) + " positions apart"


def read_table(table, n: int) -> tuple[np.ndarray, TableReading]:
    """The cosine similarities of a position table's first n rows, and what the page reads off them.
    Shapes: table (N, d), n >= 32 -> (n, n) and the reading."""
    sims = position_similarity(table, n)
    distances = tuple(d for d in TABLE_DISTANCES if d < n - 1)
    norms = np.linalg.norm(np.asarray(table[:n], dtype=np.float64), axis=1)
    reading = TableReading(
        distances,
        tuple(round(cosine_by_distance(sims, d), 3) for d in distances),
        float(norms[0]),
        float(np.median(norms[1:])),
        tuple(ripple_peaks(sims)),
    )
    return sims, reading


@dataclass(frozen=True)
class Pieces:
    """MiniLM's tokens for a list of words: [CLS], each word's word pieces, [SEP].

    word_of[t] is the word token t comes from (-1 for [CLS] and [SEP])."""

    tokens: tuple[str, ...]
    ids: np.ndarray
    word_of: np.ndarray


def minilm_pieces(model, words) -> Pieces:
    """Tokenise each word on its own (as the tokenizer splits the whole sentence, at spaces), between [CLS]
    and [SEP], so that a shuffle of the words is a shuffle of blocks of tokens."""
    cls, sep = (model.tokenizer.token_to_id(t) for t in ("[CLS]", "[SEP]"))
    tokens, ids, word_of = ["[CLS]"], [cls], [-1]
    for w, word in enumerate(words):
        enc = model.tokenizer.encode(word, add_special_tokens=False)
        tokens += enc.tokens
        ids += enc.ids
        word_of += [w] * len(enc.ids)
    return Pieces(tuple(tokens + ["[SEP]"]), np.array(ids + [sep]), np.array(word_of + [-1]))


def minilm_head(model, ids, head: int, *, positions: bool = True) -> AttentionSteps:
    """Head `head` (from 0) of MiniLM's first layer on x_0 = LN(E_word + E_pos + E_type), or without E_pos.

    Shapes: ids (n,) -> AttentionSteps with (n, n) weights (float64, from the model's float32 weights).
    """
    ids = np.asarray(ids)
    x = model.word_embeddings[ids] + model.token_type_embedding  # (n, d_model)
    if positions:
        x = x + model.position_embeddings[: len(ids)]  # (n, d_model)
    x = layer_norm_of(x.astype(np.float64), model.embedding_ln_gamma, model.embedding_ln_beta, model.config.eps)
    block, d_head = model.layers[0], model.config.d_head
    cols = slice(head * d_head, (head + 1) * d_head)
    q, k, v = (
        x @ w[:, cols] + b[cols] for w, b in ((block.w_q, block.b_q), (block.w_k, block.b_k), (block.w_v, block.b_v))
    )
    return attention_steps(q, k, v)  # (n, d_head) each: the head's own columns


def previous_token_weight(weights) -> float:
    """The mean weight a query gives the token just before it (queries 1..n-1). Shapes: weights (n, n)."""
    return float(np.mean(np.diag(np.asarray(weights), -1)))


def minilm_shuffle_check(model, words, perm, head: int, *, positions: bool = True) -> ShuffleCheck:
    """The shuffle check on MiniLM's first layer: the words shuffled by `perm`, [CLS] and [SEP] kept in place."""
    words, perm = list(words), np.asarray(perm)
    before = minilm_pieces(model, words)
    after = minilm_pieces(model, apply_permutation(words, perm))
    blocks = [np.flatnonzero(before.word_of == w) for w in range(len(words))]  # each word's tokens, in order
    token_perm = np.concatenate([[0], *[blocks[w] for w in perm], [len(before.ids) - 1]])  # shuffled t <- original
    return compare_shuffled(
        minilm_head(model, before.ids, head, positions=positions),
        minilm_head(model, after.ids, head, positions=positions),
        token_perm,
        same_input=bool(np.array_equal(before.ids, after.ids)),  # e.g. two words the tokenizer reads as [UNK]
    )


UNK = "[UNK]"
WORD_PIECES = "word pieces (the tokenizer's units: a common word is one piece, a rarer one is split into several)"


def unknown_words(model, words) -> list[str]:
    """The words the tokenizer cannot read: each becomes the one token [UNK] (the vocabulary has no piece for
    it), so the model cannot tell them apart."""
    return [w for w in words if UNK in model.tokenizer.encode(w, add_special_tokens=False).tokens]


def unknown_note(model, model_name: str, words) -> str | None:
    """What [UNK] is, naming the words that became it (plain text: the page escapes it), or None if none did."""
    unknown = unknown_words(model, words)
    if not unknown:
        return None
    return (
        f"{UNK} is the tokenizer's unknown token: {model_name}'s vocabulary has no piece for {', '.join(unknown)}, "
        f"so each becomes {UNK} and the model cannot tell them apart."
    )


# ---------------------------------------------------------------- a padded batch


PAD = "[PAD]"


def padded_batch(sequences, d_model: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, list[list[str]]]:
    """Word vectors of several sequences in one array, padded with zero rows to the longest.

    Shapes: sequences B lists of words -> x (B, n, d_model), lengths (B,), labels (B lists of n strings,
    [PAD] after each sequence's end). What a padded row holds does not matter: the mask hides it.
    """
    lengths = np.array([len(words) for words in sequences])
    n = int(lengths.max())
    x = np.zeros((len(sequences), n, d_model))  # (B, n, d_model)
    labels = []
    for b, words in enumerate(sequences):
        x[b, : len(words)] = word_vectors(words, d_model, seed)
        labels.append([*map(str, words), *[PAD] * (n - len(words))])
    return x, lengths, labels


def padding_sequences(words, len_a: int, len_b: int) -> list[list[str]]:
    """The padded example's two sequences: the first `len_a` words and the last `len_b` words."""
    words = list(words)
    return [words[:len_a], words[len(words) - len_b :]]


def alibi_windows(n: int, n_heads: int) -> np.ndarray:
    """Each ALiBi head's weights when every score is equal (q = 0): the recency window its bias alone makes,
    under the causal mask. Shapes: -> (n_heads, n, n), row i of head h proportional to e^(-m_h (i - j)), j <= i."""
    zeros = np.zeros((n_heads, n, 1))  # (H, n, 1): q = k = 0, so every score q·k is 0
    return attention_steps(zeros, zeros, zeros, causal=True, bias=alibi_bias(n, n_heads)).weights  # (H, n, n)


@dataclass(frozen=True)
class PaddingCheck:
    """A padded batch run through the toy head, and what the page checks about it.

    Shapes: result as `padded_attention`'s; labels B lists of n strings; lengths (B,)."""

    result: PaddedAttention
    labels: list[list[str]]
    lengths: np.ndarray
    on_padding: float  # the largest weight any query gives a padded key: exactly 0 if the mask works
    alone_diff: float  # how far the real tokens' outputs are from each sequence run alone, unpadded
    finite: bool  # no NaN or inf anywhere in the weights and outputs

    @property
    def unused(self) -> int:
        """How many query rows are padding, reported as unused."""
        return int((~self.result.used).sum())

    @property
    def passed(self) -> bool:
        """Padded keys got exactly 0 and nothing is NaN or infinite."""
        return self.on_padding == 0.0 and self.finite

    def sentence(self) -> str:
        """The check's outcome, as the page says it."""
        if not self.passed:
            return f"A padded key got weight {self.on_padding:g}, or a value is not finite."
        alone = "exactly." if self.alone_diff == 0 else f"to within {diff_text(self.alone_diff)} (rounding)."
        return (
            f"Padded keys: largest weight exactly 0. NaN anywhere: none. Unused query rows: {self.unused}, "
            f"reported as 0. The real tokens' outputs equal each sequence run alone {alone}"
        )


def padding_check(sequences, head: ToyHead, d_model: int, seed: int = 0, *, causal: bool = False) -> PaddingCheck:
    """Pad `sequences` into one batch, run the toy head with the padding mask, and compare each sequence's
    real tokens with the same head run on that sequence alone."""
    x, lengths, labels = padded_batch(sequences, d_model, seed)  # (B, n, d_model)
    result = padded_attention(x @ head.w_q, x @ head.w_k, x @ head.w_v, lengths, causal=causal)
    alone = [attend(x[b, :length], head, causal=causal).output for b, length in enumerate(lengths)]
    return PaddingCheck(
        result,
        labels,
        lengths,
        on_padding=max(float(result.weights[b, :, length:].max(initial=0.0)) for b, length in enumerate(lengths)),
        alone_diff=max(float(np.abs(result.output[b, :length] - alone[b]).max()) for b, length in enumerate(lengths)),
        finite=bool(np.isfinite(result.weights).all() and np.isfinite(result.output).all()),
    )


# ---------------------------------------------------------------- ALiBi: what the slopes on screen do


def farthest_share(slope: float, n: int) -> float:
    """With equal scores, the weight of a key n - 1 positions back beside the query's own: e^(-m (n - 1))."""
    return float(np.exp(-slope * (n - 1)))


def reach_phrase(share: float) -> str:
    """A word for what a head with this farthest share reads: the threshold words the page uses."""
    if share < 0.05:
        return "mostly the last few words"
    if share > 0.8:
        return "almost a plain average of all of them"
    return "recent words more than old ones"


def slope_table(slopes) -> dict[str, list]:
    """The page's table of ALiBi slopes: each head h (from 1), its slope m_h written as a power of 2, and 1/m_h,
    the distance back at which its weight has shrunk by a factor e."""
    slopes = np.asarray(slopes, dtype=float)
    return {
        "h": list(range(1, len(slopes) + 1)),
        "m_h": [f"2^−{-np.log2(m):.3g} = {m:.4g}" for m in slopes],
        "1/m_h": [round(1 / m, 1) for m in slopes],
    }


def alibi_unmasked(n_heads: int) -> str:
    """What ALiBi does where the page runs it without the causal mask (its shuffle check and four ways)."""
    return (
        f"ALiBi in sections 1 and 2 is head 1 of H = {n_heads} (m = {alibi_slopes(n_heads)[0]:.3g}), run without the "
        "causal mask: only "
        "keys before a query are penalised, so the first word's query gets no bias at all, and keys after a query, "
        "unpenalised, gain weight beside those before it."
    )


def alibi_reading(slopes, n: int) -> list[str]:
    """What the ALiBi slopes on screen do to n words, in sentences computed from the slopes themselves:
    the steepest and the flattest head, and where Press et al.'s code puts the slopes when H is not a power
    of two (the in-between slopes of 2P heads go at the end, all steeper than the flattest of the first P)."""
    slopes = np.asarray(slopes, dtype=float)
    h = len(slopes)
    steep, flat = int(np.argmax(slopes)), int(np.argmin(slopes))

    def head(k: int) -> str:
        share = farthest_share(slopes[k], n)
        return (
            f"m = {slopes[k]:.3g}: with equal scores, the word {n - 1} back gets e^(−m·{n - 1}) = {share:.2g} times "
            f"the weight of the query's own word, so it reads {reach_phrase(share)}"
        )

    if h == 1:
        return [f"With one head, its slope is {head(0)}."]
    sentences = [f"Head {steep + 1} is the steepest, {head(steep)}.", f"Head {flat + 1} is the flattest, {head(flat)}."]
    power = 2 ** int(np.floor(np.log2(h)))
    if power == h:
        sentences.append(
            f"From head 1 to head {h}, each slope is {slopes[1] / slopes[0]:.3g} times the one before (2^(−8/{h}))."
        )
    else:
        extra = slopes[power:]
        steeper_than = int(np.sum(slopes[:power] >= extra.min())) + 1  # the first head less steep than them all
        one = h == power + 1
        added = f"head {h} gets the first" if one else f"heads {power + 1}–{h} get the first {h - power}"
        which = (
            "That extra slope is"
            if one
            else f"Those {h - power} extra slopes, from m = {extra.max():.3g} down to {extra.min():.3g}, are all"
        )
        than = "every other head's" if steeper_than == 1 else f"head {steeper_than}'s"
        sentences.append(
            f"H = {h} is not a power of two: heads 1–{power} get the slopes of {power} heads, falling from head 1 to "
            f"head {power}; {added} of every other slope of {2 * power} heads (the workaround in Press et al.'s code; "
            f"the paper trains powers of two only). {which} steeper than {than}, so head {h} "
            f"(m = {slopes[-1]:.3g}) is steeper than head {power}, the flattest."
        )
    return sentences
