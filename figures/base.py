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
        if getattr(_THIS_THREAD, "building", None) is self:  # plotly's __init__, reading the figure it builds
            return go.Figure.__getattribute__(self, name)
        with _BUILDING:  # a figure cached for every session may be touched by two script threads at once
            own = object.__getattribute__(self, "__dict__")
            spec = own.pop("_lazy_spec", None)
            if spec is not None:
                # Built while it is still a LazyFigure, so that another thread's touch waits here for the lock,
                # and a go.Figure only once whole: switched first, another thread would read it half-built.
                _THIS_THREAD.building = self
                try:
                    go.Figure.__init__(self, spec)
                except BaseException:
                    own.clear()
                    own["_lazy_spec"] = spec
                    raise
                finally:
                    _THIS_THREAD.building = None
                object.__setattr__(self, "__class__", go.Figure)
        return getattr(self, name)  # a go.Figure now (by this thread or the one the lock waited for)

    @property
    def spec(self) -> dict | None:
        """{"data": [...], "layout": {...}} as the builder gave it, or None once plotly has built the figure
        (then it is a plain go.Figure)."""
        return object.__getattribute__(self, "__dict__").get("_lazy_spec")


_LAZY_OWN = frozenset({"__class__", "__dict__", "_lazy_spec", "spec"})
_BUILDING = threading.Lock()
_THIS_THREAD = threading.local()  # .building: the LazyFigure this thread is building, if any


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
NARROWEST_PX = 328  # the narrowest chart a page has: the main column of a 360 px phone (16 px padding each side)
TICK_PX = 28  # room each tick label keeps on a narrow screen (turned labels need about this much)
CHAR_PX = 6.5  # width of a character of a 11 px title
COLORBAR_PX = 70  # a colour bar beside the plot: the bar, its numbers and its title


def readable_width(spec: dict, numbers: bool = True) -> float:
    """The narrowest chart (in px, the whole figure) at which `spec`'s layout stays readable: every subplot's
    title fits over its subplot, explicit tick labels keep room to stand turned, the x tick labels of a row
    stay out of the titles under them (in a grid whose rows leave no room for turned labels, the labels must
    fit unturned), the figure's title fits across, and (with `numbers`) the numbers written in a heatmap's
    cells fit them. An estimate from character widths, on the safe side.
    """
    layout = spec["layout"]
    side = side_px(spec)
    cells, _ = _cells(spec["data"], layout)
    plot_h = _plot_height(layout)
    need = [_text_px(_title_text(layout.get("title")), 17) + 20]
    for a in layout.get("annotations") or []:
        cell = _cell_under(a, cells)
        if cell is not None and isinstance(a.get("text"), str):
            need.append(side + (_text_px(a["text"], _font_size(a)) + 4) / (cell[0][1] - cell[0][0]))
    for (x_name, _), ((x0, x1), (y0, _)) in cells.items():
        axis = layout.get(x_name) or {}
        labels = _tick_labels(axis)
        if not labels:
            continue
        size = _font_size(axis, "tickfont")
        per_tick = 1.4 * size  # turned labels, side by side
        longest = max(_text_px(t, size) for t in labels)  # a label's width level, its height turned
        for a, (_, top) in _titles_under(layout, cells, x0, x1, y0):  # a subplot's title under this one
            room = (y0 - top) * plot_h  # px between this subplot and the title's subplot
            if room < _lines(a) * 1.4 * _font_size(a) + longest + 16:  # no room for turned labels: level ones
                per_tick = max(per_tick, longest + 6)
        need.append(side + len(labels) * per_tick / (x1 - x0))
    for name in [k for k in layout if re.fullmatch(r"xaxis\d*", k)]:  # an x axis's title across its axis
        axis = layout[name] or {}
        x0, x1 = axis.get("domain", [0.0, 1.0])
        title = axis.get("title") if isinstance(axis.get("title"), dict) else {}
        need.append(side + _text_px(_axis_title(axis), _font_size(title)) / (x1 - x0))
    for trace in spec["data"] if numbers else ():
        numbers = _cell_numbers(trace)
        if numbers is not None:
            (x0, x1), _ = cells[(_axis_name("x", trace.get("xaxis", "x")), _axis_name("y", trace.get("yaxis", "y")))]
            need.append(side + numbers[0] * (numbers[1] + 4) / (x1 - x0))
    return max(need)


