"""Where is position? Attention cannot see order; four ways to add it; masks beyond causal."""

from ui.shared_state import require_app_entry

require_app_entry()

import numpy as np
import streamlit as st

from attention.positions import ALIBI_LATEX, ROPE_LATEX, ROPE_OFFSET_LATEX, SINUSOIDAL_LATEX, alibi_slopes
from attention.positions import sinusoidal_encoding as sinusoidal_table
from attention.pretrained import MODEL_NAME
from figures.positions import (
    alibi_heads_figure,
    four_ways_figure,
    numbered_matrix,
    offset_figure,
    padded_heatmap,
    reach_heatmap,
    sinusoidal_figure,
    slopes_figure,
)
from lessons.positions import alibi, learned, masks, rope, shuffle, sinusoidal, toy
from locales import num, sentence_space, tr
from ui.charts import cached_figure, cached_weights_figure, cell_font, chart, show_snippet, square_chart
from ui.checks import outcome_box
from ui.classroom_open_question import answer_hidden, hidden_answer_card
from ui.declared.positions import MAX_TEXT_CHARS, STATE
from ui.minilm import learned_table, model_or_reason
from ui.number_box import number_box
from ui.page_state import section, stop
from ui.positions_shuffle import order_is_invisible
from ui.safe_text import escape_markdown
from ui.snippets import four_ways_snippet, masks_snippet
from ui.tables import arrow_table


def the_words() -> toy.Toy:
    """The words every section uses, their width and seed: the toy they make (the page stops on bad words)."""
    st.markdown(tr("**The words** (every section below uses them)"))
    text_col, width_col, seed_col = st.columns([6, 2, 2], vertical_alignment="bottom")
    text_col.text_input(
        tr("Words, separated by spaces"),
        **STATE.widget("text"),
        max_chars=MAX_TEXT_CHARS,
        help=tr(
            "2 to {most} words. Each word gets its own random vector (the same word, the same vector), "
            "with no position in it.",
            most=toy.MAX_WORDS,
        ),
    )
    width_col.selectbox(
        "d_model",
        **STATE.widget("d_model"),
        help=tr("Length of each word's vector, and of the toy head's q, k and v."),
    )
    number_box(
        seed_col,
        # Translators: the seed of a random number generator
        tr("Seed"),
        **STATE.widget("seed"),
        help=tr("Seeds the word vectors and the toy head's W_Q, W_K and W_V, the matrices that make q, k and v."),
    )
    words, problem = toy.parse_words(STATE["text"])
    if problem:
        st.error(tr("The words cannot be used: {problem}. Change the text above.", problem=escape_markdown(problem)))
        stop()
    return toy.Toy.build(words, STATE["d_model"], STATE["seed"])


# ---------------------------------------------------------------- 2 · four ways to add position
def four_ways(example: toy.Toy, alibi_heads: int) -> None:
    """The toy head without position and with the three ways that need no training, side by side."""
    st.header(tr("2 · Four ways to add position"))
    st.markdown(tr(toy.FOUR_WAYS_INTRO))
    weights = toy.methods_weights(example.x, example.head, alibi_heads)
    labels = [toy.method_label(m) for m in toy.TOY_METHODS]
    figure = cached_figure(four_ways_figure, weights, example.words, labels)
    chart(st, figure, key="pos_four_ways")
    st.caption(alibi.alibi_unmasked(alibi_heads))


def learned_absolute(model, missing, words) -> None:
    """The real model's learned table, and one of its first layer's heads with it and without it."""
    st.subheader(tr("Learned absolute: the real model's own table"))
    st.markdown(learned.learned_intro())
    if model is None:
        st.info(learned.learned_not_installed(), icon=":material/inventory_2:")
        st.caption(tr("Details: {details}", details=missing))
        return
    the_learned_table(model.config.max_positions)
    st.markdown(tr(learned.LEARNED_HEAD_INTRO))
    if unknown := learned.unknown_note(model, MODEL_NAME, words):
        st.caption(escape_markdown(unknown))
    st.slider(
        tr("Head of layer 1"),
        **STATE.widget("head"),
        help=tr(
            "One of the {heads} heads of the first layer (head 3 attends to the previous token).",
            heads=model.config.n_heads,
        ),
    )
    pieces = learned.minilm_pieces(model, words)
    # how much the head reads the previous token with E_pos and without: whether it sees where each word stands,
    # which the shuffle question asks (of this head, with the learned table)
    hidden = answer_hidden("positions", "shuffle")
    for col, positions, title, key in zip(
        st.columns(2, gap="large"),
        (True, False),
        (tr("with E_pos (as trained)"), tr("without E_pos")),
        ("pos_learned_with", "pos_learned_without"),
    ):
        steps = learned.minilm_head(model, pieces.ids, STATE["head"] - 1, positions=positions)
        previous = learned.previous_token_weight(steps.weights)
        if hidden:
            col.markdown(f"**{title}**")
        else:
            weight = num(previous, ".2f")
            col.markdown(tr("**{title}**: mean weight on the previous token {weight}", title=title, weight=weight))
        square_chart(col, cached_weights_figure(steps, pieces.tokens, 0.5), key=key, share=0.5)
    if hidden:
        hidden_answer_card(st, tr("The mean weight this head puts on the previous token, with E_pos and without"))


