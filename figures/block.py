"""Figures for the transformer block: its stages as a flow diagram, stacks, and the residual stream.

Pure functions: plain values in (the page passes the shapes from the core's trace), plotly Figures out.
Built as plain dicts and wrapped without validation (figures.base); the tests validate them.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from figures.base import figure, hline
from locales import marked, num, tr

# The stage a trace step comes from, by the start of its name: (fill colour, short kind).
STAGE_STYLE = {
    "input": ("#e0e0e0", "input"),
    "attention": ("#ffd8a8", "attention"),
    "residual": ("#c3e6cb", "residual add"),
    "norm": ("#d0c4f0", "layer norm"),
    "ffn": ("#b8d8f8", "feed-forward"),
}
NORM_COLOURS = {"post": "#1f77b4", "pre": "#d62728"}
NORM_NAMES = {"post": marked("post-norm"), "pre": marked("pre-norm")}  # a line's name in the legend


def shape_text(shape: Sequence[int]) -> str:
    """A tensor shape as it is written at an arrow: (4, 16)."""
    return "(" + ", ".join(str(int(s)) for s in shape) + ")"


def _style(name: str) -> tuple[str, str]:
    for prefix, style in STAGE_STYLE.items():
        if name.startswith(prefix):
            return style
    return ("#f5f5f5", "")


def _diagram_layout(x_range: list[float], y_range: list[float], **layout) -> dict:
    """A drawing on hidden axes: white background, no legend."""
    return dict(
        xaxis=dict(visible=False, range=x_range),
        yaxis=dict(visible=False, range=y_range),
        plot_bgcolor="white",
        showlegend=False,
        **layout,
    )


def block_diagram(
    steps: Sequence[tuple[str, str, Sequence[int]]], residual_sources: Mapping[str, str], *, title: str | None = None
) -> go.Figure:
    """The block as a vertical flow of stages, with the tensor shape written at every arrow.

    steps: (name, label, shape) of each intermediate in the order computed, the input first (as in
    `BlockTrace.steps`); the arrow leaving a stage carries that stage's shape. residual_sources maps a
    residual-add step to the step whose value it adds back (the skip connection).
    """
    if not steps:
        raise ValueError("steps is empty: a block has at least its input")
    names = [s[0] for s in steps]
    shapes: list[dict] = []
    annotations: list[dict] = []
    y = {name: -1.4 * k for k, name in enumerate(names)}  # one row per stage, top to bottom
    y_out = -1.4 * len(steps)
    for k, (name, label, shape) in enumerate(steps):
        colour, _ = _style(name)
        shapes.append(
            dict(
                type="rect",
                x0=1.0,
                x1=6.0,
                y0=y[name] - 0.35,
                y1=y[name] + 0.35,
                fillcolor=colour,
                line=dict(color="#555", width=1),
            )
        )
        annotations.append(
            dict(x=3.5, y=y[name], text=html.escape(label), showarrow=False, font=dict(size=13, color="#222"))
        )
        to = y[names[k + 1]] if k + 1 < len(steps) else y_out
        annotations.append(_arrow((3.5, y[name] - 0.35), (3.5, to + (0.35 if k + 1 < len(steps) else 0.25))))
        annotations.append(
            dict(
                x=3.65,
                y=(y[name] + to) / 2,
                text=shape_text(shape),
                showarrow=False,
                xanchor="left",
                font=dict(size=12, family="monospace", color="#333"),
                name="shape",
            )
        )
    annotations.append(
        dict(
            x=3.5,
            y=y_out,
            text=tr("<b>output</b> (same shape as the input)"),
            showarrow=False,
            font=dict(size=13, color="#222"),
            yanchor="top",
        )
    )
    step_shapes = {name: shape for name, _, shape in steps}
    for lane, (target, source) in enumerate(residual_sources.items()):
        if target in y and source in y:  # alternate lanes, so two skips that meet at one stage do not overlap
            _skip(shapes, annotations, y[source], y[target], 7.0 + 1.0 * (lane % 2), shape_text(step_shapes[source]))
    layout = _diagram_layout(
        [0, 10],
        [y_out - 0.7, 0.7],
        shapes=shapes,
        annotations=annotations,
        height=int(75 * (len(steps) + 1.5)),
        margin=dict(l=10, r=10, t=40 if title else 10, b=10),
    )
    if title:
        layout["title"] = dict(text=title)
    return figure([], layout)


def _arrow(start: tuple[float, float], end: tuple[float, float], colour: str = "#444") -> dict:
    """An arrow from start to end, in data coordinates (an annotation with no text)."""
    return dict(
        x=end[0],
        y=end[1],
        ax=start[0],
        ay=start[1],
        xref="x",
        yref="y",
        axref="x",
        ayref="y",
        text="",
        showarrow=True,
        arrowhead=2,
        arrowsize=1.2,
        arrowwidth=1.6,
        arrowcolor=colour,
    )


def _skip(
    shapes: list[dict], annotations: list[dict], y_source: float, y_target: float, lane: float, label: str
) -> None:
    """A residual connection: out of the source stage's right side, down a lane, into the add."""
    colour = "#2e7d32"
    y0, y1 = y_source - 0.15, y_target + 0.15
    shapes.append(
        dict(type="path", path=f"M 6.0 {y0} L {lane} {y0} L {lane} {y1}", line=dict(color=colour, width=2, dash="dot"))
    )
    annotations.append(_arrow((lane, y1), (6.0, y1), colour))
    annotations.append(
        dict(
            x=lane + 0.1,
            y=(y0 + y1) / 2,
            # Translators: a residual connection (a skip) drawn beside the block, and the shape it carries
            text=tr("skip {shape}", shape=label),
            showarrow=False,
            xanchor="left",
            textangle=-90,
            font=dict(size=11, color=colour),
        )
    )


