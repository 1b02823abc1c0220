"""The d_k = 2 geometry view: queries and keys as arrows in the plane."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from figures.base import figure
from figures.heatmaps import safe_labels
from locales import tr

QUERY_COLOUR = "#d62728"
KEY_COLOUR = "#1f77b4"


def arrows_figure(q: np.ndarray, k: np.ndarray, tokens: Sequence[str], *, height: int = 420) -> go.Figure:
    """Each query (red) and key (blue) drawn as an arrow from the origin.

    Shapes: q (n, 2), k (n, 2). Aligned arrows have a large dot product; perpendicular ones zero.
    """
    labels = safe_labels(tokens)
    arrows = [
        dict(
            x=float(x),
            y=float(y),
            ax=0,
            ay=0,
            xref="x",
            yref="y",
            axref="x",
            ayref="y",
            showarrow=True,
            arrowhead=3,
            arrowwidth=2.5 if kind == "k" else 2,
            arrowcolor=colour,
            text="",
        )
        for vectors, colour, kind in ((k, KEY_COLOUR, "k"), (q, QUERY_COLOUR, "q"))
        for x, y in vectors
    ]
    traces = [
        dict(
            type="scatter",
            x=[x],
            y=[y],
            mode="markers+text",
            marker=dict(color="#555", size=6),
            text=[", ".join(names)],
            textposition="top center",
            showlegend=False,
            hovertemplate=f"{', '.join(names)} = (%{{x:.2f}}, %{{y:.2f}})<extra></extra>",
        )
        for (x, y), names in _tips(q, k, labels).items()
    ]  # one label per tip, even where tips coincide
    traces += [
        dict(type="scatter", x=[None], y=[None], mode="markers", marker=dict(color=c), name=name)
        for c, name in ((QUERY_COLOUR, tr("query q_i")), (KEY_COLOUR, tr("key k_j")))
    ]
    bound = float(max(np.abs(q).max(initial=0), np.abs(k).max(initial=0), 1.0)) * 1.25
    axis = dict(range=[-bound, bound], zeroline=True, zerolinecolor="#999", showgrid=True)
    layout = dict(
        xaxis=dict(axis, title=dict(text=tr("dimension {number}", number=1))),
        yaxis=dict(axis, title=dict(text=tr("dimension {number}", number=2)), scaleanchor="x"),
        annotations=arrows,
        height=height,
        margin=dict(l=10, r=10, t=10, b=10),
        legend=dict(orientation="h", y=-0.15),
    )
    return figure(traces, layout)


def _tips(q: np.ndarray, k: np.ndarray, labels: list[str]) -> dict[tuple[float, float], list[str]]:
    """Arrow tips grouped by position: {(x, y): ["q0 north", "k1 east", ...]}."""
    tips: dict[tuple[float, float], list[str]] = {}
    for kind, vectors in (("q", q), ("k", k)):
        for i, (x, y) in enumerate(vectors):
            tips.setdefault((float(x), float(y)), []).append(f"{kind}{i} {labels[i]}")
    return tips
