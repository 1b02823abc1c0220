"""Recording a lesson and going through one alone, under AppTest: *Add this view to my lesson* keeps a page as it is
now; the editor on /class names, reorders and deletes steps, picks a step's question, checks the lesson, and what it
downloads reads back as the same lesson; a student alone moves through a shipped lesson with its notes for students,
never the teacher's."""

from __future__ import annotations

import pytest

from classroom.decks import parse_deck, to_toml
from tests.apptest_helpers import every_text, number_box, open_page
from ui.declared import declared_page
from ui.lesson_editor import DRAFT_KEY, as_document, from_deck

pytestmark = pytest.mark.usefixtures("class_database")  # tests/conftest.py


def test_recorded_views_become_a_lesson_that_reads_back_the_same():
    at = open_page("pages/causal.py", query={"t": "3", "seed": "7"})
    at.button(key="lesson_record").click().run()
    at.switch_page("pages/heads.py").run()
    at.button(key="lesson_record").click().run()
    steps = at.session_state[DRAFT_KEY]["steps"]
    assert [s["title"] for s in steps] == ["Causal masking", "Multi-head attention"]
    assert steps[0]["view"].startswith("/causal?") and "t=3" in steps[0]["view"] and "seed=7" in steps[0]["view"]
    assert "Your lesson: 2 steps" in every_text(at)
    at.switch_page("pages/class.py").run()
    first, second = (s["id"] for s in steps)
    at.text_input(key="lesson_edit_title").input("Masks and heads").run()
    at.text_input(key="lesson_edit_level").input("Second lesson").run()
    number_box(at, "lesson_edit_minutes").input("35").run()
    assert at.session_state[DRAFT_KEY]["minutes"] == 35
    at.text_area(key=f"lesson_edit_{first}_notes").input("Say: no peeking.").run()
    at.selectbox(key=f"lesson_edit_{first}_kind").set_value("weight").run()
    assert not at.exception
    at.button(key=f"lesson_edit_{second}_up").click().run()  # the heads step first
    lesson = at.session_state[DRAFT_KEY]
    assert [s["id"] for s in lesson["steps"]] == [second, first]
    deck = parse_deck(to_toml(parse_deck(to_toml_of(lesson), declared_page)), declared_page)
    assert (
        deck.minutes == 35 and deck.title == "Masks and heads" and [s.page for s in deck.steps] == ["heads", "causal"]
    )
    assert deck.steps[1].notes == "Say: no peeking." and deck.steps[1].question["kind"] == "weight"
    reopened = as_document(from_deck(deck.to_dict()))  # a file opened in the editor, unchanged
    assert reopened == deck.to_dict() and deck.language == "en"  # the notes' language kept (the session's)
    assert parse_deck(to_toml(deck), declared_page) == deck  # downloaded, then opened again: the same lesson
    at.button(key=f"lesson_edit_{second}_delete").click().run()
    assert [s["id"] for s in at.session_state[DRAFT_KEY]["steps"]] == [first]


def to_toml_of(lesson: dict) -> str:
    from classroom.decks import deck_from_dict

    return to_toml(deck_from_dict(as_document(lesson), declared_page))


def test_a_lesson_not_ready_says_why_and_offers_no_download():
    at = open_page("pages/causal.py")
    at.button(key="lesson_record").click().run()
    at.switch_page("pages/class.py").run()
    sid = at.session_state[DRAFT_KEY]["steps"][0]["id"]
    at.text_input(key=f"lesson_edit_{sid}_title").input("").run()
    assert not at.exception
    assert "step 1's title must be text of 1 to 80 characters" in every_text(at)
    assert not at.get("download_button")


def test_a_student_alone_goes_through_a_shipped_lesson_with_the_notes_for_students_only():
    at = open_page("pages/class.py")
    at.selectbox(key="lesson_alone_pick").set_value("Attention in 20 minutes").run()
    at.button(key="lesson_alone_open").click().run()
    assert not at.exception
    text = every_text(at)
    assert "Step 1 of 10** · A query reads its keys" in text
    assert "Each row of the heatmap is one query" in text, "the step's notes for students"
    assert "This is the Playground. A step with a question" not in text, "never the teacher's notes"
    assert [t.value for t in at.title] == ["Attention playground"]
    at.button(key="lesson_alone_next").click().run()
    assert "Step 2 of 10** · Aligned, orthogonal, opposite" in every_text(at)
    assert tuple(at.session_state["seq"].tokens) == ("up", "right", "down"), "the step's view, vectors and all"
    at.button(key="lesson_alone_leave").click().run()
    assert "Step 2 of 10" not in every_text(at)


def test_a_lessons_language_survives_the_editor():
    from ui.lesson_editor import as_document, from_deck

    document = {
        "title": "Máscaras",
        "level": "",
        "minutes": 20,
        "language": "es",
        "step": [{"title": "a", "view": "/causal"}],
    }
    assert as_document(from_deck(document))["language"] == "es"  # opened, edited, saved: still Spanish
