"""Helpers for AppTest-based page tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from ui.number_box import box_key

TIMEOUT = 90
APP = Path(__file__).resolve().parents[1] / "app.py"


def run_page(page: str | None = None, query: dict[str, str] | None = None, state: dict | None = None) -> AppTest:
    """Run app.py (optionally with a URL query and session state), switch to `page`, return the AppTest."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    for k, v in (state or {}).items():
        at.session_state[k] = v
    at.run()
    if page:
        at.switch_page(page)
        at.run()
    return at


def plotly_figures(at: AppTest) -> list[dict]:
    """Every plotly chart on the page as its figure JSON, as laid out: without the narrow screen's twin of a
    figure that ui.charts draws twice (key ending "_narrow"), which the page shows instead on a narrow screen."""
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart") if not c.proto.id.endswith("_narrow")]


def plotly_values(a) -> np.ndarray:
    """A plotly JSON array as numpy: plain, or plotly's typed-array encoding ({"dtype", "bdata", "shape"})."""
    if isinstance(a, dict):
        import base64

        raw = np.frombuffer(base64.b64decode(a["bdata"]), dtype=np.dtype(a["dtype"]))
        shape = a.get("shape")
        if isinstance(shape, str):
            shape = [int(x) for x in shape.split(",")]
        return raw.reshape(shape) if shape else raw
    return np.array(a, dtype=float)


def heatmap_z(fig: dict) -> np.ndarray:
    """The z matrix of the first heatmap trace of a figure."""
    trace = next(t for t in fig["data"] if t.get("type") == "heatmap")
    return plotly_values(trace["z"])


def open_page(page: str, query: dict[str, str] | None = None, state: dict | None = None) -> AppTest:
    """Run app.py straight on `page` (like opening its URL), so the URL holds only that page's query."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.switch_page(page)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    for k, v in (state or {}).items():
        at.session_state[k] = v
    return at.run()


def chart_by_key(at: AppTest, key: str) -> dict:
    """The figure JSON of the plotly chart drawn with `key=`."""
    for chart in at.get("plotly_chart"):
        if chart.proto.id.endswith(f"-{key}"):
            return json.loads(chart.proto.spec)
    raise KeyError(f"no plotly chart with key {key!r}")


def table_with_column(at: AppTest, column: str):
    """The first table on the page with this column, a st.dataframe or a st.table (neither has a key to
    find it by)."""
    return next(df.value for df in [*at.dataframe, *at.table] if column in df.value.columns)


def reconnect(at: AppTest, page: str | None = None) -> AppTest:
    """The browser of `at` reconnecting to another server (a worker behind deploy/'s proxy): a new session,
    with nothing in session state, opens the same link on `page`, and its first run carries the values the
    browser's widgets hold (what ui/streamlit_internals/browser.py's reconnect script sends with R).
    AppTest has no public way to send widget values to a fresh session: this uses its `_run(widget_state=)`
    and its element tree's `get_widget_states()`, the pair its own `run()` uses."""
    fresh = AppTest.from_file(at._script_path, default_timeout=TIMEOUT)
    if page:
        fresh.switch_page(page)
    for k, v in at.query_params.items():
        fresh.query_params[k] = v
    return fresh._run(widget_state=at._tree.get_widget_states())


def number_box(at: AppTest, key: str):
    """The text box of the number box whose value lives under `key` (ui/number_box.py)."""
    return at.text_input(key=box_key(key))


def type_number(at: AppTest, key: str, text: str) -> AppTest:
    """Type `text` into the number box of `key` and press Enter (the page runs again)."""
    return number_box(at, key).input(text).run()


def every_text(at: AppTest) -> str:
    """Every text element's text on the page (markdown, captions, alerts, metrics), one per line."""
    parts = [
        e.value
        for kind in ("markdown", "caption", "text", "info", "warning", "error", "success")
        for e in at.get(kind)
        if isinstance(getattr(e, "value", None), str)
    ]
    parts += [str(m.value) for m in at.metric]
    return "\n".join(parts)
