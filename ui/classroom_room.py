"""Class mode on every page: app.py calls `room_bar` before the page and `class_after_page` after it. Outside a room
they draw nothing (a join card, after a link that could not join); in a room, the bar of the session's role
(ui/classroom_teacher.py, ui/classroom_student.py), the page held while a question about it is open, and, while the
classroom's database does not answer, a card saying so that brings the session back by itself.
"""

from __future__ import annotations

import streamlit as st

from classroom import errors
from locales import tr
from ui.classroom_open_question import hold_for_question, page_name
from ui.classroom_push import bar_gone
from ui.classroom_session import (
    ASKED_KEY,
    CLEAR_COOKIE_KEY,
    MESSAGE_KEY,
    OUTAGE_KEY,
    cookie_role,
    cookie_room,
    cookie_script,
    enter_from_link_or_cookie,
    in_room,
    is_teacher,
    outage,
    store,
    teacher_key,
)
from ui.classroom_student import after_student_page, join_card, student_screens
from ui.classroom_teacher import ask_after_page, lead_class, open_shown_solution, teacher_screens
from ui.lesson_alone import alone_bar
from ui.page_state import hold
from ui.safe_text import escape_markdown

RETRY_S = 5  # how often a session in a room looks whether the database answers again


def room_bar(url_path: str, pages: dict[str, list[st.Page]]) -> None:
    """Class mode on every page (app.py calls it before the page): nothing outside a room; in a room, the room's
    bar, and for a student of a paused class the 'eyes on the teacher' card instead of the page."""
    try:
        enter_from_link_or_cookie()
    except errors.StoreUnavailable as err:
        outage(err)
    message = st.session_state.pop(MESSAGE_KEY, None)
    if message:
        st.warning(escape_markdown(message), icon=":material/groups:")
    join_card()
    if in_room() or st.session_state.pop(CLEAR_COOKIE_KEY, False):
        st.html(cookie_script(), unsafe_allow_javascript=True)
    if st.session_state.get(OUTAGE_KEY):
        blind_while_unreachable(url_path)
        outage_card()
        return
    hold(None)  # a page is held only while a question about it is open (hold_for_question, below)
    st.session_state.pop(ASKED_KEY, None)
    if not in_room():
        alone_bar(url_path, pages)  # a lesson gone through alone, outside any room
        return
    bar_gone()  # the screens this run draws tell the watcher again what they show
    teacher = is_teacher()
    try:
        if teacher:
            open_shown_solution(pages)
        state = teacher_screens(url_path) if teacher else student_screens(url_path, pages)
    except errors.StoreUnavailable as err:
        outage(err)
        blind_while_unreachable(url_path)
        outage_card()
        return
    hold_for_question(state, url_path, teacher)


def blind_while_unreachable(url_path: str) -> None:
    """While the database does not answer, nobody can tell whether a question is open: a session of a room (or one
    whose cookie names a room: a reload, another worker) keeps the page as it was held, and an asking page hides
    everything that could be an answer, so that no screen shows an open question's answer early."""
    if not (in_room() or cookie_room()):
        return
    st.session_state[ASKED_KEY] = {"page": page_name(url_path), "query": None, "unknown": True, "number": None}


def class_after_page(url_path: str, whole: bool = True) -> None:
    """After every page (app.py; `whole`: after a full run, not a section that ran alone): a teacher's view becomes
    the room's and 'Ask the class' is drawn under the bar; a student's browser remembers the page's declared
    state."""
    if not in_room() or st.session_state.get(OUTAGE_KEY):
        return
    if is_teacher():
        lead_class(url_path)
        if whole:
            try:
                ask_after_page(url_path)
            except errors.StoreUnavailable as err:
                outage(err)
    else:
        after_student_page(url_path)


def outage_card() -> None:
    """The classroom's database does not answer: say so (the teacher reads which database and why; a student, that
    the room comes back), keep the page, and look again every RETRY_S seconds until it answers."""
    problem = st.session_state.get(OUTAGE_KEY, "")
    with st.container(border=True, key="class_outage"):
        if is_teacher() or not in_room() and cookie_role() != "s":
            st.warning(
                tr(
                    "Class mode cannot reach its database: {problem}. This page works as usual; the room comes back "
                    "here by itself once the database answers.",
                    problem=escape_markdown(problem),
                ),
                icon=":material/cloud_off:",
            )
        else:
            st.warning(
                tr(
                    "The class's connection to room {code} is lost for now (the classroom's database does not "
                    "answer). This page works as usual, and hides what a question could be asking; you will be back "
                    "in the room, following the teacher, as soon as it answers.",
                    code=in_room() or cookie_room(),
                ),
                icon=":material/cloud_off:",
            )
        _look_again()


@st.fragment(run_every=RETRY_S)
def _look_again() -> None:
    """While the database does not answer: look again; once it does, the whole page runs in the room again."""
    if not st.session_state.get(OUTAGE_KEY):
        return
    try:
        found = store()
        found.pulses([in_room() or cookie_room() or ""])  # a query whatever the room: does the database answer?
        if in_room() and is_teacher():
            found.check_teacher(in_room(), teacher_key())
    except errors.StoreUnavailable as err:
        outage(err)
        return
    except (errors.ClassroomError, PermissionError):
        pass  # the database answers; the room's own news is the bar's to say
    st.session_state.pop(OUTAGE_KEY, None)
    st.rerun(scope="app")
