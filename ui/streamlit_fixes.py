"""A measured fix to Streamlit's widgets, applied once per process by app.py (the pinned Streamlit only).

Streamlit's selectbox, radio, number_input, slider, text_input and text_area each ask, while they are
drawn, whether their own key holds None in Session State. They ask it of `filtered_state`, a dict that
Streamlit builds afresh for every such widget from every key in the session, each value read through
the widget registry (streamlit/streamlit#9415 is the same cost by another path). This app keeps every
visited page's settings in the session, about 90 keys after five pages, so a page of 20 keyed widgets
built that dict 20 times per run: 8 % of the server's samples over the load test's mix (py-spy,
bench/compare_revisions.py's steps).

`read_widget_keys_one_by_one()` gives those six widget modules a session whose `filtered_state` answers
the same two questions (is the key set? to what?) for the one key asked, through the session's own
`in` and `[]`, which read the same stores in the same order. Everything else goes to Streamlit's
session unchanged. tests/test_streamlit_fixes.py checks both answers against Streamlit's own dict, and
fails if the pinned Streamlit stops reading filtered_state exactly this way in these widgets.
"""

from __future__ import annotations

import importlib
from typing import Any

# module: how many times it reads filtered_state, each time only as `key in s` and `s[key]`
WIDGET_MODULES = {
    "streamlit.elements.widgets.radio": 1,
    "streamlit.elements.widgets.slider": 1,
    "streamlit.elements.widgets.number_input": 1,
    "streamlit.elements.widgets.selectbox": 1,
    "streamlit.elements.widgets.text_widgets": 2,
}


class OneKeyView:
    """The part of `filtered_state` a widget reads: `key in view` and `view[key]` for its own key."""

    __slots__ = ("_session",)

    def __init__(self, session: Any) -> None:
        self._session = session

    def __contains__(self, key: str) -> bool:
        return key in self._session

    def __getitem__(self, key: str) -> Any:
        return self._session[key]


class _WidgetSession:
    """Streamlit's session for one widget call, with `filtered_state` answered key by key."""

    __slots__ = ("_session",)

    def __init__(self, session: Any) -> None:
        self._session = session

    @property
    def filtered_state(self) -> OneKeyView:
        return OneKeyView(self._session)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


def read_widget_keys_one_by_one() -> None:
    """Give the six widgets the key-by-key view; once per process (a second call changes nothing)."""
    for name in WIDGET_MODULES:
        module = importlib.import_module(name)
        original = module.get_session_state
        if getattr(original, "_reads_one_key", False):
            continue

        def get_session_state(original=original) -> _WidgetSession:
            return _WidgetSession(original())

        get_session_state._reads_one_key = True
        get_session_state.original = original
        module.get_session_state = get_session_state
