"""The room's bars are fragments, pushed by the watcher the moment a full run ends. When such a push starts before
that run's messages have left the server, Streamlit 1.67 drops the run's deltas of the fragment and the browser
clears the fragment's block as stale, which moved every later element up a place, where the fragment run drew
over the next one: 'Ask the class' under the teacher's bar vanished after a Reveal (ui.classroom_session's
pushed_or_timed draws each bar in a container of its own since). The server here holds every session's messages
a little after each run (tests/browser/held_messages), so every reveal meets the race."""

from __future__ import annotations

from pathlib import Path

from tests.browser.conftest import class_server, closing_pages, environment
from tests.browser.test_class_lesson_browser import WAIT, idle, room_with_student

HELD = Path(__file__).parent / "held_messages"


def test_ask_the_class_stays_under_the_teachers_bar_after_each_reveal(browser):
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT)
    with environment(PYTHONPATH=str(HELD), HELD_MESSAGES_S="0.12"), class_server() as url:
        with closing_pages("class_bar_race") as pages:
            teacher, student, _ = room_with_student(browser, url, pages)
            teacher.goto(f"{url}/")
            ask_box = teacher.get_by_role("button", name="Ask the class")
            for number in (1, 2):
                ask_box.click()
                teacher.get_by_text("What weight will a query give a key?").click()
                teacher.get_by_role("button", name="Ask", exact=True).click()
                expect(student.get_by_text(f"Question {number}:").first).to_be_visible()
                teacher.get_by_role("button", name="Reveal the answer to the class").first.click()
                expect(teacher.get_by_role("button", name="Reveal the answer to the class")).to_have_count(0)
                idle(teacher)
                expect(ask_box).to_be_visible()
                expect(teacher.get_by_role("heading", name="Attention playground")).to_be_visible()
