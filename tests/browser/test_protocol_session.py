"""The load test's browser-less client (harness/protocol.py) against the real server.

It must do what a browser does, or the load test's figures for 30 sessions measure something else:
open a page, change a widget (the app then runs with the new value: it writes it into the URL), go to
every other page, and report exceptions. Uses the browser tests' server, no browser.
"""

from __future__ import annotations

import asyncio
from urllib.parse import parse_qs

from harness.load.plan import PAGES
from harness.protocol import ProtocolSession
from tests.browser.conftest import run_async

# The h1 of each page, as a reader sees it first.
TITLES = {
    "playground": "Attention playground",
    "predict": "Predict, then check",
    "causal": "Causal masking",
    "pitfalls": "Pitfalls",
    "heads": "Multi-head attention",
    "positions": "Where is position?",
    "block": "The transformer block",
    "pretrained": "A real pretrained model",
    "pretrained_deeper": "The real model, read deeper",
    "scaling": "Why divide by √d_k",
    "induction": "Watch an induction head form",
    "generation": "Generation and the KV cache",
}


def test_protocol_session_opens_toggles_and_sends_state_back(app_url):
    async def scenario():
        s = ProtocolSession(app_url)
        await s.connect()
        try:
            opened = await s.open("")
            first = parse_qs(s.query_string)
            toggled, was, now = await s.toggle("Causal mask")
            after = parse_qs(s.query_string)
            again, _, back = await s.toggle("Causal mask")
            return opened, first, (toggled, was, now), after, (again, back), parse_qs(s.query_string)
        finally:
            await s.close()

    opened, first, (toggled, was, now), after, (again, back), last = run_async(scenario())
    assert opened.status == "FINISHED_SUCCESSFULLY" and not opened.exceptions
    assert opened.h1 == TITLES["playground"]
    assert first["causal"] == ["0"]
    assert toggled.status == "FINISHED_SUCCESSFULLY" and (was, now) == (False, True)
    assert after["causal"] == ["1"]  # the server ran the page with the new value
    assert after["q"] == first["q"]  # and kept the rest of the state, sent back with the query string
    assert again.status == "FINISHED_SUCCESSFULLY" and back is False and last["causal"] == ["0"]


def test_it_answers_the_playgrounds_signal_with_the_message_a_browser_sends(app_url, browser):
    # ui/after_charts.py: a first visit draws a box where the grid goes, and the page's script asks for the run
    # that draws the grid once the charts are drawn. A browser-less session must ask for that run too, or a load
    # test's students cost one run fewer, and a lighter one, than a class of browsers.
    from streamlit.proto.BackMsg_pb2 import BackMsg

    sent: list[bytes] = []
    context = browser.new_context()
    try:
        page = context.new_page()
        page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(payload)))
        page.goto(app_url)
        page.wait_for_selector('[data-testid="stDataFrame"]', timeout=60_000)  # the grid: the signal has gone
    finally:
        context.close()
    by_browser = []
    for raw in sent:
        msg = BackMsg()
        msg.ParseFromString(raw if isinstance(raw, bytes) else raw.encode())
        states = msg.rerun_script.widget_states.widgets
        by_browser += [(w.id, w.json_trigger_value) for w in states if w.WhichOneof("value") == "json_trigger_value"]

    async def scenario():
        s = ProtocolSession(app_url)
        await s.connect()
        try:
            opened = await s.open("")
            await s.goto(PAGES["predict"])
            back = await s.goto("")  # a whole run of the Playground again, in the same session
            return opened, back, [(w.id, w.json_trigger_value) for w in s.signals(opened.signals)]
        finally:
            await s.close()

    opened, back, by_client = run_async(scenario())
    assert len(by_browser) == 1 and by_browser == by_client  # the same widget, the same event
    assert opened.status == "FINISHED_SUCCESSFULLY" and not opened.exceptions and opened.h1 == TITLES["playground"]
    assert len(opened.signals) == 1 and not opened.waiting  # answered once, within open()
    assert back.status == "FINISHED_SUCCESSFULLY" and back.h1 == TITLES["playground"]
    assert back.signals == [] and not back.waiting  # the session has had its grid: no box, no signal again


