"""The watcher that pushes the teacher's actions to the students' screens and the students' to the teacher's
(ui/classroom_push.py), against a real store: which pages it moves, which screens it reruns, once, and which
sessions it lets go."""

from __future__ import annotations

import threading
import time

import pytest

from classroom.errors import ClassroomError
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
        self.moved: list[tuple[str, str]] = []  # (session id, view) of each page run asked for
        self.connected: set[str] | None = None  # None: unknown (every session kept)
        self.gone: set[str] = set()
        self.pushed = threading.Event()

    def rerun(self, session_id: str, fragment_id: str) -> bool:
        if session_id in self.gone:
            return False
        self.asked.append((session_id, fragment_id))
        self.pushed.set()
        return True

    def move(self, session_id: str, view: str, fragment_id: str) -> bool:
        if session_id in self.gone:
            return False
        self.moved.append((session_id, view))
        self.pushed.set()
        return True

    def alive(self) -> set[str] | None:
        return self.connected


def test_a_teacher_action_reruns_once_the_bars_of_that_room_and_no_other(store):
    a, b = store.create_room(), store.create_room()
    sessions = Sessions()
    watcher = Watcher(store.pulses, sessions.rerun, alive=sessions.alive)
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
    watcher = Watcher(store.pulses, sessions.rerun, alive=sessions.alive, max_sessions=4)
    for sid, room in (("left", a), ("closed", a), ("gone", a), ("ended", b)):
        assert watcher.follow(sid, room.code, "bar", 0)
    assert not watcher.follow("fifth", a.code, "bar", 0), "the watcher is bounded"
    watcher.forget("left")  # its bar said it left the room
    sessions.connected = {"gone", "ended"}  # "closed": its browser went away
    sessions.gone = {"gone"}  # and this one closed between two looks
    store.lead(a.code, a.teacher_key, "/heads")
    store.close(b.code, b.teacher_key)
    assert watcher.check() == ["ended"], "the bar of a closed room is told once"
    assert watcher.screens == {}
    assert watcher.follow("fifth", a.code, "bar", 1)


def test_the_watching_thread_pushes_a_move_made_by_another_worker(tmp_path, store):
    room = store.create_room()
    other_worker = open_store(store.engine.url.render_as_string(hide_password=False))
    sessions = Sessions()
    watcher = Watcher(store.pulses, sessions.rerun, alive=sessions.alive, every_s=0.05)
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


def test_a_following_student_is_moved_to_the_new_view_and_every_other_change_reruns_the_bar(store):
    room = store.create_room()
    key = room.teacher_key
    sessions = Sessions()
    watcher = Watcher(store.pulses, sessions.rerun, sessions.move, sessions.alive)
    version = store.state(room.code).version
    watcher.follow("new", room.code, "bar", version, at="")  # following, not yet sent anywhere
    watcher.follow("explorer", room.code, "bar", version)  # not following: never moved
    store.lead(room.code, key, "/heads?n_heads=2")
    assert sorted(watcher.check()) == ["explorer", "new"]
    assert sessions.moved == [("new", "/heads?n_heads=2")], "the page runs at once: no bar run first"
    assert sessions.asked == [("explorer", "bar")]
    assert watcher.take_move("new") == "/heads?n_heads=2" and watcher.take_move("new") is None, "taken once"
    assert watcher.check() == [], "asked once"
    version = store.state(room.code).version
    watcher.follow("new", room.code, "bar", version, at="/heads?n_heads=2")  # its run drew the room there
    store.pause(room.code, key, True)  # the view stays: the bar draws the pause
    assert sorted(watcher.check()) == ["explorer", "new"] and ("new", "bar") in sessions.asked
    assert len(sessions.moved) == 1
    store.lead(room.code, key, "/causal")
    store.ask(room.code, key, {"kind": "choice", "prompt": "Which?", "options": ["x", "y"]})
    assert "new" in watcher.check() and sessions.moved[-1] == ("new", "/causal"), "a move and a question at once"
    assert watcher.moves == {"new": "/causal"}
    watcher.forget("new")
    assert watcher.moves == {} and set(watcher.screens) == {"explorer"}


