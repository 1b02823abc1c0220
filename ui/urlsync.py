"""Reading and writing the URL query of the current page (the streamlit side of ui/url.py)."""
from __future__ import annotations

import streamlit as st

from ui.safe_text import escape_markdown

GLOBAL_PARAMS: tuple[str, ...] = ("present",)  # shared by every page (kept when a page writes its own)


def write_page_params(params: dict[str, str]) -> None:
    """Make the URL hold exactly this page's state (plus the global parameters); no-op if unchanged."""
    current = st.query_params.to_dict()
    wanted = {k: current[k] for k in GLOBAL_PARAMS if k in current} | params
    if current != wanted:
        st.query_params.from_dict(wanted)


def show_url_warnings(state_key: str) -> None:
    """Show (once per session) the warnings collected while reading this page's URL."""
    for warning in st.session_state.get(state_key, []):
        st.warning(escape_markdown(warning), icon="🔗")  # it may quote the URL's text
