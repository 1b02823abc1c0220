"""ui.streamlit_fixes: the widgets' key-by-key view of Session State answers as Streamlit's own dict does."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import re
import threading

import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest_helpers import APP, TIMEOUT
from ui import streamlit_fixes
from ui.streamlit_fixes import WIDGET_MODULES, read_widget_keys_one_by_one


@pytest.fixture
def fixed(monkeypatch):
    """The fix applied for one test, and Streamlit's own functions put back after it."""
    for name in WIDGET_MODULES:
        module = importlib.import_module(name)
        original = getattr(module.get_session_state, "original", module.get_session_state)
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

    from ui.streamlit_fixes import OneKeyView

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
    at = AppTest.from_function(_view_script).run()
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
    assert streamlit_fixes.WIDGET_MODULES  # the fixture applied it
    at = AppTest.from_function(_none_script).run()
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
        assert not getattr(patched.original, "_reads_one_key", False)


def test_the_app_applies_the_fix():
    AppTest.from_file(str(APP), default_timeout=TIMEOUT).run()
    for name in WIDGET_MODULES:
        assert importlib.import_module(name).get_session_state._reads_one_key, name


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
    batch = streamlit_fixes._Batch(loop)
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
    batch = streamlit_fixes._Batch(loop)
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
    batch = streamlit_fixes._Batch(loop)
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
        streamlit_fixes._enqueued_some_message(runtime)
        await asyncio.sleep(0)
        return objects.need_send_data.is_set()

    assert loop.run_until_complete(on_the_loop())
    loop.close()


def test_the_pinned_streamlit_wakes_its_loop_as_the_fix_expects():
    """The two functions replaced: if Streamlit changes them, the fix may be wrong; fail here."""
    from streamlit.runtime.app_session import AppSession
    from streamlit.runtime.runtime import Runtime

    streamlit_fixes.batch_script_events()
    assert AppSession._call_soon_on_event_loop is streamlit_fixes._call_soon_on_event_loop
    originals = streamlit_fixes.STREAMLIT_ORIGINALS
    body = inspect.getsource(originals["AppSession._call_soon_on_event_loop"])
    assert "self._event_loop.call_soon_threadsafe(callback)" in body
    body = inspect.getsource(originals["Runtime._enqueued_some_message"])
    assert "async_objs.eventloop.call_soon_threadsafe(async_objs.need_send_data.set)" in body
    assert Runtime._enqueued_some_message is streamlit_fixes._enqueued_some_message
