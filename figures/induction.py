"""Figures for "Watch an induction head form": the loss on each half, the heads' patterns over training,
their scores, and the accuracy at each position.

Pure functions: numpy arrays in, plotly figures (plain dicts, see figures.base) out; no streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from figures.base import colorscale as named_colorscale
from figures.base import figure, hline
from figures.heads import _grid_domains, head_colour, heads_grid
from figures.heatmaps import WEIGHT_COLORSCALE, safe_labels
from lessons.induction import ids_to_letters
from locales import num, tr

FIRST_COLOUR = "#ff7f0e"
REPEATED_COLOUR = "#1f77b4"
CHANCE_COLOUR = "#7f7f7f"
CHECKPOINT_COLOUR = "#2ca02c"
GRID_ROW_HEIGHT = 400  # near-square cells for 19 tokens in half the page, labels readable in presenter mode


def running_mean(x: np.ndarray, window: int = 25) -> np.ndarray:
    """The mean of the last `window` values at each step (fewer at the start). Shapes: (steps,) -> (steps,)."""
    x = np.asarray(x, dtype=float)
    sums = np.cumsum(np.concatenate([[0.0], x]))
    starts = np.maximum(np.arange(1, len(x) + 1) - window, 0)
    return (sums[1:] - sums[starts]) / (np.arange(1, len(x) + 1) - starts)


def head_names(n_layers: int, n_heads: int) -> list[str]:
    """'L1 H1', 'L1 H2', ... layer by layer, counting from 1 as the page does."""
    return [f"L{layer + 1} H{head + 1}" for layer in range(n_layers) for head in range(n_heads)]


def letter_labels(ids) -> list[str]:
    """Each token as its letter and position ('q0', 'w1', ...), unique labels for a heatmap's axes."""
    return [f"{letter}{i}" for i, letter in enumerate(ids_to_letters(ids))]


def head_titles(previous: np.ndarray, induction: np.ndarray | None = None) -> list[str]:
    """Each head's name with its scores ('L1 H1: prev 0.93, ind 0.02'), layer by layer; without the induction
    score when there is none. Shapes: previous, induction (layers, heads)."""
    names = head_names(*previous.shape)
    prev = previous.reshape(-1)
    ind = None if induction is None else induction.reshape(-1)
    if ind is None:
        # Translators: a head's title; "prev" is its previous-token score
        return [tr("{head}: prev {previous}", head=name, previous=num(prev[h], ".2f")) for h, name in enumerate(names)]
    return [
        # Translators: a head's title; "prev" is its previous-token score, "ind" its induction score
        tr(
            "{head}: prev {previous}, ind {induction}",
            head=name,
            previous=num(prev[h], ".2f"),
            induction=num(ind[h], ".2f"),
        )
        for h, name in enumerate(names)
    ]


def every_head_figure(
    attentions: np.ndarray, ids, previous: np.ndarray, induction: np.ndarray | None = None
) -> go.Figure:
    """Every head's weights on one sequence, two heads a row, layer by layer, each titled with its scores (see
    `head_titles`) and its axes with the letters and their positions (`letter_labels`).

    Shapes: attentions (layers, heads, n, n), rows sum to 1; ids (n,) letter ids; previous, induction
    (layers, heads).
    """
    attentions = np.asarray(attentions)
    return heads_grid(
        attentions.reshape(-1, *attentions.shape[-2:]),
        letter_labels(ids),
        head_titles(previous, induction),
        columns=2,
        height_per_row=GRID_ROW_HEIGHT,
    )


