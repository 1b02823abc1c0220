"""Class mode through deploy/ (nginx in front of two workers, as `bash deploy/serve.sh --workers 2` starts them):
the worker of half the class dies in the middle of a question (issue #33's last test).

A teacher and four students, each in their own browser context (own cookies; the proxy shares their sessions out over
the two workers by open websockets). The teacher asks from the Predict page, every student but one answers, then the
worker holding the teacher and some of the students (one of whom has not answered) is killed (SIGKILL). Their
pages reconnect through the proxy to the live worker, which has never seen them: the class cookie brings each
student back into the room as the same student, and the teacher back to the controls. Every answer must still be
counted (the store, not a worker, holds them), every student must show the room bar and their own answer again,
the student who had not answered can answer, and a student who moved may still change their answer, which the
store then counts in place of the old one. Then the teacher moves on and the whole class follows, pushed by the
live worker. Both workers share one temporary SQLite store (ATTENTION_DB_URL), as deploy/serve.sh's workers share
the default file. Every wait is for a condition.
"""

from __future__ import annotations

import os
import re
import signal

import pytest

from classroom.questions import option_texts
from tests.browser.conftest import closing_pages, environment
from tests.browser.test_deploy import COLD_RUN_MS, Proxy, _worker_cookie

STUDENTS = 4
# puzzle 1 of the Predict page, query 0 'east': options every student sees (the question's keys)
ANSWERS = ["k_0 'east'", "k_1 'north'", "k_0 'east'", "k_1 'north'"]


@pytest.fixture(scope="module")
def class_proxy(tmp_path_factory):
    """Two workers behind nginx, sharing one fresh SQLite store."""
    tmp = tmp_path_factory.mktemp("class-failover")
    # the bars' safety timer set to an hour: a student who follows within the waits was pushed by a watcher
    with environment(ATTENTION_DB_URL=f"sqlite:///{tmp / 'class.db'}", ATTENTION_CLASS_SAFETY_S="3600"):
        proxy = Proxy(2, tmp)
    yield proxy, f"sqlite:///{tmp / 'class.db'}"
    proxy.stop()


def _new_page(browser, width: int = 1200):
    context = browser.new_context(viewport={"width": width, "height": 950})
    page = context.new_page()
    page.set_default_timeout(COLD_RUN_MS)
    return page


def _answer(page, text: str) -> None:
    from playwright.sync_api import expect

    page.locator('[data-testid="stRadio"]').filter(has_text="Your answer").get_by_text(text, exact=True).click()
    page.get_by_role("button", name="Send my answer").click()
    expect(page.get_by_text(f"Sent: {text}.")).to_be_visible()


def test_killing_the_worker_of_half_the_class_loses_no_answer_and_no_student(browser, class_proxy):
    proxy, db_url = class_proxy
    with closing_pages("class_failover") as pages:
        _half_the_class_loses_its_worker(browser, proxy, db_url, pages)