def _cell_numbers(trace: dict) -> tuple[int, float] | None:
    """(columns, px of its widest number) of a heatmap that writes its numbers in its cells, or None."""
    if trace.get("type") != "heatmap" or not trace.get("texttemplate") or trace.get("z") is None:
        return None
    z = trace["z"]
    columns = int(str(z.get("shape", "0")).split(",")[-1]) if isinstance(z, dict) else len(z[0]) if len(z) else 0
    text = trace.get("text")
    rows = text if isinstance(text, list | tuple) and text and isinstance(text[0], list | tuple) else [["-0.00"]]
    chars = max(len(_visible(str(t))) for row in rows for t in row)
    return columns, chars * 0.6 * _font_size(trace, "textfont")


def side_px(spec: dict) -> float:
    """The px of a chart's width that are not its plotting area: the margins, each at least as wide as what
    plotly puts in it (automargin): the y tick labels and title at the left, a colour bar at the right."""
    layout = spec["layout"]
    margin = layout.get("margin") or {}
    y_axes = [layout.get(k) or {} for k in layout if re.fullmatch(r"yaxis\d*", k)] or [{}]
    labels = [
        max((_text_px(t, _font_size(a, "tickfont")) for t in _tick_labels(a) or ["0.00"]), default=0)
        for a in y_axes
        if a.get("showticklabels", True) and a.get("visible", True)
    ]
    left = max(labels, default=0) + 8 + (20 if any(_axis_title(a) for a in y_axes) else 0)
    right = COLORBAR_PX if _has_colorbar(spec) else 0
    return max(float(margin.get("l", 80)), left) + max(float(margin.get("r", 80)), right)


def _has_colorbar(spec: dict) -> bool:
    layout = spec["layout"]
    for k, v in layout.items():
        if k.startswith("coloraxis") and isinstance(v, dict) and v.get("showscale", True):
            if any(t.get("coloraxis") == k for t in spec["data"]):
                return True
    return any(
        t.get("type") in ("heatmap", "contour") and not t.get("coloraxis") and t.get("showscale", True)
        for t in spec["data"]
    )


def _titles_under(layout: dict, cells: dict, x0: float, x1: float, y0: float):
    """(annotation, its subplot's y domain) of each subplot title straight under the subplot at x0..x1 whose
    bottom is y0."""
    for a in layout.get("annotations") or []:
        cell = _cell_under(a, cells)
        if cell is not None and cell[1][1] < y0 - 1e-9 and cell[0][0] < x1 and x0 < cell[0][1]:
            yield a, cell[1]


def _plot_height(layout: dict) -> float:
    margin = layout.get("margin") or {}
    return float(layout.get("height") or 450) - float(margin.get("t", 100)) - float(margin.get("b", 80))


def _tick_labels(axis: dict) -> list[str]:
    """The explicit tick labels an x axis shows (tickmode "array"), or none."""
    if axis.get("tickmode") != "array" or not axis.get("showticklabels", True) or not axis.get("visible", True):
        return []
    for labels in (axis.get("ticktext"), axis.get("tickvals")):
        if isinstance(labels, list | tuple):
            return [str(t) for t in labels]
    return []


def _font_size(item: dict, key: str = "font") -> float:
    return float((item.get(key) or {}).get("size") or 12)


def _title_text(title) -> str:
    text = title.get("text") if isinstance(title, dict) else title
    return text if isinstance(text, str) else ""


def _axis_title(axis: dict) -> str:
    return _title_text(axis.get("title"))


def _lines(a: dict) -> int:
    return str(a.get("text", "")).count("<br>") + 1


def _text_px(text: str, size: float) -> float:
    """About how wide `text` (plotly text, <br> lines) is at font `size`: its longest line."""
    return max((len(_visible(line)) for line in text.split("<br>")), default=0) * 0.6 * size


def for_narrow_screen(spec: dict, max_columns: int = 2, width_px: float = PHONE_PLOT_PX) -> dict:
    """A figure's {"data", "layout"} for a chart whose plotting area is `width_px` wide: small multiples
    reflow to at most `max_columns` columns (in reading order, the figure taller, each subplot keeping its
    title), tick labels thin out so that each keeps about TICK_PX, titles above subplots wrap to their
    subplot's width, and numbers in a heatmap's cells that no longer fit them get smaller or are left to
    the hover.
    Returns new dicts where it changes something; `spec`'s own are never altered.

    Only a grid whose every subplot has axes and a title of its own reflows: in a grid whose rows mean
    something (a label at their left, an axis shared along a row) reading order would mix them up.
    """
    layout = narrow_layout(spec, max_columns, width_px)
    return {"data": numbers_that_fit(spec["data"], layout, width_px), "layout": layout}


