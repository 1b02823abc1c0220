"""A real pretrained model: all-MiniLM-L6-v2's 6 × 12 attention heads on your sentence, and its sentence embeddings."""

import numpy as np
import streamlit as st

from attention.pretrained import EXAMPLE_SENTENCES, MAX_TOKENS, MODEL_NAME, MiniLMRun
from figures.pretrained import (
    HIGHLIGHT_COLOURS,
    LINE_THRESHOLD,
    THUMB_CELLS,
    head_heatmap,
    head_summaries,
    highlight_shapes,
    overview_figure,
    strip_special,
    token_lines_figure,
)
from lessons.reading import future_share, shown_positions
from locales import language, marked, num, tr
from ui.charts import Download, chart, show_snippet
from ui.classroom_open_question import answer_hidden, hidden_answer_card
from ui.declared.pretrained import STATE
from ui.export import CSV_MAX_WEIGHTS, attentions_csv, attentions_npz
from ui.minilm import MAX_TEXT_CHARS, encode, get_model, n_heads, n_layers, not_installed, read_text
from ui.minilm_inputs import example_menu, tokens_strip
from ui.page_state import stop
from ui.pretrained_similarity import similarity_section
from ui.questions import pretrained as pretrained_questions
from ui.shared_state import is_presenting, require_app_entry
from ui.snippets import pretrained_snippet

require_app_entry()


CAUTION = marked(
    "**Attention weights show which positions were read and how much, not what that meant or why.** A heavy "
    "line says that a token's new vector was built mostly from another token's value vector; it does not say what "
    "the model concluded from it, and the block's feed-forward layers, the residual stream and the other 71 heads "
    "all change the result too."
)


@st.cache_data(max_entries=16, show_spinner=False)
def overview(text: str, hide: bool, lang: str) -> dict:
    """The 6 × 12 thumbnail image as figure JSON (a dict: cheaper to copy out of the cache than a Figure), its
    words in the language `lang` (the session's: part of the cache's key).

    Its hover summaries always describe the full weights, [CLS] and [SEP] included.
    """
    run = encode(text)
    tokens, attentions = run.tokens, run.attentions
    kept = shown_positions(tokens, hide)
    weights = strip_special(attentions, tokens)[0] if len(kept) < len(tokens) else attentions
    summaries = head_summaries(attentions, tokens)
    fig = overview_figure(weights, [tokens[i] for i in kept], summaries=summaries).to_plotly_json()
    fig["layout"].pop("template", None)  # Streamlit's theme styles it; re-validating plotly's costs ~10 ms a rerun
    return fig


def exact_downloads(run: MiniLMRun) -> list[Download]:
    """The overview's Export: every weight exactly, as .npz always and as CSV while it stays small."""
    name = "minilm_attentions"
    files = [
        Download(
            tr("Exact weights (.npz)"),
            lambda: attentions_npz(run.attentions, run.tokens),
            f"{name}.npz",
            "application/octet-stream",
        )
    ]
    if run.attentions.size <= CSV_MAX_WEIGHTS:  # at 256 tokens the CSV would be 66 MB: the .npz is 19 MB
        files.append(
            Download(
                tr("Exact weights (CSV)"),
                lambda: attentions_csv(run.attentions, run.tokens),
                f"{name}.csv",
                "text/csv",
            )
        )
    return files


def open_clicked_head() -> None:
    """A click on an overview thumbnail opens that head (as head A)."""
    points = st.session_state["pt_overview"].selection.get("points", [])
    for point in points:
        if point.get("curve_number") == 1:  # the invisible markers, one per head, over the image
            layer, head = divmod(int(point["point_index"]), n_heads())
            STATE.set("layer", layer + 1)
            STATE.set("head", head + 1)
            return


def head_picker(column, suffix: str, labels: tuple[str, str]) -> tuple[int, int]:
    """Two selectboxes (layer, head) in a column, labelled `labels`; returns the pair as shown, counted from 1."""
    layer_col, head_col = column.columns(2)
    layer = layer_col.selectbox(
        labels[0],
        **STATE.widget(f"layer{suffix}"),
        help=tr("Which of the {n} blocks (1 is closest to the input).", n=n_layers()),
    )
    head = head_col.selectbox(
        labels[1],
        **STATE.widget(f"head{suffix}"),
        help=tr("Which of the {n} heads in that block.", n=n_heads()),
    )
    return layer, head


