"""Load test of class mode (issue #33): one teacher, 28 browser-less students and 2 Chromium students on one server,
or through deploy/serve.py with `--workers N`.
Prints figures; not a CI test.

    python -m bench.load.classroom [--students 28] [--browsers 2] [--moves 6] [--every 10] [--rounds 2]
                                   [--answer-rounds 2] [--workers N] [--snapshot REV] [--scratch /tmp/classload]
                                   [--out FILE]   (--help: all)

Servers. By default one `streamlit run app.py`. With `--workers N`, the class is served the way the README serves
one from one machine, `bash deploy/serve.sh` (deploy/serve.py: nginx in front of N workers, pinned one per core
when N is the number of cores, started here by harness/servers.start_proxy): the teacher and every student connect
through nginx, which sends a new session's websocket to the worker with the fewest open ones (least_conn) and
keeps that browser there with a cookie; the workers share the SQLite store. Both phases (with and without class
mode) run on the same servers, and the server CPU is that of the N worker processes summed (nginx and the
supervisor are reported apart). `--snapshot REV` serves a copy of that
commit, so that edits in progress never reach a running server.

Who is who. Every session is a real session of `streamlit run app.py` (a server of its own, with a fresh SQLite
store in --scratch): the teacher and the 28 browser-less students speak Streamlit's websocket protocol
(harness/protocol.py) as a browser does, including what a following student's browser does by itself: reading the
runs the server starts in its session (the teacher's new page, or the bar alone: ui/classroom_push.py), the timer
reruns of an `st.fragment(run_every=...)` where one is drawn (the frontend's setInterval, one rerun per interval; a
tick waits for the previous run to end, where the browser would send it anyway and the server would fold the two),
and the move script a bar may draw (ui/streamlit_internals/browser.move_script: a pushState and a popstate, i.e. a
run of the new page marked as history navigation). The store API alone would leave out what following costs the
server (the fragment runs, the page runs), so the students go through the pages as a browser would. The 2
Chromium students are real pages of one headless Chromium.

What it measures, in one run:
1. the server's CPU for the same load with and without class mode, in alternating phases (`--rounds` of each):
   the teacher goes to a page every `--every` s (`--moves` pages per phase, light pages, so that what following
   adds is not hidden behind heavy page runs); without class mode nobody is in a room and every student goes to
   the same page by its sidebar link right after the teacher; with class mode the teacher leads a room and the
   students follow (the server runs the teacher's new page in each following student's session,
   ui/classroom_push.py, received as a browser would: harness/protocol.ProtocolSession.pushed). Same moves, same
   pages, same number of page runs: the difference is what following costs; the report counts, by kind, the runs
   the sessions had without asking for them. CPU = the server
   process's utime+stime (with `--workers`, the workers' summed) over the phase's moving window, which the
   machine's other work slows but does not add to;
2. in the class phases, each move's delay to every following student: from the teacher's click (the BackMsg
   going to the page) to that student's run of the new page finished (browser-less) or the new page's title on
   screen with the app idle (Chromium);
3. questions: the teacher asks from the Playground (its "Ask the class" popover); every student picks an answer,
   then all 30 press "Send my answer" within the same second; the store's results (store.results, with the
   teacher key the teacher's page wrote into its cookie script) must count each student exactly once with the
   answer they sent. `--answer-rounds` times, each student changing their answer in the later rounds;
4. with `--storm S`, the join storm (issue #49): in each class phase every browser-less student opens the student
   link within S s, evenly spread, and each is timed from opening it (the page's HTTP load, then the websocket) to
   the first chart of its first run, the class's view (the Playground's heatmap); all must be in the room;
5. the server CPU per following student per move: the class phases' server CPU over the follower moves.

Targets (issue #33): move p95 <= 2 s to every following student, class-mode CPU <= 1.15 x the same load without
it, every answer counted exactly once; (issue #49) the join storm's p95 <= 5 s with every student in the room. The
exit code is 1 when one is missed. The CPU per following student (issue #49's target: 10 ms) is reported.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.browser import CHROMIUM
from harness.load.plan import PAGES
from harness.load.processes import ServerOutput, cpu_seconds, process_tree, rss_kib, worker_pid
from harness.load.report import pct, tee_log, uptime
from harness.load.sessions import BROWSER_ARGS, H1_JS, MOVE_URL, TEACHER_COOKIE, WAIT_JS
from harness.servers import ROOT, serve_reading_output, snapshot_of, start_proxy, start_server

TOUR = ["causal", "heads", "positions", "block", "predict", "playground"]  # light pages, every one followable
TARGET_P95_S = 2.0
TARGET_CPU_RATIO = 1.15
TARGET_STORM_P95_S = 5.0  # the join storm: from opening the student link to the first heatmap (issue #49)
TARGET_CPU_PER_STUDENT_MS = 10.0  # server CPU per following student per move (issue #49; measured, not yet gated)


@dataclass
class Move:
    n: int
    path: str  # url path ("" for the Playground)
    t0: float  # time.time() when the teacher's click went to the server (Chromium's clock is the same)
    led: float = 0.0  # time.time() when the teacher's run of the page ended: app.py has made it the room's view


@dataclass
class Figures:
    delays: list[dict] = field(default_factory=list)  # {move, student, client, s, at, led}: `led` is the Move,
    # read at the report: a student may arrive before the teacher's own client has its run's end
    cpu: list[dict] = field(default_factory=list)  # {phase, round, cpu_s, wall_s, load, proxy_cpu_s}
    answers: list[dict] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    by_hand: list[dict] = field(default_factory=list)  # {client, s}: without class mode, the teacher's move to
    # each student's page drawn when every student goes there by hand right after the teacher (the reference)
    ticks: list[float] = field(default_factory=list)  # ms of the students' timer reruns (class phases)
    reruns: list[float] = field(default_factory=list)  # time.monotonic() of every timer or pushed rerun, the
    # teacher's too
    pushed: list[float] = field(default_factory=list)  # ms of the runs the server pushed to students
    storm: list[float] = field(default_factory=list)  # the join storm (--storm): s from a student opening the
    # student link to the first chart of its first run (the class's view: the Playground's heatmap)
    storm_started: list[float] = field(default_factory=list)  # time.perf_counter() when each student opened it
    joined: list[tuple[int, int]] = field(default_factory=list)  # (in the room, expected) of each class phase
    memory: list[tuple[str, list[float]]] = field(default_factory=list)  # (when, each worker's resident MiB)
    runs: list[tuple[float, str, str]] = field(default_factory=list)  # (time.monotonic(), "student" or "teacher",
    # kind) of every run a session had besides those it asked for itself: "timer", "pushed page" (the server ran
    # the teacher's new view), "pushed bar" (the server reran a bar alone), "move script" (a history navigation)


class WsStudent:
    """A browser-less session (a student, or the teacher): the timer reruns of its page's fragments, as its
    browser would send them; in a class phase it follows the move scripts its bar draws; without class mode it
    goes to the teacher's page by its sidebar link."""

    def __init__(self, url: str, name: str, figures: Figures, timeout: float):
        from harness.protocol import ProtocolSession

        self.name, self.figures = name, figures
        self.client = ProtocolSession(url, timeout=timeout)
        self.arrived: set[int] = set()
        self.stop = asyncio.Event()
        self.current: Move | None = None  # the move of a class phase this student is to reach
        self.answer: int | None = None
        self.counted = not name.startswith("teacher")  # its timer reruns go into the students' figures

    def check(self, where: str, result) -> bool:
        if result.status != "FINISHED_SUCCESSFULLY" or result.exceptions:
            self.figures.errors.append(f"[{self.name}] {where}: {result.status} {result.exceptions[:1]}")
            return False
        return True

    async def open(self, query: str = "") -> None:
        await self.client.connect("")
        self.check("opening the app", await self.client.open("", query))

    async def open_in_storm(self, query: str, at: float) -> None:
        """Open the student link `at` s from now, as one of a class arriving at once: the time from opening it (the
        page's HTTP load, then the websocket) to the first chart of the first run goes into `figures.storm`."""
        await asyncio.sleep(at)
        t0 = time.perf_counter()
        self.figures.storm_started.append(t0)
        await self.client.connect("")
        result = await self.client.open("", query)
        if self.check("opening the student link in the join storm", result):
            if result.first_chart_at is None:
                self.figures.errors.append(f"[{self.name}] the join storm's first run drew no chart")
            else:
                self.figures.storm.append(result.first_chart_at - t0)

    def after_run(self, result) -> str | None:
        """Note an arrival on the page of the current move; return the link a move script sends it to."""
        move = self.current
        if move is not None and move.n not in self.arrived and self.client.page_path() == move.path and result.h1:
            self.arrived.add(move.n)
            now = time.time()
            self.figures.delays.append(
                {
                    "move": move.n,
                    "student": self.name,
                    "client": "protocol",
                    "s": now - move.t0,
                    "at": now,
                    "led": move,
                }
            )
        for script in result.scripts:
            found = MOVE_URL.search(script)
            if found:
                return json.loads(found.group(1))
        return None

    async def timers(self) -> None:
        """The browser's setInterval for each fragment with run_every, and the runs the server pushes, until
        stopped."""
        next_at: dict[str, float] = {}
        while not self.stop.is_set():
            now = time.monotonic()
            for fid, interval in list(self.client.auto_reruns.items()):
                due = next_at.setdefault(fid, now + interval)
                if now >= due:
                    next_at[fid] = due + interval if due + interval > now else now + interval
                    result = await self.client.tick(fid)
                    self.figures.reruns.append(time.monotonic())
                    self.note("timer")
                    if not self.check("a timer rerun", result):
                        continue
                    if self.counted:
                        self.figures.ticks.append(result.ms)
                    link = self.after_run(result)
                    if link:
                        moved = await self.client.history_move(link)
                        self.note("move script")
                        if self.check(f"following to {link}", moved):
                            self.after_run(moved)
            soonest = min(next_at.values(), default=time.monotonic() + 0.2)
            # meanwhile, a run the server pushes (a student's bar when the teacher acts: ui/classroom_push.py)
            pushed = await self.client.pushed(timeout=max(0.02, min(0.2, soonest - time.monotonic())))
            if pushed is not None and pushed.status.startswith("closed"):
                self.check("a pushed rerun", pushed)
                return  # the connection is gone: nothing more will come
            if pushed is not None and self.check("a pushed rerun", pushed):
                self.figures.reruns.append(time.monotonic())
                self.note("pushed bar" if pushed.fragment else "pushed page")
                if self.counted:
                    self.figures.pushed.append(pushed.ms)
                link = self.after_run(pushed)
                if link:
                    moved = await self.client.history_move(link)
                    self.note("move script")
                    if self.check(f"following to {link}", moved):
                        self.after_run(moved)

    def note(self, kind: str) -> None:
        self.figures.runs.append((time.monotonic(), "student" if self.counted else "teacher", kind))

    async def go(self, path: str, move: Move | None = None) -> None:
        if self.check(f"going to /{path}", await self.client.goto(path)) and move is not None:
            self.figures.by_hand.append({"client": "protocol", "s": time.time() - move.t0})

    async def close(self) -> None:
        self.stop.set()
        await self.client.close()