def narrow_layout(spec: dict, max_columns: int = 2, width_px: float = PHONE_PLOT_PX) -> dict:
    """The layout of `for_narrow_screen(spec, ...)`: it reads of the traces only which axes and colour bar
    each has (`trace_places`), so one narrow layout serves every figure of the same layout and places."""
    layout = dict(spec["layout"])
    cells, own_axes = _cells(spec["data"], layout)
    titles = _titles_of(layout.get("annotations") or [], cells)
    columns = len({round(x[0], 4) for x, _ in cells.values()})
    if own_axes and columns > max_columns and _is_grid(cells):
        layout = _reflow(layout, cells, titles, max_columns, width_px)
    for name in [k for k in layout if re.fullmatch(r"[xy]axis\d*", k)]:
        axis = dict(layout[name])
        domain = axis.get("domain", [0.0, 1.0])
        if name.startswith("x"):
            axis = _thin_ticks(axis, max(2, int(width_px * (domain[1] - domain[0]) / TICK_PX)))
            title = axis.get("title")
            if _axis_title(axis):  # wrapped to the axis's width (plotly leaves a long one cut at the edge)
                title = title if isinstance(title, dict) else {"text": title}
                chars = int(width_px * (domain[1] - domain[0]) / (0.6 * _font_size(title)))
                axis["title"] = {**title, "text": wrap_title(title["text"], chars)}
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
        extra = 22 * (wrapped.count("<br>") - text.count("<br>"))  # each new line of the title, in px
        if extra:  # hung from the top, the margin growing with it: the title does not run into what is under it
            # (labels over the plot). Plotly draws a title of several lines anchored at its top about 16 px
            # higher than the anchor (measured in Chromium, 2 and 3 lines alike): the pad lowers it by as much.
            layout["title"].update(y=1, yref="container", yanchor="top", pad={"t": 8 + 16})
            margin = layout.get("margin") or {}
            layout["margin"] = {**margin, "t": float(margin.get("t", 100)) + extra}
            layout["height"] = float(layout.get("height") or 450) + extra
    return layout


def numbers_that_fit(data: list[dict], layout: dict, width_px: float) -> list[dict]:
    """The traces of a figure laid out by `layout` in a plotting area `width_px` wide, each heatmap's numbers
    sized to fit its cells or left to the hover (`_numbers_that_fit`)."""
    return [_numbers_that_fit(trace, layout, width_px) for trace in data]


def trace_places(data: list[dict]) -> list[tuple]:
    """What `readable_width(numbers=False)`, `side_px` and `narrow_layout` read of each trace: its type, its
    axes and its colour bar."""
    return [
        (t.get("type", "scatter"), t.get("xaxis", "x"), t.get("yaxis", "y"), t.get("coloraxis"), t.get("showscale"))
        for t in data
    ]


MIN_CELL_FONT = 8  # the smallest font for a heatmap's numbers in a narrow chart


def _numbers_that_fit(trace: dict, layout: dict, width_px: float) -> dict:
    """A heatmap trace whose numbers fit its cells `width_px` wide in all: smaller (down to MIN_CELL_FONT)
    where they no longer fit, or left to the hover; any other trace as it is."""
    numbers = _cell_numbers(trace)
    if numbers is None:
        return trace
    x0, x1 = (layout.get(_axis_name("x", trace.get("xaxis", "x"))) or {}).get("domain", [0.0, 1.0])
    cell = width_px * (x1 - x0) / max(numbers[0], 1)
    if numbers[1] + 2 <= cell:
        return trace
    size = _font_size(trace, "textfont") * (cell - 2) / numbers[1]
    if size >= MIN_CELL_FONT:
        return {**trace, "textfont": {**(trace.get("textfont") or {}), "size": int(size)}}
    return {k: v for k, v in trace.items() if k != "texttemplate"}


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


