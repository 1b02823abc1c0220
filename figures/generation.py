"""Figures for "Generation and the KV cache": each step's attention row, the next-token distribution,
the cache growing, the work per new token, and the cache of MHA, GQA and MQA side by side.

Pure functions: numpy arrays in, plotly figures (plain dicts, see figures.base) out; no streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from figures.base import colorscale as named_colorscale
from figures.base import figure, subplot_title
from figures.heads import _grid_domains
from figures.heatmaps import WEIGHT_COLORSCALE, safe_labels
from locales import num, tr

CACHED_COLOUR = "#1f77b4"
UNCACHED_COLOUR = "#d62728"
CHOSEN_COLOUR = "#2ca02c"
KIND_COLOURS = ("#d62728", "#9467bd", "#1f77b4")  # MHA, GQA, MQA


def format_bytes(n: float) -> str:
    """1536 -> '1.5 KiB': bytes in powers of 1024."""
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def bytes_text(n: float) -> str:
    """`format_bytes(n)` as the session's language writes it: '1.5 KiB', '1,5 KiB' in Spanish."""
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            if unit == "bytes":
                return tr("{size} bytes", size=num(n, ",.0f"))
            return f"{num(n, ',.1f')} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def step_rows_figure(
    rows: np.ndarray,
    labels: Sequence[str],
    prompt_length: int,
    head_titles: Sequence[str],
    *,
    chosen: int | None = None,
) -> go.Figure:
    """For each head, one row per generation step: the weights of the query that chose the next token.

    Shapes: rows (heads, steps, n) with n = prompt_length + steps - 1 tokens fed in, NaN where a step had
    not yet seen a position; labels n token strings. `chosen`: a step (from 0) to outline.
    """
    rows = np.asarray(rows, dtype=float)
    h, steps, n = rows.shape
    cols = min(h, 2)
    grid_rows = -(-h // cols)
    cells = _grid_domains(grid_rows, cols, 0.06, 0.16 if grid_rows > 1 else 0.0)
    ticks = safe_labels(labels)
    y_text = [tr("step {step}", step=s + 1) for s in range(steps)]
    layout: dict = {}
    data, annotations, shapes = [], [], []
    for k in range(h):
        suffix = str(k + 1) if k else ""
        x_domain, y_domain = cells[k]
        layout["xaxis" + suffix] = dict(
            anchor="y" + suffix,
            domain=x_domain,
            tickmode="array",
            tickvals=list(range(n)),
            ticktext=ticks,
            tickangle=0,
            showgrid=False,
            zeroline=False,
            tickfont=dict(size=10),
        )
        layout["yaxis" + suffix] = dict(
            anchor="x" + suffix,
            domain=y_domain,
            tickmode="array",
            tickvals=list(range(steps)),
            ticktext=y_text,
            autorange="reversed",
            showgrid=False,
            zeroline=False,
            tickfont=dict(size=10),
            showticklabels=k % cols == 0,
        )
        data.append(
            dict(
                type="heatmap",
                z=rows[k],
                coloraxis="coloraxis",
                xaxis="x" + suffix,
                yaxis="y" + suffix,
                customdata=[
                    [
                        tr("step {step} reads '{token}' (position {position})", step=s + 1, token=ticks[j], position=j)
                        for j in range(n)
                    ]
                    for s in range(steps)
                ],
                hovertemplate="%{customdata}: %{z:.2f}<extra></extra>",
            )
        )
        annotations.append(subplot_title(safe_labels([head_titles[k]])[0], sum(x_domain) / 2, y_domain[1]))
        shapes.append(
            dict(
                type="line",
                xref="x" + suffix,
                yref="y" + suffix,
                x0=prompt_length - 0.5,
                x1=prompt_length - 0.5,
                y0=-0.5,
                y1=steps - 0.5,
                line=dict(color="#555", width=1, dash="dot"),
            )
        )
        if chosen is not None:
            shapes.append(
                dict(
                    type="rect",
                    xref="x" + suffix,
                    yref="y" + suffix,
                    x0=-0.5,
                    x1=n - 0.5,
                    y0=chosen - 0.5,
                    y1=chosen + 0.5,
                    line=dict(color=CHOSEN_COLOUR, width=2),
                )
            )
    layout.update(
        annotations=annotations,
        shapes=shapes,
        coloraxis=dict(
            colorscale=named_colorscale(WEIGHT_COLORSCALE),
            cmin=0.0,
            cmax=1.0,
            colorbar=dict(title=dict(text=tr("weight")), thickness=10),
        ),
        height=grid_rows * max(220, 22 * steps + 90) + 30,
        margin=dict(l=10, r=10, t=30, b=10),
    )
    return figure(data, layout)


def probabilities_figure(model: np.ndarray, drawn_from: np.ndarray, labels: Sequence[str], chosen: int) -> go.Figure:
    """The model's next-token probabilities softmax(z) (grey) and the distribution the token was drawn from
    after temperature and top-k (blue), the chosen token marked.

    Shapes: model, drawn_from (vocab_size,); labels vocab_size strings.
    """
    ticks = safe_labels(labels)
    data = [
        dict(
            type="bar",
            x=list(range(len(p))),
            y=np.asarray(p, dtype=float),
            name=name,
            marker=dict(color=colour),
            customdata=ticks,
            hovertemplate=f"{name}<br>'%{{customdata}}': %{{y:.3f}}<extra></extra>",
        )
        for name, p, colour in (
            (tr("model: softmax(z)"), model, "#9aa5b1"),
            # Translators: the legend of the distribution a token was drawn from (after temperature and top-k)
            (tr("drawn from"), drawn_from, CACHED_COLOUR),
        )
    ]
    layout = dict(
        barmode="group",
        height=280,
        margin=dict(l=10, r=10, t=40, b=10),
        xaxis=dict(tickmode="array", tickvals=list(range(len(ticks))), ticktext=ticks, tickangle=0),
        yaxis=dict(title=dict(text=tr("probability")), range=[0, 1.3], tickvals=[0, 0.2, 0.4, 0.6, 0.8, 1]),
        legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0.0),
        annotations=[
            dict(
                x=chosen,
                y=float(np.max([model[chosen], drawn_from[chosen]])),
                # Translators: the token chosen at this step (an arrow's label)
                text=tr("chosen"),
                showarrow=True,
                arrowhead=2,
                ay=-25,
                font=dict(color=CHOSEN_COLOUR),
                arrowcolor=CHOSEN_COLOUR,
            )
        ],
    )
    return figure(data, layout)


