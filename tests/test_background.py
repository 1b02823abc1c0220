"""ui/background.py: long work in a child process at the lowest priority, its progress relayed."""

from __future__ import annotations

import os

import pytest

from ui.background import NICE, run_niced


def count_to(total: int, on_step=None) -> tuple[int, int]:
    """A stand-in training: reports every step; returns (its process id, its nice value)."""
    for done in range(1, total + 1):
        if on_step is not None:
            on_step(done, total)
    return os.getpid(), os.nice(0)


def cores_of_child(config, on_step=None) -> set[int]:
    return os.sched_getaffinity(0)


def fail(config, on_step=None):
    raise ValueError(f"bad config {config!r}")


def test_the_work_runs_in_a_niced_child_and_reports_its_progress():
    seen = []
    pid, nice = run_niced(count_to, 25, lambda done, total: seen.append((done, total)))
    assert pid != os.getpid() and nice == min(19, os.nice(0) + NICE)
    assert seen == [(10, 25), (20, 25), (25, 25)]  # every 10th step and the last


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2, reason="Linux, 2+ cores")
def test_a_child_of_a_worker_pinned_to_one_core_may_use_every_core():
    """deploy/serve.py pins each worker to one core; its training children take the other cores' idle time."""
    every = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(every)})  # this process plays the pinned worker
    try:
        assert run_niced(cores_of_child, None) == every
    finally:
        os.sched_setaffinity(0, every)


def test_a_failure_in_the_child_is_raised_here():
    with pytest.raises(RuntimeError, match="ValueError: bad config 3"):
        run_niced(fail, 3)


def test_leaving_stops_the_child():
    class Left(Exception):
        pass

    def leave(done, total):
        raise Left  # what Streamlit does to a run the student left (StopException / RerunException)

    with pytest.raises(Left):
        run_niced(count_to, 10**9, leave)  # would run for minutes if the child were not stopped


def test_the_child_does_not_run_the_main_script_again(tmp_path, monkeypatch):
    """Under Streamlit the main module is the app's script; a spawned child re-ran it (the whole app and a
    page, in bare mode) before its work, and blocked there once its warnings filled an unread pipe."""
    import sys
    import types

    marker = tmp_path / "ran"
    script = tmp_path / "app_like.py"
    script.write_text(f"open({str(marker)!r}, 'w').write('the child ran the main script')\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(script)  # as Streamlit's module for a run of app.py: a file, no __spec__
    main.__spec__ = None
    monkeypatch.setitem(sys.modules, "__main__", main)
    pid, _ = run_niced(count_to, 3)
    assert pid != os.getpid()
    assert not marker.exists()


def test_one_at_a_time_says_it_waits_only_while_another_holds_the_lock():
    import threading

    from ui.background import one_at_a_time

    lock, said = threading.Lock(), []
    with one_at_a_time(lock, lambda: said.append("waiting")):
        assert lock.locked()
    assert said == [] and not lock.locked()  # alone: no waiting message

    lock.acquire()  # another student's training holds it
    waiting, ran = threading.Event(), []

    def other() -> None:
        with one_at_a_time(lock, waiting.set):
            ran.append(True)

    thread = threading.Thread(target=other)
    thread.start()
    assert waiting.wait(timeout=30)  # it said it waits ...
    assert ran == []  # ... and does wait
    lock.release()
    thread.join(timeout=30)
    assert ran == [True] and not lock.locked()


# ---------------------------------------------------------------- the machine's pool, shared and cancelled work
WAIT_S = 60  # generous: a busy machine; a correct pool answers in well under a second


@pytest.fixture
def pool(tmp_path, monkeypatch):
    """A pool of its own for the test (ATTENTION_DATA_DIR), of 2 slots."""
    from ui.machine_pool import SLOTS_ENV, machine_pool

    monkeypatch.setenv("ATTENTION_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv(SLOTS_ENV, "2")
    return machine_pool()


def hold_a_slot_while_marked(marks: str, on_step=None) -> tuple[int, int]:
    """A stand-in training that counts the trainings running with it (a file per child in `marks`): returns
    (its process id, how many ran at once when it looked)."""
    import time
    from pathlib import Path

    mark = Path(marks) / str(os.getpid())
    mark.touch()
    together = len(list(Path(marks).iterdir()))
    time.sleep(0.3)
    mark.unlink()
    return os.getpid(), together


def wait_for_file(path: str, on_step=None) -> int:
    import time
    from pathlib import Path

    while not Path(path).exists():
        time.sleep(0.02)
    return os.getpid()


def until(condition, what: str) -> None:
    import time

    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_ten_mischievous_students_start_no_more_children_than_the_slots(pool, tmp_path):
    """The load test's mischievous student times ten, at a small scale: ten different trainings asked at once
    run two at a time (the pool's slots), and every one runs."""
    import threading

    marks = tmp_path / "running"
    marks.mkdir()
    results = []

    def student(i: int) -> None:
        results.append(run_niced(hold_a_slot_while_marked, str(marks) + "/" * i))  # ten different configs

    threads = [threading.Thread(target=student, args=(i,)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT_S * 2)
    assert len(results) == 10 and len({pid for pid, _ in results}) == 10
    assert max(together for _, together in results) <= pool.slots == 2


def test_the_same_work_asked_twice_is_shared(pool, tmp_path):
    import threading

    from ui.background import _Job

    go, pids = tmp_path / "go", []
    first = threading.Thread(target=lambda: pids.append(run_niced(wait_for_file, str(go))))
    first.start()
    until(lambda: len(_Job.running) == 1, "the first work started")
    second = threading.Thread(target=lambda: pids.append(run_niced(wait_for_file, str(go))))
    second.start()
    until(
        lambda: next(iter(_Job.running.values()), None) and next(iter(_Job.running.values())).watchers == 2, "both wait"
    )
    go.touch()
    first.join(WAIT_S)
    second.join(WAIT_S)
    assert len(pids) == 2 and pids[0] == pids[1]  # one child for both


def test_one_student_leaving_does_not_stop_the_work_another_waits_for(pool, tmp_path):
    import threading

    from ui.background import _Job

    go, got = tmp_path / "go", []
    stayer = threading.Thread(target=lambda: got.append(run_niced(wait_for_file, str(go))))
    stayer.start()
    until(lambda: len(_Job.running) == 1, "the work started")
    job = _Job.attach(wait_for_file, str(go))  # a second student asks for the same work ...
    assert job.watchers == 2
    job.detach()  # ... and leaves (run_niced's `finally`, when Streamlit stops the run)
    assert not job.cancelled
    go.touch()
    stayer.join(WAIT_S)
    assert got and isinstance(got[0], int)  # the first student still gets the result


def test_leaving_while_queued_takes_the_work_out_of_the_queue(pool, tmp_path):
    class Left(Exception):
        pass

    told = []

    def leave(place: int, slots: int) -> None:
        told.append((place, slots))
        raise Left  # what Streamlit does to a run the student left

    with pool.slot(), pool.slot():  # two other works hold both slots
        with pytest.raises(Left):
            run_niced(count_to, 10, on_queue=leave)
        until(lambda: pool.waiting() == 0, "the cancelled work left the queue")
    assert told == [(1, 2)]  # first in the queue, two slots


def test_the_waiting_message_says_the_place():
    from ui.background import queue_message

    assert "you are next" in queue_message(1, 1) and "one long computation at a time" in queue_message(1, 1)
    assert "2 ahead of you" in queue_message(3, 2) and "2 long computations at a time" in queue_message(3, 2)
