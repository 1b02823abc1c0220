"""Pitfalls: the wrong transpose, masking after the softmax, and reading attention as explanation."""

import numpy as np
import pandas as pd
import streamlit as st

from figures.heatmaps import attention_heatmap, matrix_heatmap
from figures.steps import steps_heatmap
from lessons.pitfalls import (
    MASK_AFTER_SOFTMAX_LATEX,
    WRONG_TRANSPOSE_LATEX,
    compare_transposes,
    leak_example,
    mask_after_softmax,
    row_max_abs_diff,
    same_pattern_different_output,
)
from locales import marked, num, tr
from ui.charts import chart, show_snippet
from ui.classroom_open_question import answer_hidden, hidden_answer_card
from ui.declared.pitfalls import HAND_ANSWER, STATE
from ui.number_box import number_box
from ui.page_state import stop
from ui.sequence_editor import editor_box, sequence_editor
from ui.shared_state import SEQUENCE_KEY, require_app_entry
from ui.snippets import attention_snippet
from ui.tables import arrow_table, show_vectors

require_app_entry()

KEY = STATE.key("seq")


def verdict(check) -> str:
    if check.passed:
        return tr("✅ pass: {detail}", detail=check.detail)
    return tr("❌ fail: {detail}", detail=check.detail)


def input_b_text(rotation: np.ndarray) -> str:
    """How input B was made from A, true of the rotation drawn: with d_k = 1, R is ±1 and may leave q and k as
    they were."""
    if rotation.shape[0] > 1:
        return tr(
            "Input **B** has different queries and keys (A's, turned by a random rotation R: "
            "$(QR)(KR)^\\top = QK^\\top$) and different values."
        )
    if rotation[0, 0] > 0:
        return tr(
            "Input **B** has A's queries and keys (with d_k = 1 the only rotation is R = 1, which leaves them as they "
            "are) and different values."
        )
    return tr(
        "Input **B** has A's queries and keys times R = −1 (with d_k = 1 the only rotation is R = 1; R = −1 flips "
        "their sign and keeps every score: $(QR)(KR)^\\top = QK^\\top$) and different values."
    )


def rotation_latex(rotation: np.ndarray) -> str:
    if rotation.shape[0] > 1:
        return r"(Q R)(K R)^\top = Q R R^\top K^\top = Q K^\top \quad (R R^\top = I,\ \det R = +1)"
    return rf"(Q R)(K R)^\top = R^2\, Q K^\top = Q K^\top \quad (R = {rotation[0, 0]:+g})"


PAPER_TEXT = marked(
    "**What this demo shows, and what the paper found.** The demo shows one direction: the *same* weights with "
    "*different* outputs, because an output is the weights applied to the values, and B's values are different. "
    "This section's title is the title of Jain & Wallace (2019, 'Attention is not Explanation'), who tested "
    "attention in trained models, mostly an attention layer over a recurrent (BiLSTM) encoder, on text "
    "classification, question answering and natural language inference. They found:\n"
    "- **very different weights, the same prediction**: for many inputs they could find attention distributions "
    "far from the learned ones (adversarial ones) that left the model's prediction practically unchanged, and "
    "randomly permuting the learned weights often changed the prediction little;\n"
    "- **weak agreement with other measures of importance**: the attention weights agreed only weakly with "
    "gradient-based measures of how much each input word matters, and with leave-one-out measures (how much the "
    "output changes when that word is removed).\n\n"
    "Neither finding is computed on this page. Wiegreffe & Pinter (2019, 'Attention is not not Explanation') "
    "replied that whether attention is an explanation depends on what one means by explanation, proposed four "
    "tests of when it can serve as one, and found that adversarial distributions, even where they can be found, "
    "do poorly on a simple diagnostic: in their reading, Jain & Wallace's results do not show that attention is "
    "useless for explanation."
)  # the papers' titles and authors stay as they are written


STATE.load()
st.title(tr("Pitfalls"))
st.markdown(
    tr(
        "Two mistakes in the code that *can* give numbers of the right shape, so that nothing stops the program, and "
        "the tests that catch them; then a mistake in reading the result."
    )
)
STATE.show_warnings()

