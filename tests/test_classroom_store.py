"""The classroom store against SQLite and a real PostgreSQL: the issue's API, one test per security rule,
the limits, the migrations, and thirty students answering at once."""

from __future__ import annotations

import csv
import hashlib
import io
import re
import threading
from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, select, text

from classroom import errors
from classroom.codes import CODE_ALPHABET
from classroom.schema import SCHEMA_VERSION, answers, current_version, migrate, rooms, students, version_table
from classroom.store import Limits, default_url, open_store
from harness.postgres import Postgres

CHOICE = {"kind": "choice", "prompt": "Which key will q_1 attend to most?", "options": ["k_0", "k_1", "k_2"]}
ROOT = Path(__file__).resolve().parents[1]
WEIGHT = {"kind": "number", "prompt": "What weight will q_1 give k_2?", "lo": 0.0, "hi": 1.0}


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="session")
def postgres():
    server = Postgres()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'classroom.db'}"
    return request.getfixturevalue("postgres").new_database()


@pytest.fixture
def stores(url):
    """Make stores on this test's database (several: several workers); their engines are closed after."""
    made = []

    def make(limits: Limits | None = None, clock=None):
        store = open_store(url, limits, clock or Clock())
        made.append(store)
        return store

    yield make
    for store in made:
        store.engine.dispose()


def test_the_issue_api_round_trip(stores):
    store = stores()
    room = store.create_room()
    sid = store.join(room.code, nickname=None)
    assert store.current_view(room.code) is None
    store.lead(room.code, room.teacher_key, "/causal?causal=1")
    assert store.current_view(room.code) == "/causal?causal=1"
    qid = store.ask(room.code, room.teacher_key, CHOICE)
    store.answer(room.code, sid, qid, 1)
    res = store.results(room.code, room.teacher_key, qid)
    assert (res.seats, res.answered, res.values, res.names) == (1, 1, [1], None)
    store.close(room.code, room.teacher_key)
    with pytest.raises(errors.RoomClosed):
        store.join(room.code)


def test_codes_have_six_characters_and_no_look_alikes(stores):
    store = stores()
    assert not set("0O1IL") & set(CODE_ALPHABET)
    codes = {store.create_room().code for _ in range(40)}
    assert len(codes) == 40
    assert all(len(c) == 6 and set(c) <= set(CODE_ALPHABET) for c in codes)
    code = sorted(codes)[0]
    assert store.join(f" {code[:3].lower()} {code[3:]} ")  # typed in lower case with spaces: the same room


def test_the_teacher_key_is_stored_only_as_its_hash(stores):
    store = stores()
    room = store.create_room()
    with store.engine.connect() as conn:
        row = conn.execute(select(rooms).where(rooms.c.code == room.code)).mappings().one()
    assert room.teacher_key not in [str(v) for v in row.values()]
    assert row["teacher_hash"] == hashlib.sha256(room.teacher_key.encode()).hexdigest()
    assert len(room.teacher_key) >= 32


TEACHER_ACTIONS = {
    "check_teacher": lambda s, c, k, q: s.check_teacher(c, k),
    "lead": lambda s, c, k, q: s.lead(c, k, "/heads"),
    "pause": lambda s, c, k, q: s.pause(c, k, True),
    "gather": lambda s, c, k, q: s.gather(c, k),
    "ask": lambda s, c, k, q: s.ask(c, k, CHOICE),
    "reveal": lambda s, c, k, q: s.reveal(c, k, q, 0),
    "end_question": lambda s, c, k, q: s.end_question(c, k),
    "results": lambda s, c, k, q: s.results(c, k, q, names=True),
    "questions": lambda s, c, k, q: s.questions(c, k),
    "export_csv": lambda s, c, k, q: s.export_csv(c, k),
    "close": lambda s, c, k, q: s.close(c, k),
}


@pytest.mark.parametrize("action", TEACHER_ACTIONS)
def test_a_forged_or_missing_teacher_key_is_refused(stores, action):
    store = stores()
    room, other = store.create_room(), store.create_room()
    sid = store.join(room.code)
    qid = store.ask(room.code, room.teacher_key, CHOICE)
    for key in ["forged", "", None, other.teacher_key, sid, room.teacher_key.upper()]:
        with pytest.raises(PermissionError):
            TEACHER_ACTIONS[action](store, room.code, key, qid)
    state = store.state(room.code)  # nothing changed (asking gathered the class once)
    assert (state.view, state.paused, state.gather, state.question.id) == (None, False, 1, qid)
    assert not state.question.revealed
    TEACHER_ACTIONS[action](store, room.code, room.teacher_key, qid)  # the real key works


def test_a_student_cannot_answer_as_another(stores):
    store = stores()
    room, other = store.create_room(), store.create_room()
    alice, bob = store.join(room.code, "alice"), store.join(room.code, "bob")
    outsider = store.join(other.code)
    qid = store.ask(room.code, room.teacher_key, CHOICE)
    store.answer(room.code, alice, qid, 0)
    store.answer(room.code, bob, qid, 2)
    for forged in [outsider, "made-up-id", "", None, room.teacher_key]:
        with pytest.raises(errors.UnknownStudent):
            store.answer(room.code, forged, qid, 1)
    assert sorted(store.results(room.code, room.teacher_key, qid).values) == [0, 2]
    assert store.my_answer(room.code, alice, qid) == 0 and store.my_answer(room.code, bob, qid) == 2


def test_a_question_of_another_room_cannot_be_answered(stores):
    store = stores()
    room, other = store.create_room(), store.create_room()
    sid = store.join(room.code)
    store.ask(room.code, room.teacher_key, CHOICE)
    foreign = store.ask(other.code, other.teacher_key, CHOICE)
    with pytest.raises(errors.UnknownQuestion):
        store.answer(room.code, sid, foreign, 0)
    assert store.results(other.code, other.teacher_key, foreign).answered == 0


def test_a_closed_room_refuses_joins_and_answers_but_keeps_them(stores):
    store = stores()
    room = store.create_room()
    sid = store.join(room.code)
    qid = store.ask(room.code, room.teacher_key, CHOICE)
    store.answer(room.code, sid, qid, 1)
    store.close(room.code, room.teacher_key)
    for refused in [
        lambda: store.join(room.code),
        lambda: store.answer(room.code, sid, qid, 2),
        lambda: store.state(room.code),
        lambda: store.lead(room.code, room.teacher_key, "/heads"),
    ]:
        with pytest.raises(errors.RoomClosed, match="closed"):
            refused()
    assert store.results(room.code, room.teacher_key, qid).values == [1]  # the teacher can still export


def test_a_room_expires_after_twelve_hours(stores):
    clock = Clock()
    store = stores(clock=clock)
    room = store.create_room()
    sid = store.join(room.code)
    clock.now += 12 * 3600 - 1
    store.join(room.code)
    clock.now += 1
    with pytest.raises(errors.RoomExpired, match="expired"):
        store.join(room.code)
    with pytest.raises(errors.RoomExpired):
        store.student(room.code, sid)


def test_a_full_room_refuses_the_next_student(stores):
    store = stores(Limits(students_per_room=3))
    room = store.create_room()
    for _ in range(3):
        store.join(room.code)
    with pytest.raises(errors.RoomFull, match="full: 3 students are in it, the limit is 3"):
        store.join(room.code)
    assert store.state(room.code).seats == 3
    assert Limits().students_per_room == 300


def test_the_server_limits_open_rooms(stores):
    clock = Clock()
    store = stores(Limits(open_rooms=2), clock)
    first, _ = store.create_room(), store.create_room()
    with pytest.raises(errors.TooManyRooms, match="2 open rooms"):
        store.create_room()
    store.close(first.code, first.teacher_key)  # a closed room frees its place
    store.create_room()
    with pytest.raises(errors.TooManyRooms):
        store.create_room()
    clock.now += 12 * 3600  # so do expired ones
    store.create_room(), store.create_room()
    with pytest.raises(errors.TooManyRooms):
        store.create_room()


