"""Showing a chart: one call for every chart of every page, so each gets the same export options
and presenter-mode sizes."""

from __future__ import annotations

import base64
import copy
import functools
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

from figures.base import (
    NARROWEST_PX,
    LazyFigure,
    narrow_layout,
    numbers_that_fit,
    readable_width,
    side_px,
    trace_places,
)
from figures.export import figure_to_csv, figure_to_json, heatmap_tables
from figures.steps import steps_heatmap
from locales import language, marked, tr
from ui.shared_state import chart_format, is_presenting
from ui.streamlit_internals.imports import pandas
from ui.streamlit_internals.plotly_chart import (
    chart_figure,
    is_homogeneous_array,
    is_skipped_key,
    plotlyjsShortTypes,
    to_typed_array_spec,
)

PRESENTER_FONT = 18
PRESENTER_CELL_FONT = 22


@dataclass(frozen=True)
class Download:
    """One file a chart offers (in its numbers box or Export menu) instead of the figure's own numbers (e.g. the exact
    weights behind a downsampled image). `data` is called only when the box or menu is open and the button drawn."""

    label: str
    data: Callable[[], bytes | str]
    file_name: str
    mime: str


def chart(
    container,
    fig: go.Figure | dict,
    *,
    key: str,
    width="stretch",
    config: dict | None = None,
    export: bool = True,
    share: float | None = None,
    downloads: Sequence[Download] | None = None,
    downloads_note: str = "",
    square: bool = False,
    **kwargs,
):
    """Draw `fig` in `container` (st, a column, a placeholder...) with the toolbar's image export in the
    chosen format, larger text in presenter mode, and (with `export`) the numbers behind it as CSV/JSON,
    or, with `downloads`, those files instead (`downloads_note` says what they hold): under a chart with
    heatmaps in its numbers box, beside their tables; under any other chart in an Export menu.

    `share`: the fraction of the page's width the chart gets (1/2 in one of two columns...): the numbers in a
    heatmap's cells are then sized to fit its cells, or left to the hover when they cannot fit.
    `square`: in a square box as wide as `container` (see `square_chart`).

    A figure whose layout is not readable in a phone's narrow column is drawn twice, as laid out and reflowed
    for a narrow screen, and the page shows the one that fits the chart's width (`WIDTH_CSS`).
    """
    spec = _spec(fig)
    if is_presenting():
        spec["layout"] = _presenter_layout(spec["layout"])
    if share is not None:
        spec["data"] = [_fit_cell_numbers(trace, share) for trace in spec["data"]]
    merged = {
        "displaylogo": False,
        "displayModeBar": "hover",  # shown always, the toolbar covers a heatmap's top row on a phone
        # Only the image download: the seven zoom and pan buttons would be seven Tab stops per chart for a
        # keyboard user (a drag still zooms, a double-click still resets).
        "modeBarButtonsToRemove": ["zoom2d", "pan2d", "zoomIn2d", "zoomOut2d", "autoScale2d", "resetScale2d"],
        "toImageButtonOptions": {"format": chart_format(), "filename": key, "scale": 2},
        **(config or {}),
    }
    if merged.get("displayModeBar") is False:
        merged["displayModeBar"] = "hover"  # the export button must stay reachable
    # A chart the page reads clicks from (on_select) is drawn once: the page reads its selection by its key,
    # and a click on a twin would go unseen.
    selectable = kwargs.get("on_select", "ignore") != "ignore"
    fit = None if is_presenting() or selectable else _narrow_fit(spec)
    if fit is None:
        variants = [(container, spec, key)]
    else:  # the layout as built from `breakpoint` px up, reflowed for a narrow screen below (WIDTH_CSS)
        breakpoint, layout, plot_px = fit
        if "template" in spec["layout"]:
            layout = {**layout, "template": spec["layout"]["template"]}
        narrow = {"data": numbers_that_fit(spec["data"], layout, plot_px), "layout": layout}
        with container.container(key=f"fits_{key}"):
            variants = [
                (st.container(key=f"wide{breakpoint}_{key}"), spec, key),
                (st.container(key=f"narrow{breakpoint}_{key}"), narrow, f"{key}_narrow"),
            ]
    results = []
    for box, variant, name in variants:
        if square:  # a square box as wide as the column (CSS in ui/presenter.py), the chart filling it
            box = box.container(key=f"square_{name}")
        results.append(box.plotly_chart(chart_figure(variant), width=width, key=name, config=merged, **kwargs))
    if export:  # a heatmap's numbers box holds its files too: one control under the chart, not two
        if _has_numbers(spec):
            _numbers_box(container, fig, key, downloads, downloads_note)
        else:
            _export_menu(container, fig, key, downloads, downloads_note)
    return results[0]


