"""The classroom store: rooms, the teacher's lead, questions and answers, in a database (SQLAlchemy 2).

    store = open_store()                      # ATTENTION_DB_URL, or an SQLite file in the data directory
    room = store.create_room()                # room.code, room.teacher_key (shown once, kept by the teacher)
    sid = store.join(room.code, nickname=None)
    store.lead(room.code, room.teacher_key, "/causal?causal=1")
    qid = store.ask(room.code, room.teacher_key, {"kind": "choice", "prompt": "...", "options": [...]})
    store.answer(room.code, sid, qid, 1)
    store.results(room.code, room.teacher_key, qid)

Nothing lives in a worker's memory: every call reads and writes the database, so any worker (or machine,
with PostgreSQL) serves any call, and a restarted server finds every room. The rules:
- the teacher key is random (192 bits), stored only as its SHA-256; every teacher action checks it and a
  wrong or missing key raises PermissionError;
- a student is a random id handed out by `join`; an answer counts only with the id of a student of that
  room, once per student and question (the last one counts), until the teacher reveals;
- a closed or expired room accepts nobody; its teacher still reads and downloads its answers for
  Limits.keep_days, after which the room and everything in it is deleted (or at once, by its teacher);
- wrong join codes are counted per browser and per address in the database and refused past a limit,
  whichever worker sees them; the student link carries a token that joins without that limit;
- while a question is open, the room's view stays the one it was asked on (`lead` leaves it);
- nicknames and questions are length-limited and kept as the text typed (the UI shows them as text);
- limits on students here now and seats ever made per room, open rooms and questions per room, each with its
  own error.
A database that cannot be used (a bad URL, a wrong password, a server down) raises errors.StoreUnavailable,
whose message names it without its password.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import json
import os
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, exc, func, make_url, select, text
from sqlalchemy.dialects import postgresql, sqlite

from classroom import errors
from classroom.codes import CODE_ALPHABET, CODE_LENGTH, normalise_code
from classroom.questions import (
    answer_label,
    check_answer,
    check_question,
    check_truth,
    check_view,
    is_right,
    prompt_text,
)
from classroom.schema import (
    NICKNAME_CHARS,
    answers,
    join_failures,
    migrate,
    questions,
    rooms,
    students,
)
from locales import marked, num, tr, tr_n

URL_ENV = "ATTENTION_DB_URL"
LESSON_STEPS = 30  # classroom.decks.MAX_STEPS
LESSON_CHARS = 100_000  # a lesson as stored (JSON): a deck file is at most 64 kB (classroom.decks.MAX_BYTES)
DATA_DIR_ENV = "ATTENTION_DATA_DIR"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Limits:
    """What one room and one server allow; the defaults are a school's, tests pass smaller ones."""

    students_per_room: int = 300  # students here now (seen within here_s): what a room serves at once
    seats_per_room: int = 2000  # seats ever handed out (a browser that clears its cookies gets a new one)
    open_rooms: int = 200
    questions_per_room: int = 200
    room_hours: float = 12.0
    keep_days: float = 7.0  # a room's answers are kept this long after it ended (closed or expired), then deleted
    here_s: float = 60.0  # a seat seen within this many seconds is a student here now
    leader_stale_s: float = 30.0  # a leading tab whose worker has not seen it this long has gone
    wrong_joins: int = 10  # wrong codes one browser may type ...
    wrong_joins_per_address: int = 100  # ... and one address (a class behind one NAT shares it) ...
    wrong_join_window_s: float = 600.0  # ... within this many seconds; a student link's join is never held back


@dataclass(frozen=True)
class Room:
    code: str
    teacher_key: str
    expires_at: float
    link_token: str = ""  # the student link's token (room_link)


@dataclass(frozen=True)
class Question:
    id: int
    number: int  # 1, 2, ... in the room
    body: dict
    revealed: bool
    truth: Any  # None until revealed (or revealed without a true value); a choice question's: a list of options
    closes_at: float | None = None  # when its answers close by themselves (the store's clock), if it has a time
    step: int | None = None  # the lesson step it is open on while students go at their own pace (Store.pace_lesson)


@dataclass(frozen=True)
class LessonStep:
    """A step of the room's lesson as a student's screen reads it: never the teacher's notes."""

    title: str
    view: str
    student_notes: str = ""
    language: str = "en"  # the language the lesson's titles and notes are written in


@dataclass(frozen=True)
class RoomState:
    """What every screen in the room draws: where the teacher is, paused or not, the question asked now."""

    code: str
    view: str | None
    paused: bool
    gather: int
    question: Question | None
    seats: int  # seats ever handed out
    expires_at: float
    version: int  # bumped by every teacher action (Store.pulses)
    activity: int = 0  # bumped by every join and answer (Store.pulses)
    here: int = 0  # seats seen within Limits.here_s
    leader: str | None = None  # the teacher's tab the class follows (None: whichever leads first)
    leader_seen_at: float | None = None
    removals: int = 0  # bumped when the teacher removes a seat
    link_token: str = ""
    lesson_step: int | None = None  # the step of the room's lesson the class is on (None: no lesson)
    steps: tuple[LessonStep, ...] = ()  # the room's lesson, as students read it (empty: none)
    pace: int | None = None  # while students go through the lesson at their own pace: the room's version then
    step_questions: dict = field(default_factory=dict)  # the lesson's questions: {step: the last one asked on it}

    @property
    def paced(self) -> bool:
        """Whether the students go through the room's lesson at their own pace (each on their own step)."""
        return self.pace is not None

    @property
    def asking(self) -> bool:
        """Whether a question is open: asked and not revealed yet."""
        return self.question is not None and not self.question.revealed

    def on_step(self, step: int | None) -> RoomState:
        """The room as a screen on lesson step `step` draws it: while the students go at their own pace, the
        question asked now is that step's (None: it has none); otherwise the room's, whatever the step."""
        if not self.paced:
            return self
        return replace(self, question=self.step_questions.get(step))


@dataclass(frozen=True)
class RoomPulse:
    """What a worker's watcher reads of an open room to see that it changed, for all its rooms in one query
    (Store.pulses)."""

    version: int  # bumped by every teacher action
    activity: int  # bumped by every join and answer: what a teacher's dashboard counts
    view: str | None  # the room's view: where following students go


@dataclass(frozen=True)
class Results:
    question: Question
    seats: int  # seats ever handed out
    here: int  # seats here now
    answered: int
    values: list  # one per student who answered, in the order they joined
    names: list | None  # their nicknames (None: anonymous), only when the teacher asks for them


@dataclass(frozen=True)
class Seat:
    """One seat of a room, as its teacher's list shows it (seats, not people: a browser that cleared its cookies
    joined again as another seat)."""

    number: int
    nickname: str | None
    joined_at: float
    seen_at: float
    here: bool
    answers: int


@dataclass(frozen=True)
class Ended:
    """A room as its teacher sees it after it ended: closed or expired, its answers kept until `kept_until`."""

    code: str
    ended_at: float
    closed: bool  # False: it expired
    kept_until: float
    questions: int
    seats: int


def default_url() -> str:
    """ATTENTION_DB_URL if set, else an SQLite file in ATTENTION_DATA_DIR (default ~/.local/share/...)."""
    url = os.environ.get(URL_ENV, "").strip()
    if url:
        return url
    folder = Path(
        os.environ.get(DATA_DIR_ENV) or Path.home() / ".local" / "share" / "attention-from-scratch"
    ).expanduser()
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{folder / 'classroom.db'}"


