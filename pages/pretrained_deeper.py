"""The real model, read deeper: queries and keys as points, attention across layers (rollout), long inputs
made readable, and one head on two sentences that differ in one word."""

import numpy as np
import streamlit as st

from attention.pretrained import EXAMPLE_SENTENCES, MAX_TOKENS, MODEL_NAME, ROLLOUT_LATEX, MiniLMRun, attention_rollout
from figures.pretrained import LINE_THRESHOLD, head_heatmap
from figures.reading import (
    difference_heatmap,
    display_max,
    feed_figure,
    heaviest,
    key_lines,
    query_key_figure,
    rollout_heatmap,
    rows_heatmap,
    rows_lines_figure,
)
from lessons.projection import PCA_LATEX, queries_and_keys
from lessons.reading import (
    LONG_EXAMPLE,
    SENTENCE_PAIRS,
    TRAINED_TOKENS,
    attentionviz_normalise,
    axis_shares,
    chosen_weights,
    heaviest_nearest,
    key_readout,
    largest_differences,
    output_feed,
    pair_difference,
    shown_rows,
    special_share,
    unknown_note,
)
from ui.charts import chart, show_snippet
from ui.classroom_open_question import answer_hidden, hidden_answer_card
from ui.declared.pretrained_deeper import MAX_WORD_CHARS, STATE, fits_a_link
from ui.minilm import MAX_TEXT_CHARS, encode, get_model, n_heads, n_layers, not_installed, read_text
from ui.minilm_inputs import example_menu, pair_menu
from ui.number_box import number_box
from ui.page_state import stop
from ui.questions.pretrained import keep_shown
from ui.safe_text import escape_markdown
from ui.shared_state import require_app_entry
from ui.snippets import deeper_snippet
from ui.tables import arrow_table

require_app_entry()

TITLE = "The real model, read deeper"


def pair_asked_on(text: str) -> bool:
    """Whether `text` is one of section 5's two sentences while the class is asked which token a token of one of
    them reads most (the pair question): sections 2 and 3, which show the same weights on it, hide them too. Both
    sentences, whichever is asked: the prepared pairs differ by one word, so the other's reading is nearly the
    answer. The model reads lower case, with runs of spaces as one: a text that differs only so is the same."""

    def read_as(words: str) -> str:
        return " ".join(words.lower().split())

    pair = {read_as(STATE["a"]), read_as(STATE["b"])}
    return answer_hidden("pretrained_deeper", "pair") and read_as(text) in pair


LINK_NOTE = "The share link leaves this text out (a link cannot hold it); opened, it shows the example instead."
EXAMPLES = {**{s: s for s in EXAMPLE_SENTENCES}, "A long text: 252 tokens, near this app's limit": LONG_EXAMPLE}
ROW_LABELS = {"all": "every token", "last": "the last few tokens", "word": "the tokens of a word"}
POOL_LABELS = {"mean": "the mean-pooled output (the model's embedding)", "cls": "[CLS] at the top"}


@st.cache_resource(max_entries=32, show_spinner=False)
def rollout_of(text: str) -> np.ndarray:
    """The rollout of `text`'s attention, shared read-only by every session (n, n)."""
    rollout = attention_rollout(encode(text).attentions)
    rollout.flags.writeable = False
    return rollout


def pick_clicked_query() -> None:
    """A click on a query's point (trace 0 of the picture) draws its lines."""
    for point in st.session_state["ptd_points"].selection.get("points", []):
        if point.get("curve_number") == 0:
            STATE.set("query", int(point["point_index"]))
            return


