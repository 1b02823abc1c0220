"""ui.server_process.freeze_long_lived: after a run that imported new code, the objects alive are frozen (the cyclic
collector stops walking them), after one full collection so that no garbage is frozen; a run that imported
nothing costs no collection; and the app calls it on every run."""

from __future__ import annotations

import gc
import sys
import types
import weakref
from pathlib import Path

import pytest

import ui.server_process as process


class _Node:
    """An object that can sit in a reference cycle and be watched through a weak reference."""


@pytest.fixture
def collections():
    """The collections the garbage collector runs while the test does, by generation."""
    seen: list[int] = []

    def watch(phase, info):
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(watch)
    yield seen
    gc.callbacks.remove(watch)
    gc.unfreeze()  # leave the rest of the suite's process as it was


def test_new_code_is_frozen_after_a_full_collection_and_nothing_else_costs_a_collection(collections, monkeypatch):
    monkeypatch.setattr(process, "_modules_at_freeze", 0)
    garbage = _Node()
    garbage.itself = garbage  # a reference cycle: only the cyclic collector can free it
    gone = weakref.ref(garbage)
    del garbage

    process.freeze_long_lived()
    assert 2 in collections  # a full collection first...
    assert gone() is None  # ...so the cycle was freed, not frozen
    assert gc.get_freeze_count() > 0

    collections.clear()
    frozen = gc.get_freeze_count()
    gc_was_enabled = gc.isenabled()
    gc.disable()  # so that only freeze_long_lived could start a collection
    try:
        process.freeze_long_lived()  # nothing imported since: nothing to do
        assert collections == [] and gc.get_freeze_count() == frozen

        monkeypatch.setitem(sys.modules, "attention_test_new_module", types.ModuleType("attention_test_new_module"))
        process.freeze_long_lived()  # a new module: collect and freeze again
        assert collections == [2]
    finally:
        if gc_was_enabled:
            gc.enable()


def test_a_run_of_the_app_freezes(collections, monkeypatch):
    from streamlit.testing.v1 import AppTest

    gc.unfreeze()
    monkeypatch.setattr(process, "_modules_at_freeze", 0)  # as in a fresh server process
    at = AppTest.from_file(str(Path(__file__).parents[1] / "app.py"), default_timeout=60).run()
    assert not at.exception
    assert gc.get_freeze_count() > 0 and 2 in collections
