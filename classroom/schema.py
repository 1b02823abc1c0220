"""The classroom's tables and their versions: the app creates and upgrades its own schema.

`SCHEMA_VERSION` is the version this code reads and writes. `migrate(engine)` brings a database at any
older version (0: empty) up to it, one step at a time, in one transaction that holds a lock, so workers
that start together upgrade once. A database newer than the code is refused (SchemaTooNew), never
written. Each step is frozen once released: a change is a new step, never an edit of an old one.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    Engine,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    inspect,
    select,
    text,
)

from classroom.errors import SchemaTooNew

CODE_CHARS = 6
NICKNAME_CHARS = 24
VIEW_CHARS = 4000
TOKEN_CHARS = 32
LEADER_CHARS = 100

# The tables as this version reads them (the steps below create them).
metadata = MetaData()
version_table = Table("classroom_schema", metadata, Column("version", Integer, nullable=False))
rooms = Table(
    "classroom_rooms",
    metadata,
    Column("code", String(CODE_CHARS), primary_key=True),
    Column("teacher_hash", String(64), nullable=False),  # sha256 of the teacher key, never the key
    Column("created_at", Float, nullable=False),  # seconds since the epoch
    Column("expires_at", Float, nullable=False),
    Column("closed", Boolean, nullable=False),
    Column("view", String(VIEW_CHARS)),  # the relative link the teacher leads to; None before the first lead
    Column("question_id", Integer),  # the question being asked now, if any
    Column("paused", Boolean, nullable=False),  # since version 2
    Column("gather", Integer, nullable=False),  # since version 2: bumped to bring every student back
    Column("version", Integer, nullable=False),  # since version 3: bumped by every teacher action
    Column("activity", Integer, nullable=False),  # since version 4: bumped by every join and answer
    Column("ended_at", Float),  # since version 5: when its teacher closed it (None: open, or it expired)
    Column("link_token", String(TOKEN_CHARS)),  # since version 5: the student link's token (joins never limited)
    Column("leader", String(LEADER_CHARS)),  # since version 5: the teacher's tab the class follows (None: any)
    Column("leader_seen_at", Float),  # since version 5: when that tab's worker last saw it connected
    Column("removals", Integer, nullable=False),  # since version 5: bumped when the teacher removes a seat
    Column("lesson", Text),  # since version 6: the lesson deck the room runs, as JSON (None: none)
    Column("lesson_step", Integer),  # since version 6: the step of it the class is on, from 0
    Column("lesson_after", Integer),  # since version 7: the room's last question id before the lesson started
    Column("paced_at", Integer),  # since version 7: the room's version when its students went at their own pace
)
students = Table(
    "classroom_students",
    metadata,
    Column("id", String(43), primary_key=True),  # a random token: the student's only proof of who they are
    Column("room_code", String(CODE_CHARS), ForeignKey("classroom_rooms.code"), nullable=False, index=True),
    Column("number", Integer, nullable=False),  # 1, 2, ... in the order they joined the room
    Column("nickname", String(NICKNAME_CHARS)),
    Column("joined_at", Float, nullable=False),
    Column("seen_at", Float),  # since version 5: when a worker last saw the student's browser connected
    Column("lesson_step", Integer),  # since version 7: the step a student at their own pace is on (None: the room's)
    Column("lesson_reached", Integer),  # since version 7: the furthest step they went to at that pace (None: theirs)
)
questions = Table(
    "classroom_questions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("room_code", String(CODE_CHARS), ForeignKey("classroom_rooms.code"), nullable=False, index=True),
    Column("number", Integer, nullable=False),  # 1, 2, ... within the room
    Column("body", Text, nullable=False),  # the question as JSON
    Column("asked_at", Float, nullable=False),
    Column("revealed", Boolean, nullable=False),
    Column("truth", Text),  # the true value as JSON, set by the reveal
    Column("step", Integer),  # since version 7: the step of the room's lesson it was asked on
)
answers = Table(
    "classroom_answers",
    metadata,
    Column("question_id", Integer, ForeignKey("classroom_questions.id"), primary_key=True),
    Column("student_id", String(43), ForeignKey("classroom_students.id"), primary_key=True),
    Column("value", Text, nullable=False),  # JSON
    Column("answered_at", Float, nullable=False),
)
join_failures = Table(  # since version 2: wrong join codes, per client, for the rate limit
    "classroom_join_failures",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("client", String(64), nullable=False, index=True),
    Column("at", Float, nullable=False, index=True),
)


def _v1(conn: Connection) -> None:
    """Rooms with the teacher's view, students, questions and answers."""
    v1 = MetaData()
    Table("classroom_schema", v1, Column("version", Integer, nullable=False))
    Table(
        "classroom_rooms",
        v1,
        Column("code", String(CODE_CHARS), primary_key=True),
        Column("teacher_hash", String(64), nullable=False),
        Column("created_at", Float, nullable=False),
        Column("expires_at", Float, nullable=False),
        Column("closed", Boolean, nullable=False),
        Column("view", String(VIEW_CHARS)),
        Column("question_id", Integer),
    )
    Table(
        "classroom_students",
        v1,
        Column("id", String(43), primary_key=True),
        Column("room_code", String(CODE_CHARS), ForeignKey("classroom_rooms.code"), nullable=False, index=True),
        Column("number", Integer, nullable=False),
        Column("nickname", String(NICKNAME_CHARS)),
        Column("joined_at", Float, nullable=False),
    )
    Table(
        "classroom_questions",
        v1,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("room_code", String(CODE_CHARS), ForeignKey("classroom_rooms.code"), nullable=False, index=True),
        Column("number", Integer, nullable=False),
        Column("body", Text, nullable=False),
        Column("asked_at", Float, nullable=False),
        Column("revealed", Boolean, nullable=False),
        Column("truth", Text),
    )
    Table(
        "classroom_answers",
        v1,
        Column("question_id", Integer, ForeignKey("classroom_questions.id"), primary_key=True),
        Column("student_id", String(43), ForeignKey("classroom_students.id"), primary_key=True),
        Column("value", Text, nullable=False),
        Column("answered_at", Float, nullable=False),
    )
    v1.create_all(conn)


