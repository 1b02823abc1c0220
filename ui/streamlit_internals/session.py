"""What the app reads from Streamlit's script-run context and session state, and Streamlit's old multipage mode
switched off (entries "browser-widget-keys", "script-run-context", "legacy-pages-off" and
"apptest-legacy-pages-off" of ui/streamlit_internals)."""

from __future__ import annotations

from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx
from streamlit.runtime.state.common import GENERATED_ELEMENT_ID_PREFIX
from streamlit.runtime.state.session_state_proxy import get_session_state

from ui.streamlit_internals import warn_once

_WIDGET_ID_PREFIX = GENERATED_ELEMENT_ID_PREFIX + "-"  # "$$ID-<hash>-<user key>"


def browser_widget_keys() -> set[str]:
    """The keys of the widgets whose values the browser sent with this run, before any is drawn.

    A fresh page sends none. A browser that lost its server and reconnected to another (a worker behind
    deploy/'s proxy) sends them all with its first run there: its own widgets' values, including a click
    made as it reconnected. Read from Streamlit's session state, where the values wait under the widgets'
    ids, which end in "-<key>".
    """
    try:
        ids = list(get_session_state()._state._new_widget_state.states)
    except AttributeError as err:
        warn_once("browser-widget-keys", f"Streamlit's session state has changed ({err}); the link decides")
        return set()
    return {wid.split("-", 2)[2] for wid in ids if wid.startswith(_WIDGET_ID_PREFIX) and wid.count("-") >= 2}


def history_navigation() -> bool:
    """Whether this run comes from the browser's Back or Forward button (Streamlit tells its own bound
    widgets so through the script-run context)."""
    ctx = get_script_run_ctx()
    try:
        return bool(ctx is not None and ctx.is_history_navigation)
    except AttributeError:
        warn_once("script-run-context", "the script-run context has no is_history_navigation")
        return False


def running_alone() -> bool:
    """True while this run is a fragment's alone, not the whole page's."""
    ctx = get_script_run_ctx()
    try:
        return bool(ctx is not None and ctx.fragment_ids_this_run)
    except AttributeError:
        warn_once("script-run-context", "the script-run context has no fragment_ids_this_run")
        return False


def leave_legacy_pages_mode() -> None:
    """Turn off Streamlit's old multipage mode for this process, as st.navigation does once it has run."""
    if not hasattr(PagesManager, "uses_pages_directory"):
        warn_once("legacy-pages-off", "PagesManager.uses_pages_directory is gone")
        return
    PagesManager.uses_pages_directory = False


def run_app_py_on_every_apptest_run() -> None:
    """Make AppTest run app.py on every run, as the real server does (tests/conftest.py calls it once).

    AppTest resets PagesManager.uses_pages_directory before each run, so with a `pages/` folder every rerun
    after the first takes the legacy multipage path and runs the page file alone, skipping app.py's sidebar.
    The real server leaves legacy mode for good once st.navigation has run; this does the same for AppTest.
    """
    original = PagesManager.__init__
    if getattr(original, "replaced", None) is not None:
        return

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        leave_legacy_pages_mode()

    init.replaced = original
    PagesManager.__init__ = init
