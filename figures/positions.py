"""Figures of the position page: tables over positions, ALiBi's slopes, RoPE's score by offset, a window's
reach per layer, and a padded batch's weights. Plain dicts (figures.base.figure); tests validate them.

Their words are in the session's language (locales.tr); ui.charts.cached_figure, which caches them for every
session, keys on the language."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import sample_colorscale

from figures.base import colorscale, figure, wrap_title
from figures.heads import heads_grid
from figures.heatmaps import WEIGHT_COLORSCALE, matrix_heatmap, pair_text, safe_labels, square_layout
from locales import num, tr

UNUSED_FILL = "rgba(120, 120, 120, 0.55)"


def layer_colours(layers: int) -> list[str]:
    """One colour per layer, dark (layer 1, the mask itself) to light (the last layer)."""
    return sample_colorscale("Viridis", [k / max(layers - 1, 1) * 0.9 for k in range(layers)])


def _position_axis(n: int, title: str | None, labels: Sequence[str] | None = None) -> dict:
    axis = dict(showgrid=False, zeroline=False)
    if labels is not None:
        axis.update(tickmode="array", tickvals=list(range(n)), ticktext=safe_labels(labels))
    if title:
        axis["title"] = dict(text=title)
    return axis


TITLE_CHARS = 14  # a panel title's lines: 'RoPE (rotates' / 'q and k)'


def methods_grid(weights: np.ndarray, labels: Sequence[str], methods: Sequence[str], **kwargs) -> go.Figure:
    """One attention heatmap per way of adding position, side by side (heads_grid's layout): each panel's
    hover and trace name say its method, not "head k"; its title is wrapped to two short lines, so that four
    panels stand in a row in a laptop's column. Shapes: weights (n_methods, n, n); kwargs as heads_grid."""
    titles = [wrap_title(m, TITLE_CHARS).replace("<br>", "\n") for m in methods]
    fig = heads_grid(weights, labels, titles, **kwargs)
    ticks = safe_labels(labels)
    for trace, method in zip(fig.spec["data"], methods):
        trace["name"] = method
        trace["customdata"] = [
            [
                tr(
                    "{method}: query {query} '{query_token}' → key {key} '{key_token}'",
                    method=method,
                    query=i,
                    query_token=ticks[i],
                    key=j,
                    key_token=ticks[j],
                )
                for j in range(len(ticks))
            ]
            for i in range(len(ticks))
        ]
    return fig


def table_heatmap(
    values: np.ndarray,
    *,
    x_title: str,
    y_title: str,
    hover: str,
    zmin: float = -1.0,
    zmax: float = 1.0,
    height: int | None = None,
    square: bool = False,
) -> go.Figure:
    """A large matrix over positions (a position table, its cosine similarities): colour only, the numbers in
    the hover (`hover`: a plotly template of %{x}, %{y}, %{z}). Shapes: values (r, c)."""
    values = np.asarray(values, dtype=float)
    r, c = values.shape
    trace = dict(
        type="heatmap",
        z=values,
        x=list(range(c)),
        y=list(range(r)),
        zmin=zmin,
        zmax=zmax,
        colorscale=colorscale("RdBu"),
        hovertemplate=hover + "<extra></extra>",
        colorbar=dict(thickness=12),
    )
    layout = dict(
        xaxis=_position_axis(c, x_title),
        yaxis=dict(_position_axis(r, y_title), autorange="reversed"),
        margin=dict(l=10, r=10, t=10, b=10),
        height=height or 420,
    )
    if square:
        square_layout(layout, trace, height)
    return figure([trace], layout)


def similarity_figure(sims: np.ndarray) -> go.Figure:
    """A learned position table's cosine similarities, position against position, in square cells.
    Shapes: sims (n, n)."""
    # Translators: an axis title: a position in the sequence (0, 1, 2, ...)
    axis = tr("position")
    hover = tr("positions {first} and {second}: cos = {cosine}", first="%{y}", second="%{x}", cosine="%{z:.3f}")
    return table_heatmap(sims, x_title=axis, y_title=axis, hover=hover, square=True)


def sinusoidal_figure(table: np.ndarray) -> go.Figure:
    """The sinusoidal table, position down, dimension across (pairs: sin, cos). Shapes: table (n, d)."""
    return table_heatmap(
        table,
        x_title=tr("dimension (pairs: sin, cos)"),
        y_title=tr("position p"),
        hover=tr(
            "position {position}, dimension {dimension}: {value}", position="%{y}", dimension="%{x}", value="%{z:.3f}"
        ),
        height=420,
    )


def numbered_matrix(values: np.ndarray, row_labels, col_labels, font: int | None, digits: int = 2) -> go.Figure:
    """A small matrix in square cells, with its numbers in the cells at font size `font` (None: too small to
    hold them, the hover shows them). Shapes: values (r, c); row_labels r strings; col_labels c strings."""
    return matrix_heatmap(
        values, row_labels, col_labels, digits=digits, annotate=font is not None, font_size=font, square=True
    )


def four_ways_figure(weights: np.ndarray, labels: Sequence[str], methods: Sequence[str]) -> go.Figure:
    """The toy head's weights with each way of adding position, four panels to a row.
    Shapes: weights (n_methods, n, n); labels n words; methods n_methods names."""
    return methods_grid(weights, labels, methods, columns=4, height_per_row=340)


def alibi_heads_figure(weights: np.ndarray, labels: Sequence[str], slopes: np.ndarray) -> go.Figure:
    """Each ALiBi head's weights, titled with its slope, four panels to a row.
    Shapes: weights (H, n, n); labels n words; slopes (H,)."""
    titles = [tr("head {head} · m = {slope}", head=h + 1, slope=num(m, ".3g")) for h, m in enumerate(slopes)]
    return heads_grid(weights, labels, titles, columns=4, height_per_row=300)


def slopes_figure(slopes: np.ndarray, *, height: int = 300) -> go.Figure:
    """ALiBi's slope m_h per head, as bars labelled 2^-e; the window 1/m_h in the hover. Shapes: slopes (H,)."""
    slopes = np.asarray(slopes, dtype=float)
    heads = list(range(1, len(slopes) + 1))
    labels = [f"2^{num(-np.log2(m), '.3g')}".replace("2^", "2^−") for m in slopes]
    trace = dict(
        type="bar",
        x=heads,
        y=slopes,
        text=labels,
        textposition="outside",
        customdata=[[label, 1 / m] for label, m in zip(labels, slopes)],
        hovertemplate=tr("head {head}: m = {power} = {slope}", head="%{x}", power="%{customdata[0]}", slope="%{y:.4g}")
        + "<br>"
        + tr("weight × 1/e every {distance} positions back", distance="%{customdata[1]:.3g}")
        + "<extra></extra>",
        marker=dict(color="#3182bd"),
    )
    layout = dict(
        xaxis=dict(title=dict(text=tr("head h")), tickmode="array", tickvals=heads),
        yaxis=dict(title=dict(text=tr("slope m_h")), range=[0, max(1.0, float(slopes.max()) * 1.25)]),
        margin=dict(l=10, r=10, t=10, b=10),
        height=height,
    )
    return figure([trace], layout)


def offset_figure(offsets: np.ndarray, scores: np.ndarray, *, height: int = 300) -> go.Figure:
    """The RoPE score q·k as a function of the offset m - n alone. Shapes: offsets (m,), scores (m,)."""
    trace = dict(
        type="scatter",
        mode="lines+markers",
        x=np.asarray(offsets).tolist(),
        y=np.asarray(scores, dtype=float),
        marker=dict(size=5, color="#6a3d9a"),
        line=dict(color="#6a3d9a"),
        hovertemplate=tr("offset m − n = {offset}: score {score}", offset="%{x}", score="%{y:.3f}") + "<extra></extra>",
    )
    layout = dict(
        xaxis=dict(title=dict(text=tr("offset m − n (query position − key position)")), zeroline=True),
        yaxis=dict(title=dict(text=tr("q_m · k_n after rotation"))),
        margin=dict(l=10, r=10, t=10, b=10),
        height=height,
    )
    return figure([trace], layout)


def reach_heatmap(first: np.ndarray, layers: int, *, square: bool = False, height: int | None = None) -> go.Figure:
    """Which key each query has heard from after each layer of a sliding window: the colour and number of a
    cell are the first layer that reaches it (1 = the mask itself), blank if none does.

    Shapes: first (n, n) ints in 0..layers.
    """
    first = np.asarray(first)
    n = first.shape[0]
    z = np.where(first > 0, first, np.nan).astype(float)  # unreached cells stay uncoloured
    colours = layer_colours(layers)
    steps = [[stop, colour] for k, colour in enumerate(colours) for stop in (k / layers, (k + 1) / layers)]
    text = [[str(v) if v > 0 else "" for v in row] for row in first.tolist()]
    trace = dict(
        type="heatmap",
        z=z,
        x=list(range(n)),
        y=list(range(n)),
        zmin=0.5,
        zmax=layers + 0.5,
        colorscale=steps,  # one flat colour per layer
        text=text,
        texttemplate="%{text}" if n <= 24 else None,
        hovertemplate=tr(
            "query {query} ← key {key}: reached by layer {layer}", query="%{y}", key="%{x}", layer="%{text}"
        )
        + "<extra></extra>",
        # Translators: the title of a colour bar: the layer (1, 2, 3...) of a stack of layers
        colorbar=dict(title=dict(text=tr("layer")), tickvals=list(range(1, layers + 1)), thickness=12),
        xgap=1,
        ygap=1,
    )
    layout = dict(
        xaxis=_position_axis(n, tr("key j (where the information starts)")),
        yaxis=dict(_position_axis(n, tr("query i")), autorange="reversed"),
        margin=dict(l=10, r=10, t=10, b=10),
        height=height or max(300, 24 * n + 110),
        plot_bgcolor="#ffffff",
    )
    if square:
        square_layout(layout, trace, height)
    return figure([trace], {k: v for k, v in layout.items() if v is not None})


def padded_heatmap(
    weights: np.ndarray,
    used: np.ndarray,
    labels: Sequence[str],
    *,
    title: str | None = None,
    height: int | None = None,
) -> go.Figure:
    """One sequence of a padded batch: its weights, padded keys at exactly 0, and each unused (padded) query's
    row greyed out and named "unused" instead of numbers. Shapes: weights (n, n), used (n,), labels n strings."""
    weights, used = np.asarray(weights, dtype=float), np.asarray(used, dtype=bool)
    n = weights.shape[0]
    ticks = safe_labels(labels)
    text = [[num(w, ".2f") if used[i] else "" for w in row] for i, row in enumerate(weights.tolist())]
    unused = tr("a padded query: unused (reported as 0)")
    hover = [
        [
            pair_text(i, j, ticks)
            + "<br>"
            + (tr("weight = {weight}", weight=num(weights[i, j], ".3f")) if used[i] else unused)
            for j in range(n)
        ]
        for i in range(n)
    ]
    trace = dict(
        type="heatmap",
        z=weights,
        x=list(range(n)),
        y=list(range(n)),
        zmin=0.0,
        zmax=1.0,
        colorscale=colorscale(WEIGHT_COLORSCALE),
        text=text,
        texttemplate="%{text}",
        customdata=hover,
        hovertemplate="%{customdata}<extra></extra>",
        # Translators: the title of a colour bar: attention weight
        colorbar=dict(title=dict(text=tr("weight")), thickness=12),
    )
    shapes = [
        dict(
            type="rect",
            xref="x",
            yref="y",
            x0=-0.5,
            x1=n - 0.5,
            y0=i - 0.5,
            y1=i + 0.5,
            fillcolor=UNUSED_FILL,
            line=dict(width=0),
        )
        for i in range(n)
        if not used[i]
    ]
    unused_row = tr("unused (padding)")
    annotations = [
        dict(x=(n - 1) / 2, y=i, xref="x", yref="y", text=unused_row, showarrow=False, font=dict(color="#ffffff"))
        for i in range(n)
        if not used[i]
    ]
    layout = dict(
        # Translators: an axis title: the keys of attention
        xaxis=_position_axis(n, tr("key"), labels),
        # Translators: an axis title: the queries of attention
        yaxis=dict(_position_axis(n, tr("query"), labels), autorange="reversed"),
        shapes=shapes,
        annotations=annotations,
        margin=dict(l=10, r=10, t=40 if title else 10, b=10),
        height=height or max(260, 40 * n + 110),
    )
    if title:
        layout["title"] = dict(text=safe_labels([title])[0])
    return figure([trace], layout)
