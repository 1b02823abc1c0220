"""Heatmaps of attention weights and of any labelled matrix.

Axes are numeric positions with the tokens as tick labels, because plotly merges repeated
category names (a sentence with "the" twice would lose a row).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from figures.base import colorscale as named_colorscale
from figures.base import figure
from locales import marked, num, tr

WEIGHT_COLORSCALE = "Blues"
MINUS_INF = "−∞"
HIDDEN = "?"  # a value the page does not show yet (NaN in the arrays it draws): a class question's answer
HIDDEN_HOVER = marked("hidden until the teacher reveals the answer")


def fmt(x: float, digits: int = 3) -> str:
    """A number for display; -inf shows as −∞, a hidden value (NaN) as ?, and a value that rounds to zero as 0.000,
    never -0.000."""
    if x == -math.inf:  # not np.isneginf: two ufunc calls per number were ~1 ms of a heads page run (528 numbers)
        return MINUS_INF
    if x == math.inf:
        return "∞"
    if x != x:
        return HIDDEN
    text = f"{x:.{digits}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def pair_text(i: int, j: int, ticks) -> str:
    """A hover's name for the cell of query `i` and key `j` (their labels `ticks`), in the session's language."""
    return tr(
        "query {query} '{query_token}' → key {key} '{key_token}'",
        query=i,
        query_token=ticks[i],
        key=j,
        key_token=ticks[j],
    )


def safe_labels(labels: Sequence[str]) -> list[str]:
    """Token labels escaped for plotly's HTML-like text (a label is user text, never markup)."""
    return [html.escape(str(label)) for label in labels]


def _token_axis(labels: Sequence[str], title: str, down: bool = False) -> dict:
    """An axis of one cell per label; `down`: the first at the top. Its range is given, not left to plotly: a
    heatmap whose every cell is hidden (NaN, while a class question is open) has no data to range by, and plotly
    then spreads a few stray tick labels over an empty box."""
    n = len(labels)
    axis = dict(
        tickmode="array",
        tickvals=list(range(n)),
        ticktext=safe_labels(labels),
        range=[n - 0.5, -0.5] if down else [-0.5, n - 0.5],
        showgrid=False,
        zeroline=False,
    )
    if title:
        axis["title"] = dict(text=title)
    return axis


def attention_heatmap(
    weights: np.ndarray,
    query_labels: Sequence[str],
    key_labels: Sequence[str],
    *,
    scores: np.ndarray | None = None,
    scale_factor: float | None = None,
    allowed: np.ndarray | None = None,
    title: str | None = None,
    annotate: bool = True,
    font_size: int = 14,
    height: int | None = None,
    square: bool = False,
) -> go.Figure:
    """Heatmap of attention weights: rows are queries, columns are keys, colour fixed to 0..1.

    Shapes: weights (n, m); scores (n, m) raw q·k (optional, for the hover arithmetic); allowed (n, m)
    bool, True = may attend. Hovering a cell shows q_i · k_j, the division by sqrt(d_k) and the weight.
    `square`: square cells filling whatever box the page gives the chart (see `square_layout`).
    """
    n, m = weights.shape
    hover = _hover_text(weights, query_labels, key_labels, scores, scale_factor, allowed)
    trace = dict(
        type="heatmap",
        z=weights,
        x=list(range(m)),
        y=list(range(n)),
        zmin=0.0,
        zmax=1.0,
        colorscale=named_colorscale(WEIGHT_COLORSCALE),
        customdata=hover,
        hovertemplate="%{customdata}<extra></extra>",
        # Translators: the title of the colour bar of a heatmap of attention weights
        colorbar=dict(title=dict(text=tr("weight")), thickness=12),
    )
    if annotate:
        trace.update(
            text=[[fmt(w, 2) for w in row] for row in weights], texttemplate="%{text}", textfont=dict(size=font_size)
        )
    layout = dict(
        title=dict(text=title) if title else None,
        xaxis=_token_axis(key_labels, tr("key (attended to)")),
        yaxis=_token_axis(query_labels, tr("query (attending)"), down=True),
        margin=dict(l=10, r=10, t=40 if title else 10, b=10),
        height=height or max(260, 48 * n + 110),
    )
    if annotate and weights.size and np.isnan(weights).all():
        # Every cell hidden: plotly draws nothing of a heatmap without one number, not even its cells' text, and the
        # chart was an empty box. Its ? go in as annotations (not a trace: the chart's numbers and files stay its own).
        layout["annotations"] = [
            dict(x=j, y=i, text=HIDDEN, showarrow=False, font=dict(size=font_size)) for i in range(n) for j in range(m)
        ]
    if square:
        square_layout(layout, trace, height)
    return figure([trace], {k: v for k, v in layout.items() if v is not None})