def test_protocol_session_visits_every_page_without_an_exception(app_url):
    async def scenario():
        s = ProtocolSession(app_url)
        await s.connect()
        try:
            runs = {"playground": await s.open("")}
            for name, path in PAGES.items():
                if name != "playground":
                    runs[name] = await s.goto(path)
            with_slider = await s.goto(PAGES["scaling"])
            slid = await s.slide("keys per query", 1)
            return runs, parse_qs(s.query_string), slid, with_slider
        finally:
            await s.close()

    runs, query, slid, _ = run_async(scenario())
    for name, run in runs.items():
        assert run.status == "FINISHED_SUCCESSFULLY", name
        assert not run.exceptions, (name, run.exceptions)
        assert run.h1 == TITLES[name]
    assert slid.status == "FINISHED_SUCCESSFULLY" and query["keys"] == ["9"]  # 8 keys by default, one step right


def test_a_reconnecting_browsers_widget_values_win_over_the_link_on_its_first_run(app_url):
    """A browser whose worker died reconnects to another: its first run there carries its widgets' values,
    one of them possibly a click made as it reconnected, while the link still holds the view from before.
    The click must not be dropped (the load test's failover run saw one dropped)."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    async def scenario():
        before = ProtocolSession(app_url)
        await before.connect()
        try:
            await before.open("")
            link = before.query_string  # causal=0
            causal_id = before.widgets["Causal mask"].id
        finally:
            await before.close()
        results = {}
        for sent in (False, True):
            s = ProtocolSession(app_url)  # a new session on the server, as on a live worker after the kill
            await s.connect()
            try:
                if sent:
                    s.states = {causal_id: WidgetState(id=causal_id, bool_value=True)}  # the click
                run = await s.open("", query_string=link)
                results[sent] = run, parse_qs(link), parse_qs(s.query_string)
            finally:
                await s.close()
        return results

    results = run_async(scenario())
    run, link, fresh = results[False]
    assert run.status == "FINISHED_SUCCESSFULLY" and link["causal"] == ["0"] and fresh["causal"] == ["0"]
    run, _, reconnected = results[True]
    assert run.status == "FINISHED_SUCCESSFULLY" and not run.exceptions
    assert reconnected["causal"] == ["1"]  # the browser's toggle, not the link's old value
    assert reconnected["q"] == link["q"]  # the rest of the view still comes from the link


def test_a_value_the_app_set_is_sent_again_until_the_browser_reports_it(app_url):
    """The Playground's number boxes get their text from the app (session state). A browser that clicked before it
    drew the first run (the teacher opening "Ask the class" as the page arrives) has none of them: the next run must
    send each value again, or the browser mounts the boxes empty and sends the empty texts back (seen on the
    projector: every box empty, tokens t0..t3). A box the browser reports is sent nothing, so typing in it is
    never overwritten (ui/streamlit_internals/widget_sync.py)."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    async def scenario():
        s = ProtocolSession(app_url)
        await s.connect()
        try:
            first = await s.open("")
            unseen = await s._rerun()  # this client reports no text box: it has drawn none
            box_id, _ = unseen.text_boxes["Preset seed"]
            s.states = {box_id: WidgetState(id=box_id, string_value="0")}  # now it has drawn the seed box
            seen = await s._rerun()
            return first, unseen, seen
        finally:
            await s.close()

    first, unseen, seen = run_async(scenario())
    assert first.status == unseen.status == "FINISHED_SUCCESSFULLY" and not first.exceptions
    assert unseen.status == "FINISHED_SUCCESSFULLY" and not unseen.exceptions
    assert unseen.text_boxes["Preset seed"][1] == "0" and unseen.text_boxes["d_k"][1] == "2"  # sent again
    assert seen.text_boxes["Preset seed"][1] is None  # reported: left as the browser has it
    assert seen.text_boxes["d_k"][1] == "2"  # still unreported: still sent


