"""Playground: type query, key and value vectors and watch the attention weights change live."""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from attention import AttentionSteps, attention_steps
from attention.dot_product import ATTENTION_LATEX
from attention.stable_softmax import SOFTMAX_LATEX
from figures.geometry import arrows_figure
from figures.heatmaps import matrix_heatmap
from figures.steps import hidden_rows, steps_heatmap
from locales import tr
from ui.charts import SNIPPET_KEY, cell_font, chart, show_snippet, square_cells, square_chart
from ui.classroom_open_question import asked_here
from ui.declared.playground import STATE, STEPS, WEIGHTS_STEP
from ui.export import matrices_to_csv, matrices_to_json
from ui.page_state import section, stop
from ui.playground_steps import step_by_step
from ui.playground_why import why_attention
from ui.sequence_editor import sequence_controls, sequence_editor, sequence_grid
from ui.shared_state import is_presenting, require_app_entry
from ui.snippets import attention_snippet
from ui.streamlit_internals.imports import pandas
from ui.streamlit_internals.session import running_alone

require_app_entry()


def toggles(*, horizontal: bool = True) -> tuple[bool, bool]:
    """The two switches a teacher flips most, at their natural width (labels never cut)."""
    with st.container(horizontal=horizontal, gap="medium"):
        causal = st.toggle(
            tr("Causal mask"),
            key=STATE.key("causal"),
            persist_state="session",
            help=tr(
                "Each position may only attend to itself and earlier positions: scores above the "
                "diagonal become −∞ before the softmax, so their weights are exactly 0."
            ),
            disabled=STATE.held,
        )
        scale = st.toggle(
            tr("Divide by √d_k"),
            key=STATE.key("scale"),
            persist_state="session",
            help=tr("Scale the scores by 1/√d_k before the softmax. Off: raw dot products."),
            disabled=STATE.held,
        )
    return causal, scale


FIGURE_SHARE = {False: 0.6, True: 0.7}  # of the page's width, without and with presenter mode


def weights_figure(steps: AttentionSteps, tokens) -> go.Figure:
    """The attention heatmap with square cells, numbers in them while they fit."""
    return steps_heatmap(steps, tokens, **square_cells(len(tokens), FIGURE_SHARE[is_presenting()]))


def step_figure(step: int, steps: AttentionSteps, tokens, causal: bool, scale: bool) -> tuple[dict, str]:
    """The big figure and its sentence for one of the seven steps (presenter mode walks through them)."""
    d_k = [f"d{j + 1}" for j in range(steps.q.shape[1])]
    d_v = [f"d{j + 1}" for j in range(steps.v.shape[1])]
    shown = {
        1: (steps.q, tokens, d_k, tr("Q: one row per position, what each one looks for.")),
        2: (steps.k.T, d_k, tokens, tr("Kᵀ: the keys turned into columns, ready to be dotted with every query.")),
        3: (steps.scores, tokens, tokens, tr("Q Kᵀ: row i, column j is q_i · k_j. Large when they point alike.")),
        4: (
            steps.scaled,
            tokens,
            tokens,
            tr("Divided by √d_k = √{d_k}: the spread no longer grows with d_k.", d_k=steps.d_k)
            if scale
            else tr("Scaling is off: the raw dot products go on as they are."),
        ),
        5: (
            steps.masked,
            tokens,
            tokens,
            tr("The causal mask: −∞ above the diagonal, so the future gets weight exactly 0.")
            if causal
            else tr("The causal mask is off: nothing is masked."),
        ),
        7: (steps.output, tokens, d_v, tr("Output = weights @ V: each row is a weighted average of the values.")),
    }
    if step == WEIGHTS_STEP:
        return weights_figure(steps, tokens), tr("softmax of each row: the weights, every row summing to 1.")
    values, rows, cols, sentence = shown[step]
    font = cell_font(values.shape[1], FIGURE_SHARE[is_presenting()])
    fig = matrix_heatmap(values, rows, cols, annotate=font is not None, font_size=font, square=True)
    return fig, sentence


STEP_LATEX = (
    r"Q",
    r"K^\top",
    r"S = Q K^\top",
    r"S \,/\, \sqrt{d_k}",
    r"S + M",
    r"A = \mathrm{softmax}(S)",
    r"\mathrm{out} = A\,V",
)


