"""A student at their own pace through the room's lesson (the teacher's switch on /class: Store.pace_lesson): the
step this student is on, and in the room's bar its title, its note for students (never the teacher's notes) and the
student's own Previous and Next. The bar (ui/classroom_student.py) opens the step's view as it opens the teacher's
when the class follows the teacher, and the question open on the step is the one the student answers.
"""

from __future__ import annotations

import streamlit as st

from classroom import errors
from ui.classroom_lesson import step_buttons
from ui.classroom_session import LEFT_BEHIND, MESSAGE_KEY, SID_KEY, store
from ui.safe_text import escape_markdown

OWN_STEP_KEY = "class_own_pace_step"  # (the room's pacing, the step this student is on in it)
LEFT_BEHIND += [OWN_STEP_KEY]


def own_step(code: str, state) -> int | None:
    """The step this student is on while the room's students go at their own pace: the store's word, read once per
    pacing (a reload, another worker: the store keeps it), then this session's own moves. A pacing is named by the
    room's question count before it and its gather count (every end of a pacing gathers the class)."""
    pacing = (state.pace, state.gather)
    found = st.session_state.get(OWN_STEP_KEY)
    if found is not None and found[0] == pacing:
        return found[1]
    try:
        step = store().my_step(code, st.session_state.get(SID_KEY))
    except errors.StoreUnavailable:
        raise
    except errors.ClassroomError:
        step = state.lesson_step  # the bar's own read of the room says what went wrong, if anything did
    st.session_state[OWN_STEP_KEY] = (pacing, step)
    return step


def own_step_controls(code: str, state, at: int) -> None:
    """In the student's bar: the step, its note for students, and Previous and Next, which move only this student."""
    step = state.steps[at]
    st.markdown(f":material/slideshow: **Step {at + 1} of {len(state.steps)}** · {escape_markdown(step.title)}")
    if step.student_notes:
        st.text(step.student_notes)  # the deck's text, as text
    with st.container(horizontal=True, vertical_alignment="center"):
        step_buttons(at, len(state.steps), lambda n: _go(code, (state.pace, state.gather), n), "class_own_step")


def _go(code: str, pacing: tuple, step: int) -> None:
    try:
        store().student_step(code, st.session_state.get(SID_KEY), step)
    except errors.ClassroomError as err:
        st.session_state[MESSAGE_KEY] = f"Could not go to that step: {err}."
        st.session_state.pop(OWN_STEP_KEY, None)  # read again from the store
        return
    st.session_state[OWN_STEP_KEY] = (pacing, step)