def open_store(url: str | None = None, limits: Limits | None = None, clock: Callable[[], float] = time.time):
    """The store at `url` (None: `default_url()`), its schema created or upgraded to this version;
    errors.StoreUnavailable naming the problem if the database cannot be used."""
    try:
        url = url or default_url()
    except OSError as err:
        raise errors.StoreUnavailable(f"the classroom's data folder cannot be made ({DATA_DIR_ENV}): {err}") from None
    engine = make_engine(url)
    try:
        migrate(engine)
    except DATABASE_DOWN as err:
        engine.dispose()
        raise unavailable(err, engine.url) from None
    store = Store(engine, limits or Limits(), clock)
    store.purge()  # a worker that starts deletes what is past its keeping time (so do new rooms and the watchers)
    return store


def check_database(url: str | None = None) -> str:
    """Open the store at `url` (None: the configured one) once, as the app will: the database it names, without
    its password; errors.StoreUnavailable naming the problem otherwise (deploy/serve.py checks before serving)."""
    store = open_store(url)
    try:
        with store._read() as conn:
            conn.execute(select(func.count()).select_from(rooms)).scalar_one()
        return safe_url(store.engine.url)
    finally:
        store.engine.dispose()


# What a database that is down, unreachable, misnamed or refusing us raises (SQLAlchemy wraps the driver's error);
# never a rule of ours, nor a bug (an IntegrityError, a programming error) that must not read as an outage.
DATABASE_DOWN = (exc.OperationalError, exc.InterfaceError, exc.DisconnectionError, exc.TimeoutError)


def safe_url(url) -> str:
    """A database URL as it may be shown and logged: never its password."""
    return make_url(url).render_as_string(hide_password=True)


def unavailable(err: BaseException, url) -> errors.StoreUnavailable:
    """The outage `err` of the database at `url` as a message a teacher can act on: the database (no password)
    and the driver's own first line (a refused connection, an unknown host, a failed password)."""
    cause = getattr(err, "orig", None) or err
    first = (str(cause).strip().splitlines() or [type(cause).__name__])[0][:200]
    return errors.StoreUnavailable(f"the classroom database {safe_url(url)} cannot be used: {first}")


def make_engine(url: str) -> Engine:
    """An engine for `url`. SQLite: WAL (readers never wait for the writer), a 10 s busy timeout, foreign
    keys on, and writes that take the write lock when they begin (BEGIN IMMEDIATE: a write that started as
    a read could otherwise fail at once instead of waiting). PostgreSQL: connections checked before use,
    since a database restart must not cost a class its next click, and a connection given up after
    CONNECT_TIMEOUT_S (an unreachable host would otherwise hold a page run for minutes).
    errors.StoreUnavailable if `url` is not a database URL this app can use (the URL itself is not repeated:
    it may hold a password)."""
    try:
        parsed = make_url(url)
        if parsed.get_backend_name() not in ("sqlite", "postgresql"):
            raise errors.StoreUnavailable(
                f"the classroom database must be SQLite or PostgreSQL (postgresql+psycopg://...), "
                f"not {parsed.get_backend_name()!r}: check {URL_ENV}"
            )
    except exc.ArgumentError:
        raise errors.StoreUnavailable(
            f"{URL_ENV} is not a database URL: it should read postgresql+psycopg://USER:PASSWORD@HOST:PORT/DATABASE"
        ) from None
    if parsed.get_backend_name() == "sqlite":
        engine = create_engine(url, connect_args={"timeout": 10})

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_connection, _record):
            dbapi_connection.isolation_level = None  # SQLAlchemy's begin event below starts transactions
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA busy_timeout=10000")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn):
            write = conn.get_execution_options().get("classroom_write")
            conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

        return engine
    try:
        return create_engine(
            url, pool_pre_ping=True, pool_size=5, max_overflow=5, connect_args={"connect_timeout": CONNECT_TIMEOUT_S}
        )
    except (exc.NoSuchModuleError, ImportError) as err:
        raise errors.StoreUnavailable(f"the classroom database {safe_url(parsed)} needs a driver: {err}") from None


