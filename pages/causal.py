"""Causal masking: the mask on and off, the check that the future cannot leak, and the after-softmax bug."""

import numpy as np
import pandas as pd
import streamlit as st

from attention import attention_steps
from attention.sequence import TokenSequence
from figures.causal import difference_bars, leak_bars
from figures.heatmaps import attention_heatmap, matrix_heatmap
from figures.steps import steps_heatmap
from lessons.pitfalls import (
    CAUSAL_LATEX,
    MASK_AFTER_SOFTMAX_LATEX,
    InvarianceResult,
    invariance_check,
    mask_after_softmax,
    randomise_after,
    row_max_abs_diff,
    small_leak,
)
from locales import DECIMAL_COMMA, language, num, tr
from ui.charts import chart, show_snippet
from ui.classroom_open_question import answer_hidden, hidden_answer_card
from ui.declared.causal import SEED_MAX, STATE
from ui.number_box import number_box
from ui.page_state import stop
from ui.sequence_editor import editor_box, reset_sequence, sequence_editor
from ui.shared_state import require_app_entry
from ui.snippets import attention_snippet
from ui.tables import arrow_rows, arrow_table

require_app_entry()

KEY = STATE.key("seq")


def take_snapshot() -> None:
    st.session_state["causal_before"] = st.session_state[KEY]


def restore_snapshot() -> None:
    reset_sequence(KEY, st.session_state["causal_before"])


def randomise_later() -> None:
    """Snapshot the sequence, then give every position after t new random q, k, v (next seed each press)."""
    seq: TokenSequence = st.session_state[KEY]
    t, seed = int(STATE["t"]), int(STATE["seed"])
    st.session_state["causal_before"] = seq
    q, k, v = randomise_after(seq.q, seq.k, seq.v, t, seed)
    reset_sequence(KEY, TokenSequence(seq.tokens, q, k, v))
    STATE.set("seed", (seed + 1) % (SEED_MAX + 1))


def vector_text(row: np.ndarray) -> str:
    """A vector as (0.123, -0.456); with a decimal comma, (0,123; -0,456)."""
    between = "; " if language() in DECIMAL_COMMA else ", "
    return "(" + between.join(num(x, ".3f") for x in row) + ")"


def exact_text(d: float) -> str:
    """A difference as text that never rounds a non-zero to 0."""
    return "0" if d == 0.0 else num(d, ".3g")


def show_check(inv: InvarianceResult, t: int, tok) -> None:
    """The check's verdict, each position's output before and after, and the chart of their differences."""
    if inv.first_changed_input is None:
        st.info(
            tr(
                "Nothing has changed since the snapshot yet: press **Randomise later tokens** or edit a row after "
                "position {t}.",
                t=t,
            ),
            icon=":material/touch_app:",
        )
    elif inv.passed:
        if inv.later_changed:
            st.success(
                tr(
                    "✅ Check passed: the outputs at positions 0…{t} are exactly unchanged (difference 0, bit for "
                    "bit), and later positions moved.",
                    t=t,
                )
            )
        else:
            st.success(
                tr(
                    "✅ Check passed: the outputs at positions 0…{t} are exactly unchanged (difference 0, bit for "
                    "bit).",
                    t=t,
                )
            )
    elif inv.changed_up_to_t:
        st.error(
            tr(
                "❌ Check failed: some output at positions 0…{t} changed. You changed position {changed} itself, "
                "which is not after t = {t}: its own output and the ones after it are allowed to move.",
                t=t,
                changed=inv.first_changed_input,
            )
        )
    else:
        st.error(
            tr(
                "❌ Check failed: some output at positions 0…{t} changed. The future leaked into the past: the mask "
                "is broken.",
                t=t,
            )
        )
    rows = [
        {
            "position": i,
            "token": tok[i],
            "output before": vector_text(inv.before[i]),
            "output after": vector_text(inv.after[i]),
            "max |after − before|": exact_text(inv.diff[i]),
            "check": ("✅" if inv.diff[i] == 0.0 else "❌") if i <= t else "—",
        }
        for i in range(len(tok))
    ]
    check_table_col, check_bars_col = st.columns([3, 2], gap="large")
    check_table_col.dataframe(
        arrow_rows(rows),
        hide_index=True,
        width="stretch",
        column_config={
            # Translators: "pos" is a short column header for "position"
            "position": st.column_config.NumberColumn(tr("pos"), width=50),
            "token": st.column_config.TextColumn(tr("token"), width=70),
            "output before": st.column_config.TextColumn(tr("output before")),
            "output after": st.column_config.TextColumn(tr("output after")),
            "max |after − before|": st.column_config.TextColumn(
                tr("max |Δ|"), width=80, help=tr("Largest change of this position's output; '0' means exactly 0.")
            ),
            # Translators: "check" is a column header: the verdict of the check for this position
            "check": st.column_config.TextColumn(
                tr("check"), width=60, help=tr("Positions up to t must be exactly 0.")
            ),
        },
    )
    chart(check_bars_col, difference_bars(inv.diff, t, tok), width="stretch", key="causal_diff_bars")


