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
    rollout_heatmap,
    rows_heatmap,
    rows_lines_figure,
)
from lessons.reading import (
    LONG_EXAMPLE,
    SENTENCE_PAIRS,
    chosen_weights,
    largest_differences,
    length_note,
    output_feed,
    pair_difference,
    shown_rows,
    special_share,
    unknown_note,
    weights_name,
)
from locales import marked, num, tr, tr_n
from ui.charts import chart, show_snippet
from ui.classroom_open_question import answer_hidden, hidden_answer_card
from ui.declared.pretrained_deeper import MAX_WORD_CHARS, STATE, fits_a_link
from ui.minilm import MAX_TEXT_CHARS, encode, get_model, n_heads, n_layers, not_installed, read_text
from ui.minilm_inputs import example_menu, pair_menu
from ui.number_box import number_box
from ui.page_state import stop
from ui.pretrained_points import points_section
from ui.questions.pretrained import keep_shown
from ui.safe_text import escape_markdown
from ui.shared_state import require_app_entry
from ui.snippets import deeper_snippet

require_app_entry()

TITLE = marked("The real model, read deeper")


def pair_asked_on(text: str) -> bool:
    """Whether `text` is one of section 5's two sentences while the class is asked which token a token of one of
    them reads most (the pair question): sections 2 and 3, which show the same weights on it, hide them too. Both
    sentences, whichever is asked: the prepared pairs differ by one word, so the other's reading is nearly the
    answer. The model reads lower case, with runs of spaces as one: a text that differs only so is the same."""

    def read_as(words: str) -> str:
        return " ".join(words.lower().split())

    pair = {read_as(STATE["a"]), read_as(STATE["b"])}
    return answer_hidden("pretrained_deeper", "pair") and read_as(text) in pair


LINK_NOTE = marked("The share link leaves this text out (a link cannot hold it); opened, it shows the example instead.")
# the example sentences as they are (the model reads English), the long text's label translated (the menu shows tr)
EXAMPLES = {**{s: s for s in EXAMPLE_SENTENCES}, marked("A long text: 252 tokens, near this app's limit"): LONG_EXAMPLE}
ROW_LABELS = {
    "all": marked("every token"),
    "last": marked("the last few tokens"),
    "word": marked("the tokens of a word"),
}
POOL_LABELS = {"mean": marked("the mean-pooled output (the model's embedding)"), "cls": marked("[CLS] at the top")}
FEED_TITLES = {  # the title of the bars of what feeds each output
    "mean": marked("Which input tokens feed the mean-pooled output (the model's embedding)"),
    "cls": marked("Which input tokens feed [CLS] at the top"),
}


@st.cache_resource(max_entries=32, show_spinner=False)
def rollout_of(text: str) -> np.ndarray:
    """The rollout of `text`'s attention, shared read-only by every session (n, n)."""
    rollout = attention_rollout(encode(text).attentions)
    rollout.flags.writeable = False
    return rollout


def controls(run: MiniLMRun) -> tuple[int, int, bool, list[int]]:
    """The layer, head, averaging and query-row controls; returns (layer, head, mean, rows)."""
    tokens = run.tokens
    layer_col, head_col, mean_col = st.columns([2, 2, 3], vertical_alignment="bottom")
    layer = layer_col.selectbox(
        # Translators: a selectbox's label: which of the model's layers
        tr("Layer"),
        **STATE.widget("layer"),
        help=tr("Which of the {n} blocks (1 is closest to the input).", n=n_layers()),
    )
    head = head_col.selectbox(
        # Translators: a selectbox's label: which attention head of the layer
        tr("Head"),
        **STATE.widget("head"),
        help=tr("Which of the {n} heads in that block (the points below always show one head).", n=n_heads()),
    )
    mean = mean_col.toggle(
        tr("Average the layer's heads"),
        **STATE.widget("mean"),
        help=tr(
            "Show the mean of the layer's {n} heads in the heatmap, the lines and the two-sentence view.", n=n_heads()
        ),
    )
    rows_col, detail_col = st.columns([4, 3], vertical_alignment="bottom")
    mode = rows_col.radio(
        tr("Query rows to show"),
        format_func=lambda value: tr(ROW_LABELS[value]),
        horizontal=True,
        **STATE.widget("rows"),
        help=tr("A long input has too many rows to read: keep only some queries (every key stays)."),
    )
    if mode == "last":
        number_box(
            detail_col,
            # Translators: the label of a number box: how many of the last tokens to show
            tr("How many"),
            **STATE.widget("last"),
            help=tr("How many of the last tokens to show."),
        )
    elif mode == "word":
        detail_col.text_input(
            # Translators: the label of a text box: the word whose rows are shown
            tr("Word"),
            **STATE.widget("word"),
            max_chars=MAX_WORD_CHARS,
            help=tr(
                "Whole words, any case: 'it' finds 'it' and 'It', not 'its'; a word cut into pieces gives all of them."
            ),
        )
    rows, why = shown_rows(tokens, mode, last=STATE["last"], word=STATE["word"])
    if why == "no word":
        st.caption(tr("Type a word above to keep only its rows; until then every row is shown."))
    elif why == "no match":
        st.warning(
            tr(
                "No token of this text is the word '{word}': showing every row.",
                word=escape_markdown(STATE["word"].strip()),
            ),
            icon=":material/search:",
        )
    elif why == "too few":
        st.caption(tr("The text has only {n} tokens: all of them are shown.", n=len(tokens)))
    return layer, head, mean, rows


