"""Ask again (peer instruction): after the class has voted and discussed, the teacher asks the same question again;
the students answer afresh, and the teacher sees the first vote beside the second, on the same bars."""

from __future__ import annotations

from classroom.questions import option_texts, prompt_text
from tests.apptest_helpers import chart_by_key, every_text, open_page
from tests.classroom_asking import ask, reveal, store
from ui.classroom_ask import ask_box_key


def bars(at, key: str) -> list[int]:
    return list(chart_by_key(at, key)["data"][0]["y"])


def answer(student, question, choice: int) -> None:
    student.run()
    student.radio(key=f"class_answer_{question.id}").set_value(choice)
    student.button(key=f"class_send_{question.id}").click().run()
    assert not student.exception


def test_asked_again_the_class_answers_afresh_and_the_teacher_sees_both_votes(room):
    teacher, student, code = room
    other = open_page("pages/playground.py", query={"room": code})
    teacher.switch_page("pages/predict.py").run()
    teacher.selectbox(key="predict_puzzle").set_value("aligned").run()
    first = ask(teacher, "argmax", query=1)
    right = first.truth[0]
    wrong = (right + 1) % len(option_texts(first.body))
    answer(student, first, wrong)
    answer(other, first, wrong)
    teacher.run()
    teacher.button(key=f"class_again_{first.id}").click().run()
    assert not teacher.exception
    key = teacher.session_state["class_teacher_key"]
    again = store().state(code).question
    assert again.id != first.id and again.body["again_of"] == first.id
    assert again.body["again_of_number"] == first.number == 1
    assert prompt_text(again.body) == prompt_text(first.body) and again.body["view"] == first.body["view"]
    assert store().results(code, key, again.id).question.truth == first.truth
    student.run()
    assert "Asked again" in every_text(student)
    assert student.radio(key=f"class_answer_{again.id}").value is None  # nothing chosen for the new vote
    answer(student, again, right)
    answer(other, again, wrong)
    teacher.run()
    expected_first = [0] * len(option_texts(first.body))
    expected_first[wrong] = 2
    expected_again = [0] * len(option_texts(first.body))
    expected_again[right] += 1
    expected_again[wrong] += 1
    assert bars(teacher, f"class_dist_first_{again.id}") == expected_first
    assert bars(teacher, f"class_dist_{again.id}") == expected_again
    assert "**First vote** (question 1): 2 answered" in every_text(teacher)
    assert not [b for b in teacher.button if b.key == f"class_again_{again.id}"]  # once: the second vote is the last
    assert store().results(code, key, first.id).values == [wrong, wrong]  # the first vote is kept as it was
    reveal(teacher, again)
    student.run()
    assert len(student.success) == 1
    csv_text = store().export_csv(code, key)
    assert csv_text.count(prompt_text(first.body)[:40]) == 4  # two answers to each vote


def test_a_timed_question_takes_answers_until_its_time_and_refuses_later_ones(room, monkeypatch):
    """The store closes a question's answers `seconds` after it was asked (its own clock: never the browser's
    word); the student's box then says the time is up, and the teacher's panel too."""
    teacher, student, code = room
    teacher.switch_page("pages/predict.py").run()
    teacher.session_state[ask_box_key(teacher.session_state)] = True
    teacher.run()
    teacher.selectbox(key="class_ask_seconds").set_value(30).run()
    first = ask(teacher, "argmax", query=1)
    assert first.body["seconds"] == 30 and first.closes_at is not None
    teacher.session_state[ask_box_key(teacher.session_state)] = True  # the box opened again: no time carried over
    teacher.run()
    assert teacher.selectbox(key="class_ask_seconds").value == 0
    student.run()
    assert any("Answers close in" in h.proto.body for h in student.get("html"))
    answer(student, first, 0)
    key = teacher.session_state["class_teacher_key"]
    assert store().results(code, key, first.id).values == [0]
    clock = store().clock
    monkeypatch.setattr(store(), "clock", lambda: clock() + 31)  # the same store, half a minute later
    student.radio(key=f"class_answer_{first.id}").set_value(1)
    student.button(key=f"class_send_{first.id}").click().run()
    assert store().results(code, key, first.id).values == [0]  # the late answer was refused
    assert "Time is up" in every_text(student) and not [b for b in student.button if b.key == f"class_send_{first.id}"]
    assert "Sent: k_0" in every_text(student)  # what counts: the answer sent in time
    teacher.run()
    assert "Time is up" in every_text(teacher)


def test_a_question_refuses_a_time_outside_its_bounds():
    import pytest

    from classroom.errors import InvalidQuestion
    from classroom.questions import check_question

    base = {"kind": "choice", "prompt": "p", "options": ["a", "b"]}
    assert check_question({**base, "seconds": 30})["seconds"] == 30
    for bad in (0, 9, 3601, 30.0, True, "30", -5):
        with pytest.raises(InvalidQuestion, match="time for answers"):
            check_question({**base, "seconds": bad})


def test_a_student_reads_the_number_of_the_question_asked_again_not_of_the_one_before(room):
    """Ask again need not follow its question (Bring everyone can reopen an earlier step's question): the student's
    note names the question asked again, by its number."""
    teacher, student, code = room
    teacher.switch_page("pages/predict.py").run()
    teacher.selectbox(key="predict_puzzle").set_value("aligned").run()
    first = ask(teacher, "argmax", query=1)
    reveal(teacher, first)
    second = ask(teacher, "argmax", query=0)
    reveal(teacher, second)
    key = teacher.session_state["class_teacher_key"]
    store().ask(code, key, {**first.body, "again_of": first.id, "again_of_number": first.number}, truth=first.truth)
    assert store().state(code).question.number == 3
    student.run()
    text = every_text(student)
    assert "Your first answer stays with question 1." in text and "question 2." not in text
