"""2 · ALiBi, attention with linear biases (Press et al. 2022): a penalty on the scores per distance, with a
slope per head, and the recency window each slope makes.
"""

from __future__ import annotations

import numpy as np

from attention.dot_product import attention_steps
from attention.positions import alibi_bias, alibi_slopes
from lessons.positions.toy import ToyHead, attend
from locales import marked, num, tr

ALIBI_INTRO = marked(
    "No position vectors at all: each head subtracts a penalty proportional to the distance from its scores, "
    "with its own slope m_h. A key i − j positions before query i loses m_h·(i − j) of score, so its weight "
    "shrinks by e^(−m_h (i − j)): each head has its own window, about 1/m_h positions. It is made for causal "
    "models, whose mask hides the future: the heatmaps below use the causal mask (sections 1 and 2 did not; "
    "there only the past was penalised)."
)


# ---------------------------------------------------------------- the slopes on screen, and what they do


def slope_table(slopes) -> dict[str, list]:
    """The page's table of ALiBi slopes: each head h (from 1), its slope m_h written as a power of 2, and 1/m_h,
    the distance back at which its weight has shrunk by a factor e."""
    slopes = np.asarray(slopes, dtype=float)
    return {
        "h": list(range(1, len(slopes) + 1)),
        "m_h": [f"2^−{num(-np.log2(m), '.3g')} = {num(m, '.4g')}" for m in slopes],
        "1/m_h": [round(1 / m, 1) for m in slopes],
    }


def farthest_share(slope: float, n: int) -> float:
    """With equal scores, the weight of a key n - 1 positions back beside the query's own: e^(-m (n - 1))."""
    return float(np.exp(-slope * (n - 1)))


def reach_phrase(share: float) -> str:
    """A word for what a head with this farthest share reads: the threshold words the page uses (in English: the
    sentences of HEAD_SENTENCES say it in the session's language)."""
    if share < 0.05:
        return "mostly the last few words"
    if share > 0.8:
        return "almost a plain average of all of them"
    return "recent words more than old ones"


# each sentence about one head, by where it stands (its only head, the steepest, the flattest) and by what it
# reads (reach_phrase): whole sentences, so that a translation can say each its own way
HEAD_SENTENCES = {
    ("only", "mostly the last few words"): marked(
        "With one head, its slope is m = {slope}: with equal scores, the word {back} back gets e^(−m·{back}) = "
        "{share} times the weight of the query's own word, so it reads mostly the last few words."
    ),
    ("only", "almost a plain average of all of them"): marked(
        "With one head, its slope is m = {slope}: with equal scores, the word {back} back gets e^(−m·{back}) = "
        "{share} times the weight of the query's own word, so it reads almost a plain average of all of them."
    ),
    ("only", "recent words more than old ones"): marked(
        "With one head, its slope is m = {slope}: with equal scores, the word {back} back gets e^(−m·{back}) = "
        "{share} times the weight of the query's own word, so it reads recent words more than old ones."
    ),
    ("steepest", "mostly the last few words"): marked(
        "Head {head} is the steepest, m = {slope}: with equal scores, the word {back} back gets e^(−m·{back}) = "
        "{share} times the weight of the query's own word, so it reads mostly the last few words."
    ),
    ("steepest", "almost a plain average of all of them"): marked(
        "Head {head} is the steepest, m = {slope}: with equal scores, the word {back} back gets e^(−m·{back}) = "
        "{share} times the weight of the query's own word, so it reads almost a plain average of all of them."
    ),
    ("steepest", "recent words more than old ones"): marked(
        "Head {head} is the steepest, m = {slope}: with equal scores, the word {back} back gets e^(−m·{back}) = "
        "{share} times the weight of the query's own word, so it reads recent words more than old ones."
    ),
    ("flattest", "mostly the last few words"): marked(
        "Head {head} is the flattest, m = {slope}: with equal scores, the word {back} back gets e^(−m·{back}) = "
        "{share} times the weight of the query's own word, so it reads mostly the last few words."
    ),
    ("flattest", "almost a plain average of all of them"): marked(
        "Head {head} is the flattest, m = {slope}: with equal scores, the word {back} back gets e^(−m·{back}) = "
        "{share} times the weight of the query's own word, so it reads almost a plain average of all of them."
    ),
    ("flattest", "recent words more than old ones"): marked(
        "Head {head} is the flattest, m = {slope}: with equal scores, the word {back} back gets e^(−m·{back}) = "
        "{share} times the weight of the query's own word, so it reads recent words more than old ones."
    ),
}


