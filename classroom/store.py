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
- a closed or expired room accepts nobody; wrong join codes are counted per client in the database and
  refused past a limit, whichever worker sees them;
- nicknames and questions are length-limited and kept as the text typed (the UI shows them as text);
- limits on students per room, open rooms and questions per room, each with its own error.
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
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, func, select, text
from sqlalchemy.dialects import postgresql, sqlite

from classroom import errors
from classroom.codes import CODE_ALPHABET, CODE_LENGTH, normalise_code
from classroom.questions import answer_label, check_answer, check_question
from classroom.schema import (
    NICKNAME_CHARS,
    VIEW_CHARS,
    answers,
    join_failures,
    migrate,
    questions,
    rooms,
    students,
)

URL_ENV = "ATTENTION_DB_URL"
DATA_DIR_ENV = "ATTENTION_DATA_DIR"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Limits:
    """What one room and one server allow; the defaults are a school's, tests pass smaller ones."""

    students_per_room: int = 300
    open_rooms: int = 200
    questions_per_room: int = 200
    room_hours: float = 12.0
    wrong_joins: int = 10  # wrong codes one client may type ...
    wrong_join_window_s: float = 600.0  # ... within this many seconds


@dataclass(frozen=True)
class Room:
    code: str
    teacher_key: str
    expires_at: float


@dataclass(frozen=True)
class Question:
    id: int
    number: int  # 1, 2, ... in the room
    body: dict
    revealed: bool
    truth: Any  # None until revealed (or revealed without a true value)


@dataclass(frozen=True)
class RoomState:
    """What every screen in the room draws: where the teacher is, paused or not, the question asked now."""

    code: str
    view: str | None
    paused: bool
    gather: int
    question: Question | None
    joined: int
    expires_at: float
    version: int  # bumped by every teacher action (Store.versions)
    activity: int = 0  # bumped by every join and answer (Store.heads)


@dataclass(frozen=True)
class Head:
    """What a worker's watcher reads of an open room, for all its rooms in one query (Store.heads)."""

    version: int  # bumped by every teacher action
    activity: int  # bumped by every join and answer: what a teacher's dashboard counts
    view: str | None  # the room's view: where following students go


@dataclass(frozen=True)
class Results:
    question: Question
    joined: int
    answered: int
    values: list  # one per student who answered, in the order they joined
    names: list | None  # their nicknames (None: anonymous), only when the teacher asks for them


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
    """The store at `url` (None: `default_url()`), its schema created or upgraded to this version."""
    engine = make_engine(url or default_url())
    migrate(engine)
    return Store(engine, limits or Limits(), clock)