@section
def the_learned_table(max_positions: int) -> None:
    """The table's similarities and what they show, redrawn alone when the number of positions changes."""
    table_col, reading_col = st.columns(2, gap="large")
    with reading_col:
        st.selectbox(
            tr("Positions shown"),
            **STATE.widget("table_n"),
            help=tr("The first N of the table's {positions} positions.", positions=max_positions),
        )
    similarity, by_distance, reading = learned_table(STATE["table_n"])
    with table_col:
        square_chart(st, similarity, key="pos_learned_similarity", share=0.5)
    with reading_col:
        st.latex(learned.POSITION_COSINE_LATEX)
        st.dataframe(by_distance, hide_index=True, key="pos_learned_distances")
        st.markdown(learned.learned_table_reading(reading))


def sinusoidal_section() -> tuple[int, int]:
    """The sinusoidal table and its shift; returns the table's width and the shift (the snippet reads them)."""
    st.subheader(tr("Sinusoidal (Vaswani et al. 2017)"))
    st.markdown(tr(sinusoidal.SINUSOIDAL_INTRO))
    st.latex(SINUSOIDAL_LATEX)
    table_d_col, shift_col = st.columns(2)
    table_d_col.selectbox(
        tr("Table width d"),
        **STATE.widget("table_d"),
        help=tr("Columns of the table on show (the toy head above uses d_model columns)."),
    )
    number_box(
        shift_col,
        tr("Shift k"),
        **STATE.widget("shift"),
        help=tr("How many positions to move: PE[p + k] is computed from PE[p] by the matrix M_k below."),
    )
    table_d, shift = STATE["table_d"], STATE["shift"]
    table = sinusoidal_table(sinusoidal.TABLE_POSITIONS, table_d)
    chart(st, cached_figure(sinusoidal_figure, table), key="pos_sinusoidal_table")
    st.markdown(tr(sinusoidal.SHIFT_IS_ROTATION))
    st.latex(sinusoidal.SHIFT_LATEX)
    rotation_col, check_col = st.columns(2, gap="large")
    small_d = min(table_d, 16)
    corner = sinusoidal.shift_matrix(shift, table_d)[:small_d, :small_d]  # corner of the matrix checked on the right
    ticks = [str(i) for i in range(small_d)]
    figure = cached_figure(numbered_matrix, corner, ticks, ticks, cell_font(small_d, 0.5))
    square_chart(rotation_col, figure, key="pos_shift_matrix", share=0.5)
    rotation_col.caption(sinusoidal.shift_matrix_caption(shift, table_d, small_d))
    shift_ok, sentence = sinusoidal.shift_sentence(sinusoidal.TABLE_POSITIONS, table_d, shift)
    outcome_box(check_col, shift_ok, escape_markdown(sentence))
    check_col.markdown(sinusoidal.row_length_paragraph(shift, table_d))
    return table_d, shift