def test_a_teachers_screens_are_redrawn_when_a_student_joins_or_answers_and_not_for_the_teachers_own_move(store):
    room = store.create_room()
    key = room.teacher_key
    sessions = Sessions()
    watcher = Watcher(store.pulses, sessions.rerun, sessions.move, sessions.alive)
    state = store.state(room.code)
    for screen in ("bar", "dashboard"):  # the teacher's bar and, on /class, the dashboard: both pushed
        watcher.follow("teacher", room.code, screen, state.version, activity=state.activity)
    assert watcher.check() == []
    sid = store.join(room.code)
    assert watcher.check() == ["teacher"]
    assert sorted(sessions.asked) == [("teacher", "bar"), ("teacher", "dashboard")]
    assert sessions.moved == [], "a teacher's page is never moved"
    state = store.state(room.code)
    for screen in ("bar", "dashboard"):  # their runs drew the join
        watcher.follow("teacher", room.code, screen, state.version, activity=state.activity)
    watcher.caught_up("teacher", store.lead(room.code, key, "/heads"))
    assert watcher.check() == [], "the teacher's own move: nothing new on the teacher's screens"
    qid = store.ask(room.code, key, {"kind": "choice", "prompt": "Which?", "options": ["x", "y"]})
    assert watcher.check() == ["teacher"], "a question asked from another tab"
    sessions.asked.clear()
    state = store.state(room.code)
    for screen in ("bar", "dashboard"):
        watcher.follow("teacher", room.code, screen, state.version, activity=state.activity)
    store.answer(room.code, sid, qid, 1)
    assert watcher.check() == ["teacher"] and len(sessions.asked) == 2
    assert watcher.check() == []


def test_a_push_that_no_run_answered_is_sent_again_after_the_retry_time_and_not_before(store):
    room = store.create_room()
    sessions = Sessions()
    watcher = Watcher(store.pulses, sessions.rerun, sessions.move, sessions.alive, retry_s=3600)
    watcher.follow("s1", room.code, "bar", store.state(room.code).version, at="")
    store.lead(room.code, room.teacher_key, "/causal")
    assert watcher.check() == ["s1"] and watcher.check() == []
    store.join(room.code)  # the teacher's screens show a join; a student's bar has nothing new: no second move
    assert watcher.check() == [] and sessions.moved == [("s1", "/causal")]
    watcher.retry_s = 0  # as if the retry time had passed: the run that would have redrawn it was lost
    assert watcher.check() == ["s1"]
    assert sessions.moved == [("s1", "/causal"), ("s1", "/causal")]
    watcher.follow("s1", room.code, "bar", store.state(room.code).version, at="/causal")  # its run came
    assert watcher.check() == [] and len(sessions.moved) == 2


def test_the_students_of_a_worker_share_one_read_of_the_room_until_a_look_finds_it_changed(store):
    room = store.create_room()
    sessions = Sessions()
    watcher = Watcher(store.pulses, sessions.rerun, sessions.move, sessions.alive)
    reads = []

    def read(code):
        reads.append(code)
        return store.state(code)

    assert watcher.room_state(room.code, read).version == 0 and len(reads) == 1, "no look yet: read"
    watcher.follow("s1", room.code, "bar", 0, at="")
    watcher.check()
    for _ in range(30):
        assert watcher.room_state(room.code, read).view is None
    assert len(reads) == 2, "one read for thirty screens"
    store.lead(room.code, room.teacher_key, "/causal")
    assert watcher.room_state(room.code, read).view is None, "a change the watcher has not seen yet"
    watcher.check()  # it sees it, and pushes the screen: its run reads the room again
    assert watcher.room_state(room.code, read).view == "/causal" and len(reads) == 3
    store.join(room.code)  # activity
    watcher.check()
    assert watcher.room_state(room.code, read).seats == 1 and len(reads) == 4
    store.close(room.code, room.teacher_key)
    watcher.check()
    with pytest.raises(ClassroomError):
        watcher.room_state(room.code, read)
    assert watcher.states == {}


def test_a_write_of_this_process_wakes_the_watcher_at_once(store):
    room = store.create_room()
    sessions = Sessions()
    watcher = Watcher(store.pulses, sessions.rerun, sessions.move, sessions.alive, every_s=3600)
    store.after_write.append(watcher.poke)
    try:
        watcher.follow("s1", room.code, "bar", store.state(room.code).version, at="")
        watcher.start()
        store.lead(room.code, room.teacher_key, "/causal")
        assert sessions.pushed.wait(timeout=30), "not an hour later"
        assert sessions.moved == [("s1", "/causal")]
    finally:
        watcher.stop()


