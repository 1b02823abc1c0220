"""The questions a teacher asks from the Predict page and the Playground, and the chart of a class's answers.

Pure functions (no Streamlit): a question is the dict classroom.store.ask takes, its true value computed
by the project's own attention core; the chart is a plotly figure dict.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import plotly.graph_objects as go

from attention import attention_steps
from attention.sequence import TokenSequence
from lessons.puzzles import PUZZLES_BY_ID, custom_puzzle

WEIGHT_STEP = 0.05  # the width of a bar of the weight histogram, and the step of a student's slider


def key_options(tokens) -> list[str]:
    return [f"k_{j} '{tok}'"[:80] for j, tok in enumerate(tokens)]


def argmax_question(seq: TokenSequence, query: int, *, causal: bool, scale: bool, source: dict) -> tuple[dict, int]:
    """'Which key will query i attend to most?' for `seq`, and its answer (the first key on a tie)."""
    n = len(seq.tokens)
    if not 0 <= query < n:
        raise ValueError(f"query {query} is outside 0..{n - 1}")
    if n < 2:
        raise ValueError("a sequence of one token has only one key: nothing to ask")
    weights = attention_steps(seq.q, seq.k, seq.v, causal=causal, scale=scale).weights  # (n, n)
    question = {
        "kind": "choice",
        "prompt": f"Which key will query {query} '{seq.tokens[query]}' attend to most?"[:300],
        "options": key_options(seq.tokens),
        "source": {**source, "query": query, "causal": causal, "scale": scale},
    }
    return question, int(np.argmax(weights[query]))


def weight_question(
    seq: TokenSequence, query: int, key: int, *, causal: bool, scale: bool, source: dict
) -> tuple[dict, float]:
    """'What weight will query i give key j?' for `seq`, and its answer (a number in [0, 1])."""
    n = len(seq.tokens)
    if not (0 <= query < n and 0 <= key < n):
        raise ValueError(f"query {query} and key {key} must be in 0..{n - 1}")
    weights = attention_steps(seq.q, seq.k, seq.v, causal=causal, scale=scale).weights  # (n, n)
    question = {
        "kind": "number",
        "prompt": f"What weight will query {query} '{seq.tokens[query]}' give key {key} '{seq.tokens[key]}'?"[:300],
        "lo": 0.0,
        "hi": 1.0,
        "source": {**source, "query": query, "key": key, "causal": causal, "scale": scale},
    }
    return question, float(weights[query, key])


def predict_question(puzzle_id: str, query: int, own: TokenSequence | None = None) -> tuple[dict, int]:
    """The Predict page's question for one query of a puzzle (`own`: the vectors of 'Make your own')."""
    if puzzle_id in PUZZLES_BY_ID:
        puzzle = PUZZLES_BY_ID[puzzle_id]
    elif own is not None:
        puzzle = custom_puzzle(own)
    else:
        raise ValueError(f"no puzzle {puzzle_id!r}")
    # The Predict page scores with scaling on and no mask (pages/predict.py).
    return argmax_question(puzzle.seq, query, causal=False, scale=True, source={"page": "predict", "puzzle": puzzle.id})


def counts(question: dict, values: list) -> tuple[list[str], list[int]]:
    """Bars of the distribution: one per option, or per WEIGHT_STEP-wide bin of a number question."""
    if question["kind"] == "choice":
        found = Counter(int(v) for v in values)
        return list(question["options"]), [found.get(i, 0) for i in range(len(question["options"]))]
    lo, hi = question["lo"], question["hi"]
    bins = max(1, int(round((hi - lo) / WEIGHT_STEP)))
    edges = np.linspace(lo, hi, bins + 1)
    found = np.histogram(np.asarray(values, dtype=float), bins=edges)[0] if values else np.zeros(bins, int)
    return [f"{a:.2f}–{b:.2f}" for a, b in zip(edges[:-1], edges[1:])], [int(c) for c in found]


def truth_bar(question: dict, truth) -> int | None:
    """The bar the true value falls in (None: no true value)."""
    if truth is None:
        return None
    if question["kind"] == "choice":
        return int(truth)
    lo, hi = question["lo"], question["hi"]
    bins = max(1, int(round((hi - lo) / WEIGHT_STEP)))
    return min(bins - 1, int((truth - lo) / (hi - lo) * bins))


def distribution_figure(question: dict, values: list, truth=None, mine=None) -> dict:
    """The class's answers as bars; after the reveal the true value's bar in green and named, and
    `mine` (a student's own answer) marked."""
    labels, heights = counts(question, values)
    right, own = truth_bar(question, truth), truth_bar(question, mine)
    colours = ["#2e7d32" if i == right else "#4c78a8" for i in range(len(labels))]
    fig = go.Figure(
        go.Bar(
            x=labels,
            y=heights,
            marker_color=colours,
            marker_line_color=["#000" if i == own else "rgba(0,0,0,0)" for i in range(len(labels))],
            marker_line_width=3,
            hovertemplate="%{x}: %{y} answers<extra></extra>",
        )
    )
    if right is not None:
        shown = labels[right] if question["kind"] == "choice" else f"{truth:.3f}"
        fig.add_annotation(x=labels[right], y=heights[right], text=f"true: {shown}", showarrow=True, arrowhead=2)
    fig.update_layout(
        height=260,
        margin={"l": 40, "r": 10, "t": 30, "b": 40},
        yaxis={"title": "answers", "rangemode": "tozero", "dtick": 1 if max(heights, default=0) < 10 else None},
        xaxis={"type": "category"},
        showlegend=False,
    )
    return fig.to_dict()