def loss_halves_figure(
    loss_first: np.ndarray, loss_repeated: np.ndarray, chance: float, *, step: int | None = None
) -> go.Figure:
    """The loss on each half of every step's batch (faint) and its running mean (bold), with chance marked.

    Shapes: loss_first, loss_repeated (steps,). `step`: a checkpoint to mark with a vertical line.
    """
    x = np.arange(1, len(loss_first) + 1)
    data = []
    for name, y, colour in (
        (tr("first half (fresh tokens)"), loss_first, FIRST_COLOUR),
        (tr("repeated half"), loss_repeated, REPEATED_COLOUR),
    ):
        data.append(
            dict(
                type="scatter",
                x=x,
                y=y,
                mode="lines",
                line=dict(color=colour, width=1),
                opacity=0.25,
                name=name,
                legendgroup=name,
                showlegend=False,
                hoverinfo="skip",
            )
        )
        data.append(
            dict(
                type="scatter",
                x=x,
                y=running_mean(y),
                mode="lines",
                line=dict(color=colour, width=3),
                name=name,
                legendgroup=name,
                hovertemplate=f"{name}<br>"
                + tr("step {step}: {value}", step="%{x}", value="%{y:.3f}")
                + "<extra></extra>",
            )
        )
    shape, labels = hline(
        chance,
        dict(color=CHANCE_COLOUR, dash="dot"),
        tr("chance: log V = {chance}", chance=num(chance, ".2f")),
        "bottom right",
    )
    shapes = [shape]
    if step is not None:
        shapes.append(
            dict(
                type="line",
                xref="x",
                x0=step,
                x1=step,
                yref="paper",
                y0=0,
                y1=1,
                line=dict(color=CHECKPOINT_COLOUR, width=2, dash="dash"),
            )
        )
        labels.append(
            dict(
                text=" " + tr("step {step}", step=step),
                x=step,
                xref="x",
                xanchor="left",
                y=1,
                yref="paper",
                yanchor="top",
                showarrow=False,
                font=dict(color=CHECKPOINT_COLOUR),
            )
        )
    layout = dict(
        height=380,
        margin=dict(l=10, r=10, t=40, b=10),
        xaxis=dict(title=dict(text=tr("training step"))),
        yaxis=dict(title=dict(text=tr("cross-entropy (nats)")), rangemode="tozero"),
        legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0.0),
        shapes=shapes,
        annotations=labels,
        hovermode="x unified",
    )
    return figure(data, layout)


def filmstrip_figure(
    attentions: np.ndarray, steps: Sequence[int], labels: Sequence[str], *, cell_height: int = 150
) -> go.Figure:
    """Every head's pattern (rows) at a few checkpoints (columns), one colour scale 0..1.

    Shapes: attentions (C, layers, heads, n, n) at the C checkpoints `steps`; labels n token strings.
    """
    a = np.asarray(attentions, dtype=float)
    c, n_layers, n_heads, n, m = a.shape
    names = head_names(n_layers, n_heads)
    rows = n_layers * n_heads
    cells = _grid_domains(rows, c, 0.015, 0.03)
    ticks = safe_labels(labels)
    layout: dict = {}
    data, annotations = [], []
    for r in range(rows):
        for col in range(c):
            k = r * c + col
            suffix = str(k + 1) if k else ""
            x_domain, y_domain = cells[k]
            axis = dict(showticklabels=False, showgrid=False, zeroline=False, ticks="")
            layout["xaxis" + suffix] = dict(axis, anchor="y" + suffix, domain=x_domain)
            layout["yaxis" + suffix] = dict(axis, anchor="x" + suffix, domain=y_domain, autorange="reversed")
            layer, head = divmod(r, n_heads)
            data.append(
                dict(
                    type="heatmap",
                    z=a[col, layer, head],
                    coloraxis="coloraxis",
                    xaxis="x" + suffix,
                    yaxis="y" + suffix,
                    customdata=[[f"{ticks[i]} → {ticks[j]}" for j in range(m)] for i in range(n)],
                    hovertemplate=tr("{head}, step {step}", head=names[r], step=int(steps[col]))
                    + "<br>%{customdata}: %{z:.2f}<extra></extra>",
                )
            )
            if r == 0:
                annotations.append(
                    _title(tr("step {step}", step=int(steps[col])), sum(x_domain) / 2, y_domain[1], "bottom")
                )
        annotations.append(
            dict(
                text=f"<b>{names[r]}</b>",
                x=0,
                xref="paper",
                y=sum(cells[r * c][1]) / 2,
                yref="paper",
                xanchor="right",
                showarrow=False,
                textangle=-90,
                font=dict(color=head_colour(r)),
            )
        )
    layout.update(
        annotations=annotations,
        coloraxis=dict(
            colorscale=named_colorscale(WEIGHT_COLORSCALE),
            cmin=0.0,
            cmax=1.0,
            colorbar=dict(title=dict(text=tr("weight")), thickness=10),
        ),
        height=rows * cell_height + 60,
        margin=dict(l=40, r=10, t=30, b=10),
    )
    return figure(data, layout)


