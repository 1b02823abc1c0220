"""A session's fragment rerun, or its run of another page, asked for by the server itself (entries
"push-fragment-rerun" and "push-page-run" of ui/streamlit_internals): what lets class mode push the teacher's
actions to a student's bar, and the teacher's move to the student's page, instead of the bar polling the store
on a one-second timer (ui/classroom_push.py).

Streamlit reruns a fragment when the browser asks (a widget in it, or its `run_every` timer). Here a thread of
the server asks instead, the way Streamlit's own "run on save" asks for a full run: on the session's event
loop, `AppSession.request_rerun` with the session's last client state (its page and query string), named
for one fragment and marked as a timer's rerun (so a fragment a full run has since dropped is skipped in
silence, as a timer's would be). The browser draws a run it did not ask for as it draws a timer's.

A move to another page is asked for the same way, as the browser's Back button asks for it: a run of that page
(by its url path, as a typed link names it) with the link's query string, marked as history navigation, and with
the values of the session's widgets (those of the sidebar and the room's bar too), which the browser would send.
The browser follows the run as it follows `st.switch_page`: Streamlit's client moves its address to the page the
`navigation` message names, and the page's state reaches the link when the run writes it.
"""

from __future__ import annotations

import asyncio

from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState, get_script_run_ctx

from ui.streamlit_internals import warn_once

NAME = "push-fragment-rerun"
WAIT_S, WAIT_TRIES = 0.05, 200  # a push waits for the session's run under way, up to 10 s


def this_fragment() -> tuple[str, str] | None:
    """(session id, fragment id) of the fragment running now in this script thread; None outside a fragment or
    outside a server (AppTest, bare mode)."""
    ctx = get_script_run_ctx()
    if ctx is None or _sessions() is None:
        return None
    try:
        fragment_id = ThreadState.get().fragment_id
        session_id = ctx.session_id
    except AttributeError as err:
        warn_once(NAME, f"Streamlit's script thread state has changed ({err}): the bar falls back on its timer")
        return None
    return (session_id, fragment_id) if fragment_id else None


def this_session() -> str | None:
    """The id of the session whose script runs in this thread; None outside a server."""
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None and _sessions() is not None else None


def _sessions():
    """The server's session manager; None without a server (bare mode, or AppTest's stand-in runtime)."""
    if not Runtime.exists():
        return None
    runtime = Runtime.instance()
    found = getattr(runtime, "_session_mgr", None)
    if found is None and type(runtime) is Runtime:
        warn_once(NAME, "the runtime has no _session_mgr: the bars fall back on their timer")
    return found


def active_session_ids() -> set[str] | None:
    """The ids of the sessions whose browser is connected to this server; None when there is no server."""
    sessions = _sessions()
    if sessions is None:
        return None
    try:
        return {info.session.id for info in sessions.list_active_sessions()}
    except AttributeError as err:
        warn_once(NAME, f"Streamlit's session manager has changed ({err})")
        return None


def _request_when_idle(session_id: str, name: str, falls_back: str, client_state_of, on_timeout=None) -> bool:
    """On session `session_id`'s event loop, once its run under way (if any) has ended, request the run that
    `client_state_of(session)` describes; if the run does not end within WAIT_S * WAIT_TRIES, `on_timeout()`
    instead (None: request it anyway). False if the session is not connected to this server. A run under way
    (the browser's, or another push: a teacher has two screens) would take the request into its own, and
    Streamlit 1.67 may then drop one fragment's output; with no script runner, no script thread touches the
    session state that `client_state_of` reads."""
    sessions = _sessions()
    if sessions is None:
        return False
    try:
        info = sessions.get_active_session_info(session_id)
        if info is None:
            return False
        session = info.session

        def request(attempt: int = 0) -> None:
            if session._scriptrunner is not None:
                if attempt < WAIT_TRIES:
                    asyncio.get_running_loop().call_later(WAIT_S, request, attempt + 1)
                    return
                if on_timeout is not None:
                    on_timeout()
                    return
            session.request_rerun(client_state_of(session))

        session._call_soon_on_event_loop(request)
    except AttributeError as err:
        warn_once(name, f"Streamlit's session has changed ({err}): {falls_back}")
        return False
    return True


def rerun_fragment(session_id: str, fragment_id: str) -> bool:
    """Ask session `session_id` to rerun fragment `fragment_id` now (from any thread); False if the session is
    not connected to this server (closed, or its browser went away)."""

    def client_state_of(session) -> ClientState:
        client_state = ClientState()
        client_state.CopyFrom(session._client_state)  # the page and query string of its last run
        client_state.fragment_id = fragment_id
        client_state.is_auto_rerun = True
        client_state.is_history_navigation = False
        client_state.ClearField("widget_states")  # no widget changed: the session keeps its values
        return client_state

    return _request_when_idle(session_id, NAME, "the bar falls back on its timer", client_state_of)


PAGE_RUN = "push-page-run"


def run_page(session_id: str, page: str, query_string: str, fragment_id: str) -> bool:
    """Ask session `session_id` to run page `page` (its url path) with `query_string`, as Back to that link
    would, once the session's run under way (if any) has ended; if it does not end within WAIT_S * WAIT_TRIES, its
    fragment `fragment_id` is rerun instead (the bar moves the browser itself). False if the session is not
    connected to this server."""

    def client_state_of(session) -> ClientState:
        return page_run_state(session._client_state, page, query_string, session._session_state.get_widget_states())

    return _request_when_idle(
        session_id,
        PAGE_RUN,
        "the student's bar moves the page",
        client_state_of,
        on_timeout=lambda: rerun_fragment(session_id, fragment_id),
    )


# The kinds of widget value that are an event of one run (a click, a chat message), not a value the widget keeps.
TRIGGERS = ("trigger_value", "string_trigger_value", "chat_input_value", "json_trigger_value")


def page_run_state(last: ClientState, page: str, query_string: str, widget_states) -> ClientState:
    """The request for a run of `page` with `query_string`, as Back to that link asks for it: the session's `last`
    client state, its widgets' values (`widget_states`, WidgetState protos), and no event. A browser sends a click
    once; a run ended by st.stop() or an error leaves its button pressed in the session's state (Streamlit resets
    triggers after a run that completes or is stopped for a rerun, not after those), and sending it back would press
    it again: a student's Join, pressed again by the teacher's move, would seat the student twice."""
    client_state = ClientState()
    client_state.CopyFrom(last)
    client_state.page_script_hash = ""  # the page is named by its url path, as a typed link names it
    client_state.page_name = page
    client_state.query_string = query_string
    client_state.fragment_id = ""
    client_state.is_auto_rerun = False
    client_state.is_history_navigation = True
    client_state.ClearField("widget_states")
    client_state.widget_states.widgets.extend(w for w in widget_states if w.WhichOneof("value") not in TRIGGERS)
    return client_state