def _half_the_class_loses_its_worker(browser, proxy: Proxy, db_url: str, pages: list) -> None:
    from playwright.sync_api import expect

    from classroom.store import open_store

    expect.set_options(timeout=COLD_RUN_MS)  # a fresh worker's first run imports the app
    teacher = _new_page(browser, 1300)
    pages.append(teacher)
    teacher.goto(f"{proxy.url}/class")
    teacher.get_by_role("button", name="Start a room").click()
    code_box = teacher.locator('[data-testid="class-join-code"]')
    expect(code_box).to_have_text(re.compile(r"^[A-Z0-9]{6}$"))
    code = code_box.inner_text()
    key = next(c["value"] for c in teacher.context.cookies() if c["name"] == "attention_class").split(".")[2]

    students = [_new_page(browser) for _ in range(STUDENTS)]
    pages.extend(students)
    # The proxy shares new sessions out by their open websockets (deploy/nginx.conf.template): opened one after
    # another, the class and its teacher split over both workers.
    for s in students:
        s.goto(f"{proxy.url}/?room={code}")
        expect(s.get_by_text(f"Room {code}").first).to_be_visible()
    expect(teacher.get_by_text(f"Room {code} · {STUDENTS} here").first).to_be_visible()

    teacher.goto(f"{proxy.url}/predict")
    for s in students:
        expect(s).to_have_url(re.compile(r"/predict\?"))
    teacher.get_by_role("button", name="Ask the class").click()
    teacher.get_by_role("button", name="Ask", exact=True).click()
    # The teacher's worker dies, with the students it holds: the proxy's cookie says which worker each browser's
    # session lives on. The controls must survive the loss of a worker, and so must those students.
    workers = [_worker_cookie(s.context) for s in students]
    victim = _worker_cookie(teacher.context)
    moved = [s for s, w in zip(students, workers, strict=True) if w == victim]
    stayed = [s for s, w in zip(students, workers, strict=True) if w != victim]
    assert moved and stayed, f"the proxy did not share the class out: teacher {victim}, students {workers}"
    late = moved[-1]  # one student of that half has not answered yet when the worker dies

    for s, answer in zip(students, ANSWERS, strict=True):
        expect(s.get_by_text("Question 1:")).to_be_visible()
        if s is not late:
            _answer(s, answer)
    expect(teacher.get_by_text(f"{STUDENTS - 1} answered · {STUDENTS} here")).to_be_visible()
    os.kill(proxy.worker_pid(int(victim)), signal.SIGKILL)

    # Each moved page reconnects through the proxy to the live worker and reruns there (ui/reconnect.py).
    teacher.wait_for_function("() => (window.__attnReconnectReruns || 0) > 0")
    expect(teacher.get_by_role("button", name="Gather")).to_be_visible()  # the teacher's controls are back
    assert _worker_cookie(teacher.context) != victim
    for s in moved:
        s.wait_for_function("() => (window.__attnReconnectReruns || 0) > 0")
        expect(s.get_by_text(f"Room {code}").first).to_be_visible()
        assert _worker_cookie(s.context) != victim
    # Every student is back in the room, following, with their own answer shown again; the late one answers now.
    for s, answer in zip(students, ANSWERS, strict=True):
        expect(s.get_by_text(f"Room {code} (anonymous) · following the teacher").first).to_be_visible()
        expect(s.get_by_text("Question 1:")).to_be_visible()
        if s is late:
            expect(s.get_by_text("Sent:")).to_have_count(0)
            _answer(s, answer)
        expect(s.get_by_text(f"Sent: {answer}.")).to_be_visible()
    store = open_store(db_url)
    qid = store.state(code).question.id
    res = store.results(code, key, qid)
    assert (res.seats, res.answered) == (STUDENTS, STUDENTS)  # nobody joined twice, no answer lost
    labels = option_texts(res.question.body)  # the options as an English screen reads them
    assert sorted(res.values) == sorted(labels.index(a) for a in ANSWERS)

    # A student whose worker died can still change their answer: the new one replaces the old, once.
    mover = moved[0]
    changed = next(label for label in labels if label != ANSWERS[students.index(mover)])
    _answer(mover, changed)
    now = [changed if s is mover else a for s, a in zip(students, ANSWERS, strict=True)]
    res = store.results(code, key, qid)
    assert res.answered == STUDENTS and sorted(res.values) == sorted(labels.index(a) for a in now)
    # The teacher's screen still counts every student once.
    expect(teacher.get_by_text(f"{STUDENTS} answered · {STUDENTS} here")).to_be_visible()

    # The class still follows the teacher: the students who came to the live worker are in its watcher, which
    # pushes the teacher's next move to them as to the others (once the question is revealed: until then the class
    # stays on the page it was asked on).
    teacher.get_by_role("button", name="Reveal the answer to the class").first.click()
    for s in students:
        expect(s.get_by_text("The answer:").first).to_be_visible()
    teacher.goto(f"{proxy.url}/causal")
    expect(teacher.get_by_role("heading", name="Causal masking").first).to_be_visible()
    for s in students:
        expect(s).to_have_url(re.compile(r"/causal\?"))
        expect(s.get_by_role("heading", name="Causal masking").first).to_be_visible()