CONNECT_TIMEOUT_S = 5
NOTIFY_CHANNEL = "attention_rooms"  # PostgreSQL: every committed write of the store is announced on it


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class Store:
    """Every classroom action, each one transaction. Methods taking `teacher_key` are the teacher's."""

    def __init__(self, engine: Engine, limits: Limits, clock: Callable[[], float] = time.time) -> None:
        self.engine, self.limits, self.clock = engine, limits, clock
        # called with no argument after each committed write of this process (a watcher looks at once instead of
        # at its next tick: ui/classroom_push.py); a failing callback is the caller's, the write stays committed
        self.after_write: list[Callable[[], None]] = []

    # ------------------------------------------------------------ other processes' writes
    def listens(self) -> bool:
        """Whether `listen` can hear other processes' writes (PostgreSQL); with SQLite, on one machine, the
        watchers look every PUSH_EVERY_S instead (ui/classroom_push.py)."""
        return self.engine.dialect.name == "postgresql"

    def listen(self, heard: Callable[[], None], stopped: threading.Event, wait_s: float = 5.0) -> None:
        """PostgreSQL: call `heard()` once LISTEN holds, then after each committed write of the store by any
        process on any host (NOTIFY at the commit: `_Tx`), until `stopped` is set. One connection of its own,
        outside the pool; errors.StoreUnavailable when it is lost (the caller listens again). Several writes
        heard at once may give one call."""
        import psycopg

        url = self.engine.url
        args = {**url.translate_connect_args(username="user", database="dbname"), **dict(url.query)}
        try:
            with psycopg.connect(autocommit=True, connect_timeout=CONNECT_TIMEOUT_S, **args) as conn:
                conn.execute(f"LISTEN {NOTIFY_CHANNEL}")
                heard()  # what was written before LISTEN held
                while not stopped.is_set():
                    for _ in conn.notifies(timeout=wait_s, stop_after=1):
                        heard()
        except psycopg.Error as err:
            raise unavailable(err, url) from None

    # ------------------------------------------------------------ transactions
    def _read(self):
        return _Tx(self.engine, write=False)

    def _write(self):
        return _Tx(self.engine, write=True, after=self.after_write)

    def _room(self, conn: Connection, code: str, *, lock: bool = False):
        query = select(rooms).where(rooms.c.code == normalise_code(code))
        if lock:
            query = query.with_for_update()  # PostgreSQL: joins and questions of one room take turns
        row = conn.execute(query).mappings().first()
        if row is None:
            raise errors.RoomNotFound(tr("there is no room with the code {code}", code=repr(normalise_code(code)[:12])))
        return row

    def _check_open(self, room) -> None:
        if room["closed"]:
            raise errors.RoomClosed(tr("room {code} has been closed by its teacher", code=room["code"]))
        if room["expires_at"] <= self.clock():
            raise errors.RoomExpired(
                tr(
                    "room {code} has expired (a room lasts {hours} hours)",
                    code=room["code"],
                    hours=num(self.limits.room_hours, "g"),
                )
            )

    def _teacher(self, conn: Connection, code: str, teacher_key: Any, *, lock: bool = False, open_: bool = True):
        room = self._room(conn, code, lock=lock)
        if not isinstance(teacher_key, str) or not hmac.compare_digest(hash_key(teacher_key), room["teacher_hash"]):
            raise errors.TeacherKeyRejected(tr("that is not the teacher key of room {code}", code=room["code"]))
        if open_:
            self._check_open(room)
        ended_at = self._ended_at(room)
        if ended_at is not None and ended_at + self.limits.keep_days * 86400 <= self.clock():
            # past its keeping time: gone for its teacher at once, deleted at the next purge
            raise errors.RoomNotFound(
                tr_n(
                    "room {code}'s answers were deleted: they are kept {days} day after it ends",
                    "room {code}'s answers were deleted: they are kept {days} days after it ends",
                    _plural_count(self.limits.keep_days),
                    code=room["code"],
                    days=num(self.limits.keep_days, "g"),
                )
            )
        return room

    # ------------------------------------------------------------ rooms
    def create_room(self) -> Room:
        """A new room with a fresh join code, teacher key and student link token; TooManyRooms past the
        server's limit. Rooms whose keeping time has passed are deleted first."""
        now = self.clock()
        self.purge()
        with self._write() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(7307034)"))  # one room count at a time
            open_rooms = conn.execute(
                select(func.count()).select_from(rooms).where(~rooms.c.closed, rooms.c.expires_at > now)
            ).scalar_one()
            if open_rooms >= self.limits.open_rooms:
                raise errors.TooManyRooms(
                    tr(
                        "this server already has {rooms} open rooms, its limit: try again when a class ends",
                        rooms=open_rooms,
                    )
                )
            for _ in range(20):
                code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
                if conn.execute(select(rooms.c.code).where(rooms.c.code == code)).first() is None:
                    break
            else:  # 27**6 codes: twenty collisions in a row means something else is wrong
                raise RuntimeError("could not find an unused room code")
            key, token = secrets.token_urlsafe(24), secrets.token_urlsafe(12)
            expires = now + self.limits.room_hours * 3600
            conn.execute(
                rooms.insert().values(
                    code=code,
                    teacher_hash=hash_key(key),
                    created_at=now,
                    expires_at=expires,
                    closed=False,
                    view=None,
                    question_id=None,
                    paused=False,
                    gather=0,
                    version=0,
                    activity=0,
                    link_token=token,
                    removals=0,
                )
            )
        return Room(code, key, expires, token)

    def check_teacher(self, code: str, teacher_key: str) -> None:
        """Nothing if `teacher_key` is the key of the open room `code`; else why not (a closed or expired room:
        RoomClosed or RoomExpired, whose results `ended` still gives its teacher)."""
        with self._read() as conn:
            self._teacher(conn, code, teacher_key)

    def close(self, code: str, teacher_key: str) -> None:
        """Close the room: nobody can join or answer any more; its answers stay for its teacher (`ended`,
        `export_csv`) for Limits.keep_days, then they are deleted."""
        with self._write() as conn:
            room = self._teacher(conn, code, teacher_key, open_=False)
            if not room["closed"]:
                conn.execute(_bumped(room).values(closed=True, ended_at=self.clock()))

    def ended(self, code: str, teacher_key: str) -> Ended:
        """What is left of a closed or expired room for its teacher: when it ended and until when its answers are
        kept. RoomNotFound once they were deleted; RoomClosed-like errors never (the room has ended)."""
        with self._read() as conn:
            room = self._teacher(conn, code, teacher_key, open_=False)
            ended_at = self._ended_at(room)
            if ended_at is None:
                raise errors.ClassroomError(tr("room {code} is still open", code=room["code"]))
            asked = conn.execute(
                select(func.count()).select_from(questions).where(questions.c.room_code == room["code"])
            ).scalar_one()
            return Ended(
                room["code"],
                ended_at,
                bool(room["closed"]),
                ended_at + self.limits.keep_days * 86400,
                int(asked),
                _count_students(conn, room["code"]),
            )

    def _ended_at(self, room) -> float | None:
        if room["closed"]:
            return room["ended_at"] if room["ended_at"] is not None else room["expires_at"]
        return room["expires_at"] if room["expires_at"] <= self.clock() else None

    def delete_room(self, code: str, teacher_key: str) -> None:
        """Delete the room and everything in it (its seats, questions and answers) now, open or ended."""
        with self._write() as conn:
            room = self._teacher(conn, code, teacher_key, open_=False)
            _delete_rooms(conn, [room["code"]])

    def purge(self) -> int:
        """Delete every room that ended more than Limits.keep_days ago, with everything in it; how many."""
        cutoff = self.clock() - self.limits.keep_days * 86400
        ended = func.coalesce(rooms.c.ended_at, rooms.c.expires_at)
        old = select(rooms.c.code).where((rooms.c.expires_at <= cutoff) | (rooms.c.closed & (ended <= cutoff)))
        with self._read() as conn:
            found = conn.execute(old).scalars().all()
        if found:
            with self._write() as conn:
                found = conn.execute(old).scalars().all()  # again, in the write: another worker may have been first
                _delete_rooms(conn, found)
        return len(found)

    # ------------------------------------------------------------ the teacher's leading tab
    def take_lead(self, code: str, teacher_key: str, tab: str | None) -> None:
        """Make `tab` (a teacher's browser tab, named by its worker and session) the one the class follows; None:
        no tab (the next of the teacher's tabs whose page runs takes it)."""
        with self._write() as conn:
            room = self._teacher(conn, code, teacher_key)
            if room["leader"] != tab:
                leader = None if tab is None else str(tab)[:100]  # None: no tab leads (the next to run takes it)
                conn.execute(_bumped(room).values(leader=leader, leader_seen_at=self.clock() if leader else None))

    def release_leads(
        self, tabs=(), codes=(), stale_s: float | None = None, successors: dict[str, str] | None = None
    ) -> list[str]:
        """Let go the lead of the tabs `tabs` (their browsers have gone: a reload, a closed tab): the next of the
        teacher's tabs whose page runs leads. And among the rooms `codes`, the lead of a tab no worker has seen for
        `stale_s` (its worker died) goes to the room's tab in `successors` ({code: tab}, a teacher's tab the caller
        holds connected), or to none. Returns the rooms whose lead changed (their version bumped)."""
        tabs, codes = sorted(set(tabs)), sorted({normalise_code(c) for c in codes})
        gone = rooms.c.leader.in_(tabs) if tabs else None
        stale = None
        if codes and stale_s is not None:
            stale = rooms.c.code.in_(codes) & (func.coalesce(rooms.c.leader_seen_at, 0) < self.clock() - stale_s)
        where = [w for w in (gone, stale) if w is not None]
        if not where:
            return []
        either = rooms.c.leader.is_not(None) & (where[0] if len(where) == 1 else where[0] | where[1])
        with self._read() as conn:
            if not conn.execute(select(rooms.c.code).where(either)).first():
                return []  # nothing to let go: no write (a watcher asks every few seconds)
        successors = successors or {}
        changed = []
        with self._write() as conn:
            for code, leader in conn.execute(select(rooms.c.code, rooms.c.leader).where(either)).all():
                heir = successors.get(code) if stale is not None and leader not in tabs else None
                values = {"leader": heir, "leader_seen_at": self.clock() if heir else None}
                conn.execute(rooms.update().where(rooms.c.code == code).values(version=rooms.c.version + 1, **values))
                changed.append(code)
        return changed

    def seen(self, sids=(), leaders=()) -> None:
        """The students `sids` and the leading tabs `leaders` are connected now (a worker's watcher says so every
        few seconds for the sessions it holds): who is here now, and whether the leading tab has gone."""
        sids, leaders = sorted(set(sids)), sorted(set(leaders))
        if not sids and not leaders:
            return
        now = self.clock()
        with self._write() as conn:
            if sids:
                conn.execute(students.update().where(students.c.id.in_(sids)).values(seen_at=now))
            if leaders:
                conn.execute(rooms.update().where(rooms.c.leader.in_(leaders)).values(leader_seen_at=now))

    # ------------------------------------------------------------ students
    def join(
        self, code: str, nickname: str | None = None, client: str = "", browser: str = "", token: str | None = None
    ) -> str:
        """A new student id in the room `code`. `token`, the student link's, joins without the limit on wrong
        codes; a typed code counts against it: `browser` (the session typing) and `client` (its address) each
        have their number of wrong codes per window. Refused: unknown, closed, expired or full rooms, too many
        wrong codes, a nickname too long or with control characters."""
        nickname = check_nickname(nickname)
        client, browser = "a:" + str(client)[:60], "b:" + str(browser)[:60]
        now = self.clock()
        with self._write() as conn:
            window = now - self.limits.wrong_join_window_s
            room = conn.execute(select(rooms).where(rooms.c.code == normalise_code(code))).mappings().first()
            linked = (
                room is not None
                and isinstance(token, str)
                and room["link_token"] is not None
                and hmac.compare_digest(token.encode(), str(room["link_token"]).encode())
            )
            if not linked:
                self._check_guesses(conn, client, browser, window)
            try:
                room = self._room(conn, code, lock=True)
            except errors.RoomNotFound as err:
                conn.execute(join_failures.delete().where(join_failures.c.at <= window))
                conn.execute(join_failures.insert().values([{"client": c, "at": now} for c in (client, browser)]))
                refused = err  # raised after the commit: the wrong code must be remembered
            else:
                refused = None
                self._check_open(room)
                seats = _count_students(conn, room["code"])
                here = _count_here(conn, room["code"], now - self.limits.here_s)
                if here >= self.limits.students_per_room:
                    raise errors.RoomFull(
                        tr(
                            "room {code} is full: {here} students are in it, the limit is {limit}",
                            code=room["code"],
                            here=here,
                            limit=self.limits.students_per_room,
                        )
                    )
                if seats >= self.limits.seats_per_room:
                    raise errors.RoomFull(
                        tr(
                            "room {code} has handed out {seats} seats, its limit: ask the teacher to start a new room",
                            code=room["code"],
                            seats=seats,
                        )
                    )
                sid = secrets.token_urlsafe(24)
                number = (
                    conn.execute(
                        select(func.max(students.c.number)).where(students.c.room_code == room["code"])
                    ).scalar()
                    or 0
                ) + 1
                conn.execute(
                    students.insert().values(
                        id=sid, room_code=room["code"], number=number, nickname=nickname, joined_at=now, seen_at=now
                    )
                )
                conn.execute(_active(room))
        if refused is not None:
            raise refused
        return sid

    def _check_guesses(self, conn: Connection, client: str, browser: str, window: float) -> None:
        for who, limit, message in (
            (
                browser,
                self.limits.wrong_joins,
                marked(
                    "{wrong} wrong room codes from this browser tab in the last {minutes} minutes: wait a few "
                    "minutes, or open the student link (or scan the QR code), which always works"
                ),
            ),
            (
                client,
                self.limits.wrong_joins_per_address,
                marked(
                    "{wrong} wrong room codes from this network address in the last {minutes} minutes: wait a few "
                    "minutes, or open the student link (or scan the QR code), which always works"
                ),
            ),
        ):
            wrong = conn.execute(
                select(func.count())
                .select_from(join_failures)
                .where(join_failures.c.client == who, join_failures.c.at > window)
            ).scalar_one()
            if wrong >= limit:
                raise errors.JoinRateLimited(
                    tr(message, wrong=wrong, minutes=num(self.limits.wrong_join_window_s / 60, "g"))
                )

    def student(self, code: str, sid: str) -> str | None:
        """The nickname of student `sid` of the open room `code` (None: anonymous); UnknownStudent if the
        room has no such student (a reloading student checks it is still in)."""
        with self._read() as conn:
            room = self._room(conn, code)
            self._check_open(room)
            return self._student(conn, room["code"], sid)["nickname"]

    def rename(self, code: str, sid: str, nickname: str | None) -> str | None:
        """Student `sid` takes `nickname` (None or blanks: anonymous again); the nickname as stored."""
        nickname = check_nickname(nickname)
        with self._write() as conn:
            room = self._room(conn, code)
            self._check_open(room)
            self._student(conn, room["code"], sid)
            conn.execute(students.update().where(students.c.id == sid).values(nickname=nickname))
            conn.execute(_active(room))
        return nickname

    def _student(self, conn: Connection, code: str, sid: Any):
        row = None
        if isinstance(sid, str):
            row = (
                conn.execute(select(students).where(students.c.id == sid, students.c.room_code == code))
                .mappings()
                .first()
            )
        if row is None:
            raise errors.UnknownStudent(tr("this device is not a student of room {code}: join it again", code=code))
        return row

    def seats(self, code: str, teacher_key: str) -> list[Seat]:
        """Every seat of the room, in the order they joined: its number, nickname, whether it is here now and
        how many questions it answered (for the teacher: seats, not people)."""
        with self._read() as conn:
            room = self._teacher(conn, code, teacher_key, open_=False)
            here_since = self.clock() - self.limits.here_s
            counted = select(answers.c.student_id, func.count().label("n")).group_by(answers.c.student_id).subquery()
            rows = conn.execute(
                select(students, counted.c.n)
                .outerjoin(counted, counted.c.student_id == students.c.id)
                .where(students.c.room_code == room["code"])
                .order_by(students.c.number)
            ).mappings()
            return [
                Seat(
                    int(r["number"]),
                    r["nickname"],
                    float(r["joined_at"]),
                    float(r["seen_at"] or r["joined_at"]),
                    (r["seen_at"] or r["joined_at"]) > here_since,
                    int(r["n"] or 0),
                )
                for r in rows
            ]

    def remove_seat(self, code: str, teacher_key: str, number: int) -> None:
        """Remove seat `number` and its answers (a browser that joined twice, a student who left); its browser, if
        still there, is told and may join again."""
        with self._write() as conn:
            room = self._teacher(conn, code, teacher_key, open_=False)
            sid = conn.execute(
                select(students.c.id).where(students.c.room_code == room["code"], students.c.number == number)
            ).scalar()
            if sid is None:
                raise errors.UnknownStudent(
                    tr("room {code} has no seat {number}", code=room["code"], number=repr(number))
                )
            conn.execute(answers.delete().where(answers.c.student_id == sid))
            conn.execute(students.delete().where(students.c.id == sid))
            conn.execute(_bumped(room).values(removals=rooms.c.removals + 1, activity=rooms.c.activity + 1))

    # ------------------------------------------------------------ following the teacher
    def lead(self, code: str, teacher_key: str, view: str, tab: str | None = None) -> int | None:
        """Make `view` (a relative link such as "/causal?causal=1") the room's current view; returns the room's
        version after it. None, and the view stays, when another of the teacher's tabs leads (`tab`: this one; a
        room nobody leads yet takes it) or while a question is open (its students stay on the view it was asked
        on until the reveal)."""
        view = check_view(view)
        with self._write() as conn:
            room = self._teacher(conn, code, teacher_key)
            if not _may_lead(conn, room, tab):
                return None
            changes = {}
            if room["view"] != view:
                changes["view"] = view
            if tab is not None and room["leader"] is None:
                changes |= {"leader": str(tab)[:100], "leader_seen_at": self.clock()}
            if not changes:
                return int(room["version"])
            conn.execute(_bumped(room).values(**changes))
            return int(room["version"]) + 1

    # ------------------------------------------------------------ a lesson deck
    def start_lesson(
        self,
        code: str,
        teacher_key: str,
        lesson: dict,
        tab: str | None = None,
        question: dict | None = None,
        truth: Any = None,
    ) -> int | None:
        """Run `lesson` (a checked deck as plain data, classroom.decks.Deck.to_dict) in the room, on its first step,
        with that step's `question` asked (see `go_to_step`), in one transaction; returns the room's version after
        it, or None, and nothing changes, when the class cannot move now."""
        steps = lesson.get("step") if isinstance(lesson, dict) else None
        if not isinstance(steps, list) or not 1 <= len(steps) <= LESSON_STEPS:
            raise errors.InvalidLesson(tr("a lesson has 1 to {most} steps", most=LESSON_STEPS))
        for n, step in enumerate(steps, 1):
            try:
                check_view(step.get("view") if isinstance(step, dict) else None)
            except errors.InvalidView as err:
                # Translators: "step 3's" + why its view is refused ("a view is a link within the app...")
                raise errors.InvalidLesson(tr("step {n}'s {error}", n=n, error=str(err))) from None
        stored = json.dumps(lesson, ensure_ascii=False)
        if len(stored) > LESSON_CHARS:
            raise errors.InvalidLesson(
                tr("a lesson is at most {chars} characters as stored", chars=num(LESSON_CHARS, ","))
            )
        posed = None if question is None else _checked_question(question, truth)
        with self._write() as conn:
            room = self._teacher(conn, code, teacher_key, lock=posed is not None)
            if not _may_lead(conn, room, tab):
                return None
            after = _last_question(conn, room)  # the questions of this lesson are the ones after it
            _forget_steps(conn, room)
            started = dict(room) | {"lesson": stored, "lesson_after": after, "paced_at": None}
            changes = {"lesson": stored, "lesson_after": after, "paced_at": None}
            changes |= self._step_changes(conn, started, steps, 0, tab, posed)
            conn.execute(_bumped(room).values(**changes))
            return int(room["version"]) + 1

    def lesson(self, code: str, teacher_key: str) -> tuple[dict, int] | None:
        """The room's lesson and the step the class is on (None: the room runs none, or has not reached a step)."""
        with self._read() as conn:
            room = self._teacher(conn, code, teacher_key)
            if room["lesson"] is None or room["lesson_step"] is None:
                return None
            return json.loads(room["lesson"]), int(room["lesson_step"])

    def go_to_step(
        self,
        code: str,
        teacher_key: str,
        step: int,
        tab: str | None = None,
        question: dict | None = None,
        truth: Any = None,
    ) -> int | None:
        """Move the class to step `step` (from 0) of the room's lesson: its view becomes the room's, as the teacher's
        move makes it, and `question` (the step's, built from that view, with its `truth`), if given, is asked in the
        same transaction: no screen shows the step without its question held. Returns the room's version after it;
        None, and nothing moves, when another of the teacher's tabs leads or a question is open (its students stay
        on its view until the reveal)."""
        posed = None if question is None else _checked_question(question, truth)
        with self._write() as conn:
            room = self._teacher(conn, code, teacher_key, lock=posed is not None)
            if room["lesson"] is None:
                raise errors.InvalidLesson(tr("the room runs no lesson"))
            steps = json.loads(room["lesson"])["step"]
            if not _is_step(step, len(steps)):
                raise errors.InvalidLesson(
                    tr("the lesson has steps 1 to {count}, not {step}", count=len(steps), step=repr(step))
                )
            if not _may_lead(conn, room, tab):
                return None
            conn.execute(_bumped(room).values(**self._step_changes(conn, room, steps, step, tab, posed)))
            return int(room["version"]) + 1

    def _step_changes(self, conn: Connection, room, steps: list, step: int, tab: str | None, posed) -> dict:
        """The room's changes that put the class on step `step` (its view, the tab that leads, the question asked).
        A step's question is asked once in a lesson: one the class has been asked on that step already (revealed, or
        answered by students at their own pace) becomes the room's question again instead of `posed`. Students at
        their own pace all come to the step and follow the teacher again."""
        changes = {"view": check_view(steps[step]["view"]), "lesson_step": step}
        if tab is not None and room["leader"] is None:
            changes |= {"leader": str(tab)[:100], "leader_seen_at": self.clock()}
        if room["paced_at"] is not None:
            changes |= {"paced_at": None, "gather": rooms.c.gather + 1, "question_id": None}
        asked = _lesson_questions(conn, room).get(step)
        if asked is not None:
            changes["question_id"] = asked.id
        elif posed is not None:
            changes |= self._pose(conn, room, *posed, step=step)
        return changes

    def pace_lesson(self, code: str, teacher_key: str, posed: list[tuple[int, dict, Any]]) -> int | None:
        """The students go through the room's lesson at their own pace, each from the step the class is on, with
        each step's question open on it: `posed`, one (step, question, truth) per step that has one, for the steps
        whose question the class has not been asked yet in this lesson (one it has keeps its answers, and its reveal;
        a question's time limit is dropped: students reach it at different times). `go_to_step` brings them all
        back. Returns the room's version after it; None, and nothing changes, while a question is open."""
        checked = []
        for step, question, truth in posed:
            body, hidden = _checked_question({k: v for k, v in question.items() if k != "seconds"}, truth)
            checked.append((step, body, hidden))
        with self._write() as conn:
            room = self._teacher(conn, code, teacher_key, lock=True)
            if room["lesson"] is None:
                raise errors.InvalidLesson(tr("the room runs no lesson"))
            count = len(json.loads(room["lesson"])["step"])
            steps = [step for step, _, _ in checked]
            if len(set(steps)) != len(steps) or not all(_is_step(step, count) for step in steps):
                raise errors.InvalidLesson(
                    tr("one question per step, on steps 1 to {count}: not {steps}", count=count, steps=repr(steps))
                )
            if not _may_lead(conn, room, None):
                return None
            asked = _lesson_questions(conn, room)
            for step, body, hidden in checked:
                if step not in asked:
                    self._insert_question(conn, room, body, hidden, step)
            conn.execute(
                students.update()
                .where(students.c.room_code == room["code"])
                .values(lesson_step=None)  # from the class's step; how far each went stays (their answers)
            )
            version = int(room["version"]) + 1
            conn.execute(_bumped(room).values(paced_at=version, question_id=None))
            return version

    def my_step(self, code: str, sid: str) -> tuple[int, int] | None:
        """The lesson step student `sid` is on and the furthest one they went to: their own while the students go at
        their own pace (from the step the class was on when they started), else the class's (both); None when the
        room runs no lesson."""
        with self._read() as conn:
            room = self._room(conn, code)
            self._check_open(room)
            student = self._student(conn, room["code"], sid)
            step = _step_of(student, room)
            return None if step is None else (step, _reached(student, room))

    def student_step(self, code: str, sid: str, step: int) -> None:
        """Student `sid`, at their own pace, goes to lesson step `step` (from 0); the questions of the steps before
        the furthest one they reach take no more answers from them. Refused while the class follows the teacher,
        and outside the lesson's steps."""
        with self._write() as conn:
            room = self._room(conn, code)
            self._check_open(room)
            student = self._student(conn, room["code"], sid)
            if room["lesson"] is None or room["paced_at"] is None:
                raise errors.InvalidLesson(tr("the class follows the teacher through the lesson now"))
            count = len(json.loads(room["lesson"])["step"])
            if not _is_step(step, count):
                raise errors.InvalidLesson(
                    tr("the lesson has steps 1 to {count}, not {step}", count=count, step=repr(step))
                )
            reached = max(_reached(student, room), step)
            conn.execute(
                students.update().where(students.c.id == student["id"]).values(lesson_step=step, lesson_reached=reached)
            )
            conn.execute(_active(room))

    def step_counts(self, code: str, teacher_key: str) -> list[int]:
        """How many students here now are on each step of the room's lesson (empty: it runs none)."""
        with self._read() as conn:
            room = self._teacher(conn, code, teacher_key)
            if room["lesson"] is None:
                return []
            counts = [0] * len(json.loads(room["lesson"])["step"])
            seen = func.coalesce(students.c.seen_at, students.c.joined_at)
            rows = conn.execute(
                select(students.c.lesson_step, students.c.lesson_reached).where(
                    students.c.room_code == room["code"], seen > self.clock() - self.limits.here_s
                )
            ).mappings()
            for student in rows:
                step = _step_of(student, room)
                if step is not None and 0 <= step < len(counts):
                    counts[step] += 1
            return counts

    def end_lesson(self, code: str, teacher_key: str) -> None:
        """The room runs no lesson any more; the class stays where it is (students at their own pace follow the
        teacher again)."""
        with self._write() as conn:
            room = self._teacher(conn, code, teacher_key)
            _forget_steps(conn, room)
            changes = {"lesson": None, "lesson_step": None, "paced_at": None}
            if room["paced_at"] is not None:
                changes |= {"gather": rooms.c.gather + 1}
            conn.execute(_bumped(room).values(**changes))

    def current_view(self, code: str) -> str | None:
        with self._read() as conn:
            return self._room(conn, code)["view"]

    def pause(self, code: str, teacher_key: str, paused: bool = True) -> None:
        """Pause the class (every screen shows an 'eyes on the teacher' card) or resume it."""
        with self._write() as conn:
            room = self._teacher(conn, code, teacher_key)
            conn.execute(_bumped(room).values(paused=bool(paused)))

    def gather(self, code: str, teacher_key: str) -> int:
        """Bring every student back to following the teacher (those at their own pace too); returns the room's new
        gather count."""
        with self._write() as conn:
            room = self._teacher(conn, code, teacher_key)
            conn.execute(_bumped(room).values(gather=rooms.c.gather + 1, paced_at=None))  # at their own pace: no more
            return room["gather"] + 1

    def state(self, code: str) -> RoomState:
        """Everything a screen in the room draws, in one read; the room's error if it is closed or expired."""
        with self._read() as conn:
            room = self._room(conn, code)
            self._check_open(room)
            question = None
            if room["question_id"] is not None:
                question = _question(conn, room["code"], room["question_id"])
            return RoomState(
                room["code"],
                room["view"],
                bool(room["paused"]),
                int(room["gather"]),
                question,
                _count_students(conn, room["code"]),
                room["expires_at"],
                int(room["version"]),
                int(room["activity"]),
                _count_here(conn, room["code"], self.clock() - self.limits.here_s),
                room["leader"],
                room["leader_seen_at"],
                int(room["removals"]),
                room["link_token"] or "",
                room["lesson_step"] if room["lesson"] is not None else None,
                _public_steps(room["lesson"]),
                room["paced_at"] if room["lesson"] is not None else None,
                _lesson_questions(conn, room),
            )

    def pulses(self, codes) -> dict[str, RoomPulse]:
        """The version, activity and view of each open room among `codes`, in one query (what a worker's
        watcher compares with what its screens last drew). A closed, expired or unknown room is left out."""
        codes = sorted({normalise_code(c) for c in codes})
        if not codes:
            return {}
        with self._read() as conn:
            rows = conn.execute(
                select(rooms.c.code, rooms.c.version, rooms.c.activity, rooms.c.view).where(
                    rooms.c.code.in_(codes), ~rooms.c.closed, rooms.c.expires_at > self.clock()
                )
            ).all()
        return {r.code: RoomPulse(int(r.version), int(r.activity), r.view) for r in rows}

    def here(self, codes) -> dict[str, int]:
        """How many students are here now in each of the open rooms `codes` (one query)."""
        codes = sorted({normalise_code(c) for c in codes})
        if not codes:
            return {}
        since = self.clock() - self.limits.here_s
        with self._read() as conn:
            rows = conn.execute(
                select(students.c.room_code, func.count())
                .where(students.c.room_code.in_(codes), func.coalesce(students.c.seen_at, students.c.joined_at) > since)
                .group_by(students.c.room_code)
            ).all()
        found = {code: int(n) for code, n in rows}
        return {code: found.get(code, 0) for code in codes}

    # ------------------------------------------------------------ questions
    def ask(self, code: str, teacher_key: str, question: dict, truth: Any = None, step: int | None = None) -> int:
        """Pose `question` to the room (it becomes the question asked now, and every student follows the teacher
        again: it is asked about the teacher's view); returns its id. `truth`, the true answer if the page knows it
        (a choice question's: one option or the list of every right one), is kept out of every student's sight
        until the reveal. `step`: the lesson step the class is on, whose question this is (asked again)."""
        body, hidden = _checked_question(question, truth)
        with self._write() as conn:
            room = self._teacher(conn, code, teacher_key, lock=True)
            if step is not None and (room["lesson"] is None or step != room["lesson_step"]):
                raise errors.InvalidLesson(tr("the class is not on step {step} of a lesson", step=repr(step)))
            changes = self._pose(conn, room, body, hidden, step=step)
            conn.execute(_bumped(room).values(**changes))
            return int(changes["question_id"])

    def _pose(self, conn: Connection, room, body: dict, hidden: str | None, step: int | None = None) -> dict:
        """Store the question `body` (checked) in `room`, as lesson `step`'s if given, and return the room's changes
        that make it the one asked now (the whole class's: students at their own pace follow the teacher again)."""
        qid = self._insert_question(conn, room, body, hidden, step)
        changes = {"question_id": qid, "gather": rooms.c.gather + 1, "paced_at": None}
        if isinstance(body.get("view"), str):
            changes["view"] = check_view(body["view"])  # the students see what the question is about
        return changes

    def _insert_question(self, conn: Connection, room, body: dict, hidden: str | None, step: int | None = None) -> int:
        """Store the question `body` (checked) in `room`, as the question of lesson `step` if given; returns its id."""
        asked = conn.execute(
            select(func.count()).select_from(questions).where(questions.c.room_code == room["code"])
        ).scalar_one()
        if asked >= self.limits.questions_per_room:
            raise errors.TooManyQuestions(
                tr(
                    "room {code} has asked {asked} questions, its limit: start a new room",
                    code=room["code"],
                    asked=asked,
                )
            )
        return conn.execute(
            questions.insert()
            .values(
                room_code=room["code"],
                number=asked + 1,
                body=json.dumps(body),
                asked_at=self.clock(),
                revealed=False,
                truth=hidden,
                step=step,
            )
            .returning(questions.c.id)
        ).scalar_one()

    def reveal(self, code: str, teacher_key: str, qid: int, truth: Any = None) -> None:
        """End the answers to question `qid` and show its true value: `truth` (checked like the one given when it
        was asked), or else the one given when it was asked (None: the question has none)."""
        with self._write() as conn:
            room = self._teacher(conn, code, teacher_key)
            question = _question(conn, room["code"], qid, teacher=True)
            stored = question.truth if truth is None else check_truth(question.body, truth)
            conn.execute(
                questions.update()
                .where(questions.c.id == question.id)
                .values(revealed=True, truth=None if stored is None else json.dumps(stored))
            )
            conn.execute(_bumped(room))

    def end_question(self, code: str, teacher_key: str) -> None:
        """Take the question off the students' screens (its answers stay)."""
        with self._write() as conn:
            room = self._teacher(conn, code, teacher_key)
            conn.execute(_bumped(room).values(question_id=None))

    def answer(self, code: str, sid: str, qid: int, value: Any) -> None:
        """Student `sid`'s answer to the question asked now; a later answer replaces an earlier one, until
        the reveal. Refused: another room's student or question, a question no longer asked or whose time is up,
        a bad value."""
        with self._write() as conn:
            room = self._room(conn, code)
            self._check_open(room)
            student = self._student(conn, room["code"], sid)
            question = _question(conn, room["code"], qid)
            asked = _lesson_questions(conn, room)
            on_step = asked.get(_step_of(student, room)) if room["paced_at"] is not None else None  # at their pace
            if question.revealed or question.id not in (room["question_id"], on_step and on_step.id):
                raise errors.AnswersClosed(tr("question {number} is no longer taking answers", number=question.number))
            of_step = asked.get(question.step)  # this lesson's question of its step, if it is one
            if of_step is not None and of_step.id == question.id and _reached(student, room) > question.step:
                raise errors.AnswersClosed(
                    tr(
                        "you went on past question {number}'s step at your own pace: your answer is final",
                        number=question.number,
                    )
                )
            if question.closes_at is not None and self.clock() > question.closes_at:
                raise errors.AnswersClosed(
                    tr("the time for answers to question {number} is up", number=question.number)
                )
            stored = json.dumps(check_answer(question.body, value))
            values = {"question_id": question.id, "student_id": student["id"], "value": stored}
            values["answered_at"] = self.clock()
            dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
            insert = dialect.insert(answers).values(**values)
            conn.execute(
                insert.on_conflict_do_update(
                    index_elements=[answers.c.question_id, answers.c.student_id],
                    set_={"value": insert.excluded.value, "answered_at": insert.excluded.answered_at},
                )
            )
            conn.execute(_active(room))

    def my_answer(self, code: str, sid: str, qid: int) -> Any:
        """Student `sid`'s answer to question `qid` (None: not answered)."""
        with self._read() as conn:
            room = self._room(conn, code)
            self._student(conn, room["code"], sid)
            question = _question(conn, room["code"], qid)
            found = conn.execute(
                select(answers.c.value).where(answers.c.question_id == question.id, answers.c.student_id == sid)
            ).scalar()
            return None if found is None else json.loads(found)

    def results(self, code: str, teacher_key: str, qid: int, names: bool = False) -> Results:
        """Seats, here now, answered and the answers to `qid`; the nicknames too only when `names` is asked for."""
        with self._read() as conn:
            room = self._teacher(conn, code, teacher_key, open_=False)
            question = _question(conn, room["code"], qid, teacher=True)
            rows = conn.execute(
                select(answers.c.value, students.c.nickname)
                .join(students, students.c.id == answers.c.student_id)
                .where(answers.c.question_id == question.id)
                .order_by(students.c.number)
            ).all()
            return Results(
                question,
                _count_students(conn, room["code"]),
                _count_here(conn, room["code"], self.clock() - self.limits.here_s),
                len(rows),
                [json.loads(r.value) for r in rows],
                [r.nickname for r in rows] if names else None,
            )

    def questions(self, code: str, teacher_key: str) -> list[Question]:
        with self._read() as conn:
            room = self._teacher(conn, code, teacher_key, open_=False)
            ids = conn.execute(
                select(questions.c.id).where(questions.c.room_code == room["code"]).order_by(questions.c.number)
            ).scalars()
            return [_question(conn, room["code"], qid, teacher=True) for qid in ids]

    def export_csv(self, code: str, teacher_key: str) -> str:
        """Every question of the room and every answer, one row per answer (a question nobody answered:
        one row without a student), in the order the students joined: 'student 1', 'student 2' ...,
        with their nickname beside it, and whether it was right once revealed. Times in UTC (the column says
        so); a byte-order mark first, so that spreadsheet programs read the file as UTF-8; a cell a spreadsheet
        would run as a formula starts with an apostrophe."""
        with self._read() as conn:
            room = self._teacher(conn, code, teacher_key, open_=False)
            roster = conn.execute(
                select(students.c.id, students.c.number, students.c.nickname)
                .where(students.c.room_code == room["code"])
                .order_by(students.c.number)
            ).all()
            number = {r.id: r.number for r in roster}
            nick = {r.id: r.nickname or "" for r in roster}
            out = io.StringIO()
            out.write("\ufeff")
            writer = csv.writer(out)
            writer.writerow(
                ["room", "question", "prompt", "kind", "truth", "student", "nickname", "answer", "right", CSV_TIME]
            )
            for qid in conn.execute(
                select(questions.c.id).where(questions.c.room_code == room["code"]).order_by(questions.c.number)
            ).scalars():
                q = _question(conn, room["code"], qid, teacher=True)
                truth = q.truth if q.revealed else None
                head = [room["code"], q.number, prompt_text(q.body), q.body["kind"], answer_label(q.body, truth)]
                rows = conn.execute(
                    select(answers)
                    .join(students, students.c.id == answers.c.student_id)
                    .where(answers.c.question_id == q.id)
                    .order_by(students.c.number)
                ).mappings()
                wrote = False
                for a in rows:
                    value = json.loads(a["value"])
                    when = datetime.fromtimestamp(a["answered_at"], UTC).strftime("%Y-%m-%d %H:%M:%S")
                    sid = a["student_id"]
                    right = {True: "yes", False: "no", None: ""}[is_right(q.body, truth, value)]
                    writer.writerow(
                        _cells(head + [f"student {number[sid]}", nick[sid], answer_label(q.body, value), right, when])
                    )
                    wrote = True
                if not wrote:
                    writer.writerow(_cells(head + ["", "", "", "", ""]))
            return out.getvalue()