class ChromiumStudent:
    def __init__(self, browser, url: str, name: str, figures: Figures, timeout: float):
        self.browser, self.url, self.name, self.figures, self.timeout = browser, url, name, figures, timeout
        self.page = None
        self.answer: int | None = None

    async def open(self, query: str = "") -> None:
        ctx = await self.browser.new_context(viewport={"width": 1300, "height": 950})
        ctx.set_default_timeout(self.timeout * 1000)
        self.page = await ctx.new_page()
        self.page.on("pageerror", lambda exc: self.figures.errors.append(f"[{self.name}] page error: {exc}"[:300]))
        await self.page.goto(f"{self.url}/" + (f"?{query}" if query else ""), wait_until="domcontentloaded")
        await self.wait("load", None, "")

    async def wait(self, mode: str, before, path: str) -> dict:
        arg = {"mode": mode, "before": before, "path": path, "settle": 300, "timeout": self.timeout * 1000}
        result = await self.page.evaluate(WAIT_JS, arg)
        if not result["ok"]:
            self.figures.errors.append(f"[{self.name}] waiting ({mode} {path!r}): {str(result)[:300]}")
        return result

    async def follow(self, move: Move, before: str) -> None:
        """Wait until this page shows the move's page, idle, with a new title; the delay ends when that began."""
        result = await self.wait("nav", before, "/" + move.path)
        if result["ok"]:
            at = result["since"] / 1000
            self.figures.delays.append(
                {
                    "move": move.n,
                    "student": self.name,
                    "client": "chromium",
                    "s": at - move.t0,
                    "at": at,
                    "led": move,
                }
            )

    async def go(self, path: str, move: Move | None = None) -> None:
        before = await self.page.evaluate(H1_JS)
        await self.page.locator(f'[data-testid="stSidebarNav"] a[href="{self.url}/{path}"]').click()
        result = await self.wait("nav", before, "/" + path)
        if result["ok"] and move is not None:
            self.figures.by_hand.append({"client": "chromium", "s": result["since"] / 1000 - move.t0})

    async def close(self) -> None:
        await self.page.context.close()


