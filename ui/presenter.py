"""Presenter mode and sharing: the controls app.py draws in the sidebar for every page."""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from ui.page_state import SHARED
from ui.url import decode_flag

PRESENTER_KEY = SHARED.key("presenter")
FORMAT_KEY = "chart_format"
CHART_FORMATS = ("png", "svg")

# Larger text everywhere, readable from the back of a room; Streamlit sizes most text in rem.
PRESENTER_CSS = """
<style>
html { font-size: 21px; }
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li { font-size: 1.1rem; }
[data-testid="stCaptionContainer"] { font-size: 0.95rem; }
</style>
"""


def presenter_from_url() -> bool:
    """Presenter mode as asked by the URL (?present=1), read before the page config is set."""
    return decode_flag(st.query_params.to_dict(), "present", False, [])


def presenter_controls() -> bool:
    """Sidebar toggle for presenter mode (also ?present=1) and the chart download format."""
    SHARED.load()
    on = st.sidebar.toggle(
        "Presenter mode",
        key=PRESENTER_KEY,
        persist_state="session",
        help="Larger text and heatmap numbers for a projector; the link carries ?present=1.",
    )
    st.sidebar.radio(
        "Chart downloads",
        CHART_FORMATS,
        key=FORMAT_KEY,
        horizontal=True,
        persist_state="session",
        format_func=str.upper,
        help="Format of the camera button in each chart's toolbar (top right of a chart).",
    )
    if on:
        st.html(PRESENTER_CSS)
    SHARED.show_warnings(st.sidebar)
    return on


def is_presenting() -> bool:
    return bool(st.session_state.get(PRESENTER_KEY, False))


def chart_format() -> str:
    return st.session_state.get(FORMAT_KEY, "png")


def page_link(app_url: str, url_path: str, params: dict[str, str]) -> str:
    """The full link of a page with its state: `app_url` as the browser reports it (with or without
    the page's own path at the end), the page's url_path ("" for the default page) and its query."""
    base = app_url.split("?")[0].rstrip("/")
    if url_path and base.endswith("/" + url_path):
        base = base[: -len(url_path) - 1]
    link = f"{base}/{url_path}" if url_path else (base + "/" if base else "/")
    query = urlencode(params)
    return f"{link}?{query}" if query else link


def share_link(slot, url_path: str) -> None:
    """Fill `slot` (a sidebar placeholder) with this view's full link, which st.code lets one copy."""
    link = page_link(st.context.url or "", url_path, st.query_params.to_dict())
    with slot.container():
        st.markdown(
            "**Share this view**",
            help="Everything on this page is in its link: students who open it "
            "see the same example. Copy it with the icon at the right.",
        )
        st.code(link, language=None, wrap_lines=True)
