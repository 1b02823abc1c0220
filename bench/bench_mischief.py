"""Ten mischievous students against two workers sharing one machine's pool (issue #34, item 6). Prints figures.

    python bench/bench_mischief.py [--students 10] [--workers 2] [--minutes 3] [--slots N] [--snapshot [REV]]

Starts `--workers` servers (`streamlit run app.py`, as deploy/serve.sh's workers: separate processes with the
same environment, so the same pool of ATTENTION_BACKGROUND_SLOTS slots, in a scratch ATTENTION_DATA_DIR), and
`--students` of the load test's mischievous students (harness/load/sessions.py's MischiefSession: every page's
heaviest work, a fresh seed on every visit, so no cache helps; each student its own seeds, so no two ask for the
same work), spread over the workers, for `--minutes`.
Every 0.2 s it counts the servers' niced children (the trainings and large sweeps of ui/background.py) and reads
the whole tree's RSS. Prints the peak number of children at once, the peak memory, and the students' figures.
Run it with `--slots 10` to see what the machine does without the pool's limit (one child per student).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.load.plan import mischief_plan  # noqa: E402
from harness.load.processes import process_tree, rss_kib  # noqa: E402
from harness.load.sessions import MischiefSession, Stats  # noqa: E402
from harness.servers import ROOT, free_port, snapshot_of, streamlit_command, wait_until_healthy  # noqa: E402


def nice_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[16])  # field 19 of stat: nice
    except (OSError, ValueError, IndexError):
        return None


class TreeSampler(threading.Thread):
    """Every 0.2 s: the servers' niced descendants and the RSS of all their trees (KiB)."""

    def __init__(self, pids: list[int]):
        super().__init__(daemon=True)
        self.pids = pids
        self.samples: list[tuple[float, int, int]] = []  # (time, niced children, tree KiB)
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            tree = [p for pid in self.pids for p in process_tree(pid)]
            niced = [p for p in tree if p not in self.pids and (nice_of(p) or 0) >= 19]
            self.samples.append((time.monotonic(), len(niced), rss_kib(tree)))
            self._halt.wait(0.2)

    def stop(self) -> None:
        self._halt.set()


class Student(MischiefSession):
    """The mischievous student with seeds of its own: ten students on the same seeds would ask for the same work,
    which a worker shares (ui/background.py), so they would not show the bound."""

    def __init__(self, number: int, *rest):
        super().__init__(*rest)
        self.first_seed = 1000 + 800 * number  # the pages' seeds stay under 10,000 for 10 students

    async def run_until(self, done: asyncio.Event) -> None:
        from urllib.parse import urlencode

        visit = 0
        while not done.is_set():
            for page, query, button in mischief_plan(seed=self.first_seed + visit % 800):
                if done.is_set():
                    break
                visit += 1
                try:
                    await self.one_visit(page, urlencode(query), button)
                except Exception as exc:  # noqa: BLE001
                    self.error(f"mischief on {page}: {type(exc).__name__}: {str(exc)[:200]}")


async def students(urls: list[str], args, stats: Stats, minutes: float) -> None:
    done = asyncio.Event()
    sessions = [Student(i, urls[i % len(urls)], f"mischief{i}", 0, stats, args) for i in range(args.students)]
    tasks = [asyncio.ensure_future(s.run_until(done)) for s in sessions]
    await asyncio.sleep(minutes * 60)
    done.set()
    await asyncio.gather(*tasks, return_exceptions=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--slots", type=int, default=None, help="ATTENTION_BACKGROUND_SLOTS (default: cores - 1)")
    parser.add_argument("--interaction-timeout", type=float, default=300.0, help="s")
    parser.add_argument("--snapshot", nargs="?", const="HEAD", default=None, metavar="REV")
    parser.add_argument("--scratch", default="/tmp/bench-mischief")
    args = parser.parse_args()
    args.kill_worker = None  # what the load test's sessions ask of its arguments
    scratch = Path(args.scratch)
    root = ROOT
    if args.snapshot:
        root, _ = snapshot_of(scratch, args.snapshot)
    os.environ["ATTENTION_DATA_DIR"] = str(scratch / f"data-{os.getpid()}")  # a pool of this run's own
    if args.slots:
        os.environ["ATTENTION_BACKGROUND_SLOTS"] = str(args.slots)
    from ui.machine_pool import default_slots

    print(
        f"{args.students} mischievous students over {args.workers} workers ({root}) for {args.minutes:g} min; "
        f"pool: {default_slots()} slot(s) on {os.cpu_count()} cores",
        flush=True,
    )
    servers = [start_worker(root, scratch / f"worker{i}.log") for i in range(args.workers)]
    sampler = TreeSampler([proc.pid for proc, _ in servers])
    sampler.start()
    stats = Stats()
    try:
        asyncio.run(students([url for _, url in servers], args, stats, args.minutes))
    finally:
        sampler.stop()
        sampler.join(timeout=5)
        for proc, _ in servers:
            proc.terminate()
        for proc, _ in servers:
            proc.wait(timeout=30)
    peak_children = max(n for _, n, _ in sampler.samples)
    peak_kib = max(kib for _, _, kib in sampler.samples)
    trained = [r for r in stats.latencies if r["label"] == "Train it yourself"]
    print(f"peak niced children at once: {peak_children} (pool: {default_slots()})")
    print(f"peak memory of the servers and their children: {peak_kib / 1024:.0f} MiB")
    print(
        f"heavy interactions completed: {len(stats.latencies)} (trainings of the induction page: {len(trained)}), "
        f"errors: {len(stats.errors)}"
    )
    for e in stats.errors[:10]:
        print(f"  error: {e}")
    for i in range(args.workers):
        log = (scratch / f"worker{i}.log").read_text(errors="replace")
        print(f"worker {i}: {log.count('Traceback')} tracebacks in its log ({scratch / f'worker{i}.log'})")


def start_worker(root: Path, log_path: Path):
    """`streamlit run app.py` of `root` on a free port, its output in `log_path`; (process, url)."""
    import subprocess

    port = free_port()
    log = open(log_path, "wb")
    proc = subprocess.Popen(streamlit_command(root / "app.py", port), cwd=root, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    wait_until_healthy(proc, f"{url}/_stcore/health", 60, lambda: log_path.read_text(errors="replace"))
    return proc, url


if __name__ == "__main__":
    main()