async def new_students(args, url: str, browser, figures: Figures, tag: str, query: str = ""):
    ws = [WsStudent(url, f"{tag}-p{i:02d}", figures, args.timeout) for i in range(args.students)]
    chromium = [ChromiumStudent(browser, url, f"{tag}-c{i}", figures, args.timeout) for i in range(args.browsers)]
    storm = getattr(args, "storm", 0.0)
    if storm and query:  # the join storm: every browser-less student opens the link within `storm` s, evenly spread
        await asyncio.gather(*(s.open_in_storm(query, i * storm / len(ws)) for i, s in enumerate(ws)))
    for group in range(0, len(ws) if not (storm and query) else 0, 7):  # else in small groups, over a minute
        await asyncio.gather(*(s.open(query) for s in ws[group : group + 7]))
    for s in chromium:
        await s.open(query)
    return ws, chromium


async def phase(args, url: str, browser, figures: Figures, servers: Servers, kind: str, rnd: int, log):
    """One phase: open the teacher and the class (in a room for "class"), then the moves; CPU over the moves."""
    teacher = WsStudent(url, f"teacher-{kind}{rnd}", figures, args.timeout)  # a session with timers, as a student
    await teacher.client.connect("class" if kind == "class" else "")
    query = ""
    room = None
    if kind == "class":
        await teacher.client.open("class")
        started = await teacher.client.click("Start a room")
        room = next((m.groups() for s in started.scripts if (m := TEACHER_COOKIE.search(s))), None)
        if room is None:
            raise SystemExit("the teacher's page wrote no room cookie: did 'Start a room' work?")
        query = f"room={room[0]}"
        await teacher.go("")  # the class's first view: the Playground
    else:
        await teacher.client.open("")
    # the teacher's screen is read from now on, as a browser reads it: the server pushes it a run for every student
    # who joins (ui/classroom_push.py)
    timers = [asyncio.ensure_future(teacher.timers())]
    ws, chromium = await new_students(args, url, browser, figures, f"{kind}{rnd}", query)
    timers += [asyncio.ensure_future(s.timers()) for s in ws]
    if kind == "class":
        expected = args.students + args.browsers
        joined = await wait_joined(room[0], expected, args.timeout)
        log(f"  room {room[0]}: {joined} of {expected} students in, following")
        figures.joined.append((joined, expected))
        remember_memory(figures, servers, f"class round {rnd}: every student in the room (after the join storm)")
    if args.workers:
        on: dict[str, int] = {}
        for s in ws:
            on[s.client.worker or "?"] = on.get(s.client.worker or "?", 0) + 1
        spread = ", ".join(f"worker {w}: {n}" for w, n in sorted(on.items()))
        log(f"  browser-less students by worker (nginx's least_conn): {spread}; the teacher on {teacher.client.worker}")
    await asyncio.sleep(args.every)  # the timers settle into their rhythm before the window opens
    rng = random.Random(rnd)
    cpu0, proxy0 = cpu_seconds(servers.workers), cpu_seconds(servers.proxy)
    each0 = [cpu_seconds(pids) for pids in servers.each]
    wall0, load0, own0 = time.monotonic(), os.getloadavg(), time.process_time()  # own: the load generator's CPU
    for n in range(args.moves):
        path = PAGES[TOUR[(n + rnd) % len(TOUR)]]
        before = {s.name: await s.page.evaluate(H1_JS) for s in chromium}
        move = Move(n=rnd * 1000 + n, path=path, t0=time.time())
        if kind == "class":
            for s in ws:
                s.current = move
            followers = [asyncio.ensure_future(s.follow(move, before[s.name])) for s in chromium]
        t_move = time.monotonic()
        await teacher.go(path)
        move.led = time.time()
        if kind == "alone":  # nobody follows: everyone goes there by hand, right after the teacher
            await asyncio.gather(*(s.go(path, move) for s in [*ws, *chromium]))
        else:
            await asyncio.gather(*followers)
        await asyncio.sleep(max(0.0, args.every * rng.uniform(0.9, 1.1) - (time.monotonic() - t_move)))
    cpu = cpu_seconds(servers.workers) - cpu0
    proxy_cpu = cpu_seconds(servers.proxy) - proxy0
    if kind == "class":
        remember_memory(figures, servers, f"class round {rnd}: after the {args.moves} moves")
    each = [cpu_seconds(pids) - c0 for pids, c0 in zip(servers.each, each0, strict=True)]
    wall = time.monotonic() - wall0
    own = time.process_time() - own0
    reruns = sum(1 for t in figures.reruns if wall0 <= t <= wall0 + wall)
    kinds: dict[str, int] = {}
    for t, who, what in figures.runs:
        if wall0 <= t <= wall0 + wall:
            kinds[f"{who}: {what}"] = kinds.get(f"{who}: {what}", 0) + 1
    figures.cpu.append(
        {
            "phase": kind,
            "round": rnd,
            "cpu_s": cpu,
            "proxy_cpu_s": proxy_cpu,
            "generator_cpu_s": own,
            "wall_s": wall,
            "load": (load0, os.getloadavg()),
            "reruns": reruns,
            "kinds": kinds,
        }
    )
    log(
        f"  {kind} round {rnd}: server CPU {cpu:.1f} s over {wall:.0f} s ({100 * cpu / wall:.0f} % of a core), "
        f"load average {load0[0]:.1f} -> {os.getloadavg()[0]:.1f}"
        + (f"; by worker {', '.join(f'{c:.1f}' for c in each)} s" if len(each) > 1 else "")
        + (f"; nginx and the supervisor {proxy_cpu:.1f} s" if servers.proxy else "")
        + f"; the load generator itself {own:.1f} s ({100 * own / wall:.0f} % of a core, on the same machine)"
    )
    if kind == "class" and rnd == args.rounds - 1:
        await ask_and_answer(args, teacher, room, ws, chromium, figures, log)
    for s in [*ws, teacher]:
        s.stop.set()
    await asyncio.gather(*timers, return_exceptions=True)
    await asyncio.gather(*(s.close() for s in [*ws, *chromium, teacher]), return_exceptions=True)
    if kind == "class":
        remember_memory(figures, servers, f"class round {rnd}: every student gone (their sessions kept for the TTL)")


