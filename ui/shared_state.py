"""The state every page shares, without drawing anything: the Playground's token sequence, presenter mode and
the chart download format, the link they go into, and the guard that every page runs through app.py.

Canonical state lives in plain `st.session_state` keys (not widget keys), so it survives page switches. A
page's own state is declared beside the page (ui/page_state.py: PageState), which derives its session keys,
prefixed with the page's name; the state declared here is shared (`SHARED`, prefix None: bare keys) or is
the sequence `seq` that the lesson, heads and block pages read.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from locales import ENGLISH, LANGUAGE_KEY, LANGUAGES, browser_language
from ui.page_state import CURRENT_KEY, PageState
from ui.sequence import default_sequence
from ui.streamlit_internals.session import leave_legacy_pages_mode
from ui.url import Choice, Flag, SequenceParam, decode_choice

SEQUENCE_KEY = "seq"  # the Playground's TokenSequence, read by the lesson, heads and block pages


def playground_sequence() -> SequenceParam:
    """The Playground's sequence as another page declares it (the heads and block pages read its tokens): in that
    page's link when it is not the default, and always in the view a class question holds the students' pages to."""
    return SequenceParam(
        lambda _: default_sequence(), key=SEQUENCE_KEY, when=lambda v: not v["seq"].equals(default_sequence())
    )


@dataclass(frozen=True)
class Language(Choice):
    """The session's language (locales/): the link's `lang=`; a link without it keeps the session's, or takes the
    browser's on a first visit; a bad one is English, with a note."""

    def decode(self, params, name, values, warnings):
        return decode_choice(params, self.url or name, self.choices, ENGLISH, warnings)


def _session_language(_values) -> str:
    found = st.session_state.get(LANGUAGE_KEY)
    return found if found in LANGUAGES else browser_language(st.context.locale)


# Shared by every page: presenter mode, in the link (?present=1) only while it is on, and the language, in the link
# (?lang=es) unless it is English, so that a link a student shares keeps it.
SHARED = PageState(
    None,
    presenter=Flag(False, url="present", when=lambda values: values["presenter"]),
    language=Language(
        _session_language, url="lang", choices=tuple(LANGUAGES), when=lambda values: values["language"] != ENGLISH
    ),
)
PRESENTER_KEY = SHARED.key("presenter")
assert SHARED.key("language") == LANGUAGE_KEY
FORMAT_KEY = "chart_format"  # "png" or "svg": the format of the camera button in every chart's toolbar


def init_defaults() -> None:
    """Set every shared key that is not set yet (first run of a session)."""
    st.session_state.setdefault(SEQUENCE_KEY, default_sequence())
    st.session_state.setdefault(f"{SEQUENCE_KEY}_rev", 0)


def is_presenting() -> bool:
    return bool(st.session_state.get(PRESENTER_KEY, False))


def chart_format() -> str:
    return st.session_state.get(FORMAT_KEY, "png")


def save_current() -> None:
    """Make the link hold exactly the shared state plus the state of the page that ran; no-op if it does."""
    page = st.session_state.get(CURRENT_KEY)
    wanted = SHARED.encode() | (page.encode() if isinstance(page, PageState) else {})
    if st.query_params.to_dict() != wanted:
        st.query_params.from_dict(wanted)


APP_ENTRY_KEY = "_app_entry_ran"


def mark_app_entry() -> None:
    """Called by app.py on every run, before the page runs."""
    st.session_state[APP_ENTRY_KEY] = True


def require_app_entry() -> None:
    """First line of every page: make sure the page runs through app.py's navigation.

    Until some run has called st.navigation, a server whose folder holds `pages/` treats it as an old-style
    multipage app, so the very first deep link after a restart (/playground?...) runs the page file alone,
    without app.py's state and navigation. Turn that legacy mode off and rerun: the rerun goes through app.py
    and lands on the same page and URL.
    """
    if st.session_state.get(APP_ENTRY_KEY):
        return
    leave_legacy_pages_mode()
    st.rerun()
