"""ui.streamlit_internals: the pinned versions and sources every entry was checked against, no private name used
outside the package, and each speed patch answering as Streamlit's own code does."""

from __future__ import annotations

import ast
import asyncio
import importlib
import inspect
import re
import threading
import warnings
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest_helpers import APP, TIMEOUT
from ui import streamlit_internals
from ui.streamlit_internals import BY_NAME, ENTRIES, PINNED, PINNED_SOURCES, server
from ui.streamlit_internals.server import WIDGET_MODULES, read_widget_keys_one_by_one


@pytest.fixture
def fixed(monkeypatch):
    """The fix applied for one test, and Streamlit's own functions put back after it."""
    for name in WIDGET_MODULES:
        module = importlib.import_module(name)
        original = getattr(module.get_session_state, "replaced", module.get_session_state)
        monkeypatch.setattr(module, "get_session_state", original)
    read_widget_keys_one_by_one()
    yield


@pytest.mark.parametrize("name", sorted(WIDGET_MODULES))
def test_the_pinned_widgets_read_filtered_state_only_for_their_own_key(name):
    """If Streamlit changes how a widget reads filtered_state, the fix may no longer answer it: fail here."""
    module = importlib.import_module(name)
    source = inspect.getsource(module)
    reads = [m.end() for m in re.finditer(r"session_state = get_session_state\(\)\.filtered_state\n", source)]
    assert len(reads) == WIDGET_MODULES[name]
    assert source.count(".filtered_state") == WIDGET_MODULES[name]
    for start in reads:
        body = source[start : source.find("\n    def ", start)]  # the rest of the function
        uses = re.findall(r"[^\n]*\bsession_state\b[^\n]*", body)
        assert uses, "the read is used"
        for line in uses:
            line = line.split("#")[0]  # Streamlit's comments may name it
            left = re.sub(r"key in session_state|session_state\[key\]|get_session_state\(\)", "", line)
            assert not re.search(r"\bsession_state\b", left), f"{name} reads filtered_state otherwise: {line.strip()}"


def _view_script():
    import streamlit as st
    from streamlit.runtime.state import get_session_state

    from ui.streamlit_internals.server import OneKeyView

    st.session_state.setdefault("plain", 3)
    st.session_state.setdefault("none_value", None)
    st.selectbox("keyed", ["a", "b"], key="keyed")
    st.selectbox("keyless", ["a", "b"])
    st.number_input("n", key="n", value=2)
    session = get_session_state()
    full = session.filtered_state
    view = OneKeyView(session)
    for key in ["plain", "none_value", "keyed", "n", "missing", "keyless", *full]:
        assert (key in view) == (key in full), key
        if key in full:
            assert view[key] == full[key], key
    st.session_state["checked"] = sorted(full)


def test_the_view_answers_as_filtered_state_for_set_unset_widget_and_missing_keys():
    at = AppTest.from_function(_view_script, default_timeout=TIMEOUT).run()
    assert not at.exception
    assert {"plain", "none_value", "keyed", "n"} <= set(at.session_state["checked"])
    at.selectbox(key="keyed").select("b").run()
    assert not at.exception
    at.number_input(key="n").set_value(7).run()
    assert not at.exception


def _none_script():
    import streamlit as st

    if st.session_state.setdefault("first", True):
        st.session_state["first"] = False
        st.session_state["pick"] = None
        st.session_state["count"] = None
        st.session_state["word"] = None
        st.session_state["choice"] = None
        st.session_state["text"] = None
    st.selectbox("pick", ["a", "b"], key="pick")
    st.number_input("count", value=4, key="count")
    st.text_input("word", value="x", key="word")
    st.radio("choice", ["p", "q"], key="choice")
    st.text_area("text", value="y", key="text")
    st.slider("s", 0, 9, 5, key="s")


def _values(at):
    return (
        at.selectbox(key="pick").value,
        at.number_input(key="count").value,
        at.text_input(key="word").value,
        at.radio(key="choice").value,
        at.text_area(key="text").value,
        at.slider(key="s").value,
    )


