"""A lesson a teacher can trust, in Chromium (issue #44): an open question's answer is on no student's screen nor
on the projected tab until the reveal, one of the teacher's tabs leads, a link that cannot join keeps saying why,
and the student link names an address the students' laptops can open.

Each person is a browser context (own cookies); a teacher's second tab is a second page of the teacher's context.
Every wait is for a condition (Playwright's expect), except the one that is the claim itself: the join card still
there five seconds later.
"""

from __future__ import annotations

import re

import pytest

from tests.browser.conftest import class_server, closing_pages, screenshot
from tests.i18n_helpers import english_left
from ui.student_link import lan_ip

WAIT = 60_000


@pytest.fixture(scope="module")
def lesson_url():
    with class_server() as url:
        yield url


def new_page(browser, context=None, width: int = 1280, height: int = 900):
    context = context or browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(WAIT)
    return page


def idle(page) -> None:
    from playwright.sync_api import expect

    expect(page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]')).to_have_count(1)


def start_room(page, url: str) -> tuple[str, str]:
    """The teacher starts a room; its code and the student link's query (to open on this loopback server)."""
    from playwright.sync_api import expect

    page.goto(f"{url}/class")
    page.get_by_role("button", name="Start a room").click()
    code_box = page.locator('[data-testid="class-join-code"]')
    expect(code_box).to_have_text(re.compile(r"^[A-Z0-9]{6}$"))
    shown = page.locator('[data-testid="class-student-link"]').inner_text()
    return code_box.inner_text(), shown.partition("?")[2]


def room_with_student(browser, url: str, pages: list):
    """A teacher's page with a room started, and a student's page in it by the student link: (teacher, student,
    code)."""
    from playwright.sync_api import expect

    teacher = new_page(browser)
    pages.append(teacher)
    code, query = start_room(teacher, url)
    student = new_page(browser, width=1100)
    pages.append(student)
    student.goto(f"{url}/?{query}")
    expect(student.get_by_text(f"Room {code}").first).to_be_visible()
    return teacher, student, code


def test_nothing_on_a_students_screen_nor_the_projected_tab_shows_an_open_questions_answer(browser, lesson_url):
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT)
    with closing_pages("class_hidden_answer") as pages:
        teacher, student, _ = room_with_student(browser, lesson_url, pages)
        teacher.goto(f"{lesson_url}/")
        expect(student.get_by_role("heading", name="Attention playground")).to_be_visible()
        teacher.get_by_role("button", name="Ask the class").click()
        teacher.get_by_text("What weight will a query give a key?").click()
        teacher.get_by_role("button", name="Ask", exact=True).click()  # query 0, key 0: the default choices
        expect(teacher.get_by_role("button", name="Ask", exact=True)).to_have_count(0)
        for page in (student, teacher):
            expect(page.get_by_text("Question 1:").first).to_be_visible()
            expect(page.get_by_text("what weight will query 0 'north' give key 0 'north'?").first).to_be_visible()
            idle(page)
            cells = page.locator('[data-testid="stPlotlyChart"] g.heatmap-label text')
            # rows 0 and 1 of the 4 x 4 heatmap: query 1 'east' has query 0's vector (it also looks north)
            expect(cells.filter(has_text=re.compile(r"^\?$"))).to_have_count(8)
            expect(page.get_by_role("switch", name="Causal mask")).to_be_disabled()
        # the student may not leave the question's page
        expect(student.get_by_role("button", name="Stop following")).to_be_disabled()
        teacher.get_by_role("button", name="Reveal the answer to the class").first.click()
        for page in (student, teacher):
            cells = page.locator('[data-testid="stPlotlyChart"] g.heatmap-label text')
            expect(cells.filter(has_text=re.compile(r"^\?$"))).to_have_count(0)
            expect(page.get_by_role("switch", name="Causal mask")).to_be_enabled()
        expect(student.get_by_text("The answer:").first).to_be_visible()