def square_layout(layout: dict, trace: dict, height: int | None = None) -> None:
    """Square cells, in place: the y axis is tied to the x axis and both keep to the space they need, the
    colour bar lies flat underneath, and the height is the box's (a page gives the chart a square box)."""
    layout["xaxis"] = {k: v for k, v in layout["xaxis"].items() if k != "title"} | dict(
        constrain="domain", constraintoward="left"
    )
    layout["yaxis"] = {k: v for k, v in layout["yaxis"].items() if k != "title"} | dict(
        scaleanchor="x", scaleratio=1, constrain="domain", constraintoward="top"
    )  # no axis titles: the caption says which is which
    layout["height"] = height
    layout["margin"] = dict(layout["margin"], l=4, r=4, b=4)
    if "colorbar" in trace:
        trace["colorbar"] = dict(trace["colorbar"], thickness=10, title=None, outlinewidth=0)


def _hover_text(weights, query_labels, key_labels, scores, scale_factor, allowed) -> np.ndarray:
    """One string per cell spelling out how its weight was computed (in the session's language: each message is
    translated once, then filled in for every cell)."""
    n, m = weights.shape
    query_labels, key_labels = safe_labels(query_labels), safe_labels(key_labels)
    head_text = tr("query {query} '{query_label}' → key {key} '{key_label}'")
    hidden_text = tr(HIDDEN_HOVER)
    scaled_text = tr("divided by √d_k = {score}")
    not_scaled_text = tr("not scaled")
    masked_text = tr("masked: −∞ before the softmax")
    weight_text = tr("weight = {weight}")
    out = np.empty((n, m), dtype=object)
    for i in range(n):
        for j in range(m):
            head = head_text.format(query=i, query_label=query_labels[i], key=j, key_label=key_labels[j])
            if weights[i, j] != weights[i, j]:  # hidden: nothing of its arithmetic either
                out[i, j] = f"{head}<br>{hidden_text}"
                continue
            lines = [head]
            if scores is not None:
                lines.append(f"q_{i} · k_{j} = {num(scores[i, j], '.3f')}")
                if scale_factor is not None and scale_factor != 1.0:
                    lines.append(scaled_text.format(score=num(scores[i, j] * scale_factor, ".3f")))
                else:
                    lines.append(not_scaled_text)
            if allowed is not None and not allowed[i, j]:
                lines.append(masked_text)
            lines.append(weight_text.format(weight=num(weights[i, j], ".3f")))
            out[i, j] = "<br>".join(lines)
    return out


def matrix_heatmap(
    values: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    title: str | None = None,
    colorscale: str = "RdBu",
    symmetric: bool = True,
    zmin: float | None = None,
    zmax: float | None = None,
    digits: int = 2,
    height: int | None = None,
    annotate: bool = True,
    font_size: int | None = None,
    square: bool = False,
) -> go.Figure:
    """Annotated heatmap of any small matrix (-inf cells shown as −∞ and left uncoloured).

    Shapes: values (r, c); row_labels r strings; col_labels c strings. `annotate=False` leaves the numbers
    to the hover (for cells too small to hold them); `square` as in `attention_heatmap`.
    """
    values = np.asarray(values, dtype=float)
    r, c = values.shape
    finite = np.where(np.isfinite(values), values, np.nan)
    if symmetric and zmin is None and zmax is None:
        bound = float(np.nanmax(np.abs(finite))) if np.isfinite(finite).any() else 1.0
        zmin, zmax = -(bound or 1.0), (bound or 1.0)
    text = [[fmt(x, digits) for x in row] for row in values]
    trace = dict(
        type="heatmap",
        z=finite,
        x=list(range(c)),
        y=list(range(r)),
        zmin=zmin,
        zmax=zmax,
        colorscale=named_colorscale(colorscale),
        text=text,
        # the words translated, plotly's own %{...} fields put in around them
        hovertemplate=tr("row {row}, column {column}: {value}", row="%{y}", column="%{x}", value="%{text}")
        + "<extra></extra>",
        showscale=False,
    )
    if annotate:
        trace["texttemplate"] = "%{text}"
        if font_size:
            trace["textfont"] = dict(size=font_size)
    layout = dict(
        xaxis=_token_axis(col_labels, None),
        yaxis=_token_axis(row_labels, None, down=True),
        margin=dict(l=10, r=10, t=40 if title else 10, b=10),
        height=height or max(180, 34 * r + 90),
    )
    if title:
        layout["title"] = dict(text=title)
    if square:
        square_layout(layout, trace, height)
    return figure([trace], layout)