# Where a figure's layout stops being readable (ui.charts.width_breakpoint), the chart is drawn twice: as the
# figure lays it out, for a chart at least that wide, and reflowed for a narrow screen (figures.base.
# for_narrow_screen) for a narrower one; CSS shows the one that fits the width the chart is actually shown at.
# A container query measures the chart's own box, so the choice follows the window, the sidebar open or
# closed, and a chart's column (Streamlit's columns stack below 640 px). The server cannot know any of these:
# Streamlit tells it no window width (st.context has headers, cookies, locale, theme, timezone, url), and a
# User-Agent says phone or not, not how wide (a narrow desktop window, a phone turned sideways, a tablet).
# The classes are Streamlit's public st-key-<key> classes of keyed containers.
WIDTH_BREAKPOINTS = (400, 480, 560, 640, 720, 800, 960, 1120, 1280, 1440)
WIDTH_CSS = "\n".join(
    ['[class*="st-key-fits_"] { container-type: inline-size; }']
    + [
        f'@container (max-width: {b - 0.02}px) {{ [class*="st-key-wide{b}_"] {{ display: none; }} }}\n'
        f'@container (min-width: {b}px) {{ [class*="st-key-narrow{b}_"] {{ display: none; }} }}'
        for b in WIDTH_BREAKPOINTS
    ]
)


def width_breakpoint(spec: dict) -> int | None:
    """The chart width (px, one of WIDTH_BREAKPOINTS) under which `spec` is shown reflowed for a narrow screen
    instead of as laid out, or None when its layout is readable in the narrowest chart a page has (the main
    column of a 360 px phone, figures.base.NARROWEST_PX): then one chart serves every width.
    A layout that needs more than the widest breakpoint is shown as laid out from there (a 1920 px screen).
    The numbers in a heatmap's cells do not count: a second chart costs the server as much as the first, and
    for a single heatmap it would only write its numbers smaller (they stay on hover and in the numbers box);
    titles and tick labels that run into each other, and small multiples that need fewer columns, do count."""
    need = readable_width(spec, numbers=False)
    if need <= NARROWEST_PX:
        return None
    return next((b for b in WIDTH_BREAKPOINTS if b >= need), WIDTH_BREAKPOINTS[-1])


NARROW_FITS = 1024  # layouts remembered by _narrow_fit (a narrow layout: a few kB)
_narrow_fits: OrderedDict[str, tuple | None] = OrderedDict()  # bounded: NARROW_FITS entries, the oldest dropped
_narrow_fits_lock = threading.Lock()


