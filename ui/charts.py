"""Showing a chart: one call for every chart of every page, so each gets the same export options
and presenter-mode sizes."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from figures.export import figure_to_csv, figure_to_json
from ui.presenter import chart_format, is_presenting

PRESENTER_FONT = 18
PRESENTER_CELL_FONT = 22


def chart(
    container,
    fig: go.Figure | dict,
    *,
    key: str,
    width="stretch",
    config: dict | None = None,
    export: bool = True,
    **kwargs,
):
    """Draw `fig` in `container` (st, a column, a placeholder...) with the toolbar's image export in the
    chosen format, larger text in presenter mode, and (with `export`) the numbers behind it as CSV/JSON."""
    fig = fig if isinstance(fig, go.Figure) else go.Figure(fig, _validate=False)
    if is_presenting():
        fig.update_layout(font=dict(size=PRESENTER_FONT))
        fig.update_xaxes(tickfont=dict(size=PRESENTER_FONT), title_font=dict(size=PRESENTER_FONT))
        fig.update_yaxes(tickfont=dict(size=PRESENTER_FONT), title_font=dict(size=PRESENTER_FONT))
        fig.update_traces(textfont=dict(size=PRESENTER_CELL_FONT), selector=dict(type="heatmap"))
    merged = {
        "displaylogo": False,
        "toImageButtonOptions": {"format": chart_format(), "filename": key, "scale": 2},
        **(config or {}),
    }
    if merged.get("displayModeBar") is False:
        merged["displayModeBar"] = "hover"  # the export button must stay reachable
    result = container.plotly_chart(fig, width=width, key=key, config=merged, **kwargs)
    if export:
        _export_menu(container, fig, key)
    return result


def _export_menu(container, fig: go.Figure, key: str) -> None:
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
            "(format in the sidebar). The numbers behind the chart:"
        )
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


def show_snippet(code: str, *, label: str = "Reproduce this in Python") -> None:
    """An expander with a short script that reproduces the page's current example (copy button included)."""
    with st.expander(label, icon=":material/code:"):
        st.caption("Paste into Python in this project's folder; it prints the numbers shown above.")
        st.code(code, language="python")
