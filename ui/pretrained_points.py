"""Section 3 of "The real model, read deeper" (pages/pretrained_deeper.py): one head's queries and keys as points.
What the picture is, its PCA, the picture itself with its controls (AttentionViz's normalisation, the query whose
lines are drawn, a click on a query's circle), the heaviest keys of the chosen query against their nearness on the
picture, and what a projection can hide."""

import streamlit as st

from attention.pretrained import MiniLMRun
from figures.reading import key_lines, query_key_figure
from lessons.projection import PCA_LATEX, queries_and_keys
from lessons.reading import attentionviz_normalise, axis_shares, heaviest_nearest, key_readout
from locales import num, tr
from ui.charts import chart
from ui.classroom_open_question import hidden_answer_card
from ui.declared.pretrained_deeper import STATE
from ui.minilm import get_model
from ui.safe_text import escape_markdown
from ui.tables import arrow_table


def points_section(run: MiniLMRun, layer: int, head: int, rows: list[int], hidden: bool) -> None:
    """The section under its header, for the head chosen above (`layer`, `head` from 1) and the query rows kept
    (`rows`: their points are named); `hidden`: the picture and the readout give way to a card while the class
    answers a question these weights answer."""
    d_head = get_model().config.d_head
    st.markdown(
        tr(
            "A head compares each query vector with every key vector (d_head = {d_head} numbers each). Here are the "
            "{n} queries (circles) and {n} keys (diamonds) of layer {layer}, head {head}, placed by PCA (principal "
            "component analysis) on the two directions along which these points spread most. **Hover** a point for "
            "its token and its heaviest keys; **click** a query to draw lines to its heaviest keys, as thick as their "
            "weights.",
            d_head=d_head,
            n=run.n_tokens,
            layer=layer,
            head=head,
        )
    )
    st.latex(PCA_LATEX)
    points_view(run, layer, head, rows, hidden)
    st.info(  # an info, not a warning: a warning on these pages means a bad link or input
        tr(
            "**A projection can hide closeness.** Two points near each other here may be far apart in the {left_out} "
            "directions left out. Never the other way round: a projection never lengthens a distance, so points far "
            "apart here are at least as far apart in all {d_head}. And attention does not measure closeness: the "
            "score is the dot product q·k/√{d_head}, which also grows with a key's length, so a distant long key can "
            "outscore a near short one. The queries' and the keys' clouds often sit apart: moving every key by the "
            "same vector changes no weight (each of a query's scores moves by the same amount, which the softmax "
            "ignores), but it moves every key on the picture, and with it the nearness ranks. AttentionViz (Yeh et "
            "al. 2023), whose maps use projections such as t-SNE and UMAP, therefore scales the queries by c and the "
            "keys by 1/c so that their mean lengths match (every score is kept), then moves the keys' centre onto the "
            "queries' (which changes the keys' mean length a little again; the paper names both steps, not their "
            "order), so that nearness may stand in for attention better. The switch above does the same before this "
            "page's PCA, where it often does the opposite: the count beside the picture says which, for this head. "
            "The lines use the real weights.",
            left_out=d_head - 2,
            d_head=d_head,
        ),
        icon=":material/map:",
    )