CSV_TIME = "answered at (UTC)"


class _Tx:
    """A connection in one transaction, committed at the end of the `with` (rolled back on an error)."""

    def __init__(self, engine: Engine, write: bool, after: list[Callable[[], None]] = ()) -> None:
        self.engine, self.write, self.after = engine, write, after

    def __enter__(self) -> Connection:
        try:
            self.conn = self.engine.connect()
            if self.write:
                self.conn.execution_options(classroom_write=True)
            self.tx = self.conn.begin()
        except DATABASE_DOWN as err:
            raise unavailable(err, self.engine.url) from None
        return self.conn

    def __exit__(self, exc_type, exc_value, tb) -> None:
        try:
            try:
                if exc_type is None:
                    if self.write and self.conn.dialect.name == "postgresql":
                        # every process's watcher LISTENs (Store.listen): PostgreSQL tells them at the commit
                        self.conn.execute(text(f"NOTIFY {NOTIFY_CHANNEL}"))
                    self.tx.commit()
                else:
                    self.tx.rollback()
            finally:
                self.conn.close()
        except DATABASE_DOWN as err:
            raise unavailable(err, self.engine.url) from None
        if isinstance(exc_value, DATABASE_DOWN):
            raise unavailable(exc_value, self.engine.url) from None
        if exc_type is None:
            for callback in list(self.after):
                callback()


