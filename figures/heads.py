"""Figures for multi-head attention: how d_model is split between heads, and every head's weights.

Pure functions: numpy arrays in, plotly Figures out (no streamlit). Built as plain dicts and wrapped
without validation (figures.base); the tests validate them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from figures.base import colorscale as named_colorscale
from figures.base import figure, subplot_title
from figures.heatmaps import WEIGHT_COLORSCALE, fmt, pair_text, safe_labels
from locales import tr

HEAD_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")


def head_colour(h: int) -> str:
    """The colour that marks head h (0-based) in every figure."""
    return HEAD_COLOURS[h % len(HEAD_COLOURS)]


def head_split_figure(
    matrix: np.ndarray,
    n_heads: int,
    row_labels: Sequence[str],
    *,
    title: str | None = None,
    annotate: bool | None = None,
) -> go.Figure:
    """A (n, d_model) matrix with each head's block of d_head columns framed and named.

    Shapes: matrix (n, d_model), n_heads divides d_model; row_labels n strings. Head h owns columns
    h*d_head .. (h+1)*d_head - 1: the picture of "d_model is split into h chunks".
    """
    d_model = np.shape(matrix)[1]
    if n_heads < 1 or d_model % n_heads:
        raise ValueError(f"n_heads={n_heads} does not divide d_model={d_model}")
    d_head = d_model // n_heads
    blocks = [
        (
            h * d_head,
            (h + 1) * d_head,
            tr("head {head}", head=h + 1) if n_heads <= 8 or d_head > 1 else str(h + 1),
            head_colour(h),
        )
        for h in range(n_heads)
    ]
    return column_blocks_figure(matrix, row_labels, blocks, title=title, annotate=annotate)


def column_blocks_figure(
    matrix: np.ndarray,
    row_labels: Sequence[str],
    blocks: Sequence[tuple[int, int, str, str]],
    *,
    column_labels: Sequence[str] | None = None,
    title: str | None = None,
    annotate: bool | None = None,
) -> go.Figure:
    """A matrix heatmap (blue > 0, red < 0) with groups of columns framed and named above.

    Shapes: matrix (n, d); row_labels n strings; blocks (start, stop, name, colour) with
    0 <= start < stop <= d; column_labels d strings (default: the column numbers).
    """
    matrix = np.asarray(matrix, dtype=float)
    n, d = matrix.shape
    bound = float(np.max(np.abs(matrix))) or 1.0
    annotate = (d <= 16 and n <= 12) if annotate is None else annotate
    owner = [""] * d
    for start, stop, name, _ in blocks:
        owner[start:stop] = [name] * (stop - start)
    owner = safe_labels(owner)
    trace = dict(
        type="heatmap",
        z=matrix,
        x=list(range(d)),
        y=list(range(n)),
        zmin=-bound,
        zmax=bound,
        colorscale=named_colorscale("RdBu"),
        textfont=dict(size=10),
        customdata=[[[owner[j], fmt(v, 3)] for j, v in enumerate(row)] for row in matrix.tolist()],
        hovertemplate=tr(
            "row {row}, column {column} ({block}): {value}",
            row="%{y}",
            column="%{x}",
            block="%{customdata[0]}",
            value="%{customdata[1]}",
        )
        + "<extra></extra>",
        showscale=False,
    )
    if annotate:
        trace.update(text=[[fmt(v, 2) for v in row] for row in matrix.tolist()], texttemplate="%{text}")
    shapes, annotations = [], []
    for start, stop, name, colour in blocks:
        left, right = start - 0.5, stop - 0.5
        shapes.append(dict(type="rect", x0=left, x1=right, y0=-0.5, y1=n - 0.5, line=dict(color=colour, width=3)))
        annotations.append(
            dict(
                x=(left + right) / 2,
                y=-0.5,
                yshift=4,
                yanchor="bottom",
                showarrow=False,
                text=f"<b>{safe_labels([name])[0]}</b>",
                font=dict(color=colour, size=12),
            )
        )
    # Translators: an axis title: the columns of a matrix
    xaxis = dict(title=dict(text=tr("column")), showgrid=False, zeroline=False)
    if column_labels is not None:
        xaxis.update(tickmode="array", tickvals=list(range(d)), ticktext=safe_labels(column_labels), tickangle=-60)
    layout = dict(
        margin=dict(l=10, r=10, t=70 if title else 30, b=10),
        height=max(200, 26 * n + 130) + (80 if column_labels is not None else 0),
        xaxis=xaxis,
        yaxis=dict(
            tickmode="array",
            tickvals=list(range(n)),
            ticktext=safe_labels(row_labels),
            autorange="reversed",
            showgrid=False,
            zeroline=False,
        ),
    )
    if shapes:
        layout.update(shapes=shapes, annotations=annotations)
    if title:
        layout["title"] = dict(text=title)
    return figure([trace], layout)


def _grid_domains(
    rows: int, cols: int, horizontal_spacing: float, vertical_spacing: float
) -> list[tuple[list[float], list[float]]]:
    """(x domain, y domain) of each cell of a rows x cols grid, row by row from the top left: the same
    numbers as plotly's make_subplots (which validates every property, too slowly for a rerun)."""
    width = (1.0 - horizontal_spacing * (cols - 1)) / cols
    height = (1.0 - vertical_spacing * (rows - 1)) / rows
    cells = []
    for r in range(rows):
        from_bottom = rows - 1 - r
        y0 = sum([height] * from_bottom) + from_bottom * vertical_spacing
        y_domain = [min(max(y0, 0.0), 1.0), min(max(y0 + height, 0.0), 1.0)]
        for c in range(cols):
            x0 = sum([width] * c) + c * horizontal_spacing
            cells.append(([x0, x0 + width], y_domain))
    return cells