def step_selector() -> int:
    """The seven steps, one click each; the page's ◀ ▶ buttons and the ← → keys step through them."""
    st.radio(
        # Translators: "Step" is a noun here: which of the seven steps of the computation the figure shows
        tr("Step"),
        range(1, len(STEPS) + 1),
        key=STATE.key("step"),
        # translated now, in this run's language (the steps' symbols are not in the catalogue: they stay as they are)
        format_func={s: f"{s} · {tr(name)}" for s, name in enumerate(STEPS, 1)}.__getitem__,
        persist_state="session",
        disabled=STATE.held,
        help=tr("What the big figure shows: the seven steps from the vectors to the output."),
    )
    return STATE["step"]


def step_buttons(step: int) -> None:
    with st.container(horizontal=True):
        st.button(
            # Translators: the button that goes back to the previous step
            tr("◀ previous"),
            key="pg_step_back",
            shortcut="Left",
            disabled=step == 1 or STATE.held,
            help=tr("The step before (←)"),
            on_click=lambda: STATE.set("step", max(1, STATE["step"] - 1)),
        )
        st.button(
            # Translators: the button that goes on to the next step
            tr("next ▶"),
            key="pg_step_next",
            shortcut="Right",
            disabled=step == len(STEPS) or STATE.held,
            help=tr("The step after (→)"),
            on_click=lambda: STATE.set("step", min(len(STEPS), STATE["step"] + 1)),
        )


def compute(seq, causal: bool, scale: bool) -> AttentionSteps:
    """The attention steps the page shows: without the rows of the queries a class question asks about, while it is
    open (figures.steps.hidden_rows: every figure and table then shows ? there)."""
    try:
        steps = attention_steps(seq.q, seq.k, seq.v, causal=causal, scale=scale)
    except ValueError as err:
        st.error(tr("Cannot compute attention: {error}", error=err))
        stop()
    return hidden_rows(steps, asked_queries())


def asked_queries() -> set[int]:
    """The queries whose rows would show the answer of the class question open about this page (none outside class
    mode): the asked query's, and every other query with the same vector (its scores are the same)."""
    asked = asked_here()
    if not asked or asked.get("page") != "playground":
        return set()
    seq = st.session_state[STATE.key("seq")]
    if asked.get("unknown"):  # class mode cannot tell which question is open (its database does not answer)
        return set(range(seq.n))
    return twin_queries(seq.q, int(asked["query"]))


def twin_queries(q: np.ndarray, query: int) -> set[int]:
    """The queries of `q` (n, d_k) whose vector equals query `query`'s, itself included."""
    if not 0 <= query < len(q):
        return set()
    return {int(i) for i in np.flatnonzero((q == q[query]).all(axis=1))}


def held_vectors(seq) -> None:
    """Q, K and V as a table that cannot be edited: the page is held while a class question is open."""
    pd = pandas()

    columns = {f"{m}{j + 1}": seq.matrix(m)[:, j] for m in "qkv" for j in range(seq.matrix(m).shape[1])}
    # Translators: the header of a table's column of token labels
    st.dataframe(pd.DataFrame({tr("token"): list(seq.tokens), **columns}), hide_index=True, width="content")


def presenter_layout():
    """The figure first and large, stepped through QKᵀ → scale → mask → softmax → @V; the editor one click away."""
    figure_col, side_col = st.columns([7, 3], gap="medium")
    seq = st.session_state[STATE.key("seq")]
    with side_col:
        st.subheader(tr("Attention playground"))
        causal, scale = toggles(horizontal=False)
        step = step_selector()
        steps = compute(seq, causal, scale)
        fig, sentence = step_figure(step, steps, seq.tokens, causal, scale)
        st.latex(STEP_LATEX[step - 1])
        st.markdown(sentence)
        step_buttons(step)
        st.caption(tr("The ← and → keys step too. Hover a cell for its numbers."))
    with figure_col:
        square_chart(st, fig, key="pg_heatmap" if step == WEIGHTS_STEP else "pg_step_figure")
    st.latex(ATTENTION_LATEX)
    with st.expander(tr("Edit Q, K and V: sizes, presets, the grid, text"), icon=":material/edit:"):
        if STATE.held:
            held_vectors(seq)
        else:
            sequence_editor(STATE.key("seq"))
    return st.session_state[STATE.key("seq")], causal, scale, steps


# What else on the page shows the switches' result, each drawn only while its box is open (session keys of
# the expanders below and of ui.charts.show_snippet's): a switch then reruns the whole page, not its section.
FOLLOWS_THE_SWITCHES = ("pg_steps", "pg_downloads", SNIPPET_KEY)


