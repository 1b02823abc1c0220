"""Every use of a third-party internal in the product: a private name of Streamlit, plotly or the standard library,
or an attribute of Streamlit's frontend. Nothing else in the product touches one (tests/test_streamlit_internals.py
reads the product's source to make sure).

Each entry of ENTRIES says what it replaces or reads, why (the measured gain, for a speed patch) and what breaks
without it, and names the third-party source it depends on. The test holds a hash of each such source, whole, as
the pinned versions have it (PINNED): after an upgrade, every entry whose source changed fails by name, and
docs/maintenance.md says how to re-check it. At run time, a version other than the pinned one is said once
(a warning), a speed patch whose source changed is not applied (a warning naming it), and an internal that is
missing is said once by name: nothing falls back in silence.

    server.py        the two speed patches to Streamlit's server (widgets read one key; batched script events)
    plotly_chart.py  a chart's JSON handed to st.plotly_chart as it is, its arrays encoded by plotly's rules
    session.py       what the pages read from Streamlit's script-run context and session state, and the legacy
                     multipage mode switched off
    push.py          a session's fragment rerun, or its run of another page, asked for by the server (class mode's
                     push to the students' bars and pages)
    spawn.py         training children started without re-running the app's script
    browser.py       the scripts that rely on Streamlit's frontend (reconnect, browser history, a chart drawn)
    imports.py       plotly never handed a module that another thread is still importing (a crash otherwise)
    widget_sync.py   a widget's value set by the app sent again until the browser has it (empty boxes otherwise)

One entry lives outside the app: harness/protocol.py, the load test's browser-less session, speaks Streamlit's
websocket protocol (entry "browserless-session"); its protocol messages are hashed here like the rest.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
import warnings
from dataclasses import dataclass
from pathlib import Path

PINNED = {"streamlit": "1.67.0", "plotly": "7.1.0"}  # requirements.txt: the versions every source hash is of


@dataclass(frozen=True)
class Internal:
    """One use of a third-party internal: `name` is what warnings and failing tests call it."""

    name: str
    where: str  # the function here that uses it
    reads: str  # what it replaces or reads
    why: str  # why, with the measured gain for a speed patch
    without: str  # what breaks without it
    sources: tuple[str, ...]  # "module:qualname" (or "streamlit-frontend[:chunk]") whose text the entry depends on


FRONTEND = "streamlit-frontend"  # Streamlit's compiled frontend (static/static/js/index.*.js), hashed whole
FRONTEND_PLOTLY = "streamlit-frontend:PlotlyChart"  # its chart element with the plotly.js it bundles (PlotlyChart.*.js)

ENTRIES = (
    Internal(
        name="widgets-read-one-key",
        where="server.read_widget_keys_one_by_one",
        reads="replaces `get_session_state` in the widget modules (radio, slider, number_input, selectbox, "
        "text_widgets) with one whose `filtered_state` answers `key in` and `[key]` for the one key asked",
        why="Streamlit builds `filtered_state` afresh from every key of the session for each such widget; with "
        "every visited page's settings kept (about 90 keys after five pages) a page of 20 widgets built it 20 "
        "times per run. Measured paired (bench/compare_revisions.py, docs/maintenance.md): server CPU per run over "
        "the load test's mix 0.86-0.87x with it",
        without="nothing visible: each widget costs more server CPU",
        sources=(
            "streamlit.elements.widgets.radio:RadioMixin._radio",
            "streamlit.elements.widgets.slider:SliderMixin._slider",
            "streamlit.elements.widgets.number_input:NumberInputMixin._number_input",
            "streamlit.elements.widgets.selectbox:SelectboxMixin._selectbox",
            "streamlit.elements.widgets.text_widgets:TextWidgetsMixin._text_input",
            "streamlit.elements.widgets.text_widgets:TextWidgetsMixin._text_area",
            "streamlit.runtime.state.session_state_proxy:get_session_state",
            "streamlit.runtime.state.safe_session_state:SafeSessionState.filtered_state",
            "streamlit.runtime.state.safe_session_state:SafeSessionState.__contains__",
            "streamlit.runtime.state.safe_session_state:SafeSessionState.__getitem__",
        ),
    ),
    Internal(
        name="script-events-in-batches",
        where="server.batch_script_events",
        reads="replaces `AppSession._call_soon_on_event_loop` and `Runtime._enqueued_some_message`",
        why="every element a script draws wakes the server's event loop through its pipe, twice; batched, the "
        "script thread wakes it once per batch and the loop's own wake-up is a plain call_soon. Measured paired: "
        "server CPU per run over the mix 0.92-0.97x with it (four runs, mean 0.95x)",
        without="nothing visible: each element costs more server CPU",
        sources=(
            "streamlit.runtime.app_session:AppSession._call_soon_on_event_loop",
            "streamlit.runtime.runtime:Runtime._enqueued_some_message",
        ),
    ),
    Internal(
        name="legacy-pages-off",
        where="session.leave_legacy_pages_mode",
        reads="writes `PagesManager.uses_pages_directory = False` (the class attribute st.navigation sets)",
        why="until some run has called st.navigation, a server whose folder holds pages/ runs a deep link's page "
        "file alone (Streamlit's old multipage mode)",
        without="the first deep link after a restart (/playground?...) runs the page without app.py: no state, "
        "no navigation",
        sources=(
            "streamlit.runtime.pages_manager:PagesManager.__init__",
            "streamlit.commands.navigation:navigation",
        ),
    ),
    Internal(
        name="apptest-legacy-pages-off",
        where="session.run_app_py_on_every_apptest_run (tests/conftest.py)",
        reads="wraps `PagesManager.__init__` so that `uses_pages_directory` is False after AppTest resets it",
        why="AppTest sets it back to None before every run, so each rerun after the first would run the page file "
        "alone",
        without="AppTest page tests skip app.py on reruns (no sidebar, no shared state)",
        sources=(
            "streamlit.runtime.pages_manager:PagesManager.__init__",
            "streamlit.testing.v1.app_test:AppTest._run",
        ),
    ),
    Internal(
        name="browser-widget-keys",
        where="session.browser_widget_keys",
        reads="reads `SessionState._new_widget_state.states` (widget ids `$$ID-<hash>-<key>`) before any widget "
        "is drawn",
        why="a browser that reconnected to another worker sends its widgets' values with its first run there; "
        "those must win over the link, which still holds the view from before the click",
        without="a click made while reconnecting (a worker behind deploy/'s proxy died) is dropped",
        sources=(
            "streamlit.runtime.state.session_state:SessionState.on_script_will_rerun",
            "streamlit.runtime.state.session_state:WStates",
            "streamlit.elements.lib.utils:_compute_element_id",
        ),
    ),
    Internal(
        name="script-run-context",
        where="session.running_alone, session.history_navigation",
        reads="reads `get_script_run_ctx().fragment_ids_this_run` and `.is_history_navigation`",
        why="a section (st.fragment) running alone holds the run slot and writes the link after itself; a run from "
        "the browser's Back or Forward restores the view the link names",
        without="a fragment's rerun skips the run slot and the link; Back and Forward keep the current view",
        sources=("streamlit.runtime.scriptrunner_utils.script_run_context:ScriptRunContext",),
    ),
    Internal(
        name="push-fragment-rerun",
        where="push.this_fragment, push.this_session, push.active_session_ids, push.rerun_fragment "
        "(ui/classroom_push.py)",
        reads="reads the fragment running now (`ThreadState.get().fragment_id`) and the session's id; lists the "
        "connected sessions (`Runtime._session_mgr`); calls `AppSession.request_rerun` on the session's event loop "
        "(`_call_soon_on_event_loop`) with a copy of its last `_client_state`, named for the bar's fragment and "
        "marked as a timer's rerun, as Streamlit's run-on-save asks for a run; it waits while the session has a "
        "script runner (`AppSession._scriptrunner`): a request during a run was merged into it, and a fragment's "
        "output could be lost",
        why="a bar that polled the store would rerun on a timer: a one-second timer fragment costs 2.2-2.4 ms a "
        "rerun, so 30 polling students took x2.76 the server CPU (target x1.15; measured in 42c2dd9); pushed, a bar "
        "reruns only when the teacher acts",
        without="students' bars follow the teacher only on their 30 s safety timer",
        sources=(
            "streamlit.runtime.app_session:AppSession.__init__",
            "streamlit.runtime.scriptrunner_utils.script_run_context:ThreadState",
            "streamlit.runtime.fragment:_fragment",
            "streamlit.runtime.runtime:Runtime.__init__",
            "streamlit.runtime.websocket_session_manager:WebsocketSessionManager.get_active_session_info",
            "streamlit.runtime.websocket_session_manager:WebsocketSessionManager.list_active_sessions",
            "streamlit.runtime.app_session:AppSession.request_rerun",
            "streamlit.runtime.app_session:AppSession._call_soon_on_event_loop",
            "streamlit.runtime.app_session:AppSession._handle_scriptrunner_event_on_event_loop",
            "streamlit.runtime.scriptrunner.script_runner:ScriptRunner._run_script_thread",
            FRONTEND,
        ),
    ),
    Internal(
        name="push-page-run",
        where="push.run_page (ui/classroom_push.py)",
        reads="calls `AppSession.request_rerun` on the session's event loop with a copy of its last `_client_state` "
        "naming another page by its url path (`page_name`, the empty `page_script_hash` Streamlit's page resolver "
        "then fills in), the view's query string, marked as history navigation, with the session's widget values "
        "(`AppSession._session_state.get_widget_states()`), only while the session has no script runner "
        "(`AppSession._scriptrunner` is None: no script thread touches its state); the client follows the run's "
        "`navigation` message to the page",
        why="a following student's move cost a pushed run of the bar (which drew a script that sent the browser to "
        "the page) before the page's run: about 300 bar runs of some 7 ms per load-test run and a round trip to "
        "the browser; run directly, the move costs the page's run only (docs/classroom.md, Measured)",
        without="a following student moves by a pushed run of the bar and the browser's history navigation "
        "(push-fragment-rerun): slower, and more server CPU per move",
        sources=(
            "streamlit.runtime.app_session:AppSession.__init__",
            "streamlit.runtime.app_session:AppSession.request_rerun",
            "streamlit.runtime.app_session:AppSession._call_soon_on_event_loop",
            "streamlit.runtime.app_session:AppSession._handle_scriptrunner_event_on_event_loop",
            "streamlit.runtime.state.session_state:SessionState.get_widget_states",
            "streamlit.runtime.state.session_state:SessionState.on_script_will_rerun",
            "streamlit.runtime.scriptrunner.script_runner:ScriptRunner._run_script",
            "streamlit.runtime.pages_manager:PagesManager._resolve_page_script",
            FRONTEND,
        ),
    ),
    Internal(
        name="spawn-without-main",
        where="spawn.spawn_without_main",
        reads="replaces `multiprocessing.spawn.get_preparation_data` with one that drops `init_main_from_path` "
        "and `init_main_from_name`",
        why="under Streamlit the main module is the app's script: every spawned training child re-ran app.py in "
        "bare mode, and its warnings filled a pipe nobody reads",
        without="a training child can stop on a full stderr pipe and the page waits for nothing",
        sources=("multiprocessing.spawn:get_preparation_data", "multiprocessing.spawn:prepare"),
    ),
    Internal(
        name="chart-spec-as-figure",
        where="plotly_chart.PreparedFigure (ui/charts.py)",
        reads="hands st.plotly_chart a go.Figure subclass without plotly's state whose `to_dict()` is the chart's "
        "prepared JSON; relies on st.plotly_chart asking a go.Figure for `to_dict()` and nothing else",
        why="given a dict, st.plotly_chart builds and validates a go.Figure from it and deep-copies it back; the "
        "charts are built from the figure builders' own dicts. Measured paired: server CPU per run over the mix "
        "0.53x with it (two runs)",
        without="nothing visible: each chart costs more server CPU",
        sources=(
            "plotly.tools:return_figure_from_figure_or_data",
            "streamlit.elements.plotly_chart:PlotlyMixin.plotly_chart",
        ),
    ),
    Internal(
        name="plotly-typed-arrays",
        where="plotly_chart (ui/charts.py: _typed_arrays, _typed_array)",
        reads="imports `_plotly_utils.utils`' to_typed_array_spec, is_homogeneous_array, is_skipped_key and "
        "plotlyjsShortTypes",
        why="the prepared JSON must encode numpy arrays exactly as plotly's to_dict() does (base64 typed arrays); "
        "these are plotly's own rules for it",
        without="ui/charts.py cannot import: every chart fails (a copy of plotly's rules would drift)",
        sources=(
            "_plotly_utils.utils:to_typed_array_spec",
            "_plotly_utils.utils:is_homogeneous_array",
            "_plotly_utils.utils:is_skipped_key",
            "_plotly_utils.utils:plotlyjsShortTypes",
        ),
    ),
    Internal(
        name="reconnect-rerun",
        where="browser.RECONNECT_JS",
        reads="watches stApp's `data-test-connection-state` attribute and presses R (Streamlit's rerun key) when "
        "it turns CONNECTED again",
        why="Streamlit's client reconnects but reruns only if a run was cut off; the server it now talks to knows "
        "nothing of the page until the next click",
        without="after a worker dies, the next click is read against the link and dropped",
        sources=(FRONTEND,),
    ),
    Internal(
        name="browserless-session",
        where="harness/protocol.py (the load test's and bench/compare_revisions.py's sessions; not the app)",
        reads="speaks Streamlit's websocket protocol as the frontend does: builds `BackMsg.rerun_script` (page, "
        "query string, widget states, fragment id, `is_history_navigation`) and reads `ForwardMsg`s (new_session, "
        "delta elements, navigation, page_info_changed, auto_rerun, script_finished); "
        "tests/browser/test_protocol_session.py runs it against the real server",
        why="30 headless Chromium pages need several times the CPU of the server they measure on a 2-core "
        "machine; a browser-less session puts a class on one server and leaves the CPU to it",
        without="the load test's browser-less sessions, bench/compare_revisions.py and the soak test cannot run "
        "(the app itself is unaffected)",
        sources=(
            "streamlit.proto.BackMsg_pb2:DESCRIPTOR.serialized_pb",
            "streamlit.proto.ClientState_pb2:DESCRIPTOR.serialized_pb",
            "streamlit.proto.WidgetStates_pb2:DESCRIPTOR.serialized_pb",
            "streamlit.proto.ForwardMsg_pb2:DESCRIPTOR.serialized_pb",
            "streamlit.proto.Element_pb2:DESCRIPTOR.serialized_pb",
        ),
    ),
    Internal(
        name="plotly-chart-drawn",
        where="browser.charts_drawn_script (ui/after_charts.py); harness/load/sessions.py and "
        "bench/bench_playground.py read a chart's data from it in Chromium",
        reads="polls each chart element (`.js-plotly-plot`) for the `_fullData` that plotly.js sets once it has laid "
        "out the chart's data",
        why="only the browser knows when its charts are drawn: the Playground's grid, whose code loads for a while "
        "on a first visit, is drawn after the heatmap (a warm first visit reached its heatmap 1.23x the floor app's "
        "time instead of 1.35x: docs/performance.md)",
        without="the grid waits for the script's 4 s give-up on every first visit",
        sources=(FRONTEND_PLOTLY,),
    ),
    Internal(
        name="one-history-entry-per-page",
        where="browser.HISTORY_JS",
        reads="wraps the page's `history.pushState` and `history.replaceState`, which Streamlit's client calls",
        why="Streamlit pushes one entry for the page change and another when the page writes its state into the "
        "link, and sometimes writes the new page's state under the old path",
        without="Back stays on the same page, or opens the old page with the new page's state",
        sources=(FRONTEND,),
    ),
)

ENTRIES += (
    Internal(
        name="half-imported-modules",
        where="imports.hide_half_imported_modules",
        reads="replaces `_plotly_utils.optional_imports.get_module` (and the same name in every plotly module that "
        "imported it) with one that answers None for a module of `sys.modules` whose `__spec__._initializing` is "
        "set, CPython's own test of an import under way",
        why="plotly reads `sys.modules` to learn whether pandas is loaded; while one session's thread imports pandas "
        "(imported where a table is drawn, so a page's first run does not wait 0.27 s for it), another session's "
        "chart got the half-built module and the page crashed (AttributeError: partially initialized module "
        "'pandas' has no attribute 'Series'; tests/test_import_race.py reproduces it without the fix)",
        without="a page that draws a chart while another session imports pandas may crash, on the projector too",
        sources=("_plotly_utils.optional_imports:get_module",),
    ),
)

ENTRIES += (
    Internal(
        name="values-sent-until-the-browser-has-them",
        where="widget_sync.send_until_confirmed",
        reads="wraps `SessionState.register_widget`: reads whether the browser sent the widget's value with this "
        "run (`_new_widget_state.states`), and answers `value_changed` (Streamlit then sends the value with the "
        "element) for a widget whose value Streamlit sent and the browser has not reported since",
        why="Streamlit sends a value the app set once; a run that starts before the browser drew it (a quick "
        "second click) left the browser's widget at its default, which it then sent back as a change: the "
        "Playground's number boxes empty and its tokens t0, t1, ... on the teacher's projected page, 3 of 6 tries "
        "of opening Ask the class and picking a question at once (tests/browser/test_class_lesson_browser.py)",
        without="a quick click after a page loads or follows the teacher can empty its boxes and put back "
        "defaults nobody chose",
        sources=("streamlit.runtime.state.session_state:SessionState.register_widget",),
    ),
)

BY_NAME = {entry.name: entry for entry in ENTRIES}


def entry(name: str) -> Internal:
    return BY_NAME[name]


# ---------------------------------------------------------------- the sources, as the pinned versions have them
def resolve(source: str):
    """The third-party object "module:qualname" names: a property's getter for a property, and what a
    replacement of ours replaced (each carries it as `.replaced`) once it is in place."""
    module_name, _, qualname = source.partition(":")
    obj = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    obj = obj.fget if isinstance(obj, property) else obj
    return getattr(obj, "replaced", obj)


def frontend_bundle(chunk: str = "index") -> Path:
    """A script of Streamlit's frontend: its main one (the app shell, its attributes and its keys), or the chunk of
    one element ("PlotlyChart")."""
    import streamlit

    folder = Path(streamlit.__file__).parent / "static" / "static" / "js"
    bundles = sorted(b for b in folder.glob(f"{chunk}.*.js") if b.name.count(".") == 2)  # not index.esm.*.js
    if len(bundles) != 1:
        raise LookupError(f"expected one {chunk}.*.js in Streamlit's frontend, found {[b.name for b in bundles]}")
    return bundles[0]


def source_hash(source: str) -> str:
    """The first 16 hex digits of the sha256 of the source's whole text (a constant's repr, the frontend bundle's
    bytes)."""
    if source.startswith(FRONTEND):
        data = frontend_bundle(source.partition(":")[2] or "index").read_bytes()
    else:
        obj = resolve(source)
        is_code = inspect.isfunction(obj) or inspect.isclass(obj) or inspect.ismethod(obj)
        data = (inspect.getsource(obj) if is_code else repr(obj)).encode()  # a constant: its value
    return hashlib.sha256(data).hexdigest()[:16]


# The hashes of the pinned versions (streamlit 1.67.0, plotly 7.1.0, Python 3.11's multiprocessing).
PINNED_SOURCES = {
    "streamlit.elements.widgets.radio:RadioMixin._radio": "fc44564cf9614e38",
    "streamlit.elements.widgets.slider:SliderMixin._slider": "59144c0f3319adc9",
    "streamlit.elements.widgets.number_input:NumberInputMixin._number_input": "2c372badd28bcea5",
    "streamlit.elements.widgets.selectbox:SelectboxMixin._selectbox": "6d093d72fe9539fe",
    "streamlit.elements.widgets.text_widgets:TextWidgetsMixin._text_input": "d73061f5af2eff04",
    "streamlit.elements.widgets.text_widgets:TextWidgetsMixin._text_area": "239d3b755a0dd4f3",
    "streamlit.runtime.state.session_state_proxy:get_session_state": "28233758aa453fac",
    "streamlit.runtime.state.safe_session_state:SafeSessionState.filtered_state": "d08f2da73ad67b5e",
    "streamlit.runtime.state.safe_session_state:SafeSessionState.__contains__": "92fce7978e7699d4",
    "streamlit.runtime.state.safe_session_state:SafeSessionState.__getitem__": "af4b2c7ab14d0eea",
    "streamlit.runtime.app_session:AppSession._call_soon_on_event_loop": "565b1968d78c9283",
    "streamlit.runtime.runtime:Runtime._enqueued_some_message": "82ae537d91f146d1",
    "streamlit.runtime.pages_manager:PagesManager.__init__": "baf7a6f847ae8dcb",
    "streamlit.commands.navigation:navigation": "53bd3822e2c46dff",
    "streamlit.testing.v1.app_test:AppTest._run": "f9e157cc34250ba7",
    "streamlit.runtime.state.session_state:SessionState.on_script_will_rerun": "cb43df33b02aab59",
    "streamlit.runtime.state.session_state:WStates": "9873f691ecca0517",
    "streamlit.elements.lib.utils:_compute_element_id": "449bc4be99637a87",
    "streamlit.runtime.scriptrunner_utils.script_run_context:ScriptRunContext": "c6a42b9a0619f952",
    "streamlit.runtime.scriptrunner_utils.script_run_context:ThreadState": "f9dd304895c3d2b7",
    "streamlit.runtime.fragment:_fragment": "40a2d1a20a6b5049",
    "streamlit.runtime.runtime:Runtime.__init__": "e5a5fb5dd960c87c",
    "streamlit.runtime.websocket_session_manager:WebsocketSessionManager.get_active_session_info": "48c655084027340a",
    "streamlit.runtime.websocket_session_manager:WebsocketSessionManager.list_active_sessions": "ddadaa56b6358f02",
    "streamlit.runtime.app_session:AppSession.request_rerun": "52f29d8973368c8b",
    "streamlit.runtime.app_session:AppSession._handle_scriptrunner_event_on_event_loop": "ed8b8b01f1b6a039",
    "streamlit.runtime.scriptrunner.script_runner:ScriptRunner._run_script_thread": "4bf3d78818ffdd59",
    "streamlit.runtime.app_session:AppSession.__init__": "64cab45766dcefc4",
    "streamlit.runtime.state.session_state:SessionState.get_widget_states": "348b3f2dff9573be",
    "streamlit.runtime.scriptrunner.script_runner:ScriptRunner._run_script": "b576d3acf1a5b905",
    "streamlit.runtime.pages_manager:PagesManager._resolve_page_script": "5a321fe1d346f07f",
    "multiprocessing.spawn:get_preparation_data": "aa7367d450c4696c",
    "multiprocessing.spawn:prepare": "98c6610669e07383",
    "plotly.tools:return_figure_from_figure_or_data": "1aba798462646cdc",
    "streamlit.elements.plotly_chart:PlotlyMixin.plotly_chart": "8e7baaf23d0be3d7",
    "_plotly_utils.utils:to_typed_array_spec": "a7ffd71b20b83d7e",
    "_plotly_utils.utils:is_homogeneous_array": "e9c780b081bd23e3",
    "_plotly_utils.utils:is_skipped_key": "9dae894984dc9ed7",
    "_plotly_utils.utils:plotlyjsShortTypes": "56adfecff884ee79",
    "streamlit-frontend": "b5764588a0b92c01",
    "streamlit-frontend:PlotlyChart": "8cb9b72292d50f4a",
    "streamlit.proto.BackMsg_pb2:DESCRIPTOR.serialized_pb": "02fd354c9dddf33e",
    "streamlit.proto.ClientState_pb2:DESCRIPTOR.serialized_pb": "1a2b7cbd38d243fe",
    "streamlit.proto.WidgetStates_pb2:DESCRIPTOR.serialized_pb": "44f922cc6eb40a56",
    "streamlit.proto.ForwardMsg_pb2:DESCRIPTOR.serialized_pb": "f576e406b23a0098",
    "streamlit.proto.Element_pb2:DESCRIPTOR.serialized_pb": "af1e05ba20074666",
    "_plotly_utils.optional_imports:get_module": "db85f287c020b268",
    "streamlit.runtime.state.session_state:SessionState.register_widget": "4529c7d6a01d0a70",
}


def changed_sources(name: str) -> list[str]:
    """The sources of entry `name` whose text is not the pinned one's (or that are gone)."""
    changed = []
    for source in entry(name).sources:
        try:
            same = source_hash(source) == PINNED_SOURCES.get(source)
        except (ImportError, AttributeError, LookupError, OSError, TypeError):
            same = False
        if not same:
            changed.append(source)
    return changed