def controls(run: MiniLMRun) -> tuple[int, int, bool, list[int]]:
    """The layer, head, averaging and query-row controls; returns (layer, head, mean, rows)."""
    tokens = run.tokens
    layer_col, head_col, mean_col = st.columns([2, 2, 3], vertical_alignment="bottom")
    layer = layer_col.selectbox(
        "Layer",
        **STATE.widget("layer"),
        help=f"Which of the {n_layers()} blocks (1 is closest to the input).",
    )
    head = head_col.selectbox(
        "Head",
        **STATE.widget("head"),
        help=f"Which of the {n_heads()} heads in that block (the points below always show one head).",
    )
    mean = mean_col.toggle(
        "Average the layer's heads",
        **STATE.widget("mean"),
        help=f"Show the mean of the layer's {n_heads()} heads in the heatmap, the lines and the two-sentence view.",
    )
    rows_col, detail_col = st.columns([4, 3], vertical_alignment="bottom")
    mode = rows_col.radio(
        "Query rows to show",
        format_func=ROW_LABELS.get,
        horizontal=True,
        **STATE.widget("rows"),
        help="A long input has too many rows to read: keep only some queries (every key stays).",
    )
    if mode == "last":
        number_box(detail_col, "How many", **STATE.widget("last"), help="How many of the last tokens to show.")
    elif mode == "word":
        detail_col.text_input(
            "Word",
            **STATE.widget("word"),
            max_chars=MAX_WORD_CHARS,
            help="Whole words, any case: 'it' finds 'it' and 'It', not 'its'; a word cut into pieces gives all "
            "of them.",
        )
    rows, why = shown_rows(tokens, mode, last=STATE["last"], word=STATE["word"])
    if why == "no word":
        st.caption("Type a word above to keep only its rows; until then every row is shown.")
    elif why == "no match":
        st.warning(
            f"No token of this text is the word '{escape_markdown(STATE['word'].strip())}': showing every row.",
            icon=":material/search:",
        )
    elif why == "too few":
        st.caption(f"The text has only {len(tokens)} tokens: all of them are shown.")
    return layer, head, mean, rows


def rows_view(run: MiniLMRun, weights: np.ndarray, name: str, rows: list[int]) -> None:
    """The chosen query rows of the weights on show: a heatmap beside the token-to-token lines."""
    tokens, n = run.tokens, run.n_tokens
    if len(rows) == n and n > 64:
        st.caption(f"{n} rows are hard to read: keep the last few, or the rows of one word, above.")
    heat_col, lines_col = st.columns([3, 2], gap="medium")
    title = f"{name.capitalize()}: {len(rows)} of {n} queries"
    chart(heat_col, rows_heatmap(weights[rows], tokens, rows, title=title), key="ptd_rows_heatmap", share=0.6)
    chart(lines_col, rows_lines_figure(weights, tokens, rows, title=title), key="ptd_rows_lines", share=0.4)


def points_view(run: MiniLMRun, layer: int, head: int, rows: list[int], hidden: bool) -> None:
    """Section 3: the head's queries and keys on two principal axes; a clicked query's lines (`hidden`: only the
    controls, while the class answers a question these weights answer)."""
    tokens, n = run.tokens, run.n_tokens
    q, k = run.queries[layer - 1, head - 1], run.keys[layer - 1, head - 1]  # (n, d_head) each
    weights = run.attentions[layer - 1, head - 1]  # (n, n)
    if STATE["query"] >= n:
        st.info(
            f"Query {STATE['query']} is past this text's {n} tokens: no query is chosen.", icon=":material/touch_app:"
        )
        STATE.set("query", -1)
    # a third of the width beside the picture: at 2/7 the toggle read "Normalise as Atten…" on a projector
    # (1280 px, presenter mode)
    picture_col, side_col = st.columns([2, 1], gap="medium")
    viz = side_col.toggle(
        "Normalise as AttentionViz",
        **STATE.widget("viz"),
        help="Yeh et al. (2023): before projecting, scale the queries by c and the keys by 1/c so that their mean "
        "lengths match, then move the keys so that their centre is the queries'. No weight changes; the picture "
        "and its distances do.",
    )
    points = queries_and_keys(*(attentionviz_normalise(q, k) if viz else (q, k)))
    query = side_col.selectbox(
        "Lines from query",
        [-1, *range(n)],
        key=STATE.key("query"),
        format_func=lambda i: "none (click a circle)" if i == -1 else f"{i} · {tokens[i]}",
        help="Or click a query's circle in the picture.",
    )
    selected = None if query == -1 else query
    if hidden:
        hidden_answer_card(picture_col, "The queries and keys of this head, and its heaviest keys")
        return
    fig = query_key_figure(
        points.coords,
        tokens,
        weights,
        axis_shares=axis_shares(points.variances),
        selected=selected,
        named=rows if len(rows) < n else [],
        title=f"Layer {layer}, head {head}: {n} queries and {n} keys, {points.share:.0%} of their spread kept",
    )
    chart(picture_col, fig, key="ptd_points", on_select=pick_clicked_query, selection_mode="points")
    side_col.metric(
        "Spread kept",
        f"{points.share:.0%}",
        help=f"By the two axes: (s₁² + s₂²) / Σ sᵢ² of the SVD of the {2 * n} points; the other "
        f"{q.shape[1] - 2} directions hold the rest.",
    )
    raw, normalised = heaviest_nearest(q, k, weights)
    side_col.caption(
        f"Each query's heaviest key is also its nearest key on the picture for {raw} of the {n} queries drawn "
        f"from the raw vectors, {normalised} after AttentionViz's normalisation."
    )
    if selected is None:
        side_col.caption("Click a query's circle (or choose one above) to draw lines to its heaviest keys.")
        return
    readout = key_readout(q, k, weights, selected, key_lines(weights[selected]))
    st.markdown(f"**Query {selected} · '{escape_markdown(tokens[selected])}'**: its heaviest keys")
    table = arrow_table(
        {
            "key": [f"{r['key']} · {tokens[r['key']]}" for r in readout],
            "weight": [round(r["weight"], 3) for r in readout],
            "score q·k/√d": [round(r["score"], 2) for r in readout],
            "nearness, raw": [f"{r['near_raw']} of {n}" for r in readout],
            "nearness, AttentionViz": [f"{r['near_viz']} of {n}" for r in readout],
        }
    )
    st.dataframe(table, hide_index=True, key="ptd_readout")
    st.caption(
        f"Score: q·k/√{q.shape[1]}, what the softmax turns into the weights. Nearness: the key's rank by distance "
        f"from the query on the picture (1 = nearest of the {n} keys), drawn from the raw vectors and after "
        f"AttentionViz's normalisation (the picture above shows the {'second' if viz else 'first'}). The score is "
        "the same either way; where a rank disagrees with the weight, that picture misleads."
    )


