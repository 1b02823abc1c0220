"""Attention from scratch: entry point, shared state and navigation.

Run with `streamlit run app.py`. Every page is listed here explicitly (st.navigation does not
discover the pages/ folder). Pages read the shared state set up below and call the numpy core.
"""
import streamlit as st

from ui.state import init_defaults, mark_app_entry

st.set_page_config(page_title="Attention from scratch", page_icon="🔍", layout="wide")
init_defaults()
mark_app_entry()

PAGES = {
    "Build it": [
        st.Page("pages/playground.py", title="Playground", icon="🧮", url_path="playground", default=True),
    ],
    "Inside the transformer": [
        st.Page("pages/heads.py", title="Multi-head attention", icon="🧠", url_path="heads"),
        st.Page("pages/block.py", title="The transformer block", icon="🧱", url_path="block"),
    ],
}

pg = st.navigation(PAGES)
st.sidebar.caption(
    "Attention from scratch: every number on screen is computed by the project's own numpy core, "
    "no deep-learning framework."
)
pg.run()