def stack_figure(shapes: Sequence[Sequence[int]]) -> go.Figure:
    """Blocks in a row: x -> block 1 -> ... -> block N, with the shape of the tensor between each pair.

    shapes: the input's shape, then each block's output shape (N + 1 shapes).
    """
    if len(shapes) < 2:
        raise ValueError("shapes needs the input's shape and at least one block's output shape")
    n_blocks = len(shapes) - 1
    rects: list[dict] = []
    annotations: list[dict] = []
    for b in range(1, n_blocks + 1):
        rects.append(
            dict(
                type="rect",
                x0=2 * b - 0.6,
                x1=2 * b + 0.6,
                y0=-0.5,
                y1=0.5,
                fillcolor="#ffe8cc",
                line=dict(color="#555"),
            )
        )
        annotations.append(
            dict(x=2 * b, y=0, text=tr("block<br>{block}", block=b), showarrow=False, font=dict(size=12, color="#222"))
        )
    for b, shape in enumerate(shapes):
        x0, x1 = 2 * b + (0.6 if b else -0.4), 2 * b + 1.4
        annotations.append(_arrow((x0, 0), (x1, 0)))
        annotations.append(
            dict(
                x=2 * b + 0.9 if b else 2 * b + 0.5,
                y=0.55,
                text=shape_text(shape),
                showarrow=False,
                yanchor="bottom",
                textangle=-45 if n_blocks > 6 else 0,
                font=dict(size=11, family="monospace"),
            )
        )
    annotations.append(dict(x=-0.6, y=0, text="x", showarrow=False, font=dict(size=14)))
    # Translators: the output at the end of a stack of blocks (a short word beside an arrow)
    out = tr("out")
    annotations.append(dict(x=2 * n_blocks + 1.6, y=0, text=out, showarrow=False, font=dict(size=14), xanchor="left"))
    return figure(
        [],
        _diagram_layout(
            [-1, 2 * n_blocks + 2.6],
            [-0.8, 1.6],
            shapes=rects,
            annotations=annotations,
            height=170,
            margin=dict(l=10, r=10, t=10, b=10),
        ),
    )


def residual_norm_figure(
    norms: Mapping[str, Sequence[float]], d_model: int, *, highlight: str | None = None
) -> go.Figure:
    """Mean |x_i| of the residual stream after 0, 1, ..., N blocks, one line per norm placement.

    norms: e.g. {"post": (N + 1,), "pre": (N + 1,)}; a dashed line marks sqrt(d_model), the size of a
    layer-normed vector (mean 0, variance 1 over d_model entries).
    """
    data = []
    longest = 1
    for name, values in norms.items():
        values = np.asarray(values, dtype=float)
        longest = max(longest, len(values))
        line = dict(width=4 if name == highlight else 2)
        if name in NORM_COLOURS:  # other names take the next colour of the template's colourway
            line["color"] = NORM_COLOURS[name]
        label = tr(NORM_NAMES[name]) if name in NORM_NAMES else f"{name}-norm"
        data.append(
            dict(
                type="scatter",
                x=list(range(len(values))),
                y=values,
                mode="lines+markers",
                name=label,
                line=line,
                hovertemplate=tr(
                    "{norm}, after {blocks} block(s): mean |x| = {length}", norm=label, blocks="%{x}", length="%{y:.2f}"
                )
                + "<extra></extra>",
            )
        )
    root = float(np.sqrt(d_model))
    reference, label = hline(root, dict(dash="dash", color="#777"), f"√d_model = {num(root, '.2f')}", "bottom right")
    return figure(
        data,
        dict(
            shapes=[reference],
            annotations=label,
            xaxis=dict(title=dict(text=tr("blocks applied")), tickmode="linear", dtick=1, range=[-0.3, longest - 0.7]),
            yaxis=dict(title=dict(text=tr("mean size |x| of a position's vector")), rangemode="tozero"),
            height=360,
            margin=dict(l=10, r=10, t=30, b=10),
            legend=dict(orientation="h", y=1.1),
        ),
    )