def test_a_room_limits_its_questions(stores):
    store = stores(Limits(questions_per_room=2))
    room = store.create_room()
    store.ask(room.code, room.teacher_key, CHOICE)
    store.ask(room.code, room.teacher_key, WEIGHT)
    with pytest.raises(errors.TooManyQuestions, match="2 questions"):
        store.ask(room.code, room.teacher_key, CHOICE)


def test_markup_in_a_nickname_is_kept_as_text_and_names_are_the_teachers_choice(stores):
    store = stores()
    room = store.create_room()
    markup = "<b>x</b><script>"
    sid = store.join(room.code, markup)
    anonymous = store.join(room.code, "   ")
    qid = store.ask(room.code, room.teacher_key, CHOICE)
    store.answer(room.code, sid, qid, 1)
    store.answer(room.code, anonymous, qid, 2)
    assert store.student(room.code, sid) == markup and store.student(room.code, anonymous) is None
    assert store.results(room.code, room.teacher_key, qid).names is None  # names only when asked
    assert store.results(room.code, room.teacher_key, qid, names=True).names == [markup, None]
    with pytest.raises(errors.NicknameRefused, match="at most 24"):
        store.join(room.code, "x" * 25)
    with pytest.raises(errors.NicknameRefused, match="control"):
        store.join(room.code, "a\nb")
    assert store.state(room.code).seats == 2


def test_wrong_join_codes_are_rate_limited_per_browser_across_workers(stores):
    clock = Clock()
    limits = Limits(wrong_joins=3, wrong_join_window_s=600)
    worker_a, worker_b = stores(limits, clock), stores(limits, clock)
    room = worker_a.create_room()
    for store, code in [(worker_a, "AAAAAA"), (worker_b, "CCCCCC"), (worker_a, "DDDDDD")]:
        with pytest.raises(errors.RoomNotFound):
            store.join(code, client="10.0.0.7", browser="guesser")
    with pytest.raises(errors.JoinRateLimited, match="3 wrong room codes from this browser"):
        worker_b.join(room.code, client="10.0.0.7", browser="guesser")  # even the right code, typed
    # another student behind the same address (one NAT, one front proxy) with the right code is not held back
    assert worker_b.join(room.code, client="10.0.0.7", browser="student")
    # nor is the guesser's own browser when it opens the student link (its token)
    assert worker_a.join(room.code, client="10.0.0.7", browser="guesser", token=room.link_token)
    clock.now += 601
    assert worker_a.join(room.code, client="10.0.0.7", browser="guesser")


def test_the_last_answer_counts_once_and_the_reveal_ends_answers(stores):
    store = stores()
    room = store.create_room()
    sid = store.join(room.code)
    qid = store.ask(room.code, room.teacher_key, CHOICE)
    store.answer(room.code, sid, qid, 0)
    store.answer(room.code, sid, qid, 2)
    res = store.results(room.code, room.teacher_key, qid)
    assert (res.answered, res.values) == (1, [2])
    store.reveal(room.code, room.teacher_key, qid, 1)
    with pytest.raises(errors.AnswersClosed):
        store.answer(room.code, sid, qid, 1)
    question = store.state(room.code).question
    assert question.revealed and question.truth == [1]
    assert store.my_answer(room.code, sid, qid) == 2


def test_the_true_value_stays_hidden_from_students_until_the_reveal(stores):
    store = stores()
    room = store.create_room()
    sid = store.join(room.code)
    qid = store.ask(room.code, room.teacher_key, CHOICE, truth=2)
    assert store.state(room.code).question.truth is None
    assert store.results(room.code, room.teacher_key, qid).question.truth == [2]  # the teacher's screen
    store.answer(room.code, sid, qid, 2)
    store.reveal(room.code, room.teacher_key, qid)
    assert store.state(room.code).question.truth == [2]
    with pytest.raises(errors.InvalidAnswer):
        store.ask(room.code, room.teacher_key, CHOICE, truth=7)


def test_a_new_question_replaces_the_one_asked(stores):
    store = stores()
    room = store.create_room()
    sid = store.join(room.code)
    first = store.ask(room.code, room.teacher_key, CHOICE)
    second = store.ask(room.code, room.teacher_key, WEIGHT)
    assert store.state(room.code).question.number == 2
    with pytest.raises(errors.AnswersClosed):
        store.answer(room.code, sid, first, 0)
    store.answer(room.code, sid, second, 0.25)
    store.end_question(room.code, room.teacher_key)
    assert store.state(room.code).question is None
    with pytest.raises(errors.AnswersClosed):
        store.answer(room.code, sid, second, 0.5)


@pytest.mark.parametrize(
    "question, bad",
    [(CHOICE, 3), (CHOICE, -1), (CHOICE, True), (CHOICE, "1"), (CHOICE, 1.0), (WEIGHT, 1.5), (WEIGHT, float("nan"))],
)
def test_answers_outside_the_question_are_refused(stores, question, bad):
    store = stores()
    room = store.create_room()
    sid = store.join(room.code)
    qid = store.ask(room.code, room.teacher_key, question)
    with pytest.raises(errors.InvalidAnswer):
        store.answer(room.code, sid, qid, bad)
    assert store.results(room.code, room.teacher_key, qid).answered == 0


@pytest.mark.parametrize(
    "question",
    [
        {"kind": "essay", "prompt": "x"},
        {"kind": "choice", "prompt": "x", "options": ["only one"]},
        {"kind": "choice", "prompt": "", "options": ["a", "b"]},
        {"kind": "number", "prompt": "x", "lo": 1, "hi": 0},
        {"kind": "number", "prompt": "x", "lo": 0, "hi": float("inf")},
        {"kind": "choice", "prompt": "x" * 301, "options": ["a", "b"]},
        ["not", "a", "dict"],
    ],
)
def test_malformed_questions_are_refused(stores, question):
    store = stores()
    room = store.create_room()
    with pytest.raises(errors.InvalidQuestion):
        store.ask(room.code, room.teacher_key, question)


@pytest.mark.parametrize("view", ["https://evil.example/", "//evil.example/x", "causal", "/a\nb", "/" + "x" * 4000])
def test_a_view_is_a_link_within_the_app(stores, view):
    store = stores()
    room = store.create_room()
    with pytest.raises(errors.InvalidView):
        store.lead(room.code, room.teacher_key, view)
    assert store.current_view(room.code) is None


def test_pause_and_gather_reach_every_screen(stores):
    store = stores()
    room = store.create_room()
    store.pause(room.code, room.teacher_key, True)
    assert store.state(room.code).paused
    store.pause(room.code, room.teacher_key, False)
    assert store.gather(room.code, room.teacher_key) == 1
    state = store.state(room.code)
    assert not state.paused and state.gather == 1


def test_every_teacher_action_bumps_the_room_version_and_nothing_else_does(stores):
    clock = Clock()
    store, other_worker = stores(clock=clock), stores(clock=clock)
    room, quiet = store.create_room(), store.create_room()
    key = room.teacher_key
    sid = store.join(room.code)
    seen = [other_worker.pulses([room.code, quiet.code])[room.code].version]
    qid = None

    def ask():
        nonlocal qid
        qid = store.ask(room.code, key, CHOICE, truth=1)

    actions = [
        lambda: store.lead(room.code, key, "/heads"),
        lambda: store.pause(room.code, key, True),
        lambda: store.pause(room.code, key, False),
        lambda: store.gather(room.code, key),
        ask,
        lambda: store.reveal(room.code, key, qid),
        lambda: store.end_question(room.code, key),
    ]
    for action in actions:
        action()
        seen.append(other_worker.pulses([room.code])[room.code].version)
        assert seen[-1] > seen[-2], action
        assert store.state(room.code).version == seen[-1]
    store.lead(room.code, key, "/heads")  # the same view again: nothing for the screens to redraw
    store.join(room.code)
    store.ask(room.code, key, CHOICE)
    before = other_worker.pulses([room.code])[room.code].version
    store.answer(room.code, sid, store.state(room.code).question.id, 0)
    assert other_worker.pulses([room.code])[room.code].version == before, "answers are not teacher actions"
    assert other_worker.pulses([quiet.code])[quiet.code].version == 0