# ---------------------------------------------------------------- 1. the wrong transpose
st.header(tr("1 · Transposing the wrong matrix"))
st.markdown(
    tr(
        "The scores are Q Kᵀ: query *i* dotted with key *j*. There are two ways to get the transpose wrong.\n"
        "- **Q K**: numpy normally refuses, because (n × d_k)(n × d_k) only multiplies when **d_k = n**. In a square "
        "example, which is what small hand examples often are, it runs, softmaxes into rows that sum to 1, and is "
        "nonsense: entry (i, j) mixes query *i*'s components with *column j* of K, a dimension rather than a "
        "position.\n"
        "- **K Qᵀ**: always square for self-attention, so it **always runs**, and its rows sum to 1 too. It is the "
        "right scores transposed: row *i* is key *i* dotted with every query, so the keys attend to the queries."
    )
)
st.latex(WRONG_TRANSPOSE_LATEX)
st.markdown(
    tr(
        "**The vectors** (the same editor as the Playground's, for this page's own vectors; they start at the 3×3 "
        "hand example: query *i* looks for feature *i*, key *j* carries feature *j*+1)"
    )
)
with editor_box(tr("Edit the sequence: q, k, v and labels")):
    seq = sequence_editor(KEY, presets=False)
    st.caption(
        tr(
            "Try n = 4 with d_k = 3: Q K no longer runs, K Qᵀ still does. Try Q = identity with a symmetric K: "
            "both wrong products give the right answer, and such an example can never catch the bug."
        )
    )
seq = st.session_state[KEY]
try:
    compared = compare_transposes(seq.q, seq.k, seq.v)
except ValueError as err:
    st.error(tr("Cannot compute attention: {error}", error=err))
    stop()


def say_if_it_looks_right(looks_right: bool) -> None:
    if looks_right:
        st.warning(
            tr(
                "On these vectors this gives the same weights as the right product: this example cannot tell the "
                "right code from the wrong one."
            ),
            icon=":material/visibility_off:",
        )


right_col, qk_col, kq_col = st.columns(3, gap="medium")
with right_col:
    st.markdown(tr("**Right**: softmax(Q Kᵀ / √d_k)"))
    chart(st, steps_heatmap(compared.right, seq.tokens), width="stretch", key="pitfalls_right", share=1 / 3)
with qk_col:
    st.markdown(tr("**Wrong**: softmax(Q K / √d_k)"))
    if compared.wrong_error:
        st.warning(
            tr(
                "The wrong product does not run on these vectors, so this bug is caught at once: {error}",
                error=compared.wrong_error,
            ),
            icon=":material/block:",
        )
    elif answer_hidden("pitfalls", "kq"):  # with Q = I, Q K is K Qᵀ: it would show the answer
        hidden_answer_card(st, tr("The weights of Q K"))
    else:
        chart(
            st,
            attention_heatmap(compared.wrong_weights, seq.tokens, seq.tokens),
            width="stretch",
            key="pitfalls_wrong",
            share=1 / 3,
        )
        say_if_it_looks_right(compared.wrong_looks_right)
with kq_col:
    st.markdown(tr("**Wrong**: softmax(K Qᵀ / √d_k)"))
    if answer_hidden("pitfalls", "kq"):
        hidden_answer_card(st, tr("The weights of K Qᵀ"))
    else:
        chart(
            st,
            attention_heatmap(compared.kq_weights, seq.tokens, seq.tokens),
            width="stretch",
            key="pitfalls_wrong_kq",
            share=1 / 3,
        )
        say_if_it_looks_right(compared.kq_looks_right)

picks = ", ".join(tr("query {query} key {key}", query=i, key=j) for i, j in enumerate(HAND_ANSWER))
st.markdown(
    tr(
        "**How to catch it.** Two checks every implementation must pass, and the one that actually catches "
        "these bugs: a hand example whose answer you wrote down first. Query *i* looks for feature *i*; key *j* "
        "carries feature *j*+1 (mod 3); so each query must pick the key before it (mod 3): {picks}.",
        picks=picks,
    )
)
not_run = [
    tr("🛑 caught: Q K does not run ({n}×{d_k} times {n}×{d_k})", n=seq.n, d_k=seq.d_k),
    tr("— (did not run)"),
]
# the wrong products' picks on the hand example: the answer when the vectors are that example
if answer_hidden("pitfalls", "kq"):
    hidden_answer_card(st, tr("The checks (the keys each wrong product picks)"))
else:
    st.table(  # a table that wraps its text: the verdicts are sentences
        pd.DataFrame(
            {
                # Translators: a column header: the name of each check
                tr("check"): [c.name for c in compared.right_checks],
                tr("right: Q Kᵀ"): [verdict(c) for c in compared.right_checks],
                tr("wrong: Q K"): [
                    not_run[i] if c is None else verdict(c) for i, c in enumerate(compared.wrong_checks)
                ],
                tr("wrong: K Qᵀ"): [verdict(c) for c in compared.kq_checks],
            }
        ).set_index(tr("check")),
    )
st.caption(
    tr(
        "The first two checks run on the vectors above; the third always runs on the fixed 3×3 hand example. "
        "Shape and row sums are necessary, not sufficient: only the predicted answer tells the right product from "
        "the wrong ones."
    )
)

