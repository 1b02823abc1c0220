"""Soak test: the load test's class mix against ONE worker for a long time, its memory sampled. Prints figures.

    python bench/soak.py [--minutes 30] [--warm 5] [--sessions 6] [--interactions 20] [--think 1.0]
                         [--every 10] [--ttl 10] [--mischief] [--snapshot [REV]] [--out FILE]

One `streamlit run app.py` (harness/servers.py) serves `--sessions` browser-less sessions at a time
(harness/protocol.py, the load test's BrowserlessSession: its page plan and its options, `--think` s apart).
Each session does `--interactions` interactions, closes, and a new one takes its place, so that over the run
the server sees hundreds of sessions come and go, as over a school day; closed sessions are dropped
`--ttl` s later (Streamlit's server.disconnectedSessionTTL). `--mischief` adds the load test's mischievous
student (every page's heaviest work, a fresh seed each visit, which defeats the caches).

Every `--every` s the worker's RSS (the server process alone; a training's child is counted apart) is read
from /proc and printed. At the end: the curve, and the growth from minute `--warm` (the median of the samples
within 30 s of it: the caches have filled by then) to the end (the median of the last minute), and the
highest sample after minute `--warm`. Issue #34 asks for less than 5 % growth over the last 20 minutes
of a 30-minute run.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.load.plan import PAGES, session_plan  # noqa: E402
from harness.load.processes import process_tree, rss_kib  # noqa: E402
from harness.load.report import tee_log  # noqa: E402
from harness.load.sessions import BrowserlessSession, MischiefSession, Stats  # noqa: E402
from harness.servers import ROOT, snapshot_of, start_server  # noqa: E402


class RssSampler(threading.Thread):
    """(seconds since start, worker KiB, tree KiB) every `every` s, each printed as it is taken."""

    def __init__(self, pid: int, every: float, log):
        super().__init__(daemon=True)
        self.pid, self.every, self.log = pid, every, log
        self.samples: list[tuple[float, int, int]] = []
        self.t0 = time.monotonic()
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            t = time.monotonic() - self.t0
            worker, tree = rss_kib([self.pid]), rss_kib(process_tree(self.pid))
            self.samples.append((t, worker, tree))
            self.log(f"  {t / 60:5.1f} min  worker {worker / 1024:6.1f} MiB  with children {tree / 1024:6.1f} MiB")
            self._halt.wait(self.every)

    def stop(self) -> None:
        self._halt.set()


def growth(samples: list[tuple[float, int, int]], warm_s: float) -> tuple[float, float, float, float]:
    """(KiB at minute `warm`, KiB over the last minute, growth between them, highest after `warm` / start - 1)."""
    near = [kib for t, kib, _ in samples if abs(t - warm_s) <= 30] or [samples[0][1]]
    end_t = samples[-1][0]
    last = [kib for t, kib, _ in samples if t >= end_t - 60]
    start, end = statistics.median(near), statistics.median(last)
    highest = max(kib for t, kib, _ in samples if t >= warm_s - 30)
    return start, end, end / start - 1, highest / start - 1


async def class_mix(url: str, args, stats: Stats, deadline: float) -> int:
    """`args.sessions` sessions at a time until `deadline`, each replaced when it is done; returns how many ran."""
    pages = list(PAGES)
    counter = 0

    async def seat(seat_no: int) -> None:
        nonlocal counter
        while time.monotonic() < deadline:
            counter += 1
            rng = random.Random(f"soak-{counter}")
            session = BrowserlessSession(url, f"s{counter:04d}", counter, stats, args)
            await session.run(session_plan(pages, counter, rng), args.interactions, think=args.think)

    seats = [asyncio.ensure_future(seat(i)) for i in range(args.sessions)]
    if args.mischief:
        done = asyncio.Event()
        mischief = MischiefSession(url, "mischief", 0, stats, args)
        seats.append(asyncio.ensure_future(mischief.run_until(done)))
        asyncio.get_running_loop().call_at(
            asyncio.get_running_loop().time() + max(0.0, deadline - time.monotonic()), done.set
        )
    await asyncio.gather(*seats)
    return counter


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--warm", type=float, default=5.0, help="minute from which the curve must be flat")
    parser.add_argument("--sessions", type=int, default=6, help="browser-less sessions at a time")
    parser.add_argument("--interactions", type=int, default=20, help="per session, before it closes")
    parser.add_argument("--think", type=float, default=1.0, help="pause between a session's interactions, s (±50 %%)")
    parser.add_argument("--every", type=float, default=10.0, help="seconds between two memory samples")
    parser.add_argument("--ttl", type=int, default=10, help="server.disconnectedSessionTTL, s")
    parser.add_argument("--mischief", action="store_true", help="add the load test's mischievous student")
    parser.add_argument("--interaction-timeout", type=float, default=120.0, help="s")
    parser.add_argument("--snapshot", nargs="?", const="HEAD", default=None, metavar="REV")
    parser.add_argument("--scratch", default="/tmp/soak")
    parser.add_argument("--out", help="also write the output to this file")
    args = parser.parse_args()
    args.kill_worker = None  # what BrowserlessSession asks of the load test's arguments
    log = tee_log(args.out)

    root = ROOT
    serve = start_server
    if args.snapshot:
        root, serve = snapshot_of(Path(args.scratch), args.snapshot)
    proc, url = serve(None, ("--server.disconnectedSessionTTL", str(args.ttl)))
    log(
        f"soak: {args.minutes:g} min, one worker ({root}), {args.sessions} browser-less sessions at a time of "
        f"{args.interactions} interactions each{', plus the mischievous student' if args.mischief else ''}; "
        f"RSS every {args.every:g} s"
    )
    sampler = RssSampler(proc.pid, args.every, log)
    sampler.start()
    stats = Stats()
    try:
        deadline = time.monotonic() + args.minutes * 60
        n = asyncio.run(class_mix(url, args, stats, deadline))
    finally:
        time.sleep(min(args.every, 2))
        sampler.stop()
        proc.terminate()  # first: whatever fails below, no server is left running
        try:
            proc.wait(timeout=15)
        except Exception:  # noqa: BLE001
            proc.kill()
        sampler.join(timeout=5)
    start, end, grew, highest = growth(sampler.samples, args.warm * 60)
    log(
        f"sessions: {n}, interactions: {len(stats.latencies)}, errors: {len(stats.errors)}; "
        f"p95 latency {percentile([r['ms'] for r in stats.latencies], 95):.0f} ms"
    )
    for e in stats.errors[:10]:
        log(f"  error: {e}")
    log(
        f"worker RSS at minute {args.warm:g}: {start / 1024:.1f} MiB; over the last minute: {end / 1024:.1f} MiB; "
        f"growth {grew * 100:+.1f} %; highest after minute {args.warm:g}: {highest * 100:+.1f} % "
        f"(target: under 5 %)"
    )
    sys.exit(0 if grew < 0.05 and not stats.errors else 1)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q / 100))]


if __name__ == "__main__":
    main()
