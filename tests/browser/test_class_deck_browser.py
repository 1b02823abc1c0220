"""A shipped lesson run in a room, in Chromium, through deploy/ (nginx in front of two workers, as `bash
deploy/serve.sh --workers 2` starts them), issue #45.

The teacher projects a tab in presenter mode (1280x720) and starts "From a toy to a real model"; two students, one
on a phone (390x844), follow. Each step opens with its question asked; once it is
revealed, Next step moves on: twice puts both students on step 3's page with its state (/block, pre-norm); Page Down
(what a presentation clicker sends) moves on once more. The teacher's notes are never on the projected
tab, and are in a second tab of the teacher's, which does not lead. A reload of the projected tab, and then the death
of its worker (SIGKILL), keep the lesson on its step: the store holds it. Every wait is for a condition.
"""

from __future__ import annotations

import os
import re
import signal

import pytest

from tests.browser.conftest import closing_pages, environment, screenshot, wait_idle
from tests.browser.test_deploy import COLD_RUN_MS, Proxy, _worker_cookie
from tests.browser.test_lessons_browser import pick

LESSON = "From a toy to a real model"
# every address the page's history takes from now on (Streamlit's client moves by pushState and replaceState)
MOVES_SCRIPT = """() => { window.__moves = [];
  for (const name of ['pushState', 'replaceState']) {
    const original = history[name].bind(history);
    history[name] = (state, title, url) => { window.__moves.push(String(url)); return original(state, title, url); };
  } }"""
NOTES = "Your notes for this step (hidden in presenter mode)"


@pytest.fixture(scope="module")
def class_proxy(tmp_path_factory):
    """Two workers behind nginx, sharing one fresh SQLite store."""
    tmp = tmp_path_factory.mktemp("class-deck")
    with environment(ATTENTION_DB_URL=f"sqlite:///{tmp / 'class.db'}", ATTENTION_CLASS_SAFETY_S="3600"):
        proxy = Proxy(2, tmp)
    yield proxy
    proxy.stop()


def _new_page(browser, width: int, height: int):
    page = browser.new_context(viewport={"width": width, "height": height}).new_page()
    page.set_default_timeout(COLD_RUN_MS)
    return page


def test_students_at_their_own_pace_are_counted_per_step_and_brought_back(browser, class_proxy):
    """First in the module: the test after it kills a worker."""
    with closing_pages("class_deck_paced") as pages:
        _at_their_own_pace(browser, class_proxy, pages)


def _room(browser, proxy: Proxy, pages: list, query: str = ""):
    """A teacher (1280x720, on /class with `query`) starts a room; a laptop (1200x900) and a phone (390x844) join
    it by its link. Returns (teacher, code, [laptop, phone])."""
    from playwright.sync_api import expect

    expect.set_options(timeout=COLD_RUN_MS)
    teacher = _new_page(browser, 1280, 720)
    pages.append(teacher)
    teacher.goto(f"{proxy.url}/class{query}")
    teacher.get_by_role("button", name="Start a room").click()
    code_box = teacher.locator('[data-testid="class-join-code"]')
    expect(code_box).to_have_text(re.compile(r"^[A-Z0-9]{6}$"))
    code = code_box.inner_text()
    students = [_new_page(browser, 1200, 900), _new_page(browser, 390, 844)]
    pages.extend(students)
    for s in students:
        s.goto(f"{proxy.url}/?room={code}")
        expect(s.get_by_text(f"Room {code}").first).to_be_visible()
    return teacher, code, students