def _title(text: str, x: float, y: float, anchor: str) -> dict:
    return dict(text=text, x=x, y=y, xref="paper", yref="paper", xanchor="center", yanchor=anchor, showarrow=False)


def scores_figure(steps: np.ndarray, previous: np.ndarray, induction: np.ndarray) -> go.Figure:
    """Each head's previous-token score (left) and induction score (right) at every checkpoint.

    Shapes: steps (C,); previous, induction (C, layers, heads).
    """
    c, n_layers, n_heads = np.shape(previous)
    names = head_names(n_layers, n_heads)
    data = []
    for panel, (values, axis) in enumerate(((previous, ""), (induction, "2"))):
        v = np.asarray(values, dtype=float).reshape(c, -1)
        for h, name in enumerate(names):
            data.append(
                dict(
                    type="scatter",
                    x=steps,
                    y=v[:, h],
                    mode="lines+markers",
                    name=name,
                    legendgroup=name,
                    showlegend=panel == 0,
                    line=dict(color=head_colour(h), dash="solid" if h < n_heads else "dash"),
                    marker=dict(size=5),
                    xaxis="x" + axis,
                    yaxis="y" + axis,
                    hovertemplate=tr("{head}, step {step}: {value}", head=name, step="%{x}", value="%{y:.2f}")
                    + "<extra></extra>",
                )
            )
    titles = [
        _title(tr("previous-token score"), 0.23, 1.0, "bottom"),
        _title(tr("induction score"), 0.77, 1.0, "bottom"),
    ]
    y_axis = dict(range=[0, 1.02], title=dict(text=tr("mean weight")))
    layout = dict(
        xaxis=dict(domain=[0, 0.46], anchor="y", title=dict(text=tr("training step"))),
        xaxis2=dict(domain=[0.54, 1], anchor="y2", title=dict(text=tr("training step"))),
        yaxis=dict(y_axis, anchor="x"),
        yaxis2=dict(y_axis, anchor="x2", title=None),
        annotations=titles,
        height=340,
        margin=dict(l=10, r=10, t=40, b=10),
    )
    return figure(data, layout)


def accuracy_by_position_figure(accuracy: np.ndarray, half: int, chance: float) -> go.Figure:
    """Top-1 accuracy of the prediction made at each position, coloured by half.

    Shapes: accuracy (2 half - 1,): entry i is the prediction of token i + 1 from tokens 0 .. i.
    """
    acc = np.asarray(accuracy, dtype=float)
    colours = [
        FIRST_COLOUR if i <= half - 2 else CHANCE_COLOUR if i == half - 1 else REPEATED_COLOUR for i in range(len(acc))
    ]
    first, start, repeated = tr("first half"), tr("where the repeat starts"), tr("repeated half")
    what = [first if i <= half - 2 else start if i == half - 1 else repeated for i in range(len(acc))]
    bars = dict(
        type="bar",
        x=list(range(1, len(acc) + 1)),
        y=acc,
        marker=dict(color=colours),
        customdata=what,
        hovertemplate=tr(
            "predicting token {position} ({half}): {accuracy}",
            position="%{x}",
            half="%{customdata}",
            accuracy="%{y:.1%}",
        )
        + "<extra></extra>",
        name=tr("accuracy"),
    )
    shape, labels = hline(
        chance,
        dict(color=CHANCE_COLOUR, dash="dot"),
        tr("chance 1/V = {chance}", chance=num(chance, ".1%")),
        "top left",
    )
    layout = dict(
        height=300,
        margin=dict(l=10, r=10, t=20, b=10),
        xaxis=dict(title=dict(text=tr("position of the predicted token")), dtick=1),
        yaxis=dict(title=dict(text=tr("top-1 accuracy")), range=[0, 1.05], tickformat=".0%"),
        shapes=[shape],
        annotations=labels,
        showlegend=False,
    )
    return figure([bars], layout)