def show_head(
    run: MiniLMRun, hide: bool, layer: int, head: int, focus: int, key: str, heat_box, lines_box, share: float
) -> None:
    """One head's full heatmap and its token-to-token lines (layer, head from 1; focus: an original
    position, or -1 for all; share: the part of the page's width the heatmap gets, which sizes its numbers)."""
    tokens = run.tokens
    full = run.attentions[layer - 1, head - 1]  # (n, n)
    kept = shown_positions(tokens, hide)
    weights, original = full, None
    if len(kept) < len(tokens):
        weights, original = strip_special(full, tokens)[0], full[np.ix_(kept, kept)]  # (m, m) rescaled, as read
    labels = [tokens[i] for i in kept]
    title = tr("Head {letter}: layer {layer}, head {head}", letter=key.upper(), layer=layer, head=head)
    chart(
        heat_box,
        head_heatmap(
            weights,
            labels,
            original=original,
            positions=kept,
            title=title,
            height=int(np.clip(48 * len(labels) + 200, 400, 1400)) if share == 1 else None,
        ),
        width="stretch",
        key=f"pt_heatmap_{key}",
        share=share,  # the numbers in its cells sized to them (presenter mode's larger, or none when too small)
    )
    colour = HIGHLIGHT_COLOURS["ab".index(key)]
    chart(
        lines_box,
        token_lines_figure(
            weights,
            labels,
            threshold=LINE_THRESHOLD,
            positions=kept,
            focus=kept.index(focus) if focus in kept else None,
            colour=colour,
            title=title,
        ),
        width="stretch",
        key=f"pt_lines_{key}",
    )


STATE.load()
try:
    model = get_model()
except FileNotFoundError as err:  # the model package is installed separately (requirements-model.txt)
    not_installed(err, tr("A real pretrained model"))
    stop()
cfg = model.config

st.title(tr("A real pretrained model"))
st.markdown(
    tr(
        "Everything so far ran on toy matrices. This page runs **{model}**, a real sentence encoder: a pretrained "
        "MiniLM, then fine-tuned on over a billion sentence pairs to place sentences that mean the same thing close "
        "together. {n_layers} transformer blocks, each with {n_heads} attention heads (d_model = {d_model}, "
        "d_head = {d_head}). Its weights are read from disk and run by this app's own numpy `transformer_block`, "
        "the same function the other pages show; only the numbers are learned.",
        model=MODEL_NAME,
        n_layers=cfg.n_layers,
        n_heads=cfg.n_heads,
        d_model=cfg.d_model,
        d_head=cfg.d_head,
    )
)
st.info(tr(CAUTION), icon=":material/warning:")
STATE.show_warnings()