STATE.load()
if STATE.link_read:  # a sequence from a link (a class's move, a solution shown) is the check's new "before"
    st.session_state.pop("causal_before", None)
st.title(tr("Causal masking"))
st.markdown(
    tr(
        "A language model predicts the next token, so position *i* must not look at anything after *i*. The causal "
        "mask adds $-\\infty$ to every score above the diagonal **before** the softmax: $e^{-\\infty} = 0$, so the "
        "future gets weight exactly 0 and each row still sums to 1 over the positions that remain."
    )
)
st.latex(CAUSAL_LATEX)
STATE.show_warnings()

st.markdown(tr("**The sequence** (the Playground's editor: edit any vector and everything below follows)"))
with editor_box(tr("Edit the sequence: q, k, v and labels")):
    seq = sequence_editor(KEY)
seq = st.session_state[KEY]
tok = seq.tokens
try:
    plain = attention_steps(seq.q, seq.k, seq.v, causal=False)
    masked = attention_steps(seq.q, seq.k, seq.v, causal=True)
    bug = mask_after_softmax(seq.q, seq.k, seq.v)
except ValueError as err:
    st.error(tr("Cannot compute attention: {error}", error=err))
    stop()

st.header(tr("1 · The mask off and on"))
off_col, on_col = st.columns(2, gap="large")
with off_col:
    st.markdown(tr("**Mask off**: every query sees every key"))
    chart(st, steps_heatmap(plain, tok), width="stretch", key="causal_heat_off", share=0.5)
with on_col:
    st.markdown(tr("**Mask on**: nothing above the diagonal"))
    if answer_hidden("causal", "weight"):
        hidden_answer_card(st, tr("The weights with the mask on"))
    else:
        chart(st, steps_heatmap(masked, tok), width="stretch", key="causal_heat_on", share=0.5)
scores_col, reading_col = st.columns(2, gap="large")
with scores_col:
    st.markdown(tr("**Masked scores** Q Kᵀ/√d_k + M: what the softmax sees"))
    chart(
        st,
        matrix_heatmap(masked.masked, tok, tok, height=max(260, 48 * seq.n + 110)),
        width="stretch",
        key="causal_masked_scores",
        share=0.5,
    )
with reading_col:
    st.markdown(
        tr(
            "**Reading the two heatmaps.** Above the diagonal, the masked scores are $-\\infty$ and "
            "$e^{-\\infty} = 0$: those weights are exactly 0, not merely small. Below the diagonal the weights "
            "change too: with the mask on, each row's weight is shared among fewer keys, so the ones that remain "
            "grow. The first token can only attend to itself, so its row is a single 1."
        )
    )

