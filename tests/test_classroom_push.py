"""The watcher that pushes the teacher's actions to the students' bars (ui/classroom_push.py), against a real
store: which bars it reruns, once, and which sessions it lets go."""

from __future__ import annotations

import threading

import pytest

from classroom.store import open_store
from ui.classroom_push import Watcher


@pytest.fixture
def store(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'classroom.db'}")
    yield store
    store.engine.dispose()


class Sessions:
    """The server's side, recorded: which bars were asked to rerun, and which sessions are connected."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []
        self.connected: set[str] | None = None  # None: unknown (every session kept)
        self.gone: set[str] = set()
        self.pushed = threading.Event()

    def rerun(self, session_id: str, fragment_id: str) -> bool:
        if session_id in self.gone:
            return False
        self.asked.append((session_id, fragment_id))
        self.pushed.set()
        return True

    def alive(self) -> set[str] | None:
        return self.connected


def test_a_teacher_action_reruns_once_the_bars_of_that_room_and_no_other(store):
    a, b = store.create_room(), store.create_room()
    sessions = Sessions()
    watcher = Watcher(store.versions, sessions.rerun, sessions.alive)
    for sid, room in (("s1", a), ("s2", a), ("s3", b)):
        watcher.follow(sid, room.code, f"bar-{sid}", store.state(room.code).version)
    assert watcher.check() == [] and sessions.asked == []
    store.lead(a.code, a.teacher_key, "/heads")
    assert sorted(watcher.check()) == ["s1", "s2"]
    assert sorted(sessions.asked) == [("s1", "bar-s1"), ("s2", "bar-s2")]
    assert watcher.check() == [], "asked once, not every second until the bar reruns"
    watcher.follow("s1", a.code, "bar-s1", store.state(a.code).version)  # s1's bar reran
    for action in (
        lambda: store.pause(a.code, a.teacher_key, True),
        lambda: store.ask(a.code, a.teacher_key, {"kind": "choice", "prompt": "Which?", "options": ["x", "y"]}),
        lambda: store.gather(a.code, a.teacher_key),
    ):
        action()
        assert "s1" in watcher.check()
        watcher.follow("s1", a.code, "bar-s1", store.state(a.code).version)
    assert "s3" not in {sid for sid, _ in sessions.asked}


def test_sessions_that_left_closed_or_whose_room_ended_are_let_go(store):
    a, b = store.create_room(), store.create_room()
    sessions = Sessions()
    watcher = Watcher(store.versions, sessions.rerun, sessions.alive, max_sessions=4)
    for sid, room in (("left", a), ("closed", a), ("gone", a), ("ended", b)):
        assert watcher.follow(sid, room.code, "bar", 0)
    assert not watcher.follow("fifth", a.code, "bar", 0), "the watcher is bounded"
    watcher.forget("left")  # its bar said it left the room
    sessions.connected = {"gone", "ended"}  # "closed": its browser went away
    sessions.gone = {"gone"}  # and this one closed between two looks
    store.lead(a.code, a.teacher_key, "/heads")
    store.close(b.code, b.teacher_key)
    assert watcher.check() == ["ended"], "the bar of a closed room is told once"
    assert watcher.bars == {}
    assert watcher.follow("fifth", a.code, "bar", 1)


def test_the_watching_thread_pushes_a_move_made_by_another_worker(tmp_path, store):
    room = store.create_room()
    other_worker = open_store(store.engine.url.render_as_string(hide_password=False))
    sessions = Sessions()
    watcher = Watcher(store.versions, sessions.rerun, sessions.alive, every_s=0.05)
    try:
        watcher.follow("s1", room.code, "bar", store.state(room.code).version)
        watcher.start()
        watcher.start()  # once
        other_worker.lead(room.code, room.teacher_key, "/causal")
        assert sessions.pushed.wait(timeout=30)
        assert sessions.asked[0] == ("s1", "bar")
    finally:
        watcher.stop()
        other_worker.engine.dispose()


@pytest.mark.parametrize(
    ("value", "seconds"),
    [(None, 30.0), ("3600", 3600.0), ("90", 90.0), ("1", 5.0), ("1e9", 3600.0), ("soon", 30.0), ("nan", 30.0)],
)
def test_the_bars_safety_timer_is_read_from_the_environment_within_bounds(monkeypatch, value, seconds):
    from ui.classroom_room import _safety_seconds

    if value is None:
        monkeypatch.delenv("ATTENTION_CLASS_SAFETY_S", raising=False)
    else:
        monkeypatch.setenv("ATTENTION_CLASS_SAFETY_S", value)
    assert _safety_seconds() == seconds