def test_a_widget_inside_a_section_reruns_that_section_alone_as_the_browser_asks(app_url):
    """The position page's shuffle and padding switch sit in sections (ui.page_state.section, st.fragment):
    the client names the widget's fragment as the browser does, the server then sends only that section,
    and the link still gets the page's whole state. A widget outside every section reruns the whole page."""

    async def scenario():
        s = ProtocolSession(app_url)
        await s.connect("positions")
        try:
            full = await s.open("positions", query_string="shuffle=1")
            shuffled = await s.click("Shuffle the words")
            after_shuffle = parse_qs(s.query_string)
            padded, was, now = await s.toggle("Causal mask too")
            after_padding = parse_qs(s.query_string)
            whole = await s.slide("Layers L", 1)  # the sliding window's: in no section (the padding reads it)
            return full, shuffled, after_shuffle, (padded, was, now), after_padding, whole, parse_qs(s.query_string)
        finally:
            await s.close()

    full, shuffled, after_shuffle, (padded, was, now), after_padding, whole, last = run_async(scenario())
    assert full.status == "FINISHED_SUCCESSFULLY" and not full.fragment and full.h1 == TITLES["positions"]
    assert shuffled.status == "FINISHED_SUCCESSFULLY" and not shuffled.exceptions and shuffled.fragment
    assert shuffled.messages < full.messages / 2  # the other sections were not sent again
    assert after_shuffle["shuffle"] == ["2"] and after_shuffle["text"]  # the whole state, in the link
    assert padded.fragment and not padded.exceptions and (was, now) == (False, True)
    assert padded.messages < shuffled.messages
    assert after_padding["pad_causal"] == ["1"] and after_padding["shuffle"] == ["2"]
    assert whole.status == "FINISHED_SUCCESSFULLY" and not whole.fragment and whole.h1 == TITLES["positions"]
    assert last["pad_causal"] == ["1"] and last["shuffle"] == ["2"]  # a full run keeps what the sections set


def test_a_server_started_for_a_benchmark_reports_each_runs_time_on_its_output(monkeypatch):
    """The load test counts script runs (CPU per run, runs per second) from the server's output: with a pipe
    asked for, start_server hands it over (it once went to a file only, and the load test counted 0 runs)."""
    from harness.servers import serve_reading_output, start_server

    monkeypatch.setenv("ATTENTION_LOG_RUN_MS", "1")
    proc, url = serve_reading_output(start_server, None, ())
    try:

        async def scenario():
            s = ProtocolSession(url)
            await s.connect()
            try:
                await s.open("")
                await s.toggle("Causal mask")
            finally:
                await s.close()

        run_async(scenario())
        proc.terminate()
        said = proc.stdout.read().decode(errors="replace")
    finally:
        proc.kill()
        proc.wait(timeout=10)
    times = [float(line[len("run_ms=") :]) for line in said.splitlines() if line.startswith("run_ms=")]
    assert len(times) >= 2 and all(t > 0 for t in times), said[-2000:]


def test_a_browserless_student_follows_the_teacher_and_answers_as_a_browser_does(monkeypatch, tmp_path):
    """The class-mode load test's students (bench/load/classroom.py): joined by the student link, the server
    runs the teacher's new view in the student's session when the teacher moves (ui/classroom_push.py; the client
    sends nothing): the new page, with the view's state, and the view's link sent to the client; a question
    reruns the bar alone; and a radio answer reaches the store once, changed in place."""
    from classroom.store import open_store
    from harness.load.sessions import MOVE_URL
    from harness.servers import start_server

    db = f"sqlite:///{tmp_path / 'class.db'}"
    monkeypatch.setenv("ATTENTION_DB_URL", db)
    proc, url = start_server()
    store = open_store(db)
    room = store.create_room()
    try:

        async def scenario():
            s = ProtocolSession(url)
            await s.connect()
            try:
                joined = await s.open("", f"room={room.code}")
                timers = dict(s.auto_reruns)
                quiet = await s.pushed(timeout=3)  # nothing changed: nothing pushed
                store.lead(room.code, room.teacher_key, "/causal?t=1&seed=3")  # as a teacher on another worker would
                moved = await s.pushed(timeout=60)
                path_after, query_after = s.page_path(), s.query_string
                qid = store.ask(room.code, room.teacher_key, {"kind": "choice", "prompt": "p", "options": ["a", "b"]})
                asked = await s.pushed(timeout=60)
                await s.select("Your answer", 1)
                await s.click("Send my answer")
                first = store.results(room.code, room.teacher_key, qid)
                await s.select("Your answer", 0)
                await s.click("Send my answer")
                return (
                    joined,
                    timers,
                    quiet,
                    asked,
                    moved,
                    path_after,
                    query_after,
                    first,
                    store.results(room.code, room.teacher_key, qid),
                )
            finally:
                await s.close()

        joined, timers, quiet, asked, moved, path_after, query_after, first, last = run_async(scenario())
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert joined.status == "FINISHED_SUCCESSFULLY" and not joined.exceptions
    assert store.state(room.code).seats == 1
    assert timers == {}  # a screen the watcher holds has no timer (ui/classroom_session.pushed_or_timed): it is pushed
    assert quiet is None
    assert moved is not None and not moved.fragment and moved.status == "FINISHED_SUCCESSFULLY"  # the page, whole
    assert moved.h1 == TITLES["causal"] and path_after == "causal"
    assert not [x for x in moved.scripts if MOVE_URL.search(x)], "no move script: the server moved the page"
    assert {"t=1", "seed=3"} <= set(query_after.split("&"))  # the view's state, in the link the client was sent
    assert asked is not None and asked.fragment  # the bar alone; its answer box took the answers below
    assert (first.answered, first.values) == (1, [1])
    assert (last.answered, last.values) == (1, [0])  # changed in place: still one answer


