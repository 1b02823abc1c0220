"""After the browser loses its server and reconnects (to the same worker or, behind deploy/'s proxy, to a
live one when its worker died), run the page again, as pressing R does.

Streamlit's client reconnects by itself, but reruns only if a run was cut off (frontend App.tsx,
handleConnectionStateChanged): otherwise it keeps the old page on screen and the server the browser now
talks to knows nothing of it until the next click, whose change the page would then read against the link
and drop. Running the page at once makes the new server draw the same view from the link and the
browser's widget values, so the next click works as before. Every page keeps its state in the link,
so nothing else is needed to come back to the same view.
"""

from __future__ import annotations

import streamlit as st

from ui.streamlit_internals.browser import RECONNECT_JS


def rerun_after_reconnect(where=st.sidebar) -> None:
    """Install the script (a fixed text: nothing from the user goes into it)."""
    where.html(RECONNECT_JS, unsafe_allow_javascript=True)