def rows_view(run: MiniLMRun, weights: np.ndarray, name: str, rows: list[int]) -> None:
    """The chosen query rows of the weights on show: a heatmap beside the token-to-token lines."""
    tokens, n = run.tokens, run.n_tokens
    if len(rows) == n and n > 64:
        st.caption(tr("{n} rows are hard to read: keep the last few, or the rows of one word, above.", n=n))
    heat_col, lines_col = st.columns([3, 2], gap="medium")
    title = tr("{name}: {shown} of {n} queries", name=name[:1].upper() + name[1:], shown=len(rows), n=n)
    chart(heat_col, rows_heatmap(weights[rows], tokens, rows, title=title), key="ptd_rows_heatmap", share=0.6)
    chart(lines_col, rows_lines_figure(weights, tokens, rows, title=title), key="ptd_rows_lines", share=0.4)


def rollout_view(run: MiniLMRun, text: str, rows: list[int]) -> None:
    """Section 4: the rollout as a heatmap of the chosen rows, and what feeds the output (only the output's choice
    while the class answers the rollout question)."""
    tokens, n = run.tokens, run.n_tokens
    rollout = rollout_of(text)  # (n, n)
    hidden = answer_hidden("pretrained_deeper", "rollout")
    if hidden:
        hidden_answer_card(st, tr("The rollout, what feeds the output and its shares"))
    else:
        zmax, capped = display_max(rollout[rows], tokens)
        fig = rollout_heatmap(rollout[rows], tokens, rows, n_layers=run.attentions.shape[0], zmax=zmax, capped=capped)
        chart(st, fig, key="ptd_rollout", share=1.0)
        if capped:
            st.caption(
                tr(
                    "The colours stop at {zmax}: the [CLS] and [SEP] columns go far beyond (hover for their exact "
                    "shares), and would otherwise leave every other cell white.",
                    zmax=num(zmax, ".2f"),
                )
            )
    pool = st.radio(
        tr("Which output"),
        format_func=lambda value: tr(POOL_LABELS[value]),
        horizontal=True,
        **STATE.widget("pool"),
        help=tr(
            "The embedding is the mean of the last layer's vectors: its row of shares is the mean of the rows. [CLS] "
            "is position 0's row (BERT's classifier reads it, Devlin et al. 2019; this model does not use it)."
        ),
    )
    if hidden:
        return
    feed = output_feed(rollout, pool)  # (n,), sums to 1
    ymax, cut = display_max(feed, tokens)
    fig = feed_figure(feed, tokens, title=tr(FEED_TITLES[pool]), ymax=ymax if cut else None)
    chart(st, fig, key="ptd_feed")
    top = heaviest(feed, 5)
    special = special_share(feed, tokens)
    st.caption(
        tr(
            "Largest shares: {shares}. An even spread would give each token {even}. [CLS] and [SEP] together: "
            "{special}: many heads park their weight on them (see the previous page), and rollout multiplies that "
            "through the layers.",
            shares=", ".join(f"'{escape_markdown(tokens[i])}' ({i}) {num(feed[i], '.1%')}" for i in top),
            even=num(1 / n, ".1%"),
            special=num(special, ".0%"),
        )
    )