st.header(tr("2 · The check: the future cannot leak"))
st.markdown(
    tr(
        "If the mask works, the output at position *t* depends only on positions 0…*t*. So: pick *t*, change any "
        "**later** token (press the button, or edit a later row in the editor above), and compare the outputs. "
        "Every position up to *t* must come out **exactly** the same, bit for bit (no tolerance); later positions "
        "may move."
    )
)
if seq.n < 2:
    st.info(tr("With a single position there is no later token to change: give the sequence at least 2 positions."))
else:
    before: TokenSequence = st.session_state.setdefault("causal_before", seq)
    if before.q.shape != seq.q.shape or before.v.shape != seq.v.shape:
        st.session_state["causal_before"] = before = seq
        st.info(tr("The sequence changed size, so the snapshot was taken again from the current vectors."))
    t_col, seed_col = st.columns([3, 1], vertical_alignment="bottom")
    if seq.n > 2:
        t = t_col.slider(
            tr("position t"),
            **STATE.widget("t"),
            help=tr("Outputs at positions 0..t must not change when only tokens after t change."),
        )
    else:  # a slider needs two ends: with 2 positions, t = 0 is the only choice
        t = STATE.fit("t")
        t_col.markdown(tr("position **t = 0** (with 2 positions, the only one that has a later token)"))
    STATE.notes(t_col)
    number_box(
        seed_col,
        # Translators: "seed" is the random-number seed
        tr("seed"),
        **STATE.widget("seed"),
        help=tr("Seed for the random later tokens (goes up by one after each press)."),
    )
    # the buttons on a row of their own, each as wide as its label: beside the slider and the seed, on a
    # projector (1280 px, presenter mode), they read "Randomise later …" and "Snaps…"
    buttons = st.container(horizontal=True)
    buttons.button(
        tr("Randomise later tokens"),
        key="causal_randomise",
        disabled=STATE.held,  # a class question is open: the page stays as it was asked
        on_click=randomise_later,
        type="primary",
        icon=":material/casino:",
        help=tr("Take a snapshot, then replace q, k and v of every position after t with random numbers."),
    )
    buttons.button(
        # Translators: a button: keep the current vectors as "before"
        tr("Snapshot"),
        key="causal_snapshot",
        disabled=STATE.held,
        on_click=take_snapshot,
        help=tr("Use the current vectors as 'before'; then edit a later row in the editor above."),
    )
    buttons.button(
        # Translators: a button: put the snapshot back
        tr("Restore"),
        key="causal_restore",
        disabled=STATE.held,
        on_click=restore_snapshot,
        help=tr("Put the snapshot's vectors back into the editor."),
    )
    try:
        inv = invariance_check((before.q, before.k, before.v), (seq.q, seq.k, seq.v), t)
    except ValueError as err:
        st.error(tr("Cannot run the check: {error}", error=err))
        stop()
    if answer_hidden("causal", "changes"):
        hidden_answer_card(st, tr("The check's result (the verdict, the outputs before and after, their differences)"))
    else:
        show_check(inv, t, tok)

st.header(tr("3 · The bug beside it: masking after the softmax"))
st.markdown(
    tr(
        "A tempting shortcut: take the ordinary softmax, then set the weights above the diagonal to 0. The future's "
        "scores have already been used in each row's normalisation, so what is left no longer sums to 1: the missing "
        "part, the **leak**, is exactly the weight the future had. The output shrinks by that much, and it still "
        "depends on the future tokens (through the normaliser). Here the mask is a 0/1 matrix $B$ that *multiplies* "
        "the weights, unlike the $M$ of 0 and $-\\infty$ that is *added* to the scores above."
    )
)
st.latex(MASK_AFTER_SOFTMAX_LATEX)
correct_col, bug_col = st.columns(2)
with correct_col:
    st.markdown(tr("**Correct**: −∞ before the softmax"))
    if answer_hidden("causal", "weight"):
        hidden_answer_card(st, tr("The correctly masked weights"))
    else:
        chart(
            st,
            attention_heatmap(masked.weights, tok, tok, allowed=masked.allowed),
            width="stretch",
            key="causal_heat_correct",
            share=0.5,
        )
