"""Playground: type query, key and value vectors and watch the attention weights change live."""

import numpy as np
import pandas as pd
import streamlit as st

from attention import attention_steps
from attention.dot_product import ATTENTION_LATEX
from attention.stable_softmax import SOFTMAX_LATEX
from figures.geometry import arrows_figure
from figures.heatmaps import attention_heatmap, fmt
from lessons.why_attention import FIXED_LATEX, fixed_versus_attention
from ui.charts import chart, show_snippet
from ui.export import matrices_to_csv, matrices_to_json
from ui.page_state import PageState, stop
from ui.sequence import default_sequence
from ui.sequence_editor import sequence_editor
from ui.snippets import attention_snippet
from ui.state import SEQUENCE_KEY, require_app_entry
from ui.url import Flag, SequenceParam

require_app_entry()
STATE = PageState(
    "pg",
    seq=SequenceParam(lambda _: default_sequence(), key=SEQUENCE_KEY),  # shared with the other pages
    causal=Flag(False),
    scale=Flag(True),
)


def matrix_table(a: np.ndarray, row_labels, col_labels, digits: int = 3) -> pd.DataFrame:
    """A matrix as a table of display strings (so −∞ shows as −∞)."""
    return pd.DataFrame([[fmt(x, digits) for x in row] for row in a], index=list(row_labels), columns=list(col_labels))


def show_step(title: str, a: np.ndarray, rows, cols, note: str = "") -> None:
    st.markdown(f"**{title}** &nbsp; `{a.shape[0]} × {a.shape[1]}`" + (f" — {note}" if note else ""))
    st.dataframe(matrix_table(a, rows, cols), width="content")


STATE.load()
st.title("Attention playground")
st.markdown(
    "Each position has a **query** (what it looks for), a **key** (what it offers) and a **value** (what it "
    "hands over). A query is compared with every key by a dot product; the softmax turns that row of scores into "
    "weights that sum to 1; the output is the weighted average of the values."
)
st.latex(ATTENTION_LATEX)
STATE.show_warnings()

left, right = st.columns([3, 2], gap="large")
with left:
    seq = sequence_editor(STATE.key("seq"))
with right:
    causal_col, scale_col = st.columns(2)
    causal = causal_col.toggle(
        "Causal mask",
        key=STATE.key("causal"),
        persist_state="session",
        help="Each position may only attend to itself and earlier positions: scores above the "
        "diagonal become −∞ before the softmax, so their weights are exactly 0.",
    )
    scale = scale_col.toggle(
        "Divide by √d_k",
        key=STATE.key("scale"),
        persist_state="session",
        help="Scale the scores by 1/√d_k before the softmax. Off: raw dot products.",
    )
    try:
        steps = attention_steps(seq.q, seq.k, seq.v, causal=causal, scale=scale)
    except ValueError as err:
        st.error(f"Cannot compute attention: {err}")
        stop()
    chart(
        st,
        attention_heatmap(
            steps.weights,
            seq.tokens,
            seq.tokens,
            scores=steps.scores,
            scale_factor=steps.scale_factor,
            allowed=steps.allowed,
        ),
        width="stretch",
        key="pg_heatmap",
    )
    st.caption("Rows are queries, columns are keys; each row sums to 1. Hover a cell for its arithmetic.")
    st.markdown("Each row of weights is the softmax of that query's row of scores $x$:")
    st.latex(SOFTMAX_LATEX)
    st.caption(
        "Subtracting the row's largest score changes nothing (it cancels above and below the line) and keeps "
        "$e^x$ from overflowing; it is how the core computes it. A masked score, $-\\infty$, becomes exactly 0."
    )
    if seq.d_k == 2:
        st.markdown(
            "**Geometry (d_k = 2).** Queries in red, keys in blue: aligned arrows have a large dot "
            "product, perpendicular ones a dot product of 0."
        )
        chart(st, arrows_figure(seq.q, seq.k, seq.tokens), width="stretch", key="pg_geometry")

st.subheader("Step by step")
tok = seq.tokens
dk_cols = [f"d{j + 1}" for j in range(seq.d_k)]
dv_cols = [f"d{j + 1}" for j in range(seq.d_v)]
q_col, k_col, scores_col = st.columns(3)
with q_col:
    show_step("1. Q", steps.q, tok, dk_cols)