def _narrow_fit(spec: dict) -> tuple[int, dict, float] | None:
    """(`width_breakpoint(spec)`, the layout reflowed for the narrowest chart, that chart's plotting width in px),
    or None when one chart serves every width.

    Worked out once per layout and trace places (`trace_places`: all it depends on), not on every run: it is
    the same for every session and every run that shows the same figure, whatever its numbers; a heatmap's
    numbers are fitted to the narrow cells by the caller (`numbers_that_fit`, cheap). The template is left out
    of the key (the caller puts its own back)."""
    layout = spec["layout"]
    key = json.dumps(
        [{k: v for k, v in layout.items() if k != "template"}, trace_places(spec["data"])],
        sort_keys=True,
        default=repr,
    )
    with _narrow_fits_lock:
        if key in _narrow_fits:
            _narrow_fits.move_to_end(key)
            return _narrow_fits[key]
    breakpoint = width_breakpoint(spec)
    if breakpoint is None:
        fit = None
    else:  # from a copy: the caller's figure may change after this run, the remembered layout must not
        own = {"data": spec["data"], "layout": copy.deepcopy({k: v for k, v in layout.items() if k != "template"})}
        plot_px = NARROWEST_PX - side_px(own)
        fit = (breakpoint, narrow_layout(own, width_px=plot_px), plot_px)
    with _narrow_fits_lock:
        _narrow_fits[key] = fit
        while len(_narrow_fits) > NARROW_FITS:
            _narrow_fits.popitem(last=False)
    return fit


def _spec(fig: go.Figure | dict) -> dict:
    """{"data": [...], "layout": {...}} of `fig` as Figure.to_dict() gives it (numpy arrays as plotly's typed
    arrays), sharing what it does not change with `fig`: the caller replaces, never mutates, what it alters."""
    lazy = fig.spec if isinstance(fig, LazyFigure) else None
    if lazy is not None:  # not built by plotly yet: the builder's own dicts
        data, layout = lazy["data"], lazy["layout"]
    elif isinstance(fig, go.Figure):
        whole = fig.to_dict()  # a figure made with plotly (the builders' own are LazyFigures, above)
        data, layout = whole["data"], whole["layout"]
    else:
        data, layout = fig.get("data", []), fig.get("layout", {})
        if "template" not in layout:  # as go.Figure(fig) would: the default template (Streamlit's)
            layout = {**layout, "template": pio.templates.default}
    template = layout.get("template")
    types = frozenset(trace.get("type", "scatter") for trace in data)
    if isinstance(template, str):  # a template by name (figures.base.figure): its contents
        layout = {**layout, "template": _template(template, types)}
    elif isinstance(template, dict) and isinstance(template.get("data"), dict):
        layout = {**layout, "template": _only_types(template, types)}
    return {"data": [_typed_arrays(trace) for trace in data], "layout": _typed_arrays(layout)}


@lru_cache(maxsize=64)
def _template(name: str, types: frozenset[str]) -> dict:
    return _only_types(pio.templates[name].to_plotly_json(), types)


def _only_types(template: dict, types: frozenset[str]) -> dict:
    """`template` with trace defaults (template.data) only for the trace types the figure has.

    plotly applies template.data[t] to traces of type t and nothing else, so the chart looks the same; but
    Streamlit's template carries defaults for ten trace types (2.2 of its 3.7 kB), which every chart sent,
    and the server encoded and hashed twice, on every run."""
    data = template.get("data")
    if not isinstance(data, dict) or set(data) <= types:
        return template
    return {**template, "data": {t: v for t, v in data.items() if t in types}}


_PLAIN = (str, int, float, list, tuple, type(None))  # what most values are: nothing to convert, nothing to visit


def _typed_arrays(d: dict) -> dict:
    """`d` with its numpy arrays (at any depth of nested dicts) as plotly's base64 typed arrays, as
    to_dict() sends them; a dict with none is returned itself, one with some is copied where it changes.

    Arrays plotly keeps as arrays of Python objects (hover text, booleans) become nested lists. Left as arrays,
    they make plotly's JSON encoder (orjson) refuse the figure, and plotly then walks the whole figure again
    to clean it: wasted work on every chart; and orjson releases older than 3.9.6 keep a reference to each
    refused array, so every heatmap's hover text would stay in the server's memory (about 0.8 MiB per session)."""
    out = None
    for k, v in d.items():
        if isinstance(v, _PLAIN) or k == "template" or is_skipped_key(k):
            continue
        if type(v) is np.ndarray:
            new = _typed_array(v)
        elif is_homogeneous_array(v):  # a pandas Series, a list-like with __array__: plotly's own way
            new = to_typed_array_spec(v)
            if isinstance(new, np.ndarray) and new.dtype.kind not in "iuf":
                new = new.tolist()  # text, booleans (object arrays): see _typed_arrays' docstring
        elif isinstance(v, dict):
            new = _typed_arrays(v)
        else:
            continue
        if new is not v:
            out = dict(d) if out is None else out
            out[k] = new
    return d if out is None else out