def rotary(example: toy.Toy) -> int:
    """RoPE: its formula, the check that moving every position keeps the scores; returns the offset."""
    st.subheader(tr("RoPE, rotary position embedding (Su et al. 2021, RoFormer)"))
    st.markdown(tr(rope.ROPE_INTRO))
    st.latex(ROPE_LATEX)
    st.latex(ROPE_OFFSET_LATEX)
    offset_col, rope_result_col = st.columns([1, 2], vertical_alignment="bottom")
    number_box(
        offset_col,
        tr("Move every position by"),
        **STATE.widget("offset"),
        help=tr("The words keep their order but start at this position instead of 0: every offset m − n is the same."),
    )
    offset, words, n_words = STATE["offset"], example.words, len(example.words)
    q, k = toy.toy_queries_keys(example.x, example.head)
    rope_check = rope.rope_offset_check(q, k, offset)
    outcome_box(rope_result_col, rope_check.passed, rope_check.sentence())
    scores_col, moved_col = st.columns(2, gap="large")
    for col, scores, first, key in (
        (scores_col, rope_check.scores, 0, "pos_rope_scores"),
        (moved_col, rope_check.moved, offset, "pos_rope_moved"),
    ):
        col.markdown(
            tr(
                "**scores at positions {first}…{last}** (q·k after rotation; rows: queries, columns: keys)",
                first=first,
                last=first + n_words - 1,
            )
        )
        font = cell_font(n_words, 0.5)
        figure = cached_figure(numbered_matrix, scores, words, words, font, digits=1)
        square_chart(col, figure, key=key, share=0.5)
    st.markdown(rope.rope_offset_paragraph(escape_markdown(words[0])))
    by_offset = rope.rope_score_by_offset(q[0], k[0], rope.OFFSETS)
    chart(st, cached_figure(offset_figure, rope.OFFSETS, by_offset), key="pos_rope_offsets")
    return offset


def alibi_section(example: toy.Toy) -> np.ndarray:
    """ALiBi: each head's slope and the window it makes; returns the slopes."""
    st.subheader(tr("ALiBi, attention with linear biases (Press et al. 2022)"))
    st.markdown(tr(alibi.ALIBI_INTRO))
    st.latex(ALIBI_LATEX)
    heads_col, slopes_col = st.columns([2, 3], gap="large")
    heads_col.slider(
        tr("Heads H"),
        **STATE.widget("heads"),
        help=tr(
            "H = 8 gives the paper's slopes 1/2, 1/4, …, 1/256, and every power of two its 2^(−8h/H); for other "
            "H, the slopes come from the workaround in the authors' code (the paper trains powers of two only)."
        ),
    )
    slopes = alibi_slopes(STATE["heads"])
    heads_col.dataframe(
        arrow_table(alibi.slope_table(slopes)),
        hide_index=True,
        width="stretch",
        column_config={
            "h": st.column_config.NumberColumn("h", width=40, help=tr("The head, from 1.")),
            "m_h": st.column_config.TextColumn(tr("slope m_h"), help=tr("The head's slope, a power of 2.")),
            "1/m_h": st.column_config.NumberColumn(
                "1/m_h", width=70, help=tr("Positions back at which the weight has shrunk by a factor e.")
            ),
        },
        key="pos_alibi_slopes_table",
    )
    chart(slopes_col, cached_figure(slopes_figure, slopes), key="pos_alibi_slopes")
    st.markdown(sentence_space().join(alibi.alibi_reading(slopes, len(example.words))))
    alibi_windows_grid(example, slopes)
    return slopes


@section
def alibi_windows_grid(example: toy.Toy, slopes: np.ndarray) -> None:
    """Each ALiBi head's weights, its penalty alone or added to the toy head's scores: redrawn alone by its switch."""
    st.toggle(
        tr("Add the toy head's scores"),
        **STATE.widget("alibi_scores"),
        help=tr(
            "Off: every score equal, so each heatmap shows the bias alone, the head's recency window. On: the toy "
            "head's scores on your words plus each head's penalty."
        ),
    )
    if STATE["alibi_scores"]:
        weights = alibi.alibi_head_weights(example.x, example.head, len(slopes))
        st.caption(tr("The toy head's scores on your words, plus each ALiBi head's penalty, with the causal mask."))
    else:
        weights = alibi.alibi_windows(len(example.words), len(slopes))
        st.caption(tr(alibi.ALIBI_PENALTY_ALONE))
    figure = cached_figure(alibi_heads_figure, weights, example.words, slopes)
    chart(st, figure, key="pos_alibi_heads")