def _at_their_own_pace(browser, proxy: Proxy, pages: list) -> None:
    from playwright.sync_api import expect

    teacher, code, (laptop, phone) = _room(browser, proxy, pages)
    teacher.get_by_role("button", name="Start the lesson").click()  # Attention in 20 minutes, the first lesson
    expect(teacher.get_by_text("Step 1 of 10").first).to_be_visible()
    teacher.get_by_role("button", name="End question").first.click()  # not revealed: open again at their pace
    expect(teacher.get_by_role("button", name="Next step")).to_be_enabled()
    teacher.goto(f"{proxy.url}/class")
    teacher.get_by_role("button", name="Let the students go at their own pace").click()
    expect(teacher.get_by_text("At their own pace").first).to_be_visible()
    for s in (laptop, phone):
        expect(s.get_by_text("going through the lesson at your own pace").first).to_be_visible()
        expect(s.get_by_text("Question 1:").first).to_be_visible()  # step 1's question, open again for each
    laptop.locator('.st-key-class_bar [data-testid="stRadio"]').get_by_text("k_1 'east'").click()
    laptop.get_by_role("button", name="Send my answer").click()
    expect(laptop.get_by_text("Sent: k_1 'east'").first).to_be_visible()
    for n in range(2, 5):
        laptop.get_by_role("button", name="Next step").click()
        expect(laptop.get_by_text(f"Step {n} of 10").first).to_be_visible()
    expect(laptop).to_have_url(re.compile(r"/predict\?"))
    phone.get_by_role("button", name="Next step").click()
    expect(phone).to_have_url(re.compile(r"/\?tokens=up\+right\+down"))
    expect(teacher.get_by_text("step 2: 1 · step 4: 1").first).to_be_visible()  # the counts, pushed to the teacher
    expect(teacher.get_by_text("Step 1: question 1 (open)")).to_be_visible()
    screenshot(teacher, "class_paced_dashboard")
    screenshot(phone, "class_paced_phone")
    screenshot(laptop, "class_paced_laptop")
    # The teacher's own moves do not move students at their own pace: the room's view becomes /causal, and the
    # reveal after it (which the watcher pushes to the phone's bar after that move) leaves the phone on its step.
    phone.evaluate(MOVES_SCRIPT)
    teacher.goto(f"{proxy.url}/causal")
    expect(teacher.get_by_role("heading", name="Causal masking").first).to_be_visible()
    teacher.goto(f"{proxy.url}/class")
    second = teacher.locator('[data-testid="stExpander"]').filter(has_text="Step 2: question 2 (open)")
    second.get_by_text("Step 2: question 2 (open)").click()
    second.get_by_role("button", name="Reveal the answer to the class").click()
    expect(phone.get_by_text("The answer: 0.1").first).to_be_visible()  # about 0.19, the note's number
    expect(phone).to_have_url(re.compile(r"/\?tokens=up\+right\+down"))
    assert not [url for url in phone.evaluate("() => window.__moves") if "causal" in url], "not even for a moment"
    teacher.get_by_role("button", name="Bring everyone", exact=True).click()  # to step 1, the class's
    for s in (laptop, phone):
        expect(s.get_by_text("following the teacher").first).to_be_visible()
        expect(s).to_have_url(re.compile(r"/\?tokens=north\+east\+south\+west"))
        expect(s.get_by_text("Question 1:").first).to_be_visible()
    # the answer given at its own pace counts, and is final: the laptop went on past step 1, whose answer step 2 shows
    expect(laptop.get_by_text("your answer is final: you sent k_1 'east'").first).to_be_visible()


def test_a_shipped_lesson_moves_the_class_step_by_step_and_survives_a_reload_and_a_dead_worker(browser, class_proxy):
    with closing_pages("class_deck") as pages:
        _run_the_lesson(browser, class_proxy, pages)