@pytest.mark.parametrize(
    ("value", "seconds"),
    [(None, 30.0), ("3600", 3600.0), ("90", 90.0), ("1", 5.0), ("1e9", 3600.0), ("soon", 30.0), ("nan", 30.0)],
)
def test_the_bars_safety_timer_is_read_from_the_environment_within_bounds(monkeypatch, value, seconds):
    from ui.classroom_session import _safety_seconds

    if value is None:
        monkeypatch.delenv("ATTENTION_CLASS_SAFETY_S", raising=False)
    else:
        monkeypatch.setenv("ATTENTION_CLASS_SAFETY_S", value)
    assert _safety_seconds() == seconds


def test_the_heartbeat_tells_the_store_who_is_connected_and_pushes_the_teacher_when_the_count_changes(tmp_path):
    from classroom.store import Limits

    now = [1_800_000_000.0]
    store = open_store(f"sqlite:///{tmp_path / 'beat.db'}", Limits(here_s=60), clock=lambda: now[0])
    room = store.create_room()
    ada, bob = store.join(room.code, "ada"), store.join(room.code, "bob")
    sessions = Sessions()
    watcher = Watcher(
        store.pulses, sessions.rerun, alive=sessions.alive, seen=store.seen, here=store.here, heartbeat_s=15
    )
    version = store.state(room.code).version
    watcher.follow("teacher", room.code, "bar-t", version, activity=2, leader="w/teacher")
    watcher.follow("s-ada", room.code, "bar-a", version, seat=ada)
    watcher.follow("s-bob", room.code, "bar-b", version, seat=bob)
    store.take_lead(room.code, room.teacher_key, "w/teacher")
    assert watcher.heartbeat(now=100.0) == []  # the first beat: nothing to compare the count with
    assert watcher.heartbeat(now=110.0) == [], "not before heartbeat_s"
    now[0] += 61
    sessions.connected = {"teacher", "s-ada"}  # bob's browser went away
    assert watcher.heartbeat(now=116.0) == ["teacher"], "one student fewer here: the teacher's screen redraws"
    state = store.state(room.code)
    assert (state.here, state.seats, state.leader_seen_at) == (1, 2, now[0])
    assert watcher.heartbeat(now=131.0) == [], "the same count: nothing to redraw"
    store.engine.dispose()


def test_a_database_that_stops_answering_is_logged_once_a_minute_not_at_every_look(caplog):
    from classroom.errors import StoreUnavailable
    from ui import classroom_push

    calls = []

    def heads(codes):
        calls.append(codes)
        raise StoreUnavailable("the classroom database postgresql+psycopg://u:***@db/x cannot be used: refused")

    watcher = Watcher(heads, lambda *_: True, every_s=0.01)
    watcher.follow("s1", "ABCDEF", "bar", 0)
    classroom_push._logged.clear()
    with caplog.at_level("WARNING", logger="ui.classroom_push"):
        watcher.start()
        import time

        give_up = time.monotonic() + 30
        while len(calls) < 20 and time.monotonic() < give_up:
            threading.Event().wait(0.01)  # the watcher's looks, counted until there are twenty
        watcher.stop()
    lines = [r for r in caplog.records if "cannot be used" in r.getMessage()]
    assert len(calls) >= 20 and len(lines) == 1, "one line for twenty looks"
    assert lines[0].exc_info is None, "a known outage is one line, no traceback"


def test_a_leading_tab_that_goes_away_lets_go_of_the_lead_at_the_next_look(store):
    room = store.create_room()
    store.take_lead(room.code, room.teacher_key, "w/projector")
    sessions = Sessions()
    watcher = Watcher(store.pulses, sessions.rerun, alive=sessions.alive, release=store.release_leads)
    version = store.state(room.code).version
    watcher.follow("projector", room.code, "bar", version, activity=0, leader="w/projector")
    watcher.follow("laptop", room.code, "bar-l", version, activity=0)
    sessions.connected = {"projector", "laptop"}
    watcher.check()
    assert store.state(room.code).leader == "w/projector"
    sessions.connected = {"laptop"}  # the projected tab reloaded: its old session has gone
    assert watcher.check() == ["laptop"], "the other tab's bar is told (the room's version moved)"
    assert store.state(room.code).leader is None


