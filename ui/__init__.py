"""Streamlit helpers shared by several pages (state, editors, URL sharing).

Pure helpers (parsing, URL encoding) live in modules without streamlit so they can be tested directly.
"""
