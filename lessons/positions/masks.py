"""3 · Masks beyond causal: a sliding window, and how far information reaches through L layers of it; a padded
batch, whose padding mask hides the padded keys.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention.checks import check_positive_int
from attention.dot_product import PaddedAttention, padded_attention
from attention.masks import sliding_window_mask
from lessons.positions.toy import ToyHead, attend, diff_text, word_count, word_vectors
from locales import marked, num, tr, tr_n

# ---------------------------------------------------------------- a sliding window per layer


SLIDING_WINDOW_INTRO = marked(
    "Local-attention models let query i see only the last w keys, itself included: i − w < j ≤ i. That costs "
    "at most n·w scores instead of the n(n + 1)/2 of the plain causal mask (n² without a mask), yet information "
    "still travels: after one layer, what token j held is in "
    "the outputs of tokens j … j + w − 1, and in the next layer those are read by queries up to w − 1 positions "
    "further on. Each layer carries it w − 1 positions further, so L layers reach L(w − 1) positions back: "
    "about L·w when the window is wide."
)

REACH_LATEX = (
    r"i - L\,(w - 1) \le j \le i:\quad L\,(w-1) + 1 \text{ positions after } L \text{ layers}"
    r"\quad (\approx L \cdot w \text{ for a wide window})"
)


def window_why(values, asked) -> str:
    """Why the window is lowered below `asked`: it cannot hold more keys than the sequence has."""
    n = values["n"]
    return tr_n(
        "a window holds at most the n = {n} position of the sequence",
        "a window holds at most the n = {n} positions of the sequence",
        n,
        n=n,
    )


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


def reach_paragraph(window: int, layers: int) -> str:
    """How to read the reach heatmap of a window of `window` keys stacked `layers` times."""
    reading = tr(
        "Rows are queries i, columns keys j. A cell's colour is the first layer by which key j's information "
        "reaches query i (the colour bar and the hover give the number, and the cell too when it fits). "
        "Layer **1** is the mask itself: what a query reads directly."
    )
    hops = tr_n(
        "Layer **ℓ** arrives through ℓ hops of at most {most} position.",
        "Layer **ℓ** arrives through ℓ hops of at most {most} positions.",
        window - 1,
        most=window - 1,
    )
    blank = tr_n("Blank: not within {layers} layer.", "Blank: not within {layers} layers.", layers, layers=layers)
    return f"{reading} {hops} {blank}"


def reach_span(window: int, layers: int) -> int:
    """How many positions (itself included) a query has heard from after `layers` window layers."""
    return layers * (window - 1) + 1


def reach_sentence(n: int, window: int, layers: int, reached: int) -> tuple[bool, str]:
    """Whether the last query heard from as many positions as the formula says, and the sentence saying so."""
    span = reach_span(window, layers)
    if reached != min(n, span):
        return False, tr(
            "The last query heard from {reached} positions, not {expected}.", reached=reached, expected=min(n, span)
        )
    values = dict(reached=reached, formula=f"L(w − 1) + 1 = {layers}·{window - 1} + 1 = {span}", n=n)
    if span > n:
        return True, tr_n(
            "The last query has heard from {reached} position: {formula}, capped by the {n} positions there are.",
            "The last query has heard from {reached} positions: {formula}, capped by the {n} positions there are.",
            reached,
            **values,
        )
    if layers == 1 or window == 1:
        # one layer: L(w − 1) + 1 = w = L·w; a window of 1: nothing travels, and the sentence says 1
        return True, tr_n(
            "The last query has heard from {reached} position: {formula}.",
            "The last query has heard from {reached} positions: {formula}.",
            reached,
            **values,
        )
    return True, tr_n(
        "The last query has heard from {reached} position: {formula}; the round figure L·w = {round} counts "
        "{extra} too many (a layer carries information w − 1 positions, not w), close only when w is large.",
        "The last query has heard from {reached} positions: {formula}; the round figure L·w = {round} counts "
        "{extra} too many (a layer carries information w − 1 positions, not w), close only when w is large.",
        reached,
        round=layers * window,
        extra=layers - 1,
        **values,
    )


MISTRAL_WINDOW, MISTRAL_LAYERS = 4096, 32  # Jiang et al. 2023, Mistral 7B: its sliding window and its depth


def mistral_sentence() -> str:
    """Mistral 7B's reach through its sliding windows, by the formula above (the paper says about 131K)."""
    return tr(
        "Mistral 7B (Jiang et al. 2023), for instance, uses w = {window} with {layers} layers: {reach} positions, "
        "from {per_layer} per layer (the paper rounds L·w = {product} to 'approximately 131K').",
        window=MISTRAL_WINDOW,
        layers=MISTRAL_LAYERS,
        reach=num(reach_span(MISTRAL_WINDOW, MISTRAL_LAYERS), ","),
        per_layer=num(MISTRAL_WINDOW, ","),
        product=num(MISTRAL_LAYERS * MISTRAL_WINDOW, ","),
    )


# ---------------------------------------------------------------- a padded batch


PADDING_INTRO = marked(
    "To run sequences of different lengths as one array, the short ones are padded to the longest with a "
    "filler token, [PAD]. The padding mask hides the padded **keys**: they get weight exactly 0, so the real "
    "tokens compute what they would alone (up to rounding: the check below measures it). A padded **query** "
    "still gets a row (it can see the real keys, so its softmax is defined), but that row means nothing: it is "
    "reported as unused, never as NaN."
)

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


def length_why(values, asked) -> str:
    """Why a padded sequence's length is lowered below `asked`: it is cut from the words above."""
    n = word_count(values)
    return tr_n("the text has {n} word", "the text has {n} words", n, n=n)


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
            return tr("A padded key got weight {weight}, or a value is not finite.", weight=num(self.on_padding, "g"))
        if self.alone_diff == 0:
            return tr(
                "Padded keys: largest weight exactly 0. NaN anywhere: none. Unused query rows: {unused}, reported as "
                "0. The real tokens' outputs equal each sequence run alone exactly.",
                unused=self.unused,
            )
        return tr(
            "Padded keys: largest weight exactly 0. NaN anywhere: none. Unused query rows: {unused}, reported as 0. "
            "The real tokens' outputs equal each sequence run alone to within {diff} (rounding).",
            unused=self.unused,
            diff=diff_text(self.alone_diff),
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


def sequence_heading(number: int, length: int, padded_to: int) -> str:
    """The heading over padded sequence `number` (from 1): its words, and the length it is padded to."""
    return tr_n(
        "**Sequence {number}**: {length} word, padded to {padded}",
        "**Sequence {number}**: {length} words, padded to {padded}",
        int(length),
        number=number,
        length=length,
        padded=padded_to,
    )