def test_joins_and_answers_bump_the_rooms_activity_and_pulses_read_it_with_the_view(stores):
    clock = Clock()
    store, other_worker = stores(clock=clock), stores(clock=clock)
    room, quiet = store.create_room(), store.create_room()
    key = room.teacher_key
    pulse = other_worker.pulses([room.code, quiet.code])[room.code]
    assert (pulse.version, pulse.activity, pulse.view) == (0, 0, None)
    sid = store.join(room.code)
    assert other_worker.pulses([room.code])[room.code].activity == 1, "a join"
    assert store.lead(room.code, key, "/heads?n_heads=2") == 1, "lead returns the room's version after it"
    assert store.lead(room.code, key, "/heads?n_heads=2") == 1, "the same view again: the same version"
    qid = store.ask(room.code, key, CHOICE)
    pulse = other_worker.pulses([room.code])[room.code]
    assert (pulse.version, pulse.activity, pulse.view) == (2, 1, "/heads?n_heads=2"), "teacher actions are not activity"
    store.answer(room.code, sid, qid, 0)
    store.answer(room.code, sid, qid, 1)  # a changed answer changes the distribution the teacher sees
    pulse = other_worker.pulses([room.code])[room.code]
    assert (pulse.version, pulse.activity) == (2, 3)
    assert store.state(room.code).activity == 3
    with pytest.raises(errors.UnknownQuestion):
        store.answer(room.code, sid, qid + 1000, 0)
    assert other_worker.pulses([room.code])[room.code].activity == 3, "a refused answer is no activity"
    assert other_worker.pulses([quiet.code])[quiet.code].activity == 0
    store.close(room.code, key)
    assert other_worker.pulses([room.code, "ZZZZZZ"]) == {}, "closed and unknown rooms are left out"
    assert other_worker.pulses([]) == {}


def test_each_committed_write_of_a_store_calls_its_after_write_callbacks(stores):
    store = stores()
    calls = []
    store.after_write.append(lambda: calls.append(1))
    room = store.create_room()
    store.join(room.code)
    store.state(room.code)  # a read
    assert len(calls) == 2
    with pytest.raises(PermissionError):
        store.pause(room.code, "not the key", True)
    assert len(calls) == 2, "a refused write commits nothing"


def test_pulses_leave_out_closed_expired_and_unknown_rooms(stores):
    clock = Clock()
    store = stores(Limits(room_hours=1), clock)
    closed, expiring, open_ = store.create_room(), store.create_room(), store.create_room()
    store.close(closed.code, closed.teacher_key)
    clock.now += 1800
    later = store.create_room()
    clock.now += 1801  # the first three are past their hour
    assert list(store.pulses([closed.code, expiring.code, open_.code, later.code, "ZZZZZZ"])) == [later.code]
    assert store.pulses([]) == {}
    assert list(store.pulses([later.code.lower()])) == [later.code]


def test_a_restarted_server_finds_its_rooms_and_answers(stores):
    before = stores()
    room = before.create_room()
    sid = before.join(room.code)
    before.lead(room.code, room.teacher_key, "/heads?n_heads=2")
    qid = before.ask(room.code, room.teacher_key, CHOICE)
    before.answer(room.code, sid, qid, 2)
    before.engine.dispose()
    after = stores()  # a new process: nothing of the first one's memory
    assert after.current_view(room.code) == "/heads?n_heads=2"
    assert after.results(room.code, room.teacher_key, qid).values == [2]
    assert after.state(room.code).question.id == qid