def test_a_screen_woken_for_a_time_is_redrawn_once_then_although_its_room_did_not_change(store):
    # a question with a time: the student's bar must close its answer box when the time is up, with no write
    room = store.create_room()
    sessions = Sessions()
    watcher = Watcher(store.pulses, sessions.rerun, sessions.move, sessions.alive)
    watcher.follow("s1", room.code, "bar", store.state(room.code).version)
    watcher.follow("s2", room.code, "bar", store.state(room.code).version)
    now = time.monotonic()
    assert watcher.redraw_at("s1", "bar", now + 3600) and not watcher.redraw_at("s3", "bar", now)  # s3: not watched
    assert watcher.check() == [] and sessions.asked == [], "not before its time"
    watcher.redraw_at("s1", "bar", now)
    assert watcher.check() == ["s1"] and sessions.asked == [("s1", "bar")]
    assert watcher.check() == [], "once"
    watcher.follow("s1", room.code, "bar", store.state(room.code).version)  # its run came: a new screen, no wake
    assert watcher.check() == []


# ---------------------------------------------------------------- several hosts on one PostgreSQL: LISTEN/NOTIFY


@pytest.fixture(scope="module")
def postgres():
    from harness.postgres import Postgres

    server = Postgres()
    yield server
    server.stop()


def _listening(watcher: Watcher, timeout_s: float = 30.0) -> bool:
    """Wait until the watcher's LISTEN holds (its first `heard`), or the time is up."""
    end = time.monotonic() + timeout_s
    while not watcher.listening and time.monotonic() < end:
        time.sleep(0.01)
    return watcher.listening


def test_postgresql_tells_the_watcher_of_another_host_at_once_without_its_looks(postgres):
    url = postgres.new_database()
    host_a, host_b = open_store(url), open_store(url)  # two engines: two hosts sharing one database
    room = host_a.create_room()
    sessions = Sessions()
    # looks an hour apart: only the database's notification can move the student within the test's wait
    watcher = Watcher(host_b.pulses, sessions.rerun, sessions.move, sessions.alive, every_s=3600, listen_every_s=3600)
    watcher.listen = host_b.listen
    try:
        assert host_b.listens()
        watcher.follow("s1", room.code, "bar", host_b.state(room.code).version, at="")
        watcher.start()
        assert _listening(watcher)
        assert watcher.next_look_s() == 3600
        sessions.pushed.clear()
        t0 = time.monotonic()
        host_a.lead(room.code, room.teacher_key, "/causal")
        assert sessions.pushed.wait(timeout=10), "host B was not told of host A's move"
        assert sessions.moved == [("s1", "/causal")]
        assert time.monotonic() - t0 < 2.0
    finally:
        watcher.stop()
        host_a.engine.dispose()
        host_b.engine.dispose()


def test_a_lost_listening_connection_is_listened_again_and_no_write_is_missed(postgres):
    url = postgres.new_database()
    host_a, host_b = open_store(url), open_store(url)
    room = host_a.create_room()
    sessions = Sessions()
    watcher = Watcher(host_b.pulses, sessions.rerun, sessions.move, sessions.alive, every_s=3600, listen_every_s=3600)
    watcher.listen = host_b.listen
    try:
        watcher.follow("s1", room.code, "bar", host_b.state(room.code).version, at="")
        watcher.start()
        assert _listening(watcher)
        dbname = host_b.engine.url.database
        postgres.psql(  # the database drops the LISTEN connection (a restart, a network cut)
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            f" WHERE datname = '{dbname}' AND query LIKE 'LISTEN%'"
        )
        host_a.lead(room.code, room.teacher_key, "/heads")  # written while nobody may be listening
        assert sessions.pushed.wait(timeout=30), "the move written during the cut never reached host B's student"
        assert sessions.moved == [("s1", "/heads")]
        assert _listening(watcher)
    finally:
        watcher.stop()
        host_a.engine.dispose()
        host_b.engine.dispose()


def test_sqlite_does_not_listen_and_the_watcher_looks_every_half_second(store):
    assert not store.listens()
    watcher = Watcher(store.pulses, Sessions().rerun)
    assert watcher.listen is None and watcher.next_look_s() == 0.5


def test_a_screen_due_to_wake_shortens_the_wait_of_a_listening_watcher(store):
    room = store.create_room()
    watcher = Watcher(store.pulses, Sessions().rerun, every_s=0.5, listen_every_s=2.0)
    watcher.listening = True
    watcher.follow("s1", room.code, "bar", store.state(room.code).version)
    assert watcher.next_look_s(now=0.0) == 2.0
    watcher.redraw_at("s1", "bar", 0.75)
    assert watcher.next_look_s(now=0.0) == 0.75
    assert watcher.next_look_s(now=1.0) == 0.0
