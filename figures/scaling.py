"""Figures for "why divide by √d_k": saturation, variance, gradient flow and the two training runs.

Pure functions: numpy arrays in, plotly Figures out (no streamlit). Every figure draws the unscaled
curve in red and the scaled one in blue, so a colour means the same thing everywhere on the page.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from figures.heatmaps import WEIGHT_COLORSCALE

UNSCALED_COLOUR = "#d62728"
SCALED_COLOUR = "#1f77b4"
THEORY_COLOUR = "#7f7f7f"
LOG_FLOOR = 1e-30  # values below this (exact zeros included) are drawn at the floor of a log axis
ANNOTATE_MAX_KEYS = 16


def _layout(fig: go.Figure, title: str, height: int) -> go.Figure:
    """Title on top, legend in one row under the plot (a legend beside the title would cover it)."""
    fig.update_layout(title=title, height=height, margin=dict(l=10, r=10, t=40, b=10),
                      legend=dict(orientation="h", yanchor="top", y=-0.25, xanchor="left", x=0.0),
                      hovermode="x unified")
    return fig


def _d_k_axis(d_k: np.ndarray) -> dict:
    """A log x axis labelled at the measured d_k (every other one when there are many, so labels stay flat)."""
    ticks = [int(d) for d in d_k][:: 2 if len(d_k) > 8 else 1]
    return dict(title="d_k", type="log", tickvals=ticks, ticktext=[str(d) for d in ticks], tickangle=0)


def _log_axis(title: str) -> dict:
    """A log y axis with a label at every power of 10, written 10^k."""
    return dict(title=title, type="log", dtick=1, exponentformat="power")


def weights_by_d_k_figure(d_ks: Sequence[int], unscaled: np.ndarray, scaled: np.ndarray,
                          scores: np.ndarray | None = None) -> go.Figure:
    """One sample's attention weights at each d_k: unscaled (left) next to scaled (right), colour 0..1.

    Shapes: d_ks (r,); unscaled, scaled, scores (r, n_keys): row i is the same random q and keys cut to
    d_ks[i] dimensions; scores are the raw q·k_j, shown on hover.
    """
    unscaled, scaled = np.asarray(unscaled, float), np.asarray(scaled, float)
    r, m = unscaled.shape
    rows = [f"d_k = {int(d)}" for d in d_ks]
    annotate = m <= ANNOTATE_MAX_KEYS
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=("unscaled: softmax(q·k)", "scaled: softmax(q·k / √d_k)"))
    for col, (name, w) in enumerate((("unscaled", unscaled), ("scaled", scaled)), start=1):
        hover = [[f"{rows[i]}, key {j}<br>" + (f"q·k = {scores[i, j]:.2f}<br>" if scores is not None else "")
                  + (f"÷ √{int(d_ks[i])} = {scores[i, j] / np.sqrt(d_ks[i]):.2f}<br>"
                     if scores is not None and name == "scaled" else "")
                  + f"weight = {w[i, j]:.4f}" for j in range(m)] for i in range(r)]
        fig.add_trace(go.Heatmap(
            z=w, x=list(range(m)), y=list(range(r)), coloraxis="coloraxis", customdata=hover,
            hovertemplate="%{customdata}<extra></extra>",
            text=np.vectorize(lambda x: f"{x:.2f}")(w) if annotate else None,
            texttemplate="%{text}" if annotate else None, textfont=dict(size=11),
        ), row=1, col=col)
        fig.update_xaxes(title_text="key", showgrid=False, zeroline=False, row=1, col=col,
                         dtick=1 if m <= ANNOTATE_MAX_KEYS else None)  # whole key numbers, never 0.2
    fig.update_yaxes(tickmode="array", tickvals=list(range(r)), ticktext=rows, autorange="reversed",
                     showgrid=False, zeroline=False)
    fig.update_layout(coloraxis=dict(colorscale=WEIGHT_COLORSCALE, cmin=0.0, cmax=1.0,
                                     colorbar=dict(title="weight", thickness=12)),
                      height=max(220, 46 * r + 120), margin=dict(l=10, r=10, t=40, b=10))
    return fig


def _two_curves(fig: go.Figure, x, unscaled, scaled, *, name: str = "", dash: str = "solid",
                mode: str = "lines+markers", show: bool = True, row=None, col=None) -> None:
    for label, y, colour in (("unscaled", unscaled, UNSCALED_COLOUR), ("scaled", scaled, SCALED_COLOUR)):
        fig.add_trace(go.Scatter(x=x, y=y, mode=mode, name=f"{label}{name}", legendgroup=label + name,
                                 showlegend=show, line=dict(color=colour, dash=dash)), row=row, col=col)


def max_weight_figure(d_k: np.ndarray, unscaled: np.ndarray, scaled: np.ndarray, n_keys: int) -> go.Figure:
    """Mean largest weight vs d_k (log axis), both curves; dotted lines at 1 (one-hot) and 1/n (uniform).

    Shapes: d_k, unscaled, scaled (n_d,).
    """
    fig = go.Figure()
    _two_curves(fig, d_k, unscaled, scaled)
    fig.add_hline(y=1.0, line=dict(color=THEORY_COLOUR, dash="dot"), annotation_text="one-hot",
                  annotation_position="bottom left")
    fig.add_hline(y=1.0 / n_keys, line=dict(color=THEORY_COLOUR, dash="dot"), annotation_text=f"uniform (1/{n_keys})",
                  annotation_position="top right")
    fig.update_layout(xaxis=_d_k_axis(d_k), yaxis=dict(title="mean max weight", range=[0, 1.05]))
    return _layout(fig, "Largest attention weight", 360)


def variance_figure(d_k: np.ndarray, measured: np.ndarray) -> go.Figure:
    """Measured Var(q·k) as markers against the prediction y = d_k, on log-log axes.

    Shapes: d_k, measured (n_d,).
    """
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=d_k, y=d_k, mode="lines", name="predicted: d_k", line=dict(color=THEORY_COLOUR)))
    fig.add_trace(go.Scatter(x=d_k, y=measured, mode="markers", name="measured Var(q·k)",
                             marker=dict(color=UNSCALED_COLOUR, size=9)))
    fig.update_layout(xaxis=_d_k_axis(d_k), yaxis=_log_axis("variance of q·k"))
    return _layout(fig, "Variance of the raw scores", 360)


def jacobian_figure(d_k: np.ndarray, median_unscaled: np.ndarray, median_scaled: np.ndarray,
                    mean_unscaled: np.ndarray, mean_scaled: np.ndarray) -> go.Figure:
    """Norm of the softmax Jacobian vs d_k, log-log: median (solid, a typical sample) and mean (dotted).

    Shapes: every array (n_d,).
    """
    fig = go.Figure()
    _two_curves(fig, d_k, np.maximum(median_unscaled, LOG_FLOOR), np.maximum(median_scaled, LOG_FLOOR),
                name=" (median)")
    _two_curves(fig, d_k, np.maximum(mean_unscaled, LOG_FLOOR), np.maximum(mean_scaled, LOG_FLOOR),
                name=" (mean)", dash="dot", mode="lines")
    fig.update_layout(xaxis=_d_k_axis(d_k), yaxis=dict(_log_axis("‖diag(p) − p pᵀ‖"), dtick=2))
    return _layout(fig, "How much gradient the softmax lets through", 380)


def loss_curves_figure(scaled: np.ndarray, unscaled: np.ndarray) -> go.Figure:
    """Training loss per step, both runs on one plot. Shapes: scaled, unscaled (steps,)."""
    steps = np.arange(1, len(scaled) + 1)
    fig = go.Figure()
    _two_curves(fig, steps, unscaled, scaled, mode="lines")
    fig.update_layout(xaxis=dict(title="step"), yaxis=dict(title="loss (batch)", rangemode="tozero"))
    return _layout(fig, "Training loss", 360)


def running_median(x: np.ndarray, window: int = 15) -> np.ndarray:
    """The median of the last `window` values at each step (fewer at the start). Shapes: (steps,) -> (steps,)."""
    x = np.asarray(x, dtype=float)
    return np.array([np.median(x[max(0, i - window + 1): i + 1]) for i in range(len(x))])


def grad_norm_figure(scaled: np.ndarray, unscaled: np.ndarray) -> go.Figure:
    """Gradient norm ‖dL/dW‖ per step as dots, with a running median line, on a log axis.

    Shapes: scaled, unscaled (steps,). Exact zeros (a softmax one-hot to machine precision) are drawn at LOG_FLOOR.
    """
    steps = np.arange(1, len(scaled) + 1)
    unscaled, scaled = np.maximum(unscaled, LOG_FLOOR), np.maximum(scaled, LOG_FLOOR)
    fig = go.Figure()
    _two_curves(fig, steps, unscaled, scaled, mode="markers", name=" (each step)")
    for trace in fig.data:
        trace.update(marker=dict(size=4, opacity=0.45, color=trace.line.color))
    _two_curves(fig, steps, running_median(unscaled), running_median(scaled), mode="lines",
                name=" (running median)")
    fig.update_layout(xaxis=dict(title="step"), yaxis=dict(_log_axis("‖dL/dW_q, dL/dW_k‖"), dtick=5))
    return _layout(fig, "Gradient norm per step", 380)
