"""The numbers behind a figure, for download: every trace's x, y and z arrays as JSON or CSV.

Pure functions (no streamlit). Works for any figure the app draws, so every chart offers its data.
"""

from __future__ import annotations

import base64
import csv
import io
import json

import numpy as np
import plotly.graph_objects as go

from locales import num, tr

NUMERIC_FIELDS = ("x", "y", "z")


def decoded(values):
    """A trace field as plotly's figure JSON may hold it: plain (lists, an array), or plotly's typed array
    {"dtype", "bdata" (base64 of the raw values), "shape" (optional, "n, m")}, decoded to a numpy array."""
    if isinstance(values, dict) and "bdata" in values:
        a = np.frombuffer(base64.b64decode(values["bdata"]), dtype=np.dtype(values["dtype"]))
        shape = values.get("shape")
        return a.reshape([int(n) for n in str(shape).split(",")]) if shape else a
    return values


def _plain(values) -> list | None:
    """A trace field as nested lists of numbers/strings (-inf and NaN written as strings)."""
    if values is None:
        return None
    a = np.asarray(decoded(values), dtype=object)
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


def heatmap_tables(fig: go.Figure | dict, digits: int = 3) -> list[dict]:
    """Each heatmap of `fig` as a table a screen reader can read: [{"description", "rows", "columns",
    "values"}], rows and columns named by the axes' tick labels where they name positions, values as text
    rounded to `digits` decimals (−∞ written out, a hidden value (NaN) as ?, as its cell shows it). Images sent as
    pictures carry no numbers: none."""
    fig = fig if isinstance(fig, go.Figure) else go.Figure(fig)
    title = fig.layout.title.text or ""
    heatmaps = [t for t in fig.data if t.type == "heatmap" and t.z is not None]
    out = []
    for k, trace in enumerate(heatmaps):
        z = np.asarray(decoded(trace.z), dtype=float)
        if z.ndim != 2 or not z.size:
            continue
        n, m = z.shape
        rows = _position_names(fig, "y", trace, n)
        columns = _position_names(fig, "x", trace, m)
        finite = z[np.isfinite(z)]
        if trace.name:
            name = trace.name
        elif len(heatmaps) > 1:
            name = (
                tr("{title}, part {number}", title=title, number=k + 1)
                if title
                else tr("Heatmap {number}", number=k + 1)
            )
        else:
            # Translators: the name of a chart that has no title (a heatmap: a grid of coloured cells)
            name = title or tr("Heatmap")
        axes = [_axis_title(fig, letter, trace) for letter in "yx"]
        out.append(
            {
                "description": _description(name, n, m, axes if all(axes) else None, finite, digits),
                "rows": rows,
                "columns": columns,
                "values": [[_cell(v, digits) for v in row] for row in z.tolist()],
            }
        )
    return out


def _description(name: str, n: int, m: int, axes: list[str] | None, finite: np.ndarray, digits: int) -> str:
    """The sentence before a heatmap's table: its name, its size, what its rows and columns are (`axes`: the y and x
    axes' titles, if both have one) and the range of its finite numbers (if any)."""
    values = {"name": name, "rows": n, "columns": m}
    if axes is not None:
        values |= {"row_axis": axes[0], "column_axis": axes[1]}
    if finite.size:
        values |= {"low": num(finite.min(), f".{digits}g"), "high": num(finite.max(), f".{digits}g")}
        if axes is not None:
            return tr(
                "{name}: {rows} rows × {columns} columns of numbers (rows: {row_axis}; columns: {column_axis}), "
                "from {low} to {high}.",
                **values,
            )
        return tr("{name}: {rows} rows × {columns} columns of numbers, from {low} to {high}.", **values)
    if axes is not None:
        return tr(
            "{name}: {rows} rows × {columns} columns of numbers (rows: {row_axis}; columns: {column_axis}).", **values
        )
    return tr("{name}: {rows} rows × {columns} columns of numbers.", **values)


def _axis_title(fig: go.Figure, letter: str, trace) -> str:
    axis = fig.layout[f"{letter}axis{(getattr(trace, letter + 'axis') or letter)[1:]}"]
    return str(axis.title.text or "")


def _position_names(fig: go.Figure, letter: str, trace, count: int) -> list[str]:
    """The names of a heatmap's rows (letter "y") or columns ("x"): tick labels, else its coordinates."""
    axis = fig.layout[f"{letter}axis{(getattr(trace, letter + 'axis') or letter)[1:]}"]
    coords = getattr(trace, letter)
    coords = list(coords) if coords is not None else list(range(count))
    if axis.ticktext and axis.tickvals:
        named = {v: str(t) for v, t in zip(axis.tickvals, axis.ticktext)}
        coords = [named.get(c, c) for c in coords]
    names = [str(c) for c in coords[:count]] + [str(i) for i in range(len(coords), count)]
    seen: dict[str, int] = {}
    unique = []
    for name in names:  # a table's headers must differ: "the", "the·2"
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if seen[name] == 1 else f"{name}·{seen[name]}")
    return unique


def _cell(v: float, digits: int) -> str:
    if np.isnan(v):
        return "?"  # as the heatmap's cell shows it (figures.heatmaps.fmt): a value hidden until a class's reveal
    if np.isinf(v):
        return "−∞" if v < 0 else "∞"
    return f"{v:.{digits}f}"