def _v2(conn: Connection) -> None:
    """Pause and gather on the room; wrong join codes remembered for the rate limit (so every worker sees
    them)."""
    conn.execute(text("ALTER TABLE classroom_rooms ADD COLUMN paused BOOLEAN NOT NULL DEFAULT FALSE"))
    conn.execute(text("ALTER TABLE classroom_rooms ADD COLUMN gather INTEGER NOT NULL DEFAULT 0"))
    join_failures.create(conn)


def _v3(conn: Connection) -> None:
    """A version counter on the room, bumped by every teacher action, so that a worker learns which of its
    rooms changed from one small query (ui/classroom_push.py) instead of every screen polling the room."""
    conn.execute(text("ALTER TABLE classroom_rooms ADD COLUMN version INTEGER NOT NULL DEFAULT 0"))


def _v4(conn: Connection) -> None:
    """An activity counter on the room, bumped by every join and answer, so that a worker learns from the same
    small query which teachers' dashboards to redraw (ui/classroom_push.py) instead of each redrawing on a timer."""
    conn.execute(text("ALTER TABLE classroom_rooms ADD COLUMN activity INTEGER NOT NULL DEFAULT 0"))


def _v5(conn: Connection) -> None:
    """What a whole lesson needs: a closed room's end (its answers are kept for a stated time after it), the
    student link's token (a link's join is never held back by the limit on typed codes), the one tab of the
    teacher's that the class follows, a seat's last sign of life (who is here now, not only who ever joined),
    and a count of seats the teacher removed (a removed student's screen learns it)."""
    for column in (
        "ended_at FLOAT",
        f"link_token VARCHAR({TOKEN_CHARS})",
        f"leader VARCHAR({LEADER_CHARS})",
        "leader_seen_at FLOAT",
        "removals INTEGER NOT NULL DEFAULT 0",
    ):
        conn.execute(text(f"ALTER TABLE classroom_rooms ADD COLUMN {column}"))
    conn.execute(text("ALTER TABLE classroom_students ADD COLUMN seen_at FLOAT"))
    conn.execute(text("UPDATE classroom_students SET seen_at = joined_at"))


def _v6(conn: Connection) -> None:
    """A lesson deck on the room and the step the class is on (classroom/decks.py), so that a reload, another
    worker or a restarted one keeps the lesson where it was."""
    conn.execute(text("ALTER TABLE classroom_rooms ADD COLUMN lesson TEXT"))
    conn.execute(text("ALTER TABLE classroom_rooms ADD COLUMN lesson_step INTEGER"))


def _v7(conn: Connection) -> None:
    """Students at their own pace through a lesson: the step each question was asked on (one question per step of a
    lesson, open on its step), the room's switch, and each student's step and the furthest one they reached."""
    for column in ("lesson_after INTEGER", "paced_at INTEGER"):
        conn.execute(text(f"ALTER TABLE classroom_rooms ADD COLUMN {column}"))
    for column in ("lesson_step INTEGER", "lesson_reached INTEGER"):
        conn.execute(text(f"ALTER TABLE classroom_students ADD COLUMN {column}"))
    conn.execute(text("ALTER TABLE classroom_questions ADD COLUMN step INTEGER"))


MIGRATIONS: dict[int, Callable[[Connection], None]] = {1: _v1, 2: _v2, 3: _v3, 4: _v4, 5: _v5, 6: _v6, 7: _v7}
SCHEMA_VERSION = max(MIGRATIONS)
_LOCK_ID = 7_307_033  # PostgreSQL advisory lock held while a worker migrates


def current_version(conn: Connection) -> int:
    """The schema version of the database (0: none of our tables)."""
    if not inspect(conn).has_table(version_table.name):
        return 0
    found = conn.execute(select(version_table.c.version)).scalar()
    return int(found or 0)


def migrate(engine: Engine, target: int = SCHEMA_VERSION) -> int:
    """Bring the database up to `target` (one transaction, locked against other workers); return the
    version it was at. Refuses a database newer than this code."""
    with engine.connect() as conn:
        conn.execution_options(classroom_write=True)
        with conn.begin():
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": _LOCK_ID})
            found = current_version(conn)
            if found > SCHEMA_VERSION:
                raise SchemaTooNew(
                    f"the classroom database has schema version {found}, newer than this app's "
                    f"{SCHEMA_VERSION}: upgrade the app, or point ATTENTION_DB_URL at another database"
                )
            for version in range(found + 1, target + 1):
                MIGRATIONS[version](conn)
            if target > found:
                conn.execute(version_table.delete())
                conn.execute(version_table.insert().values(version=target))
    return found
