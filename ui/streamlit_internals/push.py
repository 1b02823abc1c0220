"""A session's fragment rerun asked for by the server itself (entry "push-fragment-rerun" of
ui/streamlit_internals): what lets class mode push the teacher's move to a student's bar instead of the bar
polling the store on a one-second timer (ui/classroom_push.py).

Streamlit reruns a fragment when the browser asks (a widget in it, or its `run_every` timer). Here a thread of
the server asks instead, the way Streamlit's own "run on save" asks for a full run: on the session's event
loop, `AppSession.request_rerun` with the session's last client state (its page and query string), named
for one fragment and marked as a timer's rerun (so a fragment a full run has since dropped is skipped in
silence, as a timer's would be). The browser draws a run it did not ask for as it draws a timer's.
"""

from __future__ import annotations

from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState, get_script_run_ctx

from ui.streamlit_internals import warn_once

NAME = "push-fragment-rerun"


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


def rerun_fragment(session_id: str, fragment_id: str) -> bool:
    """Ask session `session_id` to rerun fragment `fragment_id` now (from any thread); False if the session is
    not connected to this server (closed, or its browser went away)."""
    sessions = _sessions()
    if sessions is None:
        return False
    try:
        info = sessions.get_active_session_info(session_id)
        if info is None:
            return False
        session = info.session

        def request() -> None:
            client_state = ClientState()
            client_state.CopyFrom(session._client_state)  # the page and query string of its last run
            client_state.fragment_id = fragment_id
            client_state.is_auto_rerun = True
            client_state.is_history_navigation = False
            client_state.ClearField("widget_states")  # no widget changed: the session keeps its values
            session.request_rerun(client_state)

        session._call_soon_on_event_loop(request)
    except AttributeError as err:
        warn_once(NAME, f"Streamlit's session has changed ({err}): the bar falls back on its timer")
        return False
    return True