def remember_memory(figures: Figures, servers: Servers, when: str) -> None:
    """Each worker's resident memory now (VmRSS of its process and its children, MiB)."""
    figures.memory.append((when, [rss_kib(pids) / 1024 for pids in servers.each]))


async def wait_joined(code: str, expected: int, timeout: float) -> int:
    """Students in room `code` once `expected` are in (or the timeout passed)."""
    from classroom.store import open_store

    store = open_store(os.environ["ATTENTION_DB_URL"])
    deadline = time.monotonic() + timeout
    joined = store.state(code).seats
    while joined < expected and time.monotonic() < deadline:
        await asyncio.sleep(0.5)
        joined = store.state(code).seats
    return joined


async def ask_and_answer(args, teacher: WsStudent, room, ws, chromium, figures: Figures, log) -> None:
    """The teacher asks from the Playground; every student answers; all press Send within the same second."""
    from classroom.store import open_store

    store = open_store(os.environ["ATTENTION_DB_URL"])
    code, key = room
    for s in ws:
        s.current = None
    if teacher.client.page_path() != "":
        await teacher.go("")
        await asyncio.sleep(3)  # the class follows to the Playground
    opened = await teacher.client.open_popover("Ask the class")  # its controls are drawn only while it is open
    if opened.status != "FINISHED_SUCCESSFULLY" or opened.exceptions or opened.errors:
        figures.errors.append(f"[teacher] opening Ask the class: {opened.status} {opened.exceptions} {opened.errors}")
        return
    asked = await teacher.client.click("Ask")
    if asked.status != "FINISHED_SUCCESSFULLY" or asked.exceptions or asked.errors:
        figures.errors.append(f"[teacher] asking: {asked.status} {asked.exceptions} {asked.errors}")
        return
    question = store.state(code).question
    qid, labels = question.id, question.body["options"]
    options = len(labels)
    rng = random.Random(qid)
    for rnd in range(args.answer_rounds):
        for s in [*ws, *chromium]:
            s.answer = rng.randrange(options) if s.answer is None else (s.answer + 1) % options
        await asyncio.gather(*(pick_ws(s, args.timeout) for s in ws), *(pick_chromium(s, labels) for s in chromium))
        at = float(int(time.time()) + 2)  # the next whole second but one: every Send inside [at, at + 1)
        sends = [send_ws(s, at, figures) for s in ws] + [send_chromium(s, at, figures) for s in chromium]
        pressed = await asyncio.gather(*sends)
        deadline = time.monotonic() + args.timeout
        res = store.results(code, key, qid)
        while sorted(res.values) != sorted(s.answer for s in [*ws, *chromium]) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
            res = store.results(code, key, qid)
        counted = time.time() - at
        expected = sorted(s.answer for s in [*ws, *chromium])
        spread = max(pressed) - min(pressed)
        entry = {
            "round": rnd,
            "students": len(expected),
            "joined": res.seats,
            "answered": res.answered,
            "exact": res.answered == len(expected) and sorted(res.values) == expected,
            "press_spread_s": spread,
            "all_counted_after_s": counted,
        }
        figures.answers.append(entry)
        log(
            f"  answers round {rnd + 1}: {len(expected)} students pressed Send within {spread:.2f} s; the store "
            f"counts {res.answered} answers of {res.seats} joined, "
            + ("each student's once, with the value sent" if entry["exact"] else "NOT the answers sent")
            + f" (all in {counted:.1f} s after the second began)"
        )