def alibi_reading(slopes, n: int) -> list[str]:
    """What the ALiBi slopes on screen do to n words, in sentences computed from the slopes themselves:
    the steepest and the flattest head, and where Press et al.'s code puts the slopes when H is not a power
    of two (the in-between slopes of 2P heads go at the end, all steeper than the flattest of the first P)."""
    slopes = np.asarray(slopes, dtype=float)
    h = len(slopes)
    steep, flat = int(np.argmax(slopes)), int(np.argmin(slopes))

    def head(where: str, k: int) -> str:
        share = farthest_share(slopes[k], n)
        return tr(
            HEAD_SENTENCES[where, reach_phrase(share)],
            head=k + 1,
            slope=num(slopes[k], ".3g"),
            back=n - 1,
            share=num(share, ".2g"),
        )

    if h == 1:
        return [head("only", 0)]
    sentences = [head("steepest", steep), head("flattest", flat)]
    power = 2 ** int(np.floor(np.log2(h)))
    if power == h:
        sentences.append(
            tr(
                "From head 1 to head {heads}, each slope is {ratio} times the one before (2^(−8/{heads})).",
                heads=h,
                ratio=num(slopes[1] / slopes[0], ".3g"),
            )
        )
    else:
        extra = slopes[power:]
        steeper_than = int(np.sum(slopes[:power] >= extra.min())) + 1  # the first head less steep than them all
        values = dict(
            heads=h,
            power=power,
            double=2 * power,
            first_extra=power + 1,
            extra=h - power,
            steepest_extra=num(extra.max(), ".3g"),
            flattest_extra=num(extra.min(), ".3g"),
            than=steeper_than,
            last=num(slopes[-1], ".3g"),
        )
        one = h == power + 1
        if one and steeper_than == 1:
            sentence = tr(
                "H = {heads} is not a power of two: heads 1–{power} get the slopes of {power} heads, falling from "
                "head 1 to head {power}; head {heads} gets the first of every other slope of {double} heads (the "
                "workaround in Press et al.'s code; the paper trains powers of two only). That extra slope is steeper "
                "than every other head's, so head {heads} (m = {last}) is steeper than head {power}, the flattest.",
                **values,
            )
        elif one:
            sentence = tr(
                "H = {heads} is not a power of two: heads 1–{power} get the slopes of {power} heads, falling from "
                "head 1 to head {power}; head {heads} gets the first of every other slope of {double} heads (the "
                "workaround in Press et al.'s code; the paper trains powers of two only). That extra slope is steeper "
                "than head {than}'s, so head {heads} (m = {last}) is steeper than head {power}, the flattest.",
                **values,
            )
        elif steeper_than == 1:
            sentence = tr(
                "H = {heads} is not a power of two: heads 1–{power} get the slopes of {power} heads, falling from "
                "head 1 to head {power}; heads {first_extra}–{heads} get the first {extra} of every other slope of "
                "{double} heads (the workaround in Press et al.'s code; the paper trains powers of two only). Those "
                "{extra} extra slopes, from m = {steepest_extra} down to {flattest_extra}, are all steeper than every "
                "other head's, so head {heads} (m = {last}) is steeper than head {power}, the flattest.",
                **values,
            )
        else:
            sentence = tr(
                "H = {heads} is not a power of two: heads 1–{power} get the slopes of {power} heads, falling from "
                "head 1 to head {power}; heads {first_extra}–{heads} get the first {extra} of every other slope of "
                "{double} heads (the workaround in Press et al.'s code; the paper trains powers of two only). Those "
                "{extra} extra slopes, from m = {steepest_extra} down to {flattest_extra}, are all steeper than head "
                "{than}'s, so head {heads} (m = {last}) is steeper than head {power}, the flattest.",
                **values,
            )
        sentences.append(sentence)
    return sentences


# ---------------------------------------------------------------- each head's window


ALIBI_PENALTY_ALONE = marked(
    "Every score equal (q = 0), so the weights come from the penalty alone: row i of head h is proportional "
    "to e^(−m_h (i − j)) for j ≤ i: the steepest head's window is the narrowest, the flattest head's the "
    "widest."
)


def alibi_windows(n: int, n_heads: int) -> np.ndarray:
    """Each ALiBi head's weights when every score is equal (q = 0): the recency window its bias alone makes,
    under the causal mask. Shapes: -> (n_heads, n, n), row i of head h proportional to e^(-m_h (i - j)), j <= i."""
    zeros = np.zeros((n_heads, n, 1))  # (H, n, 1): q = k = 0, so every score q·k is 0
    return attention_steps(zeros, zeros, zeros, causal=True, bias=alibi_bias(n, n_heads)).weights  # (H, n, n)


def alibi_head_weights(x, head: ToyHead, n_heads: int) -> np.ndarray:
    """The toy head's scores plus each ALiBi head's penalty, under the causal mask: one weights matrix per head.

    Shapes: x (n, d_model) -> (n_heads, n, n).
    """
    return np.stack(
        [attend(x, head, "alibi", alibi_heads=n_heads, alibi_head=h, causal=True).weights for h in range(n_heads)]
    )


# ---------------------------------------------------------------- sections 1 and 2 run it without the causal mask


def alibi_unmasked(n_heads: int) -> str:
    """What ALiBi does where the page runs it without the causal mask (its shuffle check and four ways)."""
    return tr(
        "ALiBi in sections 1 and 2 is head 1 of H = {heads} (m = {slope}), run without the causal mask: only "
        "keys before a query are penalised, so the first word's query gets no bias at all, and keys after a query, "
        "unpenalised, gain weight beside those before it.",
        heads=n_heads,
        slope=num(alibi_slopes(n_heads)[0], ".3g"),
    )
