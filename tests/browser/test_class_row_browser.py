"""Predict the row, in Chromium (issue #46): the teacher asks for a whole row from the Playground, three students
(one on a phone) drag their sliders and send, the teacher's screen shows the class's rows and mean row, and Reveal
adds the true row and the class's most common miss in words. Every wait is for a condition (Playwright's expect)."""

from __future__ import annotations

import os

import pytest

from tests.browser.conftest import ARTIFACTS, class_server, closing_pages
from tests.browser.test_class_lesson_browser import idle, new_page, start_room

WAIT = 60_000
SHOTS = bool(os.environ.get("ATTENTION_SCREENSHOTS"))  # also save the screens, for a person to look at


@pytest.fixture(scope="module")
def row_url():
    with class_server() as url:
        yield url


def drag(page, label: str, key: str, steps: int) -> None:
    """Move the slider `label` by `steps` of 0.01 with the keyboard, as a student may (End: all the way)."""
    thumb = page.get_by_role("slider", name=label)
    thumb.focus()
    if key == "End":
        thumb.press("End")
    else:
        for _ in range(steps):
            thumb.press(key)


def test_three_students_predict_a_row_and_the_teacher_sees_their_rows_the_mean_and_the_truth(browser, row_url):
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT)
    with closing_pages("class_row") as pages:
        teacher = new_page(browser, width=1280, height=720)
        pages.append(teacher)
        code, query = start_room(teacher, row_url)
        students = [
            new_page(browser, width=1100),
            new_page(browser, width=1100),
            new_page(browser, width=390, height=844),
        ]
        pages += students
        for student in students:
            student.goto(f"{row_url}/?{query}")
            expect(student.get_by_text(f"Room {code}").first).to_be_visible()
        teacher.goto(f"{row_url}/")
        teacher.get_by_role("button", name="Ask the class").click()
        teacher.get_by_text("Predict a whole row of weights").click()
        teacher.get_by_role("button", name="Ask", exact=True).click()  # query 0: the default choice
        expect(teacher.get_by_role("button", name="Ask", exact=True)).to_have_count(0)
        for student, moves in zip(
            students,
            [
                [("k_0 'north'", "End", 0)],
                [("k_1 'east'", "End", 0)],
                [("k_0 'north'", "ArrowRight", 30), ("k_1 'east'", "End", 0)],
            ],
        ):
            expect(student.get_by_text("predict the whole row of query 0 'north'").first).to_be_visible()
            idle(student)
            for label, key, steps in moves:
                drag(student, label, key, steps)
            idle(student)
            expect(student.get_by_text("Sum: ").first).not_to_contain_text("Sum: 0.")
            student.get_by_role("button", name="Send my answer").click()
            expect(student.get_by_text("Sent:").first).to_be_visible()
        phone = students[2]
        expect(phone.get_by_text("Sent: 0.23, 0.77, 0.00, 0.00").first).to_be_visible()  # 0.3 and 1 scaled to 1
        rows = teacher.locator('[data-testid="stPlotlyChart"]').filter(has_text="class mean")
        expect(rows).to_have_count(1)
        expect(rows.get_by_text("answer 3")).to_have_count(1)
        if SHOTS:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            teacher.screenshot(path=str(ARTIFACTS / "row_teacher_1280x720.png"), full_page=True)
            phone.screenshot(path=str(ARTIFACTS / "row_phone_390x844.png"), full_page=True)
        teacher.get_by_role("button", name="Reveal the answer to the class").first.click()
        expect(rows.get_by_text("true row")).to_have_count(1)
        expect(teacher.get_by_text("weight than it gets").first).to_be_visible()
        idle(teacher)
        # the projected screen: the Ask box stays closed (the click on Reveal must not open it again)
        expect(teacher.get_by_role("button", name="Ask", exact=True)).to_have_count(0)
        expect(phone.get_by_text("The answer:").first).to_be_visible()
        if SHOTS:
            teacher.screenshot(path=str(ARTIFACTS / "row_teacher_revealed_1280x720.png"), full_page=True)