def _checked_question(question: Any, truth: Any) -> tuple[dict, str | None]:
    """A question as stored and its true value as JSON (None: it has none), checked."""
    body = check_question(question)
    return body, None if truth is None else json.dumps(check_truth(body, truth))


def _may_lead(conn: Connection, room, tab: str | None) -> bool:
    """Whether the teacher's tab `tab` may move the class now: no other tab of the teacher's leads, and no question
    is open (its students stay on the view it was asked on until the reveal)."""
    if tab is not None and room["leader"] not in (None, tab):
        return False
    if room["question_id"] is not None:
        revealed = conn.execute(select(questions.c.revealed).where(questions.c.id == room["question_id"])).scalar()
        if revealed is False:
            return False
    return True


def _bumped(room):
    """An update of `room` that also bumps its version (every teacher action goes through it)."""
    return rooms.update().where(rooms.c.code == room["code"]).values(version=rooms.c.version + 1)


def _active(room):
    """An update of `room` that bumps its activity (a join, an answer: what the teacher's dashboard shows)."""
    return rooms.update().where(rooms.c.code == room["code"]).values(activity=rooms.c.activity + 1)


def _count_students(conn: Connection, code: str) -> int:
    return conn.execute(select(func.count()).select_from(students).where(students.c.room_code == code)).scalar_one()


