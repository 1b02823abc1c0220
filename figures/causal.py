"""Figures for the causal masking page: the check that the future cannot leak into earlier outputs, and the
after-softmax bug's leaked weight. Numpy in, plotly Figure out."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from figures.base import RIGHT_COLOUR, WRONG_COLOUR, figure, hline
from figures.heatmaps import safe_labels
from locales import num, tr

# positions after t, which may change
LATER_COLOUR = "#7f7f7f"


def difference_bars(diff: np.ndarray, t: int, tokens: Sequence[str], *, height: int = 300) -> go.Figure:
    """Per position, the largest change of the output, with the boundary after position t marked.

    Shapes: diff (n,). Positions 0..t must show exactly 0 (green; red if not); later ones are grey.
    """
    n = len(diff)
    colours = [(RIGHT_COLOUR if d == 0.0 else WRONG_COLOUR) if i <= t else LATER_COLOUR for i, d in enumerate(diff)]
    labels = ["0" if d == 0.0 else num(d, ".2e") for d in diff]
    bars = dict(
        type="bar",
        x=list(range(n)),
        y=diff,
        marker=dict(color=colours),
        text=labels,
        textposition="outside",
        hovertemplate=tr("position {position}: max |Δ output| = {change}", position="%{x}", change="%{y:.3e}")
        + "<extra></extra>",
    )
    boundary = t + 0.5  # a dashed vertical line there, labelled at the top on its wider side (so never cut off)
    top = float(np.max(diff)) if n and np.max(diff) > 0 else 1.0
    layout = dict(
        shapes=[
            dict(
                type="line",
                xref="x",
                x0=boundary,
                x1=boundary,
                yref="y domain",
                y0=0,
                y1=1,
                line=dict(color="#333", dash="dash"),
            )
        ],
        annotations=[
            dict(
                text=tr("t = {t}: nothing may move to the left", t=t),
                showarrow=False,
                xref="x",
                x=boundary,
                xanchor="right" if boundary > n / 2 else "left",
                yref="y domain",
                y=1,
                yanchor="top",
            )
        ],
        xaxis=dict(
            tickmode="array",
            tickvals=list(range(n)),
            ticktext=safe_labels(tokens),
            # Translators: an axis title: the position of a token in the sequence
            title=dict(text=tr("position")),
        ),
        yaxis=dict(title=dict(text=tr("max |after − before|")), range=[0, top * 1.3]),
        margin=dict(l=10, r=10, t=30, b=10),
        height=height,
        showlegend=False,
    )
    return figure([bars], layout)


def leak_bars(row_sums: np.ndarray, leak: np.ndarray, tokens: Sequence[str], *, height: int = 300) -> go.Figure:
    """Each row's weight kept by the after-softmax mask (its row sum) stacked with the mass lost to the future.

    Shapes: row_sums (n,), leak (n,). A correct mask would make every bar a full 1.
    """
    n = len(row_sums)
    x = list(range(n))
    data = [
        dict(
            type="bar",
            x=x,
            y=row_sums,
            name=tr("row sum (what is left)"),
            marker=dict(color="#1f77b4"),
            text=[num(s, ".3f") for s in row_sums],
            textposition="inside",
            hovertemplate=tr("row {row}: sums to {total}", row="%{x}", total="%{y:.4f}") + "<extra></extra>",
        ),
        dict(
            type="bar",
            x=x,
            y=leak,
            name=tr("leak (weight the future had)"),
            marker=dict(color=WRONG_COLOUR),
            text=[num(s, ".3f") if s > 0.1 else "" for s in leak],
            textposition="inside",
            hovertemplate=tr("row {row}: {leak} of the weight had gone to the future", row="%{x}", leak="%{y:.4f}")
            + "<extra></extra>",
        ),
    ]
    layout = dict(
        shapes=[hline(1.0, dict(color="#333", dash="dot"))[0]],
        barmode="stack",
        xaxis=dict(tickmode="array", tickvals=x, ticktext=safe_labels(tokens), title=dict(text=tr("query (row)"))),
        # Translators: an axis title: attention weight
        yaxis=dict(title=dict(text=tr("weight")), range=[0, 1.05]),
        margin=dict(l=10, r=10, t=50, b=10),
        height=height,
        legend=dict(orientation="h", yanchor="bottom", y=1.04, x=0),
    )
    return figure(data, layout)