def cache_growth_figure(n_total: np.ndarray, nbytes: np.ndarray) -> go.Figure:
    """The cache's size after each step. Shapes: n_total, nbytes (steps,)."""
    bars = dict(
        type="bar",
        x=list(n_total),
        y=list(nbytes),
        marker=dict(color=CACHED_COLOUR),
        customdata=[bytes_text(b) for b in nbytes],
        hovertemplate=tr("{tokens} tokens cached: {size}", tokens="%{x}", size="%{customdata}") + "<extra></extra>",
    )
    layout = dict(
        height=280,
        margin=dict(l=10, r=10, t=10, b=10),
        xaxis=dict(title=dict(text=tr("tokens in the cache")), dtick=2),
        # Translators: an axis title (the unit)
        yaxis=dict(title=dict(text=tr("bytes")), rangemode="tozero"),
        showlegend=False,
    )
    return figure([bars], layout)


def work_figure(n_total: np.ndarray, cached: np.ndarray, uncached: np.ndarray) -> go.Figure:
    """Multiply-adds to produce one new token, at each context length, with and without the cache (log y).

    Shapes: n_total, cached, uncached (T,).
    """
    data = [
        dict(
            type="scatter",
            x=n_total,
            y=y,
            mode="lines",
            name=name,
            line=dict(color=colour, width=3),
            hovertemplate=f"{name}<br>"
            + tr("{tokens} tokens: {count} multiply-adds", tokens="%{x}", count="%{y:,}")
            + "<extra></extra>",
        )
        for name, y, colour in (
            (tr("with the cache"), cached, CACHED_COLOUR),
            (tr("without (recompute all)"), uncached, UNCACHED_COLOUR),
        )
    ]
    layout = dict(
        height=320,
        margin=dict(l=10, r=10, t=40, b=10),
        xaxis=dict(title=dict(text=tr("tokens so far (context length)")), type="log"),
        yaxis=dict(title=dict(text=tr("multiply-adds per new token")), type="log", exponentformat="power"),
        legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0.0),
    )
    return figure(data, layout)


def timing_figure(cached_ms: np.ndarray, uncached_ms: np.ndarray) -> go.Figure:
    """Measured milliseconds of each generation step, with and without the cache. Shapes: (steps,) each."""
    steps = list(range(1, len(cached_ms) + 1))
    data = [
        dict(
            type="bar",
            x=steps,
            y=y,
            name=name,
            marker=dict(color=colour),
            hovertemplate=f"{name}<br>" + tr("step {step}: {ms} ms", step="%{x}", ms="%{y:.3f}") + "<extra></extra>",
        )
        for name, y, colour in (
            (tr("with the cache"), cached_ms, CACHED_COLOUR),
            # Translators: "without the cache" (a legend beside "with the cache")
            (tr("without"), uncached_ms, UNCACHED_COLOUR),
        )
    ]
    layout = dict(
        barmode="group",
        height=320,
        margin=dict(l=10, r=10, t=40, b=10),
        xaxis=dict(title=dict(text=tr("generation step")), dtick=1),
        yaxis=dict(title=dict(text=tr("milliseconds")), rangemode="tozero"),
        legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0.0),
    )
    return figure(data, layout)


def byte_unit(n: float) -> tuple[str, int]:
    """The power-of-1024 unit that shows `n` bytes best: ('GiB', 1024**3) for 2e9."""
    for power, unit in ((4, "TiB"), (3, "GiB"), (2, "MiB"), (1, "KiB")):
        if n >= 1024**power:
            return unit, 1024**power
    return "bytes", 1


def cache_kinds_figure(names: Sequence[str], nbytes: Sequence[int]) -> go.Figure:
    """The cache's bytes for MHA, GQA and MQA of the same model shape, side by side (in the unit of the largest)."""
    unit, size = byte_unit(max(nbytes))
    bars = dict(
        type="bar",
        x=safe_labels(names),
        y=[b / size for b in nbytes],
        text=[bytes_text(b) for b in nbytes],
        textposition="outside",
        marker=dict(color=list(KIND_COLOURS[: len(names)])),
        cliponaxis=False,
        hovertemplate="%{x}: %{text}<extra></extra>",
    )
    layout = dict(
        height=320,
        margin=dict(l=10, r=10, t=30, b=10),
        yaxis=dict(
            title=dict(text=tr("KV cache (bytes)") if unit == "bytes" else tr("KV cache ({unit})", unit=unit)),
            rangemode="tozero",
        ),
        showlegend=False,
    )
    return figure([bars], layout)