def heads_grid(
    weights: np.ndarray,
    labels: Sequence[str],
    titles: Sequence[str],
    *,
    columns: int = 4,
    annotate: bool | None = None,
    height_per_row: int = 300,
) -> go.Figure:
    """One attention heatmap per head, side by side, all on one colour scale 0..1.

    Shapes: weights (n_heads, n, n), rows sum to 1; labels n token strings; titles n_heads strings
    (plotly text: each title is escaped here except for <br> line breaks).
    """
    weights = np.asarray(weights, dtype=float)
    h, n, m = weights.shape
    if len(titles) != h:
        raise ValueError(f"{len(titles)} titles for {h} heads")
    cols = max(1, min(columns, h))
    rows = -(-h // cols)
    annotate = (n <= 8 and cols <= 4) if annotate is None else annotate
    ticks = safe_labels(labels)
    cells = _grid_domains(rows, cols, 0.04, min(0.25, 0.5 / rows))
    layout: dict = {}
    for k, (x_domain, y_domain) in enumerate(cells):  # every cell of the grid gets its axes, as in make_subplots
        suffix = str(k + 1) if k else ""
        layout["xaxis" + suffix] = dict(anchor="y" + suffix, domain=x_domain)
        layout["yaxis" + suffix] = dict(anchor="x" + suffix, domain=y_domain)
    pairs = [pair_text(i, j, ticks) for i in range(n) for j in range(m)]
    hover = "%{customdata}<br>" + tr("weight = {weight}", weight="%{z:.3f}") + "<extra></extra>"
    data, annotations = [], []
    for k in range(h):
        suffix = str(k + 1) if k else ""
        trace = dict(
            type="heatmap",
            z=weights[k],
            x=list(range(m)),
            y=list(range(n)),
            coloraxis="coloraxis",
            textfont=dict(size=10),
            customdata=[
                [tr("head {head}: {pair}", head=k + 1, pair=pairs[i * m + j]) for j in range(m)] for i in range(n)
            ],
            hovertemplate=hover,
            name=tr("head {head}", head=k + 1),
            xaxis="x" + suffix,
            yaxis="y" + suffix,
        )
        if annotate:
            trace.update(text=[[f"{w:.2f}" for w in row] for row in weights[k].tolist()], texttemplate="%{text}")
        data.append(trace)
        axis = dict(
            tickmode="array",
            tickvals=list(range(n)),
            ticktext=ticks,
            showgrid=False,
            zeroline=False,
            tickfont=dict(size=9),
        )
        # ranges given, not left to plotly: a head whose cells are all hidden (NaN, while a class question is open)
        # has no data to range by (figures.heatmaps._token_axis)
        layout["xaxis" + suffix].update(axis, range=[-0.5, n - 0.5])
        layout["yaxis" + suffix].update(axis, range=[n - 0.5, -0.5], showticklabels=k % cols == 0)
        title = _title(titles[k])
        if title:  # a subplot title, centred above its cell (as make_subplots writes it)
            x_domain, y_domain = cells[k]
            annotations.append(subplot_title(title, sum(x_domain) / 2.0, y_domain[1], font=dict(size=12, color="#222")))
    if annotations:
        layout["annotations"] = annotations
    layout.update(
        coloraxis=dict(
            colorscale=named_colorscale(WEIGHT_COLORSCALE),
            cmin=0.0,
            cmax=1.0,
            # Translators: the colour bar's title: an attention weight
            colorbar=dict(title=dict(text=tr("weight")), thickness=12),
        ),
        height=rows * height_per_row + 40,
        margin=dict(l=10, r=10, t=70, b=10),
    )
    return figure(data, layout)


def _title(text: str) -> str:
    """Escape a title for plotly's HTML-like text, keeping the line breaks we put in."""
    return "<br>".join(safe_labels(str(text).split("\n")))
