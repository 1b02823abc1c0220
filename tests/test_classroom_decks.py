"""A lesson deck run in a room under AppTest: the teacher starts a shipped lesson on /class, the bar says which step
the class is on, Next and Previous move the class and the teacher's own screen, the step's question is asked with
one click from the page as the class sees it, nothing moves while it is open, and the notes stay off a tab in
presenter mode.

Each AppTest is one browser session; they share the store through ATTENTION_DB_URL.
"""

from __future__ import annotations

import numpy as np
import pytest

from classroom.questions import prompt_text
from tests.apptest_helpers import every_text, open_page
from tests.test_classroom_lesson import heatmap_rows
from ui import classroom_session

CLASS = "pages/class.py"
NOTES = "Your notes for this step (hidden in presenter mode)"


pytestmark = pytest.mark.usefixtures("class_database")  # tests/conftest.py


def store():
    return classroom_session.store()


def started_lesson(title: str = "Attention in 20 minutes"):
    teacher = open_page(CLASS)
    teacher.button(key="class_start").click().run()
    code = teacher.session_state["class_room"]
    assert teacher.selectbox(key="class_lesson_pick").value == "Attention in 20 minutes"
    teacher.selectbox(key="class_lesson_pick").set_value(title).run()
    teacher.button(key="class_lesson_start").click().run()
    assert not teacher.exception
    return teacher, code


def reveal_and_next(teacher, code: str) -> None:
    """Reveal the step's question (it opened with the step), then Next step."""
    key = teacher.session_state["class_teacher_key"]
    asked = store().state(code).question
    assert asked is not None and not asked.revealed, "the step opened with its question asked"
    assert teacher.button(key="class_step_next").disabled, "the class stays on an open question's view"
    store().reveal(code, key, asked.id)
    teacher.run()
    teacher.button(key="class_step_next").click().run()
    assert not teacher.exception


def test_a_teacher_runs_a_shipped_lesson_and_the_class_follows_each_step():
    teacher, code = started_lesson()
    key = teacher.session_state["class_teacher_key"]
    student = open_page("pages/playground.py", query={"room": code})
    assert [t.value for t in teacher.title] == ["Attention playground"], "the teacher's screen opened step 1"
    assert "Step 1 of 10** · A query reads its keys" in every_text(teacher)
    state = store().state(code)
    assert state.lesson_step == 0 and state.asking, "step 1 opened with its question asked, in the same move"
    assert state.question.body["source"].items() >= {"page": "playground", "question": "argmax", "query": 2}.items()
    # the step's view, written whole (every declared parameter), as the teacher's page writes it
    assert state.view.startswith("/?tokens=north+east+south+west&") and "&causal=0&scale=1&" in state.view
    reveal_and_next(teacher, code)
    for _ in range(2):  # steps 2 and 3: every query is the same vector, so every row is hidden while it is asked
        student.run()
        assert np.isnan(heatmap_rows(student)[0]).all(), store().state(code).lesson_step
        reveal_and_next(teacher, code)
    assert "Step 4 of 10** · Predict, then check" in every_text(teacher)
    assert [t.value for t in teacher.title] == ["Predict, then check"]
    assert store().current_view(code).startswith("/predict?puzzle=orthogonal")
    student.run()
    assert [t.value for t in student.title] == ["Predict, then check"]
    assert student.session_state["predict_puzzle"] == "orthogonal"
    asked = store().state(code).question
    assert asked.body["source"].items() >= {"page": "predict", "question": "argmax", "query": 0}.items()
    assert "query 0 'up'" in prompt_text(asked.body)
    # ended without a reveal, the step's question is one click away again, built from the page as the class sees it
    store().end_question(code, key)
    teacher.switch_page("pages/predict.py").run()  # AppTest runs the page it was last told to
    teacher.button(key="class_step_ask").click().run()
    assert not teacher.exception
    again = store().state(code).question
    assert again.id != asked.id and again.body["prompt"] == asked.body["prompt"] and not again.revealed
    store().reveal(code, key, again.id)
    teacher.run()
    assert store().state(code).step_questions[3].id == again.id, "the step's question, asked again from the bar"
    teacher.button(key="class_step_back").click().run()
    state = store().state(code)
    assert state.lesson_step == 2 and state.view.startswith("/?tokens=")
    assert state.question.revealed and state.question.step == 2, "back on a step: its question as the class saw it"


def test_the_lesson_survives_a_reload_and_the_notes_stay_off_the_projected_tab():
    teacher, code = started_lesson("Where does word order come from?")
    assert "Step 1 of 9" in every_text(teacher) and not store().state(code).asking  # step 1 asks nothing
    assert NOTES in [e.label for e in teacher.expander]
    notes = next(e for e in teacher.expander if e.label == NOTES)
    assert "Attention compares every query with every key" in notes.text[0].value
    teacher.button(key="class_step_next").click().run()
    # a reload: a new session of the same browser (the cookie), on the dashboard
    again = open_page(CLASS, query={"present": "1"})
    again.session_state["class_room"] = code
    again.session_state["class_role"] = "teacher"
    again.session_state["class_teacher_key"] = teacher.session_state["class_teacher_key"]
    again.run()
    assert not again.exception
    assert "step 2 of 9" in every_text(again)
    assert NOTES not in [e.label for e in again.expander], "presenter mode is the projected tab"
    assert "Attention compares" not in every_text(again)
    editing = [e for e in again.expander if e.label.startswith("Your lesson")]
    assert not editing, "while a lesson runs, the dashboard offers no second lesson to edit and start"
    again.button(key="class_lesson_end").click().run()
    assert store().state(code).lesson_step is None
    assert [e for e in again.expander if e.label.startswith("Your lesson")], "ended: the editor is back"


