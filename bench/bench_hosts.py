"""The teacher's move across hosts, both ways: two deploy/serve.py hosts on one PostgreSQL (harness/hosts.py,
harness/postgres.py), the teacher on one, students on both; each move timed from the teacher's click to the end of
each student's pushed run of the new page. Prints p50 / p95 / max per direction; not a test.

    python bench/bench_hosts.py [--students 4] [--moves 10]

A student on the teacher's own host is moved by that worker's watcher the moment the teacher's run writes the view
(Store.after_write); one on the other host by its watcher hearing PostgreSQL's NOTIFY (ui/classroom_push.py).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness.hosts import start_hosts  # noqa: E402
from harness.load.sessions import TEACHER_COOKIE  # noqa: E402
from harness.postgres import Postgres  # noqa: E402
from harness.protocol import ProtocolSession  # noqa: E402

PAGES = ["causal", "heads", "block", "predict"]


async def one_direction(teacher_url: str, urls: list[str], students: int, moves: int) -> dict[str, list[float]]:
    """The teacher on `teacher_url`, `students` students on each of `urls`: {url: [delay s of each move]}."""
    teacher = ProtocolSession(teacher_url)
    await teacher.connect("class")
    await teacher.open("class")
    started = await teacher.click("Start a room")
    code = next(m.group(1) for x in started.scripts if (m := TEACHER_COOKIE.search(x)))
    class_ = []
    for url in urls:
        for _ in range(students):
            s = ProtocolSession(url)
            await s.connect()
            await s.open("", f"room={code}")
            class_.append((url, s))
    delays: dict[str, list[float]] = {url: [] for url in urls}
    for n in range(moves):
        t0 = time.perf_counter()

        async def arrival(s, t0=t0):
            run = await s.pushed(timeout=60)
            if run is None or run.status != "FINISHED_SUCCESSFULLY":
                raise SystemExit(f"a student did not follow: {run}")
            return time.perf_counter() - t0

        waits = [asyncio.ensure_future(arrival(s)) for _, s in class_]
        await asyncio.sleep(0)
        await teacher.goto(PAGES[n % len(PAGES)])
        for (url, _), took in zip(class_, await asyncio.gather(*waits)):
            delays[url].append(took)
        while await teacher.pushed(timeout=0.3) is not None:  # the teacher's own pushed runs (joins): read them
            pass
    for _, s in class_:
        await s.close()
    await teacher.close()
    return delays


def summary(values: list[float]) -> str:
    values = sorted(values)
    p95 = values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]
    return f"p50 {statistics.median(values):.2f} s, p95 {p95:.2f} s, max {values[-1]:.2f} s ({len(values)} arrivals)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=4, help="students on each host (default 4)")
    parser.add_argument("--moves", type=int, default=10, help="moves of the teacher in each direction (default 10)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-hosts-"))
    db = Postgres()
    try:
        hosts = start_hosts(tmp, {"ATTENTION_DB_URL": db.new_database(), "ATTENTION_CLASS_SAFETY_S": "3600"})
        try:

            async def run():
                for url in hosts.urls:  # every page imported and run once on each host
                    warm = ProtocolSession(url)
                    await warm.connect()
                    for path in ["", *PAGES]:
                        await warm.open(path)
                    await warm.close()
                out = {}
                for i, url in enumerate(hosts.urls):
                    out[i] = await one_direction(url, hosts.urls, args.students, args.moves)
                return out

            results = asyncio.run(run())
        finally:
            hosts.stop()
    finally:
        db.stop()
    print(f"{args.students} students on each of 2 hosts, {args.moves} moves per direction; from the teacher's click:")
    for i, delays in results.items():
        for j, url in enumerate(hosts.urls):
            where = "same host" if i == j else "across hosts"
            print(f"  teacher on host {i} -> students on host {j} ({where}): {summary(delays[url])}")


if __name__ == "__main__":
    main()