def rollout_view(run: MiniLMRun, text: str, rows: list[int]) -> None:
    """Section 4: the rollout as a heatmap of the chosen rows, and what feeds the output (only the output's choice
    while the class answers the rollout question)."""
    tokens, n = run.tokens, run.n_tokens
    rollout = rollout_of(text)  # (n, n)
    hidden = answer_hidden("pretrained_deeper", "rollout")
    if hidden:
        hidden_answer_card(st, "The rollout, what feeds the output and its shares")
    else:
        zmax, capped = display_max(rollout[rows], tokens)
        fig = rollout_heatmap(rollout[rows], tokens, rows, n_layers=run.attentions.shape[0], zmax=zmax, capped=capped)
        chart(st, fig, key="ptd_rollout", share=1.0)
        if capped:
            st.caption(
                f"The colours stop at {zmax:.2f}: the [CLS] and [SEP] columns go far beyond (hover for their exact "
                "shares), and would otherwise leave every other cell white."
            )
    pool = st.radio(
        "Which output",
        format_func=POOL_LABELS.get,
        horizontal=True,
        **STATE.widget("pool"),
        help="The embedding is the mean of the last layer's vectors: its row of shares is the mean of the rows. "
        "[CLS] is position 0's row (BERT's classifier reads it, Devlin et al. 2019; this model does not use it).",
    )
    if hidden:
        return
    feed = output_feed(rollout, pool)  # (n,), sums to 1
    ymax, cut = display_max(feed, tokens)
    fig = feed_figure(feed, tokens, title=f"Which input tokens feed {POOL_LABELS[pool]}", ymax=ymax if cut else None)
    chart(st, fig, key="ptd_feed")
    top = heaviest(feed, 5)
    special = special_share(feed, tokens)
    st.caption(
        "Largest shares: "
        + ", ".join(f"'{escape_markdown(tokens[i])}' ({i}) {feed[i]:.1%}" for i in top)
        + f". An even spread would give each token {1 / n:.1%}. [CLS] and [SEP] together: {special:.0%}: "
        "many heads park their weight on them (see the previous page), and rollout multiplies that through the layers."
    )