with bug_col:
    st.markdown(tr("**Bug**: softmax first, then zero the future"))
    chart(
        st,
        attention_heatmap(bug.weights, tok, tok, allowed=masked.allowed),
        width="stretch",
        key="causal_heat_bug",
        share=0.5,
    )
leak_table = arrow_table(
    {
        "query": list(tok),
        "row sum (correct)": masked.weights.sum(axis=1),
        "row sum (bug)": bug.row_sums,
        "leak = 1 − row sum": bug.leak,
        "max |Δ output|": row_max_abs_diff(bug.output, masked.output),
    }
)
LEAK_COLUMNS = {  # short headers, the full meaning in each column's help
    "row sum (correct)": (tr("sum, correct"), tr("Row sum of the correctly masked weights: always 1.")),
    "row sum (bug)": (tr("sum, bug"), tr("Row sum of the weights masked after the softmax.")),
    # Translators: a short column header: the weight lost to the future
    "leak = 1 − row sum": (tr("leak"), tr("1 − row sum: the weight the future had before it was zeroed.")),
    "max |Δ output|": (
        tr("max |Δ out|"),
        tr("Largest difference between this row's buggy output and the correct one."),
    ),
}
leak_table_col, leak_bars_col = st.columns([3, 2], gap="large")
leak_table_col.dataframe(
    leak_table,
    hide_index=True,
    width="stretch",
    column_config={
        # Translators: a column header: the query token of each row
        "query": st.column_config.TextColumn(tr("query"), width=70),
        **{
            c: st.column_config.NumberColumn(label, format="%.6f", help=text, width=100)
            for c, (label, text) in LEAK_COLUMNS.items()
        },
    },
)
leak_table_col.caption(
    tr(
        "leak = 1 − the bug's row sum. max |Δ out|: how far each buggy output row is from the correct one. "
        "The last query sees every key, so nothing is masked in its row: no leak, no error."
    )
)
chart(leak_bars_col, leak_bars(bug.row_sums, bug.leak, tok), width="stretch", key="causal_leak_bars")

st.subheader(tr("A small leak looks like noise"))
quiet = small_leak(t=2)
st.markdown(
    tr(
        "Here every query finds its own key and scores 0 on every other (q = 4·I, k = 3·I, d_k = 6), so the future "
        "had little weight to lose: the leak is at most **{leak}** and the buggy outputs are "
        "within **{drift}** of the correct ones. Looked at by eye, or checked with a loose "
        "tolerance, this passes for rounding. The invariance check does not look at the size of the numbers: it "
        "changes the tokens after *t* and asks whether anything up to *t* moved at all.",
        leak=num(quiet.largest_leak, ".1%"),
        drift=num(quiet.largest_drift, ".3f"),
    )
)
st.table(  # wraps its text: the headers are sentences
    pd.DataFrame(
        {
            tr("implementation"): [tr("correct: −∞ before the softmax"), tr("bug: zeroed after the softmax")],
            tr("largest leak"): ["0 %", num(quiet.largest_leak, ".1%")],
            tr("max |Δ output| at 0…{t} when the tokens after {t} change", t=quiet.t): [
                exact_text(quiet.checks[name].diff[: quiet.t + 1].max()) for name in ("correct", "bug")
            ],
            # Translators: a column header: the verdict of the invariance check
            tr("check"): [
                tr("✅ passed") if quiet.checks[name].passed else tr("❌ failed: the future leaked")
                for name in ("correct", "bug")
            ],
        }
    ).set_index(tr("implementation")),
)

show_snippet(attention_snippet(seq.tokens, seq.q, seq.k, seq.v, causal=True, scale=True))
