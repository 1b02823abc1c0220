"""Figures for reading the real model deeper: queries and keys as points, chosen query rows of a head,
attention rollout and what feeds the output, and one head's difference between two sentences.

Pure functions: numpy arrays in, plotly Figures out (no streamlit). Labels are user text and always go
through `safe_labels`. Like figures/pretrained.py, cells carry numbers rather than one hover string each,
so 256-token inputs stay light.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from figures.base import colorscale as named_colorscale
from figures.base import figure
from figures.heatmaps import WEIGHT_COLORSCALE, safe_labels
from figures.pretrained import (
    ANNOTATE_MAX,
    LABELS_MAX,
    LINE_THRESHOLD,
    WIDTH_BUCKETS,
    bucket_lines,
    position_labels,
    query_key_headers,
    token_lines_figure,
    weight_hover,
)
from lessons.reading import SPECIAL_TOKENS
from locales import num, tr

QUERY_COLOUR, KEY_COLOUR = "#1f77b4", "#ff7f0e"
LINE_COLOUR = "#333333"
POINT_LABELS_MAX = 40  # name every point up to this many tokens; past it only the chosen ones
MAX_KEY_LINES = 5  # a clicked query draws lines to at most this many of its heaviest keys
MIN_LINE_WEIGHT = 0.02  # ... each with at least this weight (the heaviest is always drawn)
TOP_IN_HOVER = 3
FEED_HIGHLIGHT = 5  # the bars of the five largest shares are darker


def heaviest(row: np.ndarray, count: int) -> np.ndarray:
    """Indices of the `count` largest entries of `row`, largest first. Shapes: (n,) -> (min(count, n),)."""
    count = min(count, row.shape[0])
    top = np.argpartition(-row, count - 1)[:count]
    return top[np.argsort(-row[top], kind="stable")]


def key_lines(weights_row: np.ndarray) -> list[int]:
    """The keys a clicked query's lines go to: its heaviest, at most MAX_KEY_LINES, each with at least
    MIN_LINE_WEIGHT (the heaviest always). Shapes: weights_row (n,) -> up to MAX_KEY_LINES indices."""
    top = heaviest(weights_row, MAX_KEY_LINES)
    return [int(j) for i, j in enumerate(top) if i == 0 or weights_row[j] >= MIN_LINE_WEIGHT]


def _point_hovers(weights: np.ndarray, labels: Sequence[str], positions: Sequence[int]) -> tuple[list, list]:
    """Hover text of every query (its heaviest keys) and every key (the queries that read it most)."""

    def listed(values: np.ndarray) -> str:
        return ", ".join(f"'{labels[j]}' {num(values[j], '.2f')}" for j in heaviest(values, TOP_IN_HOVER))

    n = weights.shape[0]
    click = tr("click: draw its lines")
    queries = [
        "<b>"
        + tr("query {position} · '{token}'", position=positions[i], token=labels[i])
        + "</b><br>"
        + tr("heaviest keys: {keys}", keys=listed(weights[i]))
        + "<br>"
        + click
        for i in range(n)
    ]
    keys = [
        "<b>"
        + tr("key {position} · '{token}'", position=positions[j], token=labels[j])
        + "</b><br>"
        + tr("read most by: {queries}", queries=listed(weights[:, j]))
        for j in range(n)
    ]
    return queries, keys


def query_key_figure(
    coords: np.ndarray,
    tokens: Sequence[str],
    weights: np.ndarray,
    *,
    axis_shares: tuple[float, float],
    selected: int | None = None,
    named: Sequence[int] | None = None,
    title: str | None = None,
) -> go.Figure:
    """A head's queries (circles) and keys (diamonds) as points on two principal axes, with lines from the
    `selected` query to its heaviest keys, drawn by the actual weights (width and label = the weight).

    Shapes: coords (2n, 2), the n queries then the n keys; tokens n strings; weights (n, n), the head's
    weights (rows = queries). Trace 0 holds the queries (point index = position) and trace 1 the keys,
    so a click on trace 0 names a query. `named`: the positions whose points carry their token as text
    past POINT_LABELS_MAX tokens (below it every point does).
    """
    n = weights.shape[0]
    if coords.shape != (2 * n, 2) or weights.shape != (n, n) or len(tokens) != n:
        raise ValueError(
            f"coords {coords.shape}, weights {weights.shape} and {len(tokens)} tokens; expected (2n, 2), (n, n), n"
        )
    labels = safe_labels(tokens)
    positions = list(range(n))
    hover_q, hover_k = _point_hovers(weights, labels, positions)
    lines = key_lines(weights[selected]) if selected is not None else []
    show = np.ones(n, bool) if n <= POINT_LABELS_MAX else np.isin(np.arange(n), list(named or []))
    show_q, show_k = show.copy(), show.copy()
    if selected is not None:
        show_q[selected] = True
        show_k[lines] = True
    size_q = np.full(n, 9.0 if n <= 60 else 6.0)
    outline = np.zeros(n)
    if selected is not None:
        size_q[selected], outline[selected] = 16.0, 2.5
    data = [
        _points(coords[:n], labels, show_q, hover_q, tr("queries"), QUERY_COLOUR, "circle", size_q, outline),
        _points(coords[n:], labels, show_k, hover_k, tr("keys"), KEY_COLOUR, "diamond", np.full(n, size_q.min()), None),
    ]
    annotations = []
    if selected is not None:
        data += _lines_to_keys(coords, n, selected, lines, weights[selected])
        annotations = _weight_labels(coords, n, selected, lines, weights[selected])
    layout = dict(
        margin=dict(l=10, r=10, t=50 if title else 20, b=10),
        height=560,
        hovermode="closest",
        clickmode="event+select",
        annotations=annotations,
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
        xaxis=dict(
            title=dict(text=tr("principal axis 1 ({share} of the spread)", share=num(axis_shares[0], ".0%"))),
            zeroline=False,
        ),
        yaxis=dict(
            title=dict(text=tr("principal axis 2 ({share})", share=num(axis_shares[1], ".0%"))),
            zeroline=False,
            scaleanchor="x",
            scaleratio=1,
        ),
    )
    layout["title"] = dict(text=title) if title is not None else {}
    return figure(data, layout)


def _points(xy, labels, show, hovertext, name, colour, symbol, size, outline) -> dict:
    """One scatter trace of points with their token as text where `show` says; selection never dims it."""
    marker = dict(color=colour, symbol=symbol, size=size, opacity=0.85)
    if outline is not None:
        marker["line"] = dict(color=LINE_COLOUR, width=outline)
    return dict(
        type="scatter",
        x=xy[:, 0],
        y=xy[:, 1],
        mode="markers+text",
        name=name,
        text=[lab if s else "" for lab, s in zip(labels, show)],
        textposition="top center",
        textfont=dict(color=colour),  # the layout's font size: larger in presenter mode
        hovertext=hovertext,
        hoverinfo="text",
        marker=marker,
        selected=dict(marker=dict(opacity=0.85)),
        unselected=dict(marker=dict(opacity=0.85)),
    )


def _lines_to_keys(coords, n: int, query: int, keys: list[int], row: np.ndarray) -> list[dict]:
    """A line from the query's point to each key's, as wide (and as dark) as the weight."""
    traces = []
    for j in keys:
        (x0, y0), (x1, y1) = coords[query], coords[n + j]
        traces.append(
            dict(
                type="scatter",
                x=[x0, x1],
                y=[y0, y1],
                mode="lines",
                line=dict(color=LINE_COLOUR, width=1.0 + 10.0 * float(row[j])),
                opacity=0.35 + 0.5 * float(row[j]),
                hoverinfo="skip",
                showlegend=False,
            )
        )
    return traces


def _weight_labels(coords, n: int, query: int, keys: list[int], row: np.ndarray) -> list[dict]:
    """The weight of each line written on it, on a pale box (readable over the line), staggered along
    the lines so that lines to nearby keys keep their labels apart."""
    labels = []
    for i, j in enumerate(keys):
        t = 0.5 + 0.15 * (i % 3)
        labels.append(
            dict(
                x=(1 - t) * coords[query, 0] + t * coords[n + j, 0],
                y=(1 - t) * coords[query, 1] + t * coords[n + j, 1],
                text=f"{row[j]:.2f}",
                showarrow=False,
                font=dict(color=LINE_COLOUR),
                bgcolor="rgba(255,255,255,0.85)",
                borderpad=1,
            )
        )
    return labels


def rows_heatmap(
    values: np.ndarray,
    tokens: Sequence[str],
    rows: Sequence[int],
    *,
    title: str | None = None,
    zmax: float = 1.0,
    colorbar: str | None = None,
    hover: str | None = None,
    x_title: str | None = None,
    y_title: str | None = None,
) -> go.Figure:
    """Some rows of an (n, n) matrix, against every column: the chosen queries of a long input.

    Shapes: values (r, n), the chosen rows already taken; tokens n strings (the whole input); rows r ints,
    the chosen rows' positions (labels "12 · it"). Colour 0..zmax; numbers in the cells up to ANNOTATE_MAX a side.
    The colour bar's title, the hover and the axis titles are a weight heatmap's unless given.
    """
    colorbar = tr("weight") if colorbar is None else colorbar
    hover = weight_hover() if hover is None else hover
    x_title = tr("key (attended to)") if x_title is None else x_title
    y_title = tr("query (attending)") if y_title is None else y_title
    r, n = values.shape
    if len(tokens) != n or len(rows) != r:
        raise ValueError(f"values has shape {values.shape}; expected ({len(rows)}, {len(tokens)})")
    trace = dict(
        type="heatmap",
        z=values,
        x=position_labels(tokens),
        y=position_labels([tokens[i] for i in rows], rows),
        zmin=0.0,
        zmax=zmax,
        colorscale=named_colorscale(WEIGHT_COLORSCALE),
        hovertemplate=hover + "<extra></extra>",
        textfont=dict(size=11),
        colorbar=dict(title=dict(text=colorbar), thickness=12),
    )
    if max(r, n) <= ANNOTATE_MAX:
        trace["texttemplate"] = "%{z:.2f}"
    tick = dict(size=12 if n <= 40 else 9)
    layout = dict(
        margin=dict(l=10, r=10, t=40 if title else 10, b=10),
        xaxis=dict(title=dict(text=x_title), type="category", tickangle=-60, tickfont=tick, showgrid=False),
        yaxis=dict(
            title=dict(text=y_title),
            type="category",
            autorange="reversed",
            tickfont=dict(size=12 if r <= 40 else 9),
            showgrid=False,
        ),
        height=int(np.clip(26 * r + 220, 380, 900)),  # room for the angled key labels, larger when presenting
    )
    layout["title"] = dict(text=title) if title is not None else {}
    return figure([trace], layout)


def rollout_heatmap(
    rollout_rows: np.ndarray, tokens: Sequence[str], rows: Sequence[int], *, n_layers: int, zmax: float, capped: bool
) -> go.Figure:
    """Rollout's chosen rows: for each position at the top, the share of each input token it was built from.
    Shapes: rollout_rows (r, n), tokens n strings, rows r ints. Colours stop at `zmax`; `capped`: the colour bar
    says so (some shares go beyond it)."""
    n = len(tokens)
    # Translators: the hover of a rollout cell: "position 3 · it at the top", "← input token 5 · the", "share 0.412"
    at_top, token, share = tr("position {position} at the top", position="%{y}"), tr("input token"), tr("share")
    return rows_heatmap(
        rollout_rows,
        tokens,
        rows,
        title=tr(
            "Rollout through all {n_layers} layers: {shown} of {n} positions at the top",
            n_layers=n_layers,
            shown=len(rows),
            n=n,
        ),
        zmax=zmax,
        colorbar=tr("share (capped at {zmax})", zmax=num(zmax, ".2f")) if capped else share,
        hover=f"{at_top}<br>← {token} %{{x}}<br>{share} %{{z:.3f}}",
        x_title=token,
        y_title=tr("position after the last layer"),
    )


def rows_lines_figure(
    weights: np.ndarray, tokens: Sequence[str], rows: Sequence[int], *, title: str | None = None
) -> go.Figure:
    """The token-to-token lines of the chosen query rows: all of them as `token_lines_figure` draws them, or only
    the chosen queries and the keys they read (`chosen_lines_figure`: a few rows of a long input fill the figure).
    Shapes: weights (n, n), tokens n strings, rows r ints."""
    if len(rows) == len(tokens):
        return token_lines_figure(weights, tokens, threshold=LINE_THRESHOLD, title=title)
    return chosen_lines_figure(weights, tokens, rows, threshold=LINE_THRESHOLD, title=title)


def feed_figure(
    shares: np.ndarray, tokens: Sequence[str], *, title: str | None = None, ymax: float | None = None
) -> go.Figure:
    """How much each input token feeds one output (a row of the rollout), as bars in input order; the
    FEED_HIGHLIGHT largest are darker. Shapes: shares (n,), summing to 1; tokens n strings. With `ymax`
    (see `display_max`) the axis stops there and each taller bar is cut, its exact share written above it.
    """
    n = shares.shape[0]
    if shares.shape != (n,) or len(tokens) != n:
        raise ValueError(f"shares has shape {shares.shape} but there are {len(tokens)} tokens; expected (n,)")
    top = set(heaviest(shares, FEED_HIGHLIGHT).tolist())
    token, share = tr("input token"), tr("share")
    x = position_labels(tokens)
    cut = [] if ymax is None else np.flatnonzero(shares > ymax).tolist()
    notes = [  # written towards the middle, so that the first and last bars' notes stay on the chart
        dict(
            x=x[i],
            y=ymax,
            yanchor="bottom",
            xanchor="left" if i < n / 2 else "right",
            text=f"{x[i]}: {shares[i]:.1%} ↑",
            showarrow=False,
        )
        for i in cut
    ]
    bars = dict(
        type="bar",
        x=x,
        y=shares,
        marker=dict(color=["#08306b" if i in top else "#6baed6" for i in range(n)]),
        hovertemplate=f"{token} %{{x}}<br>{share} %{{y:.1%}}<extra></extra>",
    )
    layout = dict(
        margin=dict(l=10, r=10, t=(40 if title else 10) + (30 if cut else 0), b=10),
        height=360,
        bargap=0.15,
        xaxis=dict(title=dict(text=token), type="category", tickangle=-60, tickfont=dict(size=12 if n <= 40 else 9)),
        yaxis=dict(title=dict(text=share), tickformat=".1%" if cut else ".0%", rangemode="tozero"),
        annotations=notes,
    )
    if cut:
        layout["yaxis"]["range"] = [0.0, ymax]
    layout["title"] = dict(text=title) if title is not None else {}
    return figure([bars], layout)


def difference_heatmap(
    diff: np.ndarray,
    weights_a: np.ndarray,
    weights_b: np.ndarray,
    tokens: Sequence[str],
    positions: Sequence[int],
    *,
    title: str | None = None,
) -> go.Figure:
    """A's weights minus B's on the tokens both sentences share: blue where A gives more, red where B does.

    Shapes: diff, weights_a, weights_b (m, m), the shared rows and columns already taken; tokens m strings;
    positions m ints, their places in sentence A (for the labels). The colour range is symmetric around 0
    (at least ±0.05, so that noise stays pale).
    """
    m = diff.shape[0]
    if diff.shape != (m, m) or weights_a.shape != (m, m) or weights_b.shape != (m, m) or len(tokens) != m:
        raise ValueError(f"diff has shape {diff.shape} but there are {len(tokens)} shared tokens; expected (m, m)")
    bound = max(0.05, float(np.abs(diff).max()) if m else 0.0)
    labels = position_labels(tokens, positions)
    query, key = tr("query"), tr("key")
    trace = dict(
        type="heatmap",
        z=diff,
        x=labels,
        y=labels,
        zmin=-bound,
        zmax=bound,
        colorscale=named_colorscale("RdBu"),
        customdata=np.stack([weights_a, weights_b], axis=-1),  # (m, m, 2)
        hovertemplate=f"{query} %{{y}}<br>→ {key} %{{x}}<br>A − B = %{{z:+.3f}}<br>"
        "A %{customdata[0]:.3f}, B %{customdata[1]:.3f}<extra></extra>",
        textfont=dict(size=11),
        colorbar=dict(title=dict(text="A − B"), thickness=12),
    )
    if m <= ANNOTATE_MAX:  # "0" where the difference rounds to nothing: the few real ones stand out
        trace["text"] = [[f"{x:+.2f}" if abs(x) >= 0.005 else "0" for x in row] for row in diff.tolist()]
        trace["texttemplate"] = "%{text}"
    layout = dict(
        margin=dict(l=10, r=10, t=40 if title else 10, b=10),
        xaxis=dict(title=dict(text=tr("key (shared)")), type="category", tickangle=-60, showgrid=False),
        yaxis=dict(title=dict(text=tr("query (shared)")), type="category", autorange="reversed", showgrid=False),
        height=int(np.clip(26 * m + 190, 300, 900)),
    )
    layout["title"] = dict(text=title) if title is not None else {}
    return figure([trace], layout)


def chosen_lines_figure(
    weights: np.ndarray,
    tokens: Sequence[str],
    rows: Sequence[int],
    *,
    threshold: float = LINE_THRESHOLD,
    colour: str = QUERY_COLOUR,
    title: str | None = None,
) -> go.Figure:
    """Token to token for a few queries of a long input: only the chosen queries on the left and only the
    keys they give >= threshold weight on the right (in input order), so 3 rows of a 252-token input fill
    the figure instead of 3 lines in a column of 252 names.

    Shapes: weights (n, n), rows = queries; tokens n strings; rows r positions. Line width and opacity
    grow with the weight (one trace per width bucket). Past LABELS_MAX names per side, every k-th is named;
    the hover names them all.
    """
    n = weights.shape[0]
    if weights.shape != (n, n) or len(tokens) != n:
        raise ValueError(f"weights has shape {weights.shape} but there are {len(tokens)} tokens; expected (n, n)")
    rows = np.asarray(rows, dtype=np.intp)
    block = weights[rows]  # (r, n)
    keys = np.flatnonzero((block >= threshold).any(axis=0))  # (k,): every key a chosen query reads enough
    span = max(len(rows), len(keys), 2) - 1
    y_left = np.linspace(0, span, len(rows)) if len(rows) > 1 else np.array([span / 2])
    y_right = np.linspace(0, span, len(keys)) if len(keys) > 1 else np.full(len(keys), span / 2)
    data = []
    for lo, hi, width in WIDTH_BUCKETS:
        i, c = np.nonzero((block[:, keys] >= max(lo, threshold)) & (block[:, keys] < hi))  # (query, key) pairs
        if i.size:
            ys = np.column_stack([y_left[i], y_right[c], np.full(i.size, np.nan)]).ravel()
            data.append(bucket_lines(i, ys, width, colour, hi))
    labels = safe_labels(tokens)
    hover_left = [
        tr(
            "'{query}' (position {position}): heaviest key '{key}' (position {key_position}) {weight}",
            query=labels[q],
            position=q,
            key=labels[block[a].argmax()],
            key_position=block[a].argmax(),
            weight=num(block[a].max(), ".2f"),
        )
        for a, q in enumerate(rows)
    ]
    hover_right = [
        tr(
            "'{key}' (position {position}) gets {weight} at most from the chosen queries",
            key=labels[j],
            position=j,
            weight=num(block[:, j].max(), ".2f"),
        )
        for j in keys
    ]
    for x, ys, positions, hovertext, side in (
        (0.0, y_left, rows, hover_left, "middle left"),
        (1.0, y_right, keys, hover_right, "middle right"),
    ):
        every = -(-len(positions) // LABELS_MAX) if len(positions) else 1  # name every k-th past LABELS_MAX
        data.append(
            dict(
                type="scatter",
                x=np.full(len(positions), x),
                y=ys,
                mode="markers+text",
                text=[f"{p} · {labels[p]}" if a % every == 0 else "" for a, p in enumerate(positions)],
                textposition=side,
                textfont=dict(size=10) if len(positions) > 40 else {},  # else the layout's (larger when presenting)
                hovertext=hovertext,
                hoverinfo="text",
                showlegend=False,
                marker=dict(size=6, color="#555"),
            )
        )
    none = tr("no weight of these queries reaches {threshold}", threshold=num(threshold, "g"))
    note = [] if len(keys) else [dict(text=none, showarrow=False)]
    layout = dict(
        margin=dict(l=10, r=10, t=70 if title else 40, b=10),
        hovermode="closest",
        xaxis=dict(range=[-0.9, 1.9], visible=False, fixedrange=True),
        yaxis=dict(range=[span + 0.5, -0.5], visible=False),
        height=int(np.clip(24 * (span + 1) + 100, 260, 1000)),
        annotations=[*query_key_headers("center", "center"), *note],
    )
    layout["title"] = dict(text=title) if title is not None else {}
    return figure(data, layout)


def display_max(values: np.ndarray, tokens: Sequence[str]) -> tuple[float, bool]:
    """The top of a colour or bar scale for shares that [CLS]/[SEP] may dwarf: (top, capped).

    Shapes: values (..., n), tokens n strings. When the special tokens' largest value is more than twice
    everything else's, the scale stops at 1.25 × the largest other value (capped = True): the other tokens'
    differences become visible, and the capped cells keep their exact value in the hover and the export.
    """
    values = np.asarray(values)
    special = np.array([tok in SPECIAL_TOKENS for tok in tokens])
    top = float(values.max()) if values.size else 1.0
    if not special.any() or special.all():
        return top or 1.0, False
    others = float(values[..., ~special].max())
    if float(values[..., special].max()) > 2 * others > 0:
        return 1.25 * others, True
    return top or 1.0, False