def pair_view(layer: int, head: int, mean: bool) -> tuple[MiniLMRun | None, MiniLMRun | None]:
    """Section 5: the same weights on two sentences side by side, and their difference on shared tokens. Returns
    the model's readings of the two sentences (None where it has none)."""
    pair_menu(
        STATE, ("a", "b"), SENTENCE_PAIRS, key="ptd_pair", help="Copies a prepared pair into the two boxes below."
    )
    a_col, b_col = st.columns(2, gap="medium")
    text_a = a_col.text_input("Sentence A", **STATE.widget("a"))
    text_b = b_col.text_input("Sentence B", **STATE.widget("b"))
    run_a, run_b = read_text(text_a), read_text(text_b)
    if not (fits_a_link("a")(STATE.values()) and fits_a_link("b")(STATE.values())):
        st.caption(LINK_NOTE)
    if run_a is None or run_b is None:
        return run_a, run_b
    if answer_hidden("pretrained_deeper", "pair"):
        hidden_answer_card(st, "The weights on the two sentences and their difference")
        return run_a, run_b
    weights_a, name = chosen_weights(run_a.attentions, layer, head, mean)
    weights_b, _ = chosen_weights(run_b.attentions, layer, head, mean)
    for col, run, weights, label in ((a_col, run_a, weights_a, "A"), (b_col, run_b, weights_b, "B")):
        fig = head_heatmap(weights, run.tokens, title=f"Sentence {label}: {name}")
        chart(col, fig, key=f"ptd_pair_{label.lower()}", share=0.5)
    for note in (unknown_note(run_a.tokens, "sentence A's"), unknown_note(run_b.tokens, "sentence B's")):
        if note:
            st.info(note, icon=":material/help:")
    if run_a.tokens == run_b.tokens:
        st.info(
            "The two sentences are the same to the model (the same tokens), so the head's weights are the same: "
            "there is no difference to show. Change a word in one of them.",
            icon=":material/swap_horiz:",
        )
        return run_a, run_b
    pair = pair_difference(weights_a, weights_b, run_a.tokens, run_b.tokens)
    if pair is None:
        st.info("The two sentences share no token: there is nothing to compare.", icon=":material/swap_horiz:")
        return run_a, run_b
    shared, pos_a, diff = pair.shared, pair.pos_a, pair.diff  # (m,), (m,), (m, m)
    st.markdown(
        f"**The difference, A − B, on the {len(pos_a)} tokens both share** ({pair.only_a} token"
        f"{'' if pair.only_a == 1 else 's'} only in A, {pair.only_b} only in B, left out). Blue: A gives that key "
        "more weight; red: B does. The raw weights, not renormalised: each sentence also spends weight on its own "
        "tokens."
    )
    fig = difference_heatmap(diff, pair.a_block, pair.b_block, shared, pos_a, title=f"A − B: {name}")
    chart(st, fig, key="ptd_pair_diff", share=1.0)
    lines = [
        f"'{escape_markdown(shared[r])}' ({pos_a[r]}) → '{escape_markdown(shared[c])}' ({pos_a[c]}): "
        f"{pair.a_block[r, c]:.2f} in A, {pair.b_block[r, c]:.2f} in B ({diff[r, c]:+.2f})"
        for r, c in largest_differences(diff, 3)
    ]
    st.markdown("Largest differences (positions in A):\n" + "\n".join(f"- {line}" for line in lines))
    return run_a, run_b


STATE.load()
try:
    model = get_model()
except FileNotFoundError as err:
    not_installed(err, TITLE)
    stop()
cfg = model.config

st.title(TITLE)
st.markdown(
    f"The previous page showed every head of **{MODEL_NAME}** and one head up close. This page reads the same "
    "model four more ways: a head's queries and keys as points, attention followed through all the layers, long "
    "inputs cut down to the rows you want, and one head on two sentences that differ in a word. Every number is "
    "computed by this app's own numpy code from the model's weights, and each view says what it cannot tell you."
)
st.info(
    f"**Each of these views simplifies.** A 2-D picture of {cfg.d_head}-dimensional vectors drops most of their "
    "directions; rollout treats the attention weights as the flow between tokens, ignoring the value vectors, "
    "$W_O$ (the output matrix that mixes the heads' results), the feed-forward layers and the vectors' lengths, "
    "and gives the residual path a fixed half. They suggest where to look; the weights and the model's outputs "
    "are what it computed.",
    icon=":material/warning:",
)
STATE.show_warnings()

st.header("1 · Your text")
example_menu(
    STATE,
    "text",
    EXAMPLES,
    key="ptd_example",
    help="Copies the text into the box below; the long one shows how the views cope with 252 tokens.",
)
text = st.text_area(
    "Text",
    **STATE.widget("text"),
    height=80,
    help=f"Any English text up to {MAX_TOKENS} tokens ({MAX_TEXT_CHARS:,} characters at most). Ctrl+Enter applies.",
)
run = read_text(text)
if not fits_a_link("text")(STATE.values()):
    st.caption(LINK_NOTE)