_INT_RANGES = [(np.int8, -(2**7), 2**7 - 1), (np.int16, -(2**15), 2**15 - 1), (np.int32, -(2**31), 2**31 - 1)]
_UINT_RANGES = [(np.uint8, 0, 2**8 - 1), (np.uint16, 0, 2**16 - 1), (np.uint32, 0, 2**32 - 1)]


def _typed_array(v: np.ndarray):
    """What plotly's to_typed_array_spec(v) gives for a numpy array (then, as in `_typed_arrays`, a list for
    text and booleans), without its way through narwhals' checks for dataframes and series: 0.2 ms of a
    heatmap's 0.9 ms on the server, for the two or three arrays every chart has."""
    if v.dtype.kind not in "iuf":
        return v.tolist()  # text, booleans, objects: see _typed_arrays' docstring
    if v.size == 0:
        return v
    if v.dtype == np.int64 or v.dtype == np.uint64:  # as plotly.js has no 64-bit integers: the smallest that fits
        low, high = v.min(), v.max()
        for dtype, lo, hi in _INT_RANGES if v.dtype == np.int64 else _UINT_RANGES:
            if lo <= low and high <= hi:
                v = v.astype(dtype)
                break
        else:
            return v
    code = plotlyjsShortTypes.get(str(v.dtype))
    if code is None:  # float16, say: plotly leaves it an array
        return v
    spec = {"dtype": code, "bdata": base64.b64encode(np.ascontiguousarray(v)).decode("ascii")}
    if v.ndim > 1:
        spec["shape"] = str(v.shape)[1:-1]
    return spec


def _presenter_layout(layout: dict) -> dict:
    """`layout` with the presenter's larger text: the figure's font, and every x/y axis's ticks and title."""
    layout = {**layout, "font": {**layout.get("font", {}), "size": PRESENTER_FONT}}
    axes = {k for k in layout if re.fullmatch(r"[xy]axis\d*", k)} | {"xaxis", "yaxis"}
    for name in sorted(axes):
        axis = dict(layout.get(name) or {})
        title = axis.get("title")
        title = {"text": title} if isinstance(title, str) else dict(title or {})
        axis["tickfont"] = {**axis.get("tickfont", {}), "size": PRESENTER_FONT}
        axis["title"] = {**title, "font": {**title.get("font", {}), "size": PRESENTER_FONT}}
        layout[name] = axis
    return layout


def _fit_cell_numbers(trace: dict, share: float) -> dict:
    """A heatmap trace whose cell numbers are sized to its cells (`cell_font`), or left to the hover when
    too small to fit; any other trace as it is."""
    if trace.get("type") != "heatmap" or not trace.get("texttemplate") or trace.get("z") is None:
        return trace
    font = cell_font(_n_columns(trace["z"]), share)
    trace = dict(trace)
    if font is None:
        del trace["texttemplate"]  # too small to hold a number: the hover still shows it
    else:
        trace["textfont"] = {"size": font}
    return trace


def _n_columns(z) -> int:
    """How many columns a heatmap's z has: rows as lists or an array, or plotly's typed array ({"bdata",
    "shape": "rows, columns"}) that a figure turned into JSON holds (a cached figure, for one)."""
    if isinstance(z, dict):
        return int(str(z.get("shape", "0")).split(",")[-1])
    return len(z[0])