# ---------------------------------------------------------------- 2. masking after the softmax
st.header(tr("2 · Masking after the softmax"))
st.markdown(
    tr(
        "Zeroing the future's weights *after* the softmax leaves every row that had weight on the future summing to "
        "less than 1: the future's scores were already used to normalise the row. The missing mass, the leak, is "
        "exactly the weight the future had; the last row has no future, so it still sums to 1. Here are the numbers "
        "for the *Causal masking* page's sequence (the one it starts with, until you edit it there):"
    )
)
st.latex(MASK_AFTER_SOFTMAX_LATEX)
causal_seq = st.session_state.get("causal_seq", None)
if causal_seq is None:  # the causal page has not been opened yet: its starting sequence
    causal_seq = leak_example().seq
try:
    bug = mask_after_softmax(causal_seq.q, causal_seq.k, causal_seq.v)
except ValueError as err:
    st.error(tr("Cannot compute the after-softmax mask: {error}", error=err))
else:
    # another sequence's row sums, but the very numbers asked for when it is section 1's
    if answer_hidden("pitfalls", "leak"):
        hidden_answer_card(st, tr("The row sums after the mask"))
    else:
        st.dataframe(
            arrow_table(
                {"query": list(causal_seq.tokens), "row sum (bug)": bug.row_sums, "leak = 1 − row sum": bug.leak}
            ),
            hide_index=True,
            width="content",
            column_config={
                # Translators: a column header: the query token of each row
                "query": st.column_config.TextColumn(tr("query")),
                "row sum (bug)": st.column_config.NumberColumn(tr("row sum (bug)"), format="%.6f"),
                "leak = 1 − row sum": st.column_config.NumberColumn(tr("leak = 1 − row sum"), format="%.6f"),
            },
        )
st.page_link(
    "pages/causal.py",
    label=tr("See it live beside the correct mask, with the invariance check, on the Causal masking page"),
    icon=":material/fast_forward:",
)

# ---------------------------------------------------------------- 3. attention is not explanation
st.header(tr("3 · Attention is not explanation"))
a_seq = st.session_state[SEQUENCE_KEY]
try:
    twin = same_pattern_different_output(a_seq.q, a_seq.k, a_seq.v, int(STATE["seed"]))
except ValueError as err:
    st.error(tr("Cannot build the two inputs: {error}", error=err))
    stop()
st.markdown(
    tr(
        "A heatmap shows which positions each position *read* from, and how much. It does not show what that "
        "information meant, or why it mattered. Input **A** below is the Playground's sequence. {input_b} "
        "Same attention pattern, different outputs.",
        input_b=input_b_text(twin.rotation),
    )
)
st.latex(rotation_latex(twin.rotation))
number_box(
    st.columns([1, 3])[0],
    tr("seed for input B"),
    **STATE.widget("seed"),
    help=tr(
        "Picks the rotation R and B's values. Input A is the Playground's sequence: edit it there. "
        "(With d_k = 1 the only rotation is R = 1; the page then also draws R = −1, which is not a rotation but is "
        "orthogonal, and keeps the scores too.)"
    ),
)
tok = a_seq.tokens
a_col, b_col = st.columns(2, gap="large")
for col, name, (q, k, v), weights, output in (
    (a_col, "A", twin.a, twin.weights_a, twin.output_a),
    (b_col, "B", twin.b, twin.weights_b, twin.output_b),
):
    with col:
        st.subheader(tr("Input {name}", name=name))
        show_vectors(st, tok, number_format="%.2f", q=q, k=k, v=v)
        chart(
            st,
            attention_heatmap(weights, tok, tok, title=tr("weights of {name}", name=name)),
            width="stretch",
            key=f"pitfalls_heat_{name}",
            share=0.5,
        )
        chart(
            st,
            matrix_heatmap(
                output,
                tok,
                [f"out{j + 1}" for j in range(output.shape[1])],
                title=tr("output of {name} = weights @ V", name=name),
            ),
            width="stretch",
            key=f"pitfalls_out_{name}",
            share=0.5,
        )
weights_metric, output_metric = st.columns(2)
weights_metric.metric(
    tr("largest |weights A − weights B|"),
    num(row_max_abs_diff(twin.weights_a, twin.weights_b).max(), ".1e"),
    help=tr("Rounding only: the two patterns are the same."),
)
output_metric.metric(
    tr("largest |output A − output B|"),
    num(row_max_abs_diff(twin.output_a, twin.output_b).max(), ".3f"),
    help=tr("The same pattern moved different information."),
)
st.info(
    tr(
        "**The weights show which positions were read and how much, not what that meant or why.** Two inputs, or "
        "two heads, can share one pattern and compute entirely different things: to know what a head does, look at "
        "the values it moves and what happens to the output, not only at the heatmap."
    ),
    icon=":material/search:",
)
st.markdown(tr(PAPER_TEXT))

show_snippet(
    attention_snippet(seq.tokens, seq.q, seq.k, seq.v, causal=False, scale=True)
    + "\nwrong = Q @ K  # a pitfall: runs only when n == d_k, and then it is not Q @ K.T"
    + "\nalso_wrong = K @ Q.T  # the other: always runs, rows still sum to 1 after the softmax, keys attend to queries"
)