def _reflow(layout: dict, cells: dict, titles: dict, columns: int, width_px: float) -> dict:
    """`layout` with its subplots in `columns` columns and each as tall as it was, in a plotting area `width_px`
    wide; between rows, room for the x tick labels of one row and the titles of the next (`_row_gap_px`).

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
    gap_x = 0.08
    width = (1 - gap_x * (columns - 1)) / columns
    cell_h = plot * min(y1 - y0 for _, (y0, y1) in cells.values())  # each subplot keeps its height
    gap_px = _row_gap_px(layout, cells, titles, width * width_px) if titles else 8
    new_plot = rows * cell_h + (rows - 1) * gap_px
    layout["height"] = round(height + new_plot - plot)
    gap_y, tall = gap_px / new_plot, cell_h / new_plot
    old_rows = {r: cells[axes][1] for axes, (r, c) in grid.items() if c == 0}
    y_labels = any((layout.get(y) or {}).get("showticklabels", True) for _, y in cells)  # a grid that shows some
    annotations, moved = [], {}
    for axes, (r, c) in place.items():
        x0, y1 = c * (width + gap_x), 1 - r * (tall + gap_y)
        x_name, y_name = axes
        y0 = max(0.0, y1 - tall)  # not -1e-16 at the bottom
        x1 = min(1.0, x0 + width)
        layout[x_name] = {**layout.get(x_name, {}), "domain": [x0, x1]}
        layout[y_name] = {**layout.get(y_name, {}), "domain": [y0, y1], "showticklabels": c == 0 and y_labels}
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


def _row_gap_px(layout: dict, cells: dict, titles: dict, cell_px: float) -> float:
    """The px between two rows of reflowed subplots `cell_px` wide: a title wrapped to the subplot's width
    (11 px text, 16 px lines) over the x tick labels of the row above with their tick marks (28 px level),
    thinned as for_narrow_screen thins them and turned when they do not fit level (10 px labels)."""
    notes = layout.get("annotations") or []
    lines = max(
        (wrap_title(str(notes[i].get("text", "")), int(cell_px / CHAR_PX)).count("<br>") + 1 for i in titles.values()),
        default=0,
    )
    ticks = 0.0
    for x_name, _ in cells:
        labels = _tick_labels(layout.get(x_name) or {})
        if labels:
            step = -(-len(labels) // max(2, int(cell_px / TICK_PX)))
            shown = labels[::step]
            longest = max(_text_px(t, 10) for t in shown)
            ticks = max(ticks, 28 if longest + 4 <= cell_px / len(shown) else longest + 16)
    return lines * 16 + ticks + 8


def _row_label_of(a: dict, rows: dict[int, list[float]], left: float) -> int | None:
    """The grid row an annotation left of the grid (in paper coordinates) labels, or None."""
    if a.get("xref") != "paper" or a.get("yref") != "paper" or float(a.get("x", 1)) > left + 1e-6:
        return None
    y = float(a.get("y", -1))
    return next((r for r, (y0, y1) in rows.items() if y0 - 1e-6 <= y <= y1 + 1e-6), None)


def _thin_ticks(axis: dict, keep: int) -> dict:
    """An axis with explicit ticks (tickvals/ticktext) showing at most `keep` of them, evenly spaced, from the
    first tick whose choice shows no label twice: "the dog chased the cat up the tall tree" kept every third
    word from the first shows "the the the", from the second "dog cat tall"."""
    values = axis.get("tickvals")
    if axis.get("tickmode") != "array" or not isinstance(values, list | tuple) or len(values) <= keep:
        return axis
    step = -(-len(values) // keep)
    texts = list(axis["ticktext"]) if isinstance(axis.get("ticktext"), list | tuple) else None
    start = 0
    if texts is not None:
        start = next((i for i in range(step) if len(set(texts[i::step])) == len(texts[i::step])), 0)
    out = {**axis, "tickvals": list(values)[start::step]}
    if texts is not None:
        out["ticktext"] = texts[start::step]
    return out


# Characters as wide as two Latin letters (Chinese, Japanese, Korean, full-width forms): a line may break between
# any two of them (Chinese writes no spaces), except before the punctuation that never starts a line.
_WIDE = "\u1100-\u115f\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6"
_TITLE_TOKENS = re.compile(rf"[{_WIDE}]|(?:<[^>]+>|[^\s<{_WIDE}])+| +")
_NO_LINE_START = set("，。、；：？！）》」』”’,.;:?!)")


def wrap_title(text: str, width: int) -> str:
    """Plotly title text with its lines broken to about `width` characters (its <br>s kept): at spaces, and between
    two Chinese characters, each of which counts as two."""
    lines = []
    for line in text.split("<br>"):
        current, shown, space = "", 0, False
        for token in _TITLE_TOKENS.findall(line):
            if token.isspace():
                space = True
                continue
            wide = _title_width(token)
            sep = " " if space and current else ""
            if current and wide and shown + len(sep) + wide > max(width, 6) and token[0] not in _NO_LINE_START:
                lines.append(current)
                current, shown = token, wide
            else:
                current, shown = current + sep + token, shown + len(sep) + wide
            space = False
        lines.append(current)
    return "<br>".join(lines)


def _title_width(token: str) -> int:
    """How many Latin letters' width a piece of a title takes (its tags none, a Chinese character two)."""
    return sum(2 if re.match(f"[{_WIDE}]", c) else 1 for c in _visible(token))


def _visible(text: str) -> str:
    return re.sub(r"<[^>]+>", "", text)
