"""The weights heatmap of one attention computation, drawn from its `AttentionSteps`.

One builder for every page that shows a step-by-step attention result: the weights are the colours, and
hovering a cell shows the arithmetic from the same steps (q_i · k_j, the scale, the mask).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence

import numpy as np
import plotly.graph_objects as go

from attention.dot_product import AttentionSteps
from figures.heatmaps import attention_heatmap


def steps_heatmap(
    steps: AttentionSteps,
    labels: Sequence[str],
    key_labels: Sequence[str] | None = None,
    **style,
) -> go.Figure:
    """Heatmap of `steps.weights` with its scores, scale and mask in the hover; `style` as attention_heatmap's
    (title, annotate, font_size, height, square).

    Its words (axis titles, hover) are in the session's language (ui.charts.cached_figure keys on it).

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


def hidden_rows(steps: AttentionSteps, rows: Collection[int]) -> AttentionSteps:
    """`steps` with the rows `rows` of everything computed from Q Kᵀ (scores, scaled, masked, weights, output) not
    known (NaN): what a page draws while the class answers a question about those queries. Figures show such a
    cell as ? (figures.heatmaps.fmt), with nothing of its arithmetic.

    Shapes: as `steps`; rows index the queries (axis -2).
    """
    if not rows:
        return steps
    index = sorted(rows)

    def blank(a: np.ndarray) -> np.ndarray:
        out = np.array(a, dtype=float)
        out[..., index, :] = np.nan
        return out

    return dataclasses.replace(
        steps,
        scores=blank(steps.scores),
        scaled=blank(steps.scaled),
        masked=blank(steps.masked),
        weights=blank(steps.weights),
        output=blank(steps.output),
    )