with k_col:
    show_step("2. Kᵀ", steps.k.T, dk_cols, tok, "keys as columns")
with scores_col:
    show_step("3. Q Kᵀ", steps.scores, tok, tok, "every query dotted with every key")
scaled_col, masked_col = st.columns(2)
with scaled_col:
    note = f"÷ √{seq.d_k} = × {steps.scale_factor:.3f}" if scale else "scaling off: same as Q Kᵀ"
    show_step("4. Scaled scores", steps.scaled, tok, tok, note)
with masked_col:
    show_step(
        "5. Masked scores",
        steps.masked,
        tok,
        tok,
        "−∞ above the diagonal (future positions)" if causal else "causal mask off: nothing masked",
    )
weights_col, output_col = st.columns(2)
with weights_col:
    weights_with_sums = np.column_stack([steps.weights, steps.weights.sum(axis=1)])
    show_step(
        "6. Weights = softmax(row)", weights_with_sums, tok, [*tok, "row sum"], "the last column is each row's sum"
    )
with output_col:
    show_step("7. Output = weights @ V", steps.output, tok, dv_cols, "each row: a weighted average of the values")

st.subheader("Why attention at all?")
st.markdown(
    "A layer could mix positions with a **fixed** matrix $W$ learned once: row *i* of $W$ says how much position "
    "*i* takes from each position *j*, whatever token sits there. Attention instead **computes** its mixing "
    "matrix from the vectors themselves. Below, both run on this sequence (A) and on the same tokens in reverse "
    "order (B)."
)
st.latex(FIXED_LATEX)
try:
    contrast = fixed_versus_attention(seq, seed=0)
except ValueError as err:
    st.error(f"Cannot compare: {err}")
else:
    fixed_col, attention_a_col, attention_b_col = st.columns(3)
    with fixed_col:
        chart(
            st,
            attention_heatmap(
                contrast.fixed,
                [f"pos {i}" for i in range(seq.n)],
                [f"pos {i}" for i in range(seq.n)],
                title="fixed W: the same for A and for B",
            ),
            width="stretch",
            key="pg_fixed",
        )
    with attention_a_col:
        chart(
            st,
            attention_heatmap(contrast.weights_a, contrast.a.tokens, contrast.a.tokens, title="attention on A"),
            width="stretch",
            key="pg_attention_a",
        )
    with attention_b_col:
        chart(
            st,
            attention_heatmap(
                contrast.weights_b, contrast.b.tokens, contrast.b.tokens, title="attention on B (reversed)"
            ),
            width="stretch",
            key="pg_attention_b",
        )
    moved = float(np.abs(contrast.weights_b_in_a_order - contrast.weights_a).max())
    st.markdown(
        f"The fixed $W$ mixes **positions**: on B, position 0 takes exactly what it took on A, although another "
        f"token now sits there. Attention's weights were computed from the vectors, so they moved with the tokens: "
        f"put B's rows and columns back in A's order and they differ from A's by at most **{moved:.1e}** "
        "(rounding). Each token still reads from the same tokens, wherever they stand. (This also shows that "
        "attention alone does not know the order of the tokens: see *Where is position?*.)"
    )

st.subheader("Download")
matrices = {
    "Q": steps.q,
    "K": steps.k,
    "V": steps.v,
    "scores": steps.scores,
    "weights": steps.weights,
    "output": steps.output,
}
csv_col, json_col, _ = st.columns([1, 1, 3])
csv_col.download_button(
    "Matrices as CSV",
    matrices_to_csv(tok, matrices),
    file_name="attention.csv",
    mime="text/csv",
    key="pg_csv",
    on_click="ignore",
)
json_col.download_button(
    "Matrices as JSON",
    matrices_to_json(tok, matrices, causal=causal, scale=scale),
    file_name="attention.json",
    mime="application/json",
    key="pg_json",
    on_click="ignore",
)

show_snippet(attention_snippet(seq.tokens, seq.q, seq.k, seq.v, causal=causal, scale=scale))
