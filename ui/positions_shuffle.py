"""Section 1 of pages/positions.py, "Order is invisible": the shuffle's controls, the toy head (or MiniLM's first
layer) before and after the shuffle without position information and with the chosen method, and the check table.

The idea's prose, equation and code are in lessons/positions/shuffle.py; this module only draws them.
"""

from __future__ import annotations

import streamlit as st

from attention.pretrained import MODEL_NAME
from lessons.positions import learned, shuffle, toy
from locales import tr
from ui.charts import cached_weights_figure, show_snippet, square_chart
from ui.classroom_open_question import answer_hidden, hidden_answer_card
from ui.declared.positions import SHUFFLE_MAX, STATE
from ui.minilm import minilm_checks
from ui.number_box import number_box
from ui.page_state import section
from ui.safe_text import escape_markdown
from ui.snippets import shuffle_snippet
from ui.tables import arrow_table


@section
def order_is_invisible(example: toy.Toy, model, alibi_heads: int) -> None:
    """Section 1, redrawn alone when its shuffle, order or method changes: nothing below reads them."""
    st.header(tr("1 · Order is invisible"))
    st.markdown(tr(shuffle.SHUFFLE_INTRO))
    st.latex(shuffle.SHUFFLE_LATEX)
    shuffle_controls()
    number, words = STATE["shuffle"], example.words
    perm = shuffle.permutation(len(words), number)
    shuffled = shuffle.apply_permutation(words, perm)
    toy_checks = shuffle.toy_shuffle_checks(example.x, example.head, perm, alibi_heads)
    st.markdown(shuffle.the_two_orders(escape_markdown(" ".join(words)), number, escape_markdown(" ".join(shuffled))))
    if shuffle.is_original_order(perm):
        st.info(
            tr("This is the original order: press **Shuffle the words** to move them."), icon=":material/touch_app:"
        )
    hidden = answer_hidden("positions", "shuffle")
    side_by_side(toy_checks, words, shuffled, model, hidden)
    if hidden:
        hidden_answer_card(st, tr("The shuffled order's weights, the checks' outcomes and the check table"))
    else:
        real = () if model is None else minilm_checks(words, number, STATE["head"])
        real_name = tr("{model}, layer 1 head {head}", model=MODEL_NAME.split("/")[-1], head=STATE["head"])
        rows = shuffle.check_rows(toy_checks, real, real_name)
        st.dataframe(arrow_table(shuffle.check_table(rows)), hide_index=True, width="stretch", key="pos_check_table")
        st.caption(shuffle.rounding_caption(shuffle.rounding_bound(rows), alibi_heads))
    snippet = shuffle_snippet(
        words, d_model=example.d_model, seed=example.seed, shuffle=number, alibi_heads=alibi_heads, head=STATE["head"]
    )
    show_snippet(snippet, key="pos_snippet_shuffle")


def shuffle_controls() -> None:
    """The shuffle's buttons and number, and the method the right-hand column adds."""
    shuffle_col, reset_col, number_col = st.columns([4, 3, 3], vertical_alignment="bottom")
    shuffle_col.button(
        tr("Shuffle the words"),
        key="pos_shuffle_button",
        icon=":material/shuffle:",
        type="primary",
        width="stretch",
        on_click=lambda: STATE.set("shuffle", STATE["shuffle"] % SHUFFLE_MAX + 1),
        help=tr("A new random order (the shuffle number goes up by one)."),
        disabled=STATE.held,
    )
    reset_col.button(
        tr("Original order"),
        key="pos_reset_button",
        width="stretch",
        on_click=lambda: STATE.set("shuffle", 0),
        help=tr("Shuffle number 0: the words as typed."),
        disabled=STATE.held,
    )
    number_box(
        number_col,
        tr("Shuffle number"),
        **STATE.widget("shuffle"),
        help=tr("Which shuffle: 0 is the original order, any other number a fixed random order (so a link shows it)."),
    )
    method_col, _ = st.columns([1, 1])
    method_col.selectbox(
        tr("Position information on the right"),
        **STATE.widget("method"),
        format_func=toy.method_label,
        help=tr("The right-hand column repeats the check with this way of adding position (section 2 explains each)."),
    )


def side_by_side(toy_checks, words, shuffled, model, hidden: bool) -> None:
    """The check without positions and with the chosen method, each before and after the shuffle; with the
    learned table, both columns on the real model, so that they compare like with like. `hidden`: the original
    order only (a class question asks what the shuffle does)."""
    number, method = STATE["shuffle"], STATE["method"]
    left, right = toy_checks["none"], toy_checks.get(method)
    labels, shuffled_labels = words, shuffled
    if method == "learned" and model is not None:
        left, right = minilm_checks(words, number, STATE["head"])
        labels, shuffled_labels = (learned.minilm_pieces(model, w).tokens for w in (words, shuffled))
        st.caption(learned.learned_columns_caption(STATE["head"]))
        if unknown := learned.unknown_note(model, MODEL_NAME, words):
            st.info(escape_markdown(unknown), icon=":material/help:")
    none_col, with_col = st.columns(2, gap="large")
    none_col.subheader(tr("No position information"))
    # Translators: a heading: {method} is a way of adding position, such as "RoPE (rotates q and k)"
    with_col.subheader(tr("With {method}", method=toy.method_label(method)))
    for col, check, key in ((none_col, left, "none"), (with_col, right, "with")):
        if check is None:
            col.info(learned.learned_column_missing())
            continue
        col.markdown(tr("**Original order**"))
        weights_chart(col, check.before, labels, key=f"pos_shuffle_{key}_before")
        if hidden:
            continue
        outcome = tr(shuffle.OUTCOME_HEADINGS[check.outcome])
        col.markdown(tr("**Shuffle {number}**: {outcome}", number=number, outcome=outcome))
        weights_chart(col, check.after, shuffled_labels, key=f"pos_shuffle_{key}_after")
        col.container(border=True).markdown(shuffle.shuffle_verdict(check, "none" if key == "none" else method))


def weights_chart(where, steps, labels, key: str) -> None:
    """A weights heatmap with square cells in half the page's width."""
    square_chart(where, cached_weights_figure(steps, labels, 0.5), key=key, share=0.5)