def test_an_uploaded_lesson_with_problems_is_refused_one_problem_at_a_time():
    teacher = open_page(CLASS)
    teacher.button(key="class_start").click().run()
    teacher.selectbox(key="class_lesson_pick").set_value("Upload a lesson file…").run()
    assert not teacher.exception
    assert teacher.get("file_uploader"), "the upload box is shown"


def test_the_teachers_own_step_is_not_pushed_back_to_the_teachers_screen(monkeypatch):
    """A step is the teacher's own move: the screen that made it draws it in full, so its watcher is told it is caught
    up (as after a lead); a push of its bar racing the run that draws the new page made the browser clear that page
    (the projector went blank below the bar during a question, 3 steps in 9 of the first lesson)."""
    from ui import classroom_lesson

    told = []
    monkeypatch.setattr(classroom_lesson, "caught_up", lambda store, version: told.append(version))
    teacher, code = started_lesson()
    assert told == [store().state(code).version], "Start the lesson: one move, one version"
    reveal_and_next(teacher, code)
    assert told[-1] == store().state(code).version and len(told) == 2


def test_students_at_their_own_pace_move_alone_answer_their_steps_question_and_are_brought_back():
    teacher, code = started_lesson()
    key = teacher.session_state["class_teacher_key"]
    asked = store().state(code).question
    store().end_question(code, key)  # ended, not revealed: at their own pace it is open again, on its step
    teacher.switch_page(CLASS).run()
    teacher.button(key="class_lesson_pace").click().run()
    assert not teacher.exception
    state = store().state(code)
    assert state.paced and state.question is None and len(state.step_questions) == 8, "one question per step"
    first = state.step_questions[0]
    assert first.id == asked.id and not first.revealed, "step 1's question, asked once"
    student = open_page("pages/playground.py", query={"room": code})
    text = every_text(student)
    assert "going through the lesson at your own pace" in text and "Step 1 of 10** · A query reads its keys" in text
    assert "A row's weights sum to 1." in text, "the step's note for students"
    assert "written in" not in text, "an English student reads an English lesson without a word about it"
    spanish = open_page("pages/playground.py", query={"room": code, "lang": "es"})
    assert "Esta lección está escrita en inglés." in every_text(spanish), "a Spanish student is told"
    assert "Attention compares" not in text and "The question: the query of 'south'" not in text, "never the notes"
    assert np.isnan(heatmap_rows(student)[0][2]).all(), "step 1's question is open for this student: its row hidden"
    assert f"Question {first.number} is open on step 1 for the students at their own pace" in every_text(student)
    student.radio(key=f"class_answer_{first.id}").set_value(1)
    student.button(key=f"class_send_{first.id}").click().run()
    assert store().results(code, key, first.id).values == [1]
    for _ in range(3):
        student.button(key="class_own_step_next").click().run()
        student.run()  # the move the bar asked for
    assert not student.exception
    assert store().my_step(code, student.session_state["class_sid"]) == (3, 3)
    assert [t.value for t in student.title] == ["Predict, then check"], "the student's own step, not the teacher's"
    assert store().state(code).lesson_step == 0, "the class's step stays the teacher's"
    fourth = store().state(code).step_questions[3]
    assert f"**Question {fourth.number}:**" in every_text(student)
    teacher.run()
    assert "**At their own pace** · step 1: 1 · step 4: 1" in every_text(teacher)  # the Spanish student on step 1
    assert teacher.dataframe[0].value["here on it"].tolist() == [1, 0, 0, 1] + [0] * 6
    # the teacher's screen, maybe projected, hides a step question's answer on its page too
    teacher.switch_page("pages/playground.py").run()
    assert np.isnan(heatmap_rows(teacher)[0][2]).all()
    student.button(key="class_own_step_back").click().run()
    student.run()
    assert store().my_step(code, student.session_state["class_sid"]) == (2, 3)
    assert "You went on past this step, so your answer is final: you sent no answer." in every_text(student)
    assert not [b for b in student.button if b.key.startswith("class_send_")], "no answer after going past it"
    teacher.selectbox(key="class_step_bring_to").set_value(0)
    teacher.button(key="class_step_bring").click().run()
    state = store().state(code)
    assert not state.paced and state.lesson_step == 0 and state.question.id == first.id and state.asking
    student.run()
    student.run()
    assert "following the teacher" in every_text(student)
    assert f"Question {first.number} is open: this page stays as the teacher asked it" in every_text(student)
    assert [t.value for t in student.title] == ["Attention playground"]
    assert store().results(code, key, first.id).values == [1], "the step's answers stay with its question"
    assert "You went on past this step, so your answer is final: you sent k_1 'east'." in every_text(student)
    assert not [b for b in student.button if b.key.startswith("class_send_")], "final, though the class is back on it"
