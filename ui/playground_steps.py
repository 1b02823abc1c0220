"""The Playground's "Step by step" box (pages/playground.py): the seven matrices from Q to the output, as tables of
numbers, drawn only while the box is open. It reads the page's sequence and steps, and adds no control of its own."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention import AttentionSteps
from attention.sequence import TokenSequence
from figures.heatmaps import fmt
from locales import num, tr
from ui.sequence import display_labels
from ui.streamlit_internals.imports import pandas


def matrix_table(a: np.ndarray, row_labels, col_labels, digits: int = 3):
    """A matrix as a table of display strings (so −∞ shows as −∞), a pandas DataFrame; repeated labels are
    numbered for display (the·2), since a table's headers must differ.

    Shapes: a (rows, cols), row_labels rows long, col_labels cols long.
    """
    pd = pandas()  # the page's first run shows no table

    return pd.DataFrame(
        [[fmt(x, digits) for x in row] for row in a],
        index=display_labels(row_labels),
        columns=display_labels(col_labels),
    )


def show_step(title: str, a: np.ndarray, rows, cols, note: str = "") -> None:
    """One step: its title, its size and `note` on one line, the matrix as a table under it.

    Shapes: a (len(rows), len(cols)).
    """
    st.markdown(f"**{title}** &nbsp; `{a.shape[0]} × {a.shape[1]}`" + (f" — {note}" if note else ""))
    st.dataframe(matrix_table(a, rows, cols), width="content")


def step_by_step(seq: TokenSequence, steps: AttentionSteps, causal: bool, scale: bool) -> None:
    """The seven matrices, in an expander drawn only while open (a toggle's rerun then sends 8 fewer tables)."""
    box = st.expander(
        tr("Step by step: the seven matrices from Q to the output"),
        icon=":material/table_rows:",
        key="pg_steps",
        on_change="rerun",
    )
    if not box.open:
        return
    with box:
        seven_steps(seq, steps, causal, scale)


def seven_steps(seq: TokenSequence, steps: AttentionSteps, causal: bool, scale: bool) -> None:
    """Q, Kᵀ, the scores, scaled and masked, the weights with each row's sum, and the output, each as a table."""
    tok = seq.tokens
    dk_cols = [f"d{j + 1}" for j in range(seq.d_k)]
    dv_cols = [f"d{j + 1}" for j in range(seq.d_v)]
    q_col, k_col, scores_col = st.columns(3)
    with q_col:
        show_step("1. Q", steps.q, tok, dk_cols)
    with k_col:
        show_step("2. Kᵀ", steps.k.T, dk_cols, tok, tr("keys as columns"))
    with scores_col:
        show_step("3. Q Kᵀ", steps.scores, tok, tok, tr("every query dotted with every key"))
    scaled_col, masked_col = st.columns(2)
    with scaled_col:
        note = f"÷ √{seq.d_k} = × {num(steps.scale_factor, '.3f')}" if scale else tr("scaling off: same as Q Kᵀ")
        show_step(tr("4. Scaled scores"), steps.scaled, tok, tok, note)
    with masked_col:
        note = tr("−∞ above the diagonal (future positions)") if causal else tr("causal mask off: nothing masked")
        show_step(tr("5. Masked scores"), steps.masked, tok, tok, note)
    weights_col, output_col = st.columns(2)
    with weights_col:
        with_sums = np.column_stack([steps.weights, steps.weights.sum(axis=1)])
        show_step(
            tr("6. Weights = softmax(row)"),
            with_sums,
            tok,
            [*tok, tr("row sum")],
            tr("the last column is each row's sum"),
        )
    with output_col:
        show_step(
            tr("7. Output = weights @ V"), steps.output, tok, dv_cols, tr("each row: a weighted average of the values")
        )
