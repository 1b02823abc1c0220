"""Every lesson page declares its class questions beside its state, under its own name (the one a question's
source carries and the page hides by), and the hiding rule every page uses."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.apptest_helpers import open_page
from ui import classroom_open_question
from ui.declared import PAGES, declared_page
from ui.page_questions import questions_of

ROOT = Path(__file__).resolve().parents[1]
LESSON_PAGES = sorted(p.stem for p in (ROOT / "pages").glob("*.py") if p.stem != "class")


def test_there_are_twelve_lesson_pages_and_each_has_its_declaration():
    assert len(LESSON_PAGES) == 12
    assert sorted(PAGES) == LESSON_PAGES


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_every_lesson_page_declares_questions_under_its_own_name(page):
    declaration = (ROOT / "ui" / "declared" / f"{page}.py").read_text()
    declared = re.findall(r"ask_from\(\s*STATE,\s*\"([a-z_]+)\"", declaration)
    assert declared == [page], f"ui/declared/{page}.py declares the page's questions once, as {page!r}"
    assert declared_page(page).page == page
    source = (ROOT / "pages" / f"{page}.py").read_text()
    assert "PageState(" not in source and "ask_from(" not in source, f"pages/{page}.py imports its declaration"
    hides = set(re.findall(r'answer_hidden\("([a-z_]+)"', source))
    assert hides <= {page}, f"pages/{page}.py hides by its own name only: {hides}"


@pytest.mark.parametrize("page", ["playground", "scaling", "causal", "heads"])
def test_a_page_that_ran_offers_its_questions_to_the_ask_box(page):
    at = open_page(f"pages/{page}.py")
    assert not at.exception
    prefix = at.session_state["_page_state_current"].prefix
    declared = questions_of(prefix)
    assert declared is not None and declared.page == page and len(declared.questions) >= 1
    assert all(q.title and q.kind for q in declared.questions)


@pytest.mark.parametrize(
    ("asked", "page", "kind", "hidden"),
    [
        (None, "causal", None, False),
        ({"page": "heads", "question": "uniform"}, "causal", None, False),
        ({"page": "causal", "question": "weight"}, "causal", None, True),
        ({"page": "causal", "question": "weight"}, "causal", "weight", True),
        ({"page": "causal", "question": "weight"}, "causal", "changes", False),
        ({"page": "causal", "query": None, "unknown": True}, "causal", "changes", True),  # the database is down
        ({"page": "causal", "query": None, "unknown": True}, "heads", "uniform", False),
    ],
)
def test_a_page_hides_the_part_that_answers_the_open_question_and_every_part_when_it_cannot_tell(
    monkeypatch, asked, page, kind, hidden
):
    monkeypatch.setattr(classroom_open_question, "asked_here", lambda: asked)
    assert classroom_open_question.answer_hidden(page, kind) is hidden


@pytest.mark.parametrize("kind", ["uniform", "argmax"])
def test_the_heads_outputs_are_hidden_for_either_heads_question(monkeypatch, kind):
    """A head's outputs (weights · V_h) show how sharply it weighs: hidden while either question is open."""
    monkeypatch.setattr(classroom_open_question, "asked_here", lambda: {"page": "heads", "question": kind})
    at = open_page("pages/heads.py")
    assert not at.exception
    text = " ".join(i.value for i in at.info)
    assert "The heads' outputs side by side" in text and "output (weights · V_" in text
