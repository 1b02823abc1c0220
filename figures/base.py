"""Building plotly Figures quickly.

Plotly validates every property as a Figure is built, which costs 10-30 ms for a small annotated
heatmap: more than the rest of a Playground rerun. Our builders produce plain dicts of known-good
properties and wrap them without validation; tests validate every builder's output once
(`validated(fig)`), so a typo still fails loudly, in the tests rather than in front of a class.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache

import plotly.graph_objects as go
import plotly.io as pio
from plotly.colors import get_colorscale

# a verdict's colours on every page: right, wrong
RIGHT_COLOUR = "#2ca02c"
WRONG_COLOUR = "#d62728"


def figure(data: list[dict], layout: dict) -> go.Figure:
    """A Figure from trace dicts (each with its "type") and a layout dict, without validation.

    Its template is named (the default one, Streamlit's in the app), not copied in: copying plotly's
    template into every figure costs two thirds of building a small one. ui.charts sends the named
    template's contents with the chart, as plotly would have.

    It is a `LazyFigure`: plotly builds its objects only when something asks for them.
    """
    return LazyFigure({"data": data, "layout": {"template": pio.templates.default, **layout}})


class LazyFigure(go.Figure):
    """A go.Figure whose plotly objects are built on first use, not when it is made.

    go.Figure(...) builds an object for every trace and for the layout and deep-copies
    them all: on the induction page, whose filmstrip has a subplot per snapshot, that is a fifth of the
    server's CPU per run under load, for figures that ui.charts only reads back as dicts. ui.charts takes
    `spec` as it is; anything else asked of the figure (fig.data, fig.layout, to_dict(), update_layout()...)
    builds it first and turns it into a plain go.Figure, so it then behaves exactly as one.
    The builder hands its dicts over: they are not copied, and nothing may change them afterwards.
    """

    def __init__(self, spec: dict):  # not Figure.__init__: that is what is deferred
        object.__setattr__(self, "_lazy_spec", spec)

    def __getattribute__(self, name: str):
        if name in _LAZY_OWN:
            return object.__getattribute__(self, name)
        with _BUILDING:  # a figure cached for every session may be touched by two script threads at once
            own = object.__getattribute__(self, "__dict__")
            spec = own.pop("_lazy_spec", None)
            if spec is not None:
                object.__setattr__(self, "__class__", go.Figure)  # first: plotly's __init__ reads attributes
                try:
                    go.Figure.__init__(self, spec)
                except BaseException:
                    object.__setattr__(self, "__class__", LazyFigure)
                    own.clear()
                    own["_lazy_spec"] = spec
                    raise
        return getattr(self, name)  # a go.Figure now (by this thread or the one the lock waited for)

    @property
    def spec(self) -> dict | None:
        """{"data": [...], "layout": {...}} as the builder gave it, or None once plotly has built the figure
        (then it is a plain go.Figure)."""
        return object.__getattribute__(self, "__dict__").get("_lazy_spec")


_LAZY_OWN = frozenset({"__class__", "__dict__", "_lazy_spec", "spec"})
_BUILDING = threading.Lock()


def validated(fig: go.Figure) -> go.Figure:
    """Validate every property of `fig` (raises ValueError on an invalid one); return `fig` itself."""
    go.Figure(fig.to_dict())
    return fig


@lru_cache(maxsize=32)  # by colour scale name: the figures use a handful of plotly's named scales
def colorscale(name: str) -> tuple[tuple[float, str], ...]:
    """A named plotly colorscale as explicit (position, colour) stops.

    Needed because unvalidated figures send the name as it is, and plotly.js's own "Blues" and
    "RdBu" run in the opposite direction to plotly.py's.
    """
    return tuple((float(p), c) for p, c in get_colorscale(name))


def subplot_title(text: str, x: float, y: float, **style) -> dict:
    """A title centred on paper x, just above paper y (a subplot's top edge), as make_subplots writes one."""
    return dict(
        text=text, x=x, y=y, xref="paper", yref="paper", xanchor="center", yanchor="bottom", showarrow=False, **style
    )


def hline(y: float, line: dict, text: str | None = None, position: str = "top right") -> tuple[dict, list[dict]]:
    """A line across the whole plot at y and, with `text`, its label at `position` ("bottom left", "top right"...).

    What `fig.add_hline(y, line=..., annotation_text=..., annotation_position=...)` adds: (shape, annotations).
    """
    shape = dict(type="line", xref="x domain", x0=0, x1=1, yref="y", y0=y, y1=y, line=line)
    if text is None:
        return shape, []
    vertical, horizontal = position.split()
    label = dict(
        text=text,
        showarrow=False,
        xref="x domain",
        x=0 if horizontal == "left" else 1,
        xanchor=horizontal,
        yref="y",
        y=y,
        yanchor="top" if vertical == "bottom" else "bottom",
    )
    return shape, [label]


# ---------------------------------------------------------------- narrow screens (a phone, 390 px wide)

PHONE_PLOT_PX = 220  # the plotting area of a chart on a 390 px phone: padding, margins and colour bar taken off
TICK_PX = 28  # room each tick label keeps on a narrow screen (turned labels need about this much)
CHAR_PX = 6.5  # width of a character of a 11 px title


def for_narrow_screen(spec: dict, max_columns: int = 2, width_px: float = PHONE_PLOT_PX) -> dict:
    """A figure's {"data", "layout"} for a chart whose plotting area is `width_px` wide: small multiples
    reflow to at most `max_columns` columns (in reading order, the figure taller, each subplot keeping its
    title), tick labels thin out so that each keeps about TICK_PX, and titles above subplots wrap to their
    subplot's width.
    Returns new dicts where it changes something; `spec`'s own are never altered.

    Only a grid whose every subplot has axes and a title of its own reflows: in a grid whose rows mean
    something (a label at their left, an axis shared along a row) reading order would mix them up.
    """
    layout = dict(spec["layout"])
    cells, own_axes = _cells(spec["data"], layout)
    titles = _titles_of(layout.get("annotations") or [], cells)
    columns = len({round(x[0], 4) for x, _ in cells.values()})
    if own_axes and columns > max_columns and _is_grid(cells):
        layout = _reflow(layout, cells, titles, max_columns)
    for name in [k for k in layout if re.fullmatch(r"[xy]axis\d*", k)]:
        axis = dict(layout[name])
        domain = axis.get("domain", [0.0, 1.0])
        if name.startswith("x"):
            axis = _thin_ticks(axis, max(2, int(width_px * (domain[1] - domain[0]) / TICK_PX)))
        axis["tickfont"] = {**axis.get("tickfont", {}), "size": min(axis.get("tickfont", {}).get("size", 10), 10)}
        layout[name] = axis
    annotations = []
    for a in layout.get("annotations") or []:
        cell = _cell_under(a, cells)
        if cell is not None and isinstance(a.get("text"), str):
            width = width_px * (cell[0][1] - cell[0][0])
            a = {**a, "text": wrap_title(a["text"], int(width / CHAR_PX)), "font": {**a.get("font", {}), "size": 11}}
        annotations.append(a)
    if annotations:
        layout["annotations"] = annotations
    title = layout.get("title")
    text = title.get("text") if isinstance(title, dict) else title
    if isinstance(text, str):
        wrapped = wrap_title(text, int(width_px / 8))
        layout["title"] = {**(title if isinstance(title, dict) else {}), "text": wrapped}
        extra = 18 * (wrapped.count("<br>") - text.count("<br>"))  # each new line of the title, in px
        if extra:  # hung from the top, the margin growing with it: the title does not run into what is under it
            layout["title"].update(y=1, yref="container", yanchor="top", pad={"t": 8})
            margin = layout.get("margin") or {}
            layout["margin"] = {**margin, "t": float(margin.get("t", 100)) + extra}
            layout["height"] = float(layout.get("height") or 450) + extra
    return {"data": spec["data"], "layout": layout}


def _cells(data: list[dict], layout: dict) -> tuple[dict[tuple[str, str], tuple[list, list]], bool]:
    """(x domain, y domain) of each subplot, by its (x axis, y axis) layout names, and whether every
    subplot has both axes to itself."""
    pairs = {(_axis_name("x", t.get("xaxis", "x")), _axis_name("y", t.get("yaxis", "y"))) for t in data}
    own = len({x for x, _ in pairs}) == len(pairs) == len({y for _, y in pairs})
    cells = {
        (x, y): (list(layout.get(x, {}).get("domain", [0, 1])), list(layout.get(y, {}).get("domain", [0, 1])))
        for x, y in pairs
    }
    return cells, own


def _axis_name(letter: str, ref: str) -> str:
    return f"{letter}axis{ref[1:]}"  # "x2" -> "xaxis2", "x" -> "xaxis"


def _is_grid(cells: dict) -> bool:
    """Whether the subplots fill a rows x columns grid, one in each place."""
    tops = {round(y[1], 4) for _, y in cells.values()}
    lefts = {round(x[0], 4) for x, _ in cells.values()}
    places = {(round(y[1], 4), round(x[0], 4)) for x, y in cells.values()}
    return len(places) == len(cells) == len(tops) * len(lefts)


def _cell_under(a: dict, cells: dict):
    """The subplot an annotation in paper coordinates is the title of (centred just above it), or None."""
    if a.get("xref") != "paper" or a.get("yref") != "paper" or a.get("yanchor") != "bottom":
        return None
    for cell in cells.values():
        (x0, x1), (_, y1) = cell
        if abs(float(a.get("x", -1)) - (x0 + x1) / 2) < 1e-6 and abs(float(a.get("y", -1)) - y1) < 1e-6:
            return cell
    return None


def _titles_of(annotations: list[dict], cells: dict) -> dict:
    """Each subplot's title annotation (by the subplot's axes), for the subplots that have one."""
    out = {}
    for i, a in enumerate(annotations):
        for axes, cell in cells.items():
            if _cell_under(a, {axes: cell}) is not None:
                out[axes] = i
    return out


def _reflow(layout: dict, cells: dict, titles: dict, columns: int) -> dict:
    """`layout` with its subplots in `columns` columns and each as tall as it was.

    Every subplot titled (small multiples): in reading order. Otherwise a grid whose rows and columns mean
    something (heads by checkpoints): its columns in blocks of `columns`, each block under the one before with
    every row, and each row's label (an annotation left of the grid) repeated beside every block."""
    tops = sorted({round(y[1], 4) for _, y in cells.values()}, reverse=True)
    lefts = sorted({round(x[0], 4) for x, _ in cells.values()})
    grid = {axes: (tops.index(round(y[1], 4)), lefts.index(round(x[0], 4))) for axes, (x, y) in cells.items()}
    if len(titles) == len(cells):
        order = sorted(cells, key=lambda axes: grid[axes])
        place = {axes: divmod(k, columns) for k, axes in enumerate(order)}
    else:
        place = {axes: ((c // columns) * len(tops) + r, c % columns) for axes, (r, c) in grid.items()}
    rows = max(r for r, _ in place.values()) + 1
    height = float(layout.get("height") or 450)
    margin = layout.get("margin") or {}
    plot = height - float(margin.get("t", 80)) - float(margin.get("b", 80))
    new_plot = plot * rows / len(tops)
    layout["height"] = round(height + new_plot - plot)
    gap_x = 0.08
    gap_y = min(0.3, 40 / max(new_plot, 1)) if titles else min(0.1, 8 / max(new_plot, 1))
    width = (1 - gap_x * (columns - 1)) / columns
    tall = (1 - gap_y * (rows - 1)) / rows
    old_rows = {r: cells[axes][1] for axes, (r, c) in grid.items() if c == 0}
    annotations, moved = [], {}
    for axes, (r, c) in place.items():
        x0, y1 = c * (width + gap_x), 1 - r * (tall + gap_y)
        x_name, y_name = axes
        y0 = max(0.0, y1 - tall)  # not -1e-16 at the bottom
        x1 = min(1.0, x0 + width)
        layout[x_name] = {**layout.get(x_name, {}), "domain": [x0, x1]}
        layout[y_name] = {**layout.get(y_name, {}), "domain": [y0, y1], "showticklabels": c == 0}
        moved[axes] = ([x0, x1], [y0, y1])
    for i, a in enumerate(layout.get("annotations") or []):
        axes = next((axes for axes, j in titles.items() if j == i), None)
        above = axes or next((ax for ax in cells if _cell_under(a, {ax: cells[ax]}) is not None), None)
        if above is not None:  # a title above a subplot goes with it
            (x0, x1), (_, y1) = moved[above]
            annotations.append({**a, "x": (x0 + x1) / 2, "y": y1})
            continue
        row = _row_label_of(a, old_rows, min(x[0] for x, _ in cells.values()))
        if row is None:
            annotations.append(a)
            continue
        for block in range(-(-len(lefts) // columns)):  # beside the first column of every block
            y0, y1 = moved[next(ax for ax, (r, c) in place.items() if r == block * len(tops) + row and c == 0)][1]
            annotations.append({**a, "y": (y0 + y1) / 2})
    layout["annotations"] = annotations
    cells.update(moved)
    return layout


def _row_label_of(a: dict, rows: dict[int, list[float]], left: float) -> int | None:
    """The grid row an annotation left of the grid (in paper coordinates) labels, or None."""
    if a.get("xref") != "paper" or a.get("yref") != "paper" or float(a.get("x", 1)) > left + 1e-6:
        return None
    y = float(a.get("y", -1))
    return next((r for r, (y0, y1) in rows.items() if y0 - 1e-6 <= y <= y1 + 1e-6), None)


def _thin_ticks(axis: dict, keep: int) -> dict:
    """An axis with explicit ticks (tickvals/ticktext) showing at most `keep` of them, evenly spaced."""
    values = axis.get("tickvals")
    if axis.get("tickmode") != "array" or not isinstance(values, list | tuple) or len(values) <= keep:
        return axis
    step = -(-len(values) // keep)
    out = {**axis, "tickvals": list(values)[::step]}
    if isinstance(axis.get("ticktext"), list | tuple):
        out["ticktext"] = list(axis["ticktext"])[::step]
    return out


def wrap_title(text: str, width: int) -> str:
    """Plotly title text with its lines broken at spaces to about `width` characters (its <br>s kept)."""
    lines = []
    for line in text.split("<br>"):
        current = ""
        for word in line.split(" "):
            if current and len(_visible(current + " " + word)) > max(width, 6):
                lines.append(current)
                current = word
            else:
                current = f"{current} {word}" if current else word
        lines.append(current)
    return "<br>".join(lines)


def _visible(text: str) -> str:
    return re.sub(r"<[^>]+>", "", text)
