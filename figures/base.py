"""Building plotly Figures quickly.

Plotly validates every property as a Figure is built, which costs 10-30 ms for a small annotated
heatmap: more than the rest of a Playground rerun. Our builders produce plain dicts of known-good
properties and wrap them without validation; tests validate every builder's output once
(`validated(fig)`), so a typo still fails loudly, in the tests rather than in front of a class.
"""

from __future__ import annotations

import threading
from functools import lru_cache

import plotly.graph_objects as go
import plotly.io as pio
from plotly.colors import get_colorscale


def figure(data: list[dict], layout: dict) -> go.Figure:
    """A Figure from trace dicts (each with its "type") and a layout dict, without validation.

    Its template is named (the default one, Streamlit's in the app), not copied in: copying plotly's
    template into every figure cost two thirds of building a small one. ui.charts sends the named
    template's contents with the chart, as plotly would have.

    It is a `LazyFigure`: plotly builds its objects only when something asks for them.
    """
    return LazyFigure({"data": data, "layout": {"template": pio.templates.default, **layout}})


class LazyFigure(go.Figure):
    """A go.Figure whose plotly objects are built on first use, not when it is made.

    go.Figure(...) builds an object for every trace and for the layout and deep-copies
    them all: on the induction page, whose filmstrip has a subplot per snapshot, that was a fifth of the
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


@lru_cache(maxsize=None)
def colorscale(name: str) -> tuple[tuple[float, str], ...]:
    """A named plotly colorscale as explicit (position, colour) stops.

    Needed because unvalidated figures send the name as it is, and plotly.js's own "Blues" and
    "RdBu" run in the opposite direction to plotly.py's.
    """
    return tuple((float(p), c) for p, c in get_colorscale(name))


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
