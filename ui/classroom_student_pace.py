"""A student at their own pace through the room's lesson (the teacher's switch on /class: Store.pace_lesson): the
step this student is on, and in the room's bar its title, its note for students (never the teacher's notes) and the
student's own Previous and Next. The bar (ui/classroom_student.py) opens the step's view as it opens the teacher's
when the class follows the teacher, and the question of the step is the one the student answers, until they go on
past it: a later step may show what answers it.
"""

from __future__ import annotations

import streamlit as st

from classroom import errors
from locales import tr
from ui.classroom_lesson import language_note, step_buttons, step_heading
from ui.classroom_session import LEFT_BEHIND, MESSAGE_KEY, SID_KEY, store
from ui.safe_text import escape_markdown

OWN_STEP_KEY = "class_own_pace_step"  # (the room's pacing, the step this student is on, the furthest they reached)
LEFT_BEHIND += [OWN_STEP_KEY]


def own_step(code: str, state) -> tuple[int, int] | None:
    """(the step this student is on, the furthest one they went to) while the room's students go at their own
    pace: the store's word, read once per pacing (a reload, another worker: the store keeps it), then this
    session's own moves."""
    found = st.session_state.get(OWN_STEP_KEY)
    if found is not None and found[0] == state.pace:
        return found[1], found[2]
    try:
        mine = store().my_step(code, st.session_state.get(SID_KEY))
    except errors.StoreUnavailable:
        raise
    except errors.ClassroomError:
        mine = None  # the bar's own read of the room says what went wrong, if anything did
    if mine is None:
        mine = (state.lesson_step or 0,) * 2
    st.session_state[OWN_STEP_KEY] = (state.pace, *mine)
    return mine


def own_step_controls(code: str, state, at: int, reached: int) -> None:
    """In the student's bar: the step, its note for students, and Previous and Next, which move only this student
    (not while the class is paused)."""
    step = state.steps[at]
    step_heading(at, len(state.steps), step.title)
    if step.student_notes:
        st.text(step.student_notes)  # the deck's text, as text
    language_note(st, step.language)  # the step's title and notes, when the lesson is in another language
    with st.container(horizontal=True, vertical_alignment="center"):
        step_buttons(at, len(state.steps), lambda n: _go(code, state.pace, n, reached), "class_own_step", state.paused)
    if state.asking and reached <= at:
        st.caption(
            tr("Send your answer before you go on: once you go past this step, your answer to its question is final.")
        )


def went_past(code: str, state, reached: int | None) -> bool:
    """Whether this student went on past the step of the lesson question asked now (`state.question`), at their own
    pace: their answer to it is final. `reached`: how far they went, if this session knows it (at their own pace);
    else the store says."""
    question = state.question
    if question is None or question.revealed or question.step is None:
        return False
    of_step = state.step_questions.get(question.step)
    if of_step is None or of_step.id != question.id:
        return False  # not the lesson's question of that step (another lesson's, or asked outside it)
    if reached is None:
        try:
            found = store().my_step(code, st.session_state.get(SID_KEY))
        except errors.StoreUnavailable:
            raise
        except errors.ClassroomError:
            found = None
        reached = found[1] if found is not None else None
    return reached is not None and reached > question.step


def passed_box(code: str, question) -> None:
    """The question of a step this student went on past, at their own pace: what they sent, final until the
    reveal (a later step may have shown its answer)."""
    from classroom.questions import answer_label, prompt_text

    try:
        mine = store().my_answer(code, st.session_state.get(SID_KEY), question.id)
    except errors.ClassroomError:
        mine = None
    st.markdown(
        tr(
            "**Question {number}:** {prompt}",
            number=question.number,
            prompt=escape_markdown(prompt_text(question.body)),
        )
    )
    if mine is not None:
        st.caption(
            tr(
                "You went on past this step, so your answer is final: you sent {answer}. The teacher reveals the "
                "answer.",
                answer=escape_markdown(answer_label(question.body, mine)),
            )
        )
    else:
        st.caption(
            tr(
                "You went on past this step, so your answer is final: you sent no answer. The teacher reveals the "
                "answer."
            )
        )


def _go(code: str, pace: int, step: int, reached: int) -> None:
    try:
        store().student_step(code, st.session_state.get(SID_KEY), step)
    except errors.ClassroomError as err:
        st.session_state[MESSAGE_KEY] = tr("Could not go to that step: {error}.", error=str(err))
        st.session_state.pop(OWN_STEP_KEY, None)  # read again from the store
        return
    st.session_state[OWN_STEP_KEY] = (pace, step, max(reached, step))
