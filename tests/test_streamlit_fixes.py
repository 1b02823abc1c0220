"""ui.streamlit_fixes: the widgets' key-by-key view of Session State answers as Streamlit's own dict does."""

from __future__ import annotations

import importlib
import inspect
import re

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