def pair_view(layer: int, head: int, mean: bool) -> tuple[MiniLMRun | None, MiniLMRun | None]:
    """Section 5: the same weights on two sentences side by side, and their difference on shared tokens. Returns
    the model's readings of the two sentences (None where it has none)."""
    pair_menu(
        STATE, ("a", "b"), SENTENCE_PAIRS, key="ptd_pair", help=tr("Copies a prepared pair into the two boxes below.")
    )
    a_col, b_col = st.columns(2, gap="medium")
    text_a = a_col.text_input(tr("Sentence A"), **STATE.widget("a"))
    text_b = b_col.text_input(tr("Sentence B"), **STATE.widget("b"))
    run_a, run_b = read_text(text_a), read_text(text_b)
    if not (fits_a_link("a")(STATE.values()) and fits_a_link("b")(STATE.values())):
        st.caption(tr(LINK_NOTE))
    if run_a is None or run_b is None:
        return run_a, run_b
    if answer_hidden("pretrained_deeper", "pair"):
        hidden_answer_card(st, tr("The weights on the two sentences and their difference"))
        return run_a, run_b
    weights_a, _ = chosen_weights(run_a.attentions, layer, head, mean)
    weights_b, _ = chosen_weights(run_b.attentions, layer, head, mean)
    name = weights_name(layer, head, mean, run_a.attentions.shape[1])
    for col, run, weights, label in ((a_col, run_a, weights_a, "A"), (b_col, run_b, weights_b, "B")):
        fig = head_heatmap(weights, run.tokens, title=tr("Sentence {label}: {name}", label=label, name=name))
        chart(col, fig, key=f"ptd_pair_{label.lower()}", share=0.5)
    for note in (unknown_note(run_a.tokens, "sentence A's"), unknown_note(run_b.tokens, "sentence B's")):
        if note:
            st.info(note, icon=":material/help:")
    if run_a.tokens == run_b.tokens:
        st.info(
            tr(
                "The two sentences are the same to the model (the same tokens), so the head's weights are the same: "
                "there is no difference to show. Change a word in one of them."
            ),
            icon=":material/swap_horiz:",
        )
        return run_a, run_b
    pair = pair_difference(weights_a, weights_b, run_a.tokens, run_b.tokens)
    if pair is None:
        st.info(tr("The two sentences share no token: there is nothing to compare."), icon=":material/swap_horiz:")
        return run_a, run_b
    shared, pos_a, diff = pair.shared, pair.pos_a, pair.diff  # (m,), (m,), (m, m)
    st.markdown(
        tr_n(
            "**The difference, A − B, on the {shared} tokens both share** ({only_a} token only in A, {only_b} only "
            "in B, left out). Blue: A gives that key more weight; red: B does. The raw weights, not renormalised: "
            "each sentence also spends weight on its own tokens.",
            "**The difference, A − B, on the {shared} tokens both share** ({only_a} tokens only in A, {only_b} only "
            "in B, left out). Blue: A gives that key more weight; red: B does. The raw weights, not renormalised: "
            "each sentence also spends weight on its own tokens.",
            pair.only_a,
            shared=len(pos_a),
            only_a=pair.only_a,
            only_b=pair.only_b,
        )
    )
    fig = difference_heatmap(diff, pair.a_block, pair.b_block, shared, pos_a, title=f"A − B: {name}")
    chart(st, fig, key="ptd_pair_diff", share=1.0)
    lines = [
        tr(
            "'{query}' ({query_position}) → '{key}' ({key_position}): {weight_a} in A, {weight_b} in B ({difference})",
            query=escape_markdown(shared[r]),
            query_position=pos_a[r],
            key=escape_markdown(shared[c]),
            key_position=pos_a[c],
            weight_a=num(pair.a_block[r, c], ".2f"),
            weight_b=num(pair.b_block[r, c], ".2f"),
            difference=num(diff[r, c], "+.2f"),
        )
        for r, c in largest_differences(diff, 3)
    ]
    st.markdown(tr("Largest differences (positions in A):") + "\n" + "\n".join(f"- {line}" for line in lines))
    return run_a, run_b


STATE.load()
try:
    model = get_model()
except FileNotFoundError as err:
    not_installed(err, tr(TITLE))
    stop()
cfg = model.config