def _count_here(conn: Connection, code: str, since: float) -> int:
    """The seats of room `code` seen after `since` (a seat from before schema 5 counts from when it joined)."""
    seen = func.coalesce(students.c.seen_at, students.c.joined_at)
    return conn.execute(
        select(func.count()).select_from(students).where(students.c.room_code == code, seen > since)
    ).scalar_one()


def _delete_rooms(conn: Connection, codes: list[str]) -> None:
    """Delete rooms `codes` and everything in them (answers, questions, seats), children first."""
    if not codes:
        return
    asked = select(questions.c.id).where(questions.c.room_code.in_(codes))
    conn.execute(answers.delete().where(answers.c.question_id.in_(asked)))
    conn.execute(rooms.update().where(rooms.c.code.in_(codes)).values(question_id=None))
    conn.execute(questions.delete().where(questions.c.room_code.in_(codes)))
    conn.execute(students.delete().where(students.c.room_code.in_(codes)))
    conn.execute(rooms.delete().where(rooms.c.code.in_(codes)))


def _question(conn: Connection, code: str, qid: Any, teacher: bool = False) -> Question:
    """Question `qid` of room `code`; its true value only once revealed, or for the teacher."""
    row = None
    if isinstance(qid, int) and not isinstance(qid, bool):
        row = (
            conn.execute(select(questions).where(questions.c.id == qid, questions.c.room_code == code))
            .mappings()
            .first()
        )
    if row is None:
        raise errors.UnknownQuestion(tr("room {code} has no question {question}", code=code, question=repr(qid)))
    return _as_question(row, teacher)


