"""Build it, in Chromium (issue #46): the teacher poses a goal on the Playground; one student (nicknamed) edits their
own vectors until the live check says solved and submits, another (on a phone) submits without solving it; the
teacher sees one solved, and Show this one moves every screen to the solution, with no name on the projector.
Every wait is for a condition (Playwright's expect)."""

from __future__ import annotations

import os
import re

import pytest

from tests.browser.conftest import ARTIFACTS, class_server, closing_pages
from tests.browser.test_class_lesson_browser import idle, new_page, start_room

WAIT = 60_000
SHOTS = bool(os.environ.get("ATTENTION_SCREENSHOTS"))  # also save the screens, for a person to look at


@pytest.fixture(scope="module")
def build_url():
    with class_server() as url:
        yield url


def paste(page, matrix: str, text: str) -> None:
    box = page.get_by_role("textbox", name=f"{matrix} as text", exact=True)
    box.fill(text)
    box.press("Control+Enter")
    idle(page)


def test_one_student_builds_it_another_does_not_and_the_teacher_shows_the_solution(browser, build_url):
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT)
    with closing_pages("class_build") as pages:
        teacher = new_page(browser, width=1280, height=720)
        pages.append(teacher)
        code, query = start_room(teacher, build_url)
        builder, phone = new_page(browser, width=1100), new_page(browser, width=390, height=844)
        pages += [builder, phone]
        for student in (builder, phone):
            student.goto(f"{build_url}/?{query}")
            expect(student.get_by_text(f"Room {code}").first).to_be_visible()
        builder.get_by_role("textbox", name="Nickname (optional)").fill("Ada")
        builder.get_by_role("button", name="Save").click()
        expect(builder.get_by_text("as Ada").first).to_be_visible()
        teacher.goto(f"{build_url}/")
        teacher.get_by_role("button", name="Ask the class").click()
        teacher.get_by_text("Build it: make a query attend to a key").click()
        idle(teacher)
        teacher.get_by_role("combobox", name="Query").click()
        teacher.get_by_role("option", name="q_2 'south'").click()
        idle(teacher)
        teacher.get_by_role("button", name="Ask", exact=True).click()
        expect(teacher.get_by_role("button", name="Ask", exact=True)).to_have_count(0)
        for student in (builder, phone):
            expect(student.get_by_text("make query 2 give key 0 a weight of at least 0.8").first).to_be_visible()
            expect(student.get_by_text("Not yet: query 2 gives key 0 a weight of").first).to_be_visible()
        builder.get_by_text("Paste Q, K or V as text").click()
        paste(builder, "Q", "0 0; 0 0; 5 0; 0 0")
        paste(builder, "K", "5 0; 0 0; 0 0; 0 0")
        expect(builder.get_by_text("Solved: 1.00 ≥ 0.8").first).to_be_visible()
        builder.get_by_role("button", name="Submit my solution").click()
        expect(builder.get_by_text("Submitted: solved").first).to_be_visible()
        phone.get_by_role("button", name="Submit my solution").click()
        expect(phone.get_by_text("Submitted: not solved yet").first).to_be_visible()
        expect(teacher.get_by_text("solved · 1 submitted, not solved yet").first).to_be_visible()
        shows = teacher.get_by_role("button", name="Show this one")
        expect(shows).to_have_count(2)
        if SHOTS:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            teacher.screenshot(path=str(ARTIFACTS / "build_teacher_1280x720.png"))
            phone.screenshot(path=str(ARTIFACTS / "build_phone_390x844.png"))
        expect(teacher.get_by_text("Solution 1 · solved").first).to_be_visible()
        shows.first.click()  # the solved one comes first
        solution = re.compile(r"[?&]q=[^&]*5")
        for page in (teacher, phone, builder):
            expect(page).to_have_url(solution)
        idle(teacher)
        expect(teacher.get_by_text("Ada")).to_have_count(0)  # no name on the projector
        expect(teacher.get_by_text("Solution 1 · solved · shown").first).to_be_visible()
        # a second one, the challenge already closed (the button reruns the bar alone): every screen moves again
        teacher.get_by_role("button", name="Show this one").nth(1).click()
        for page in (teacher, phone, builder):
            expect(page).not_to_have_url(solution)
        expect(teacher.get_by_text("Solution 2 · not yet · shown").first).to_be_visible()
        expect(builder.get_by_text("The page shows a classmate's solution").first).to_be_visible()
        if SHOTS:
            teacher.screenshot(path=str(ARTIFACTS / "build_shown_1280x720.png"))