st.header(tr("1 · Your sentence"))
example_menu(
    STATE,
    "text",
    {s: s for s in EXAMPLE_SENTENCES},
    key="pt_example",
    help=tr("Copies the sentence into the box below; then edit it as you like."),
)
text = st.text_area(
    tr("Sentence"),
    **STATE.widget("text"),
    height=80,
    help=tr(
        "Any English text up to {max_tokens} tokens ({max_chars} characters at most). Press Ctrl+Enter (or click "
        "outside) to apply.",
        max_tokens=MAX_TOKENS,
        max_chars=num(MAX_TEXT_CHARS, ","),
    ),
)
run = read_text(text)
if run is not None:
    tokens, ids = run.tokens, run.ids
    st.markdown(
        tr(
            "The tokenizer cut it into **{n} tokens** (the model takes at most {max_tokens}): `[CLS]` opens every "
            "input, `[SEP]` closes it, and `##` marks a piece that continues a word.",
            n=len(tokens),
            max_tokens=MAX_TOKENS,
        )
    )
    st.html(tokens_strip(tokens, ids))

    st.header(tr("2 · All {n} heads at a glance", n=cfg.n_layers * cfg.n_heads))
    st.markdown(
        tr(
            "Each thumbnail is one head's weight matrix: queries down, keys across, darker = more weight (the colour "
            "follows √weight, so that thinly spread weight still shows; the big heatmap below uses the weight itself). "
            "Rows are layers (1 at the top, nearest the input), columns are heads. **Hover** a thumbnail for where its "
            "weight goes and its heaviest weight to a word (read from the exact weights, even where the thumbnail is "
            "shrunk); **click** it to open it below; **Export** under the picture gives every exact weight. Many "
            "heads park most of their weight on `[SEP]` or `[CLS]` (a dark last or first column), a known habit of "
            "BERT-style models, often read as 'nothing to do here'."
        )
    )
    hide = st.toggle(
        tr("Hide [CLS] and [SEP]"),
        **STATE.widget("hide"),
        help=tr(
            "Drop their rows and columns and rescale every remaining row to sum to 1 again, so the weights among "
            "the real words become visible. The hover still gives the original weight."
        ),
    )
    if hide:
        st.caption(
            tr(
                "[CLS] and [SEP] hidden: each remaining row was divided by what it kept, so rows sum to 1 again and "
                "colours compare across heads. These are *shares of the weight left over*, not the weights the model "
                "used; the hover of the big heatmap shows both."
            )
        )
    if len(tokens) > THUMB_CELLS:
        st.caption(
            tr(
                "{n} tokens: each thumbnail is shrunk to {cells} × {cells} (rows of a block averaged, keys of a block "
                "added up, so every row still sums to 1).",
                n=len(tokens),
                cells=THUMB_CELLS,
            )
        )
    fig = overview(text, hide, language())  # a fresh copy on every run: safe to add to
    highlighted = [(STATE["layer"] - 1, STATE["head"] - 1)]
    if STATE["compare"]:
        highlighted.append((STATE["layer2"] - 1, STATE["head2"] - 1))
    fig["layout"]["shapes"] = highlight_shapes(highlighted, len(shown_positions(tokens, hide)))
    if answer_hidden("pretrained", "attend"):
        hidden_answer_card(st, tr("Every head's weights (the thumbnails and their export)"))
    else:
        chart(
            st,
            fig,
            width="stretch",
            key="pt_overview",
            on_select=open_clicked_head,
            selection_mode="points",
            config={"displayModeBar": False},
            downloads=exact_downloads(run),
            downloads_note=tr(
                "The thumbnails may be shrunk; these files hold every head's exact weights ({n_layers} × {n_heads} × "
                "{n} × {n}, [CLS] and [SEP] included):",
                n_layers=cfg.n_layers,
                n_heads=cfg.n_heads,
                n=len(tokens),
            ),
        )

    st.header(tr("3 · One head up close"))
    # in presenter mode the options get more room: the toggle's label read "Compare with a se…" at 1280 px
    picker_a, picker_b, options_col = st.columns([3, 3, 5] if is_presenting() else [4, 4, 3])
    layer, head = head_picker(picker_a, "", (tr("Head A: layer"), tr("Head A: head")))
    compare = options_col.toggle(
        tr("Compare with a second head"),
        **STATE.widget("compare"),
        help=tr("Show a second head (B) side by side with head A."),
    )
    if compare:
        layer2, head2 = head_picker(picker_b, "2", (tr("Head B: layer"), tr("Head B: head")))
    every_token = tr("every token")
    focus = options_col.selectbox(
        tr("Lines from"),
        **STATE.widget("focus"),
        format_func=lambda i: every_token if i == -1 else f"{i} · {tokens[i]}",
        help=tr("Draw the token-to-token lines of one query only (handy for long inputs)."),
    )
    STATE.notes(options_col, names=("focus",))
    st.markdown(
        tr(
            "Each heatmap is one head's weights, $\\mathrm{{softmax}}(Q_h K_h^\\top / \\sqrt{{{d_head}}})$, before "
            "its output is mixed with the other heads' by $W_O$. Left: the full heatmap (hover a cell for its "
            "weight). Right or below: the same weights as lines from each token (left) to the tokens it reads from "
            "(right), thicker and darker for more weight; weights under {threshold} are not drawn.",
            d_head=cfg.d_head,
            threshold=num(LINE_THRESHOLD, "g"),
        )
    )
    above = future_share(run.attentions)
    st.info(
        tr(
            "**No causal mask here.** This model is a *bidirectional* encoder: every token may read every other, "
            "later ones included. For this sentence {share} of all the weight (averaged over its {heads} heads) "
            "lies above the diagonal, on later tokens; a decoder such as GPT, with the causal mask of the earlier "
            "page, would have exactly 0 there.",
            share=num(above, ".0%"),
            heads=cfg.n_layers * cfg.n_heads,
        ),
        icon=":material/swap_horiz:",
    )
    if answer_hidden("pretrained", "attend"):
        hidden_answer_card(st, tr("The heads' heatmaps and lines"))
    elif compare:  # each head in its own column, heatmap above lines
        col_a, col_b = st.columns(2, gap="medium")
        show_head(run, hide, layer, head, focus, "a", col_a, col_a, 1 / 2)
        show_head(run, hide, layer2, head2, focus, "b", col_b, col_b, 1 / 2)
    elif is_presenting():  # on a projector the heatmap takes the whole width, numbers large, the lines under it
        show_head(run, hide, layer, head, focus, "a", st.container(), st.container(), 1)
    else:
        col_a, col_b = st.columns([3, 2], gap="medium")
        show_head(run, hide, layer, head, focus, "a", col_a, col_b, 3 / 5)
    show_snippet(pretrained_snippet(text, layer=layer, head=head))
    st.caption(tr("Remember: {caution}", caution=tr(CAUTION).replace("**", "")))
    # A link is one line, cut at the edge when too long (on a projector it was): the link short, what is there
    # in a caption that wraps.
    st.page_link("pages/pretrained_deeper.py", label=tr("Read deeper: the real model"), icon=":material/scatter_plot:")
    st.caption(
        tr(
            "There: a head's queries and keys as points, attention through all six layers, long inputs cut to the "
            "rows you want, one head on two sentences."
        )
    )

st.header(tr("4 · Does it really work? Sentence similarity"))
typed = similarity_section()  # the embedding, two sentences of yours, the prepared pairs scored
pretrained_questions.keep_shown("pt", {text: run, **typed})