def test_thirty_students_answering_at_once_are_each_counted_once(stores):
    workers = [stores(), stores()]  # two workers, one database
    room = workers[0].create_room()
    sids = [workers[i % 2].join(room.code, f"s{i}") for i in range(30)]
    qid = workers[0].ask(room.code, room.teacher_key, CHOICE)
    start, failures = threading.Barrier(30), []

    def student(i: int) -> None:
        try:
            start.wait()
            store = workers[i % 2]
            store.answer(room.code, sids[i], qid, (i + 1) % 3)  # a first answer ...
            store.answer(room.code, sids[i], qid, i % 3)  # ... changed: this one counts
        except Exception as err:  # noqa: BLE001 - reported below
            failures.append(err)

    threads = [threading.Thread(target=student, args=(i,)) for i in range(30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    res = workers[1].results(room.code, room.teacher_key, qid, names=True)
    assert res.answered == 30 and res.seats == 30
    assert sorted(zip(res.names, res.values)) == sorted((f"s{i}", i % 3) for i in range(30))


def test_the_export_has_every_answer_and_no_formulas(stores):
    store = stores()
    room = store.create_room()
    ada, anon = store.join(room.code, "=HYPERLINK(1)"), store.join(room.code)
    q1 = store.ask(room.code, room.teacher_key, CHOICE)
    store.answer(room.code, ada, q1, 1)
    store.answer(room.code, anon, q1, 2)
    store.reveal(room.code, room.teacher_key, q1, 1)
    q2 = store.ask(room.code, room.teacher_key, {**WEIGHT, "lo": -1.0})
    store.answer(room.code, anon, q2, -0.5)
    store.ask(room.code, room.teacher_key, CHOICE)  # nobody answered
    rows = list(csv.DictReader(io.StringIO(store.export_csv(room.code, room.teacher_key))))
    assert [(r["question"], r["student"], r["nickname"], r["answer"], r["truth"]) for r in rows] == [
        ("1", "student 1", "'=HYPERLINK(1)", "k_1", "k_1"),
        ("1", "student 2", "", "k_2", "k_1"),
        ("2", "student 2", "", "-0.5", ""),
        ("3", "", "", "", ""),
    ]


def test_migrations_upgrade_an_old_database_and_keep_its_rooms(url):
    engine = create_engine(url)
    try:
        assert migrate(engine, target=1) == 0
        with engine.begin() as conn:
            assert current_version(conn) == 1
            conn.execute(
                text(
                    "INSERT INTO classroom_rooms (code, teacher_hash, created_at, expires_at, closed, view) "
                    "VALUES ('ABCDEF', :h, 0, 4e9, FALSE, '/heads')"
                ),
                {"h": hashlib.sha256(b"key").hexdigest()},
            )
    finally:
        engine.dispose()
    store = open_store(url)  # upgrades to the current version
    try:
        with store.engine.connect() as conn:
            assert current_version(conn) == SCHEMA_VERSION == 7
        state = store.state("ABCDEF")
        assert (state.view, state.paused, state.gather, state.version, state.activity) == ("/heads", False, 0, 0, 0)
        assert state.lesson_step is None and not state.paced  # versions 6, 7: no lesson on a room from before
        store.pause("ABCDEF", "key", True)
        assert store.state("ABCDEF").paused
        assert store.pulses(["ABCDEF"])["ABCDEF"].version == 1
        assert migrate(store.engine) == SCHEMA_VERSION  # a second worker finds nothing to do
    finally:
        store.engine.dispose()


def test_a_database_newer_than_the_app_is_refused(url):
    open_store(url).engine.dispose()
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(version_table.update().values(version=SCHEMA_VERSION + 1))
    engine.dispose()
    with pytest.raises(errors.SchemaTooNew, match="newer than this app"):
        open_store(url)


def test_the_default_store_is_an_sqlite_file_in_wal_mode(tmp_path, monkeypatch):
    monkeypatch.delenv("ATTENTION_DB_URL", raising=False)
    monkeypatch.setenv("ATTENTION_DATA_DIR", str(tmp_path / "data"))
    assert default_url() == f"sqlite:///{tmp_path / 'data' / 'classroom.db'}"
    store = open_store()
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 10000
    store.engine.dispose()
    monkeypatch.setenv("ATTENTION_DB_URL", f"sqlite:///{tmp_path / 'other.db'}")
    assert default_url().endswith("other.db")


def test_classroom_imports_no_streamlit_and_the_app_no_sqlalchemy_until_a_room_is_used():
    import subprocess
    import sys

    check = (
        "import sys, classroom.store; assert 'streamlit' not in sys.modules, 'classroom imports streamlit'\n"
        "del sys.modules['classroom.store']; [sys.modules.pop(m) for m in list(sys.modules) if 'sqlalchemy' in m]\n"
        "import ui.classroom_room; assert 'sqlalchemy' not in sys.modules, 'every page would import SQLAlchemy'"
    )
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr


# ---------------------------------------------------------------- a whole lesson (issue #44, #50)
def test_a_closed_room_keeps_its_answers_for_its_teacher_for_the_stated_time(stores):
    clock = Clock()
    store = stores(Limits(keep_days=7), clock)
    room = store.create_room()
    sid = store.join(room.code, "ada")
    qid = store.ask(room.code, room.teacher_key, CHOICE, truth=1)
    store.answer(room.code, sid, qid, 1)
    store.close(room.code, room.teacher_key)
    with pytest.raises(errors.RoomClosed):
        store.check_teacher(room.code, room.teacher_key)  # no more controls ...
    ended = store.ended(room.code, room.teacher_key)  # ... but its results
    assert (ended.closed, ended.ended_at, ended.kept_until) == (True, clock.now, clock.now + 7 * 86400)
    assert (ended.questions, ended.seats) == (1, 1)
    assert "ada" in store.export_csv(room.code, room.teacher_key)
    assert store.results(room.code, room.teacher_key, qid).values == [1]
    with pytest.raises(PermissionError):
        store.ended(room.code, "not the key")
    clock.now += 7 * 86400 - 1
    store.create_room()  # a new room purges what is past its keeping time: not this one yet
    assert "ada" in store.export_csv(room.code, room.teacher_key)
    clock.now += 2
    store.create_room()
    with pytest.raises(errors.RoomNotFound):
        store.export_csv(room.code, room.teacher_key)
    with store.engine.connect() as conn:  # nothing of it is left in any table
        for table in (students, answers):
            assert conn.execute(select(func.count()).select_from(table)).scalar_one() == 0


def test_an_expired_room_keeps_its_answers_from_its_expiry(stores):
    clock = Clock()
    store = stores(Limits(room_hours=1, keep_days=1), clock)
    room = store.create_room()
    clock.now += 3600
    ended = store.ended(room.code, room.teacher_key)
    assert (ended.closed, ended.ended_at) == (False, room.expires_at)
    assert ended.kept_until == room.expires_at + 86400
    still_open = store.create_room()
    with pytest.raises(errors.ClassroomError, match="still open"):
        store.ended(still_open.code, still_open.teacher_key)
    assert store.purge() == 0
    clock.now += 86400 + 1
    assert store.purge() >= 1


def test_its_teacher_deletes_a_rooms_answers_at_once(stores):
    store = stores()
    room, other = store.create_room(), store.create_room()
    sid, kept = store.join(room.code, "ada"), store.join(other.code, "bob")
    qid = store.ask(room.code, room.teacher_key, CHOICE)
    store.answer(room.code, sid, qid, 0)
    other_q = store.ask(other.code, other.teacher_key, CHOICE)
    store.answer(other.code, kept, other_q, 2)
    with pytest.raises(PermissionError):
        store.delete_room(room.code, other.teacher_key)
    store.delete_room(room.code, room.teacher_key)
    with pytest.raises(errors.RoomNotFound):
        store.results(room.code, room.teacher_key, qid)
    assert store.results(other.code, other.teacher_key, other_q).values == [2], "another room is untouched"


def test_a_tie_makes_every_tied_key_right(stores):
    from classroom.questions import is_right

    store = stores()
    room = store.create_room()
    ada, bob, cy = (store.join(room.code, n) for n in ("ada", "bob", "cy"))
    qid = store.ask(room.code, room.teacher_key, CHOICE, truth=[2, 0])
    for sid, value in ((ada, 0), (bob, 2), (cy, 1)):
        store.answer(room.code, sid, qid, value)
    store.reveal(room.code, room.teacher_key, qid)
    question = store.state(room.code).question
    assert question.truth == [0, 2]
    assert [is_right(question.body, question.truth, v) for v in (0, 1, 2)] == [True, False, True]
    rows = list(csv.DictReader(io.StringIO(store.export_csv(room.code, room.teacher_key))))
    assert [(r["nickname"], r["answer"], r["truth"], r["right"]) for r in rows] == [
        ("ada", "k_0", "k_0 or k_2", "yes"),
        ("bob", "k_2", "k_0 or k_2", "yes"),
        ("cy", "k_1", "k_0 or k_2", "no"),
    ]
    with pytest.raises(errors.InvalidAnswer):
        store.ask(room.code, room.teacher_key, CHOICE, truth=[0, 3])
    with pytest.raises(errors.InvalidAnswer):
        store.ask(room.code, room.teacher_key, CHOICE, truth=[])


def test_a_number_answer_is_right_within_the_questions_tolerance_and_refused_outside_its_bounds(stores):
    from classroom.questions import is_right

    store = stores()
    room = store.create_room()
    sid = store.join(room.code)
    body = {**WEIGHT, "lo": 0.2, "hi": 0.9, "tolerance": 0.05}
    qid = store.ask(room.code, room.teacher_key, body, truth=0.5)
    for bad in (0.19, 0.0, -0.5, 0.91, float("nan"), float("inf"), True, "0.5"):
        with pytest.raises(errors.InvalidAnswer):
            store.answer(room.code, sid, qid, bad)
    store.answer(room.code, sid, qid, 0.2)  # the bounds themselves are answers
    store.answer(room.code, sid, qid, 0.9)
    assert [is_right(body, 0.5, v) for v in (0.45, 0.55, 0.449, 0.551)] == [True, True, False, False]
    with pytest.raises(errors.InvalidQuestion, match="tolerance"):
        store.ask(room.code, room.teacher_key, {**body, "tolerance": -0.1})


def test_results_count_the_seats_of_their_own_room_only(stores):
    store = stores()
    room, other = store.create_room(), store.create_room()
    store.join(room.code)
    for _ in range(3):
        store.join(other.code)
    qid = store.ask(room.code, room.teacher_key, CHOICE)
    res = store.results(room.code, room.teacher_key, qid)
    assert (res.seats, res.here, res.answered) == (1, 1, 0)
    assert (store.state(other.code).seats, store.state(other.code).here) == (3, 3)


@pytest.mark.parametrize("nickname", ["=1+1", "+1", "-cmd", "@SUM(A1)", "-2+3"])
def test_no_nickname_reaches_a_spreadsheet_as_a_formula(stores, nickname):
    store = stores()
    room = store.create_room()
    sid = store.join(room.code, nickname)
    qid = store.ask(room.code, room.teacher_key, CHOICE)
    store.answer(room.code, sid, qid, 0)
    rows = list(csv.DictReader(io.StringIO(store.export_csv(room.code, room.teacher_key))))
    cell = rows[0]["nickname"]
    assert cell.startswith("'") and cell[1:] == nickname, cell


def test_the_export_says_its_times_are_utc_and_starts_with_a_byte_order_mark(stores):
    clock = Clock(1_800_000_000.0)  # 2027-01-15 08:00:00 UTC
    store = stores(clock=clock)
    room = store.create_room()
    sid = store.join(room.code, "Zoë 张")
    qid = store.ask(room.code, room.teacher_key, WEIGHT)
    store.answer(room.code, sid, qid, 0.25)
    text = store.export_csv(room.code, room.teacher_key)
    assert text.startswith("\ufeffroom,")
    rows = list(csv.DictReader(io.StringIO(text[1:])))
    assert rows[0]["answered at (UTC)"] == "2027-01-15 08:00:00"
    assert rows[0]["nickname"] == "Zoë 张" and rows[0]["answer"] == "0.25"
    assert text.encode("utf-8").startswith(b"\xef\xbb\xbf")


def test_here_now_counts_the_seats_seen_lately_beside_every_seat_ever(stores):
    clock = Clock()
    store = stores(Limits(here_s=60), clock)
    room = store.create_room()
    ada, bob, cy = (store.join(room.code, n) for n in ("ada", "bob", "cy"))
    assert (store.state(room.code).here, store.state(room.code).seats) == (3, 3)
    clock.now += 61
    store.seen([ada, bob])  # their workers still hold their browsers; cy's is gone
    state = store.state(room.code)
    assert (state.here, state.seats) == (2, 3)
    assert store.here([room.code, "ZZZZZZ"]) == {room.code: 2, "ZZZZZZ": 0}
    seats = store.seats(room.code, room.teacher_key)
    assert [(s.number, s.nickname, s.here) for s in seats] == [(1, "ada", True), (2, "bob", True), (3, "cy", False)]
    clock.now += 61
    assert store.state(room.code).here == 0


def test_the_room_limit_counts_students_here_and_the_seat_limit_every_seat(stores):
    clock = Clock()
    store = stores(Limits(students_per_room=2, seats_per_room=4, here_s=60), clock)
    room = store.create_room()
    store.join(room.code), store.join(room.code)
    with pytest.raises(errors.RoomFull, match="2 students are in it"):
        store.join(room.code)
    clock.now += 61  # both left (or reloaded after clearing their cookies): their seats are not here now
    store.join(room.code), store.join(room.code)
    clock.now += 61
    with pytest.raises(errors.RoomFull, match="handed out 4 seats"):
        store.join(room.code)


def test_the_teacher_removes_a_seat_and_its_answers(stores):
    store = stores()
    room = store.create_room()
    ada, twice, bob = store.join(room.code, "ada"), store.join(room.code, "ada"), store.join(room.code, "bob")
    qid = store.ask(room.code, room.teacher_key, CHOICE)
    for sid in (ada, twice, bob):
        store.answer(room.code, sid, qid, 1)
    before = store.state(room.code)
    with pytest.raises(PermissionError):
        store.remove_seat(room.code, "not the key", 2)
    store.remove_seat(room.code, room.teacher_key, 2)
    after = store.state(room.code)
    assert (after.seats, after.removals, after.version > before.version) == (2, before.removals + 1, True)
    assert store.results(room.code, room.teacher_key, qid).values == [1, 1]
    with pytest.raises(errors.UnknownStudent):
        store.answer(room.code, twice, qid, 0)
    with pytest.raises(errors.UnknownStudent):
        store.remove_seat(room.code, room.teacher_key, 2)
    assert store.join(room.code, "cy") and [s.number for s in store.seats(room.code, room.teacher_key)] == [1, 3, 4]


def test_a_student_renames_or_becomes_anonymous(stores):
    store = stores()
    room = store.create_room()
    sid = store.join(room.code)
    assert store.rename(room.code, sid, "  ada ") == "ada" and store.student(room.code, sid) == "ada"
    assert store.rename(room.code, sid, "") is None and store.student(room.code, sid) is None
    with pytest.raises(errors.NicknameRefused):
        store.rename(room.code, sid, "x" * 25)
    with pytest.raises(errors.UnknownStudent):
        store.rename(room.code, "not a student", "eve")


def test_one_tab_leads_and_the_class_stays_on_an_open_questions_view(stores):
    store = stores()
    room = store.create_room()
    key = room.teacher_key
    assert store.lead(room.code, key, "/causal", tab="projector") == 1  # the first tab to lead leads
    assert store.state(room.code).leader == "projector"
    assert store.lead(room.code, key, "/heads", tab="laptop") is None, "another tab does not move the class"
    assert store.current_view(room.code) == "/causal"
    store.take_lead(room.code, key, "laptop")
    assert store.lead(room.code, key, "/heads", tab="laptop") is not None
    assert store.lead(room.code, key, "/block", tab="projector") is None
    qid = store.ask(room.code, key, {**CHOICE, "view": "/?causal=1"}, truth=0)
    assert store.current_view(room.code) == "/?causal=1", "asking shows the class what it asks about"
    assert store.lead(room.code, key, "/block", tab="laptop") is None, "held while the question is open"
    assert store.current_view(room.code) == "/?causal=1"
    store.reveal(room.code, key, qid)
    assert store.lead(room.code, key, "/block", tab="laptop") is not None
    assert store.current_view(room.code) == "/block"


def test_asking_gathers_every_student(stores):
    store = stores()
    room = store.create_room()
    gathered = store.state(room.code).gather
    store.ask(room.code, room.teacher_key, CHOICE)
    assert store.state(room.code).gather == gathered + 1


def test_a_leading_tab_is_seen_by_its_worker(stores):
    clock = Clock()
    store = stores(clock=clock)
    room = store.create_room()
    store.take_lead(room.code, room.teacher_key, "w1/session")
    clock.now += 10
    store.seen(leaders=["w1/session", "w2/other"])
    assert store.state(room.code).leader_seen_at == clock.now


@pytest.mark.parametrize(
    "url, says",
    [
        ("garbage", "ATTENTION_DB_URL is not a database URL"),
        ("mysql://u:secretpw@127.0.0.1/db", "must be SQLite or PostgreSQL"),
        ("postgresql+psycopg://u:secretpw@127.0.0.1:{closed}/db", "Connection refused"),
    ],
)
def test_a_database_that_cannot_be_used_is_named_without_its_password(url, says):
    from classroom.store import check_database
    from harness.servers import free_port

    url = url.format(closed=free_port())
    with pytest.raises(errors.StoreUnavailable, match=says) as caught:
        open_store(url)
    assert "secretpw" not in str(caught.value)
    with pytest.raises(errors.StoreUnavailable):
        check_database(url)


def test_a_postgresql_stopped_mid_class_then_started_again(tmp_path):
    """The database goes away during a question and comes back: every call in between says so (never a raw
    driver error), and once it is back the same store carries on where the class was."""
    server = Postgres()
    try:
        store = open_store(server.new_database())
        room = store.create_room()
        sid = store.join(room.code)
        qid = store.ask(room.code, room.teacher_key, CHOICE)
        server.pg_ctl("stop")
        for call in (
            lambda: store.state(room.code),
            lambda: store.answer(room.code, sid, qid, 1),
            lambda: store.pulses([room.code]),
            lambda: store.seen([sid]),
        ):
            with pytest.raises(errors.StoreUnavailable, match="cannot be used"):
                call()
        server.pg_ctl("start")
        store.answer(room.code, sid, qid, 1)
        assert store.results(room.code, room.teacher_key, qid).values == [1]
        store.engine.dispose()
    finally:
        server.stop()


def test_a_wrong_password_is_named_as_such_and_never_shown():
    """A PostgreSQL that asks a password of one role (scram-sha-256): the wrong one is refused with the server's own
    reason, the password itself appears nowhere; the right one opens the store."""
    server = Postgres()
    try:
        hba = server.data / "pg_hba.conf"
        server.psql("CREATE ROLE teacher LOGIN PASSWORD 'right-secret'")
        server.psql("CREATE DATABASE lessons OWNER teacher")
        server.as_owner(hba, "host all teacher 127.0.0.1/32 scram-sha-256\n" + hba.read_text())
        server.pg_ctl("reload")
        wrong = f"postgresql+psycopg://teacher:wrong-secret@127.0.0.1:{server.port}/lessons"
        with pytest.raises(errors.StoreUnavailable, match="password authentication failed") as caught:
            open_store(wrong)
        assert "wrong-secret" not in str(caught.value) and "teacher:***@" in str(caught.value)
        store = open_store(wrong.replace("wrong-secret", "right-secret"))
        assert store.create_room().code
        store.engine.dispose()
    finally:
        server.stop()


def test_the_address_limit_holds_back_many_browsers_behind_one_address(stores):
    clock = Clock()
    store = stores(Limits(wrong_joins=100, wrong_joins_per_address=3), clock)
    room = store.create_room()
    for browser in ("b1", "b2", "b3"):
        with pytest.raises(errors.RoomNotFound):
            store.join("AAAAAA", client="10.0.0.7", browser=browser)
    with pytest.raises(errors.JoinRateLimited, match="from this network address"):
        store.join(room.code, client="10.0.0.7", browser="b4")
    assert store.join(room.code, client="10.0.0.8", browser="b4"), "another address is not held back"
    assert store.join(room.code, client="10.0.0.7", browser="b4", token=room.link_token), "the link always joins"


def test_only_the_rooms_own_link_token_skips_the_limit(stores):
    store = stores(Limits(wrong_joins=1))
    room, other = store.create_room(), store.create_room()
    with pytest.raises(errors.RoomNotFound):
        store.join("AAAAAA", client="10.0.0.7", browser="b")
    for token in ("wrong-token", other.link_token, "", None):
        with pytest.raises(errors.JoinRateLimited):
            store.join(room.code, client="10.0.0.7", browser="b", token=token)
    assert store.join(room.code, client="10.0.0.7", browser="b", token=room.link_token)


def test_removing_a_seat_touches_no_other_room(stores):
    store = stores()
    a, b = store.create_room(), store.create_room()
    store.join(a.code)
    kept = store.join(b.code)
    b_before = store.state(b.code)
    store.remove_seat(a.code, a.teacher_key, 1)
    assert store.student(b.code, kept) is None and store.state(b.code).removals == b_before.removals
    store.join(b.code)  # B has a seat 2, A has none
    with pytest.raises(errors.UnknownStudent):
        store.remove_seat(a.code, a.teacher_key, 2)
    assert store.state(b.code).seats == 2


def test_the_exports_times_are_utc_whatever_the_servers_time_zone(stores, monkeypatch):
    import time

    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        clock = Clock(1_800_000_000.0)  # 2027-01-15 08:00:00 UTC, 03:00 in New York
        store = stores(clock=clock)
        room = store.create_room()
        sid = store.join(room.code)
        qid = store.ask(room.code, room.teacher_key, CHOICE)
        store.answer(room.code, sid, qid, 0)
        rows = list(csv.DictReader(io.StringIO(store.export_csv(room.code, room.teacher_key)[1:])))
        assert rows[0]["answered at (UTC)"] == "2027-01-15 08:00:00"
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_a_lead_is_let_go_when_its_tab_has_gone_or_no_worker_has_seen_it(stores):
    clock = Clock()
    store = stores(clock=clock)
    room, other = store.create_room(), store.create_room()
    store.take_lead(room.code, room.teacher_key, "w1/projector")
    store.take_lead(other.code, other.teacher_key, "w2/laptop")
    before = store.state(room.code).version
    assert store.release_leads(tabs=["w9/unknown"]) == [], "nothing to let go: nothing written"
    assert store.release_leads(tabs=["w1/projector"]) == [room.code]
    state = store.state(room.code)
    assert (state.leader, state.version) == (None, before + 1) and store.state(other.code).leader == "w2/laptop"
    assert store.lead(room.code, room.teacher_key, "/heads", tab="w3/reloaded") is not None  # the next tab leads
    assert store.state(room.code).leader == "w3/reloaded"
    clock.now += 20
    store.seen(leaders=["w3/reloaded"])  # its worker still sees it; the laptop's worker died 20 s ago
    clock.now += 15
    assert store.release_leads(codes=[room.code, other.code], stale_s=30) == [other.code]
    assert store.state(room.code).leader == "w3/reloaded" and store.state(other.code).leader is None
    store.take_lead(other.code, other.teacher_key, "w2/laptop")
    clock.now += 31  # the laptop's worker died; a worker that holds another tab of that teacher's hands it the lead
    assert store.release_leads(codes=[other.code], stale_s=30, successors={other.code: "w4/tab"}) == [other.code]
    assert store.state(other.code).leader == "w4/tab"


def test_an_ended_rooms_answers_are_gone_for_its_teacher_the_moment_they_pass_their_keeping_time(stores):
    clock = Clock()
    store = stores(Limits(keep_days=1), clock)
    room = store.create_room()
    store.close(room.code, room.teacher_key)
    clock.now += 86400 + 1  # nothing has purged yet (no room started, no worker started)
    for read in (store.ended, store.export_csv, store.questions, store.seats):
        with pytest.raises(errors.RoomNotFound, match="kept 1 day after it ends"):
            read(room.code, room.teacher_key)
    assert store.purge() == 1


def test_signing_out_leaves_no_tab_leading_and_the_next_tab_to_run_leads(stores):
    store = stores()
    room = store.create_room()
    store.take_lead(room.code, room.teacher_key, "w/projector")
    store.take_lead(room.code, room.teacher_key, None)  # the leading tab signed out
    assert store.state(room.code).leader is None  # no tab, not the text 'None'
    assert store.lead(room.code, room.teacher_key, "/heads", tab="w/laptop") is not None
    assert store.state(room.code).leader == "w/laptop"


ROW = {"kind": "row", "prompt": "Predict query 1's row", "n": 3, "labels": ["k_0 'a'", "k_1 'b'", "k_2 'c'"]}


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ([0.5, 0.5], "has 3 weights, one per key; this one has 2"),
        ([0.2, 0.2, 0.2, 0.4], "this one has 4"),
        ([0.5, float("nan"), 0.5], "weight 1 of the row is nan, not a finite number"),
        ([float("inf"), 0.0, 0.0], "weight 0 of the row is inf"),
        ([1.2, -0.2, 0.0], "weight 0 of the row is 1.2: a weight is from 0 to 1"),
        ([0.6, -0.1, 0.5], "weight 1 of the row is -0.1"),
        ([0.5, 0.3, 0.1], "sum to 0.9: a row of attention weights sums to 1"),
        ([0.5, 0.5, 1e-5], "sum to 1.00001"),
        ([True, 0.0, 0.0], "weight 0 of the row is True"),
        (["0.5", 0.5, 0.0], "weight 0 of the row is '0.5'"),
        (0.5, "a row is a list of 3 weights, not float"),
        (None, "a row is a list of 3 weights, not NoneType"),
    ],
)
def test_a_row_answer_that_is_not_a_row_of_weights_is_refused_by_name(stores, value, says):
    store = stores()
    room = store.create_room()
    sid = store.join(room.code)
    qid = store.ask(room.code, room.teacher_key, ROW, truth=[0.2, 0.5, 0.3])
    with pytest.raises(errors.InvalidAnswer) as refused:
        store.answer(room.code, sid, qid, value)
    assert says in str(refused.value)
    assert store.results(room.code, room.teacher_key, qid).values == []
    store.answer(room.code, sid, qid, [0.2, 0.5 + 5e-7, 0.3])  # within ROW_SUM of 1: taken as sent
    assert store.results(room.code, room.teacher_key, qid).values == [[0.2, 0.5 + 5e-7, 0.3]]