def square_chart(container, fig: go.Figure | dict, *, key: str, **kwargs):
    """`chart` in a square box as wide as `container` (CSS in ui/presenter.py): with a figure built with
    square=True, its cells are square and as large as the column allows, at any window size. The numbers box
    (or Export menu) goes under the square box, which would otherwise squeeze it onto the chart."""
    return chart(container, fig, key=key, height="stretch", square=True, **kwargs)


# ---------------------------------------------------------------- figures built once per inputs


FIGURE_CACHE_ENTRIES = 256  # figure JSONs of every page together (a heatmap: a few kB to a few hundred)


def cached_figure(build: Callable[..., go.Figure], *args, **kwargs) -> dict:
    """`build(*args, **kwargs)` as figure JSON (`without_template`), built once per inputs and shared by every
    session: on a page of many figures a rerun changes one or two, and rebuilding the others cost the position
    page a fifth of its rerun. `build` must be a module-level function (its module and name are the cache's
    key for it); its arguments must be hashable by st.cache_data (arrays, dataclasses of arrays, strings...).
    The session's language is part of the key: a builder's titles and labels are in that language."""
    where = f"{build.__module__}.{build.__qualname__}"
    if "<" in where:  # a lambda or a local function: its name does not tell it from another
        raise ValueError(f"cached_figure needs a module-level builder, not {where}")
    return _figure_json(build, where, language(), *args, **kwargs)


@st.cache_data(max_entries=FIGURE_CACHE_ENTRIES, show_spinner=False)
def _figure_json(_build, where: str, lang: str, /, *args, **kwargs) -> dict:
    # `_build` is not hashed (a leading underscore): `where` names it; `lang`: the words the builder writes (tr)
    return without_template(_build(*args, **kwargs).to_plotly_json())


def without_template(fig: dict) -> dict:
    """`fig` (figure JSON) with an empty template instead of plotly's default: Streamlit's theme styles the
    chart, and a figure without a template of its own gets plotly's (thousands of values) copied twice on its
    way to the browser: measured, 2.5 ms of the 3.3 ms a heatmap's chart() takes with it."""
    fig["layout"]["template"] = {}
    return fig


def cached_weights_figure(steps, labels: Sequence[str], share: float, font_size: int = 10) -> dict:
    """The weights heatmap of `steps` (figures.steps.steps_heatmap) with square cells in `share` of the page's
    width, its numbers in the cells while they fit (`square_cells`), built once per inputs (`cached_figure`)."""
    return cached_figure(steps_heatmap, steps, labels, **square_cells(len(labels), share, font_size=font_size))


MAIN_WIDTH_PX = 900  # the main column on a 1400 px laptop screen with the sidebar open
PRESENTER_MAIN_WIDTH_PX = 1100  # on a 1280 px projector, sidebar closed (and bigger at 1920)


def cell_font(n_cols: int, share: float = 1.0) -> int | None:
    """The font size for the numbers in the cells of a heatmap `n_cols` wide that gets `share` of the page's
    width, or None when "0.00" would not fit in a cell (the hover still shows it)."""
    box = (PRESENTER_MAIN_WIDTH_PX if is_presenting() else MAIN_WIDTH_PX) * share
    cell = (box - 90) / max(n_cols, 1)  # about 90 px go to the labels and the colour bar
    font = min(PRESENTER_CELL_FONT if is_presenting() else 16, 0.3 * cell)
    return None if font < 10 else round(font)


def square_cells(n_cols: int, share: float = 1.0, font_size: int = 12) -> dict:
    """The style of a weights heatmap `n_cols` wide in `share` of the page's width (figures.steps.steps_heatmap's
    keywords): square cells, with their numbers while they fit (`cell_font`), else `font_size` for the labels."""
    font = cell_font(n_cols, share)
    return {"annotate": font is not None, "font_size": font or font_size, "square": True}


