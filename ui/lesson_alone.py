"""A lesson deck for a student alone (homework): no room, no teacher. On /class, outside a room, a student picks a
shipped lesson and opens it; a bar at the top of every page then says which step this is, shows the step's notes for
students (`student_notes`, never the teacher's `notes`), and has Previous and Next, which open the step's view. The
lesson lives in this session only; nothing is stored.
"""

from __future__ import annotations

import streamlit as st

from classroom.decks import page_of, stored_deck
from locales import tr
from ui.classroom_lesson import language_note, shipped_lessons, step_buttons
from ui.classroom_session import SHOW_KEY
from ui.classroom_teacher import open_shown_solution
from ui.safe_text import escape_markdown

ALONE_KEY = "_lesson_alone"  # {"lesson": a checked deck as data, "step": from 0}


def alone_picker() -> None:
    """On /class outside a room: open a shipped lesson to go through alone."""
    lessons = shipped_lessons()
    with st.container(border=True, key="lesson_alone"):
        st.markdown(
            tr(
                "**Go through a lesson on your own** (homework): the lesson's steps, one page at a time, with a note "
                "for each; no room and no teacher needed."
            )
        )
        choice = st.selectbox(tr("Lesson to go through"), list(lessons), key="lesson_alone_pick")
        language_note(st, lessons[choice].get("language", "en"))
        st.button(tr("Open the lesson"), key="lesson_alone_open", on_click=_open, args=(lessons[choice],))


def _open(lesson: dict) -> None:
    st.session_state[ALONE_KEY] = {"lesson": lesson, "step": 0}
    st.session_state[SHOW_KEY] = lesson["step"][0]["view"]


def alone_bar(url_path: str, pages) -> None:
    """Before every page, for a session going through a lesson alone: the step, its note for students, and the
    buttons that move through the lesson (Page Up and Page Down too)."""
    running = st.session_state.get(ALONE_KEY)
    if not running:
        return
    open_shown_solution(pages)  # the step chosen on the last run opens now, its page reading the whole view
    deck, at = stored_deck(running["lesson"]), int(running["step"])
    step = deck.steps[at]
    with st.container(border=True, key="lesson_alone_bar"):
        st.markdown(
            ":material/school: "
            + tr(
                "**{lesson}** · **Step {step} of {count}** · {title}",
                lesson=escape_markdown(deck.title),
                step=at + 1,
                count=len(deck.steps),
                title=escape_markdown(step.title),
            )
        )
        language_note(st, deck.language)
        if step.student_notes:
            st.text(step.student_notes)  # the deck's text, as text
        here = (url_path or "playground") == step.page
        if not here:
            st.caption(
                tr(
                    "This step is on /{page}: *Back to the step* opens it as the lesson set it.",
                    page=page_of(step.view),
                )
            )
        with st.container(horizontal=True, vertical_alignment="center"):
            step_buttons(at, len(deck.steps), _go, "lesson_alone")
            if not here:
                st.button(tr("Back to the step"), key="lesson_alone_again", on_click=_go, args=(at,))
            st.button(tr("Leave the lesson"), key="lesson_alone_leave", on_click=_leave)


def _go(at: int) -> None:
    running = st.session_state.get(ALONE_KEY)
    if not running or not 0 <= at < len(running["lesson"]["step"]):
        return
    running["step"] = at
    st.session_state[SHOW_KEY] = running["lesson"]["step"][at]["view"]


def _leave() -> None:
    st.session_state.pop(ALONE_KEY, None)
