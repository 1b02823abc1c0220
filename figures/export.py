"""The numbers behind a figure, for download: every trace's x, y and z arrays as JSON or CSV.

Pure functions (no streamlit). Works for any figure the app draws, so every chart offers its data.
"""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import plotly.graph_objects as go

NUMERIC_FIELDS = ("x", "y", "z")


def _plain(values) -> list | None:
    """A trace field as nested lists of numbers/strings (-inf and NaN written as strings)."""
    if values is None:
        return None
    a = np.asarray(values, dtype=object)
    if a.ndim == 0:
        return None

    def clean(v):
        if isinstance(v, (float, np.floating)) and not np.isfinite(v):
            return str(float(v))
        if isinstance(v, np.generic):
            return v.item()
        return v

    return np.vectorize(clean, otypes=[object])(a).tolist() if a.size else []


def figure_numbers(fig: go.Figure | dict) -> list[dict]:
    """[{"trace": i, "type": ..., "name": ..., "x": [...], "y": [...], "z": [[...]]}] for every trace
    that carries numbers (images sent as pictures carry none and are skipped)."""
    fig = fig if isinstance(fig, go.Figure) else go.Figure(fig)
    out = []
    for i, trace in enumerate(fig.data):
        fields = {f: _plain(getattr(trace, f, None)) for f in NUMERIC_FIELDS if hasattr(trace, f)}
        fields = {f: v for f, v in fields.items() if v}
        if fields:
            out.append({"trace": i, "type": trace.type, "name": getattr(trace, "name", None) or "", **fields})
    return out


def axis_labels(fig: go.Figure | dict) -> dict[str, list[str]]:
    """Tick labels of axes that name their positions (e.g. the tokens of a heatmap)."""
    fig = fig if isinstance(fig, go.Figure) else go.Figure(fig)
    labels = {}
    for name in ("xaxis", "yaxis"):
        ticktext = getattr(fig.layout[name], "ticktext", None)
        if ticktext:
            labels[name] = [str(t) for t in ticktext]
    return labels


def figure_to_json(fig: go.Figure | dict) -> str:
    """{"axis_labels": {...}, "traces": [...]} as JSON."""
    return json.dumps({"axis_labels": axis_labels(fig), "traces": figure_numbers(fig)}, indent=1)


def figure_to_csv(fig: go.Figure | dict) -> str:
    """One row per number: trace, type, name, field, row, column, value (row/column index the array)."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["trace", "type", "name", "field", "row", "column", "value"])
    for t in figure_numbers(fig):
        for field in NUMERIC_FIELDS:
            values = t.get(field)
            if values is None:
                continue
            rows = values if values and isinstance(values[0], list) else [values]
            two_d = bool(values) and isinstance(values[0], list)
            for r, row in enumerate(rows):
                for c, v in enumerate(row):
                    writer.writerow([t["trace"], t["type"], t["name"], field, r if two_d else "", c, v])
    return buf.getvalue()
