"""The Predict page's figure: the attention heatmap with the student's guesses marked. Numpy in, plotly Figure
out."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from figures.base import RIGHT_COLOUR, WRONG_COLOUR, figure
from figures.heatmaps import attention_heatmap
from locales import tr


def guess_heatmap(
    weights: np.ndarray,
    tokens: Sequence[str],
    guesses: Sequence[int],
    correct: Sequence[bool],
    *,
    scores: np.ndarray | None = None,
    scale_factor: float | None = None,
) -> go.Figure:
    """The attention heatmap with the student's guessed key boxed in each row (green right, red wrong).

    Shapes: weights (n, n); guesses n key indices; correct n bools.
    """
    n = weights.shape[0]
    heat = attention_heatmap(weights, tokens, tokens, scores=scores, scale_factor=scale_factor, height=70 * n + 170)
    layout = heat.layout.to_plotly_json()  # plain dicts (copies): adding to them skips plotly's validation
    layout.pop("template", None)  # `figure` puts the default one back
    # boxes in data coordinates: they scale with the cells
    layout["shapes"] = [
        dict(
            type="rect",
            x0=j - 0.46,
            x1=j + 0.46,
            y0=i - 0.46,
            y1=i + 0.46,
            line=dict(color=RIGHT_COLOUR if ok else WRONG_COLOUR, width=4),
            name=f"guess {i}",
        )
        for i, (j, ok) in enumerate(zip(guesses, correct))
    ]
    legend = [
        dict(
            type="scatter",
            x=[None],
            y=[None],
            mode="markers",
            name=name,
            hoverinfo="skip",
            marker=dict(symbol="square-open", size=14, color=colour, line=dict(width=3)),
        )
        for name, colour in ((tr("your guess: right"), RIGHT_COLOUR), (tr("your guess: wrong"), WRONG_COLOUR))
    ]
    layout.update(
        legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0),
        showlegend=True,
        margin=dict(layout.get("margin", {}), t=40),
    )
    return figure([heat.data[0].to_plotly_json(), *legend], layout)
