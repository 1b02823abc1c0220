"""Class mode in Chromium: one teacher and three students, each in their own browser context (own cookies).

Join by link and by code, follow the teacher, pause, ask from the Predict page, answer, reveal, stop
following and come back, and the teacher's reload. Every wait is for a condition (Playwright's expect).
The server has its own temporary SQLite store (ATTENTION_DB_URL), so nothing here touches a real one.
"""

from __future__ import annotations

import re

import pytest

from tests.browser.conftest import class_server, closing_pages, screenshot

WAIT = 60_000  # ms: the server pushes a move within a second; a machine shared with other work may take long


@pytest.fixture(scope="module")
def class_url():
    with class_server() as url:
        yield url


@pytest.fixture(scope="module")
def chromium(browser, class_url):
    """The suite's one Chromium (conftest's `browser`): a second sync Playwright in one process cannot start."""
    return browser


def new_page(browser, width: int = 1300):
    context = browser.new_context(viewport={"width": width, "height": 950})
    page = context.new_page()
    page.set_default_timeout(WAIT)
    return page


def test_one_teacher_and_three_students(chromium, class_url):
    with closing_pages("class_failure") as pages:
        _one_teacher_and_three_students(chromium, class_url, pages)


def _one_teacher_and_three_students(chromium, class_url, pages):
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT)
    teacher = new_page(chromium)
    pages.append(teacher)
    teacher.goto(f"{class_url}/class")
    teacher.get_by_role("button", name="Start a room").click()
    code_box = teacher.locator('[data-testid="class-join-code"]')
    expect(code_box).to_have_text(re.compile(r"^[A-Z0-9]{6}$"))
    code = code_box.inner_text()
    shown = teacher.locator('[data-testid="class-student-link"]').inner_text()
    found = re.search(rf"/\?(room={code}&join=[A-Za-z0-9_-]+)$", shown)
    assert found, shown
    # The projected link names this machine's network address (tests/browser/test_class_lesson_browser.py checks
    # it); this server listens on loopback only, so the students here open the same query on its loopback address.
    link = f"{class_url}/?{found.group(1)}"
    key = next(c["value"] for c in teacher.context.cookies() if c["name"] == "attention_class").split(".")[2]
    expect(teacher.locator('[data-testid="stImage"]')).to_be_visible()  # the QR code

    students = [new_page(chromium, 1000) for _ in range(3)]
    pages += students
    for s in students[:2]:  # two open the student link
        s.goto(link)
        expect(s.get_by_text(f"Room {code}")).to_be_visible()
    third = students[2]  # one types the code, with a nickname
    third.goto(f"{class_url}/class")
    third.get_by_role("textbox", name="Room code", exact=True).fill(code.lower())
    third.get_by_role("textbox", name="Nickname (optional)").fill("<b>ada</b>")
    third.get_by_role("button", name="Join", exact=True).click()
    expect(third.get_by_text("as <b>ada</b>").first).to_be_visible()  # the nickname as text, not markup
    expect(teacher.get_by_text(f"Room {code} · 3 here").first).to_be_visible()

    # Follow: the teacher's page and its state become every student's.
    teacher.goto(f"{class_url}/causal")
    expect(teacher.get_by_role("heading", name="Causal masking").first).to_be_visible()
    for s in students:
        expect(s).to_have_url(re.compile(r"/causal\?"))
        expect(s.get_by_role("heading", name="Causal masking").first).to_be_visible()

    # Pause: every screen shows the card, then the page again.
    teacher.get_by_role("button", name="Pause", exact=True).click()
    for s in students:
        expect(s.get_by_text("Eyes on the teacher")).to_be_visible()
        expect(s.get_by_role("heading", name="Causal masking")).to_have_count(0)
    screenshot(students[0], "class_student_paused")
    teacher.get_by_role("button", name="Resume", exact=True).click()
    for s in students:
        expect(s.get_by_role("heading", name="Causal masking").first).to_be_visible()

    # Ask from the Predict page; each student answers on their own screen; reveal.
    teacher.goto(f"{class_url}/predict")
    for s in students:
        expect(s).to_have_url(re.compile(r"/predict\?"))
    teacher.get_by_role("button", name="Ask the class").click()
    teacher.get_by_role("button", name="Ask", exact=True).click()
    expect(teacher.get_by_role("button", name="Ask", exact=True)).to_have_count(0)  # asked: the popover closes
    answers = ["k_0 'east'", "k_0 'east'", "k_1 'north'"]  # puzzle 1, query 0 'east': k_0 is right
    for s, answer in zip(students, answers):
        expect(s.get_by_text("Question 1:")).to_be_visible()
        s.locator('[data-testid="stRadio"]').get_by_text(answer).click()
        s.get_by_role("button", name="Send my answer").click()
        expect(s.get_by_text("Sent:")).to_be_visible()
    expect(teacher.get_by_text("3 answered · 3 here")).to_be_visible()
    screenshot(teacher, "class_teacher_answers")
    teacher.get_by_role("button", name="Reveal the answer to the class").first.click()
    for s in students[:2]:
        expect(s.locator('[data-testid="stAlertContentSuccess"]')).to_contain_text("The answer: k_0 'east'")
    expect(students[2].locator('[data-testid="stAlertContentError"]')).to_contain_text("You said k_1 'north'")
    screenshot(students[2], "class_student_revealed")

    # Stop following: the teacher moves on without that student, who comes back with one click.
    explorer = students[0]
    explorer.get_by_role("button", name="Stop following").click()
    expect(explorer.get_by_text("exploring on your own")).to_be_visible()
    teacher.goto(f"{class_url}/heads")
    for s in students[1:]:
        expect(s).to_have_url(re.compile(r"/heads\?"))
    expect(explorer).to_have_url(re.compile(r"/predict\?"))
    explorer.get_by_role("button", name="Follow the teacher").click()
    expect(explorer).to_have_url(re.compile(r"/heads\?"))

    # The teacher's reload keeps the controls. No address holds the key, no student's page, and nothing on
    # the teacher's screen (only the script that writes the teacher's cookie has it).
    teacher.reload()
    expect(teacher.get_by_role("button", name="Gather")).to_be_visible()
    expect(teacher.get_by_text(f"Room {code}").first).to_be_visible()
    for page in [teacher, *students]:
        assert key not in page.url
    for s in students:
        assert key not in s.content()
    assert key not in teacher.locator("body").inner_text()
