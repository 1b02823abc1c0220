"""Figures for "why divide by √d_k": saturation, variance, gradient flow and the two training runs.

Pure functions: numpy arrays in, plotly Figures out (no streamlit). Every figure draws the unscaled
curve in red and the scaled one in blue, so a colour means the same thing everywhere on the page.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.lib.stride_tricks import sliding_window_view

from figures.base import colorscale, figure, hline, subplot_title
from figures.heatmaps import WEIGHT_COLORSCALE
from locales import num, tr

UNSCALED_COLOUR = "#d62728"
SCALED_COLOUR = "#1f77b4"
THEORY_COLOUR = "#7f7f7f"
LOG_FLOOR = 1e-30  # values below this (exact zeros included) are drawn at the floor of a log axis
ANNOTATE_MAX_KEYS = 16


def _layout(title: str, height: int, **layout) -> dict:
    """Title on top, legend in one row under the plot (a legend beside the title would cover it)."""
    return dict(
        layout,
        title=dict(text=title),
        height=height,
        margin=dict(l=10, r=10, t=40, b=10),
        legend=dict(orientation="h", yanchor="top", y=-0.25, xanchor="left", x=0.0),
        hovermode="x unified",
    )


def _d_k_axis(d_k: np.ndarray) -> dict:
    """A log x axis labelled at the measured d_k (every other one when there are many, so labels stay flat)."""
    ticks = [int(d) for d in d_k][:: 2 if len(d_k) > 8 else 1]
    return dict(title=dict(text="d_k"), type="log", tickvals=ticks, ticktext=[str(d) for d in ticks], tickangle=0)


def _log_axis(title: str) -> dict:
    """A log y axis with a label at every power of 10, written 10^k."""
    return dict(title=dict(text=title), type="log", dtick=1, exponentformat="power")


def weights_by_d_k_figure(
    d_ks: Sequence[int], unscaled: np.ndarray, scaled: np.ndarray, scores: np.ndarray | None = None
) -> go.Figure:
    """One sample's attention weights at each d_k: unscaled (left) next to scaled (right), colour 0..1.

    Shapes: d_ks (r,); unscaled, scaled, scores (r, n_keys): row i is the same random q and keys cut to
    d_ks[i] dimensions; scores are the raw q·k_j, shown on hover.
    """
    unscaled, scaled = np.asarray(unscaled, float), np.asarray(scaled, float)
    r, m = unscaled.shape
    rows = [f"d_k = {int(d)}" for d in d_ks]
    annotate = m <= ANNOTATE_MAX_KEYS
    data = []
    for col, (name, w) in enumerate((("unscaled", unscaled), ("scaled", scaled)), start=1):
        hover = [
            [
                tr("{row}, key {key}", row=rows[i], key=j)
                + "<br>"
                + (f"q·k = {num(scores[i, j], '.2f')}<br>" if scores is not None else "")
                + (
                    f"÷ √{int(d_ks[i])} = {num(scores[i, j] / np.sqrt(d_ks[i]), '.2f')}<br>"
                    if scores is not None and name == "scaled"
                    else ""
                )
                + tr("weight = {weight}", weight=num(w[i, j], ".4f"))
                for j in range(m)
            ]
            for i in range(r)
        ]
        trace = dict(
            type="heatmap",
            z=w,
            x=list(range(m)),
            y=list(range(r)),
            coloraxis="coloraxis",
            customdata=hover,
            hovertemplate="%{customdata}<extra></extra>",
            textfont=dict(size=11),
            xaxis="x" if col == 1 else "x2",
            yaxis="y" if col == 1 else "y2",
        )
        if annotate:
            trace.update(text=[[num(x, ".2f") for x in row] for row in w.tolist()], texttemplate="%{text}")
        data.append(trace)
    # what make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.04, subplot_titles=...) lays out
    x_axis = dict(title=dict(text=tr("key")), showgrid=False, zeroline=False)
    if annotate:
        x_axis["dtick"] = 1  # whole key numbers, never 0.2
    y_axis = dict(
        tickmode="array", tickvals=list(range(r)), ticktext=rows, autorange="reversed", showgrid=False, zeroline=False
    )
    titles = [
        subplot_title(text, x, 1.0, font=dict(size=16))
        for text, x in ((tr("unscaled: softmax(q·k)"), 0.24), (tr("scaled: softmax(q·k / √d_k)"), 0.76))
    ]
    layout = dict(
        xaxis=dict(x_axis, anchor="y", domain=[0.0, 0.48]),
        xaxis2=dict(x_axis, anchor="y2", domain=[0.52, 1.0]),
        yaxis=dict(y_axis, anchor="x", domain=[0.0, 1.0]),
        yaxis2=dict(y_axis, anchor="x2", domain=[0.0, 1.0], matches="y", showticklabels=False),
        annotations=titles,
        coloraxis=dict(
            colorscale=colorscale(WEIGHT_COLORSCALE),
            cmin=0.0,
            cmax=1.0,
            colorbar=dict(title=dict(text=tr("weight")), thickness=12),
        ),
        height=max(220, 46 * r + 120),
        margin=dict(l=10, r=10, t=40, b=10),
    )
    return figure(data, layout)


def _curve_names(kind: str) -> tuple[str, str]:
    """The legend names of the unscaled and the scaled curve of one `kind` ("", " (median)"...), translated."""
    if kind == " (median)":
        return tr("unscaled (median)"), tr("scaled (median)")
    if kind == " (mean)":
        return tr("unscaled (mean)"), tr("scaled (mean)")
    if kind == " (each step)":
        return tr("unscaled (each step)"), tr("scaled (each step)")
    if kind == " (running median)":
        return tr("unscaled (running median)"), tr("scaled (running median)")
    return tr("unscaled"), tr("scaled")


def _two_curves(
    x, unscaled, scaled, *, name: str = "", dash: str = "solid", mode: str = "lines+markers", show: bool = True
) -> list[dict]:
    """The unscaled (red) and scaled (blue) curve over the same x, as two scatter trace dicts (`name`: the kind of
    curve, " (median)"..., the legend group's suffix; the legend shows it translated)."""
    return [
        dict(
            type="scatter",
            x=x,
            y=y,
            mode=mode,
            name=shown,
            legendgroup=label + name,
            showlegend=show,
            line=dict(color=colour, dash=dash),
        )
        for label, shown, y, colour in zip(
            ("unscaled", "scaled"), _curve_names(name), (unscaled, scaled), (UNSCALED_COLOUR, SCALED_COLOUR)
        )
    ]


def max_weight_figure(d_k: np.ndarray, unscaled: np.ndarray, scaled: np.ndarray, n_keys: int) -> go.Figure:
    """Mean largest weight vs d_k (log axis), both curves; dotted lines at 1 (one-hot) and 1/n (uniform).

    Shapes: d_k, unscaled, scaled (n_d,).
    """
    dotted = dict(color=THEORY_COLOUR, dash="dot")
    lines = (
        hline(1.0, dotted, tr("one-hot"), "bottom left"),
        hline(1.0 / n_keys, dotted, tr("uniform (1/{n_keys})", n_keys=n_keys)),
    )
    layout = _layout(
        tr("Largest attention weight"),
        360,
        xaxis=_d_k_axis(d_k),
        yaxis=dict(title=dict(text=tr("mean max weight")), range=[0, 1.05]),
        shapes=[shape for shape, _ in lines],
        annotations=[label for _, labels in lines for label in labels],
    )
    return figure(_two_curves(d_k, unscaled, scaled), layout)


def variance_figure(d_k: np.ndarray, measured: np.ndarray) -> go.Figure:
    """Measured Var(q·k) as markers against the prediction y = d_k, on log-log axes.

    Shapes: d_k, measured (n_d,).
    """
    data = [
        dict(type="scatter", x=d_k, y=d_k, mode="lines", name=tr("predicted: d_k"), line=dict(color=THEORY_COLOUR)),
        dict(
            type="scatter",
            x=d_k,
            y=measured,
            mode="markers",
            name=tr("measured Var(q·k)"),
            marker=dict(color=UNSCALED_COLOUR, size=9),
        ),
    ]
    layout = _layout(
        tr("Variance of the raw scores"), 360, xaxis=_d_k_axis(d_k), yaxis=_log_axis(tr("variance of q·k"))
    )
    return figure(data, layout)


def jacobian_figure(
    d_k: np.ndarray,
    median_unscaled: np.ndarray,
    median_scaled: np.ndarray,
    mean_unscaled: np.ndarray,
    mean_scaled: np.ndarray,
) -> go.Figure:
    """Norm of the softmax Jacobian vs d_k, log-log: median (solid, a typical sample) and mean (dotted).

    Shapes: every array (n_d,).
    """
    data = _two_curves(
        d_k, np.maximum(median_unscaled, LOG_FLOOR), np.maximum(median_scaled, LOG_FLOOR), name=" (median)"
    ) + _two_curves(
        d_k,
        np.maximum(mean_unscaled, LOG_FLOOR),
        np.maximum(mean_scaled, LOG_FLOOR),
        name=" (mean)",
        dash="dot",
        mode="lines",
    )
    layout = _layout(
        tr("How much gradient the softmax lets through"),
        380,
        xaxis=_d_k_axis(d_k),
        yaxis=dict(_log_axis("‖diag(p) − p pᵀ‖"), dtick=2),
    )
    return figure(data, layout)


def loss_curves_figure(scaled: np.ndarray, unscaled: np.ndarray) -> go.Figure:
    """Training loss per step, both runs on one plot. Shapes: scaled, unscaled (steps,)."""
    steps = np.arange(1, len(scaled) + 1)
    layout = _layout(
        tr("Training loss"),
        360,
        # Translators: "step" is a noun here: a training step (the x axis)
        xaxis=dict(title=dict(text=tr("step"))),
        yaxis=dict(title=dict(text=tr("loss (batch)")), rangemode="tozero"),
    )
    return figure(_two_curves(steps, unscaled, scaled, mode="lines"), layout)


def running_median(x: np.ndarray, window: int = 15) -> np.ndarray:
    """The median of the last `window` values at each step (fewer at the start). Shapes: (steps,) -> (steps,)."""
    x = np.asarray(x, dtype=float)
    if window < 1:  # every window empty: keep the plain definition (NaN, with numpy's warning)
        return np.array([np.median(x[max(0, i - window + 1) : i + 1]) for i in range(len(x))])
    head = min(window - 1, len(x))  # the first steps have fewer than `window` values behind them
    first = [np.median(x[: i + 1]) for i in range(head)]
    if len(x) < window:
        return np.array(first, dtype=float)
    full = np.median(sliding_window_view(x, window), axis=-1)  # (steps - window + 1,): x[i - window + 1 : i + 1]
    return np.concatenate([np.array(first, dtype=float), full])


def grad_norm_figure(scaled: np.ndarray, unscaled: np.ndarray) -> go.Figure:
    """Gradient norm ‖dL/dW‖ per step as dots, with a running median line, on a log axis.

    Shapes: scaled, unscaled (steps,). Exact zeros (a softmax one-hot to machine precision) are drawn at LOG_FLOOR.
    """
    steps = np.arange(1, len(scaled) + 1)
    unscaled, scaled = np.maximum(unscaled, LOG_FLOOR), np.maximum(scaled, LOG_FLOOR)
    dots = _two_curves(steps, unscaled, scaled, mode="markers", name=" (each step)")
    for trace in dots:
        trace["marker"] = dict(size=4, opacity=0.45, color=trace["line"]["color"])
    data = dots + _two_curves(
        steps, running_median(unscaled), running_median(scaled), mode="lines", name=" (running median)"
    )
    layout = _layout(
        tr("Gradient norm per step"),
        380,
        # Translators: "step" is a noun here: a training step (the x axis)
        xaxis=dict(title=dict(text=tr("step"))),
        yaxis=dict(_log_axis("‖dL/dW_q, dL/dW_k‖"), dtick=5),
    )
    return figure(data, layout)