if run is not None:
    tokens = run.tokens
    st.caption(
        f"{len(tokens)} tokens, [CLS] and [SEP] included: the markers the tokenizer puts before and after every "
        f"text (this app, like sentence-transformers, reads at most {MAX_TOKENS}; the model's position table has "
        f"{get_model().config.max_positions})."
        + (
            f" Its model card says its sentence-embedding training cut inputs at {TRAINED_TOKENS} tokens: past that, "
            "it reads positions that this training never reached."
            if len(tokens) > TRAINED_TOKENS
            else ""
        )
    )
    if note := unknown_note(tokens):
        st.info(note, icon=":material/help:")
    layer, head, mean, rows = controls(run)
    weights, name = chosen_weights(run.attentions, layer, head, mean)

    st.header("2 · The rows you choose")
    st.markdown(
        "The heatmap keeps only the query rows chosen above, against every key; the lines start from the same "
        f"queries (weights under {LINE_THRESHOLD} are not drawn). **Average the layer's heads** shows what the "
        "layer as a whole reads, each head counted equally (before $W_O$ mixes the heads' results into one vector "
        "per token, so not what the layer writes)."
    )
    weights_hidden = pair_asked_on(text)  # this text is one of section 5's sentences: its weights (nearly) answer
    if weights_hidden:
        hidden_answer_card(st, "The weights of these rows")
    else:
        rows_view(run, weights, name, rows)

    st.header("3 · Queries and keys as points")
    st.markdown(
        f"A head compares each query vector with every key vector (d_head = {cfg.d_head} numbers each). Here are "
        f"the {len(tokens)} queries (circles) and {len(tokens)} keys (diamonds) of layer {layer}, head {head}, "
        "placed by PCA (principal component analysis) on the two directions along which these points spread most. "
        "**Hover** a point for its token and its heaviest keys; **click** a query to draw lines to its heaviest "
        "keys, as thick as their weights."
    )
    st.latex(PCA_LATEX)
    points_view(run, layer, head, rows, weights_hidden)
    st.info(  # an info, not a warning: a warning on these pages means a bad link or input
        "**A projection can hide closeness.** Two points near each other here may be far apart in the "
        f"{cfg.d_head - 2} directions left out. Never the other way round: a projection never lengthens a "
        f"distance, so points far apart here are at least as far apart in all {cfg.d_head}. And attention does not "
        f"measure closeness: the score is the dot product q·k/√{cfg.d_head}, which also grows with a key's length, "
        "so a distant long key can outscore a near short one. The queries' and the keys' clouds often sit apart: "
        "moving every key by the same vector changes no weight (each of a query's scores moves by the same amount, "
        "which the softmax ignores), but it moves every key on the picture, and with it the nearness ranks. "
        "AttentionViz (Yeh et al. 2023), whose maps use projections such as t-SNE and UMAP, therefore scales the "
        "queries by c and the keys by 1/c so that their mean lengths match (every score is kept), then moves the "
        "keys' centre onto the queries' (which changes the keys' mean length a little again; the paper names both "
        "steps, not their order), so that nearness may stand in for attention better. The switch above does the same "
        "before this page's PCA, where it often does the opposite: the count beside the picture says which, for this "
        "head. The lines use the real weights.",
        icon=":material/map:",
    )

    st.header("4 · Attention across layers: rollout")
    st.markdown(
        f"Each layer mixes the tokens again, so after {cfg.n_layers} layers a position holds a blend of blends. "
        "**Attention rollout** (Abnar & Zuidema, 2020) estimates that blend: average each layer's heads, add the "
        "identity for the residual path that carries every token past the attention, renormalise the rows, and "
        "multiply the layers together. Row i of R is rollout's estimate of which input tokens position i at the top "
        "was built from."
    )
    st.latex(ROLLOUT_LATEX)
    rollout_view(run, text, rows)
    st.info(
        "**Rollout is a heuristic.** It uses only the attention weights: it ignores the value vectors (a head "
        "can attend strongly and write almost nothing), $W_O$, the feed-forward layers and the layer norms, and "
        "it gives the residual path a fixed half. Read it as where information *could* have flowed.",
        icon=":material/route:",
    )
    show_snippet(deeper_snippet(text, layer=layer, head=head))

    st.header("5 · Two sentences, one head")
    st.markdown(
        f"The same weights ({name}, chosen above) on two sentences that differ in one word, where the pronoun "
        "refers to a different noun. Does the head's reading of the pronoun change?"
    )
    run_a, run_b = pair_view(layer, head, mean)
    keep_shown("ptd", {text: run, STATE["a"]: run_a, STATE["b"]: run_b})