# ---------------------------------------------------------------- 3 · masks beyond causal
def sliding_window() -> tuple[int, int, int]:
    """The sliding window's reach over layers; returns n, the window and the layers (the snippet reads them)."""
    st.subheader(tr("A sliding window"))
    st.markdown(tr(masks.SLIDING_WINDOW_INTRO))
    st.latex(masks.REACH_LATEX)
    n_col, window_col, layers_col = st.columns(3)
    n_col.slider(
        tr("Sequence length n"),
        **STATE.widget("n"),
        help=tr("Positions in this example (the window's heatmap only: no words needed)."),
    )
    window_col.slider(
        tr("Window w"),
        **STATE.widget("window"),
        help=tr("Keys each query sees in one layer, itself included (w = n: the plain causal mask)."),
    )
    layers_col.slider(tr("Layers L"), **STATE.widget("layers"), help=tr("How many sliding-window layers are stacked."))
    if window_note := STATE.note("window"):
        st.info(window_note, icon=":material/straighten:")
    n, window, layers = STATE["n"], STATE["window"], STATE["layers"]
    first = masks.window_reach(n, window, layers)
    reach_col, reach_text_col = st.columns(2, gap="large")
    reach_text_col.markdown(masks.reach_paragraph(window, layers))
    if answer_hidden("positions", "reach"):
        hidden_answer_card(reach_col, tr("The reach heatmap and the count of the positions the last query heard from"))
    else:
        figure = cached_figure(reach_heatmap, first, layers, square=True)
        square_chart(reach_col, figure, key="pos_window_reach", share=0.5)
        outcome_box(reach_text_col, *masks.reach_sentence(n, window, layers, masks.last_query_reach(first)))
    reach_text_col.caption(masks.mistral_sentence())
    return n, window, layers


@section
def padding_section(example: toy.Toy, n: int, window: int, layers: int) -> None:
    """The padding mask, redrawn alone when its lengths or its causal switch change."""
    st.subheader(tr("Padding: a batch of two sequences of different lengths"))
    st.markdown(tr(masks.PADDING_INTRO))
    len_a_col, len_b_col = st.columns(2, gap="large")
    len_a_col.slider(
        tr("Sequence 1: the first words"),
        **STATE.widget("len_a"),
        help=tr("Sequence 1 is this many words from the start of your text."),
    )
    len_b_col.slider(
        tr("Sequence 2: the last words"),
        **STATE.widget("len_b"),
        help=tr("Sequence 2 is this many words from the end of your text."),
    )
    for col, name in zip((len_a_col, len_b_col), ("len_a", "len_b")):
        if note := STATE.note(name):
            col.info(note, icon=":material/straighten:")
    st.toggle(
        tr("Causal mask too"),
        **STATE.widget("pad_causal"),
        help=tr("Apply the causal mask as well as the padding mask (both apply)."),
    )
    pad_causal = STATE["pad_causal"]
    sequences = masks.padding_sequences(example.words, STATE["len_a"], STATE["len_b"])
    padding = masks.padding_check(sequences, example.head, example.d_model, example.seed, causal=pad_causal)
    for b, col in enumerate(st.columns(2, gap="large")):
        length, n_padded = padding.lengths[b], len(padding.labels[b])
        col.markdown(masks.sequence_heading(b + 1, int(length), n_padded))
        weights, used, labels = padding.result.weights[b], padding.result.used[b], padding.labels[b]
        figure = cached_figure(padded_heatmap, weights, used, labels)
        chart(col, figure, key=f"pos_padding_{b + 1}", share=0.5)
    outcome_box(st, padding.passed, padding.sentence())
    snippet = masks_snippet(
        n=n,
        window=window,
        layers=layers,
        sequences=sequences,
        d_model=example.d_model,
        seed=example.seed,
        causal=pad_causal,
    )
    show_snippet(snippet, key="pos_snippet_masks")


# ---------------------------------------------------------------- the page
STATE.load()
st.title(tr("Where is position?"))
st.markdown(tr(shuffle.INTRODUCTION))
STATE.show_warnings()
example = the_words()
model, missing = model_or_reason()
alibi_heads = STATE["heads"]  # set in section 2, read by sections 1 and 2
order_is_invisible(example, model, alibi_heads)
four_ways(example, alibi_heads)
learned_absolute(model, missing, example.words)
table_d, shift = sinusoidal_section()
offset = rotary(example)
slopes = alibi_section(example)
four = dict(
    d_model=example.d_model, seed=example.seed, table_d=table_d, shift=shift, offset=offset, alibi_heads=len(slopes)
)
show_snippet(four_ways_snippet(example.words, **four), key="pos_snippet_four_ways")
st.header(tr("3 · Masks beyond causal"))
n, window, layers = sliding_window()
padding_section(example, n, window, layers)