# ---------------------------------------------------------------- saying what is wrong, once
@functools.lru_cache(maxsize=64)  # one per entry and problem: a few dozen entries, a repeat warns again at worst
def warn_once(name: str, problem: str) -> None:
    """A warning naming the entry, once per process and problem (Streamlit shows it in the server's log)."""
    warnings.warn(f"ui/streamlit_internals entry {name!r}: {problem} (see docs/maintenance.md)", stacklevel=3)


def installed_versions() -> dict[str, str]:
    """The installed versions, read from the packages' metadata: nothing is imported here (an import inside a
    function could meet another session's thread importing the same module half-way)."""
    from importlib.metadata import version

    return {"streamlit": version("streamlit"), "plotly": version("plotly")}


def check_versions() -> None:
    """Say once if the installed versions are not the pinned ones (every entry was checked against those)."""
    installed = installed_versions()
    if installed != PINNED:
        warn_once("versions", f"installed {installed}, checked against {PINNED}: run tests/test_streamlit_internals.py")


def apply_once() -> None:
    """The patches to Streamlit's server (speed, and the fixes), on the first run of the process (app.py calls it
    on every run: later calls cost a lookup). A patch whose Streamlit source changed is left out, with a warning
    naming it."""
    global _applied
    if _applied:
        return
    from ui.streamlit_internals import imports, server, widget_sync

    check_versions()
    for name, apply in (
        ("half-imported-modules", imports.hide_half_imported_modules),
        ("script-events-in-batches", server.batch_script_events),
        ("widgets-read-one-key", server.read_widget_keys_one_by_one),
        ("values-sent-until-the-browser-has-them", widget_sync.send_until_confirmed),
    ):
        changed = changed_sources(name)
        if changed:
            warn_once(name, f"not applied: Streamlit's {', '.join(changed)} is not the pinned one")
        else:
            apply()
    _applied = True


_applied = False