@section
def weights_section(controls_col, figure_col) -> tuple[bool, bool, AttentionSteps]:
    """The two switches and the heatmap they change, a section of the page: a click on a switch redraws these
    alone, not the grid and its controls, which do not depend on the switches (a quarter of the page's messages
    to the browser: docs/performance.md, "The Playground against Streamlit's floor")."""
    with controls_col:
        causal, scale = toggles()
    if running_alone() and any(st.session_state.get(box) for box in FOLLOWS_THE_SWITCHES):
        st.rerun()  # an open box below shows the switches' result too: the whole page runs
    seq = st.session_state[STATE.key("seq")]
    steps = compute(seq, causal, scale)
    with figure_col:
        square_chart(st, weights_figure(steps, seq.tokens), key="pg_heatmap")
        st.caption(tr("Rows are queries, columns are keys; each row sums to 1. Hover a cell for its arithmetic."))
    return causal, scale, steps


def normal_layout():
    """The controls beside a large heatmap, the grid full width underneath (so all its columns show)."""
    controls_col, figure_col = st.columns([2, 3], gap="large")
    causal, scale, steps = weights_section(controls_col, figure_col)
    with controls_col:
        if not STATE.held:
            sequence_controls(STATE.key("seq"))
        st.markdown(tr("Each row of weights is the softmax of that query's row of scores $x$:"))
        st.latex(SOFTMAX_LATEX)
        st.caption(
            tr(
                "Subtracting the row's largest score changes nothing (it cancels above and below the line) and keeps "
                "$e^x$ from overflowing; it is how the core computes it. A masked score, $-\\infty$, becomes exactly 0."
            )
        )
    if STATE.held:
        seq = st.session_state[STATE.key("seq")]
        st.markdown(
            tr(
                "**Q** ({n} × {d_k}), **K** ({n} × {d_k}) and **V** ({n} × {d_v})",
                n=seq.n,
                d_k=seq.d_k,
                d_v=seq.d_v,
            )
        )
        held_vectors(seq)
    else:
        seq = sequence_grid(STATE.key("seq"), after_charts=True)
    if seq.d_k == 2:
        box = st.expander(
            tr("Geometry (d_k = 2): the queries and keys as arrows"),
            icon=":material/explore:",
            key="pg_geometry_box",
            on_change="rerun",
        )
        if box.open:  # drawn only while open: a toggle's rerun does not re-send a second chart
            arrows_col, note_col = box.columns([3, 2], gap="large")
            chart(arrows_col, arrows_figure(seq.q, seq.k, seq.tokens), width="stretch", key="pg_geometry")
            note_col.markdown(
                tr(
                    "Queries in red, keys in blue: aligned arrows have a large dot product, perpendicular ones a dot "
                    "product of 0, opposite ones the most negative."
                )
            )
    return seq, causal, scale, steps


def downloads(seq, steps: AttentionSteps, causal: bool, scale: bool) -> None:
    """Q, K, V, scores, weights and output as CSV or JSON, drawn (and computed) only while the box is open."""
    box = st.expander(
        tr("Download the matrices (CSV, JSON)"), icon=":material/download:", key="pg_downloads", on_change="rerun"
    )
    if not box.open:
        return
    if asked_queries():
        box.caption(tr("The downloads come back once the teacher reveals the answer to the class's question."))
        return
    matrices = {
        "Q": steps.q,
        "K": steps.k,
        "V": steps.v,
        "scores": steps.scores,
        "weights": steps.weights,
        "output": steps.output,
    }
    with box, st.container(horizontal=True):
        st.download_button(
            tr("Matrices as CSV"),
            lambda: matrices_to_csv(seq.tokens, matrices),
            file_name="attention.csv",
            mime="text/csv",
            key="pg_csv",
            on_click="ignore",
        )
        st.download_button(
            tr("Matrices as JSON"),
            lambda: matrices_to_json(seq.tokens, matrices, causal=causal, scale=scale),
            file_name="attention.json",
            mime="application/json",
            key="pg_json",
            on_click="ignore",
        )


STATE.load()
if not is_presenting():
    st.title(tr("Attention playground"))
    st.markdown(
        tr(
            "Each position has a **query** (what it looks for), a **key** (what it offers) and a **value** (what it "
            "hands over). A query is compared with every key by a dot product; the softmax turns that row of scores "
            "into weights that sum to 1; the output is the weighted average of the values."
        )
    )
    st.latex(ATTENTION_LATEX)
STATE.show_warnings()
seq, causal, scale, steps = presenter_layout() if is_presenting() else normal_layout()
if not is_presenting():
    step_by_step(seq, steps, causal, scale)
why_attention(seq, hidden=bool(asked_queries()))
downloads(seq, steps, causal, scale)
show_snippet(attention_snippet(seq.tokens, seq.q, seq.k, seq.v, causal=causal, scale=scale))