def _run_the_lesson(browser, proxy: Proxy, pages: list) -> None:
    from playwright.sync_api import expect

    teacher, code, students = _room(browser, proxy, pages, "?present=1")
    pick(teacher, "Lesson", LESSON)
    expect(teacher.get_by_text("9 steps, 4 of them with a question")).to_be_visible()
    teacher.get_by_role("button", name="Start the lesson").click()
    expect(teacher.get_by_text("Step 1 of 9").first).to_be_visible()
    expect(teacher.get_by_role("heading", name="The transformer block").first).to_be_visible()  # the page, drawn
    expect(teacher).to_have_url(re.compile(r"/block\?"))
    expect(teacher.get_by_text(NOTES)).to_have_count(0)  # the projected tab: presenter mode
    for s in students:
        expect(s).to_have_url(re.compile(r"/block\?"))
        expect(s.get_by_text("Question 1:").first).to_be_visible()  # the step's question, asked with it

    _reveal_and(teacher, "Next step")
    expect(teacher.get_by_text("Step 2 of 9").first).to_be_visible()
    expect(teacher.get_by_role("heading", name="The transformer block").first).to_be_visible()
    teacher.get_by_role("button", name="Next step").click()  # step 2 asks nothing: Next at once
    expect(teacher.get_by_text("Step 3 of 9 · Pre-norm").first).to_be_visible()
    expect(teacher.get_by_role("heading", name="The transformer block").first).to_be_visible()
    for s in students:
        expect(s).to_have_url(re.compile(r"/block\?.*norm=pre"))
        expect(s.get_by_role("heading", name="The transformer block").first).to_be_visible()
    # the step opened without ?present=1 in its link: the projector's sidebar stays closed all the same
    expect(teacher.locator('[data-testid="stSidebarNav"]')).not_to_be_in_viewport()

    # The notes, in a second tab of the teacher's (the same browser, so the same teacher): it does not lead.
    notes = teacher.context.new_page()
    notes.set_default_timeout(COLD_RUN_MS)
    pages.append(notes)
    notes.goto(f"{proxy.url}/class")
    expect(notes.get_by_text("Step 3 of 9").first).to_be_visible()
    notes.get_by_text(NOTES).click()
    expect(notes.get_by_text("Pre-norm puts the layer norm before attention")).to_be_visible()
    expect(notes.get_by_text("another tab leads").first).to_be_visible()
    expect(teacher.get_by_text("Pre-norm puts the layer norm")).to_have_count(0)
    notes.close()  # (open, it would take the class's lead when the projected tab's worker dies, as any tab would)

    # Page Down, as a clicker sends it, on the projected tab
    teacher.bring_to_front()
    expect(teacher.get_by_role("button", name="Next step")).to_be_enabled()  # step 3 asks nothing
    teacher.keyboard.press("PageDown")
    expect(teacher.get_by_text("Step 4 of 9 · Copying works").first).to_be_visible()
    expect(teacher.get_by_role("heading", name="Watch an induction head form").first).to_be_visible()
    for s in students:
        expect(s).to_have_url(re.compile(r"/induction\?"))

    # A reload of the projected tab, then the death of its worker: the lesson stays on its step.
    teacher.reload()
    expect(teacher.get_by_text("Step 4 of 9").first).to_be_visible()
    victim = _worker_cookie(teacher.context)
    os.kill(proxy.worker_pid(int(victim)), signal.SIGKILL)
    teacher.wait_for_function("() => (window.__attnReconnectReruns || 0) > 0")
    expect(teacher.get_by_text("Step 4 of 9 · Copying works").first).to_be_visible()
    # The reconnect's own rerun settles first: a Reveal clicked while it ran was lost once in five runs beside a
    # CPU hog (the question stayed open; a second click reveals it). Known, not yet explained: see the closing note.
    wait_idle(teacher)
    _reveal_and(teacher, "Previous step")
    expect(teacher.get_by_text("Step 3 of 9").first).to_be_visible()
    for s in students:
        expect(s).to_have_url(re.compile(r"/block\?.*norm=pre"))


def _reveal_and(teacher, button: str) -> None:
    """Reveal the open question (the step opened with it), then press `button` once it can be pressed."""
    from playwright.sync_api import expect

    teacher.get_by_role("button", name="Reveal the answer to the class").first.click()
    expect(teacher.get_by_role("button", name=button)).to_be_enabled()
    teacher.get_by_role("button", name=button).click()