def test_widgets_set_to_none_through_the_session_stay_empty_with_the_fix(fixed):
    """The one thing the widgets ask filtered_state: a key set to None empties the widget. A view that
    said 'not set' would show each widget's default instead."""
    assert server.WIDGET_MODULES  # the fixture applied it
    at = AppTest.from_function(_none_script, default_timeout=TIMEOUT).run()
    assert not at.exception
    assert _values(at) == (None, None, None, None, None, 5)
    at.run()  # and on the next run
    assert _values(at) == (None, None, None, None, None, 5)
    at.selectbox(key="pick").select("b").run()
    at.slider(key="s").set_value(8).run()
    assert _values(at) == ("b", None, None, None, None, 8)


def test_the_fix_is_applied_once_and_keeps_streamlits_other_session_calls(fixed):
    read_widget_keys_one_by_one()  # again: wraps nothing twice
    for name in WIDGET_MODULES:
        patched = importlib.import_module(name).get_session_state
        assert patched._reads_one_key
        assert not getattr(patched.replaced, "_reads_one_key", False)


def test_the_app_applies_the_fix():
    AppTest.from_file(str(APP), default_timeout=TIMEOUT).run()
    for name in WIDGET_MODULES:
        patched = importlib.import_module(name).get_session_state
        assert getattr(patched, "_reads_one_key", False), f"entry 'widgets-read-one-key' is not applied in {name}"


# ---------------------------------------------------------------- the script thread's messages
def _on_a_thread_of_its_own(test):
    """Run `test` on a new thread: an earlier test of the suite (Playwright's sync API) may leave an event loop
    running on the main thread, where no other loop can run."""
    import functools

    @functools.wraps(test)
    def run():
        failure: list[BaseException] = []

        def body():
            try:
                test()
            except BaseException as exc:  # noqa: BLE001 - raised again on the test's thread
                failure.append(exc)

        thread = threading.Thread(target=body)
        thread.start()
        thread.join()
        if failure:
            raise failure[0]

    return run


