"""What class mode adds to a following student's page run: the same page runs with and without class mode, in
AppTest sessions of this process, timed and profiled (cProfile in the script thread). Prints figures; not a test.

    python bench/class_run_profile.py [--rounds 5] [--top 25] [--pages causal,heads,...] [--bar-only]

Each round, for each page of the load test's tour (bench/load/classroom.TOUR), the teacher goes to the page; then
- a student without class mode goes to it by its sidebar link (the load test's "alone" phase);
- a following student runs it as the watcher's push runs it (ui/classroom_push.py): the page named by the room's
  view, with the view's query string, `moved_here()` giving that view; the room's state is read once per move, as
  the watcher's shared read does (Watcher.room_state), since AppTest has no server and so no watcher.
Both students visited every page once before the rounds (warm caches, as in the load test). Reported: the median
script run (app.py's own clock, ui.server_process.RUN_TIMES_MS) of each, their difference, and the functions whose time
differs most between the two profiles.

--bar-only runs a copy of the app whose tour pages draw one line: what a run costs without the page's own work
(Streamlit's run, app.py, and for the following student class mode's bar). No design that still runs a following
student's script (e.g. one that replays a page's recorded output instead of running it) can cost less.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import threading
from pathlib import Path
from urllib.parse import parse_qsl

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.load.classroom import TOUR  # noqa: E402
from harness.load.plan import PAGES  # noqa: E402

PAGE_FILES = {name: f"pages/{name}.py" for name in TOUR}


class Profiled:
    """cProfile in the thread of each script run started by `run(at)` while `into` names a profile: AppTest runs
    the script in a thread of its own, which `threading.setprofile` reaches (no Streamlit internal patched)."""

    def __init__(self):
        self.profiles: dict[str, cProfile.Profile] = {}
        self.into: str | None = None

    def run(self, at) -> None:
        if self.into is None:
            at.run()
            return
        prof = self.profiles.setdefault(self.into, cProfile.Profile())
        threading.setprofile(lambda *_: prof.enable())  # the script's new thread profiles itself from its start
        try:
            at.run()
        finally:
            threading.setprofile(None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--pages", default=",".join(TOUR))
    parser.add_argument("--no-profile", action="store_true", help="time the runs only (cProfile slows them)")
    parser.add_argument("--bar-only", action="store_true", help="the tour's pages draw one line (see above)")
    parser.add_argument("--dump", help="also write the two profiles to DUMP-alone.prof and DUMP-class.prof")
    args = parser.parse_args()
    pages = [p for p in args.pages.split(",") if p]
    scratch = tempfile.mkdtemp(prefix="class-profile-")
    os.environ["ATTENTION_DB_URL"] = f"sqlite:///{scratch}/class.db"
    app_root = ROOT
    if args.bar_only:
        app_root = Path(scratch) / "app"
        shutil.copytree(ROOT, app_root, ignore=shutil.ignore_patterns(".*", "__pycache__", "node_modules"))
        for name in TOUR:
            (app_root / PAGE_FILES[name]).write_text("import streamlit as st\n\nst.write('one line')\n")
    os.chdir(app_root)
    from streamlit.testing.v1 import AppTest

    from ui import classroom_session, classroom_student
    from ui.server_process import RUN_TIMES_MS
    from ui.streamlit_internals.session import run_app_py_on_every_apptest_run

    run_app_py_on_every_apptest_run()  # AppTest runs app.py on every rerun, as the server does (tests/conftest.py)
    profiled = Profiled()

    def app(query: dict | None = None) -> AppTest:
        at = AppTest.from_file(str(app_root / "app.py"), default_timeout=120)
        if query:
            at.query_params.update(query)
        return at

    teacher = AppTest.from_file(str(app_root / "app.py"), default_timeout=120)
    teacher.switch_page("pages/class.py").run()
    teacher.button(key="class_start").click().run()
    code = teacher.session_state["class_room"]
    store = classroom_session.store()

    read = {}  # the room's state read once per move, as the watcher's shared read (Watcher.room_state)

    def shared_state(_store, room):
        if room not in read:
            read[room] = _store.state(room)
        return read[room]

    classroom_student.room_state = shared_state
    view: dict[str, str | None] = {"now": None}
    classroom_student.moved_here = lambda: view.pop("now", None)

    alone = app()
    alone.run()
    student = app({"room": code})
    student.run()
    assert student.session_state["class_role"] == "student", "the student did not join"

    def move(name: str, measure: str | None) -> dict[str, list[float]]:
        teacher.switch_page(PAGE_FILES[name]).run()
        led = store.current_view(code)
        read.clear()
        out = {}
        for who, at in (("alone", alone), ("class", student)):
            profiled.into = None if measure is None or args.no_profile else who
            RUN_TIMES_MS.clear()
            at.switch_page(PAGE_FILES[name])
            at.query_params.clear()
            if who == "class":
                view["now"] = led
                at.query_params.update(dict(parse_qsl(led.partition("?")[2])))
            profiled.run(at)
            profiled.into = None
            if at.exception:
                raise SystemExit(f"{who} on {name}: {at.exception}")
            out[who] = list(RUN_TIMES_MS)
        return out

    for name in pages:  # every page visited once: caches warm
        move(name, None)
    times: dict[str, list[float]] = {"alone": [], "class": []}
    per_page: dict[str, dict[str, list[float]]] = {}
    for _ in range(args.rounds):
        for name in pages:
            got = move(name, "yes")
            for who, ms in got.items():
                times[who] += ms[-1:]
                per_page.setdefault(name, {"alone": [], "class": []})[who] += ms[-1:]
    print(
        ("bar only (the pages draw one line); " if args.bar_only else "")
        + f"rooms: 1, pages {pages}, {args.rounds} rounds; script run (app.py's clock"
        + (")" if args.no_profile else ", profiled)")
        + ", median:"
    )
    for name, t in per_page.items():
        a, c = statistics.median(t["alone"]), statistics.median(t["class"])
        print(f"  {PAGES[name] or 'playground':12s} alone {a:6.1f} ms  class {c:6.1f} ms  (+{c - a:.1f} ms)")
    a, c = statistics.median(times["alone"]), statistics.median(times["class"])
    print(f"  all          alone {a:6.1f} ms  class {c:6.1f} ms  (+{c - a:.1f} ms, x{c / a:.2f})")
    if args.no_profile:
        return
    stats = {who: pstats.Stats(prof) for who, prof in profiled.profiles.items()}
    if args.dump:
        for who, st in stats.items():
            st.dump_stats(f"{args.dump}-{who}.prof")
    runs = len(times["alone"])
    cum = {who: {k: v[3] for k, v in st.stats.items()} for who, st in stats.items()}
    keys = set(cum["alone"]) | set(cum["class"])
    diff = sorted(keys, key=lambda k: cum["class"].get(k, 0) - cum["alone"].get(k, 0), reverse=True)
    print(f"\nfunctions by the cumulative time class mode adds, ms per run ({runs} runs each):")
    for k in diff[: args.top]:
        a, c = cum["alone"].get(k, 0) * 1000 / runs, cum["class"].get(k, 0) * 1000 / runs
        where = f"{Path(k[0]).name}:{k[1]} {k[2]}"
        print(f"  {c - a:+7.2f}  (alone {a:6.2f}, class {c:6.2f})  {where}")


if __name__ == "__main__":
    main()