def test_one_of_the_teachers_tabs_leads_and_a_reload_of_it_keeps_the_lead(browser, lesson_url):
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT)
    with closing_pages("class_leading_tab") as pages:
        projector, student, _ = room_with_student(browser, lesson_url, pages)
        laptop = new_page(browser, context=projector.context)  # the teacher's second tab: same cookie
        laptop.goto(f"{lesson_url}/causal")
        expect(laptop.get_by_text("another tab leads").first).to_be_visible()
        idle(student)
        expect(student.get_by_role("heading", name="Attention playground")).to_be_visible()  # did not move
        projector.goto(f"{lesson_url}/heads")
        expect(projector.get_by_text("the class follows this tab").first).to_be_visible()
        expect(student).to_have_url(re.compile(r"/heads\?"))
        projector.reload()  # the projected tab reloaded: a new session, which leads again (the old one has gone)
        expect(projector.get_by_text("the class follows this tab").first).to_be_visible()
        laptop.get_by_role("button", name="Lead from this tab").click()
        expect(laptop.get_by_text("the class follows this tab").first).to_be_visible()
        expect(student).to_have_url(re.compile(r"/causal\?"))
        expect(projector.get_by_text("another tab leads").first).to_be_visible()  # pushed to the other tab


def test_a_link_that_cannot_join_keeps_saying_why(browser, lesson_url):
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT)
    with closing_pages("class_join_card") as pages:
        teacher = new_page(browser)
        pages.append(teacher)
        code, _ = start_room(teacher, lesson_url)
        lost = new_page(browser, width=1000)
        pages.append(lost)
        lost.goto(f"{lesson_url}/?room=ZZZZZZ")
        card = lost.locator(".st-key-class_join_card")
        expect(card).to_contain_text("Could not join room ZZZZZZ")
        expect(lost.locator('[data-testid="stDataFrame"]').first).to_be_visible()  # the grid's run came after
        idle(lost)
        lost.wait_for_timeout(5000)  # the claim itself: five seconds later the student still reads why
        expect(card).to_contain_text("Could not join room ZZZZZZ")
        card.get_by_role("textbox", name="Room code").fill(code.lower())
        card.get_by_role("button", name="Join").click()
        expect(lost.get_by_text(f"Room {code}").first).to_be_visible()
        expect(lost.locator(".st-key-class_join_card")).to_have_count(0)


def test_the_student_link_names_an_address_the_students_can_open(browser, lesson_url):
    """Served on every interface, a teacher on localhost projects this machine's network address (checked without
    opening it); served on loopback only (lesson_url's server), the page says the students cannot reach it."""
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT)
    with class_server("--server.address", "0.0.0.0") as url:
        port = url.rsplit(":", 1)[1]
        with closing_pages("class_student_link") as pages:
            teacher = new_page(browser)
            pages.append(teacher)
            code, _ = start_room(teacher, f"http://localhost:{port}")
            shown = teacher.locator('[data-testid="class-student-link"]').inner_text()
            lan = lan_ip()
            if lan is None:
                assert shown.startswith(f"http://localhost:{port}/?room={code}")
                expect(teacher.get_by_text("each student's own laptop").first).to_be_visible()
            else:
                assert shown.startswith(f"http://{lan}:{port}/?room={code}&join=")
                expect(teacher.get_by_text(f"This computer's network address ({lan})").first).to_be_visible()
                expect(teacher.get_by_text("listens on this computer only")).to_have_count(0)
            local = new_page(browser)
            pages.append(local)
            start_room(local, lesson_url)
            expect(local.get_by_text("listens on this computer only").first).to_be_visible()


def test_a_spanish_teacher_and_a_chinese_student_read_class_mode_in_their_own_languages(browser, lesson_url):
    """Issue #48: the room's view carries no language; each screen reads class mode in its own, nothing of ours
    left in English (the teacher's controls and the student's room bar)."""
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT)
    with closing_pages("class_languages") as pages:
        teacher = new_page(browser)
        pages.append(teacher)
        teacher.goto(f"{lesson_url}/class?lang=es")
        teacher.locator(".st-key-class_start button").click()
        code_box = teacher.locator('[data-testid="class-join-code"]')
        expect(code_box).to_have_text(re.compile(r"^[A-Z0-9]{6}$"))
        code, query = code_box.inner_text(), teacher.locator('[data-testid="class-student-link"]').inner_text()
        assert "lang=" not in query  # the student link carries no language: each student reads their own
        idle(teacher)
        assert english_left(teacher.locator("body").inner_text(), "es") == []
        student = new_page(browser, context=browser.new_context(viewport={"width": 390, "height": 844}))
        pages.append(student)
        student.goto(f"{lesson_url}/?{query.partition('?')[2]}&lang=zh_Hans")
        expect(student.get_by_text(code).first).to_be_visible()
        idle(student)
        assert english_left(student.locator("body").inner_text(), "zh_Hans") == []
        screenshot(teacher, "class_teacher_es")
        screenshot(student, "class_student_zh_Hans_phone")
