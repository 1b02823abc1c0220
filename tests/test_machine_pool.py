"""ui/machine_pool.py: a machine's few slots for background work, shared by its processes, with a queue."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from ui.machine_pool import SLOTS_ENV, Cancelled, Pool, default_slots

ROOT = Path(__file__).resolve().parents[1]
WAIT_S = 60  # generous: the machine may be busy; a correct pool answers in well under a second

# A separate process that takes a slot of the pool in argv[1] (argv[2] slots), says so, and holds it.
HOLDER = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {root!r})
    from ui.machine_pool import Pool
    pool = Pool(sys.argv[1], int(sys.argv[2]))
    with pool.slot(on_place=lambda place: print("place", place, flush=True)):
        print("holding", flush=True)
        if sys.argv[3] == "forever":
            time.sleep(3600)
        else:  # count how many hold a slot now, by files named after their holders
            import os, pathlib
            mark = pathlib.Path(sys.argv[3]) / str(os.getpid())
            mark.touch()
            print("together", len(list(pathlib.Path(sys.argv[3]).iterdir())), flush=True)
            time.sleep(0.3)
            mark.unlink()
    """
).format(root=str(ROOT))


def start_holder(tmp_path: Path, slots: int, what: str = "forever") -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path / "pool"), str(slots), what], stdout=subprocess.PIPE, text=True
    )


def read_until(proc: subprocess.Popen, word: str) -> list[str]:
    lines = []
    for line in proc.stdout:
        lines.append(line.strip())
        if line.startswith(word):
            return lines
    raise AssertionError(f"the process ended without saying {word!r}: {lines}")


class Waiter(threading.Thread):
    """A work waiting for a slot in a thread; its places as it is told them; `cancel()` to leave the queue."""

    def __init__(self, pool: Pool, hold: threading.Event | None = None):
        super().__init__(daemon=True)
        self.pool, self.hold = pool, hold or threading.Event()
        self.places: list[int] = []
        self.changed = threading.Condition()
        self.got = threading.Event()
        self.cancelled = threading.Event()
        self.outcome = None

    def run(self) -> None:
        try:
            with self.pool.slot(on_place=self.tell, cancelled=self.cancelled.is_set):
                self.got.set()
                self.hold.wait(WAIT_S)
            self.outcome = "ran"
        except Cancelled:
            self.outcome = "cancelled"

    def tell(self, place: int) -> None:
        with self.changed:
            self.places.append(place)
            self.changed.notify_all()

    def wait_place(self, place: int) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: self.places and self.places[-1] == place, WAIT_S), self.places


def test_no_more_than_the_slots_hold_at_once_across_processes(tmp_path):
    """Six processes, two slots: each counts the holders while it holds one (a file per holder)."""
    marks = tmp_path / "holding"
    marks.mkdir()
    procs = [start_holder(tmp_path, 2, str(marks)) for _ in range(6)]
    together = []
    for proc in procs:
        out, _ = proc.communicate(timeout=WAIT_S)
        assert proc.returncode == 0, out
        together += [int(line.split()[1]) for line in out.splitlines() if line.startswith("together")]
    assert len(together) == 6  # every process had its turn
    assert max(together) <= 2


def test_two_slots_let_two_works_run_together(tmp_path):
    pool = Pool(tmp_path, 2)
    with pool.slot() as first, pool.slot() as second:
        assert {first, second} == {0, 1} and pool.holders() == 2
    assert pool.holders() == 0


def test_a_killed_holder_frees_its_slot(tmp_path):
    holder = start_holder(tmp_path, 1)
    try:
        read_until(holder, "holding")
        pool = Pool(tmp_path / "pool", 1)
        assert pool.holders() == 1
        waiter = Waiter(pool)
        waiter.start()
        waiter.wait_place(1)  # next in line, but the slot is taken
        assert not waiter.got.is_set()
        holder.send_signal(signal.SIGKILL)  # a worker killed outright: no cleanup runs in it
        assert waiter.got.wait(WAIT_S)
    finally:
        holder.kill()
        holder.wait()
    waiter.hold.set()
    waiter.join(WAIT_S)
    assert waiter.outcome == "ran"


def test_places_in_the_queue_are_first_come_and_move_up(tmp_path):
    pool = Pool(tmp_path, 1)
    running = Waiter(pool)
    running.start()
    assert running.got.wait(WAIT_S) and running.places == []  # a free slot: no place to tell
    a, b, c = Waiter(pool), Waiter(pool), Waiter(pool)
    for waiter, place in ((a, 1), (b, 2), (c, 3)):
        waiter.start()
        waiter.wait_place(place)
    running.hold.set()  # the running work ends: a runs, b and c move up
    assert a.got.wait(WAIT_S)
    b.wait_place(1)
    c.wait_place(2)
    assert not b.got.is_set()
    a.hold.set()
    assert b.got.wait(WAIT_S)
    c.wait_place(1)
    b.hold.set()
    assert c.got.wait(WAIT_S)
    c.hold.set()
    for waiter in (running, a, b, c):
        waiter.join(WAIT_S)
        assert waiter.outcome == "ran"
    assert [a.places, b.places, c.places] == [[1], [2, 1], [3, 2, 1]]


def test_cancelling_a_waiting_work_takes_it_out_of_the_queue(tmp_path):
    pool = Pool(tmp_path, 1)
    running, a, b = Waiter(pool), Waiter(pool), Waiter(pool)
    running.start()
    assert running.got.wait(WAIT_S)
    a.start()
    a.wait_place(1)
    b.start()
    b.wait_place(2)
    a.cancelled.set()  # the student left the page
    a.join(WAIT_S)
    assert a.outcome == "cancelled" and not a.got.is_set()
    b.wait_place(1)  # b moved up
    assert pool.waiting() == 1
    running.hold.set()
    assert b.got.wait(WAIT_S)
    b.hold.set()
    b.join(WAIT_S)
    assert pool.waiting() == 0 and os.listdir(pool.queue) == []


def test_a_killed_waiter_leaves_the_queue(tmp_path):
    pool = Pool(tmp_path / "pool", 1)
    running = Waiter(pool)
    running.start()
    assert running.got.wait(WAIT_S)
    gone = start_holder(tmp_path, 1)  # another process, waiting for the slot
    try:
        assert read_until(gone, "place")[-1] == "place 1"
        after = Waiter(pool)
        after.start()
        after.wait_place(2)
        gone.send_signal(signal.SIGKILL)
        after.wait_place(1)
    finally:
        gone.kill()
        gone.wait()
    running.hold.set()
    assert after.got.wait(WAIT_S)
    after.hold.set()
    after.join(WAIT_S)


def test_the_slots_are_configured_by_the_environment(monkeypatch):
    monkeypatch.setenv(SLOTS_ENV, "3")
    assert default_slots() == 3
    monkeypatch.delenv(SLOTS_ENV)
    assert default_slots() == max(1, (os.cpu_count() or 1) - 1)
    monkeypatch.setenv(SLOTS_ENV, "0")
    with pytest.raises(ValueError, match=SLOTS_ENV):
        default_slots()