@_on_a_thread_of_its_own
def test_callbacks_from_many_threads_run_on_the_loop_in_their_order_with_few_wake_ups():
    loop = asyncio.new_event_loop()
    batch = server._Batch(loop)
    seen: list[tuple[int, int]] = []
    wake_ups = 0
    original = loop.call_soon_threadsafe

    def counting(callback, *args):
        nonlocal wake_ups
        wake_ups += 1
        return original(callback, *args)

    loop.call_soon_threadsafe = counting
    threads = [
        threading.Thread(target=lambda t=t: [batch.add(lambda i=i: seen.append((t, i))) for i in range(500)])
        for t in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    loop.run_until_complete(asyncio.sleep(0.01))
    loop.close()
    assert len(seen) == 2000
    for t in range(4):
        assert [i for s, i in seen if s == t] == list(range(500)), "one thread's callbacks kept their order"
    assert wake_ups == 1, "the loop ran nothing while they were added: one wake-up for all"


@_on_a_thread_of_its_own
def test_a_failing_callback_is_reported_and_the_rest_still_run():
    loop = asyncio.new_event_loop()
    reported: list[dict] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    batch = server._Batch(loop)
    seen: list[int] = []
    batch.add(lambda: seen.append(1))
    batch.add(lambda: 1 / 0)
    batch.add(lambda: seen.append(3))
    loop.run_until_complete(asyncio.sleep(0))
    batch.add(lambda: seen.append(4))  # a later batch wakes the loop again
    loop.run_until_complete(asyncio.sleep(0))
    loop.close()
    assert seen == [1, 3, 4]
    assert len(reported) == 1 and isinstance(reported[0]["exception"], ZeroDivisionError)


@_on_a_thread_of_its_own
def test_callbacks_for_a_closed_loop_are_dropped_as_streamlit_drops_them():
    loop = asyncio.new_event_loop()
    loop.close()
    batch = server._Batch(loop)
    batch.add(lambda: None)  # no RuntimeError
    assert not batch.waiting and not batch.scheduled


@_on_a_thread_of_its_own
def test_a_message_enqueued_on_the_loop_sets_need_send_data_without_the_pipe():
    from types import SimpleNamespace

    loop = asyncio.new_event_loop()
    objects = SimpleNamespace(eventloop=loop, need_send_data=asyncio.Event())
    runtime = SimpleNamespace(_get_async_objs=lambda: objects)
    loop.call_soon_threadsafe = None  # would fail if it were used from the loop's own thread

    async def on_the_loop():
        server._enqueued_some_message(runtime)
        await asyncio.sleep(0)
        return objects.need_send_data.is_set()

    assert loop.run_until_complete(on_the_loop())
    loop.close()


def test_the_batches_replace_streamlits_two_functions_and_keep_them():
    from streamlit.runtime.app_session import AppSession
    from streamlit.runtime.runtime import Runtime

    server.batch_script_events()
    assert AppSession._call_soon_on_event_loop is server._call_soon_on_event_loop
    assert Runtime._enqueued_some_message is server._enqueued_some_message
    body = inspect.getsource(server._call_soon_on_event_loop.replaced)
    assert "self._event_loop.call_soon_threadsafe(callback)" in body
    body = inspect.getsource(server._enqueued_some_message.replaced)
    assert "async_objs.eventloop.call_soon_threadsafe(async_objs.need_send_data.set)" in body


# ---------------------------------------------------------------- the registry: versions, sources, warnings
ROOT = Path(__file__).resolve().parents[1]
SOURCES = [(e.name, source) for e in ENTRIES for source in e.sources]


def test_the_installed_versions_are_the_pinned_ones():
    assert streamlit_internals.installed_versions() == PINNED, (
        "every entry of ui/streamlit_internals was checked against PINNED: follow docs/maintenance.md to upgrade"
    )


def test_requirements_pin_the_versions_the_entries_were_checked_against():
    requirements = (ROOT / "requirements.txt").read_text()
    for name, version in PINNED.items():
        assert re.search(rf"^{name}=={re.escape(version)}\s*$", requirements, re.M), f"requirements.txt: {name}"


@pytest.mark.parametrize(("name", "source"), SOURCES, ids=[f"{n}|{s}" for n, s in SOURCES])
def test_each_source_an_entry_depends_on_is_the_pinned_one(name, source):
    """The whole text of what an entry replaces or reads: any change to it, anywhere, fails here by name."""
    try:
        found = streamlit_internals.source_hash(source)
    except (ImportError, AttributeError, LookupError, OSError) as err:
        pytest.fail(f"entry {name!r}: {source} is gone ({type(err).__name__}: {err}); see docs/maintenance.md")
    assert found == PINNED_SOURCES[source], (
        f"entry {name!r}: {source} is not the pinned one (sha256 {found}, pinned {PINNED_SOURCES[source]}): "
        "re-read it against the entry, re-measure a speed patch, then update PINNED_SOURCES (docs/maintenance.md)"
    )


def test_every_entry_says_what_it_reads_why_and_what_breaks_without_it():
    assert len(BY_NAME) == len(ENTRIES), "entry names are unique"
    for e in ENTRIES:
        assert all(len(text) > 20 for text in (e.reads, e.why, e.without)), e.name
        assert e.sources and set(e.sources) <= set(PINNED_SOURCES), e.name
    assert set(PINNED_SOURCES) == {s for _, s in SOURCES}, "no pinned hash without an entry that needs it"


def test_each_speed_patch_names_its_measured_gain():
    gains = (ROOT / "docs" / "maintenance.md").read_text()
    for name in ("widgets-read-one-key", "script-events-in-batches", "chart-spec-as-figure"):
        assert re.search(rf"`{name}`[^\n]*\d\.\d\d", gains), f"docs/maintenance.md gives {name}'s paired ratio"


@pytest.fixture
def fresh_warnings():
    streamlit_internals.warn_once.cache_clear()
    yield
    streamlit_internals.warn_once.cache_clear()


def test_a_patch_whose_source_changed_is_left_out_with_a_warning_naming_it(monkeypatch, fresh_warnings):
    changed = {"script-events-in-batches": ["streamlit.runtime.runtime:Runtime._enqueued_some_message"]}
    monkeypatch.setattr(streamlit_internals, "changed_sources", lambda name: changed.get(name, []))
    monkeypatch.setattr(streamlit_internals, "_applied", False)
    applied = []
    monkeypatch.setattr(streamlit_internals, "check_versions", lambda: None)
    monkeypatch.setattr(server, "batch_script_events", lambda: applied.append("batches"))
    monkeypatch.setattr(server, "read_widget_keys_one_by_one", lambda: applied.append("widgets"))
    with pytest.warns(UserWarning, match=r"'script-events-in-batches'.*not applied.*_enqueued_some_message"):
        streamlit_internals.apply_once()
    assert applied == ["widgets"]


def test_another_version_is_said_once(monkeypatch, fresh_warnings):
    monkeypatch.setattr(streamlit_internals, "installed_versions", lambda: {"streamlit": "1.66.0", "plotly": "7.1.0"})
    with pytest.warns(UserWarning, match=r"1\.66\.0.*1\.67\.0"):
        streamlit_internals.check_versions()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        streamlit_internals.check_versions()  # once per process: no second warning


def test_a_missing_session_internal_is_said_by_name(monkeypatch, fresh_warnings):
    from ui.streamlit_internals import session

    monkeypatch.setattr(session, "get_session_state", lambda: object())
    with pytest.warns(UserWarning, match="'browser-widget-keys'"):
        assert session.browser_widget_keys() == set()


def test_spawned_children_are_not_sent_the_main_script():
    import multiprocessing.spawn

    from ui.streamlit_internals.spawn import spawn_without_main

    spawn_without_main()
    spawn_without_main()  # once: the second call wraps nothing
    patched = multiprocessing.spawn.get_preparation_data
    assert not hasattr(patched.replaced, "replaced")
    assert {"init_main_from_path", "init_main_from_name"} & set(patched.replaced("child")), "pytest's main is sent"
    assert not {"init_main_from_path", "init_main_from_name"} & set(patched("child"))


def test_the_frontend_still_sets_the_attribute_the_reconnect_script_watches():
    from ui.streamlit_internals.browser import RECONNECT_JS

    bundle = streamlit_internals.frontend_bundle().read_text(errors="replace")
    assert "data-test-connection-state" in bundle and "data-test-connection-state" in RECONNECT_JS


def test_the_bundled_plotly_still_sets_the_property_the_charts_drawn_script_polls():
    from ui.streamlit_internals.browser import charts_drawn_script

    chunk = streamlit_internals.frontend_bundle("PlotlyChart").read_text(errors="replace")
    assert "_fullData" in chunk and "c._fullData" in charts_drawn_script(4000)


# ---------------------------------------------------------------- nothing outside the package touches an internal
PRODUCT = ("app.py", "ui", "pages", "figures", "lessons", "attention", "classroom", "harness", "bench", "deploy")
# files outside the package that an entry of it names (its `where`) and whose internals it pins
ELSEWHERE = {
    "harness/protocol.py": "browserless-session",
    "harness/load/sessions.py": "plotly-chart-drawn",
    "bench/bench_playground.py": "plotly-chart-drawn",
}
DOCUMENTED = {"os._exit"}  # a leading underscore, but public and documented (the os module's Process Management)
PROJECT = {"app", "ui", "pages", "figures", "lessons", "attention", "classroom", "harness", "bench", "tests"}
PUBLIC_STREAMLIT_MODULES = {"streamlit", "streamlit.testing.v1", "streamlit.components.v1"}
INTERNAL_ATTRIBUTES = {  # third-party names that are internal though they have no leading underscore
    "filtered_state",
    "get_preparation_data",
    "uses_pages_directory",
    "fragment_ids_this_run",
    "is_history_navigation",
    "get_script_run_ctx",
}
FRONTEND_TEXT = ("data-test-connection-state", "pushState", "replaceState", "KeyR", "_fullData")
INTERNALS = ROOT / "ui" / "streamlit_internals"


def private_uses(path: Path) -> list[str]:
    """Every use of a third-party internal in one Python file: imports of private or non-public modules and names,
    private attributes of third-party objects, private keyword arguments to them, the internal names above, and
    the frontend's attributes and history API in the file's strings."""
    tree = ast.parse(path.read_text(), str(path))
    third_party: set[str] = set()  # local names bound to third-party modules and objects
    found = []

    def ours(module: str) -> bool:  # the project's, or a sibling file a script imports (bench/ is on its sys.path)
        return module.split(".")[0] in PROJECT or (path.parent / f"{module.split('.')[0]}.py").is_file()

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not ours(alias.name):
                    third_party.add((alias.asname or alias.name).split(".")[0])
                    if _private_module(alias.name):
                        found.append(f"import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and not ours(node.module):
            if node.module == "__future__":
                continue
            if _private_module(node.module):
                found.append(f"from {node.module} import ...")
            for alias in node.names:
                third_party.add(alias.asname or alias.name)
                if alias.name.startswith("_") or alias.name in INTERNAL_ATTRIBUTES:
                    found.append(f"from {node.module} import {alias.name}")
    docstrings = {id(n.body[0].value) for n in ast.walk(tree) if isinstance(n, DOCUMENTED_NODES) and _docstring(n)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            private = node.attr.startswith("_") and not node.attr.startswith("__")
            if ast.unparse(node) in DOCUMENTED:
                continue
            if node.attr in INTERNAL_ATTRIBUTES or private and _root(node) in third_party:
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Call) and _root(node.func) in third_party:
            found += [f"line {node.lineno}: {kw.arg}=" for kw in node.keywords if kw.arg and kw.arg.startswith("_")]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found += [f"line {node.lineno}: {text!r}" for text in FRONTEND_TEXT if text in node.value]
    return found


DOCUMENTED_NODES = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _docstring(node: ast.AST) -> bool:
    """Whether `node` opens with a docstring (a text that names a frontend attribute there only describes it)."""
    first = node.body[0] if node.body else None
    return isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)


def _private_module(name: str) -> bool:
    parts = name.split(".")
    if parts[0] == "streamlit":
        return name not in PUBLIC_STREAMLIT_MODULES
    return any(part.startswith("_") for part in parts)


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def product_files() -> list[Path]:
    files = []
    for name in PRODUCT:
        path = ROOT / name
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return [f for f in files if INTERNALS not in f.parents and str(f.relative_to(ROOT)) not in ELSEWHERE]


def test_no_module_outside_the_internals_package_touches_a_third_party_internal():
    scanned = {str(f.relative_to(ROOT)) for f in product_files()}
    assert {"app.py", "pages/playground.py", "ui/charts.py", "figures/base.py", "harness/load/run.py"} <= scanned
    uses = {f: private_uses(ROOT / f) for f in sorted(scanned)}
    uses = {f: u for f, u in uses.items() if u}
    assert not uses, f"move these into ui/streamlit_internals (an entry each): {uses}"


@pytest.mark.parametrize(("path", "name"), sorted(ELSEWHERE.items()))
def test_a_file_outside_the_package_with_internals_is_named_by_its_entry(path, name):
    assert path in BY_NAME[name].where, f"entry {name!r} says where it is used: {path}"
    assert private_uses(ROOT / path), f"{path} uses no internal any more: drop it from ELSEWHERE and the entry"


def test_the_scan_passes_over_docstrings_siblings_and_documented_names(tmp_path):
    (tmp_path / "_helper.py").write_text("")
    script = tmp_path / "script.py"
    script.write_text(
        '"""It calls history.pushState."""\nimport os\nfrom _helper import x\n\n\n'
        'def f():\n    """pushState, in words."""\n    os._exit(0)\n    return "history.pushState(x)"\n'
    )
    assert private_uses(script) == ["line 9: 'pushState'"]


def test_the_scan_finds_each_kind_of_internal_the_package_uses():
    """The scan above is not blind: over the package itself it finds an example of every kind."""
    found = "\n".join(use for f in sorted(INTERNALS.glob("*.py")) for use in private_uses(f))
    for example in (
        "from streamlit.runtime.pages_manager import ...",
        "from _plotly_utils.utils import ...",
        "._new_widget_state",
        "AppSession._call_soon_on_event_loop",
        "multiprocessing.spawn.get_preparation_data",
        "'data-test-connection-state'",
        "'pushState'",
        "fragment_ids_this_run",
    ):
        assert example in found, example
    assert not [u for u in private_uses(ROOT / "ui" / "shared_state.py")], "a module that only uses the package"


def test_a_source_with_another_text_is_reported_changed(monkeypatch):
    source = "streamlit.runtime.runtime:Runtime._enqueued_some_message"
    assert streamlit_internals.changed_sources("script-events-in-batches") == []
    monkeypatch.setitem(PINNED_SOURCES, source, "0" * 16)
    assert streamlit_internals.changed_sources("script-events-in-batches") == [source]


def test_a_changed_chart_source_makes_plotly_build_the_figure_with_a_warning(monkeypatch, fresh_warnings):
    import plotly.graph_objects as go

    from ui.streamlit_internals import plotly_chart

    spec = {"data": [{"type": "bar", "y": [1, 2]}], "layout": {}}
    changed: list[str] = []
    monkeypatch.setattr(plotly_chart, "changed_sources", lambda name: changed)
    plotly_chart._prepared_figures_hold.cache_clear()
    assert type(plotly_chart.chart_figure(spec)) is plotly_chart.PreparedFigure
    plotly_chart._prepared_figures_hold.cache_clear()
    changed.append("plotly.tools:return_figure_from_figure_or_data")
    with pytest.warns(UserWarning, match="'chart-spec-as-figure'.*return_figure_from_figure_or_data"):
        fig = plotly_chart.chart_figure(spec)
    assert type(fig) is go.Figure and list(fig.data[0].y) == [1, 2]
    plotly_chart._prepared_figures_hold.cache_clear()


def _button_then_stop():
    import streamlit as st

    st.text_input("Name", key="name")
    st.button("Go", key="go")
    st.stop()


def test_a_move_sends_the_widgets_values_but_not_a_click_left_pressed_by_a_stopped_run():
    """Streamlit resets a button after a run only if the run ends: after st.stop() it stays pressed in the session
    (checked here, on Streamlit's own state), and a move that sent it back would press it again."""
    from streamlit.proto.ClientState_pb2 import ClientState
    from streamlit.testing.v1 import AppTest

    from ui.streamlit_internals.push import page_run_state

    at = AppTest.from_function(_button_then_stop, default_timeout=TIMEOUT)
    at.run()
    at.text_input(key="name").input("ada").run()
    at.button(key="go").click().run()
    states = at.session_state._state._state.get_widget_states()
    pressed = [w.id for w in states if w.WhichOneof("value") == "trigger_value" and w.trigger_value]
    assert len(pressed) == 1 and pressed[0].endswith("go")

    last = ClientState(page_script_hash="abc", page_name="class", query_string="room=X", fragment_id="f")
    sent = page_run_state(last, "causal", "causal=1", states)
    assert (sent.page_name, sent.query_string, sent.page_script_hash, sent.fragment_id) == (
        "causal",
        "causal=1",
        "",
        "",
    )
    assert sent.is_history_navigation and not sent.is_auto_rerun
    kinds = {w.id.rsplit("-", 1)[-1]: w.WhichOneof("value") for w in sent.widget_states.widgets}
    assert kinds == {"name": "string_value"}  # the value kept, the click not
    assert [w.string_value for w in sent.widget_states.widgets] == ["ada"]


def test_the_move_leaves_out_every_kind_of_value_streamlit_resets_after_a_run():
    from streamlit.runtime.state.session_state import _TRIGGER_PROTO_FIELDS

    from ui.streamlit_internals.push import TRIGGERS

    assert set(TRIGGERS) == set(_TRIGGER_PROTO_FIELDS)  # a Streamlit with a new kind of event: add it to TRIGGERS