def points_view(run: MiniLMRun, layer: int, head: int, rows: list[int], hidden: bool) -> None:
    """Section 3: the head's queries and keys on two principal axes; a clicked query's lines (`hidden`: only the
    controls, while the class answers a question these weights answer)."""
    tokens, n = run.tokens, run.n_tokens
    q, k = run.queries[layer - 1, head - 1], run.keys[layer - 1, head - 1]  # (n, d_head) each
    weights = run.attentions[layer - 1, head - 1]  # (n, n)
    if STATE["query"] >= n:
        st.info(
            tr("Query {query} is past this text's {n} tokens: no query is chosen.", query=STATE["query"], n=n),
            icon=":material/touch_app:",
        )
        STATE.set("query", -1)
    # a third of the width beside the picture: at 2/7 the toggle read "Normalise as Atten…" on a projector
    # (1280 px, presenter mode)
    picture_col, side_col = st.columns([2, 1], gap="medium")
    viz = side_col.toggle(
        tr("Normalise as AttentionViz"),
        **STATE.widget("viz"),
        help=tr(
            "Yeh et al. (2023): before projecting, scale the queries by c and the keys by 1/c so that their mean "
            "lengths match, then move the keys so that their centre is the queries'. No weight changes; the picture "
            "and its distances do."
        ),
    )
    points = queries_and_keys(*(attentionviz_normalise(q, k) if viz else (q, k)))
    no_query = tr("none (click a circle)")
    query = side_col.selectbox(
        tr("Lines from query"),
        [-1, *range(n)],
        key=STATE.key("query"),
        format_func=lambda i: no_query if i == -1 else f"{i} · {tokens[i]}",
        help=tr("Or click a query's circle in the picture."),
    )
    selected = None if query == -1 else query
    if hidden:
        hidden_answer_card(picture_col, tr("The queries and keys of this head, and its heaviest keys"))
        return
    fig = query_key_figure(
        points.coords,
        tokens,
        weights,
        axis_shares=axis_shares(points.variances),
        selected=selected,
        named=rows if len(rows) < n else [],
        title=tr(
            "Layer {layer}, head {head}: {n} queries and {n} keys, {share} of their spread kept",
            layer=layer,
            head=head,
            n=n,
            share=num(points.share, ".0%"),
        ),
    )
    chart(picture_col, fig, key="ptd_points", on_select=pick_clicked_query, selection_mode="points")
    side_col.metric(
        tr("Spread kept"),
        num(points.share, ".0%"),
        help=tr(
            "By the two axes: (s₁² + s₂²) / Σ sᵢ² of the SVD of the {points} points; the other {rest} directions "
            "hold the rest.",
            points=2 * n,
            rest=q.shape[1] - 2,
        ),
    )
    raw, normalised = heaviest_nearest(q, k, weights)
    side_col.caption(
        tr(
            "Each query's heaviest key is also its nearest key on the picture for {raw} of the {n} queries drawn from "
            "the raw vectors, {normalised} after AttentionViz's normalisation.",
            raw=raw,
            n=n,
            normalised=normalised,
        )
    )
    if selected is None:
        side_col.caption(tr("Click a query's circle (or choose one above) to draw lines to its heaviest keys."))
        return
    readout = key_readout(q, k, weights, selected, key_lines(weights[selected]))

    def ranked(rank: int) -> str:
        # Translators: a key's rank by nearness among all the keys: "3 of 12"
        return tr("{rank} of {n}", rank=rank, n=n)

    st.markdown(
        tr(
            "**Query {query} · '{token}'**: its heaviest keys",
            query=selected,
            token=escape_markdown(tokens[selected]),
        )
    )
    table = arrow_table(
        {
            # Translators: a column header: the key (a token of the text)
            tr("key"): [f"{r['key']} · {tokens[r['key']]}" for r in readout],
            tr("weight"): [round(r["weight"], 3) for r in readout],
            tr("score q·k/√d"): [round(r["score"], 2) for r in readout],
            tr("nearness, raw"): [ranked(r["near_raw"]) for r in readout],
            tr("nearness, AttentionViz"): [ranked(r["near_viz"]) for r in readout],
        }
    )
    st.dataframe(table, hide_index=True, key="ptd_readout")
    if viz:
        score_note = tr(
            "Score: q·k/√{d_head}, what the softmax turns into the weights. Nearness: the key's rank by distance "
            "from the query on the picture (1 = nearest of the {n} keys), drawn from the raw vectors and after "
            "AttentionViz's normalisation (the picture above shows the second). The score is the same either way; "
            "where a rank disagrees with the weight, that picture misleads.",
            d_head=q.shape[1],
            n=n,
        )
    else:
        score_note = tr(
            "Score: q·k/√{d_head}, what the softmax turns into the weights. Nearness: the key's rank by distance "
            "from the query on the picture (1 = nearest of the {n} keys), drawn from the raw vectors and after "
            "AttentionViz's normalisation (the picture above shows the first). The score is the same either way; "
            "where a rank disagrees with the weight, that picture misleads.",
            d_head=q.shape[1],
            n=n,
        )
    st.caption(score_note)


def pick_clicked_query() -> None:
    """A click on a query's point (trace 0 of the picture) draws its lines."""
    for point in st.session_state["ptd_points"].selection.get("points", []):
        if point.get("curve_number") == 0:
            STATE.set("query", int(point["point_index"]))
            return
