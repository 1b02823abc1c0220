"""Showing a chart: one call for every chart of every page, so each gets the same export options
and presenter-mode sizes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import plotly.graph_objects as go
import streamlit as st

from figures.export import figure_to_csv, figure_to_json
from ui.presenter import chart_format, is_presenting

PRESENTER_FONT = 18
PRESENTER_CELL_FONT = 22


@dataclass(frozen=True)
class Download:
    """One file a chart's Export menu offers instead of the figure's own numbers (e.g. the exact weights
    behind a downsampled image). `data` is called only when the menu is open and the button drawn."""

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
    **kwargs,
):
    """Draw `fig` in `container` (st, a column, a placeholder...) with the toolbar's image export in the
    chosen format, larger text in presenter mode, and (with `export`) the numbers behind it as CSV/JSON,
    or, with `downloads`, those files instead (`downloads_note` says what they hold).

    `share`: the fraction of the page's width the chart gets (1/2 in one of two columns...): the numbers in a
    heatmap's cells are then sized to fit its cells, or left to the hover when they cannot fit.
    """
    fig = fig if isinstance(fig, go.Figure) else go.Figure(fig, _validate=False)
    if is_presenting():
        fig.update_layout(font=dict(size=PRESENTER_FONT))
        fig.update_xaxes(tickfont=dict(size=PRESENTER_FONT), title_font=dict(size=PRESENTER_FONT))
        fig.update_yaxes(tickfont=dict(size=PRESENTER_FONT), title_font=dict(size=PRESENTER_FONT))
    if share is not None:
        for trace in fig.data:
            if trace.type == "heatmap" and trace.texttemplate and trace.z is not None:
                font = cell_font(_n_columns(trace.z), share)
                if font is None:
                    trace.texttemplate = None  # too small to hold a number: the hover still shows it
                else:
                    trace.textfont = dict(size=font)
    merged = {
        "displaylogo": False,
        "toImageButtonOptions": {"format": chart_format(), "filename": key, "scale": 2},
        **(config or {}),
    }
    if merged.get("displayModeBar") is False:
        merged["displayModeBar"] = "hover"  # the export button must stay reachable
    result = container.plotly_chart(fig, width=width, key=key, config=merged, **kwargs)
    if export:
        _export_menu(container, fig, key, downloads, downloads_note)
    return result


def _n_columns(z) -> int:
    """How many columns a heatmap's z has: rows as lists or an array, or plotly's typed array ({"bdata",
    "shape": "rows, columns"}) that a figure turned into JSON holds (a cached figure, for one)."""
    if isinstance(z, dict):
        return int(str(z.get("shape", "0")).split(",")[-1])
    return len(z[0])


def square_chart(container, fig: go.Figure | dict, *, key: str, **kwargs):
    """`chart` in a square box as wide as `container` (CSS in ui/presenter.py): with a figure built with
    square=True, its cells are square and as large as the column allows, at any window size."""
    export = kwargs.pop("export", True)
    with container.container(key=f"square_{key}"):
        result = chart(st, fig, key=key, height="stretch", export=False, **kwargs)
    if export:  # outside the square box, which would otherwise squeeze it onto the chart
        _export_menu(container, fig if isinstance(fig, go.Figure) else go.Figure(fig, _validate=False), key)
    return result


MAIN_WIDTH_PX = 900  # the main column on a 1400 px laptop screen with the sidebar open
PRESENTER_MAIN_WIDTH_PX = 1100  # on a 1280 px projector, sidebar closed (and bigger at 1920)


def cell_font(n_cols: int, share: float = 1.0) -> int | None:
    """The font size for the numbers in the cells of a heatmap `n_cols` wide that gets `share` of the page's
    width, or None when "0.00" would not fit in a cell (the hover still shows it)."""
    box = (PRESENTER_MAIN_WIDTH_PX if is_presenting() else MAIN_WIDTH_PX) * share
    cell = (box - 90) / max(n_cols, 1)  # about 90 px go to the labels and the colour bar
    font = min(PRESENTER_CELL_FONT if is_presenting() else 16, 0.3 * cell)
    return None if font < 10 else round(font)


def _export_menu(
    container, fig: go.Figure, key: str, downloads: Sequence[Download] | None = None, note: str = ""
) -> None:
    # Its buttons are drawn only while it is open (opening it reruns the page): 2 download buttons per
    # chart on every run cost the server more than the chart itself when a class shares it.
    menu = container.popover(
        "Export", icon=":material/download:", type="tertiary", key=f"{key}_export", on_change="rerun"
    )
    if not menu.open:
        return
    with menu:
        st.caption(
            f"Image: the camera button in the chart's toolbar saves a {chart_format().upper()} "
            "(format in the sidebar). " + (note or "The numbers behind the chart:")
        )
        if downloads:
            for i, item in enumerate(downloads):
                st.download_button(
                    item.label,
                    item.data,
                    file_name=item.file_name,
                    mime=item.mime,
                    key=f"{key}_download_{i}",
                    on_click="ignore",
                )
            return
        st.download_button(
            "CSV",
            lambda: figure_to_csv(fig),
            file_name=f"{key}.csv",
            mime="text/csv",
            key=f"{key}_csv",
            on_click="ignore",
        )
        st.download_button(
            "JSON",
            lambda: figure_to_json(fig),
            file_name=f"{key}.json",
            mime="application/json",
            key=f"{key}_json",
            on_click="ignore",
        )


SNIPPET_KEY = "snippet"  # the expander's key: a test opens it with session_state[SNIPPET_KEY] = True


def show_snippet(code: str, *, label: str = "Reproduce this in Python", key: str = SNIPPET_KEY) -> None:
    """An expander with a short script that reproduces the page's current example (copy button included).

    Its content is drawn only while it is open (opening it reruns the page): the code block costs every
    rerun an element and the browser a 1.6 MB syntax highlighter that most visits never need.
    """
    box = st.expander(label, icon=":material/code:", key=key, on_change="rerun")
    if box.open:
        with box:
            st.caption("Paste into Python in this project's folder; it prints the numbers shown above.")
            st.code(code, language="python")