def test_a_row_question_checks_its_size_labels_and_true_row(stores):
    store = stores()
    room = store.create_room()
    bad_rows = [{**ROW, "n": 1}, {**ROW, "n": 65}, {**ROW, "n": 3.0}, {**ROW, "labels": ["a", "b"]}]
    for bad in [*bad_rows, {**ROW, "labels": ["", "b", "c"]}, {**ROW, "tolerance": 2}]:
        with pytest.raises(errors.InvalidQuestion):
            store.ask(room.code, room.teacher_key, bad)
    with pytest.raises(errors.InvalidAnswer, match="sum to 0.9"):
        store.ask(room.code, room.teacher_key, ROW, truth=[0.3, 0.3, 0.3])


def test_thirty_students_predicting_a_row_at_once_are_each_counted_once_with_their_last_row(stores):
    workers = [stores(), stores()]  # two workers, one database
    room = workers[0].create_room()
    sids = [workers[i % 2].join(room.code) for i in range(30)]
    qid = workers[0].ask(room.code, room.teacher_key, ROW, truth=[0.2, 0.5, 0.3])
    start, failures = threading.Barrier(30), []

    def row(i: int) -> list[float]:
        return [i / 29, 1 - i / 29, 0.0]

    def student(i: int) -> None:
        try:
            start.wait()
            store = workers[i % 2]
            store.answer(room.code, sids[i], qid, [1.0, 0.0, 0.0])  # a first row ...
            store.answer(room.code, sids[i], qid, row(i))  # ... changed: this one counts
        except Exception as err:  # noqa: BLE001 - reported below
            failures.append(err)

    threads = [threading.Thread(target=student, args=(i,)) for i in range(30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    res = workers[1].results(room.code, room.teacher_key, qid)
    assert res.answered == 30 and sorted(res.values) == sorted(row(i) for i in range(30))
    workers[0].reveal(room.code, room.teacher_key, qid)
    exported = list(csv.DictReader(io.StringIO(workers[0].export_csv(room.code, room.teacher_key))))
    assert {r["truth"] for r in exported} == {"0.20, 0.50, 0.30"}
    assert sorted(r["answer"] for r in exported) == sorted(", ".join(f"{w:.2f}" for w in row(i)) for i in range(30))
    assert {r["right"] for r in exported} == {"no"}  # every row gives k_2 0, not 0.3


def test_a_row_is_right_when_every_weight_is_within_the_tolerance():
    from classroom.questions import is_right

    question = {**ROW, "tolerance": 0.1}
    truth = [0.2, 0.5, 0.3]
    assert is_right(question, truth, [0.25, 0.45, 0.3]) and is_right(question, truth, [0.3, 0.4, 0.3])
    assert not is_right(question, truth, [0.31, 0.39, 0.3]) and not is_right(question, truth, [0.0, 0.7, 0.3])
    assert is_right(ROW, truth, truth) and not is_right(ROW, truth, [0.2, 0.49, 0.31])


LESSON = {
    "title": "Two steps",
    "step": [{"title": "one", "view": "/causal?t=1"}, {"title": "two", "view": "/heads?n_heads=2"}],
}


def test_a_lesson_moves_the_class_step_by_step_and_every_worker_sees_where_it_is(stores):
    store, other = stores(), stores()  # two workers on one database
    room = store.create_room()
    code, key = room.code, room.teacher_key
    assert store.state(code).lesson_step is None and store.lesson(code, key) is None
    assert store.start_lesson(code, key, LESSON, tab="projector") is not None
    assert other.current_view(code) == "/causal?t=1" and other.state(code).lesson_step == 0
    assert other.lesson(code, key) == (LESSON, 0), "the lesson is the room's, not a worker's"
    version = other.state(code).version
    assert store.go_to_step(code, key, 1, tab="projector") == version + 1
    assert other.current_view(code) == "/heads?n_heads=2" and other.state(code).lesson_step == 1
    assert store.go_to_step(code, key, 0, tab="laptop") is None, "only the leading tab moves the class"
    qid = store.ask(code, key, {**CHOICE, "view": "/heads?n_heads=2"}, truth=0)
    assert store.go_to_step(code, key, 0, tab="projector") is None, "held while a question is open"
    assert store.state(code).lesson_step == 1
    store.reveal(code, key, qid)
    assert store.go_to_step(code, key, 0, tab="projector") is not None
    assert other.current_view(code) == "/causal?t=1"
    store.end_lesson(code, key)
    assert other.lesson(code, key) is None and other.state(code).lesson_step is None
    assert other.current_view(code) == "/causal?t=1", "ending the lesson leaves the class where it is"


def test_a_step_opens_with_its_question_asked_in_the_same_move(stores):
    store = stores()
    room = store.create_room()
    code, key = room.code, room.teacher_key
    store.start_lesson(code, key, LESSON)
    version = store.state(code).version
    asked = {**CHOICE, "view": "/heads?n_heads=2&d_model=8"}
    assert store.go_to_step(code, key, 1, question=asked, truth=0) == version + 1, "one move: one version"
    state = store.state(code)
    assert state.lesson_step == 1 and state.asking and state.view == "/heads?n_heads=2&d_model=8"
    assert state.question.body["prompt"] == CHOICE["prompt"] and state.question.truth is None  # hidden until revealed
    with pytest.raises(errors.InvalidQuestion):
        store.go_to_step(code, key, 0, question={"kind": "choice"})
    assert store.state(code).lesson_step == 1, "a refused question moves nothing"


@pytest.mark.parametrize(
    ("lesson", "step", "message"),
    [
        ({"step": []}, 0, "1 to 30 steps"),
        ({"step": [{"view": "https://example.com/"}]}, 0, "step 1's a view is a link within the app"),
        ({"step": [{"view": "/"}] * 31}, 0, "1 to 30 steps"),
        ({"step": [{"view": "/", "notes": "x" * 100_000}]}, 0, "at most 100,000 characters"),
        (LESSON, 2, "steps 1 to 2, not 2"),
        (LESSON, True, "not True"),
    ],
)
def test_a_bad_lesson_or_step_is_refused_naming_the_problem(stores, lesson, step, message):
    store = stores()
    room = store.create_room()
    with pytest.raises(errors.InvalidLesson, match=re.escape(message)):
        store.start_lesson(room.code, room.teacher_key, lesson)
        store.go_to_step(room.code, room.teacher_key, step)


def test_only_the_teacher_runs_a_lesson(stores):
    store = stores()
    room = store.create_room()
    with pytest.raises(PermissionError):
        store.start_lesson(room.code, "not the key", LESSON)
    store.start_lesson(room.code, room.teacher_key, LESSON)
    with pytest.raises(PermissionError):
        store.go_to_step(room.code, "not the key", 1)
    with pytest.raises(PermissionError):
        store.lesson(room.code, "not the key")


THREE = {
    "title": "Three steps",
    "step": [
        {"title": "one", "view": "/causal?t=1", "notes": "for the teacher", "student_notes": "read row 1"},
        {"title": "two", "view": "/heads?n_heads=2"},
        {"title": "three", "view": "/block"},
    ],
}


def test_students_at_their_own_pace_each_answer_the_question_of_the_step_they_are_on(stores):
    store, other = stores(), stores()  # two workers on one database
    room = store.create_room()
    code, key = room.code, room.teacher_key
    store.start_lesson(code, key, THREE)
    ann, bob, cy = (store.join(code) for _ in range(3))
    on_two = {**CHOICE, "view": "/heads?n_heads=2", "seconds": 30}
    on_three = {**WEIGHT, "view": "/block"}
    assert store.pace_lesson(code, key, [(1, on_two, 2), (2, on_three, 0.25)]) is not None
    state = other.state(code)
    assert state.paced and not state.asking and state.question is None, "no question for the whole room"
    assert [s.title for s in state.steps] == ["one", "two", "three"]
    assert state.steps[0].student_notes == "read row 1" and "for the teacher" not in repr(state.steps)
    two, three = state.step_questions[1], state.step_questions[2]
    assert (two.step, three.step) == (1, 2)
    assert two.truth is None and two.closes_at is None, "hidden until revealed; no time: students reach it apart"
    assert state.on_step(1).asking and state.on_step(1).question == two and not state.on_step(0).asking
    assert [other.my_step(code, s) for s in (ann, bob, cy)] == [(0, 0)] * 3, "everyone starts where the class was"
    with pytest.raises(errors.AnswersClosed):
        store.answer(code, ann, two.id, 1)  # ann is on step 1, not step 2
    store.student_step(code, ann, 1)
    other.student_step(code, bob, 2)
    store.answer(code, ann, two.id, 1)
    other.answer(code, bob, three.id, 0.3)
    with pytest.raises(errors.AnswersClosed):
        store.answer(code, bob, two.id, 2)  # bob is on step 3
    assert store.step_counts(code, key) == [1, 1, 1]
    assert store.results(code, key, two.id).values == [1] and store.results(code, key, three.id).values == [0.3]
    # Gone past a step, a student cannot change its answer: a later step may show what answers it.
    store.student_step(code, bob, 1)
    assert store.my_step(code, bob) == (1, 2)
    with pytest.raises(errors.AnswersClosed):
        store.answer(code, bob, two.id, 2)
    store.student_step(code, ann, 1)  # staying on (or coming back to) the furthest step keeps it open
    store.answer(code, ann, two.id, 0)
    assert store.results(code, key, two.id).values == [0]
    store.reveal(code, key, two.id)
    assert other.state(code).on_step(1).question.truth == [2] and not other.state(code).on_step(1).asking
    with pytest.raises(errors.AnswersClosed):
        store.answer(code, ann, two.id, 2)
    with pytest.raises(errors.InvalidLesson, match="steps 1 to 3, not 3"):
        store.student_step(code, cy, 3)
    with pytest.raises(errors.UnknownStudent):
        store.student_step(code, "not a student", 1)


def test_a_steps_question_is_asked_once_in_a_lesson_whoever_paces_it(stores):
    """Back on a step, at the teacher's pace or the students', its question is the one asked before: a revealed one
    stays revealed, an open one keeps its answers; a new pace asks only the steps never asked."""
    store = stores()
    room = store.create_room()
    code, key = room.code, room.teacher_key
    on_one = {**WEIGHT, "view": "/causal?t=1"}
    store.start_lesson(code, key, THREE, question=on_one, truth=0.5)
    first = store.state(code).question
    assert first.step == 0 and store.state(code).step_questions == {0: first}
    store.reveal(code, key, first.id)
    store.go_to_step(code, key, 1)
    store.go_to_step(code, key, 0, question=on_one, truth=0.5)  # back: the same question, revealed
    state = store.state(code)
    assert state.question.id == first.id and state.question.revealed and not state.asking
    ann = store.join(code)
    on_three = {**WEIGHT, "view": "/block"}
    store.pace_lesson(code, key, [(0, on_one, 0.5), (2, on_three, 0.25)])
    asked = store.state(code).step_questions
    assert asked[0].id == first.id and asked[0].revealed, "step 1 is not asked again"
    store.student_step(code, ann, 2)
    store.answer(code, ann, asked[2].id, 0.3)
    store.go_to_step(code, key, 1)  # everyone to step 2; step 3's question stays open, with ann's answer
    store.pace_lesson(code, key, [(0, on_one, 0.5), (2, on_three, 0.25)])
    again = store.state(code).step_questions
    assert again == asked and store.results(code, key, asked[2].id).values == [0.3], "no question asked twice"
    assert len(store.questions(code, key)) == 2
    store.go_to_step(code, key, 1)
    store.ask(code, key, {**WEIGHT, "view": "/heads?n_heads=2"}, truth=0.1, step=1)  # the step's Ask button
    assert store.state(code).step_questions[1].id == store.state(code).question.id
    with pytest.raises(errors.InvalidLesson, match="not on step 2"):
        store.ask(code, key, CHOICE, step=2)


def test_an_answer_is_final_for_a_student_who_went_past_its_step_whoever_paces_the_class_after(stores):
    """A later step may show what answers an earlier step's question: a student who went past it at their own pace
    cannot change that answer when the teacher brings the class back to it, nor at a second own pace."""
    store = stores()
    room = store.create_room()
    code, key = room.code, room.teacher_key
    store.start_lesson(code, key, THREE)
    ann, bob = store.join(code), store.join(code)
    store.pace_lesson(code, key, [(1, {**WEIGHT, "view": "/heads?n_heads=2"}, 0.25)])
    qid = store.state(code).step_questions[1].id
    store.student_step(code, ann, 1)
    store.answer(code, ann, qid, 0.5)
    store.student_step(code, ann, 2)  # where the answer might show
    store.go_to_step(code, key, 1)  # Bring everyone to step 2: its question is the class's now
    assert store.state(code).question.id == qid
    with pytest.raises(errors.AnswersClosed, match="your answer is final"):
        store.answer(code, ann, qid, 0.25)
    store.answer(code, bob, qid, 0.3)  # bob never went past it
    store.end_question(code, key)
    assert store.pace_lesson(code, key, []) is not None
    assert store.my_step(code, ann) == (1, 2), "from the class's step, as far as ann went before"
    with pytest.raises(errors.AnswersClosed, match="your answer is final"):
        store.answer(code, ann, qid, 0.25)
    assert store.results(code, key, qid).values == [0.5, 0.3]
    store.start_lesson(code, key, THREE)  # a new lesson: nobody has been anywhere in it
    assert store.my_step(code, ann) == (0, 0)


def test_bringing_everyone_to_a_step_keeps_its_answers_and_the_class_follows_again(stores):
    store = stores()
    room = store.create_room()
    code, key = room.code, room.teacher_key
    store.start_lesson(code, key, THREE)
    ann, bob = store.join(code), store.join(code)
    store.pace_lesson(code, key, [(2, {**WEIGHT, "view": "/block"}, 0.25)])
    store.student_step(code, ann, 2)
    qid = store.state(code).step_questions[2].id
    store.answer(code, ann, qid, 0.3)
    gather = store.state(code).gather
    # the teacher's question for that step, posed again, would lose ann's answer: the step's own stays asked
    store.go_to_step(code, key, 2, question={**WEIGHT, "view": "/block"}, truth=0.25)
    state = store.state(code)
    assert not state.paced and state.gather == gather + 1 and state.view == "/block" and state.lesson_step == 2
    assert state.asking and state.question.id == qid and state.on_step(0) is state
    store.answer(code, bob, qid, 0.2)  # now the whole class's question
    assert store.results(code, key, qid).values == [0.3, 0.2]
    assert store.my_step(code, ann) == store.my_step(code, bob) == (2, 2)
    with pytest.raises(errors.InvalidLesson, match="follows the teacher"):
        store.student_step(code, ann, 0)
    assert store.pace_lesson(code, key, []) is None, "not while a question is open"
    store.reveal(code, key, qid)
    assert store.pace_lesson(code, key, []) is not None
    assert store.my_step(code, ann) == (2, 2), "a new pace starts from the class's step"
    store.gather(code, key)
    assert not store.state(code).paced, "Gather brings everyone back to the teacher"
    store.pace_lesson(code, key, [])
    store.ask(code, key, CHOICE)
    assert not store.state(code).paced, "a question to the whole class brings it back to the teacher"
    store.end_question(code, key)
    store.pace_lesson(code, key, [(0, {**WEIGHT, "view": "/causal?t=1"}, 0.5)])
    store.start_lesson(code, key, LESSON)  # another lesson, started over this one
    state = store.state(code)
    assert not state.paced and state.question is None and state.step_questions == {}, "a new lesson asks afresh"


@pytest.mark.parametrize(
    ("posed", "message"),
    [
        ([(3, CHOICE, None)], "on steps 1 to 3: not [3]"),
        ([(0, CHOICE, None), (0, CHOICE, None)], "not [0, 0]"),
        ([(True, CHOICE, None)], "not [True]"),
    ],
)
def test_a_bad_paced_question_is_refused_and_nothing_changes(stores, posed, message):
    store = stores()
    room = store.create_room()
    store.start_lesson(room.code, room.teacher_key, THREE)
    with pytest.raises(errors.InvalidLesson, match=re.escape(message)):
        store.pace_lesson(room.code, room.teacher_key, posed)
    assert not store.state(room.code).paced and store.questions(room.code, room.teacher_key) == []


def test_only_the_teacher_paces_a_lesson_and_only_a_lesson(stores):
    store = stores()
    room = store.create_room()
    with pytest.raises(errors.InvalidLesson, match="runs no lesson"):
        store.pace_lesson(room.code, room.teacher_key, [])
    store.start_lesson(room.code, room.teacher_key, THREE)
    with pytest.raises(PermissionError):
        store.pace_lesson(room.code, "not the key", [])
    with pytest.raises(PermissionError):
        store.step_counts(room.code, "not the key")
    sid = store.join(room.code)
    store.pace_lesson(room.code, room.teacher_key, [])
    store.student_step(room.code, sid, 1)
    store.end_lesson(room.code, room.teacher_key)
    state = store.state(room.code)
    assert not state.paced and state.steps == () and store.my_step(room.code, sid) is None