def make_engine(url: str) -> Engine:
    """An engine for `url`. SQLite: WAL (readers never wait for the writer), a 10 s busy timeout, foreign
    keys on, and writes that take the write lock when they begin (BEGIN IMMEDIATE: a write that started as
    a read could otherwise fail at once instead of waiting). PostgreSQL: connections checked before use,
    since a database restart must not cost a class its next click."""
    if url.startswith("sqlite"):
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
    return create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=5)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class Store:
    """Every classroom action, each one transaction. Methods taking `teacher_key` are the teacher's."""

    def __init__(self, engine: Engine, limits: Limits, clock: Callable[[], float] = time.time) -> None:
        self.engine, self.limits, self.clock = engine, limits, clock
        # called with no argument after each committed write of this process (a watcher looks at once instead of
        # at its next tick: ui/classroom_push.py); a failing callback is the caller's, the write stays committed
        self.after_write: list[Callable[[], None]] = []

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
            raise errors.RoomNotFound(f"there is no room with the code {normalise_code(code)[:12]!r}")
        return row

    def _open(self, room) -> None:
        if room["closed"]:
            raise errors.RoomClosed(f"room {room['code']} has been closed by its teacher")
        if room["expires_at"] <= self.clock():
            raise errors.RoomExpired(f"room {room['code']} has expired (a room lasts {self.limits.room_hours:g} hours)")

    def _teacher(self, conn: Connection, code: str, teacher_key: Any, *, lock: bool = False, open_: bool = True):
        room = self._room(conn, code, lock=lock)
        if not isinstance(teacher_key, str) or not hmac.compare_digest(hash_key(teacher_key), room["teacher_hash"]):
            raise errors.TeacherKeyRejected(f"that is not the teacher key of room {room['code']}")
        if open_:
            self._open(room)
        return room

    # ------------------------------------------------------------ rooms
    def create_room(self) -> Room:
        """A new room with a fresh join code and teacher key; TooManyRooms past the server's limit."""
        now = self.clock()
        with self._write() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(7307034)"))  # one room count at a time
            open_rooms = conn.execute(
                select(func.count()).select_from(rooms).where(~rooms.c.closed, rooms.c.expires_at > now)
            ).scalar_one()
            if open_rooms >= self.limits.open_rooms:
                raise errors.TooManyRooms(
                    f"this server already has {open_rooms} open rooms, its limit: try again when a class ends"
                )
            for _ in range(20):
                code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
                if conn.execute(select(rooms.c.code).where(rooms.c.code == code)).first() is None:
                    break
            else:  # 30**6 codes: twenty collisions in a row means something else is wrong
                raise RuntimeError("could not find an unused room code")
            key = secrets.token_urlsafe(24)
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
                )
            )
        return Room(code, key, expires)

    def check_teacher(self, code: str, teacher_key: str) -> None:
        """Nothing if `teacher_key` is the key of the open room `code`; else why not."""
        with self._read() as conn:
            self._teacher(conn, code, teacher_key)

    def close(self, code: str, teacher_key: str) -> None:
        """Close the room: nobody can join or answer any more; its answers stay for the export."""
        with self._write() as conn:
            room = self._teacher(conn, code, teacher_key, open_=False)
            conn.execute(_bumped(room).values(closed=True))

    # ------------------------------------------------------------ students
    def join(self, code: str, nickname: str | None = None, client: str = "") -> str:
        """A new student id in the room `code`. `client` names who is typing (an address) for the rate
        limit on wrong codes. Refused: unknown, closed, expired or full rooms, too many wrong codes,
        a nickname too long or with control characters."""
        nickname = check_nickname(nickname)
        client = str(client)[:64]
        now = self.clock()
        with self._write() as conn:
            window = now - self.limits.wrong_join_window_s
            wrong = conn.execute(
                select(func.count())
                .select_from(join_failures)
                .where(join_failures.c.client == client, join_failures.c.at > window)
            ).scalar_one()
            if wrong >= self.limits.wrong_joins:
                raise errors.JoinRateLimited(
                    f"{wrong} wrong room codes in the last {self.limits.wrong_join_window_s / 60:g} minutes: "
                    "wait a few minutes, then check the code on the teacher's screen"
                )
            try:
                room = self._room(conn, code, lock=True)
            except errors.RoomNotFound as err:
                conn.execute(join_failures.delete().where(join_failures.c.at <= window))
                conn.execute(join_failures.insert().values(client=client, at=now))
                refused = err  # raised after the commit: the wrong code must be remembered
            else:
                refused = None
                self._open(room)
                joined = _count_students(conn, room["code"])
                if joined >= self.limits.students_per_room:
                    raise errors.RoomFull(
                        f"room {room['code']} is full: {joined} students, the limit is {self.limits.students_per_room}"
                    )
                sid = secrets.token_urlsafe(24)
                conn.execute(
                    students.insert().values(
                        id=sid, room_code=room["code"], number=joined + 1, nickname=nickname, joined_at=now
                    )
                )
                conn.execute(_active(room))
        if refused is not None:
            raise refused
        return sid

    def student(self, code: str, sid: str) -> str | None:
        """The nickname of student `sid` of the open room `code` (None: anonymous); UnknownStudent if the
        room has no such student (a reloading student checks it is still in)."""
        with self._read() as conn:
            room = self._room(conn, code)
            self._open(room)
            return self._student(conn, room["code"], sid)["nickname"]

    def _student(self, conn: Connection, code: str, sid: Any):
        row = None
        if isinstance(sid, str):
            row = (
                conn.execute(select(students).where(students.c.id == sid, students.c.room_code == code))
                .mappings()
                .first()
            )
        if row is None:
            raise errors.UnknownStudent(f"this device is not a student of room {code}: join it again")
        return row

    # ------------------------------------------------------------ following the teacher
    def lead(self, code: str, teacher_key: str, view: str) -> int:
        """Make `view` (a relative link such as "/causal?causal=1") the room's current view; returns the room's
        version after it."""
        view = check_view(view)
        with self._write() as conn:
            room = self._teacher(conn, code, teacher_key)
            if room["view"] == view:
                return int(room["version"])
            conn.execute(_bumped(room).values(view=view))
            return int(room["version"]) + 1

    def current_view(self, code: str) -> str | None:
        with self._read() as conn:
            return self._room(conn, code)["view"]

    def pause(self, code: str, teacher_key: str, paused: bool = True) -> None:
        """Pause the class (every screen shows an 'eyes on the teacher' card) or resume it."""
        with self._write() as conn:
            room = self._teacher(conn, code, teacher_key)
            conn.execute(_bumped(room).values(paused=bool(paused)))

    def gather(self, code: str, teacher_key: str) -> int:
        """Bring every student back to following the teacher; returns the room's new gather count."""
        with self._write() as conn:
            room = self._teacher(conn, code, teacher_key)
            conn.execute(_bumped(room).values(gather=rooms.c.gather + 1))
            return room["gather"] + 1

    def state(self, code: str) -> RoomState:
        """Everything a screen in the room draws, in one read; the room's error if it is closed or expired."""
        with self._read() as conn:
            room = self._room(conn, code)
            self._open(room)
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
            )

    def versions(self, codes) -> dict[str, int]:
        """The version of each open room among `codes`, in one query: a worker compares them with the ones
        its screens last drew to learn which rooms changed. A closed, expired or unknown room is left out."""
        codes = sorted({normalise_code(c) for c in codes})
        if not codes:
            return {}
        with self._read() as conn:
            rows = conn.execute(
                select(rooms.c.code, rooms.c.version).where(
                    rooms.c.code.in_(codes), ~rooms.c.closed, rooms.c.expires_at > self.clock()
                )
            ).all()
        return {r.code: int(r.version) for r in rows}

    def heads(self, codes) -> dict[str, Head]:
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
        return {r.code: Head(int(r.version), int(r.activity), r.view) for r in rows}

    # ------------------------------------------------------------ questions
    def ask(self, code: str, teacher_key: str, question: dict, truth: Any = None) -> int:
        """Pose `question` to the room (it becomes the question asked now); returns its id. `truth`, the
        true answer if the page knows it, is kept out of every student's sight until the reveal."""
        body = check_question(question)
        hidden = None if truth is None else json.dumps(check_answer(body, truth))
        with self._write() as conn:
            room = self._teacher(conn, code, teacher_key, lock=True)
            asked = conn.execute(
                select(func.count()).select_from(questions).where(questions.c.room_code == room["code"])
            ).scalar_one()
            if asked >= self.limits.questions_per_room:
                raise errors.TooManyQuestions(
                    f"room {room['code']} has asked {asked} questions, its limit: start a new room"
                )
            qid = conn.execute(
                questions.insert()
                .values(
                    room_code=room["code"],
                    number=asked + 1,
                    body=json.dumps(body),
                    asked_at=self.clock(),
                    revealed=False,
                    truth=hidden,
                )
                .returning(questions.c.id)
            ).scalar_one()
            conn.execute(_bumped(room).values(question_id=qid))
            return int(qid)

    def reveal(self, code: str, teacher_key: str, qid: int, truth: Any = None) -> None:
        """End the answers to question `qid` and show its true value: `truth` (checked like an answer), or
        else the one given when it was asked (None: the question has none)."""
        with self._write() as conn:
            room = self._teacher(conn, code, teacher_key)
            question = _question(conn, room["code"], qid, teacher=True)
            stored = question.truth if truth is None else check_answer(question.body, truth)
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
        the reveal. Refused: another room's student or question, a question no longer asked, a bad value."""
        with self._write() as conn:
            room = self._room(conn, code)
            self._open(room)
            student = self._student(conn, room["code"], sid)
            question = _question(conn, room["code"], qid)
            if question.revealed or room["question_id"] != question.id:
                raise errors.AnswersClosed(f"question {question.number} is no longer taking answers")
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
        """Joined, answered and the answers to `qid`; the nicknames too only when `names` is asked for."""
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
        with their nickname beside it; a cell a spreadsheet would run as a formula starts with an apostrophe."""
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
            writer = csv.writer(out)
            writer.writerow(["room", "question", "prompt", "kind", "truth", "student", "nickname", "answer", "at"])
            for qid in conn.execute(
                select(questions.c.id).where(questions.c.room_code == room["code"]).order_by(questions.c.number)
            ).scalars():
                q = _question(conn, room["code"], qid)
                truth = answer_label(q.body, q.truth) if q.revealed else ""
                head = [room["code"], q.number, q.body["prompt"], q.body["kind"], truth]
                rows = conn.execute(
                    select(answers)
                    .join(students, students.c.id == answers.c.student_id)
                    .where(answers.c.question_id == q.id)
                    .order_by(students.c.number)
                ).mappings()
                wrote = False
                for a in rows:
                    value = json.loads(a["value"])
                    when = datetime.fromtimestamp(a["answered_at"], UTC).isoformat(timespec="seconds")
                    sid = a["student_id"]
                    writer.writerow(
                        _cells(head + [f"student {number[sid]}", nick[sid], answer_label(q.body, value), when])
                    )
                    wrote = True
                if not wrote:
                    writer.writerow(_cells(head + ["", "", "", ""]))
            return out.getvalue()


class _Tx:
    """A connection in one transaction, committed at the end of the `with` (rolled back on an error)."""

    def __init__(self, engine: Engine, write: bool, after: list[Callable[[], None]] = ()) -> None:
        self.engine, self.write, self.after = engine, write, after

    def __enter__(self) -> Connection:
        self.conn = self.engine.connect()
        if self.write:
            self.conn.execution_options(classroom_write=True)
        self.tx = self.conn.begin()
        return self.conn

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None:
                self.tx.commit()
            else:
                self.tx.rollback()
        finally:
            self.conn.close()
        if exc_type is None:
            for callback in list(self.after):
                callback()


def _bumped(room):
    """An update of `room` that also bumps its version (every teacher action goes through it)."""
    return rooms.update().where(rooms.c.code == room["code"]).values(version=rooms.c.version + 1)


def _active(room):
    """An update of `room` that bumps its activity (a join, an answer: what the teacher's dashboard shows)."""
    return rooms.update().where(rooms.c.code == room["code"]).values(activity=rooms.c.activity + 1)


def _count_students(conn: Connection, code: str) -> int:
    return conn.execute(select(func.count()).select_from(students).where(students.c.room_code == code)).scalar_one()


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
        raise errors.UnknownQuestion(f"room {code} has no question {qid!r}")
    return Question(
        int(row["id"]),
        int(row["number"]),
        json.loads(row["body"]),
        bool(row["revealed"]),
        None if row["truth"] is None or not (row["revealed"] or teacher) else json.loads(row["truth"]),
    )


def check_nickname(nickname: Any) -> str | None:
    """A nickname as stored: None (anonymous) for nothing or blanks; the text typed, without the spaces
    around it, else NicknameRefused naming why (too long, control characters, not text)."""
    if nickname is None:
        return None
    if not isinstance(nickname, str):
        raise errors.NicknameRefused("a nickname is text")
    nickname = nickname.strip()
    if not nickname:
        return None
    if len(nickname) > NICKNAME_CHARS:
        raise errors.NicknameRefused(f"a nickname has at most {NICKNAME_CHARS} characters, this one {len(nickname)}")
    if _CONTROL.search(nickname):
        raise errors.NicknameRefused("a nickname cannot contain control characters (line breaks, tabs)")
    return nickname


def check_view(view: Any) -> str:
    """A view the teacher leads to: a relative link within the app ("/page?query"), never another site."""
    if not isinstance(view, str) or not view.startswith("/") or view.startswith("//"):
        raise errors.InvalidView(f"a view is a link within the app starting with '/', not {str(view)[:40]!r}")
    if len(view) > VIEW_CHARS or _CONTROL.search(view) or "\\" in view:
        raise errors.InvalidView(f"a view is at most {VIEW_CHARS} characters of a link, without control characters")
    return view


_NUMBER = re.compile(r"-?\d+(\.\d+)?(e-?\d+)?")


def _cells(row: list) -> list:
    """Text a spreadsheet would run as a formula (=, +, -, @ first) gets an apostrophe; numbers stay numbers."""
    return [
        "'" + c if isinstance(c, str) and c[:1] in ("=", "+", "-", "@", "\t", "\r") and not _NUMBER.fullmatch(c) else c
        for c in row
    ]