st.title(tr(TITLE))
st.markdown(
    tr(
        "The previous page showed every head of **{model}** and one head up close. This page reads the same model "
        "four more ways: a head's queries and keys as points, attention followed through all the layers, long inputs "
        "cut down to the rows you want, and one head on two sentences that differ in a word. Every number is "
        "computed by this app's own numpy code from the model's weights, and each view says what it cannot tell you.",
        model=MODEL_NAME,
    )
)
st.info(
    tr(
        "**Each of these views simplifies.** A 2-D picture of {d_head}-dimensional vectors drops most of their "
        "directions; rollout treats the attention weights as the flow between tokens, ignoring the value vectors, "
        "$W_O$ (the output matrix that mixes the heads' results), the feed-forward layers and the vectors' lengths, "
        "and gives the residual path a fixed half. They suggest where to look; the weights and the model's outputs "
        "are what it computed.",
        d_head=cfg.d_head,
    ),
    icon=":material/warning:",
)
STATE.show_warnings()

st.header(tr("1 · Your text"))
example_menu(
    STATE,
    "text",
    EXAMPLES,
    key="ptd_example",
    help=tr("Copies the text into the box below; the long one shows how the views cope with 252 tokens."),
)
text = st.text_area(
    # Translators: the label of the box where the student types the text the model reads
    tr("Text"),
    **STATE.widget("text"),
    height=80,
    help=tr(
        "Any English text up to {max_tokens} tokens ({max_chars} characters at most). Ctrl+Enter applies.",
        max_tokens=MAX_TOKENS,
        max_chars=num(MAX_TEXT_CHARS, ","),
    ),
)
run = read_text(text)
if not fits_a_link("text")(STATE.values()):
    st.caption(tr(LINK_NOTE))
if run is not None:
    tokens = run.tokens
    st.caption(length_note(len(tokens), get_model().config.max_positions))
    if note := unknown_note(tokens):
        st.info(note, icon=":material/help:")
    layer, head, mean, rows = controls(run)
    weights, _ = chosen_weights(run.attentions, layer, head, mean)
    name = weights_name(layer, head, mean, run.attentions.shape[1])

    st.header(tr("2 · The rows you choose"))
    st.markdown(
        tr(
            "The heatmap keeps only the query rows chosen above, against every key; the lines start from the same "
            "queries (weights under {threshold} are not drawn). **Average the layer's heads** shows what the layer "
            "as a whole reads, each head counted equally (before $W_O$ mixes the heads' results into one vector per "
            "token, so not what the layer writes).",
            threshold=num(LINE_THRESHOLD, "g"),
        )
    )
    weights_hidden = pair_asked_on(text)  # this text is one of section 5's sentences: its weights (nearly) answer
    if weights_hidden:
        hidden_answer_card(st, tr("The weights of these rows"))
    else:
        rows_view(run, weights, name, rows)

    st.header(tr("3 · Queries and keys as points"))
    points_section(run, layer, head, rows, weights_hidden)  # the picture, its PCA, what a projection hides

    st.header(tr("4 · Attention across layers: rollout"))
    st.markdown(
        tr(
            "Each layer mixes the tokens again, so after {n_layers} layers a position holds a blend of blends. "
            "**Attention rollout** (Abnar & Zuidema, 2020) estimates that blend: average each layer's heads, add the "
            "identity for the residual path that carries every token past the attention, renormalise the rows, and "
            "multiply the layers together. Row i of R is rollout's estimate of which input tokens position i at the "
            "top was built from.",
            n_layers=cfg.n_layers,
        )
    )
    st.latex(ROLLOUT_LATEX)
    rollout_view(run, text, rows)
    st.info(
        tr(
            "**Rollout is a heuristic.** It uses only the attention weights: it ignores the value vectors (a head "
            "can attend strongly and write almost nothing), $W_O$, the feed-forward layers and the layer norms, and "
            "it gives the residual path a fixed half. Read it as where information *could* have flowed."
        ),
        icon=":material/route:",
    )
    show_snippet(deeper_snippet(text, layer=layer, head=head))

    st.header(tr("5 · Two sentences, one head"))
    st.markdown(
        tr(
            "The same weights ({name}, chosen above) on two sentences that differ in one word, where the pronoun "
            "refers to a different noun. Does the head's reading of the pronoun change?",
            name=name,
        )
    )
    run_a, run_b = pair_view(layer, head, mean)
    keep_shown("ptd", {text: run, STATE["a"]: run_a, STATE["b"]: run_b})
