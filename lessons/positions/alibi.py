"""2 · ALiBi, attention with linear biases (Press et al. 2022): a penalty on the scores per distance, with a
slope per head, and the recency window each slope makes.
"""

from __future__ import annotations

import numpy as np

from attention.dot_product import attention_steps
from attention.positions import alibi_bias, alibi_slopes
from lessons.positions.toy import ToyHead, attend

ALIBI_INTRO = (
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
        "m_h": [f"2^−{-np.log2(m):.3g} = {m:.4g}" for m in slopes],
        "1/m_h": [round(1 / m, 1) for m in slopes],
    }


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


# ---------------------------------------------------------------- each head's window


ALIBI_PENALTY_ALONE = (
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
    return (
        f"ALiBi in sections 1 and 2 is head 1 of H = {n_heads} (m = {alibi_slopes(n_heads)[0]:.3g}), run without the "
        "causal mask: only "
        "keys before a query are penalised, so the first word's query gets no bias at all, and keys after a query, "
        "unpenalised, gain weight beside those before it."
    )