def test_a_browserless_teacher_opens_the_ask_popover_and_asks(monkeypatch, tmp_path):
    """The class-mode load test's teacher (bench/load/classroom.py): the Ask popover's controls are drawn only
    while it is open, so the client opens it first, as a browser's click does (a rerun with its open state)."""
    from classroom.store import open_store
    from harness.load.sessions import TEACHER_COOKIE
    from harness.servers import start_server

    db = f"sqlite:///{tmp_path / 'class.db'}"
    monkeypatch.setenv("ATTENTION_DB_URL", db)
    proc, url = start_server()
    try:

        async def scenario():
            s = ProtocolSession(url)
            await s.connect("class")
            try:
                await s.open("class")
                started = await s.click("Start a room")
                playground = await s.goto("")
                closed = sorted(s.widgets)
                opened = await s.open_popover("Ask the class")
                opened_widgets = sorted(s.widgets)
                asked = await s.click("Ask")
                return started, playground, closed, opened, opened_widgets, asked, sorted(s.widgets)
            finally:
                await s.close()

        started, playground, closed, opened, opened_widgets, asked, after = run_async(scenario())
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    for run in (started, playground, opened, asked):
        assert run.status == "FINISHED_SUCCESSFULLY" and not run.exceptions and not run.errors
    assert "Ask the class" in closed and "Ask" not in closed  # closed: the popover's button alone
    assert "Ask" in opened_widgets
    (code, _key) = next(m.groups() for x in started.scripts if (m := TEACHER_COOKIE.search(x)))
    question = open_store(db).state(code).question
    assert question is not None and question.body["source"]["query"] == 0  # the popover's first query
    assert "Ask" not in after  # asked: the popover closed again, its controls gone


def test_the_load_tests_join_storm_times_each_student_to_the_first_heatmap(monkeypatch, tmp_path):
    """The class-mode load test's join storm (bench/load/classroom.py --storm): every browser-less student opens the
    student link within the window, evenly spread, each timed from opening it to the first chart of its first run;
    all are in the room, and the report says so and passes only then."""
    import argparse

    from bench.load.classroom import Figures, new_students, report
    from classroom.store import open_store
    from harness.servers import start_server

    db = f"sqlite:///{tmp_path / 'class.db'}"
    monkeypatch.setenv("ATTENTION_DB_URL", db)
    proc, url = start_server()
    store = open_store(db)
    room = store.create_room()
    args = argparse.Namespace(students=4, browsers=0, storm=2.0, timeout=60.0, rounds=0, moves=0)
    figures = Figures()
    try:

        async def storm():
            ws, _ = await new_students(args, url, None, figures, "storm", f"room={room.code}")
            await asyncio.gather(*(s.close() for s in ws))

        run_async(storm())
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert not figures.errors, figures.errors
    assert store.state(room.code).seats == 4  # every student of the storm is in the room
    started = sorted(figures.storm_started)
    assert len(started) == 4 and 1.2 <= started[-1] - started[0] <= 2.0  # spread over the window, 0.5 s apart
    assert len(figures.storm) == 4 and all(0 < s < 60 for s in figures.storm)  # each reached its first heatmap
    said: list[str] = []
    figures.joined.append((4, 4))
    report(args, figures, said.append)
    (line,) = [x for x in said if x.startswith("join storm:")]
    assert "4 students opened the student link" in line and "4 of 4 in the room" in line and "p95" in line
