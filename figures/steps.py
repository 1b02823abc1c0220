"""The weights heatmap of one attention computation, drawn from its `AttentionSteps`.

One builder for every page that shows a step-by-step attention result: the weights are the colours, and
hovering a cell shows the arithmetic from the same steps (q_i · k_j, the scale, the mask).
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from attention.dot_product import AttentionSteps
from figures.heatmaps import attention_heatmap


def steps_heatmap(
    steps: AttentionSteps, labels: Sequence[str], key_labels: Sequence[str] | None = None, **style
) -> go.Figure:
    """Heatmap of `steps.weights` with its scores, scale and mask in the hover; `style` as attention_heatmap's
    (title, annotate, font_size, height, square).

    Shapes: steps.weights (n, m); labels n query labels; key_labels m key labels (the query labels if None).
    """
    return attention_heatmap(
        steps.weights,
        labels,
        labels if key_labels is None else key_labels,
        scores=steps.scores,
        scale_factor=steps.scale_factor,
        allowed=steps.allowed,
        **style,
    )
