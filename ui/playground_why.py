"""The Playground's "Why attention at all?" box (pages/playground.py): a fixed mixing matrix against attention, on
the page's sequence and on the same tokens in reverse order, drawn only while the box is open. Its prose, equation
and figures are here; the computation is lessons/why_attention.py's."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention.sequence import TokenSequence
from figures.heatmaps import attention_heatmap
from lessons.why_attention import FIXED_LATEX, fixed_versus_attention
from locales import num, tr
from ui.charts import square_cells, square_chart


def why_attention(seq: TokenSequence, hidden: bool) -> None:
    """A fixed mixing matrix against attention, in an expander drawn only while open; `hidden` while the class
    answers a question about the page (the box shows the same weights)."""
    box = st.expander(
        tr("Why attention at all? A fixed mixing matrix against attention"),
        icon=":material/help:",
        key="pg_why",
        on_change="rerun",
    )
    if not box.open:
        return
    with box:
        if hidden:
            st.caption(tr("Hidden while the class answers the teacher's question: it shows the same weights."))
            return
        fixed_against_attention(seq)


def fixed_against_attention(seq: TokenSequence) -> None:
    """What a fixed W is, its equation, the three heatmaps (W, attention on A, attention on B) and how far
    attention's weights moved with the tokens."""
    st.markdown(
        tr(
            "A layer could mix positions with a **fixed** matrix $W$ learned once: row *i* of $W$ says how much "
            "position *i* takes from each position *j*, whatever token sits there. Attention instead **computes** its "
            "mixing matrix from the vectors themselves. Below, both run on this sequence (A) and on the same tokens in "
            "reverse order (B)."
        )
    )
    st.latex(FIXED_LATEX)
    contrast = fixed_versus_attention(seq, seed=0)
    # Translators: "pos" is short for "position": the label of a row and a column of a small heatmap
    positions = [tr("pos {position}", position=i) for i in range(seq.n)]
    figures = (
        (tr("fixed W: the same for A and for B"), contrast.fixed, positions, "pg_fixed"),
        (tr("attention on A"), contrast.weights_a, contrast.a.tokens, "pg_attention_a"),
        (tr("attention on B"), contrast.weights_b, contrast.b.tokens, "pg_attention_b"),
    )
    style = square_cells(seq.n, 1 / 3, font_size=10)
    for col, (title, weights, labels, key) in zip(st.columns(3), figures):
        col.markdown(f"**{title}**")
        fig = attention_heatmap(weights, labels, labels, **style)
        square_chart(col, fig, key=key)
    moved = float(np.abs(contrast.weights_b_in_a_order - contrast.weights_a).max())
    st.markdown(
        tr(
            "The fixed $W$ mixes **positions**: on B, position 0 takes exactly what it took on A, although another "
            "token now sits there. Attention's weights were computed from the vectors, so they moved with the tokens: "
            "put B's rows and columns back in A's order and they differ from A's by at most **{difference}** "
            "(rounding). Each token still reads from the same tokens, wherever they stand. (This also shows that "
            "attention alone does not know the order of the tokens.)",
            difference=num(moved, ".1e"),
        )
    )
