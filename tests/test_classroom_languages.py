"""One class in several languages (issue #48): an English teacher, students in Spanish and in Chinese following and
answering one question. Each reads the question in their own language, types a number as their language writes it,
and the teacher's counts hold every answer, because a question and its answers are language-free underneath (a
prompt is a message of the catalogue and its values; an answer a number)."""

from __future__ import annotations

import pytest

import locales
from classroom.questions import prompt_text
from tests.apptest_helpers import chart_by_key, every_text, open_page
from tests.classroom_asking import ask
from tests.i18n_helpers import english_left, page_text
from ui import classroom_session


@pytest.fixture(autouse=True)
def database(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_DB_URL", f"sqlite:///{tmp_path / 'class.db'}")
    yield
    classroom_session.forget_stores()


def read_in(lang: str, monkeypatch, body: dict) -> str:
    """The question's prompt as a session in `lang` reads it."""
    with monkeypatch.context() as m:
        m.setattr(locales, "language", lambda: lang)
        return prompt_text(body)


def test_an_english_teacher_and_students_in_spanish_and_chinese_answer_one_question(monkeypatch):
    teacher = open_page("pages/class.py")
    teacher.button(key="class_start").click().run()
    code, key = teacher.session_state["class_room"], teacher.session_state["class_teacher_key"]
    students = {
        lang: open_page("pages/playground.py", query={"room": code, "lang": lang}) for lang in ("en", "es", "zh_Hans")
    }
    teacher.switch_page("pages/playground.py").run()
    question = ask(teacher, "weight", query=2, key=1)
    body = question.body
    assert "values" in body and "Playground" not in str(body["values"])  # stored language-free: a message, values

    prompts = {lang: read_in(lang, monkeypatch, body) for lang in students}
    assert len(set(prompts.values())) == 3  # three languages, three texts of one question
    typed = {"en": "0.5", "es": "0,4", "zh_Hans": "0.3"}  # the Spanish student writes a decimal comma
    for lang, student in students.items():
        student.run()
        assert not student.exception
        assert student.session_state["language"] == lang
        shown = every_text(student).replace("\\", "")
        assert prompts[lang] in shown  # the question in the student's own language
        assert all(prompts[other] not in shown for other in students if other != lang)
        student.text_input(key=f"class_answer_{question.id}_box").input(typed[lang]).run()
        student.button(key=f"class_send_{question.id}").click().run()
        assert not student.exception
        if lang != "en":  # the room's bar, the question, the answer box and what was sent: all in the language
            assert english_left(page_text(student), lang) == []

    results = classroom_session.store().results(code, key, question.id)
    assert sorted(results.values) == [0.3, 0.4, 0.5]  # every answer counted, the Spanish 0,4 as 0.4
    teacher.run()
    assert "**3** answered · 3 here" in every_text(teacher)
    assert prompts["en"] in every_text(teacher).replace("\\", "")  # the teacher reads it in English
    bars = chart_by_key(teacher, f"class_dist_{question.id}")["data"]
    assert sum(sum(trace["y"]) for trace in bars if trace.get("type") == "bar") == 3  # one distribution of all