async def pick_ws(s: WsStudent, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while "Your answer" not in s.client.widgets and time.monotonic() < deadline:
        await asyncio.sleep(0.2)  # the student's timer reruns draw the question
    try:
        s.check("picking an answer", await s.client.select("Your answer", s.answer))
    except LookupError as exc:
        s.figures.errors.append(f"[{s.name}] {exc}")


async def send_ws(s: WsStudent, at: float, figures: Figures) -> float:
    await asyncio.sleep(max(0.0, at - time.time()) + random.uniform(0, 0.5))
    pressed = time.time()
    try:
        s.check("sending the answer", await s.client.click("Send my answer"))
    except LookupError as exc:
        figures.errors.append(f"[{s.name}] {exc}")
    return pressed - at


async def pick_chromium(s: ChromiumStudent, labels: list[str]) -> None:
    from playwright.async_api import expect

    await expect(s.page.get_by_role("button", name="Send my answer")).to_be_visible(timeout=s.timeout * 1000)
    box = s.page.locator('[data-testid="stRadio"]').filter(has_text="Your answer")
    await box.get_by_text(labels[s.answer], exact=True).click()
    await expect(box.get_by_role("radio").nth(s.answer)).to_be_checked(timeout=s.timeout * 1000)


async def send_chromium(s: ChromiumStudent, at: float, figures: Figures) -> float:
    from playwright.async_api import expect

    await asyncio.sleep(max(0.0, at - time.time()) + random.uniform(0, 0.5))
    pressed = time.time()
    await s.page.get_by_role("button", name="Send my answer").click()
    try:
        await expect(s.page.get_by_text("Sent:")).to_be_visible(timeout=s.timeout * 1000)
    except AssertionError:
        figures.errors.append(f"[{s.name}] the page never said 'Sent:'")
    return pressed - at


@dataclass
class Servers:
    """The processes serving the class: `workers`, whose CPU is the server's (the Streamlit processes), and `proxy`
    (deploy/serve.py's supervisor and nginx, empty without --workers), measured apart."""

    workers: list[int]
    proxy: list[int]
    each: list[list[int]]  # the processes of each worker apart
    urls: list[str]  # each worker's own address, for the warm-up


def start(args, scratch: Path, log):
    """The server(s) of the run: (the process to stop, the class's URL, Servers)."""
    app_dir, serve = ROOT, start_server
    if args.snapshot:
        app_dir, serve = snapshot_of(scratch, args.snapshot)
        log(f"app: a snapshot of commit {args.snapshot} ({app_dir})")
    if not args.workers:
        proc, url = serve_reading_output(serve, None, ())
        tree = process_tree(proc.pid)
        return proc, url, Servers(workers=tree, proxy=[], each=[tree], urls=[url])
    args.port, args.ttl = None, 120  # start_proxy's settings: a free port, Streamlit's default session TTL
    proc, url = start_proxy(args, scratch, app_dir)
    tree = process_tree(proc.pid)
    pids = [worker_pid(proc.pid, port) for port in args.worker_ports]
    if None in pids:
        proc.terminate()
        raise SystemExit(f"--workers: not every worker found among {tree}")
    each = [process_tree(pid) for pid in pids]
    workers = [p for tree_of_one in each for p in tree_of_one]
    servers = Servers(
        workers=workers,
        proxy=[p for p in tree if p not in workers],
        each=each,
        urls=[f"http://127.0.0.1:{p}" for p in args.worker_ports],
    )
    log(
        f"through deploy/serve.py (what deploy/serve.sh runs): nginx at {url} in front of {args.workers} worker(s) "
        f"(pids {pids}); server CPU = the workers' summed"
    )
    return proc, url, servers


async def main_async(args, log) -> int:
    from playwright.async_api import async_playwright

    scratch = Path(args.scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    db = scratch / f"class-{os.getpid()}.db"
    os.environ["ATTENTION_DB_URL"] = f"sqlite:///{db}"  # the servers' store, which this script reads too
    log(f"load at start: {uptime()}; cores: {os.cpu_count()}; store: {db}")
    proc, url, servers = start(args, scratch, log)
    out = ServerOutput(proc, scratch / "server.log")
    out.start()
    figures = Figures()
    try:
        log(f"server up at {url} (pid {proc.pid})")
        from harness.protocol import ProtocolSession

        for target in servers.urls:  # the first visit of each page fills the caches, each worker's own
            warm = ProtocolSession(target, timeout=args.timeout)
            await warm.connect("")
            await warm.open("")
            for name in TOUR:
                await warm.goto(PAGES[name])
            await warm.goto("class")
            await warm.close()
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=BROWSER_ARGS)
            try:
                for rnd in range(args.rounds):
                    for kind in ("alone", "class") if rnd % 2 == 0 else ("class", "alone"):
                        log(f"phase: {kind}, round {rnd + 1} of {args.rounds}")
                        await phase(args, url, browser, figures, servers, kind, rnd, log)
            finally:
                await browser.close()
        if args.linger:
            log(f"waiting {args.linger:g} s with nobody connected")
            await asyncio.sleep(args.linger)
            remember_memory(figures, servers, f"{args.linger:g} s after the last phase")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except Exception:  # noqa: BLE001
            proc.kill()
        out.join(timeout=5)
    figures.errors += [f"server: {line}" for line in out.problems]
    return report(args, figures, log)


def report(args, figures: Figures, log) -> int:
    delays = [d["s"] for d in figures.delays]
    expected = args.rounds * args.moves * (args.students + args.browsers)
    log(f"\nRESULTS ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {uptime()})")
    ok = True
    if delays:
        by = {c: [d["s"] for d in figures.delays if d["client"] == c] for c in ("protocol", "chromium")}
        lead = [d["at"] - d["led"].led for d in figures.delays]
        log(
            f"teacher's move -> every following student: {len(delays)} of {expected} arrivals, "
            f"p50 {pct(delays, 50):.2f} s, p95 {pct(delays, 95):.2f} s, max {max(delays):.2f} s "
            f"(target p95 <= {TARGET_P95_S:g} s); from the end of the teacher's own page run (the room's view "
            f"written): p50 {pct(lead, 50):.2f} s, p95 {pct(lead, 95):.2f} s"
        )
        for client, values in by.items():
            if values:
                log(f"    {client}: p50 {pct(values, 50):.2f} s, p95 {pct(values, 95):.2f} s ({len(values)})")
        ok &= pct(delays, 95) <= TARGET_P95_S and len(delays) == expected
    else:
        log("teacher's move: no student arrived")
        ok = False
    if figures.by_hand:
        hand = [d["s"] for d in figures.by_hand]
        chromium_hand = [d["s"] for d in figures.by_hand if d["client"] == "chromium"]
        log(
            "    reference, without class mode: every student going to the teacher's page by hand right after the "
            f"teacher's click: p50 {pct(hand, 50):.2f} s, p95 {pct(hand, 95):.2f} s"
            + (f" (chromium p50 {pct(chromium_hand, 50):.2f} s)" if chromium_hand else "")
        )
    if figures.ticks:
        log(
            "a following student's timer rerun (the bar's safety timer): median "
            f"{statistics.median(figures.ticks):.0f} ms, p95 {pct(figures.ticks, 95):.0f} ms "
            f"({len(figures.ticks)} reruns)"
        )
    if figures.pushed:
        log(
            "a run the server pushed to a following student (the teacher's new page, or the bar alone): median "
            f"{statistics.median(figures.pushed):.0f} ms, p95 {pct(figures.pushed, 95):.0f} ms "
            f"({len(figures.pushed)} reruns)"
        )
    if figures.storm_started:
        spread = max(figures.storm_started) - min(figures.storm_started)
        joined = figures.joined[0] if figures.joined else (0, args.students + args.browsers)
        times = figures.storm or [float("inf")]
        log(
            f"join storm: {len(figures.storm_started)} students opened the student link within {spread:.1f} s; "
            f"{joined[0]} of {joined[1]} in the room; from opening the link to the first heatmap: "
            f"p50 {pct(times, 50):.2f} s, p95 {pct(times, 95):.2f} s, max {max(times):.2f} s "
            f"(target p95 <= {TARGET_STORM_P95_S:g} s)"
        )
        ok &= joined[0] == joined[1] and len(figures.storm) == args.students and pct(times, 95) <= TARGET_STORM_P95_S
    for when, mib in figures.memory:
        log(f"memory by worker, {when}: {', '.join(f'{m:.0f}' for m in mib)} MiB")
    cpu = {k: [c for c in figures.cpu if c["phase"] == k] for k in ("alone", "class")}
    if cpu["class"]:
        follower_runs = args.moves * len(cpu["class"]) * (args.students + args.browsers)
        per_student = 1000 * sum(c["cpu_s"] for c in cpu["class"]) / max(1, follower_runs)
        log(
            f"server CPU per following student per move: {per_student:.1f} ms (the class phases' server CPU over "
            f"{follower_runs} follower moves, the teacher's and the timers' included; target <= "
            f"{TARGET_CPU_PER_STUDENT_MS:g} ms)"
        )
    if cpu["alone"] and cpu["class"]:
        rate = {k: sum(c["cpu_s"] for c in v) / sum(c["wall_s"] for c in v) for k, v in cpu.items()}
        ratio = rate["class"] / rate["alone"]
        pairs = [
            (c["cpu_s"] / c["wall_s"]) / (a["cpu_s"] / a["wall_s"])
            for a, c in zip(cpu["alone"], cpu["class"], strict=False)
            if a["cpu_s"]
        ]
        log(
            f"server CPU, same moves: without class mode {100 * rate['alone']:.0f} % of a core, with "
            f"{args.students + args.browsers} following students {100 * rate['class']:.0f} %: x{ratio:.2f} (rounds: "
            + ", ".join(f"x{r:.2f}" for r in pairs)
            + f"; target <= x{TARGET_CPU_RATIO:g})"
            + (f"; the {args.workers} workers summed" if args.workers else "")
        )
        if args.workers:
            proxy = {k: sum(c["proxy_cpu_s"] for c in v) / sum(c["wall_s"] for c in v) for k, v in cpu.items()}
            log(
                f"    nginx and the supervisor, apart: {100 * proxy['alone']:.1f} % of a core without class mode, "
                f"{100 * proxy['class']:.1f} % with"
            )
        ok &= ratio <= TARGET_CPU_RATIO
        reruns = sum(c["reruns"] for c in cpu["class"])
        extra = sum(c["cpu_s"] for c in cpu["class"]) - rate["alone"] * sum(c["wall_s"] for c in cpu["class"])
        log(
            f"    what class mode adds: {extra:.1f} CPU-s; the runs the sessions did not ask for in the class phases "
            f"({reruns}, {args.moves * len(cpu['class'])} moves of {args.students} browser-less students):"
        )
        kinds: dict[str, int] = {}
        for c in cpu["class"]:
            for k, n in c["kinds"].items():
                kinds[k] = kinds.get(k, 0) + n
        per = args.moves * len(cpu["class"]) * max(1, args.students)
        for k, n in sorted(kinds.items()):
            log(f"      {k}: {n}" + (f" ({n / per:.2f} per move per student)" if k.startswith("student") else ""))
    for a in figures.answers:
        ok &= a["exact"] and a["answered"] == a["students"]
    if not figures.answers:
        ok = False
        log("answers: none measured")
    log(f"errors: {len(figures.errors)}")
    for e in figures.errors[:15]:
        log(f"    {e}")
    ok &= not figures.errors
    log("PASS" if ok else "FAIL")
    return 0 if ok else 1


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--students", type=int, default=28, help="browser-less students")
    parser.add_argument("--browsers", type=int, default=2, help="Chromium students")
    parser.add_argument("--moves", type=int, default=6, help="teacher's moves per phase")
    parser.add_argument("--every", type=float, default=10.0, help="s between the teacher's moves (±10 %%)")
    parser.add_argument("--rounds", type=int, default=2, help="phases of each kind, alternating")
    parser.add_argument("--answer-rounds", type=int, default=2, help="times the whole class answers at once")
    parser.add_argument(
        "--storm",
        type=float,
        default=0.0,
        help="the join storm: in each class phase, every browser-less student opens the student link within this "
        "many s, evenly spread, timed to the first heatmap (0: they join in groups of 7)",
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="s for any one step")
    parser.add_argument(
        "--workers",
        type=int,
        default=0,
        help="serve through deploy/serve.py (deploy/serve.sh): nginx in front of N workers (default 0: one "
        "`streamlit run app.py`, no nginx)",
    )
    parser.add_argument("--snapshot", help="serve a copy of this commit (e.g. HEAD), not the working tree")
    parser.add_argument("--scratch", default="/tmp/classload", help="the store and the server's log go here")
    parser.add_argument("--out", help="also write the output to this file")
    parser.add_argument(
        "--linger",
        type=float,
        default=0.0,
        help="after the last phase, wait this many s and read the workers' memory again (past the 120 s for "
        "which Streamlit keeps a closed session with --workers: the memory once every session is gone)",
    )
    args = parser.parse_args()
    log = tee_log(args.out)
    log(f"command: python -m bench.load.classroom {' '.join(sys.argv[1:])}")
    sys.exit(asyncio.run(main_async(args, log)))


if __name__ == "__main__":
    main()
