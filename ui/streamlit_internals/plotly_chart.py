"""A chart's JSON handed to st.plotly_chart as it is (entries "chart-spec-as-figure" and "plotly-typed-arrays" of
ui/streamlit_internals).

ui/charts.py builds each chart's {"data", "layout"} dict from the figure builders' own dicts (figures.base's
LazyFigure), never making a go.Figure, and encodes their numpy arrays with plotly's own private helpers
(`_plotly_utils.utils`), as `Figure.to_dict()` would. st.plotly_chart validates a dict by building a go.Figure
from it and deep-copying it back with `to_dict()`; a go.Figure it only asks for `to_dict()`. `PreparedFigure`
is a go.Figure without plotly's state whose `to_dict()` is the prepared dict.
"""

from __future__ import annotations

import plotly.graph_objects as go
from _plotly_utils.utils import is_homogeneous_array, is_skipped_key, plotlyjsShortTypes, to_typed_array_spec

__all__ = ["PreparedFigure", "is_homogeneous_array", "is_skipped_key", "plotlyjsShortTypes", "to_typed_array_spec"]


class PreparedFigure(go.Figure):
    """A figure's JSON-ready dict that st.plotly_chart sends as it is."""

    def __init__(self, spec: dict):  # not Figure.__init__: nothing but to_dict() is asked of it
        self._spec = spec

    def to_dict(self) -> dict:
        return self._spec
