"""Presenter mode and sharing: the controls app.py draws in the sidebar for every page."""

from __future__ import annotations

import html
from urllib.parse import urlencode, urlsplit

import streamlit as st

from locales import LANGUAGE_KEY, LANGUAGES, tr
from ui.charts import WIDTH_CSS
from ui.shared_state import FORMAT_KEY, PRESENTER_KEY, SHARED
from ui.streamlit_internals.browser import HISTORY_JS
from ui.url import decode_flag

CHART_FORMATS = ("png", "svg")

# Every page: a chart drawn twice by ui.charts.chart shows the one that fits its width (WIDTH_CSS);
# a chart drawn by ui.charts.square_chart gets a square box as wide as its column; a display
# formula wider than its column (on a phone) scrolls sideways instead of being cut at the edge.
# On a touch screen plotly shows its toolbar (displayModeBar="hover") all the time, over the top row of a
# heatmap: there it appears once the chart is tapped (a tap gives :hover), as it does on hover elsewhere.
# Plotly's own class names (modebar-group, as in plotly.js's own rule for "hover"); without them the toolbar
# is simply always shown again.
BASE_CSS = (
    """
<style>
[class*="st-key-square_"] { aspect-ratio: 1 / 1; width: 100%; }
.katex-display { overflow-x: auto; overflow-y: hidden; max-width: 100%; padding: 0.2em 0; }
@media (hover: none) {
  [data-testid="stButton"] kbd { display: none; }  /* "PageDown" beside Next step: a phone has no such key */
  .js-plotly-plot .plotly .modebar-group { opacity: 0; transition: opacity .3s; }
  .js-plotly-plot .plotly:hover .modebar-group, .js-plotly-plot .plotly:focus-within .modebar-group { opacity: 1; }
}
"""
    + WIDTH_CSS
    + """
</style>
"""
)
# Larger text everywhere, readable from the back of a room; Streamlit sizes most text in rem. A square chart
# is no taller than the window, so its key labels and colour bar stay on the first screen.
PRESENTER_CSS = """
<style>
html { font-size: 21px; }
[data-testid="stMainBlockContainer"] { padding-top: 3rem; }
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li { font-size: 1.1rem; }
[data-testid="stCaptionContainer"] { font-size: 0.95rem; }
[class*="st-key-square_"] { width: min(100%, calc(100vh - 5rem)); }
/* the sidebar's page names whole, on two lines if need be: at this size Streamlit cut ten of them short */
[data-testid="stSidebarNav"] .stMarkdownEllipsis, [data-testid="stSidebarNav"] .stMarkdownEllipsis p,
[data-testid="stNavSectionHeader"] { white-space: normal; overflow: visible; text-overflow: clip; line-height: 1.25; }
[data-testid="stSidebarNavLink"] { height: auto; min-height: 2rem; padding-top: .3rem; padding-bottom: .3rem; }
/* the page's frame once a key scrolled it (a clicker's Page Down): a grey box around everything on the projector */
[data-testid="stMain"]:focus-visible::before { box-shadow: none; }
</style>
"""


def presenter_from_url() -> bool:
    """Presenter mode as asked by the URL (?present=1), read before the page config is set."""
    return decode_flag(st.query_params.to_dict(), "present", False, [])


def presenter_controls() -> bool:
    """Sidebar controls of every page: the language, presenter mode (also ?present=1) and the chart download
    format. The shared state (SHARED) is read from the link before the navigation is drawn (app.py)."""
    st.sidebar.selectbox(
        "Language · Idioma · 语言",  # in every language: whoever cannot read the page's finds it
        tuple(LANGUAGES),
        key=LANGUAGE_KEY,
        persist_state="session",
        format_func=LANGUAGES.get,
        help=tr("The language of every page; the link carries it (?lang=es), so a link you share keeps it."),
    )
    on = st.sidebar.toggle(
        tr("Presenter mode"),
        key=PRESENTER_KEY,
        persist_state="session",
        help=tr("Larger text and heatmap numbers for a projector; the link carries ?present=1."),
    )
    st.sidebar.radio(
        tr("Chart downloads"),
        CHART_FORMATS,
        key=FORMAT_KEY,
        horizontal=True,
        persist_state="session",
        format_func=str.upper,
        help=tr("Format of the camera button in each chart's toolbar (top right of a chart)."),
    )
    st.html(BASE_CSS + (PRESENTER_CSS if on else ""))
    st.html(HISTORY_JS, unsafe_allow_javascript=True)
    SHARED.show_warnings(st.sidebar)
    return on


def page_link(app_url: str, url_path: str, params: dict[str, str], base_path: str = "") -> str:
    """The full link of a page with its state: the scheme and host of `app_url` (as the browser reports it),
    the app's `base_path` (server.baseUrlPath), the page's url_path ("" for the default page) and its query.

    Whatever path the browser shows after the host is dropped: it may be the page's own, or one that names no
    page (Streamlit then runs the default page under it), which a shared link must not repeat.
    """
    parts = urlsplit(app_url)
    root = (f"{parts.scheme}://{parts.netloc}" if parts.netloc else "") + (
        "/" + base_path.strip("/") if base_path.strip("/") else ""
    )
    link = f"{root}/{url_path}"
    query = urlencode(params)
    return f"{link}?{query}" if query else link


SHARE_CSS = "<style>.share-link{word-break:break-all;font-size:.8rem;user-select:all}</style>"


def share_link(slot, url_path: str) -> None:
    """Fill `slot` (a sidebar placeholder) with this view's full link: a click selects all of it to copy.

    Plain escaped HTML rather than st.code: a code block would load a 1.6 MB highlighter on every page.
    """
    link = page_link(st.context.url or "", url_path, st.query_params.to_dict(), st.get_option("server.baseUrlPath"))
    with slot.container():
        st.markdown(
            tr("**Share this view**"),
            help=tr(
                "Everything on this page is in its link: students who open it see the same example. "
                "Click the link below once to select all of it, then copy it (Ctrl+C)."
            ),
        )
        st.html(f"{SHARE_CSS}<div class='share-link' data-testid='share-link'>{html.escape(link)}</div>")
