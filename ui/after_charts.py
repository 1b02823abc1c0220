"""Draw a heavy element once the page's charts are on screen, not before them.

A browser's first visit loads each kind of element's code as the element first arrives. The Playground's grid
(`st.data_editor`) brings the most of it, and while it loads, the heatmap waits for the same network and the
same main thread: without the grid, a warm first visit reached its heatmap 1.23× the floor app's time instead of
1.35× (docs/performance.md, "The Playground against Streamlit's floor"). So on a session's first run a page (the
Playground, outside presenter mode) shows a placeholder where the grid goes, and a small script in the page
(`st.components.v2`) waits until every chart on the page is drawn, then asks the server for a run: that run, and
every one after it, draws the grid. The session is marked as the box is drawn, so any later run of the page
draws the grid even if the signal never comes (its code refused, a script blocked).

Only a browser can say when its charts are drawn. Outside a server (AppTest) there is no browser, and the
element is drawn at once.
"""

from __future__ import annotations

import streamlit as st

from ui.streamlit_internals.browser import charts_drawn_script

# How long the script waits for the charts before it asks anyway, ms: a page whose chart cannot be drawn
# (or a browser that never draws it) still gets its grid.
GIVE_UP_MS = 4000

_signal = st.components.v2.component("attention_after_charts", js=charts_drawn_script(GIVE_UP_MS))


def after_charts(key: str, *, waiting: str, height: int) -> bool:
    """True when the element named `key` is to be drawn in this run: always outside a server, and in a session
    after its first run with the box (the browser's signal asks for the next). Otherwise draws, in the element's
    place, a box `height` px tall (the element's own height, so nothing below it moves when it comes) holding the
    caption `waiting` and the signal, and returns False: the signal's run (the whole page) draws the element."""
    from ui.streamlit_internals import push

    flag = f"{key}_after_charts"  # set as the box is drawn: the element may be drawn at once from then on
    if st.session_state.get(flag) or push.this_session() is None:
        return True
    with st.container(height=height, border=False):
        st.caption(waiting)
        _signal(key=f"{flag}_signal", on_drawn_change=lambda: None)  # its trigger is the run that draws it
    st.session_state[flag] = True  # any later run draws it, signal or not
    return False
