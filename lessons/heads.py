"""Multi-head attention as pages/heads.py runs it: d_model cut into h heads of d_head = d_model / h columns, and
each head's attention with the page's two switches (its scores divided by √d_head or not, the causal mask or not).

Each sentence and equation here is said as the switches make it true: with the scaling off, no formula shows
√d_head and no sentence says the scores are divided; with the mask off, none mentions M. The computation itself is
the core's (attention.heads splits and merges the heads, attention.dot_product attends in each); the heads' presets,
the inputs X and the summaries of their weights are in lessons.head_library.
"""

from __future__ import annotations

import numpy as np

from attention.heads import divisors
from locales import tr

# ---------------------------------------------------------------- 3 · split d_model into heads


def or_list(values) -> str:
    """[1, 2, 4] -> '1, 2 or 4', in the session's language."""
    words = [str(v) for v in values]
    if len(words) == 1:
        return words[0]
    # Translators: the end of a list of numbers: "1, 2 or 4" ({items} is "1, 2")
    return tr("{items} or {last}", items=", ".join(words[:-1]), last=words[-1])


def split_problem(d_model: int, n_heads: int, max_heads: int) -> str | None:
    """Why d_model cannot be cut into n_heads heads, with the head counts (up to `max_heads`) that can; None if it
    can."""
    if not d_model % n_heads:
        return None
    return tr(
        "**d_model = {d_model} cannot be split into {n_heads} heads**: {d_model} / {n_heads} is not a whole "
        "number, and every head needs the same whole number of columns. For d_model = {d_model}, choose "
        "{choices} heads (or change d_model to a multiple of {n_heads}).",
        d_model=d_model,
        n_heads=n_heads,
        choices=or_list([h for h in divisors(d_model) if h <= max_heads]),
    )


def split_table(q_heads) -> dict[str, list]:
    """Which columns of Q, K and V each head takes, and the shape of its chunk: the page's table, by column.

    Shapes: q_heads (h, n, d_head), Q split into heads (head k owns columns k·d_head … (k + 1)·d_head − 1).
    """
    n_heads, _, d_head = np.shape(q_heads)
    return {
        # Translators: a table's column header: the number of an attention head
        tr("head"): [h + 1 for h in range(n_heads)],
        tr("columns of Q, K, V"): [f"{h * d_head} … {(h + 1) * d_head - 1}" for h in range(n_heads)],
        tr("Q_h, K_h, V_h shape"): [str(tuple(q_heads[h].shape)) for h in range(n_heads)],
    }


# ---------------------------------------------------------------- 4 and 6 · every head attends on its own


def attention_latex(causal: bool, scale: bool) -> str:
    """One head's attention as the page's switches compute it: divided by √d_head or not, masked or not."""
    scores = r"\frac{Q_h K_h^\top}{\sqrt{d_{head}}}" if scale else r"Q_h K_h^\top"
    if not causal:
        return rf"\mathrm{{head}}_h = \mathrm{{softmax}}\!\left({scores}\right) V_h"
    return (
        rf"\mathrm{{head}}_h = \mathrm{{softmax}}\!\left({scores} + M\right) V_h,\qquad "
        r"M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}"
    )


def how_each_head_attends(causal: bool, scale: bool, d_head: int) -> str:
    """Section 4's first sentence, true of the switches as they are."""
    if scale and causal:
        return tr(
            "Each head runs dot-product attention on its own chunk, its scores divided by √d_head = √{d_head}, and "
            "the causal mask: each position sees itself and the positions before it.",
            d_head=d_head,
        )
    if scale:
        return tr(
            "Each head runs dot-product attention on its own chunk, its scores divided by √d_head = √{d_head}.",
            d_head=d_head,
        )
    if causal:
        return tr(
            "Each head runs dot-product attention on its own chunk, its scores **not** divided by √d_head (the "
            "scaling is switched off), and the causal mask: each position sees itself and the positions before it."
        )
    return tr(
        "Each head runs dot-product attention on its own chunk, its scores **not** divided by √d_head (the "
        "scaling is switched off)."
    )


def scores_title(scale: bool, causal: bool, d_head: int) -> str:
    """The enlarged head's scores heatmap's title: divided by √d_head or not, masked or not."""
    if scale and causal:
        return tr("scores Q Kᵀ / √{d_head} (masked)", d_head=d_head)
    if scale:
        return tr("scores Q Kᵀ / √{d_head}", d_head=d_head)
    return tr("scores Q Kᵀ (masked)") if causal else tr("scores Q Kᵀ")
