"""Class mode, the room's seats and files, as the teacher's dashboard (pages/class.py) draws them: every seat with
its Remove button (seats_list), the answers file and the teacher key file to download (answers_button,
key_file_button), and how long a room and its answers are kept (keep_note, when).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

import streamlit as st

from classroom import errors
from locales import num, tr
from ui.classroom_results import NAMES_KEY
from ui.classroom_session import COOKIE_HOURS, MESSAGE_KEY, store
from ui.safe_text import escape_markdown


def when(seconds: float) -> str:
    """A time as the dashboard says it: UTC, named as such."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M UTC")


def keep_note() -> str:
    return tr(
        "A room's answers are kept for {days} days after it ends (closed, or expired {room_hours} hours after it "
        "started), then deleted with everything else of the room. This browser remembers the room for {hours} hours; "
        "after that, the teacher key file takes you back to it.",
        days=num(store().limits.keep_days, "g"),
        room_hours=num(store().limits.room_hours, "g"),
        hours=COOKIE_HOURS,
    )


def answers_button(code: str, key: str, label: str | None = None, button_key: str = "class_csv") -> None:
    """The answers file's download (`label`: the button's, translated; "Answers as CSV" when not given)."""
    st.download_button(
        label or tr("Answers as CSV"),
        lambda: store().export_csv(code, key),
        file_name=f"room-{code}-answers.csv",
        mime="text/csv",
        key=button_key,
        icon=":material/download:",
        on_click="ignore",
        help=tr("Every question and every answer, with nicknames and seat numbers; times in UTC."),
    )


def key_file_button(code: str, key: str, button_key: str = "class_key_file") -> None:
    st.download_button(
        tr("Download the teacher key"),
        f"Room {code}\nTeacher key: {key}\nTake back the room on the app's 'Teach a class' page.\n",
        file_name=f"room-{code}-teacher-key.txt",
        key=button_key,
        icon=":material/key:",
        on_click="ignore",
    )


def seats_list(code: str, key: str) -> None:
    """Every seat of the room: seats, not people (a browser that cleared its cookies joined again as another seat),
    each with a button to remove it and its answers."""
    seats = store().seats(code, key)
    names = st.session_state.get(NAMES_KEY, False)
    st.caption(
        tr(
            "One line per seat. A browser that cleared its cookies, or a student on two devices, has two seats: remove "
            "the one left empty (its answers go with it). A removed student can join again."
        )
    )
    if not seats:
        st.markdown(tr("Nobody has joined yet."))
    now = time.time()
    for seat in seats:
        left, right = st.columns([4, 1], vertical_alignment="center")
        name = f" · {escape_markdown(seat.nickname)}" if names and seat.nickname else ""
        if seat.here:
            # Translators: {nickname} is empty, or " · " and the student's nickname (shown when the teacher asks)
            line = tr(
                "Seat {number}{nickname} · here now · {answers} answered",
                number=seat.number,
                nickname=name,
                answers=seat.answers,
            )
        else:
            # Translators: {nickname} is empty, or " · " and the student's nickname (shown when the teacher asks)
            line = tr(
                "Seat {number}{nickname} · last seen {minutes} min ago · {answers} answered",
                number=seat.number,
                nickname=name,
                minutes=max(0, round((now - seat.seen_at) / 60)),
                answers=seat.answers,
            )
        left.markdown(line)
        right.button(tr("Remove"), key=f"class_remove_{seat.number}", on_click=_remove, args=(code, key, seat.number))


def _remove(code: str, key: str, number: int) -> None:
    try:
        store().remove_seat(code, key, number)
    except (errors.ClassroomError, PermissionError) as err:
        st.session_state[MESSAGE_KEY] = tr("Could not remove seat {number}: {error}.", number=number, error=err)
