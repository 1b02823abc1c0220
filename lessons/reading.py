"""Reading a real model's attention on long inputs and on pairs of sentences.

- Which query rows to show: every token, the last few, or the pieces of a chosen word (a 256-row
  heatmap is unreadable; the rows of one word are not).
- Queries and keys as points: AttentionViz's normalisation before the projection (Yeh et al. 2023), and
  how near each key is drawn to a query with and without it.
- Two sentences that differ in a word: which tokens they share (in order), and how one head's weights
  among those shared tokens differ from one sentence to the other.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attention.pretrained import MAX_TOKENS
from lessons.projection import queries_and_keys, query_readout
from locales import marked, tr, tr_n

QUERY_MODES = ("all", "last", "word")
POOLS = ("mean", "cls")  # which output a rollout is read for: the mean-pooled embedding, or [CLS] at the top
SPECIAL_TOKENS = ("[CLS]", "[SEP]")  # the markers the tokenizer puts before and after every text
# all-MiniLM-L6-v2's model card: "The sequence length was limited to 128 tokens" while it was trained as a
# sentence encoder (sentence-transformers still lets it read 256, MAX_TOKENS)
TRAINED_TOKENS = 128
CONTINUATION = "##"  # WordPiece marks a piece that continues the previous word with this prefix


def words(tokens: Sequence[str]) -> list[tuple[str, list[int]]]:
    """The input's words, rebuilt from its WordPiece tokens: (word, its token positions) in order.

    "play", "##ing" -> ("playing", [i, i + 1]). [CLS], [SEP] and punctuation are words of their own.
    """
    out: list[tuple[str, list[int]]] = []
    for i, tok in enumerate(tokens):
        if tok.startswith(CONTINUATION) and len(tok) > len(CONTINUATION) and out:
            word, positions = out[-1]
            out[-1] = (word + tok[len(CONTINUATION) :], [*positions, i])
        else:
            out.append((tok, [i]))
    return out


def matching_positions(tokens: Sequence[str], word: str) -> list[int]:
    """The positions of every token of every occurrence of `word` (case-insensitive, whole words only:
    "it" finds "it" but not "its"). An empty word finds nothing."""
    wanted = word.strip().lower()
    if not wanted:
        return []
    return [i for text, positions in words(tokens) if text.lower() == wanted for i in positions]


def select_queries(tokens: Sequence[str], mode: str, *, last: int = 8, word: str = "") -> list[int]:
    """The query rows to show, in order: "all" of them, the `last` few (the final one is [SEP]), or
    those of `word` (possibly none: the caller says so). Raises ValueError on an unknown mode."""
    n = len(tokens)
    if mode == "all":
        return list(range(n))
    if mode == "last":
        return list(range(max(0, n - max(1, int(last))), n))
    if mode == "word":
        return matching_positions(tokens, word)
    raise ValueError(f"mode must be one of {QUERY_MODES}, got {mode!r}")


def shown_rows(tokens: Sequence[str], mode: str, *, last: int, word: str) -> tuple[list[int], str | None]:
    """The query rows to show, and why they are not the rows asked for (None when they are): "no word" (the
    word mode with no word typed: every row), "no match" (no token is that word: every row) or "too few" (the
    text has fewer tokens than `last`: all of them)."""
    rows = select_queries(tokens, mode, last=last, word=word)
    if mode == "word" and not word.strip():
        return list(range(len(tokens))), "no word"
    if mode == "word" and not rows:
        return list(range(len(tokens))), "no match"
    if mode == "last" and last > len(tokens):
        return rows, "too few"
    return rows, None


def shown_positions(tokens: Sequence[str], hide: bool) -> list[int]:
    """The positions on display: all, or all but [CLS]/[SEP] when `hide` (unless nothing else would be left)."""
    kept = [i for i, tok in enumerate(tokens) if tok not in SPECIAL_TOKENS] if hide else []
    return kept or list(range(len(tokens)))


def chosen_weights(attentions: np.ndarray, layer: int, head: int, mean: bool) -> tuple[np.ndarray, str]:
    """The weights on show, one head's or its layer's heads averaged, and their name (layer, head from 1), in
    English as a class question's prompt quotes it (`weights_name`: the name the page shows).
    Shapes: attentions (layers, heads, n, n) -> (n, n)."""
    if not (1 <= layer <= attentions.shape[0] and 1 <= head <= attentions.shape[1]):
        raise ValueError(f"layer {layer}, head {head} is not in this model's {attentions.shape[:2]} (counted from 1)")
    if mean:
        return attentions[layer - 1].mean(axis=0), f"layer {layer}, its {attentions.shape[1]} heads averaged"
    return attentions[layer - 1, head - 1], f"layer {layer}, head {head}"


def weights_name(layer: int, head: int, mean: bool, n_heads: int) -> str:
    """The name of `chosen_weights`' weights as the page shows it, in the session's language."""
    if mean:
        return tr("layer {layer}, its {n_heads} heads averaged", layer=layer, n_heads=n_heads)
    return tr("layer {layer}, head {head}", layer=layer, head=head)


def future_share(attentions: np.ndarray) -> float:
    """The share of the weight on later tokens (above the diagonal), averaged over every head and query.

    Shapes: attentions (layers, heads, n, n), rows sum to 1 -> a number in [0, 1).
    """
    n = attentions.shape[-1]
    return float(np.triu(attentions, 1).sum(axis=(-2, -1)).mean() / n)  # per head: the weight above, over n rows


def output_feed(rollout: np.ndarray, pool: str) -> np.ndarray:
    """Which input tokens feed an output, by rollout: the mean of the rows for the mean-pooled embedding, row 0
    for [CLS]. Shapes: rollout (n, n), rows sum to 1 -> (n,), sums to 1."""
    if pool not in POOLS:
        raise ValueError(f"pool must be one of {POOLS}, got {pool!r}")
    return rollout.mean(axis=0) if pool == "mean" else rollout[0]


def special_share(feed: np.ndarray, tokens: Sequence[str]) -> float:
    """The share of `feed` on [CLS] and [SEP]. Shapes: feed (n,), one entry per token."""
    return float(sum(feed[i] for i, tok in enumerate(tokens) if tok in SPECIAL_TOKENS))


def axis_shares(variances: np.ndarray) -> tuple[float, float]:
    """The share of the spread along each of a projection's two axes (0 for an axis it does not have).
    Shapes: variances (k,), one per axis, largest first."""
    total = variances.sum() or 1.0
    return float(variances[0] / total), float(variances[1] / total) if len(variances) > 1 else 0.0


UNKNOWN = "[UNK]"


def unknown_note(tokens: Sequence[str], whose: str = "these") -> str | None:
    """What [UNK] is, when the text has any (None otherwise); `whose` names the text: "these", "sentence A's" or
    "sentence B's" (each a whole sentence of its own in the catalogue)."""
    count = sum(tok == UNKNOWN for tok in tokens)
    if not count:
        return None
    if whose == "sentence A's":
        return tr_n(
            "{count} of sentence A's tokens is [UNK], the tokenizer's *unknown* token: its vocabulary has no piece "
            "for those characters (many Chinese characters and emoji, for instance), so the model reads every one "
            "of them as the same token and cannot tell them apart.",
            "{count} of sentence A's tokens are [UNK], the tokenizer's *unknown* token: its vocabulary has no piece "
            "for those characters (many Chinese characters and emoji, for instance), so the model reads every one "
            "of them as the same token and cannot tell them apart.",
            count,
            count=count,
        )
    if whose == "sentence B's":
        return tr_n(
            "{count} of sentence B's tokens is [UNK], the tokenizer's *unknown* token: its vocabulary has no piece "
            "for those characters (many Chinese characters and emoji, for instance), so the model reads every one "
            "of them as the same token and cannot tell them apart.",
            "{count} of sentence B's tokens are [UNK], the tokenizer's *unknown* token: its vocabulary has no piece "
            "for those characters (many Chinese characters and emoji, for instance), so the model reads every one "
            "of them as the same token and cannot tell them apart.",
            count,
            count=count,
        )
    if whose != "these":
        raise ValueError(f"whose must be 'these', \"sentence A's\" or \"sentence B's\", got {whose!r}")
    return tr_n(
        "{count} of these tokens is [UNK], the tokenizer's *unknown* token: its vocabulary has no piece for those "
        "characters (many Chinese characters and emoji, for instance), so the model reads every one of them as the "
        "same token and cannot tell them apart.",
        "{count} of these tokens are [UNK], the tokenizer's *unknown* token: its vocabulary has no piece for those "
        "characters (many Chinese characters and emoji, for instance), so the model reads every one of them as the "
        "same token and cannot tell them apart.",
        count,
        count=count,
    )


def length_note(n_tokens: int, max_positions: int) -> str:
    """How long the text is to the model: its n_tokens, [CLS] and [SEP] included, against the most this app reads
    (MAX_TOKENS) and the model's position table (`max_positions`); past TRAINED_TOKENS, also that the model's
    sentence-embedding training never reached the positions it now reads."""
    if n_tokens > TRAINED_TOKENS:
        return tr(
            "{n} tokens, [CLS] and [SEP] included: the markers the tokenizer puts before and after every text (this "
            "app, like sentence-transformers, reads at most {max_tokens}; the model's position table has "
            "{max_positions}). Its model card says its sentence-embedding training cut inputs at {trained} tokens: "
            "past that, it reads positions that this training never reached.",
            n=n_tokens,
            max_tokens=MAX_TOKENS,
            max_positions=max_positions,
            trained=TRAINED_TOKENS,
        )
    return tr(
        "{n} tokens, [CLS] and [SEP] included: the markers the tokenizer puts before and after every text (this "
        "app, like sentence-transformers, reads at most {max_tokens}; the model's position table has "
        "{max_positions}).",
        n=n_tokens,
        max_tokens=MAX_TOKENS,
        max_positions=max_positions,
    )


def attentionviz_normalise(queries, keys) -> tuple[np.ndarray, np.ndarray]:
    """Queries and keys as AttentionViz draws them (Yeh et al. 2023): the queries scaled by c and the keys by 1/c
    so that both have the same mean length, then the keys moved so that their mean is the queries' mean (the
    paper names both steps, not their order: this order is our choice, and the page says so).

    No weight changes: (c q)·(k / c) = q·k, and moving every key by t moves each of a query's scores by the same
    q·t, which the softmax ignores. Only the picture changes: the two clouds overlap, and every distance from a
    query to a key is different. Shapes: queries (n, d_head), keys (m, d_head) -> the same, in float64.
    """
    q = np.asarray(queries, dtype=np.float64)
    k = np.asarray(keys, dtype=np.float64)
    q_len, k_len = np.linalg.norm(q, axis=1).mean(), np.linalg.norm(k, axis=1).mean()
    if q_len > 0 and k_len > 0:  # else nothing to balance
        c = np.sqrt(k_len / q_len)
        q, k = c * q, k / c
    return q, k - k.mean(axis=0) + q.mean(axis=0)  # (n, d_head), (m, d_head)


def nearness_both_ways(queries, keys, query: int, key_positions) -> tuple[list[int], list[int]]:
    """The rank (1 = nearest of all keys) of each key in `key_positions` by its distance from `query` on the
    2-D picture: (drawn from the raw vectors, drawn after `attentionviz_normalise`).
    Shapes: queries, keys (n, d_head)."""
    ranks = []
    for q, k in ((queries, keys), attentionviz_normalise(queries, keys)):
        readout = query_readout(q, k, queries_and_keys(q, k).coords, query, key_positions)
        ranks.append([r["closeness_rank"] for r in readout])
    return ranks[0], ranks[1]


def heaviest_nearest(queries, keys, weights) -> tuple[int, int]:
    """For how many queries the key with the largest weight is also the nearest key on the picture:
    (drawn from the raw vectors, drawn after `attentionviz_normalise`). Shapes: queries, keys (n, d_head),
    weights (n, n)."""
    heaviest = np.asarray(weights).argmax(axis=1)  # (n,)
    counts = []
    for q, k in ((queries, keys), attentionviz_normalise(queries, keys)):
        coords = queries_and_keys(q, k).coords  # (2n, 2)
        n = len(heaviest)
        distances = np.linalg.norm(coords[None, n:] - coords[:n, None], axis=-1)  # (n queries, n keys)
        counts.append(int((distances.argmin(axis=1) == heaviest).sum()))
    return counts[0], counts[1]


def key_readout(queries, keys, weights, query: int, key_positions) -> list[dict]:
    """For each key in `key_positions`: its weight from `query`, its score q·k/√d_head (what the softmax turns
    into the weight) and its nearness rank (1 = nearest of all keys) on the picture drawn from the raw vectors
    and after `attentionviz_normalise`. Shapes: queries, keys (n, d_head), weights (n, n)."""
    q, k = np.asarray(queries, dtype=np.float64), np.asarray(keys, dtype=np.float64)
    scores = k @ q[query] / np.sqrt(q.shape[1])  # (n,)
    near_raw, near_viz = nearness_both_ways(queries, keys, query, key_positions)
    return [
        {"key": int(j), "weight": float(weights[query, j]), "score": float(scores[j]), "near_raw": r, "near_viz": v}
        for j, r, v in zip(key_positions, near_raw, near_viz)
    ]


def shared_tokens(tokens_a: Sequence[str], tokens_b: Sequence[str]) -> tuple[list[int], list[int]]:
    """The tokens the two inputs share, in order (the longest matching runs, as `difflib` finds them):
    (positions in a, positions in b), of equal length, tokens_a[i] == tokens_b[j] for each pair."""
    matcher = difflib.SequenceMatcher(a=list(tokens_a), b=list(tokens_b), autojunk=False)
    pos_a: list[int] = []
    pos_b: list[int] = []
    for block in matcher.get_matching_blocks():
        pos_a += range(block.a, block.a + block.size)
        pos_b += range(block.b, block.b + block.size)
    return pos_a, pos_b


def weight_difference(weights_a: np.ndarray, weights_b: np.ndarray, pos_a, pos_b) -> np.ndarray:
    """A's weights minus B's among the shared tokens: entry (r, c) is how much more shared query r gives
    shared key c in sentence A than in B. Shapes: weights (n_a, n_a), (n_b, n_b); pos_* (m,) -> (m, m).

    The raw weights, not renormalised: a row of the difference need not sum to 0, because each sentence
    also gives weight to the tokens it does not share.
    """
    pos_a, pos_b = np.asarray(pos_a, dtype=np.intp), np.asarray(pos_b, dtype=np.intp)
    if pos_a.shape != pos_b.shape or pos_a.ndim != 1:
        raise ValueError(f"pos_a has shape {pos_a.shape} but pos_b {pos_b.shape}; expected two (m,) lists")
    a = np.asarray(weights_a, dtype=np.float64)[np.ix_(pos_a, pos_a)]  # (m, m)
    b = np.asarray(weights_b, dtype=np.float64)[np.ix_(pos_b, pos_b)]  # (m, m)
    return a - b


def largest_differences(diff: np.ndarray, count: int = 3) -> list[tuple[int, int]]:
    """The (row, column) cells of `diff` with the largest |value|, largest first. Shapes: (m, m) -> pairs."""
    flat = np.abs(np.asarray(diff)).ravel()
    order = np.argsort(-flat, kind="stable")[: min(count, flat.size)]
    return [tuple(int(i) for i in np.unravel_index(o, diff.shape)) for o in order]


@dataclass(frozen=True)
class PairDifference:
    """One head's weights on two sentences, compared on the tokens both share. pos_a, pos_b: the shared tokens'
    positions in each; shared: those tokens; a_block, b_block: each sentence's weights among them (m, m); diff:
    a_block - b_block; only_a, only_b: how many tokens each has that the other lacks."""

    pos_a: list[int]
    pos_b: list[int]
    shared: list[str]
    a_block: np.ndarray
    b_block: np.ndarray
    diff: np.ndarray
    only_a: int
    only_b: int


def pair_difference(
    weights_a: np.ndarray, weights_b: np.ndarray, tokens_a: Sequence[str], tokens_b: Sequence[str]
) -> PairDifference | None:
    """Two sentences' weights on their shared tokens, and A's minus B's; None when they share no token.
    Shapes: weights_a (n_a, n_a), weights_b (n_b, n_b), one row and column per token."""
    pos_a, pos_b = shared_tokens(tokens_a, tokens_b)
    if not pos_a:
        return None
    a_block = weights_a[np.ix_(pos_a, pos_a)]  # (m, m)
    b_block = weights_b[np.ix_(pos_b, pos_b)]  # (m, m)
    diff = weight_difference(weights_a, weights_b, pos_a, pos_b)  # (m, m)
    shared = [tokens_a[i] for i in pos_a]
    return PairDifference(
        pos_a, pos_b, shared, a_block, b_block, diff, len(tokens_a) - len(pos_a), len(tokens_b) - len(pos_b)
    )


# A paragraph of 252 tokens ([CLS] and [SEP] included): a long input near the model's limit of 256.
LONG_EXAMPLE = (
    "When the old ferry finally reached the island, the passengers were tired, cold and hungry. "
    "The captain apologised for the delay: a storm had forced the boat to wait in the harbour for most of the "
    "morning. Most of the travellers went straight to the small café by the pier, where the owner served soup and "
    "fresh bread. A young girl asked her father why the sea had been so rough, and he explained that the wind "
    "pushes the water into waves, and that the waves grow when the wind blows for a long time over open water. "
    "She listened carefully, then asked whether the fish minded the storm. "
    "He laughed and said that they probably swam deeper, where the water stays calm. "
    "After lunch the sun came out, the clouds drifted east, and the island looked bright and green again. "
    "The family walked along the cliffs to the lighthouse, which had guided ships past the rocks for more than a "
    "hundred years. At the top, the keeper showed them the great lens and told them how it turned through the "
    "night. When they came back down, the ferry was ready to leave, and this time the sea was flat and quiet. "
    "On the way home the girl fell asleep, still holding the postcard of the lighthouse she had bought."
)
# Sentences that differ in one word, where a pronoun refers to a different noun (Winograd schemas).
SENTENCE_PAIRS = {
    "The animal ... it was too tired / too wide": (
        "The animal didn't cross the street because it was too tired.",
        "The animal didn't cross the street because it was too wide.",
    ),
    "The trophy ... it is too large / too small": (
        "The trophy doesn't fit into the brown suitcase because it is too large.",
        "The trophy doesn't fit into the brown suitcase because it is too small.",
    ),
    "The city councilmen ... they feared / advocated violence": (
        "The city councilmen refused the demonstrators a permit because they feared violence.",
        "The city councilmen refused the demonstrators a permit because they advocated violence.",
    ),
}
# Pairs of sentences whose embeddings the first page compares: the kind of each pair opens its name (in English:
# `similarity_range` reads it; the page shows tr(name)).
SIMILARITY_PAIRS = {
    marked("Paraphrase: a guitar"): ("A man is playing a guitar.", "Someone is playing an instrument."),
    marked("Paraphrase: the weather"): ("The weather is lovely today.", "It's so sunny outside!"),
    marked("Unrelated: guitar vs interest rates"): (
        "A man is playing a guitar.",
        "The bank raised its interest rates.",
    ),
    marked("Unrelated: weather vs stadium"): ("The weather is lovely today.", "He drove to the stadium."),
    marked("Same word 'bank', different meaning"): (
        "The bank raised its interest rates.",
        "We had a picnic on the river bank.",
    ),
}


def similarity_range(similarities: dict[str, float], kind: str) -> tuple[float, float]:
    """(lowest, highest) similarity of the pairs whose name starts with `kind` ("Paraphrase", "Unrelated");
    `ValueError` if there is none."""
    values = [v for name, v in similarities.items() if name.startswith(kind)]
    if not values:
        raise ValueError(f"no pair is named {kind!r}...; the names are {', '.join(similarities)}")
    return min(values), max(values)