def _as_question(row, teacher: bool = False) -> Question:
    body = json.loads(row["body"])
    seconds = body.get("seconds")
    return Question(
        int(row["id"]),
        int(row["number"]),
        body,
        bool(row["revealed"]),
        None if row["truth"] is None or not (row["revealed"] or teacher) else json.loads(row["truth"]),
        float(row["asked_at"]) + seconds if isinstance(seconds, int) else None,
        row["step"],
    )


def _lesson_questions(conn: Connection, room) -> dict[int, Question]:
    """The questions of the lesson `room` runs, by step: the last one asked on each step since the lesson started (its
    true value hidden until revealed); empty without a lesson."""
    if room["lesson"] is None:
        return {}
    rows = conn.execute(
        select(questions)
        .where(
            questions.c.room_code == room["code"],
            questions.c.step.is_not(None),
            questions.c.id > (room["lesson_after"] or 0),
        )
        .order_by(questions.c.id)
    ).mappings()
    return {int(row["step"]): _as_question(row) for row in rows}


def _last_question(conn: Connection, room) -> int:
    """The id of the room's last question (0: none)."""
    found = conn.execute(select(func.max(questions.c.id)).where(questions.c.room_code == room["code"])).scalar()
    return int(found or 0)


def _step_of(student, room) -> int | None:
    """The lesson step `student` is on: their own while the students go at their own pace, else the class's."""
    if room["lesson"] is None:
        return None
    own = student["lesson_step"] if room["paced_at"] is not None else None
    return room["lesson_step"] if own is None else int(own)


