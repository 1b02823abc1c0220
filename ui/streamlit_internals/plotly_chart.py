"""A chart's JSON handed to st.plotly_chart as it is (entries "chart-spec-as-figure" and "plotly-typed-arrays" of
ui/streamlit_internals).

ui/charts.py builds each chart's {"data", "layout"} dict from the figure builders' own dicts (figures.base's
LazyFigure), never making a go.Figure, and encodes their numpy arrays with plotly's own private helpers
(`_plotly_utils.utils`), as `Figure.to_dict()` would. st.plotly_chart validates a dict by building a go.Figure
from it and deep-copying it back with `to_dict()`; a go.Figure it only asks for `to_dict()`. `PreparedFigure`
is a go.Figure without plotly's state whose `to_dict()` is the prepared dict.
"""

from __future__ import annotations

import functools

import plotly.graph_objects as go
from _plotly_utils.utils import is_homogeneous_array, is_skipped_key, plotlyjsShortTypes, to_typed_array_spec

from ui.streamlit_internals import changed_sources, warn_once

__all__ = ["chart_figure", "is_homogeneous_array", "is_skipped_key", "plotlyjsShortTypes", "to_typed_array_spec"]


def chart_figure(spec: dict) -> go.Figure:
    """What ui/charts.py hands st.plotly_chart for the prepared JSON `spec`: a PreparedFigure, or, if the code it
    relies on is not the pinned one's (said once, by name), a go.Figure plotly builds and validates from it."""
    return PreparedFigure(spec) if _prepared_figures_hold() else go.Figure(spec)


@functools.cache
def _prepared_figures_hold() -> bool:
    changed = changed_sources("chart-spec-as-figure")
    if changed:
        warn_once("chart-spec-as-figure", f"not used: {', '.join(changed)} is not the pinned one")
    return not changed


class PreparedFigure(go.Figure):
    """A figure's JSON-ready dict that st.plotly_chart sends as it is."""

    def __init__(self, spec: dict):  # not Figure.__init__: nothing but to_dict() is asked of it
        self._spec = spec

    def to_dict(self) -> dict:
        return self._spec