def _export_menu(
    container, fig: go.Figure | dict, key: str, downloads: Sequence[Download] | None = None, note: str = ""
) -> None:
    """The Export menu of a chart without heatmaps: its numbers as CSV and JSON (or `downloads`)."""
    # Its buttons are drawn only while it is open (opening it reruns the page): drawn on every run, 2 download
    # buttons per chart cost the server more than the chart itself when a class shares it.
    menu = container.popover(
        # Translators: a menu's label under a chart: its files to download
        tr("Export"),
        icon=":material/download:",
        type="tertiary",
        key=f"{key}_export",
        on_change="rerun",
    )
    if menu.open:
        with menu:
            _export_buttons(fig, key, downloads, note or tr("The numbers behind the chart:"))


def _export_buttons(fig: go.Figure | dict, key: str, downloads: Sequence[Download] | None, note: str) -> None:
    """What the image export is, then the chart's files: `downloads`, or its numbers as CSV and JSON."""
    image = tr(
        "Image: the camera button in the chart's toolbar saves a {format} (format in the sidebar).",
        format=chart_format().upper(),
    )
    st.caption(f"{image} {note}")
    row = st.container(horizontal=True)  # the files side by side
    if downloads:
        for i, item in enumerate(downloads):
            row.download_button(
                item.label,
                item.data,
                file_name=item.file_name,
                mime=item.mime,
                key=f"{key}_download_{i}",
                on_click="ignore",
            )
        return
    for kind, text, mime in (("CSV", figure_to_csv, "text/csv"), ("JSON", figure_to_json, "application/json")):
        row.download_button(
            kind,
            functools.partial(text, fig),  # written only when asked for
            file_name=f"{key}.{kind.lower()}",
            mime=mime,
            key=f"{key}_{kind.lower()}",
            on_click="ignore",
        )


TABLE_CELLS = 400
NUMBERS_LABEL = marked("Numbers of this chart: a table and files")


def _has_numbers(spec: dict) -> bool:
    return any(trace.get("type") == "heatmap" and trace.get("z") is not None for trace in spec["data"])


def _numbers_box(
    container, fig: go.Figure | dict, key: str, downloads: Sequence[Download] | None = None, note: str = ""
) -> None:
    """The text alternative of a chart with heatmaps, and its export: a short description and the exact numbers
    as a table that a keyboard or a screen reader reaches (a chart is a picture to them, its numbers on hover
    only), with the chart's files (`_export_buttons`). Drawn only while open (opening it reruns the page)."""
    box = container.expander(tr(NUMBERS_LABEL), icon=":material/table:", key=f"{key}_numbers", on_change="rerun")
    if not box.open:
        return
    pd = pandas()  # a first run draws its charts with this box closed

    with box:
        tables = heatmap_tables(fig)
        _export_buttons(fig, key, downloads, note or tr("Its numbers as files:"))
        if not tables:
            st.caption(tr("Its heatmaps are empty: there are no numbers to list."))
        for table in tables:
            st.caption(table["description"])
            frame = pd.DataFrame(table["values"], index=table["rows"], columns=table["columns"])
            if frame.size <= TABLE_CELLS:  # an HTML table, which a screen reader reads best
                st.table(frame)
            else:  # a scrolling grid: thousands of cells as HTML would stall the page
                st.dataframe(frame)


SNIPPET_KEY = "snippet"  # the expander's key: a test opens it with session_state[SNIPPET_KEY] = True


def show_snippet(code: str, *, label: str | None = None, key: str = SNIPPET_KEY) -> None:
    """An expander with a short script that reproduces the page's current example (copy button included), labelled
    `label` (translated by the caller; "Reproduce this in Python" if None).

    Its content is drawn only while it is open (opening it reruns the page): the code block costs every
    rerun an element and the browser a 1.6 MB syntax highlighter that most visits never need.
    """
    label = tr("Reproduce this in Python") if label is None else label
    box = st.expander(label, icon=":material/code:", key=key, on_change="rerun")
    if box.open:
        with box:
            st.caption(tr("Paste into Python in this project's folder; it prints the numbers shown above."))
            st.code(code, language="python")
