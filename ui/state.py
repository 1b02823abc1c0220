"""Shared session-state defaults, set once per session by app.py before any page runs.

Canonical state lives in plain `st.session_state` keys (not widget keys), so it survives page
switches. Keys are prefixed with the page that owns them; `seq` is shared by every page that
shows the Playground's token sequence.
"""
from __future__ import annotations

import streamlit as st

from ui.sequence import default_sequence

SEQUENCE_KEY = "seq"  # the Playground's TokenSequence, read by the lesson, heads and block pages


def init_defaults() -> None:
    """Set every shared key that is not set yet (first run of a session)."""
    st.session_state.setdefault(SEQUENCE_KEY, default_sequence())
    st.session_state.setdefault(f"{SEQUENCE_KEY}_rev", 0)
