"""Several machines behind one front, sharing one PostgreSQL (issue #49): two deployments of deploy/serve.py,
each with its own nginx and worker, listening on 127.0.0.2 and 127.0.0.3 as two hosts would, behind
deploy/front.py's nginx (sticky by its `attn_host` cookie), and one real PostgreSQL (harness/postgres.py).

Browser-less sessions (harness/protocol.py) speak Streamlit's protocol through the front, keep the cookies a
browser keeps (the front's, and the class cookie the app's script writes), and reconnect as Streamlit's client
does. A teacher starts a room on one host; students on both hosts join. The teacher's move reaches the students
of the other host within 2 s (its watcher hears the write through LISTEN/NOTIFY, not at a look); they answer.
Then the teacher's whole host is killed mid-question: its sessions come back through the front on the other
host as the same teacher and students, no answer is lost or counted twice, the student who had not answered
answers there, and the class follows the teacher's next move. Every wait is for a condition.
"""

from __future__ import annotations

import asyncio
import re
import time

import pytest

from harness.hosts import start_hosts
from harness.load.sessions import TEACHER_COOKIE
from harness.postgres import Postgres
from harness.protocol import ProtocolSession
from tests.browser.conftest import browser_required, run_async

STUDENT_COOKIE = re.compile(r"attention_class=(s\.[A-Z0-9]{6}\.[A-Za-z0-9_-]+);")
FOLLOW_S = 2.0  # the target: the teacher's move reaches the other host's students within 2 s


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    import shutil

    if shutil.which("nginx") is None:
        message = "nginx is not installed (scripts/test.sh installs Debian's nginx)"
        pytest.fail(message) if browser_required() else pytest.skip(message)
    tmp = tmp_path_factory.mktemp("hosts")
    db = Postgres()
    url = db.new_database()
    try:
        # the bars' safety timer at an hour: a student who follows within the waits was pushed by a watcher
        running = start_hosts(tmp, {"ATTENTION_DB_URL": url, "ATTENTION_CLASS_SAFETY_S": "3600"})
        yield running, url
        running.stop()
    finally:
        db.stop()


def _warm(url: str) -> None:
    """Each host's worker imports and runs the pages the class will visit (a first run imports for seconds)."""

    async def visit():
        for _ in range(4):  # least_conn spreads new sessions over both hosts
            s = ProtocolSession(url)
            await s.connect()
            for path in ("", "causal", "heads"):
                await s.open(path)
            await s.close()

    run_async(visit())


async def _drain(*sessions) -> None:
    """Read the runs the server pushed to `sessions` until none comes (a browser draws every one: a reader that
    stops reading would also stop seeing its connection close)."""
    for s in sessions:
        while (run := await s.pushed(timeout=0.5)) is not None and not run.status.startswith("closed"):
            pass


async def _follow(students, move):
    """Run `move()` (the teacher's), and time each student's pushed run from then to its end: {name: (s, run)}."""
    t0 = time.perf_counter()

    async def one(s):
        run = await s.pushed(timeout=60)
        return time.perf_counter() - t0, run

    waits = [asyncio.ensure_future(one(s)) for s in students]
    await asyncio.sleep(0)
    await move()
    return await asyncio.gather(*waits)


def test_a_class_on_two_hosts_follows_across_them_and_survives_losing_one(hosts):
    from classroom.store import open_store

    running, db_url = hosts
    front = running.front
    _warm(front)
    store = open_store(db_url)  # read the room as any host does

    async def scenario():
        teacher = ProtocolSession(front, reconnect=True)
        await teacher.connect("class")
        await teacher.open("class")
        started = await teacher.click("Start a room")
        code, key = next(m.groups() for x in started.scripts if (m := TEACHER_COOKIE.search(x)))
        teacher.cookies["attention_class"] = f"t.{code}.{key}"  # what the page's script writes in a browser
        teacher_host = teacher.cookies["attn_host"]
        students = []
        for _ in range(4):
            s = ProtocolSession(front, reconnect=True)
            await s.connect()
            joined = await s.open("", f"room={code}")
            assert joined.status == "FINISHED_SUCCESSFULLY" and not joined.exceptions, joined
            s.cookies["attention_class"] = next(m.group(1) for x in joined.scripts if (m := STUDENT_COOKIE.search(x)))
            students.append(s)
        host_of = {id(s): s.cookies["attn_host"] for s in students}
        here = [s for s in students if host_of[id(s)] == teacher_host]
        there = [s for s in students if host_of[id(s)] != teacher_host]
        assert here and there, f"least_conn put every student on one host: {host_of}"

        # 1. the teacher's move, across hosts
        await _drain(teacher, *students)
        followed = await _follow(students, lambda: teacher.goto("causal"))
        for s, (_took, run) in zip(students, followed):
            assert run is not None and run.status == "FINISHED_SUCCESSFULLY" and run.h1 == "Causal masking", run
            assert s.page_path() == "causal"
        across = [took for s, (took, _) in zip(students, followed) if s in there]
        assert max(across) <= FOLLOW_S, f"the other host's students followed after {across} s"

        # 2. a question (asked as from any host); every student but one on the teacher's host answers
        qid = store.ask(code, key, {"kind": "choice", "prompt": "p", "options": ["a", "b"]})
        for s in students:
            assert await s.pushed(timeout=30) is not None, "the question did not reach a student"
        late = here[0]
        for i, s in enumerate(students):
            if s is not late:
                await s.select("Your answer", i % 2)
                await s.click("Send my answer")
        assert store.results(code, key, qid).answered == 3

        # 3. the teacher's whole host stops mid-question
        await _drain(teacher, *students)
        running.stop_host(int(teacher_host))
        lost = [teacher, *here]
        deadline = time.monotonic() + 90
        while any(not x.recoveries for x in lost) and time.monotonic() < deadline:
            await asyncio.gather(*(x.pushed(timeout=0.2) for x in lost if not x.recoveries))
        for x in lost:
            assert x.recoveries and x.recoveries[-1]["status"] == "FINISHED_SUCCESSFULLY", x.recoveries
            assert x.cookies["attn_host"] != teacher_host  # the front moved it to the live host
        state = store.state(code)
        assert state.seats == 4, "a student came back as a new student"
        await _drain(teacher, *students)
        await late.select("Your answer", 1)
        await late.click("Send my answer")
        results = store.results(code, key, qid)
        assert results.answered == 4 and sorted(results.values) == [0, 0, 1, 1]

        # 4. the reveal (the class stays on the question's view until then); the teacher leads from the live host,
        # and the whole class follows
        store.reveal(code, key, qid)
        await _drain(teacher, *students)
        await teacher.click("Lead from this tab")
        await _drain(teacher, *students)
        followed = await _follow(students, lambda: teacher.goto("heads"))
        for s, (_took, run) in zip(students, followed):
            assert run is not None and run.status == "FINISHED_SUCCESSFULLY", run
            assert s.page_path() == "heads"
        for x in (teacher, *students):
            await x.close()
        return across

    across = run_async(scenario(), timeout=600)
    print(f"\nthe move across hosts reached the students in {', '.join(f'{t:.2f}' for t in across)} s")
    store.engine.dispose()