def _reached(student, room) -> int:
    """The furthest step of the room's lesson `student` went to at their own pace, or the step they are on if
    further: a later step may show what answers an earlier step's question, so past it their answer is final."""
    step = _step_of(student, room) or 0
    reached = student["lesson_reached"]
    return step if reached is None else max(int(reached), step)


def _forget_steps(conn: Connection, room) -> None:
    """A lesson starts or ends in `room`: no student has a step of it, or went anywhere in it."""
    conn.execute(
        students.update().where(students.c.room_code == room["code"]).values(lesson_step=None, lesson_reached=None)
    )


def _is_step(step: Any, count: int) -> bool:
    return isinstance(step, int) and not isinstance(step, bool) and 0 <= step < count


def _public_steps(lesson: str | None) -> tuple[LessonStep, ...]:
    """The room's stored lesson as students read it: each step's title, view and student notes."""
    if lesson is None:
        return ()
    deck = json.loads(lesson)
    written_in = str(deck.get("language", "en"))
    return tuple(
        LessonStep(str(s.get("title", "")), s["view"], str(s.get("student_notes", "")), written_in)
        for s in deck["step"]
    )


def _plural_count(value: float) -> int:
    """A count for choosing a message's plural form from a number that may be fractional (2.5 days: plural)."""
    return int(value) if value == int(value) else 2


def check_nickname(nickname: Any) -> str | None:
    """A nickname as stored: None (anonymous) for nothing or blanks; the text typed, without the spaces
    around it, else NicknameRefused naming why (too long, control characters, not text)."""
    if nickname is None:
        return None
    if not isinstance(nickname, str):
        raise errors.NicknameRefused(tr("a nickname is text"))
    nickname = nickname.strip()
    if not nickname:
        return None
    if len(nickname) > NICKNAME_CHARS:
        raise errors.NicknameRefused(
            tr(
                "a nickname has at most {most} characters, this one {chars}",
                most=NICKNAME_CHARS,
                chars=len(nickname),
            )
        )
    if _CONTROL.search(nickname):
        raise errors.NicknameRefused(tr("a nickname cannot contain control characters (line breaks, tabs)"))
    return nickname


_NUMBER = re.compile(r"-?\d+(\.\d+)?(e-?\d+)?")


def _cells(row: list) -> list:
    """Text a spreadsheet would run as a formula (=, +, -, @ first) gets an apostrophe; numbers stay numbers."""
    return [
        "'" + c if isinstance(c, str) and c[:1] in ("=", "+", "-", "@", "\t", "\r") and not _NUMBER.fullmatch(c) else c
        for c in row
    ]
