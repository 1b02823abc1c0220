"""Asking the class from a page, under AppTest: a room with a teacher and a student, the teacher's Ask box driven
as a teacher drives it (open the popover, pick the question and its query, key, head..., press Ask). Used by the
tests of each page's questions (tests/test_questions_*.py)."""

from __future__ import annotations

from tests.apptest_helpers import every_text, open_page
from ui import classroom_session
from ui.classroom_ask import ask_box_key


def start_room(tmp_path, monkeypatch):
    """(teacher, student, code): a room started on /class, and one student who joined it by its link (the `room`
    fixture of tests/conftest.py)."""
    monkeypatch.setenv("ATTENTION_DB_URL", f"sqlite:///{tmp_path / 'class.db'}")
    teacher = open_page("pages/class.py")
    teacher.button(key="class_start").click().run()
    code = teacher.session_state["class_room"]
    student = open_page("pages/playground.py", query={"room": code})
    assert not teacher.exception and not student.exception
    return teacher, student, code


def store():
    return classroom_session.store()


def ask(teacher, kind: str, **picks: int):
    """On the teacher's page (run already): ask the question `kind` with `picks` (each pick's value); returns the
    question as the store holds it, with its true value."""
    teacher.session_state[ask_box_key(teacher.session_state)] = True  # the teacher opens the popover (a rerun)
    teacher.run()
    teacher.radio(key="class_ask_kind").set_value(kind).run()
    for name, value in picks.items():
        (box,) = [s for s in teacher.selectbox if str(s.key).startswith(f"class_ask_{name}_")]
        box.set_value(value).run()
    teacher.button(key="class_ask").click().run()
    assert not teacher.exception
    errors = [e.value for e in teacher.error if "Could not ask" in e.value]
    assert not errors, errors
    code, key = teacher.session_state["class_room"], teacher.session_state["class_teacher_key"]
    question = store().state(code).question
    assert question is not None and question.body["source"]["question"] == kind
    return store().results(code, key, question.id).question


def reveal(teacher, question) -> None:
    teacher.button(key=f"class_reveal_{question.id}").click().run()
    assert not teacher.exception


def hidden_on(at) -> bool:
    """Whether the page `at` shows the card of an answer hidden while the class answers."""
    return "Hidden while the class answers" in every_text(at)
